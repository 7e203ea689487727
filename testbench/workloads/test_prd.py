"""PageRank-delta in Q16.16, both versions, on small random graphs of both kinds on the golden
model: the ordered rounds bit-exact against the numpy integer model, both versions within their
stated bounds of the float references; the check catches a rank one unit off (ordered) or
one whole 1.0 above the fixed point (ripple), and a residual left at the threshold."""

import pytest

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.graphs import KINDS
from ripple_core.workloads.prd import ONE
from rivulet.sim.seeds import seeds_for

WL = workload("prd")


def _run(version, case):
    graph = compile_kernel(WL.kernel(version))
    result = run(graph, case["args"], {k: list(v) for k, v in case["mem"].items()}, depth=2)
    assert result.drained
    return result


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_prd_ranks_match_the_references(version, kind):
    for seed in seeds_for(f"wl-prd-{version}-{kind}", 2):
        print(f"seed {seed}")
        case = WL.case(version, WL.small, kind, seed)
        result = _run(version, case)
        assert WL.check(version, case, result.arrays, result.outputs) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_prd_check_catches_a_wrong_rank(version):
    case = WL.case(version, WL.small, "uniform", seeds_for("wl-prd-mutant", 1)[0])
    result = _run(version, case)
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
