"""The one way a cocotb bench drives a :class:`~rivulet.sim.streams.StreamBench` on Verilator.

Every cocotb module (the stream components', the whole fabric's, the tests' own benches) runs its
bench through :func:`run_bench`, so all of them drive and sample at the same points of a cycle,
and reaches the design's ports through :class:`DesignPorts`.
"""

import json
import os

from cocotb.triggers import ReadOnly, RisingEdge

from .verilator import OBSERVED_LAYOUT
from .wrappers import OBSERVED

__all__ = ["run_bench", "DesignPorts"]


class DesignPorts:
    """A bench's reads and writes of the design's ports, with as few simulator calls as a cycle
    allows: each call costs the bench far more than the design's own cycle.

    A write of the value a port already holds is skipped. The outputs are read all at once from
    the top's ``observed`` port (:class:`rivulet.sim.wrappers.Clocked`, its layout in
    ``RIVULET_OBSERVED_LAYOUT``); an input reads back as what was last written to it, which is
    what the design sees. A design without that port (a board top) is read port by port.
    ``prefix``: the design's names of the bench's ports start with it (a component side by side
    with others, :class:`rivulet.sim.wrappers.SideBySide`)."""

    def __init__(self, dut, names, prefix: str = ""):
        self._handles = {name: getattr(dut, prefix + name) for name in names}
        self._written = {}
        self._fields, self._observed = [], None
        layout = json.loads(os.environ.get(OBSERVED_LAYOUT, "[]"))
        if layout:
            self._observed = getattr(dut, OBSERVED)
            offsets, offset = {}, 0
            for name, width in layout:
                offsets[name] = (offset, (1 << width) - 1)
                offset += width
            self._fields = [(name, *offsets[prefix + name]) for name in names if prefix + name in offsets]
        observed = {name for name, _, _ in self._fields}
        self._others = [name for name in names if name not in observed]

    def write(self, values: dict[str, int]):
        for name, value in values.items():
            if self._written.get(name) != value:
                self._handles[name].value = value
                self._written[name] = value

    def read(self) -> dict[str, int]:
        """Every port's value, in the read-only phase. int() raises on X or Z, which Amaranth
        output never drives: an X is a bug."""
        sample = {}
        if self._observed is not None:
            word = int(self._observed.value)
            sample = {name: (word >> offset) & mask for name, offset, mask in self._fields}
        for name in self._others:
            sample[name] = self._written[name] if name in self._written else int(self._handles[name].value)
        return sample


async def run_bench(dut, bench, max_cycles: int, prefix: str = "") -> int:
    """Drive right after each rising edge, sample in the read-only phase, as Verilator requires.
    ``prefix``: as for :class:`DesignPorts`."""
    ports = DesignPorts(dut, {*bench.sampled, *bench.driven}, prefix)
    ports.write(bench.idle_values())
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    for cycle in range(max_cycles):
        ports.write(bench.drive(cycle))
        await ReadOnly()
        bench.observe(cycle, ports.read())
        if bench.finished:
            bench.checker.finish()
            return bench.cycles
        await RisingEdge(dut.clk)
    raise bench.no_progress(max_cycles)
