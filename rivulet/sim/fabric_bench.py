"""Drive a whole fabric as its host would: image in, host streams in and out, counters back.

The same :class:`~rivulet.sim.streams.StreamBench` engine as the primitives' benches, with every
top-level stream under a protocol monitor: ``ctrl`` carries the image and then, once ``done`` is
seen, the READ packets for the counters; host input ports get their tokens with random idle;
host output ports and ``readback`` see random back-pressure.
"""

import random

from rivulet.sim.streams import (
    PROFILES,
    NoProgressError,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
    StreamBench,
)

__all__ = ["GatedSource", "FabricRun", "make_fabric_bench"]


class GatedSource(SourceDriver):
    """A source whose tokens from ``gate_at`` on wait until ``opened()`` says so."""

    def __init__(self, port, tokens, idle, rng, *, gate_at: int, opened):
        super().__init__(port, tokens, idle, rng)
        self.gate_at, self.opened = gate_at, opened

    def drive(self, cycle):
        if not self.offering and self.sent >= self.gate_at and not self.opened():
            return {self.port.valid: 0, self.port.payload: 0}
        return super().drive(cycle)


class FabricRun:
    """The checker of a fabric bench: records what the fabric produced and when it finished."""

    def __init__(self, outputs: dict[str, int], readback_words: int, expect_stall: bool = False):
        self.expect_stall = expect_stall
        self.expected_counts = dict(outputs)
        self.outputs = {name: [] for name in outputs}
        self.readback = []
        self.readback_words = readback_words
        self.done_cycle = None
        self.stalled_cycle = None
        self.host_sources = {}      # host input port -> its SourceDriver (make_fabric_bench sets them)

    def host_sent(self) -> dict[str, int]:
        """Tokens the fabric took from each host input: what rsn.readout.short_host_inputs reads."""
        return {name: source.sent for name, source in self.host_sources.items()}

    def on_cycle(self, cycle, sample, transfers):
        for name in self.outputs:
            if name in transfers:
                self.outputs[name].append(transfers[name])
        if "readback" in transfers:
            self.readback.append(transfers["readback"])
        if sample["done"] and self.done_cycle is None:
            self.done_cycle = cycle
            short = {name: f"{len(self.outputs[name])}/{count}"
                     for name, count in self.expected_counts.items() if len(self.outputs[name]) < count}
            if short:
                raise ScoreboardError(f"done rose at cycle {cycle} before the host had every token: {short}")
        if sample["stalled"] and self.stalled_cycle is None:
            self.stalled_cycle = cycle
        if self.stalled_cycle is not None and not self.expect_stall:
            raise NoProgressError(f"the fabric's watchdog fired at cycle {cycle}: {self.progress()}")

    @property
    def finished(self) -> bool:
        """The run is over: done, or (when a stall is the expected outcome) stalled."""
        return self.done_cycle is not None or (self.expect_stall and self.stalled_cycle is not None)

    def complete(self):
        outputs_in = self.expect_stall or all(
            len(self.outputs[name]) >= count for name, count in self.expected_counts.items())
        return self.finished and len(self.readback) >= self.readback_words and outputs_in

    def progress(self):
        outputs = ", ".join(f"{name} {len(tokens)}/{self.expected_counts[name]}"
                            for name, tokens in self.outputs.items())
        inputs = ", ".join(f"{name} {source.sent}/{len(source.tokens)}"
                           for name, source in self.host_sources.items())
        return (f"done={'cycle ' + str(self.done_cycle) if self.done_cycle is not None else 'no'}, "
                f"host inputs sent: {inputs or 'none'}, outputs: {outputs or 'none'}, "
                f"readback {len(self.readback)}/{self.readback_words}")

    def finish(self):
        pass


def make_fabric_bench(ports, *, image: list[int], reads: list[int], readback_words: int,
                      host_inputs: dict[str, list[int]], host_outputs: dict[str, int],
                      profile: str, seed: int, expect_stall: bool = False) -> StreamBench:
    """A bench for one fabric run. ``reads`` are READ packets sent after ``done`` (or, with
    ``expect_stall``, after the watchdog fires: the run that tests the watchdog)."""
    stall = PROFILES[profile]
    rng = random.Random(seed)
    by_name = {port.prefix: port for port in ports}
    checker = FabricRun(host_outputs, readback_words, expect_stall)
    sources = [GatedSource(by_name["ctrl"], image + reads, stall.idle, random.Random(rng.getrandbits(64)),
                           gate_at=len(image), opened=lambda: checker.finished)]
    for name, tokens in host_inputs.items():
        sources.append(SourceDriver(by_name[name], tokens, stall.idle, random.Random(rng.getrandbits(64))))
        checker.host_sources[name] = sources[-1]
    sinks = [SinkDriver(port, stall.backpressure, random.Random(rng.getrandbits(64)))
             for port in ports if not port.into_design]
    return StreamBench(ports, sources, sinks, checker, extra_signals=["done", "stalled"])
