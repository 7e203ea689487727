"""Whole-fabric tests: programs compiled, placed, routed and run on the golden model and the RTL.

The RTL runs share one Verilator build of the default fabric and one simulation per test; each
program starts from reset, with random idle and back-pressure on the host ports.
"""

import dataclasses
import random

import pytest

from rivulet.sim.fabric_run import run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rivulet.sim.toolchain import REPOSITORY
from rsn.assemble import UnitProgram, assemble
from rsn.checks import ProgramError
from rsn.fabric_spec import default_fabric, parse_fabric
from rsn.graph import StreamGraph
from rsn.model import DeadlockError, FabricModel
from rsn.program import Program, compile_program, load_program
from rsn.random_programs import random_program
from rsn.route import RouteError
from testbench.counters import assert_counters_agree
from testbench.rsn.latency_options import LATENCY_OPTIONS, options_id

MLP = REPOSITORY / "examples" / "mlp.py"
RANDOM_PROGRAMS = 50


def _model(compiled):
    return FabricModel(compiled.spec).run(compiled.image, compiled.program.host_inputs)


def _assert_same(rtl, model, what):
    for port, tokens in model.outputs.items():
        assert rtl.outputs.get(port, []) == tokens, f"{what}: host port {port}"
    assert_counters_agree(rtl, model, what)


def test_mlp_golden_model_matches_numpy():
    program = load_program(MLP)
    result = _model(compile_program(program, default_fabric()))
    assert result.done
    assert result.outputs["out0"] == program.expected["out0"]


@pytest.mark.verilator
def test_mlp_on_rtl_under_back_pressure():
    """The MLP on the Verilated fabric, three stall profiles: numpy's outputs and the model's counters."""
    program = load_program(MLP)
    compiled = compile_program(program, default_fabric())
    model = _model(compiled)
    profiles = ["no_stall", "random_stall_50", "backpressure_90"]
    seeds = seeds_for("fabric:mlp", count=len(profiles))
    print(f"seeds {seeds}")
    results = run_many_on_rtl([compiled] * len(profiles), profiles=profiles, seeds=seeds, case="fabric-mlp")
    for profile, rtl in zip(profiles, results, strict=True):
        assert rtl.outputs["out0"] == program.expected["out0"], profile
        _assert_same(rtl, model, profile)
        assert rtl.cycles > 0


@pytest.mark.verilator
@pytest.mark.parametrize("option", LATENCY_OPTIONS, ids=options_id)
def test_random_programs_rtl_equals_golden_model(option):
    """At least 50 random path programs of every shape, each under a random stall profile, with
    the FU input queues in each mode, and with pass-through switch outputs."""
    queue_mode, every = option
    (base,) = seeds_for("fabric:random", count=1)
    rng = random.Random(base)
    spec = dataclasses.replace(default_fabric(), queue_mode=queue_mode, register_every=every)
    programs = [random_program(rng.getrandbits(32)) for _ in range(RANDOM_PROGRAMS)]
    compiled = [compile_program(program, spec) for program in programs]
    profiles = [rng.choice(list(PROFILES)) for _ in programs]
    seeds = [rng.getrandbits(32) for _ in programs]
    print(f"base seed {base}: " + ", ".join(program.name for program in programs))
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds,
                              case=f"fabric-random-{options_id(option)}")
    for program, each, rtl, profile in zip(programs, compiled, results, profiles, strict=True):
        _assert_same(rtl, _model(each), f"{program.name} ({profile})")


@pytest.mark.verilator
def test_programs_route_around_failed_tiles_and_links():
    """Failing the tiles a program used, and a link, changes its routes, not its results.

    Failures change routing only, so these runs share the healthy fabric's Verilator build.
    """
    spec = default_fabric()
    compiled, models = [], []
    for shape, seed in [("gemv", 11), ("dot2", 12), ("multicast", 13)]:
        program = random_program(seed, shape)
        healthy = compile_program(program, spec)
        fu_tiles = {tile for name, tile in healthy.routing.placement.tiles.items()
                    if not program.graph.nodes[name].is_host}
        host_tiles = {port.tile for port in spec.host_ports}
        failed = sorted(fu_tiles - host_tiles)[:1]
        wounded = dataclasses.replace(spec, failed_tiles=frozenset(failed),
                                      failed_links=frozenset({((1, 1), "N")}))
        each = compile_program(program, wounded)
        assert not set(failed) & set(each.routing.placement.tiles.values())
        for route in each.routing.routes:
            assert all(hop.tile not in failed for hop in route.hops), f"{shape}: route through {failed}"
            assert ((1, 1), 0) not in route.links and ((0, 1), 2) not in route.links
        compiled.append(each)
        models.append(_model(healthy))
    results = run_many_on_rtl(compiled, profiles=["random_stall_50"] * 3, seeds=[5, 6, 7],
                              case="fabric-failed")
    for each, rtl, model in zip(compiled, results, models, strict=True):
        assert {port: tokens for port, tokens in rtl.outputs.items() if tokens} == \
            {port: tokens for port, tokens in model.outputs.items() if tokens}, each.program.name


