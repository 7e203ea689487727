"""Operators that fire more often than a 16-bit count: a PE micro-op grants up to
``MAX_FIRINGS`` (24 bits) at once, and a unit that needs more takes a tile of its own, where its
grants may follow each other. (A two-lane tile's micro-op completes only once both lanes have
made their firings: split grants there made each lane wait for the other's next micro-op, and
the ordered PageRank-delta at 1,024 vertices hung after 65,535 firings.)"""

import pytest

from ripple_core import lower
from ripple_core.lang import compile_kernel
from ripple_core.lang.api import Array, kernel
from ripple_core.lower import compile_lowering, lower_graph
from rsn.model import FabricModel
from rsn.readout import model_register_reads, register_reads, split_register_reads
from testbench.ripple.test_lanes_timing import LANE_FABRIC, two_lane_fabric
from testbench.ripple.test_lower import _check


@kernel
def running_sum(out: Array, n: int):
    s = 0
    for i in range(n):
        s = s + i
    out[0] = s


def _lowered(n: int, fabric):
    graph = compile_kernel(running_sum)
    want = (n * (n - 1) // 2) & 0xFFFF_FFFF
    case = {"args": {"n": n}, "mem": {"out": [0]}, "expect": {"out": [want]}}
    lowering = lower_graph(graph, case, fabric, name=f"running-sum-{n}")
    # The golden model's run (the lowering's, for its counts), against arithmetic.
    assert lowering.model.arrays["out"][0] & 0xFFFF_FFFF == want
    return lowering, compile_lowering(lowering, fabric, seed=1)


def test_units_beyond_one_micro_op_take_a_tile_of_their_own(monkeypatch):
    """With a grant of at most 20 firings, the loop's units (about 100 firings each) get tiles of
    their own and several micro-ops, the STORE (one firing) may still pair; the fabric's golden
    model runs the program to the end with the right sum and firing counts."""
    monkeypatch.setattr(lower, "MAX_FIRINGS", 20)
    fabric = two_lane_fabric("shared")
    lowering, compiled = _lowered(100, fabric)
    tiles = compiled.program.graph.fu_nodes()
    for tile in tiles:
        if "&" in tile.name:                    # two units: one micro-op
            assert len(tile.uops) == 1, tile.name
        assert all(max(grant["firings"], grant.get("firings1", 0)) <= 20 for grant in tile.uops), tile.name
    assert sum(len(tile.uops) > 1 for tile in tiles) >= 3      # the loop's units: grants in turn
    model = FabricModel(fabric)
    outcome = model.run(compiled.image, compiled.program.host_inputs)
    _check("running sum, grants of 20", lowering, compiled, outcome.outputs, outcome.firings,
           model_register_reads(model, compiled))


@pytest.mark.verilator
@pytest.mark.long(1)
def test_more_than_65535_firings_in_one_micro_op_on_the_rtl():
    """66,000 loop iterations on two-lane tiles: every operator of the loop fires more than
    65,535 times under one micro-op, on the Verilated fabric; the sum read back is n(n-1)/2."""
    from rivulet.sim.fabric_run import run_many_on_rtl

    fabric = LANE_FABRIC        # the build test_lanes_timing.py uses
    lowering, compiled = _lowered(66_000, fabric)
    assert max(lowering.firings.values()) > 0xFFFF
    assert all(len(tile.uops) == 1 for tile in compiled.program.graph.fu_nodes())
    (result,) = run_many_on_rtl([compiled], profiles=["no_stall"], seeds=[1], case="running-sum-66000",
                                max_cycles=2_000_000, extra_reads=[register_reads(compiled)])
    _check("running sum, 66,000", lowering, compiled, result.outputs, result.firings,
           split_register_reads(compiled, result.extra))
