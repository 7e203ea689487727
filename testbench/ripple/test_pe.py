# amaranth: UnusedElaboratable=no
"""The Ripple PE against ripple_core.ops: every operator, random streams, every stall profile,
queue depths 1, 2 and 4, and the issue's specific cases (expectations written from the spec
and checked against the golden operator first)."""

import random

import pytest

from hw.params import ParameterError
from ripple_core.ops import STREAM_COMPARES
from ripple_core.pe import PE_CONFIG, PeOp, RipplePE, SlotKind, StreamCmp, pe_config_word
from testbench.seeds import seeds_for
from testbench.streams import PROFILES, ScoreboardError

from .pe_bench import OPERATORS, Phase, drained, golden, random_phase, run_pe_amaranth, with_front

DEPTHS = [1, 2, 4]
MIN, MAX = -(1 << 31), (1 << 31) - 1


def run_directed(phase: Phase, outputs, *, depth: int, profile: str = "random_stall_50", idle=True):
    """Check the spec's expectation against the golden operator, then the RTL against both."""
    run = golden(phase)
    assert run.outputs == [list(o) for o in outputs], f"the golden operator gives {run.outputs}"
    assert run.idle == idle
    for seed in seeds_for(f"pe-directed:{phase.op}:{phase.streams}:{depth}", count=2):
        print(f"pe {phase.op} depth={depth} profile={profile} seed={seed}")
        # Tokens behind a slot's leftover front never matter and could not enter a full queue.
        run_pe_amaranth(RipplePE(depth), [with_front(phase)], profile=profile, seed=seed)


def test_config_word_layout():
    word = pe_config_word("STREAM", pred=True, cmp="UGE", slots=("edge", "hold", "const"), drop=(1,))
    view = PE_CONFIG.const({"op": PeOp.STREAM, "pred": 1, "cmp": StreamCmp.UGE,
                            "slots": [SlotKind.EDGE, SlotKind.HOLD, SlotKind.CONST], "drop": 2})
    assert word == view.as_bits()
    assert word & 0x1F == PeOp.STREAM.value and (word >> 5) & 1 == 1
    assert pe_config_word("GEP4") == pe_config_word("ADD")
    assert tuple(mode.name for mode in StreamCmp) == STREAM_COMPARES
    for bad in [dict(op="QUEUE"), dict(op="ADD", cmp="LT"), dict(op="ADD", slots=("wire",)),
                dict(op="ADD", drop=(2,))]:
        with pytest.raises(ParameterError, match="RipplePE"):
            pe_config_word(**bad)
    with pytest.raises(ParameterError, match="depth"):
        RipplePE(-1)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_operator_random(depth, profile):
    """One PE reconfigured through every operator in random order, drained random streams."""
    for seed in seeds_for(f"pe-random:{depth}:{profile}"):
        print(f"pe all operators depth={depth} profile={profile} seed={seed}")
        rng = random.Random(seed)
        phases = [drained(random_phase(op, rng)) for op in OPERATORS]
        rng.shuffle(phases)
        run_pe_amaranth(RipplePE(depth), phases, profile=profile, seed=seed)


@pytest.mark.parametrize("depth", DEPTHS)
def test_every_operator_with_leftovers(depth):
    """Each operator alone, random streams that leave tokens at the slots' fronts."""
    (seed,) = seeds_for(f"pe-fronts:{depth}", count=1)
    print(f"pe fronts depth={depth} seed={seed}")
    rng = random.Random(seed)
    profiles = list(PROFILES)
    for k, op in enumerate(OPERATORS):
        run_pe_amaranth(RipplePE(depth), [with_front(random_phase(op, rng))],
                        profile=profiles[k % len(profiles)], seed=rng.getrandbits(32))


