"""The six graph workloads, both versions, on small seeded graphs of both kinds on the golden
model (depth 2): each run checked by the workload's own check against its independent reference
(networkx, or numpy for prd's fixed-point model). The test_<name>.py files show each check
catching a wrong answer."""

import pytest

from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.graphs import KINDS
from rivulet.sim.seeds import seeds_for

from .harness import run_small_case

SEEDS = {"bfs": 3, "ts": 3, "kc": 3, "cc": 3, "sssp": 3, "prd": 2}     # prd's rounds are the slowest


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", SEEDS)
def test_graph_workload_matches_its_reference(name, version, kind):
    chosen = workload(name)
    for seed in seeds_for(f"wl-{name}:{version}:{kind}", SEEDS[name]):
        print(f"{name} {version} {kind} seed {seed}")
        case = chosen.case(version, chosen.small, kind, seed)
        result = run_small_case(chosen, version, case)
        assert chosen.check(version, case, result.arrays, result.outputs) == []
