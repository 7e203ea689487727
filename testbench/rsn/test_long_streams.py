"""A counted stream longer than 16 bits count: one route of 70,000 beats, host to host.

The switch micro-op's beat count has high bits of its own (``beats_high`` in rsn/isa.py), so a
host port's stream of more than 65,535 tokens is one counted route, never several micro-ops that
in-order issue could make wait on each other. The program here sends 70,000 tokens from ``in0``
through an alu to ``out0`` on a 1x2 fabric: the golden model, the RTL (no stalls and random
stalls) and the cycle model must agree, the link beat counters included (they count the route's
full width, so 70,000 reads back as 70,000).
"""

import random

import pytest

from rivulet.sim.fabric_run import run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rsn.checks import MAX_BEATS
from rsn.cycle_model import predict_cycles
from rsn.fabric_spec import parse_fabric
from rsn.graph import StreamGraph
from rsn.model import FabricModel
from rsn.program import Program, compile_program
from testbench.counters import assert_counters_agree

TOKENS = 70_000
ALU_BEATS = 65_535          # the alu's own count is 16 bits: it takes the stream in two micro-ops
SHIFT = 3
TOLERANCE = 0.05            # whole-program cycles, model vs RTL, as in test_cycle_model.py

SPEC = parse_fabric({
    "rows": 1, "cols": 2, "tiles": ["alu alu"],
    "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                   {"name": "out0", "tile": [0, 1], "side": "E", "direction": "out"}],
}, "1x2 alu fabric for long streams")


def _relu_shift(word: int) -> int:
    signed = word - (1 << 32) if word >> 31 else word
    return (max(signed, 0) >> SHIFT) & 0xFFFF_FFFF


def long_program(seed: int) -> Program:
    """in0 -> alu (pinned to the far tile, so the stream crosses both switches) -> out0."""
    rng = random.Random(seed)
    words = [rng.getrandbits(32) for _ in range(TOKENS)]
    uops = [{"beats": min(ALU_BEATS, TOKENS - start), "relu": 1, "shift": SHIFT}
            for start in range(0, TOKENS, ALU_BEATS)]
    graph = StreamGraph()
    graph.add_host_in("x", "in0", TOKENS)
    graph.add_node("scale", "alu", uops, tile=(0, 1))
    graph.add_host_out("y", "out0", TOKENS)
    graph.connect("x", "scale", TOKENS)
    graph.connect("scale", "y", TOKENS)
    return Program(f"long-stream-{TOKENS}", graph, host_inputs={"in0": words},
                   expected={"out0": [_relu_shift(word) for word in words]})


def test_the_stream_is_one_counted_route_per_switch():
    assert TOKENS > 65_535 and TOKENS <= MAX_BEATS
    compiled = compile_program(long_program(1), SPEC)
    for tile, uops in compiled.routing.switch_uops.items():
        assert all(uop["beats"] == TOKENS for uop in uops), tile


def test_golden_model_carries_the_whole_stream():
    program = long_program(1)
    compiled = compile_program(program, SPEC)
    result = FabricModel(SPEC).run(compiled.image, program.host_inputs)
    assert result.done
    assert result.outputs["out0"] == program.expected["out0"]
    assert max(max(beats) for beats in result.link_beats.values()) == TOKENS


@pytest.mark.verilator
def test_rtl_equals_golden_model_and_cycle_model():
    """One simulation: no stalls (cycles against the cycle model) and random stalls."""
    profiles = ["no_stall", "random_stall_50"]
    seeds = seeds_for("long_streams", count=len(profiles))
    print(f"seeds {seeds}")
    programs = [long_program(seed) for seed in seeds]
    compiled = [compile_program(program, SPEC) for program in programs]
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds, case="long-streams")
    for program, each, rtl, profile in zip(programs, compiled, results, profiles, strict=True):
        model = FabricModel(SPEC).run(each.image, program.host_inputs)
        assert rtl.outputs["out0"] == model.outputs["out0"] == program.expected["out0"], profile
        assert_counters_agree(rtl, model, profile)
    predicted, measured = predict_cycles(compiled[0]).cycles, results[0].cycles
    error = (predicted - measured) / measured
    print(f"{TOKENS} tokens: RTL {measured} cycles, cycle model {predicted} ({100 * error:+.2f}%)")
    assert measured >= TOKENS
    assert abs(error) <= TOLERANCE
