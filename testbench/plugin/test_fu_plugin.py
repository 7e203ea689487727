"""A FU kind defined in the test suite alone (testbench/plugin/adder_kind.py) runs on the golden
model and on the Verilated fabric, registered with one line and no change to ``rsn``."""

import dataclasses
import random

import pytest

from rivulet.sim.fabric_run import run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rsn.checks import ProgramError
from rsn.fabric_spec import FabricError, parse_fabric
from rsn.fu_kinds import fu_kind, kind_names, register
from rsn.graph import StreamGraph
from rsn.model import FabricModel
from rsn.program import Program, compile_program
from testbench.counters import assert_counters_agree

from .adder_kind import ADDER_KIND

register(ADDER_KIND)

WIDTH = 16


def fabric(**table):
    return parse_fabric({
        "rows": 1, "cols": 1, "tiles": ["adder"], "data_width": WIDTH, "adder": table,
        "host_ports": [{"name": "a", "tile": [0, 0], "side": "W", "direction": "in"},
                       {"name": "b", "tile": [0, 0], "side": "N", "direction": "in"},
                       {"name": "sum", "tile": [0, 0], "side": "E", "direction": "out"}]}, "adder.toml")


def program(seed: int, offset: int, beats=(5, 11)) -> Program:
    """Two micro-ops of ``beats`` beats; the reference is Python's own arithmetic."""
    rng = random.Random(seed)
    total = sum(beats)
    a = [rng.randrange(1 << WIDTH) for _ in range(total)]
    b = [rng.randrange(1 << WIDTH) for _ in range(total)]
    graph = StreamGraph()
    graph.add_host_in("a", "a", total)
    graph.add_host_in("b", "b", total)
    graph.add_node("add", "adder", [{"beats": count, "last": int(index == len(beats) - 1)}
                                    for index, count in enumerate(beats)])
    graph.add_host_out("sum", "sum", total)
    graph.connect("a", ("add", 0), total)
    graph.connect("b", ("add", 1), total)
    graph.connect("add", "sum", total)
    expected = [(x + y + offset) % (1 << WIDTH) for x, y in zip(a, b, strict=True)]
    return Program(f"adder-{seed}", graph, host_inputs={"a": a, "b": b}, expected={"sum": expected})


def test_the_registered_kind_is_known_everywhere():
    assert "adder" in kind_names() and fu_kind("adder") is ADDER_KIND
    assert fabric(offset=3).parameters("adder").offset == 3
    with pytest.raises(FabricError, match=r"adder.toml: \[adder\]: offset=999 is not allowed; use an "):
        fabric(offset=999)
    with pytest.raises(FabricError, match=r"adder_offset = 3 is the old spelling; .*write\n  "
                                          r"\[adder\]\n  offset = 3"):
        parse_fabric({"rows": 1, "cols": 1, "tiles": ["adder"], "adder_offset": 3})
    bad = program(1, 0)
    bad.graph.nodes["add"].uops[0]["beats"] = 0
    with pytest.raises(ProgramError, match=r"node 'add' \(adder\) micro-op 0: beats is 0"):
        compile_program(bad, fabric())
    short = program(1, 0)
    short.graph.nodes["add"].uops[1]["beats"] = 10
    with pytest.raises(ProgramError, match=r"node 'add' \(adder\) consumes 15 on add.i0"):
        compile_program(short, fabric())


def test_the_golden_model_runs_it():
    spec = fabric(offset=7)
    each = program(2, 7)
    result = FabricModel(spec).run(compile_program(each, spec).image, each.host_inputs)
    assert result.done and result.outputs["sum"] == each.expected["sum"]


@pytest.mark.verilator
def test_the_verilated_fabric_runs_it_under_back_pressure():
    spec = fabric(offset=5)
    profiles = ["no_stall", "random_stall_50", "backpressure_90", "starved_then_flood"]
    seeds = seeds_for("plugin:adder", count=len(profiles))
    print(f"seeds {seeds}")
    programs = [program(seed, 5) for seed in seeds]
    compiled = [compile_program(each, spec) for each in programs]
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds, case="plugin-adder")
    for each, built, profile, rtl in zip(programs, compiled, profiles, results, strict=True):
        model = FabricModel(spec).run(built.image, each.host_inputs)
        assert rtl.outputs["sum"] == each.expected["sum"] == model.outputs["sum"], profile
        assert_counters_agree(rtl, model, profile)


def test_a_kind_s_status_registers_are_bounded_and_describable():
    """A kind may answer up to 16 read-only registers at 0x2000 beside its storage, and describe a
    hang from them; any other address is refused when the kind is made."""
    described = dataclasses.replace(ADDER_KIND, status_registers=2, describe_registers=(0x2000, 0x2001))
    assert described.is_status_register(0x2001) and not described.is_status_register(0x2002)
    with pytest.raises(ValueError, match="17 status registers; a tile passes at most 16"):
        dataclasses.replace(ADDER_KIND, status_registers=17)
    with pytest.raises(ValueError, match=r"or its status registers, 0x2000\.\.0x2001"):
        dataclasses.replace(ADDER_KIND, status_registers=2, describe_registers=(0x2002,))
    assert not ADDER_KIND.is_status_register(0x2000)
