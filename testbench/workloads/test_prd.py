"""PageRank-delta in Q16.16, both versions, on small random graphs of both kinds on the golden
model: the ordered rounds bit-exact against the numpy integer model, both versions within their
stated bounds of the float references; the check catches a rank one unit off (ordered) or
one whole 1.0 above the fixed point (ripple), and a residual left at the threshold.
The runs on random graphs are parametrised in test_graph_workloads.py; this file keeps the
workload's own checks of a wrong answer."""

import pytest

from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.prd import ONE
from rivulet.sim.seeds import seeds_for

from .harness import run_small_case

WL = workload("prd")


@pytest.mark.parametrize("version", VERSIONS)
def test_prd_check_catches_a_wrong_rank(version):
    case = WL.case(version, WL.small, "uniform", seeds_for("wl-prd-mutant", 1)[0])
    result = run_small_case(WL, version, case)
    rank = list(result.arrays["rank"])
    v = max(range(WL.small), key=rank.__getitem__)
    # ordered: any change breaks bit-exactness; ripple: a rank above the fixed point is impossible
    rank[v] += 1 if version == "ordered" else ONE
    problems = WL.check(version, case, dict(result.arrays, rank=rank), result.outputs)
    assert any(f"first vertex {v}" in p for p in problems)
    if version == "ripple":
        res = list(result.arrays["res"])
        res[0] = 256
        assert any("residuals" in p for p in WL.check(version, case, dict(result.arrays, res=res), {}))
