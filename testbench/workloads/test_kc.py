"""k-core decomposition, both versions, on small simple undirected random graphs of both kinds
on the golden model, checked against networkx.core_number; the check catches one wrong core
number and (Ripple) a leftover level token.
The runs on random graphs are parametrised in test_graph_workloads.py; this file keeps the
workload's own checks of a wrong answer."""

import pytest

from ripple_core.workloads import VERSIONS, workload
from rivulet.sim.seeds import seeds_for

from .harness import run_small_case

WL = workload("kc")


@pytest.mark.parametrize("version", VERSIONS)
def test_kc_check_catches_a_wrong_core_number(version):
    case = WL.case(version, WL.small, "rmat", seeds_for("wl-kc-mutant", 1)[0])
    result = run_small_case(WL, version, case)
    core = list(result.arrays["core"])
    core[5] += 1
    problems = WL.check(version, case, dict(result.arrays, core=core), result.outputs)
    assert any("first vertex 5" in p for p in problems)
    if version == "ripple":
        ctrl = list(result.arrays["ctrl"])
        ctrl[0] += 1
        assert WL.check(version, case, dict(result.arrays, ctrl=ctrl), result.outputs)