ARITHMETIC = [("ADD", MAX, 1, MIN), ("SUB", MIN, 1, MAX), ("MUL", 0x10000, 0x10000, 0), ("MUL", -3, 7, -21),
              ("MUL", MAX, MAX, 1), ("AND", -1, 5, 5), ("OR", 8, 1, 9), ("XOR", -1, 5, -6),
              ("SHL", 1, 33, 2), ("SHL", 3, 31, MIN), ("ASHR", MIN, 31, -1), ("ASHR", -7, 1, -4),
              ("LSHR", MIN, 31, 1), ("LSHR", -1, 36, 0x0FFF_FFFF), ("EQ", -1, -1, 1), ("NE", 3, 3, 0),
              ("SLT", -1, 1, 1), ("ULT", -1, 1, 0), ("SLE", -5, -6, 0), ("ULE", 0, -1, 1),
              ("SGT", 1, MIN, 1), ("UGT", 1, MIN, 0), ("SGE", 5, 5, 1), ("UGE", 4, 5, 0)]


@pytest.mark.parametrize("depth", DEPTHS)
def test_32_bit_arithmetic(depth):
    phases = [Phase(op, [[a], [b], []]) for op, a, b, _ in ARITHMETIC]
    for phase, (*_, want) in zip(phases, ARITHMETIC, strict=True):
        assert golden(phase).outputs == [[want], []], phase.op
    (seed,) = seeds_for(f"pe-arith:{depth}", count=1)
    print(f"pe arithmetic depth={depth} seed={seed}")
    run_pe_amaranth(RipplePE(depth), phases, profile="random_stall_50", seed=seed)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("pred", [True, False])
