"""BFS, both versions, on small seeded graphs of both kinds on the golden model (depth 2): the
final levels match networkx's, and the check catches a wrong level.
The runs on random graphs are parametrised in test_graph_workloads.py; this file keeps the
workload's own checks of a wrong answer."""

import pytest

from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.bfs import UNREACHED
from rivulet.sim.seeds import seeds_for

from .harness import run_small_case

W = workload("bfs")


@pytest.mark.parametrize("version", VERSIONS)
def test_bfs_check_catches_one_wrong_level(version):
    (seed,) = seeds_for(f"wl-bfs:mutant:{version}", count=1)
    print(f"seed {seed}")
    case = W.case(version, W.small, "uniform", seed)
    result = run_small_case(W, version, case)
    level = list(result.arrays["level"])
    vertex = max((v for v in range(len(level)) if level[v] != UNREACHED), key=level.__getitem__)
    level[vertex] += 1                  # the deepest reached vertex, one level too deep
    problems = W.check(version, case, {**result.arrays, "level": level}, result.outputs)
    assert problems and f"level[{vertex}]" in problems[0]
