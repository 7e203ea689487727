"""A bench for the PE's Ripple operators (QUEUE, ARB, TASK, LOCK, LDST), whose outputs may depend
on timing, so they are checked by rules written from docs/ripple.md rather than one fixed token
sequence.

The bench configures the PE through its config bus (one register write per cycle), then drives
the operand streams with random idle and the output ports with random back-pressure (a stall
profile, seeded), checks every stream with a protocol monitor, and hands each cycle's transfers
to a *rule* object. A rule may add tokens to a source as the run goes (a done token after a
dispatch, a release after a grant), says when it has seen everything, and finally lists
registers to read back; the bench reads them after the run (``bench.read_values``) before
the rule's ``finish()``.
"""

import functools
import random

from rivulet.sim.amaranth_sim import AmaranthDesign, component_of, run_in_amaranth
from rivulet.sim.streams import PROFILES, SinkDriver, SourceDriver, StreamBench, stream_ports

__all__ = ["OpBench", "run_op_bench"]


class OpBench(StreamBench):
    """Config writes, then streams under ``profile``, then register reads (see the module docstring)."""

    def __init__(self, ports, writes: dict[int, int], streams: dict[int, list[int]], rule,
                 profile: str, rng: random.Random):
        stall = PROFILES[profile]
        by_prefix = {port.prefix: port for port in ports}
        sources = [SourceDriver(by_prefix[f"i__{k}"], [v & 0xFFFF_FFFF for v in streams.get(k, [])],
                                stall.idle, random.Random(rng.getrandbits(64))) for k in range(3)]
        sinks = [SinkDriver(by_prefix[f"o__{p}"], stall.backpressure, random.Random(rng.getrandbits(64)))
                 for p in range(2)]
        super().__init__(ports, sources, sinks, rule, extra_signals=["cfg__rdata", "firings"])
        self.writes = list(writes.items())
        self.rule = rule
        rule.bench = self
        self.reads, self.read_values = None, {}
        self.issued, self.issuing, self.pending = 0, None, None
        self.firings = 0

    @property
    def driven(self) -> list[str]:
        return super().driven + ["cfg__addr", "cfg__data", "cfg__write", "cfg__read"]

    def source(self, slot: int) -> SourceDriver:
        return self.sources[slot]

    def drive(self, cycle: int) -> dict[str, int]:
        bus = {"cfg__addr": 0, "cfg__data": 0, "cfg__write": 0, "cfg__read": 0}
        if cycle < len(self.writes):
            addr, data = self.writes[cycle]
            idle = {name: 0 for name in super().driven}
            return {**idle, **bus, "cfg__addr": addr, "cfg__data": data & 0xFFFF_FFFF, "cfg__write": 1}
        values = super().drive(cycle)
        self.issuing = None
        if self.rule.complete():
            if self.reads is None:
                self.reads = list(self.rule.reads())
            if self.issued < len(self.reads):
                self.issuing = self.reads[self.issued]
                self.issued += 1
                bus.update({"cfg__addr": self.issuing, "cfg__read": 1})
        return {**values, **bus}

    def observe(self, cycle: int, sample: dict[str, int]):
        if cycle < len(self.writes):
            self.cycles = cycle + 1
            return
        if self.pending is not None:        # a register read is due one cycle after it was issued
            self.read_values[self.pending] = sample["cfg__rdata"]
        self.pending = self.issuing
        super().observe(cycle, sample)
        self.firings = sample["firings"]

    @property
    def finished(self) -> bool:
        return (all(source.done for source in self.sources) and self.rule.complete()
                and self.reads is not None and self.issued == len(self.reads) and self.pending is None)


@functools.cache
def pe_design(depth: int, **options) -> AmaranthDesign:
    """``RipplePE(depth, **options)`` made ready once per worker for every bench run on it."""
    from ripple_core.pe import RipplePE

    return AmaranthDesign(RipplePE(depth, **options))


@functools.cache
def fu_design(width: int, **options) -> AmaranthDesign:
    """``PeFu(width, **options)``, its micro-op port as plain bits, made ready once per worker."""
    from ripple_core.pe import PeFu
    from testbench.rsn.compute_bench import FlatUop

    return AmaranthDesign(FlatUop(PeFu(width, **options)))


def run_op_bench(pe, writes, streams, rule, *, profile: str, seed: int, max_cycles: int = 20_000) -> OpBench:
    """Run one configuration of ``pe`` (a RipplePE, or one from :func:`pe_design`) in Amaranth's
    simulator, from reset; the rule's ``finish()`` makes the final checks."""
    ports, _ = stream_ports(component_of(pe))
    bench = OpBench(ports, writes, streams, rule, profile, random.Random(seed))
    run_in_amaranth(pe, bench, max_cycles=max_cycles)     # ends with the rule's finish()
    return bench