def test_steer_discards_on_the_other_polarity(depth, pred):
    want = [10, 30, 50] if pred else [20, 40]
    run_directed(Phase("STEER", [[1, 0, 1, 0, 5], [10, 20, 30, 40, 50], []], pred=pred), [want, []],
                 depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
def test_merge_never_takes_the_unchosen_side(depth):
    # f's token is there from the start (d waits 30 cycles); three true deciders must leave it.
    run_directed(Phase("MERGE", [[1, 1, 1, 0], [7, 8, 9], [100]], delays={0: 30}), [[7, 8, 9, 100], []],
                 depth=depth)
    run_directed(Phase("MERGE", [[0, 1, 0], [5], [6, 7]]), [[6, 5, 7], []], depth=depth,
                 profile="backpressure_90")


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("pred", [True, False])
def test_carry_rearms_zero_iterations_early_next(depth, pred):
    # Loops of 2, 0 and 1 iterations; every `next` token is queued before any decider arrives.
    deciders = [int(x == pred) for x in (1, 1, 0, 0, 1, 0)]
    run_directed(Phase("CARRY", [deciders, [1, 2, 3], [10, 11, 12]], pred=pred, delays={0: 30}),
                 [[1, 10, 11, 2, 3, 12], []], depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("pred", [True, False])
def test_invariant_rearms_and_peeks(depth, pred):
    deciders = [int(x == pred) for x in (1, 1, 0, 0)]
    run_directed(Phase("INVARIANT", [deciders, [5, 6], []], pred=pred, delays={0: 30}), [[5, 5, 5, 6], []],
                 depth=depth)
    # A hold value is never taken: after each exit INIT emits it again, and the PE ends in LOOP.
    run_directed(Phase("INVARIANT", [[1, 0, 0], [], []], kinds=("edge", "hold", "edge"),
                       consts=(0, 9, 0), pred=True), [[9, 9, 9, 9], []], depth=depth, idle=False)


STREAM_MODES = {"SLT": [-2, -1, 0, 1], "SLE": [-2, -1, 0, 1, 2], "ULT": [], "ULE": [],
                "SGT": [-2, -1, 0, 1, 2], "SGE": [-2, -1, 0, 1], "UGT": [], "UGE": []}


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("cmp", STREAM_COMPARES)
def test_stream_compare_modes(depth, cmp):
    """start -2, bound 2, step 1: -2 is huge unsigned, so U* modes give empty ranges."""
    indices = STREAM_MODES[cmp]
    pred = cmp in ("SLT", "UGE")
    flags = [int(pred)] * len(indices) + [int(not pred)]
    run_directed(Phase("STREAM", [[-2], [2], [1]], pred=pred, cmp=cmp), [indices, flags], depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
def test_stream_empty_ranges_and_negative_steps(depth):
    run_directed(Phase("STREAM", [[5], [5], [1]], cmp="SLT"), [[], [1]], depth=depth)
    # A negative step under ULT ends when the index wraps to a huge unsigned value.
    run_directed(Phase("STREAM", [[3], [10], [-1]], cmp="ULT"), [[3, 2, 1, 0], [0, 0, 0, 0, 1]], depth=depth)
    # Three streams back to back, bound and step held: 4..6, empty, 0..-4 by -2 under SGE.
    run_directed(Phase("STREAM", [[4, 9, 2], [], []], kinds=("edge", "hold", "hold"), consts=(0, 7, 1),
                       cmp="SLT", pred=True), [[4, 5, 6, 2, 3, 4, 5, 6], [1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0]],
                 depth=depth)
    run_directed(Phase("STREAM", [[0], [-4], [-2]], cmp="SLE", drop=(1,)), [[], []], depth=depth)
    run_directed(Phase("STREAM", [[-9], [-5], [2]], cmp="SGE", drop=(0,)), [[], [0, 0, 1]], depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
def test_hold_never_taken_const_taken_once(depth):
    run_directed(Phase("ADD", [[1, 2, 3], [], []], kinds=("edge", "hold", "edge"), consts=(0, 100, 0)),
                 [[101, 102, 103], []], depth=depth)
    run_directed(Phase("ADD", [[1, 2, 3], [], []], kinds=("edge", "const", "edge"), consts=(0, 100, 0)),
                 [[101], []], depth=depth)
    run_directed(Phase("SUB", [[], [1, 2], []], kinds=("const", "edge", "edge"), consts=(50, 0, 0)),
                 [[49], []], depth=depth)
    # SELECT takes all three slots, so its first firing uses up the const f; the held t stays.
    run_directed(Phase("SELECT", [[1, 0, 1], [], []], kinds=("edge", "hold", "const"), consts=(0, 4, 8)),
                 [[4], []], depth=depth)


def test_bench_catches_a_wrong_expectation():
    """The scoreboard is live: a phase whose golden outputs are tampered with fails."""
    phase = drained(random_phase("ADD", random.Random(1)))
    from . import pe_bench

    original = pe_bench.golden

    def tampered(p, limit=20_000):
        run = original(p, limit)
        run.outputs[0] = [x + 1 for x in run.outputs[0]]
        return run

    pe_bench.golden = tampered
    try:
        with pytest.raises(ScoreboardError, match="expected"):
            run_pe_amaranth(RipplePE(2), [phase], profile="no_stall", seed=1)
    finally:
        pe_bench.golden = original


@pytest.mark.verilator
def test_verilator():
    """The generated Verilog (depth 2): every operator in random order, every profile x 3 seeds."""
    import json
    from dataclasses import astuple

    from testbench.seeds import base_seed
    from testbench.streams import stream_ports
    from testbench.verilator import build_design, run_cocotb

    depth, seeds = 2, seeds_for("pe-verilator")
    print(f"pe verilator depth={depth} seeds={seeds}")
    phases = {}
    for seed in seeds:
        rng = random.Random(seed)
        chosen = [drained(random_phase(op, rng)) for op in OPERATORS]
        rng.shuffle(chosen)
        phases[str(seed)] = [phase.to_json() for phase in chosen]
    pe = RipplePE(depth)
    ports, _ = stream_ports(pe)
    config = {"depth": depth, "ports": [astuple(port) for port in ports], "profiles": list(PROFILES),
              "seeds": seeds, "phases": phases, "base_seed": base_seed()}
    built = build_design(f"ripple-pe-depth={depth}", pe)
    run_cocotb(built, "testbench.ripple.tb_pe", "ripple-pe-random", {"RIVULET_PE": json.dumps(config)})
