"""A tile: one switch, one functional unit, their micro-op queues and the tile's control.

The tile wires the pieces together and owns the per-tile registers that the control plane reads
(counters, status, and the two diagnostic registers that say where its tokens wait). Everything
about *how* a switch, a FU or the control chain works lives in their own modules; see
docs/rsn-architecture.md for the contract.
"""

from amaranth.hdl import Module, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.token_queue import TokenQueue

from .control import TileControl
from .fu import fu_signature
from .fu_kinds import fu_kind
from .hops import pass_through_outputs
from .isa import REGISTERS, FuPortState, SwitchPortState, SwitchUop
from .switch import NEIGHBOURS, Switch
from .unit_instances import make_unit, shared_unit

__all__ = ["Tile"]


def _queue(shape, depth: int, mode: str = "registered"):
    """A token queue: one module per shape, depth and mode in a fabric's Verilog
    (rsn/unit_instances.py)."""
    key = ("queue", TokenQueue.__qualname__, repr(shape), depth) + (() if mode == "registered" else (mode,))
    return shared_unit(key, lambda: TokenQueue(shape, depth, mode=mode), "queue")


class Tile(wiring.Component):
    """Switch + FU of ``kind`` at ``(row, col)`` of a fabric described by ``spec``.

    Members
    -------
    links_in, links_out : neighbour streams N, E, S, W (index = direction)
    chain_in, chain_out, readback_in, readback_out : the control and read-back chains
    busy, progress, finished, used : for the fabric's done and watchdog logic, registered (one
        cycle after the switch's and FU's own signals)
    stalled : In(1), set by the fabric's watchdog; a tile busy while it is high reports the
        stall in its status register
    mem_req, mem_resp : the FU's port to the fabric's shared memory, for a kind with a memory
        port in a fabric with a ``[memory]`` table (:func:`rsn.fu.fu_signature`)
    """

    def __init__(self, spec, row: int, col: int, *, max_window: int = 8):
        self.spec, self.row, self.col = spec, row, col
        self.kind = fu_kind(spec.kind((row, col)))
        self.max_window = max_window
        data = stream.Signature(unsigned(spec.data_width))
        word = stream.Signature(unsigned(32))
        self.shared_words = spec.memory.words if spec.memory is not None and self.kind.memory_port else 0
        memory_port = {}
        if self.shared_words:
            unit = fu_signature(self.kind, spec.data_width, self.shared_words).members
            memory_port = {"mem_req": unit["mem_req"], "mem_resp": unit["mem_resp"]}
        super().__init__({
            **memory_port,
            "links_in": In(data).array(4),
            "links_out": Out(data).array(4),
            "chain_in": In(word),
            "chain_out": Out(word),
            "readback_in": In(word),
            "readback_out": Out(word),
            "busy": Out(1),
            "progress": Out(1),
            "finished": Out(1),
            "used": Out(1),
            "stalled": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        spec, kind = self.spec, self.kind
        m.submodules.control = control = TileControl(self.row, self.col, self.max_window)
        shape = (spec.data_width, kind.n_in, kind.n_out)
        passing = pass_through_outputs(spec, (self.row, self.col), NEIGHBOURS + kind.n_in)
        key = ("switch", Switch.__qualname__, shape) + ((tuple(sorted(passing)),) if passing else ())
        m.submodules.switch = switch = shared_unit(key, lambda: Switch(*shape, pass_through=passing),
                                                   "switch")
        shared = {"shared_words": self.shared_words} if self.shared_words else {}
        m.submodules.fu = fu = make_unit(kind, spec.data_width, spec.parameters(kind.name).rtl_arguments(),
                                         shared)
        if self.shared_words:
            wiring.connect(m, fu.mem_req, wiring.flipped(self.mem_req))
            wiring.connect(m, wiring.flipped(self.mem_resp), fu.mem_resp)

        wiring.connect(m, wiring.flipped(self.chain_in), control.chain_in)
        wiring.connect(m, control.chain_out, wiring.flipped(self.chain_out))
        wiring.connect(m, wiring.flipped(self.readback_in), control.readback_in)
        wiring.connect(m, control.readback_out, wiring.flipped(self.readback_out))

        # Micro-op queues decouple the control chain from the units' progress.
        m.submodules.switch_uops = switch_uops = _queue(SwitchUop, spec.uop_queue_depth)
        m.submodules.fu_uops = fu_uops = _queue(unsigned(64), spec.uop_queue_depth)
        wiring.connect(m, control.switch_uop, switch_uops.i)
        wiring.connect(m, switch_uops.o, switch.uop)
        wiring.connect(m, control.fu_uop, fu_uops.i)
        m.d.comb += [
            fu.uop.payload.eq(fu_uops.o.payload),   # the FU views the 64 bits through its layout
            fu.uop.valid.eq(fu_uops.o.valid),
            fu_uops.o.ready.eq(fu.uop.ready),
        ]

        for side in range(4):
            wiring.connect(m, wiring.flipped(self.links_in[side]), switch.i[side])
            wiring.connect(m, switch.o[side], wiring.flipped(self.links_out[side]))
        self._fu_queues = []
        for k in range(kind.n_in):
            queue = _queue(unsigned(spec.data_width), spec.queue_depth, spec.queue_mode)
            m.submodules[f"fu_in{k}_queue"] = queue
            self._fu_queues.append(queue)
            wiring.connect(m, switch.o[4 + k], queue.i)
            wiring.connect(m, queue.o, fu.i[k])
        for k in range(kind.n_out):
            wiring.connect(m, fu.o[k], switch.i[4 + k])

        m.d.comb += [switch.clear.eq(control.clear), fu.clear.eq(control.clear)]
        self._elaborate_status(m, control, switch, switch_uops, fu, fu_uops)
        fu_ports, switch_ports = self._elaborate_port_state(m, control, switch, fu, fu_uops)
        self._elaborate_registers(m, control, switch, fu, fu_ports, switch_ports)
        return m

    def _elaborate_status(self, m, control, switch, switch_uops, fu, fu_uops):
        """A unit counts as used once it accepts a micro-op; done needs every used unit finished."""
        switch_used, fu_used, stalled = Signal(), Signal(), Signal()
        with m.If(control.clear):
            m.d.sync += [switch_used.eq(0), fu_used.eq(0), stalled.eq(0)]
        with m.Else():
            with m.If(switch_uops.i.valid & switch_uops.i.ready):
                m.d.sync += switch_used.eq(1)
            with m.If(fu_uops.i.valid & fu_uops.i.ready):
                m.d.sync += fu_used.eq(1)
        self._switch_used, self._fu_used, self._stalled = switch_used, fu_used, stalled
        # Micro-ops still leaving the expanders count too: `done` must not rise between them.
        busy = (switch.busy | fu.busy | (switch_uops.level != 0) | (fu_uops.level != 0)
                | control.switch_uop.valid | control.fu_uop.valid)
        with m.If(~control.clear & self.stalled & busy):
            m.d.sync += stalled.eq(1)
        # Registered here, so the fabric's status tree starts at a flip-flop in every tile.
        m.d.sync += [
            self.busy.eq(busy),
            self.progress.eq(switch.progress),
            self.used.eq(switch_used | fu_used),
            self.finished.eq((~switch_used | switch.finished) & (~fu_used | fu.finished)),
        ]

    def _elaborate_port_state(self, m, control, switch, fu, fu_uops):
        """The diagnostic registers' values: where this tile's tokens wait, sampled when read.

        They exist so that a hung fabric can explain itself (rsn.hang_report): a full FU queue
        and a blocked output upstream of it name the unit that stopped taking tokens. Only
        signals the tile already has are looked at (valid, ready, queue levels, the switch's
        buffer occupancy), whatever the FU kind; the added logic is a few gates per port and two
        more cases of the read multiplexer.
        """
        fu_ports, switch_ports = Signal(FuPortState), Signal(SwitchPortState)
        for k, queue in enumerate(self._fu_queues):
            m.d.comb += [
                fu_ports.queued[k].eq(queue.level),
                fu_ports.waiting[k].eq(queue.o.valid & ~queue.o.ready),
            ]
        for k in range(self.kind.n_out):
            m.d.comb += fu_ports.blocked[k].eq(fu.o[k].valid & ~fu.o[k].ready)
        m.d.comb += fu_ports.busy.eq(fu.busy | (fu_uops.level != 0) | control.fu_uop.valid)
        for j, port in enumerate(switch.o):
            m.d.comb += [
                switch_ports.held[j].eq(switch.held[j]),
                switch_ports.blocked[j].eq(port.valid & ~port.ready),
            ]
        for k, port in enumerate(switch.i):
            m.d.comb += switch_ports.waiting[k].eq(port.valid & ~port.ready)
        return fu_ports, switch_ports

    def _elaborate_registers(self, m, control, switch, fu, fu_ports, switch_ports):
        """Per-tile registers: storage goes to the FU, counters and status are read here."""
        cfg = control.cfg
        storage = cfg.addr < REGISTERS["firings"]
        status_base, status_count = REGISTERS["fu_status"], self.kind.status_registers
        status = (cfg.addr >= status_base) & (cfg.addr < status_base + status_count) if status_count else 0
        m.d.comb += [
            fu.cfg.addr.eq(cfg.addr),
            fu.cfg.data.eq(cfg.data),
            fu.cfg.write.eq(cfg.write & storage),
            fu.cfg.read.eq(cfg.read & (storage | status)),
        ]
        local = Signal(32)
        with m.Switch(cfg.addr):
            with m.Case(REGISTERS["firings"]):
                m.d.comb += local.eq(fu.firings)
            with m.Case(REGISTERS["stalls"]):
                m.d.comb += local.eq(fu.stalls)
            with m.Case(REGISTERS["status"]):
                m.d.comb += local.eq(switch.finished | (fu.finished << 1) | (self._stalled << 2))
            with m.Case(REGISTERS["fu_ports"]):
                m.d.comb += local.eq(fu_ports.as_value())
            with m.Case(REGISTERS["switch_ports"]):
                m.d.comb += local.eq(switch_ports.as_value())
            for output, count in enumerate(switch.beats):
                with m.Case(REGISTERS["link_beats"] + output):
                    m.d.comb += local.eq(count)
        # Read data is due in the cycle after `read`, as the FU's own storage answers.
        local_read, local_data = Signal(), Signal(32)
        m.d.sync += [local_read.eq(cfg.read & ~storage & ~status), local_data.eq(local)]
        with m.If(local_read):
            m.d.comb += cfg.rdata.eq(local_data)
        with m.Else():
            m.d.comb += cfg.rdata.eq(fu.cfg.rdata)
