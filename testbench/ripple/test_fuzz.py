"""The differential fuzzer of the pe fabric (docs/fuzzing.md): random programs shaped like compiled
loop nests, on the reference interpreter, the Ripple golden model, the fabric's golden model and
the Verilated fabric. Every run prints its base seed; ``RIVULET_SEED`` replays it.

Also here: the kernel class of the RTL hang that was reported (a nested loop nest with STEERs,
CARRYs, INVARIANTs, a MERGE, two LOADs and a STORE), whose cause was the watchdog counting while
the image was still arriving from a slow host, and every shrunk finding of the fuzzer
(``fuzz_regressions/*.json``).
"""

import json
import random
import zlib
from collections import Counter
from pathlib import Path

import pytest

from ripple_core.fuzz.compile import compile_program
from ripple_core.fuzz.differential import model_disagreements, prepare
from ripple_core.fuzz.generate import GeneratorLimits, random_program
from ripple_core.fuzz.shrink import candidates, shrink, size, valid
from ripple_core.fuzz.source import BINARY_OPS, Program, evaluate
from rivulet.sim.pe_fuzz import fuzz
from rivulet.sim.seeds import seeds_for
from rivulet.sim.toolchain import REPOSITORY
from rsn.fabric_spec import load_fabric
from rsn.image import decode_image
from rsn.isa import Opcode

FABRIC = load_fabric(REPOSITORY / "examples" / "fabrics" / "ripple.toml")   # 5x6 pe tiles
LIMITS = GeneratorLimits(min_ops=10, max_ops=28)    # a lowered graph takes one tile per operator
# 70 programs on the golden models per run (each run draws new ones; `make bench` runs more).
MODEL_CHUNKS, MODEL_GRAPHS = 2, 35
RTL_GRAPHS = 32                                     # in one simulation (the native tier)
REGRESSIONS = sorted((Path(__file__).parent / "fuzz_regressions").glob("*.json"))
RIPTIDE_OPS = set(BINARY_OPS) | {"ID", "SELECT", "STEER", "MERGE", "ORDER", "CARRY", "INVARIANT",
                                 "STREAM", "LOAD", "STORE", "SINK"}

V, C = (lambda name: ("var", name)), (lambda value: ("const", value))


def B(op, a, b):
    return ("bin", op, a, b)


def kernel(n: int, m: int, seed: int) -> Program:
    """``for i < n: s = 0; for j < m: a = A[i+j]; b = B[j]; t = a > b ? a - b : b (if/else);
    s += t; C[i] = s``: two loops of CARRYs (one counting up with a true decider, one with the
    complement compare), INVARIANTs for the bounds and the outer counter, STEER + MERGE."""
    rng = random.Random(seed)
    body = [("for", "i", C(0), V("n"), 1, "SLT", "carry", [
        ("let", "s", C(0)),
        ("for", "j", C(0), V("m"), 1, "SLT", "carry~", [
            ("let", "a", ("load", "A", B("AND", B("ADD", V("i"), V("j")), C(15)))),
            ("let", "b", ("load", "B", B("AND", V("j"), C(3)))),
            ("let", "t", C(0)),
            ("if", B("SGT", V("a"), V("b")),
             [("let", "t", B("SUB", V("a"), V("b")))],
             [("let", "t", V("b"))]),
            ("let", "s", B("ADD", V("s"), V("t"))),
        ]),
        ("store", "C", B("AND", V("i"), C(3)), V("s")),
    ])]
    arrays = {"A": [rng.randint(-100, 100) for _ in range(16)],
              "B": [rng.randint(-100, 100) for _ in range(4)], "C": [0] * 4}
    return Program({"n": n, "m": m}, arrays, body, [])


def _sums(program: Program) -> list[int]:
    """The kernel's C array, computed here in plain Python."""
    A, Bs, n, m = program.arrays["A"], program.arrays["B"], program.scalars["n"], program.scalars["m"]
    out = [0] * 4
    for i in range(n):
        s = 0
        for j in range(m):
            a, b = A[(i + j) & 15], Bs[j & 3]
            s += a - b if a > b else b
        out[i & 3] = s
    return out


def test_the_kernel_class_compiles_to_the_reported_shape_and_the_models_agree():
    program = kernel(3, 4, seed=1)
    assert evaluate(program).arrays["C"] == _sums(program)
    prepared = prepare(program, FABRIC, name="kernel")
    ops = Counter(node.op for node in prepared.graph.nodes.values())
    assert ops["CARRY"] == 3 and ops["INVARIANT"] >= 1 and ops["MERGE"] == 1 and ops["LOAD"] == 2 \
        and ops["STORE"] == 1 and ops["STEER"] >= 6, ops
    assert model_disagreements(prepared, FABRIC) == []


def test_the_watchdog_regression_has_the_long_wait_it_is_for():
    """The reported hang: the switches get their routes long before the PEs get their micro-ops,
    so with a host that sends one word in about 10 cycles (profile ``slow_host``) the fabric waits
    with busy units for more than the watchdog's 1024 cycles while the image is still arriving.
    Its regression program (run on the RTL by test_rtl_agrees_with_the_golden_models) must keep
    that wait, and it is the kernel class of the report."""
    name = "watchdog-during-image"
    record = json.loads((Path(__file__).parent / "fuzz_regressions" / f"{name}.json").read_text())
    assert record["profile"] == "slow_host"
    program = Program.from_json(record["program"])
    assert program.to_json() == kernel(3, 4, seed=2).to_json()
    prepared = prepare(program, FABRIC, name=name, seed=zlib.crc32(name.encode()))   # as fuzz() places it
    packets = decode_image(prepared.compiled.image, FABRIC.rows, FABRIC.cols).packets
    first_route = next(p.offset for p in packets if p.opcode == Opcode.SWITCH)
    first_firing = next(p.offset for p in packets if p.opcode == Opcode.FU)
    assert (first_firing - first_route) * 10 > 2 * 1024, "the image no longer has the long wait"


