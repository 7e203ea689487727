"""The language's versions of programs.py's graphs and of the RipTide peer kernels."""

import random
from pathlib import Path

import pytest

from ripple_core import programs
from ripple_core.interp import DeadlockError, run
from ripple_core.lang import compile_kernel, examples
from ripple_core.riptide import load_graph, load_vectors
from rivulet.sim.seeds import seeds_for

from .check import agree

SUITE = Path(__file__).resolve().parents[3] / "shared" / "peer-suites" / "riptide"
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="peer suite not found beside the repository")


def matches(graph, case, args=None, depth=2):
    result = run(graph, args or case.get("args", {}), case["mem"], depth=depth)
    assert result.drained
    for name, expected in case["expect"].items():
        got = result.arrays[name] if name in result.arrays else result.outputs[name]
        assert (sorted(got) if name in ("done",) else got) == expected, name
    return result


def test_bfs_both_ways_match_the_hand_built_graphs():
    for seed in seeds_for("lang-bfs"):
        print(f"seed {seed}")
        row, col = programs.random_csr(40, 3, seed)
        for kernel, hand, ordered in ((examples.ordered_bfs, programs.ordered_bfs(), True),
                                      (examples.ripple_bfs, programs.ripple_bfs(), False)):
            case = programs.bfs_case(row, col, ordered)
            graph = compile_kernel(kernel)
            for depth in (2, None):
                matches(graph, case, depth=depth)
                matches(hand, case, depth=depth)
            assert graph.unspilled_task_cycles() == []


def test_dmv_both_ways():
    for seed in seeds_for("lang-dmv"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        m, n = rng.randint(1, 6), rng.randint(1, 6)
        case = programs.dmv_case([[rng.randint(-9, 9) for _ in range(n)] for _ in range(m)],
                                 [rng.randint(-9, 9) for _ in range(n)])
        for kernel in (examples.dmv_ordered, examples.dmv_ripple):
            for depth in (2, None):
                matches(compile_kernel(kernel), case, depth=depth)
        matches(programs.dmv(ripple=True), case)
        agree(examples.dmv_ripple, case["args"], case["mem"])


def test_tree_serial_and_histogram():
    for nodes in (1, 7, 30):
        matches(compile_kernel(examples.tree_walk), programs.tree_case(nodes), {"nodes": nodes})
        case = programs.serial_case(nodes, 3)
        result = matches(compile_kernel(examples.serial_walk), case, {"nodes": nodes, "step": 3})
        assert result.outputs["order"] == case["expect"]["order"]
    for seed in seeds_for("lang-histogram"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        keys = [rng.randrange(5) for _ in range(rng.randint(1, 30))]
        case = programs.histogram_case(keys, 5)
        graph = compile_kernel(examples.histogram)
        assert graph.nodes and any(node.op == "ACQUIRE" for node in graph.nodes.values())
        matches(graph, case)
        agree(examples.histogram, case["args"], case["mem"])


def test_every_push_cycle_spills_unless_told_not_to():
    for kernel in (examples.ripple_bfs, examples.tree_walk, examples.serial_walk):
        assert compile_kernel(kernel).unspilled_task_cycles() == []
    unspilled = compile_kernel(examples.ripple_bfs, spill=False)
    assert unspilled.unspilled_task_cycles() == [["visit"]]
    row, col = programs.random_csr(256, 8, 7)
    memory = {"row": row, "col": col, "visited": [1] + [0] * 255}
    run(compile_kernel(examples.ripple_bfs), memory=memory)
    with pytest.raises(DeadlockError, match="queue 'visit.q' \\(depth 2\\) full"):
        run(unspilled, memory=memory)


@needs_suite
@pytest.mark.parametrize("name", sorted(examples.PEER_KERNELS))
def test_peer_suite_vectors(name):
    graph = compile_kernel(examples.PEER_KERNELS[name])
    stream = load_graph(SUITE / f"{name}.riptide.json")
    assert len([n for n in graph.nodes.values() if n.op != "SINK"]) <= stream.static_instructions() + \
        (1 if name.startswith("simple") else 0)      # the simple kernels also return their sum
    for case in load_vectors(SUITE / f"{name}.vectors.json", graph):
        result = run(graph, case["args"], case["mem"], depth=None, mem_latency=1)
        assert result.drained
        for array, expected in case["expect"].items():
            assert result.arrays[array] == expected
        assert result.cycles <= 1.1 * case["reference_steps"]["stream"]
        if name.startswith("simple"):
            a, b = case["args"]["a"], case["args"]["b"]
            assert result.outputs["return"] == [case["args"].get("base", 0) + sum(range(a, b + 1))]
