"""Drive a whole fabric as its host would: image in, host streams in and out, counters back.

The same :class:`~rivulet.sim.streams.StreamBench` engine as the primitives' benches, with every
top-level stream under a protocol monitor: ``ctrl`` carries the image and then, once ``done`` is
seen, the READ packets for the counters; host input ports get their tokens with idle, and host
output ports and ``readback`` see back-pressure, both drawn from pattern generators that the
native top (rivulet/sim/native/top.py) holds in hardware: for the same seed the two tiers see
the same handshakes, cycle by cycle.

When the watchdog fires on a run that was not expected to stall, the bench does not stop at
once: it sends the diagnostic READ packets instead of the counter reads (through the same gate),
waits for their values, then fails; the values (``FabricRun.diagnostics``) let the host side
explain the hang (rsn.hang_report). If the control chain itself is blocked the values never
come back, so the wait is bounded.
"""

from rivulet.sim.native.patterns import PatternStream, stream_seed, thresholds
from rivulet.sim.streams import (
    NoProgressError,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
    StreamBench,
    profile_named,
)
from rsn.fabric import DONE_LATENCY

__all__ = ["PatternSource", "PatternSink", "FabricRun", "make_fabric_bench"]


class PatternSource(SourceDriver):
    """A host source whose idle comes from a pattern generator (:mod:`rivulet.sim.native.patterns`),
    as the native top's does: the same seed offers in the same cycles on both tiers.

    With ``gate_at``, tokens from ``gate_at`` on wait until ``opened()`` says so."""

    def __init__(self, port, tokens, pattern: PatternStream, *, gate_at: int | None = None, opened=None):
        super().__init__(port, tokens, None, None)
        self.pattern, self.gate_at, self.opened = pattern, gate_at, opened
        self.mask = (1 << port.width) - 1

    def replace_gated(self, tokens):
        """Send ``tokens`` once the gate opens, instead of those queued behind it (the gate
        must not have opened yet)."""
        assert self.sent <= self.gate_at, "the gate has opened already"
        self.tokens = self.tokens[:self.gate_at] + list(tokens)

    def drive(self, cycle):
        willing = self.pattern.willing(cycle)
        gated = self.gate_at is not None and self.sent >= self.gate_at and not self.opened()
        if not self.offering and not self.done and not gated:
            self.offering = willing
        if self.offering:
            return {self.port.valid: 1, self.port.payload: self.tokens[self.sent]}
        return {self.port.valid: 0, self.port.payload: self.pattern.junk & self.mask}


class PatternSink(SinkDriver):
    """A host sink whose back-pressure comes from a pattern generator, as the native top's does."""

    def __init__(self, port, pattern: PatternStream):
        super().__init__(port, None, None)
        self.pattern = pattern

    def drive(self, cycle):
        self.ready = self.pattern.willing(cycle)
        return {self.port.ready: int(self.ready)}


