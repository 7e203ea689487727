"""The one way a cocotb bench drives a :class:`~rivulet.sim.streams.StreamBench` on Verilator.

Every cocotb module (the stream components', the whole fabric's, the tests' own benches) runs its
bench through :func:`run_bench`, so all of them drive and sample at the same points of a cycle.
"""

from cocotb.triggers import ReadOnly, RisingEdge

__all__ = ["run_bench"]


async def run_bench(dut, bench, max_cycles: int, prefix: str = "") -> int:
    """Drive right after each rising edge, sample in the read-only phase, as Verilator requires.
    ``prefix``: the design's names of the bench's ports start with it (a component side by side
    with others, :class:`rivulet.sim.wrappers.SideBySide`)."""
    handles = {name: getattr(dut, prefix + name) for name in {*bench.sampled, *bench.driven}}
    for name, value in bench.idle_values().items():
        handles[name].value = value
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    for cycle in range(max_cycles):
        for name, value in bench.drive(cycle).items():
            handles[name].value = value
        await ReadOnly()
        # int() raises on X or Z, which Amaranth output never drives: an X is a bug.
        bench.observe(cycle, {name: int(handles[name].value) for name in bench.sampled})
        if bench.finished:
            bench.checker.finish()
            return bench.cycles
        await RisingEdge(dut.clk)
    raise bench.no_progress(max_cycles)
