"""Runs that share one Amaranth simulator each start from reset, after a run that raised too."""

import pytest
from amaranth.hdl import Elaboratable, Module, Signal

from rivulet.sim.amaranth_sim import SharedSimulator


class Counter(Elaboratable):
    def __init__(self):
        self.enable = Signal()
        self.count = Signal(8)

    def elaborate(self, platform):
        m = Module()
        with m.If(self.enable):
            m.d.sync += self.count.eq(self.count + 1)
        return m


def counting(dut, ticks: int, seen: list, fail_at: int | None = None):
    async def testbench(ctx):
        seen.append(ctx.get(dut.count))         # what the run starts from
        ctx.set(dut.enable, 1)
        for tick in range(ticks):
            if tick == fail_at:
                raise RuntimeError("the bench gave up")
            await ctx.tick()
        seen.append(ctx.get(dut.count))
    return testbench


def test_each_run_starts_from_reset_even_after_a_run_that_raised():
    dut = Counter()
    simulator = SharedSimulator(dut)
    seen = []
    simulator.run(counting(dut, 5, seen))
    with pytest.raises(RuntimeError, match="gave up"):
        simulator.run(counting(dut, 9, seen, fail_at=3))
    simulator.run(counting(dut, 2, seen))
    simulator.run(counting(dut, 4, seen))
    # Each run starts at 0 with enable low again (the bench had set it), and counts its own ticks.
    assert seen == [0, 5, 0, 0, 2, 0, 4]
