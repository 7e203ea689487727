"""SSSP, both versions, on small seeded weighted graphs of both kinds on the golden model (depth 2):
the final distances match networkx's Dijkstra, and the check catches a wrong distance."""

import pytest

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.graphs import KINDS
from ripple_core.workloads.sssp import UNREACHED
from rivulet.sim.seeds import seeds_for

W = workload("sssp")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_sssp_distances_match_networkx(version, kind):
    graph = compile_kernel(W.kernel(version))
    for seed in seeds_for(f"wl-sssp:{version}:{kind}"):
        print(f"{version} {kind} seed {seed}")
        case = W.case(version, W.small, kind, seed)
        result = run(graph, case["args"], case["mem"], depth=2)
        assert result.drained
        assert W.check(version, case, result.arrays, result.outputs) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_sssp_check_catches_one_wrong_distance(version):
    (seed,) = seeds_for(f"wl-sssp:mutant:{version}", count=1)
    print(f"seed {seed}")
    case = W.case(version, W.small, "uniform", seed)
    result = run(compile_kernel(W.kernel(version)), case["args"], case["mem"], depth=2)
    dist = list(result.arrays["dist"])
    vertex = max((v for v in range(len(dist)) if dist[v] != UNREACHED), key=dist.__getitem__)
    dist[vertex] += 1                  # the farthest reached vertex, one too far
    problems = W.check(version, case, {**result.arrays, "dist": dist}, result.outputs)
    assert problems and f"dist[{vertex}]" in problems[0]