@pytest.mark.parametrize("chunk", range(MODEL_CHUNKS))
def test_golden_models_agree_with_the_reference(chunk):
    (seed,) = seeds_for(f"pe-fuzz-models-{chunk}", count=1)
    print(f"pe fuzz on the golden models, base seed {seed}")
    report = fuzz(MODEL_GRAPHS, FABRIC, base_seed=seed, limits=LIMITS, rtl=False)
    print(report.summary())
    assert report.graphs >= MODEL_GRAPHS * 0.9, report.summary()
    assert not report.findings, "\n".join(
        f"seed {f.seed}: {f.problems[0]}\nshrunk: {json.dumps(f.shrunk.to_json())}" for f in report.findings)


@pytest.mark.verilator
@pytest.mark.long(0)
def test_rtl_agrees_with_the_golden_models():
    """Random programs and every regression program, in one simulation, each under a random
    stall profile: done, host outputs, per-PE firings and the arrays read back."""
    (seed,) = seeds_for("pe-fuzz-rtl", count=1)
    print(f"pe fuzz on the RTL, base seed {seed}")
    fixed = []
    for path in REGRESSIONS:
        record = json.loads(path.read_text())
        fixed.append((path.stem, Program.from_json(record["program"]), record["profile"] or "random_stall_50",
                      record["run_seed"] or 1))
    report = fuzz(RTL_GRAPHS, FABRIC, base_seed=seed, limits=LIMITS, fixed=fixed, shrink_findings=False)
    print(report.summary())
    assert report.rtl_graphs >= (RTL_GRAPHS + len(fixed)) * 0.9, report.summary()
    assert not report.findings, "\n".join(
        f"program {f.seed} (profile {f.profile}, seed {f.run_seed}): {f.problems[0]}"
        for f in report.findings)


@pytest.mark.parametrize("path", REGRESSIONS, ids=[path.stem for path in REGRESSIONS])
def test_regression_programs_agree_on_the_golden_models(path):
    record = json.loads(path.read_text())
    spec = load_fabric(REPOSITORY / record["fabric"])
    prepared = prepare(Program.from_json(record["program"]), spec, name=path.stem)
    assert model_disagreements(prepared, spec) == []


def test_the_generator_covers_the_operator_set_and_the_loop_shapes():
    """Over 200 programs: every RipTide operator, nested loops of both kinds, both decider
    polarities, MERGEs and SELECTs, memory ordered through ORDER, sizes within the limits."""
    (seed,) = seeds_for("pe-fuzz-generator", count=1)
    rng = random.Random(seed)
    ops, polarities, sizes, nested = Counter(), Counter(), [], 0
    for _ in range(200):
        graph = compile_program(random_program(random.Random(rng.randrange(2**63)), LIMITS))
        sizes.append(len(graph.nodes))
        ops.update(node.op for node in graph.nodes.values())
        polarities.update((node.op, node.attrs.get("pred")) for node in graph.nodes.values()
                          if node.op in ("CARRY", "INVARIANT", "STEER", "STREAM"))
        starts = [node.inputs[1] if node.op == "CARRY" else node.inputs[0] for node in graph.nodes.values()
                  if node.op in ("CARRY", "STREAM")]
        fed = {start.source for start in starts if start.kind == "edge"}
        nested += any(graph.nodes[name].op == "STEER" for name in fed)
    assert RIPTIDE_OPS <= set(ops), sorted(RIPTIDE_OPS - set(ops))
    assert all(polarities[op, pred] for op in ("CARRY", "INVARIANT", "STEER", "STREAM")
               for pred in (True, False))
    assert min(sizes) >= LIMITS.min_ops and max(sizes) <= LIMITS.max_ops
    # About one graph in ten has one at this size (17 to 20 of 200 measured): 5 is far below.
    assert nested >= 5, f"{nested} graphs with a loop that starts from a value steered into a region"


def test_the_shrinker_finds_a_small_program_that_still_fails():
    (seed,) = seeds_for("pe-fuzz-shrink", count=1)
    rng = random.Random(seed)
    while True:
        program = random_program(random.Random(rng.randrange(2**63)), GeneratorLimits(25, 40))
        if any(node.op == "MERGE" for node in compile_program(program).nodes.values()):
            break

    def fails(programs):
        return [any(node.op == "MERGE" for node in compile_program(p).nodes.values()) for p in programs]

    small = shrink(program, fails)
    graph = compile_program(small)
    assert any(node.op == "MERGE" for node in graph.nodes.values())
    # A local minimum: no valid smaller program one rewrite away still has a MERGE.
    small_size = size(small)
    smaller = [c for c in candidates(small) if valid(c) and size(c) < small_size]
    assert not any(fails(smaller)), "the shrinker stopped while a smaller failing program was one step away"
    # From 25 to 40 operators down to 3 to 9, at most a third, over 60 seeds (one CI seed gave 11,
    # above the fixed bound of 10 this replaced): at most half leaves room.
    before = len(compile_program(program).nodes)
    assert len(graph.nodes) <= before // 2, [f"{n.name} {n.op}" for n in graph.nodes.values()]
