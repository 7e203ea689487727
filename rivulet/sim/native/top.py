# amaranth: UnusedElaboratable=no
"""The native simulation top: a fabric with its host side in hardware.

What the cocotb tier does in Python every cycle, this top does in logic, so that a Verilated
model runs a whole fabric run without leaving C++ (:mod:`.driver`):

- an input memory holds the configuration image, the counter and diagnostic READ packets and
  every host input stream; one source per input stream offers its words in order;
- one xorshift pattern generator per stream (:mod:`.patterns`) decides, cycle by cycle, whether
  its source offers and whether its sink takes, by the run's stall profile;
- sinks capture every host output and every read-back word into an output memory;
- a protocol checker on every stream latches the first broken rule (valid dropped without a
  transfer, payload changed while stalled) with the stream and the cycle;
- the end: the run complete (``done``, every read-back word, every host output), the watchdog
  (after the diagnostic READ packets have been answered, as the cocotb tier does), the cycle
  limit, a protocol error, or ``done`` before every host output had arrived.

The rules are those of :class:`rivulet.sim.fabric_bench.FabricRun`, cycle for cycle: the same
seeds give both tiers the same handshakes. Memories are loaded, and results read, through ports
of their own on a separate ``load`` clock, so that loading a run does not clock the fabric.
Everything a run sets is an input port (``cfg_*``); everything it reports is an output
(``st_*``), so that the C++ driver needs nothing but the port names (:attr:`SimTop.config`,
:attr:`SimTop.status`).

The settings and ``rst`` reach the logic through registers on the ``load`` clock, which the
driver ticks after setting them: Verilator evaluates every piece of logic that depends on a
top-level input at each ``eval()``, twice a clock cycle. ``rst`` straight into the fabric made
that all of its next-state logic (Amaranth folds the synchronous reset into it), and ran the
model at half its speed.
"""

from dataclasses import dataclass

from amaranth.hdl import C, Cat, ClockDomain, ClockSignal, Module, Mux, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rivulet.sim.streams import stream_ports
from rsn.fabric import DONE_LATENCY, Fabric

from .host_memory import HostMemory

__all__ = ["SimTop", "END_REASONS", "PROTOCOL_ERRORS", "NO_CYCLE"]

# st_reason: why the run ended.
END_REASONS = {1: "complete", 2: "protocol", 3: "early_done", 4: "watchdog", 5: "diagnosed",
               6: "cycle_limit", 7: "capture_full"}
# st_err_kind: which stream rule broke.
PROTOCOL_ERRORS = {1: "valid fell without a transfer", 2: "payload changed while stalled"}
NO_CYCLE = 0xFFFF_FFFF      # st_done_cycle / st_stalled_cycle before the event


@dataclass(frozen=True)
class Stream:
    """One host stream of the fabric: its position in the trace and which memory serves it."""
    index: int          # position among all streams (stream_ports order): trace bits, seeds
    name: str
    into_fabric: bool
    width: int
    number: int         # position among the sources, or among the sinks


