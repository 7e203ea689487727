"""SSSP, both versions, on small seeded weighted graphs of both kinds on the golden model (depth 2):
the final distances match networkx's Dijkstra, and the check catches a wrong distance.
The runs on random graphs are parametrised in test_graph_workloads.py; this file keeps the
workload's own checks of a wrong answer."""

import pytest

from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.sssp import UNREACHED
from rivulet.sim.seeds import seeds_for

from .harness import run_small_case

W = workload("sssp")


@pytest.mark.parametrize("version", VERSIONS)
def test_sssp_check_catches_one_wrong_distance(version):
    (seed,) = seeds_for(f"wl-sssp:mutant:{version}", count=1)
    print(f"seed {seed}")
    case = W.case(version, W.small, "uniform", seed)
    result = run_small_case(W, version, case)
    dist = list(result.arrays["dist"])
    vertex = max((v for v in range(len(dist)) if dist[v] != UNREACHED), key=dist.__getitem__)
    dist[vertex] += 1                  # the farthest reached vertex, one too far
    problems = W.check(version, case, {**result.arrays, "dist": dist}, result.outputs)
    assert problems and f"dist[{vertex}]" in problems[0]
