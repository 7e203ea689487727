"""BFS, both versions, on small seeded graphs of both kinds on the golden model (depth 2): the
final levels match networkx's, and the check catches a wrong level."""

import pytest

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.bfs import UNREACHED
from ripple_core.workloads.graphs import KINDS
from rivulet.sim.seeds import seeds_for

W = workload("bfs")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_bfs_levels_match_networkx(version, kind):
    graph = compile_kernel(W.kernel(version))
    for seed in seeds_for(f"wl-bfs:{version}:{kind}"):
        print(f"{version} {kind} seed {seed}")
        case = W.case(version, W.small, kind, seed)
        result = run(graph, case["args"], case["mem"], depth=2)
        assert result.drained
        assert W.check(version, case, result.arrays, result.outputs) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_bfs_check_catches_one_wrong_level(version):
    (seed,) = seeds_for(f"wl-bfs:mutant:{version}", count=1)
    print(f"seed {seed}")
    case = W.case(version, W.small, "uniform", seed)
    result = run(compile_kernel(W.kernel(version)), case["args"], case["mem"], depth=2)
    level = list(result.arrays["level"])
    vertex = max((v for v in range(len(level)) if level[v] != UNREACHED), key=level.__getitem__)
    level[vertex] += 1                  # the deepest reached vertex, one level too deep
    problems = W.check(version, case, {**result.arrays, "level": level}, result.outputs)
    assert problems and f"level[{vertex}]" in problems[0]