class FabricRun:
    """The checker of a fabric bench: records what the fabric produced and when it finished."""

    # Cycles allowed, after the watchdog fires, for the diagnostic values: a fixed allowance plus
    # some per word, far beyond a READ's latency through any grid (tiles + 5 cycles per value).
    DIAGNOSTIC_CYCLES, DIAGNOSTIC_CYCLES_PER_WORD = 1000, 40

    def __init__(self, outputs: dict[str, int], readback_words: int, expect_stall: bool = False,
                 *, diagnostic_reads=(), diagnostic_words: int = 0, max_cycles: int | None = None,
                 ports=None):
        self.expect_stall = expect_stall
        self.diagnostic_reads, self.diagnostic_words = list(diagnostic_reads), diagnostic_words
        self.max_cycles = max_cycles
        self.diagnosing = False     # the watchdog fired unexpectedly; diagnostic reads under way
        self.diagnostics = None     # their values, once the run fails
        self.ctrl_source = None     # the GatedSource of ``ctrl`` (make_fabric_bench sets it)
        self._stall_message = None
        self.expected_counts = dict(outputs)
        self.outputs = {name: [] for name in outputs}
        self.readback = []
        self.readback_words = readback_words
        self.done_cycle = None
        self.stalled_cycle = None
        self._ctrl_taken = self._since_image = 0        # image words taken; cycles since the last
        self.host_sources = {}      # host input port -> its SourceDriver (make_fabric_bench sets them)
        # With ``ports``: per cycle, bits 2k and 2k+1 are stream k's valid and ready (the
        # native top's trace words, in the same order).
        self.trace_ports = list(ports) if ports is not None else None
        self.trace = [] if ports is not None else None

    def host_sent(self) -> dict[str, int]:
        """Tokens the fabric took from each host input: what rsn.readout.short_host_inputs reads."""
        return {name: source.sent for name, source in self.host_sources.items()}

    def on_cycle(self, cycle, sample, transfers):
        if self.trace is not None:
            bits = 0
            for index, port in enumerate(self.trace_ports):
                bits |= (sample[port.valid] << 2 * index) | (sample[port.ready] << 2 * index + 1)
            self.trace.append(bits)
        for name in self.outputs:
            if name in transfers:
                self.outputs[name].append(transfers[name])
        if "readback" in transfers:
            self.readback.append(transfers["readback"])
        # `done` counts only once it can see the whole image inside the fabric (rsn.fabric.Fabric):
        # from DONE_LATENCY cycles after the cycle that follows the image's last transfer.
        image_in = self.ctrl_source is None or self.ctrl_source.gate_at is None or \
            self._ctrl_taken >= self.ctrl_source.gate_at
        settled = image_in and self._since_image == DONE_LATENCY
        if image_in and self._since_image < DONE_LATENCY:
            self._since_image += 1
        if "ctrl" in transfers:
            self._ctrl_taken += 1
        if sample["done"] and self.done_cycle is None and settled:
            self.done_cycle = cycle
            short = {name: f"{len(self.outputs[name])}/{count}"
                     for name, count in self.expected_counts.items() if len(self.outputs[name]) < count}
            if short:
                raise ScoreboardError(f"done rose at cycle {cycle} before the host had every token: {short}")
        if sample["stalled"] and self.stalled_cycle is None:
            self.stalled_cycle = cycle
            if not self.expect_stall:
                self._start_diagnosis(cycle)
        if self.diagnosing:
            self._diagnose(cycle)

    def _start_diagnosis(self, cycle):
        self._stall_message = f"the fabric's watchdog fired at cycle {cycle}: {self.progress()}"
        self._diagnosis_from = len(self.readback)
        self._diagnosis_until = cycle + self.DIAGNOSTIC_CYCLES + \
            self.DIAGNOSTIC_CYCLES_PER_WORD * len(self.diagnostic_reads)
        if self.max_cycles is not None:
            self._diagnosis_until = min(self._diagnosis_until, self.max_cycles - 1)
        if self.ctrl_source is not None and self.ctrl_source.sent <= self.ctrl_source.gate_at:
            self.ctrl_source.replace_gated(self.diagnostic_reads)
            self.diagnosing = True
        else:
            self.diagnostics = []
            raise NoProgressError(self._stall_message)

    def _diagnose(self, cycle):
        """Fail once the diagnostic values are back, or when they are overdue."""
        values = self.readback[self._diagnosis_from:]
        if len(values) < self.diagnostic_words and cycle < self._diagnosis_until:
            return
        self.diagnostics = values
        message = self._stall_message
        if len(values) < self.diagnostic_words:
            source = self.ctrl_source
            message += (f"; {len(values)} of {self.diagnostic_words} diagnostic values came back "
                        f"(control words taken: {min(source.sent, source.gate_at)} of the image's "
                        f"{source.gate_at})")
        raise NoProgressError(message)

    @property
    def finished(self) -> bool:
        """The run is over: done, or (when a stall is the expected outcome) stalled."""
        return self.done_cycle is not None or (self.expect_stall and self.stalled_cycle is not None)

    @property
    def gate_open(self) -> bool:
        """The words behind the image may go: the counter reads once the run is over, or the
        diagnostic reads once the watchdog has fired unexpectedly."""
        return self.finished or self.diagnosing

    def complete(self):
        outputs_in = self.expect_stall or all(
            len(self.outputs[name]) >= count for name, count in self.expected_counts.items())
        return self.finished and len(self.readback) >= self.readback_words and outputs_in

    def progress(self):
        outputs = ", ".join(f"{name} {len(tokens)}/{self.expected_counts[name]}"
                            for name, tokens in self.outputs.items())
        inputs = ", ".join(f"{name} {source.sent}/{len(source.tokens)}"
                           for name, source in self.host_sources.items())
        image = ""
        source = self.ctrl_source
        if source is not None and source.sent < source.gate_at:
            image = f"image {source.sent}/{source.gate_at} words sent, "
        return (f"done={'cycle ' + str(self.done_cycle) if self.done_cycle is not None else 'no'}, "
                f"{image}host inputs sent: {inputs or 'none'}, outputs: {outputs or 'none'}, "
                f"readback {len(self.readback)}/{self.readback_words}")

    def finish(self):
        pass


def make_fabric_bench(ports, *, image: list[int], reads: list[int], readback_words: int,
                      host_inputs: dict[str, list[int]], host_outputs: dict[str, int],
                      profile: str, seed: int, expect_stall: bool = False,
                      diagnostic_reads=(), diagnostic_words: int = 0,
                      max_cycles: int | None = None, trace: bool = False) -> StreamBench:
    """A bench for one fabric run. ``reads`` are READ packets sent after ``done`` (or, with
    ``expect_stall``, after the watchdog fires: the run that tests the watchdog).
    ``diagnostic_reads`` (returning ``diagnostic_words`` values) are sent instead when the
    watchdog fires without ``expect_stall``; the run fails once they are back (or overdue, or at
    ``max_cycles``, the bench's last cycle). Idle and back-pressure come from one pattern
    generator per stream, seeded from ``seed`` and the stream's position in ``ports``, as on the
    native tier; with ``trace`` the checker keeps every cycle's (valid, ready) bits."""
    stall = profile_named(profile)
    idle, backpressure = thresholds(stall.idle), thresholds(stall.backpressure)
    by_name = {port.prefix: port for port in ports}
    patterns = {port.prefix: PatternStream(stream_seed(seed, index),
                                           idle if port.into_design else backpressure)
                for index, port in enumerate(ports)}
    checker = FabricRun(host_outputs, readback_words, expect_stall, diagnostic_reads=diagnostic_reads,
                        diagnostic_words=diagnostic_words, max_cycles=max_cycles,
                        ports=ports if trace else None)
    sources = [PatternSource(by_name["ctrl"], image + reads, patterns["ctrl"], gate_at=len(image),
                             opened=lambda: checker.gate_open)]
    checker.ctrl_source = sources[0]
    for name, tokens in host_inputs.items():
        sources.append(PatternSource(by_name[name], tokens, patterns[name]))
        checker.host_sources[name] = sources[-1]
    # A host input the program does not use offers nothing, but its generator steps all the same
    # (its junk payload is driven, as in hardware).
    sources += [PatternSource(port, [], patterns[port.prefix]) for port in ports
                if port.into_design and port.prefix != "ctrl" and port.prefix not in host_inputs]
    sinks = [PatternSink(port, patterns[port.prefix]) for port in ports if not port.into_design]
    return StreamBench(ports, sources, sinks, checker, extra_signals=["done", "stalled"])