class SimTop(wiring.Component):
    """A :class:`rsn.fabric.Fabric` for ``spec`` with every host stream driven in hardware.

    ``in_depth`` and ``out_depth`` (powers of two) size the input and output memories in
    words; a run that needs more is refused before it is loaded (:mod:`.runs`). ``fabric``
    replaces the generated fabric by a component of the same signature (a test's broken one).
    """

    def __init__(self, spec, *, in_depth: int = 1 << 15, out_depth: int = 1 << 14, fabric=None):
        for name, depth in (("in_depth", in_depth), ("out_depth", out_depth)):
            if depth < 2 or depth & (depth - 1):
                raise ValueError(f"{name} must be a power of two, not {depth}")
        self.spec, self.in_depth, self.out_depth = spec, in_depth, out_depth
        self.fabric = fabric if fabric is not None else Fabric(spec)
        ports, _ = stream_ports(self.fabric)
        sources = sinks = 0
        self.streams = []
        for index, port in enumerate(ports):
            number = sources if port.into_design else sinks
            self.streams.append(Stream(index, port.prefix, port.into_design, port.width, number))
            sources, sinks = sources + port.into_design, sinks + (not port.into_design)
        self.word_width = 32 if spec.data_width <= 32 else 64
        self.config = self._config_names()
        self.status = self._status_names()
        members = {name: In(32) for name in self.config}
        members |= {name: Out(self.word_width if name.startswith("st_err_p") or name == "st_err_offered"
                              else 32) for name in self.status}
        members |= {
            "load_en": In(1), "load_addr": In(range(in_depth)), "load_data": In(self.word_width),
            "read_addr": In(range(out_depth)), "read_data": Out(self.word_width),
            "clk": In(1), "rst": In(1),
        }
        for word in range(self.trace_words):
            members[f"trace_{word}"] = Out(32)
        super().__init__(members)

    @property
    def sources(self):
        return [stream for stream in self.streams if stream.into_fabric]

    @property
    def sinks(self):
        return [stream for stream in self.streams if not stream.into_fabric]

    @property
    def trace_words(self) -> int:
        """32-bit words of the per-cycle handshake trace: (valid, ready) of every stream."""
        return (2 * len(self.streams) + 31) // 32

    def _config_names(self) -> list[str]:
        names = ["cfg_idle_phase", "cfg_idle_first", "cfg_idle_then",
                 "cfg_bp_phase", "cfg_bp_first", "cfg_bp_then",
                 "cfg_max_cycles", "cfg_expect_stall", "cfg_readback_words",
                 "cfg_diag_base", "cfg_diag_len", "cfg_diag_words", "cfg_diag_allow", "cfg_gate"]
        for stream in self.streams:
            names.append(f"cfg_seed{stream.index}")
        for stream in self.sources:
            names += [f"cfg_src{stream.number}_base", f"cfg_src{stream.number}_len"]
        for stream in self.sinks:
            names += [f"cfg_snk{stream.number}_base", f"cfg_snk{stream.number}_cap",
                      f"cfg_snk{stream.number}_expect"]
        if self.faultable:
            names += ["cfg_fault_link", "cfg_fault_kind", "cfg_fault_at", "cfg_fault_bit"]
        return names

    def _status_names(self) -> list[str]:
        names = ["st_end", "st_reason", "st_end_cycle", "st_done_cycle", "st_stalled_cycle",
                 "st_diagnosing", "st_diag_from", "st_err_kind", "st_err_port", "st_err_cycle",
                 "st_err_since", "st_err_offered", "st_err_payload"]
        names += [f"st_src{stream.number}_sent" for stream in self.sources]
        names += [f"st_snk{stream.number}_count" for stream in self.sinks]
        if self.faultable:
            names.append("st_fault_cycle")
        return names

    @property
    def faultable(self) -> bool:
        """The fabric takes a link fault (rsn.link_fault): the run's ``fault`` sets it."""
        return getattr(self.fabric, "faultable", False)

    def elaborate(self, platform):
        m = Module()
        m.submodules.fabric = fabric = self.fabric
        # The run's settings and reset, held from the load clock's last edge (module docstring):
        # nothing the fabric computes depends on an input of the top.
        m.domains.sync = ClockDomain()
        reset = Signal(reset_less=True, name="held_rst")
        m.d.comb += [ClockSignal("sync").eq(self.clk), ResetSignal("sync").eq(reset)]
        m.d.load += reset.eq(self.rst)
        cfg = {}
        for name in self.config:
            cfg[name] = Signal(32, reset_less=True, name=f"held_{name}")
            m.d.load += cfg[name].eq(getattr(self, name))
        cycle, ended = Signal(32), Signal()
        running = ~ended

        inputs = HostMemory("inputs", self.word_width, self.in_depth, write_domain="load")
        outputs = HostMemory("outputs", self.word_width, self.out_depth, write_domain="sync")
        loader = inputs.write_port()
        m.d.comb += [loader.en.eq(self.load_en), loader.addr.eq(self.load_addr),
                     loader.data.eq(self.load_data)]
        reader = outputs.read_port()
        m.d.comb += [reader.addr.eq(self.read_addr), self.read_data.eq(reader.data)]

        # Per stream: the fabric's side of it, and its pattern generator.
        interface = {stream.name: getattr(fabric, stream.name) for stream in self.streams}
        willing = {}
        for stream in self.streams:
            state = Signal(32, reset_less=True, name=f"pattern{stream.index}")
            step = state ^ (state << 13)[:32]
            step = step ^ (step >> 17)
            step = step ^ (step << 5)[:32]
            m.d.sync += state.eq(Mux(ResetSignal("sync"), cfg[f"cfg_seed{stream.index}"], step))
            which = "idle" if stream.into_fabric else "bp"
            threshold = Mux(cycle < cfg[f"cfg_{which}_phase"], cfg[f"cfg_{which}_first"],
                            cfg[f"cfg_{which}_then"])
            willing[stream.name] = (state[:16] >= threshold, state)

        # The checker's state (FabricRun's): when done and the watchdog were first seen, and the
        # diagnosis that an unexpected watchdog starts.
        done_seen, stall_seen, diagnosing = Signal(), Signal(), Signal()
        done_cycle, stalled_cycle = Signal(32, init=0xFFFF_FFFF), Signal(32, init=0xFFFF_FFFF)
        diag_from, diag_until = Signal(32), Signal(32)
        gate_open = done_seen | (cfg["cfg_expect_stall"].bool() & stall_seen) | diagnosing

        # Sources.
        sent, sent_next, source_done_next, source_registers = {}, {}, [], {}
        for stream in self.sources:
            port, (ok, state) = interface[stream.name], willing[stream.name]
            number = stream.number
            count, offering = Signal(32, name=f"sent{number}"), Signal(name=f"offering{number}")
            base, length = cfg[f"cfg_src{number}_base"], cfg[f"cfg_src{number}_len"]
            address = base + count
            gated = 0
            if stream.name == "ctrl":
                gate = cfg["cfg_gate"]
                past_gate = count >= gate
                gated = past_gate & ~gate_open
                address = Mux(diagnosing & past_gate, cfg["cfg_diag_base"] + count - gate, address)
                # Once diagnosing, the words behind the image are the diagnostic reads.
                length = Mux(diagnosing, gate + cfg["cfg_diag_len"], length)
            read = inputs.read_port()
            m.d.comb += read.addr.eq(address[:len(read.addr)])
            valid = Signal(name=f"src{number}_valid")
            m.d.comb += [
                valid.eq(running & (offering | ((count != length) & ~gated & ok))),
                port.valid.eq(valid),
                port.payload.eq(Mux(valid, read.data, state)),
            ]
            sent[stream.name], sent_next[stream.name] = count, count + (valid & port.ready)
            source_registers[number] = (count, offering, valid, port)

        # Sinks.
        counts, counts_next, overflow, sink_registers = {}, {}, [], {}
        for stream in self.sinks:
            port, (ok, _) = interface[stream.name], willing[stream.name]
            number = stream.number
            count = Signal(32, name=f"captured{number}")
            m.d.comb += port.ready.eq(running & ok)
            counts[stream.name], counts_next[stream.name] = count, count + (port.valid & port.ready)
            overflow.append(port.valid & port.ready & (count == cfg[f"cfg_snk{number}_cap"]))
            sink_registers[number] = (count, port)

        # Protocol checkers, one per stream; the first stream (in order) that breaks a rule wins.
        errors = []
        for stream in self.streams:
            port = interface[stream.name]
            waiting, since = Signal(name=f"waiting{stream.index}"), Signal(32, name=f"since{stream.index}")
            offered = Signal(stream.width, name=f"offered{stream.index}")
            dropped = waiting & ~port.valid
            changed = waiting & port.valid & (port.payload != offered)
            with m.If(port.valid & port.ready):
                m.d.sync += waiting.eq(0)
            with m.Elif(port.valid & ~waiting):
                m.d.sync += [waiting.eq(1), since.eq(cycle), offered.eq(port.payload)]
            errors.append((stream, dropped | changed, Mux(dropped, 1, 2), since, offered, port.payload))
        protocol_error = Signal()
        m.d.comb += protocol_error.eq(_any(error for _, error, *_ in errors))
        committed = running & ~protocol_error       # the cocotb tier records nothing of that cycle

        # The checker, this cycle (with this cycle's transfers counted, as FabricRun counts them).
        readback_next = counts_next["readback"]
        host_outputs = [stream for stream in self.sinks if stream.name != "readback"]
        short = _any(counts_next[stream.name] < cfg[f"cfg_snk{stream.number}_expect"]
                     for stream in host_outputs)
        # `done` counts only once it can see the whole image inside the fabric: from DONE_LATENCY
        # cycles after the cycle that follows its last word's transfer (rsn.fabric.Fabric).
        image_in = sent["ctrl"] >= cfg["cfg_gate"]
        since_image = Signal(range(DONE_LATENCY + 1))
        with m.If(running & image_in & (since_image != DONE_LATENCY)):
            m.d.sync += since_image.eq(since_image + 1)
        done_rise = fabric.done & ~done_seen & image_in & (since_image == DONE_LATENCY)
        early_done = done_rise & short
        stall_rise = fabric.stalled & ~stall_seen
        start_diagnosis = stall_rise & ~cfg["cfg_expect_stall"].bool()
        can_diagnose = sent_next["ctrl"] <= cfg["cfg_gate"]
        watchdog_end = start_diagnosis & ~can_diagnose
        diagnosing_now = diagnosing | (start_diagnosis & can_diagnose)
        limit = cfg["cfg_max_cycles"] - 1
        until_now = Signal(32)
        later = cycle + cfg["cfg_diag_allow"]
        m.d.comb += until_now.eq(Mux(diagnosing, diag_until, Mux(later < limit, later, limit)))
        from_now = Mux(diagnosing, diag_from, readback_next)
        diagnosis_end = diagnosing_now & (((readback_next - from_now)[:32] >= cfg["cfg_diag_words"])
                                          | (cycle >= until_now))
        expect_stall = cfg["cfg_expect_stall"].bool()
        finished_now = done_seen | fabric.done | (expect_stall & (stall_seen | fabric.stalled))
        complete_now = finished_now & (readback_next >= cfg["cfg_readback_words"]) & (
            cfg["cfg_expect_stall"].bool() | ~short)
        ctrl_number = next(stream.number for stream in self.sources if stream.name == "ctrl")
        ctrl_length_next = Mux(diagnosing_now, cfg["cfg_gate"] + cfg["cfg_diag_len"],
                               cfg[f"cfg_src{ctrl_number}_len"])
        for stream in self.sources:
            length = ctrl_length_next if stream.name == "ctrl" else cfg[f"cfg_src{stream.number}_len"]
            source_done_next.append(sent_next[stream.name] == length)
        finish = Cat(*source_done_next).all() & complete_now

        reason = Signal(3)
        m.d.comb += reason.eq(
            Mux(protocol_error, 2, Mux(_any(overflow), 7, Mux(early_done, 3, Mux(watchdog_end, 4, Mux(
                diagnosis_end, 5, Mux(finish, 1, Mux(cycle == limit, 6, 0))))))))

        # Registers.
        end_reason, end_cycle = Signal(3), Signal(32)
        err_kind, err_port, err_cycle, err_since = Signal(2), Signal(32), Signal(32), Signal(32)
        err_offered, err_payload = Signal(self.word_width), Signal(self.word_width)
        with m.If(running):
            m.d.sync += cycle.eq(cycle + 1)
            with m.If(reason != 0):
                m.d.sync += [ended.eq(1), end_reason.eq(reason), end_cycle.eq(cycle)]
            with m.If(protocol_error):
                # A priority chain: the lowest-indexed failing stream.
                first = True
                for stream, error, kind, since, offered, payload in errors:
                    block = m.If(error) if first else m.Elif(error)
                    first = False
                    with block:
                        m.d.sync += [err_kind.eq(kind), err_port.eq(stream.index), err_cycle.eq(cycle),
                                     err_since.eq(since), err_offered.eq(offered), err_payload.eq(payload)]
        with m.If(committed):
            for stream in self.sources:
                count, offering, valid, port = source_registers[stream.number]
                m.d.sync += [count.eq(count + (valid & port.ready)), offering.eq(valid & ~port.ready)]
            for stream in self.sinks:
                count, port = sink_registers[stream.number]
                write = outputs.write_port()
                address = cfg[f"cfg_snk{stream.number}_base"] + count
                m.d.comb += [write.addr.eq(address[:len(write.addr)]), write.data.eq(port.payload),
                             write.en.eq(port.valid & port.ready
                                         & (count != cfg[f"cfg_snk{stream.number}_cap"]))]
                with m.If(port.valid & port.ready):
                    m.d.sync += count.eq(count + 1)
            with m.If(done_rise):
                m.d.sync += [done_seen.eq(1), done_cycle.eq(cycle)]
            with m.If(stall_rise):
                m.d.sync += [stall_seen.eq(1), stalled_cycle.eq(cycle)]
            with m.If(start_diagnosis & can_diagnose):
                m.d.sync += [diagnosing.eq(1), diag_from.eq(readback_next), diag_until.eq(until_now)]

        if self.faultable:     # the fault the run asks for, and the first cycle it acted
            fault_cycle = Signal(32, init=NO_CYCLE)
            m.d.comb += [getattr(fabric, f"fault_{name}").eq(cfg[f"cfg_fault_{name}"])
                         for name in ("link", "kind", "at", "bit")]
            m.d.comb += self.st_fault_cycle.eq(fault_cycle)
            with m.If(running & fabric.fault_acted & (fault_cycle == NO_CYCLE)):
                m.d.sync += fault_cycle.eq(cycle)

        # Status and trace.
        m.d.comb += [
            self.st_end.eq(ended), self.st_reason.eq(end_reason), self.st_end_cycle.eq(end_cycle),
            self.st_done_cycle.eq(done_cycle), self.st_stalled_cycle.eq(stalled_cycle),
            self.st_diagnosing.eq(diagnosing), self.st_diag_from.eq(diag_from),
            self.st_err_kind.eq(err_kind), self.st_err_port.eq(err_port), self.st_err_cycle.eq(err_cycle),
            self.st_err_since.eq(err_since), self.st_err_offered.eq(err_offered),
            self.st_err_payload.eq(err_payload),
        ]
        for stream in self.sources:
            m.d.comb += getattr(self, f"st_src{stream.number}_sent").eq(sent[stream.name])
        for stream in self.sinks:
            m.d.comb += getattr(self, f"st_snk{stream.number}_count").eq(counts[stream.name])
        bits = Cat(*(Cat(interface[stream.name].valid, interface[stream.name].ready)
                     for stream in self.streams))
        for word in range(self.trace_words):
            m.d.comb += getattr(self, f"trace_{word}").eq(bits[32 * word:32 * word + 32])
        inputs.connect(m, "inputs")
        outputs.connect(m, "outputs")
        self.memory_verilog = inputs.verilog() + outputs.verilog()     # the build adds it to top.v
        return m


def _any(bits):
    """Whether any of ``bits`` is set (none: never)."""
    bits = list(bits)
    return Cat(*bits).any() if bits else C(0, 1)