def test_unroutable_program_is_refused_with_names():
    """Four streams cannot all leave one corner tile with two links: the error names them."""
    spec = dataclasses.replace(default_fabric(), failed_tiles=frozenset({(0, 1), (1, 0)}))
    graph = StreamGraph()
    graph.add_node("corner", "mem", [{"start": 0, "stride": 1, "count_i": 4, "count_j": 1}], tile=(0, 0))
    graph.add_node("far", "alu", [{"beats": 4}])
    graph.add_host_out("out", "out1", 4)
    graph.connect("corner", "far", 4)
    graph.connect("far", "out", 4)
    with pytest.raises((RouteError, ProgramError), match=r"corner|\(0, 0\)|\[0, 0\]"):
        compile_program(Program("walled-in", graph), spec)


def test_mismatched_beat_counts_are_refused():
    graph = StreamGraph()
    graph.add_node("source", "mem", [{"start": 0, "stride": 1, "count_i": 8, "count_j": 1}])
    graph.add_node("scale", "alu", [{"beats": 6}])
    graph.add_host_out("out", "out0", 6)
    graph.connect("source", "scale", 8)
    graph.connect("scale", "out", 6)
    with pytest.raises(ProgramError, match=r"scale"):
        compile_program(Program("mismatch", graph), default_fabric())


def _starving_program():
    """A consistent program, then one FU micro-op altered to want more tokens than arrive.

    The alu waits for 4 tokens that never come: the static checks would refuse this program, so
    the image is built by hand from a routed consistent one. Returns (compiled, the alu's tile).
    """
    graph = StreamGraph()
    graph.add_node("source", "mem", [{"start": 0, "stride": 1, "count_i": 8, "count_j": 1}])
    graph.add_node("scale", "alu", [{"beats": 8}])
    graph.add_host_out("out", "out0", 8)
    graph.connect("source", "scale", 8)
    graph.connect("scale", "out", 8)
    compiled = compile_program(Program("starving", graph, memories={"source": dict.fromkeys(range(8), 7)}),
                               default_fabric())
    alu_tile = compiled.routing.placement.tiles["scale"]
    programs = [UnitProgram(tile, "switch", uops) for tile, uops in compiled.routing.switch_uops.items()]
    for tile, uops in compiled.routing.fu_uops.items():
        if tile == alu_tile:
            uops = [{**uops[0], "beats": 12}]
        programs.append(UnitProgram(tile, default_fabric().kind(tile), uops))
    image = assemble(programs, {compiled.routing.placement.tiles["source"]: dict.fromkeys(range(8), 7)},
                     queue_depth=default_fabric().uop_queue_depth)
    return dataclasses.replace(compiled, image=image), alu_tile


def test_golden_model_names_the_starving_unit():
    """The alu waits with an empty slot, and the report says which unit feeds it."""
    compiled, alu_tile = _starving_program()
    source = list(compiled.routing.placement.tiles["source"])
    with pytest.raises(DeadlockError, match=rf"tile \[{alu_tile[0]}, {alu_tile[1]}\] alu: waiting, 8 "
                                            rf"firings; slot 0 empty \(waits for tile \[{source[0]}, "
                                            rf"{source[1]}\] output 0\)"):
        _model(compiled)


@pytest.mark.verilator
def test_watchdog_names_the_stalled_tile():
    """The RTL's watchdog fires and the starving alu's status register says it is stalled."""
    compiled, alu_tile = _starving_program()
    (rtl,) = run_many_on_rtl([compiled], profiles=["no_stall"], seeds=[1], case="fabric-watchdog",
                             max_cycles=5000, expect_stall=True)
    assert rtl.stalled_cycle is not None and rtl.done_cycle is None
    stalled = {tile for tile, status in rtl.status.items() if status & 0b100}
    assert stalled == {alu_tile}
    assert len(rtl.outputs.get("out0", [])) == 8       # what could be computed was delivered


WIDE_FABRIC = {
    "rows": 2, "cols": 4, "tiles": ["mem mac alu mem", "alu mem mac alu"],
    "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                   {"name": "in1", "tile": [1, 0], "side": "W", "direction": "in"},
                   {"name": "out0", "tile": [0, 3], "side": "E", "direction": "out"},
                   {"name": "out1", "tile": [1, 3], "side": "E", "direction": "out"}],
}


@pytest.mark.verilator
@pytest.mark.long(1)
def test_random_programs_on_another_grid():
    """A 2x4 fabric with another tile mix: random programs that route on it, RTL against the model."""
    spec = parse_fabric(WIDE_FABRIC, "2x4 test fabric")
    (base,) = seeds_for("fabric:wide", count=1)
    rng = random.Random(base)
    compiled = []
    while len(compiled) < 16:
        program = random_program(rng.getrandbits(32))
        try:
            compiled.append(compile_program(program, spec))
        except RouteError:
            continue        # some shapes need more links than a 2-row grid offers
    profiles = [rng.choice(list(PROFILES)) for _ in compiled]
    print(f"base seed {base}: " + ", ".join(each.program.name for each in compiled))
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=list(range(len(compiled))),
                              case="fabric-wide")
    for each, rtl, profile in zip(compiled, results, profiles, strict=True):
        _assert_same(rtl, _model(each), f"{each.program.name} ({profile})")
