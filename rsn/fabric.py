"""The fabric top: a grid of tiles, their links, host ports, the control plane, done and watchdog."""

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.banked_memory import BankedMemory

from .control import Dispenser, PacketTracker, WordKind
from .fabric_spec import DIRECTIONS, FabricSpec
from .fu import MEMORY_META_BITS
from .isa import Header, Opcode
from .link_fault import AT_BITS, LinkFault, fault_links
from .tile import Tile

__all__ = ["Fabric", "OPPOSITE", "DONE_LATENCY"]

OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E"}

# Cycles from the cycle in which the done condition holds (some unit used, every used unit
# finished, no unit busy; each tile's status as its own signals show it) to `done` being high:
# the tile's status register, the row's register and `done` itself. The cycle model uses it.
DONE_LATENCY = 3


class Fabric(wiring.Component):
    """A fabric generated from a :class:`FabricSpec`.

    Ports: ``ctrl`` (In, 32-bit words: configuration and micro-op packets), ``readback`` (Out,
    32-bit words answering READ packets), one stream per host port named after it (``In`` for
    host-to-fabric, ``Out`` for fabric-to-host, ``data_width`` bits), ``done`` and ``stalled``.

    ``done`` rises :data:`DONE_LATENCY` cycles after every unit that received a micro-op has
    finished its ``last`` one, none is busy and no control word is on its way along the chain.
    It says nothing about words the host has yet to send: a host takes ``done`` as the end only
    from :data:`DONE_LATENCY` + 1 cycles after its image's last word was taken (an image of open
    micro-ops, which finish at once, shows ``done`` between its packets). ``stalled`` rises when
    some unit is busy but for ``watchdog_limit`` cycles no switch has moved a token (as seen
    through the same status registers) and ``ctrl`` has taken no word; the tiles busy two cycles
    later report the stall in their status register.

    With a ``[memory]`` table the fabric holds one :class:`hw.banked_memory.BankedMemory`:
    port k belongs to the k-th tile of :meth:`FabricSpec.memory_tiles` (chain order), and the
    last port to the control plane (docs/shared-memory.md), which also shows the memory's
    per-bank counters as global registers and zeroes them at START.
    """

    def __init__(self, spec: FabricSpec, *, max_window: int = 8, watchdog_limit: int = 1024,
                 faultable: bool = False):
        self.spec, self.max_window, self.watchdog_limit = spec, max_window, watchdog_limit
        self.faultable = faultable
        data = stream.Signature(unsigned(spec.data_width))
        word = stream.Signature(unsigned(32))
        members = {"ctrl": In(word), "readback": Out(word), "done": Out(1), "stalled": Out(1)}
        if faultable:       # a fault-injection build (rsn.link_fault): one link fault at a time
            members |= {"fault_link": In(16), "fault_kind": In(2), "fault_at": In(AT_BITS),
                        "fault_bit": In(range(max(2, spec.data_width))), "fault_acted": Out(1)}
        for port in spec.host_ports:
            members[port.name] = In(data) if port.direction == "in" else Out(data)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        spec = self.spec
        tiles = {}
        for row, col in spec.all_tiles():
            tiles[row, col] = Tile(spec, row, col, max_window=self.max_window)
            m.submodules[f"tile_{row}_{col}"] = tiles[row, col]
        order = [tiles[tile] for tile in spec.chain_order()]  # the control chain, serpentine

        memory = spec.memory
        m.submodules.dispenser = dispenser = Dispenser(memory_words=memory.words if memory else 0,
                                                       memory_banks=memory.banks if memory else 0)
        wiring.connect(m, wiring.flipped(self.ctrl), dispenser.ctrl)
        wiring.connect(m, dispenser.readback, wiring.flipped(self.readback))
        wiring.connect(m, dispenser.chain, order[0].chain_in)
        for upstream, downstream in zip(order, order[1:], strict=False):
            wiring.connect(m, upstream.chain_out, downstream.chain_in)
            wiring.connect(m, upstream.readback_out, downstream.readback_in)
        m.d.comb += order[-1].chain_out.ready.eq(1)          # the chain's end drains
        wiring.connect(m, order[-1].readback_out, dispenser.readback_chain)
        m.d.comb += order[0].readback_in.valid.eq(0)

        self._elaborate_links(m, tiles)
        if self.faultable:
            m.d.comb += self.fault_acted.eq(Cat(self._fault_acted).any())
        self._elaborate_memory(m, tiles, dispenser)
        self._elaborate_done_and_watchdog(m, order, dispenser)
        return m

    def _elaborate_memory(self, m, tiles, dispenser):
        """The shared memory and its ports: the memory tiles', then the control plane's."""
        spec = self.spec
        if spec.memory is None:
            return
        users = [tiles[tile] for tile in spec.memory_tiles()]
        m.submodules.memory = memory = BankedMemory(
            len(users) + 1, spec.memory.banks, spec.memory.words, meta_width=MEMORY_META_BITS,
            lock_entries=spec.memory.lock_entries)
        for port, tile in enumerate(users):
            wiring.connect(m, tile.mem_req, memory.req[port])
            wiring.connect(m, memory.resp[port], tile.mem_resp)
        host = len(users)
        wiring.connect(m, dispenser.mem_req, memory.req[host])
        wiring.connect(m, memory.resp[host], dispenser.mem_resp)
        m.d.comb += memory.clear.eq(dispenser.clear)      # START: the counters count the run
        for bank in range(spec.memory.banks):
            m.d.comb += [dispenser.bank_accesses[bank].eq(memory.accesses[bank]),
                         dispenser.bank_conflicts[bank].eq(memory.conflicts[bank])]

    def _elaborate_links(self, m, tiles):
        spec = self.spec
        self._fault_numbers = {link: number for number, link in enumerate(fault_links(spec), 1)}
        self._fault_acted = []
        host_at = {(port.tile, port.side): port for port in spec.host_ports}
        for tile, unit in tiles.items():
            for index, side in enumerate(DIRECTIONS):
                neighbour = spec.neighbour(tile, side)
                if neighbour is not None:
                    other = tiles[neighbour].links_in[DIRECTIONS.index(OPPOSITE[side])]
                    if self.faultable:
                        other = self._fault_gate(m, tile, side, other)
                    wiring.connect(m, unit.links_out[index], other)
                    continue
                port = host_at.get((tile, side))
                if port is not None and port.direction == "in":
                    wiring.connect(m, wiring.flipped(getattr(self, port.name)), unit.links_in[index])
                else:
                    m.d.comb += unit.links_in[index].valid.eq(0)
                if port is not None and port.direction == "out":
                    wiring.connect(m, unit.links_out[index], wiring.flipped(getattr(self, port.name)))
                else:
                    m.d.comb += unit.links_out[index].ready.eq(0)

    def _fault_gate(self, m, tile, side, receiver):
        """A :class:`LinkFault` in front of ``receiver``; returns the gate's input for the sender."""
        number = self._fault_numbers[tile, side]
        m.submodules[f"fault_{tile[0]}_{tile[1]}_{side}"] = gate = LinkFault(self.spec.data_width)
        wiring.connect(m, gate.o, receiver)
        m.d.comb += [gate.select.eq(self.fault_link == number), gate.kind.eq(self.fault_kind),
                     gate.at.eq(self.fault_at), gate.bit.eq(self.fault_bit)]
        self._fault_acted.append(gate.acted)
        return gate.i

    def _elaborate_words_in_flight(self, m, order):
        """Whether a control word other than a READ's is between ``ctrl`` and the chain's end, as
        the status tree's registers see it (the count passes as many registers as a tile's busy).

        Every word travels the whole chain and is dropped at its end, after its tile has taken
        what it needs, so a word taken from ``ctrl`` but not yet dropped may still start a unit
        (open micro-ops finish at once: docs/ripple.md, "Open counts"). READs are left out: the
        host sends them after ``done`` to read the results, and they start nothing."""
        m.submodules.ctrl_packets = entering = PacketTracker()
        m.submodules.end_packets = leaving = PacketTracker()
        end = order[-1].chain_out
        enters = self.ctrl.valid & self.ctrl.ready
        leaves = end.valid & end.ready
        m.d.comb += [entering.word.eq(self.ctrl.payload), entering.step.eq(enters),
                     leaving.word.eq(end.payload), leaving.step.eq(leaves)]

        def read_word(tracker, word):
            return Mux(tracker.kind == WordKind.HEADER, Header(word).opcode == Opcode.READ,
                       tracker.header.opcode == Opcode.READ)

        count = Signal(range(4 * len(order) + 8))       # at most two words per skid pair
        up = enters & ~read_word(entering, self.ctrl.payload)
        down = leaves & ~read_word(leaving, end.payload)
        m.d.sync += count.eq(count + up - down)
        seen, late = Signal(), Signal()
        m.d.sync += [seen.eq(count != 0), late.eq(seen)]
        return late

    def _elaborate_done_and_watchdog(self, m, order, dispenser):
        """Fabric-wide status through a registered tree, so that no net spans the grid
        combinationally: each tile registers its own status (busy, progress, finished, used),
        each row ORs/ANDs its tiles into a register, and the fabric combines the rows into
        ``done`` and the watchdog's inputs. Every term passes the same registers, so ``done`` is
        the done condition of :data:`DONE_LATENCY` cycles earlier, exactly; being later only, it
        still never rises before every host output has left. The watchdog's ``stalled`` goes
        back to the tiles through a register per row."""
        rows = {}
        for tile in order:
            rows.setdefault(tile.row, []).append(tile)
        row_busy, row_progress, row_finished, row_used = [], [], [], []
        for row, tiles in rows.items():
            busy, progress = Signal(name=f"row{row}_busy"), Signal(name=f"row{row}_progress")
            finished, used = Signal(name=f"row{row}_finished"), Signal(name=f"row{row}_used")
            m.d.sync += [
                busy.eq(_any(tile.busy for tile in tiles)),
                progress.eq(_any(tile.progress for tile in tiles)),
                finished.eq(_all(tile.finished for tile in tiles)),
                used.eq(_any(tile.used for tile in tiles)),
            ]
            row_busy.append(busy)
            row_progress.append(progress)
            row_finished.append(finished)
            row_used.append(used)
        busy, progress = Signal(), Signal()
        m.d.sync += [busy.eq(_any(row_busy)), progress.eq(_any(row_progress))]
        in_flight = self._elaborate_words_in_flight(m, order)
        done = Signal()
        m.d.sync += done.eq(_any(row_used) & _all(row_finished) & ~_any(row_busy) & ~in_flight)

        # A control word taken from the host is progress too: while the image is still arriving,
        # a unit that has its micro-ops may wait for a unit whose micro-ops come later in the
        # image, and that wait ends as soon as they arrive (a large image from a slow host would
        # otherwise fire the watchdog with nothing wrong).
        control_moved = Signal()
        m.d.sync += control_moved.eq(self.ctrl.valid & self.ctrl.ready)
        idle_cycles = Signal(32)
        with m.If(dispenser.clear | progress | control_moved | ~busy):
            m.d.sync += idle_cycles.eq(0)
        with m.Elif(idle_cycles != self.watchdog_limit):
            m.d.sync += idle_cycles.eq(idle_cycles + 1)
        stalled = Signal()
        m.d.comb += stalled.eq(idle_cycles == self.watchdog_limit)
        for row, tiles in rows.items():
            row_stalled = Signal(name=f"row{row}_stalled")
            m.d.sync += row_stalled.eq(stalled)
            for tile in tiles:
                m.d.comb += tile.stalled.eq(row_stalled)
        m.d.comb += [
            self.done.eq(done),
            self.stalled.eq(stalled),
            dispenser.done.eq(done),
            dispenser.watchdog.eq(idle_cycles),
        ]


def _any(bits):
    bits = list(bits)
    result = bits[0]
    for bit in bits[1:]:
        result = result | bit
    return result


def _all(bits):
    bits = list(bits)
    result = bits[0]
    for bit in bits[1:]:
        result = result & bit
    return result
