"""Tuples split into one stream per field (ripple_core/tuples.py), so that tasks of several
arguments run on pe tiles, which pass one value per token.

The references are Python written here (which word each source stores where) and the language's
CPython reference for random kernels, never a golden model's run of the unsplit graph.
"""

import random

import pytest

from ripple_core.builder import Builder
from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.lang.random_kernels import KERNEL, check, generate, kernel_from_source
from ripple_core.lower import compile_lowering, lower_graph
from ripple_core.tuples import ARB_SOURCES, is_split, split_tuples
from rivulet.sim.seeds import base_seed, seeds_for
from rivulet.sim.streams import PROFILES
from rsn.program import SHARED_MEMORY

from .test_shared_memory import SHARED, SMALL_SHARED, check_on_fabric_model, check_on_small_rtl

# Source s stores field 1 = scale[s] * i + bias[s] at word offset[s] + i, for i < count[s].
SCALES, BIASES = (3, 5, -2, 7, 11), (0, 1, 40, -9, 2)


def scatter_program(sources: int, biased: bool = True):
    """``sources`` STREAMs push 2-tuples (address, value) into one ARB; a STORE writes each
    value at its address. Whatever order the ARB grants in, the array ends the same, and a
    field that followed another source's choice would put a value at a wrong address."""
    b = Builder(f"scatter{sources}")
    tuples = []
    for s in range(sources):
        index, _ = b.stream(b.const(0), b.scalar(f"n{s}", hold=False), b.const(1), cmp="SLT", pred=False,
                            name=f"count{s}")
        address = b.add(index, b.scalar(f"at{s}"), name=f"address{s}")
        value = b.mul(index, b.hold(SCALES[s]), name=f"scale{s}")
        if biased:
            value = b.add(value, b.hold(BIASES[s]), name=f"value{s}")
        tuples.append((address, value))
    address, value = b.arb(*tuples, name="pick")
    b.store(b.array("A"), address, value, name="put")
    return b.build()


def scatter_case(counts: list[int], biased: bool = True) -> dict:
    offsets = [sum(counts[:s]) for s in range(len(counts))]
    expect = [0] * sum(counts)
    for s, count in enumerate(counts):
        for i in range(count):
            expect[offsets[s] + i] = SCALES[s] * i + BIASES[s] * biased
    args = {**{f"n{s}": c for s, c in enumerate(counts)}, **{f"at{s}": o for s, o in enumerate(offsets)}}
    return {"args": args, "mem": {"A": [0] * sum(counts)}, "expect": {"A": expect}}


@pytest.mark.parametrize("sources", [2, 3, 5])
def test_a_split_arb_keeps_every_tuple_together(sources):
    """2 sources: an ARB that emits the winner and a MERGE per field; 3: the winner compared with
    2 and steered; 5: first a tree of ARBs of at most three. On the golden model at depths 1, 2
    and unbounded, and (2 and 3 sources) on the fabric model lowered for a 5x6 shared-memory
    fabric, which 5 sources' 30 operators would fill."""
    graph = scatter_program(sources)
    split = split_tuples(graph)
    assert is_split(split) and not is_split(graph)
    assert all(node.attrs["sources"] <= ARB_SOURCES for node in split.nodes.values() if node.op == "ARB")
    for seed in seeds_for(f"tuples-scatter-{sources}", 2):
        rng = random.Random(seed)
        case = scatter_case([rng.randint(1, 12) for _ in range(sources)])
        print(f"{sources} sources, seed {seed}: counts {[case['args'][f'n{s}'] for s in range(sources)]}")
        for depth in (1, 2, None):
            result = run(split, case["args"], {"A": list(case["mem"]["A"])}, depth=depth)
            assert result.drained and result.arrays["A"] == case["expect"]["A"], depth
        if sources <= ARB_SOURCES:
            lowering = lower_graph(graph, case, SHARED, name=f"scatter{sources}")
            check_on_fabric_model(f"scatter{sources} seed {seed}", lowering, SHARED, seed)


def test_a_pipelined_task_s_other_fields_skip_its_dispatch_and_a_serial_task_s_wait_for_it():
    b = Builder("tasks")
    fast = b.task("fast", 2, ind=True)
    slow = b.task("slow", 2, ind=False, credits=2)
    b.push(fast, b.const(1), b.const(2))
    b.push(slow, b.const(3), b.const(4))
    b.sink("fast_sum", b.add(*fast.args, name="fast_add"))
    total = b.add(*slow.args, name="slow_add")
    slow.finish(total)
    b.sink("slow_sum", total)
    split = split_tuples(b.build())
    assert split.nodes["fast_add"].inputs[1].source == "fast.q.f1"      # straight from its queue
    assert split.nodes["slow_add"].inputs[1].source == "slow.f1"        # behind the dispatch
    assert split.nodes["slow.f1"].op == "ORDER"
    assert split.nodes["slow"].inputs[-1].describe() == "const 2 (hold)"         # its credits
    assert [s.source for s in split.nodes["slow.f1"].inputs] == ["slow.q.f1", "slow"]
    result = run(split, {}, {})
    assert result.outputs == {"fast_sum": [3], "slow_sum": [7]}


def test_random_ripple_kernels_with_tuples_agree_with_the_reference_after_the_split():
    """Random kernels (any number of tasks, pushes and atomic blocks), split, then run at depth 2
    and unbounded against the kernel's CPython reference."""
    seeds = seeds_for("tuples-random-kernels", 60)
    print(f"seeds {seeds}")
    wide = 0
    for seed in seeds:
        program = generate(seed, "ripple")
        try:
            source = kernel_from_source(program.source, KERNEL, program.filename)
            graph = compile_kernel(source, mode="ripple")
        except Exception:       # a refusal: the language tests judge those
            continue
        wide += not is_split(graph)
        outcome = check(program, transform=split_tuples)
        assert outcome.ok, (f"{outcome.kind}: {outcome.detail}\n{program.describe()}\nreplay: "
                            f"RIVULET_SEED={base_seed()}, check(generate({seed}, 'ripple'), "
                            f"transform=split_tuples)")
    assert wide >= 30, f"only {wide} of {len(seeds)} kernels had tuples or wide arbs"


@pytest.mark.verilator
def test_a_split_arb_on_the_rtl_under_back_pressure():
    """Two sources of 2-tuples on the 3x4 shared-memory fabric's RTL, under every stall profile:
    the pe ARB's port 1 (the winner) decides the MERGE of the second field."""
    (seed,) = seeds_for("tuples-rtl", count=1)
    rng = random.Random(seed)
    runs = []
    for profile in PROFILES:
        case = scatter_case([rng.randint(3, 20), rng.randint(3, 20)], biased=False)     # 11 of 12 tiles
        lowering = lower_graph(scatter_program(2, biased=False), case, SMALL_SHARED, name="scatter2")
        assert SHARED_MEMORY in lowering.program.reads
        run_seed = rng.randrange(2**31)
        runs.append((f"scatter2 {profile} seed={run_seed}", lowering,
                     compile_lowering(lowering, SMALL_SHARED, seed=run_seed), profile, run_seed))
    print(f"tuples on the RTL, base seed {seed}: {[run[0] for run in runs]}")
    check_on_small_rtl(runs, "tuples-rtl")
