"""k-core decomposition, both versions, on small simple undirected random graphs of both kinds
on the golden model, checked against networkx.core_number; the check catches one wrong core
number and (Ripple) a leftover level token."""

import pytest

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.graphs import KINDS
from rivulet.sim.seeds import seeds_for

WL = workload("kc")


def _run(version, case):
    graph = compile_kernel(WL.kernel(version))
    result = run(graph, case["args"], {k: list(v) for k, v in case["mem"].items()}, depth=2)
    assert result.drained
    return result


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_kc_core_numbers_match_networkx(version, kind):
    for seed in seeds_for(f"wl-kc-{version}-{kind}"):
        print(f"seed {seed}")
        case = WL.case(version, WL.small, kind, seed)
        result = _run(version, case)
        assert WL.check(version, case, result.arrays, result.outputs) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_kc_check_catches_a_wrong_core_number(version):
    case = WL.case(version, WL.small, "rmat", seeds_for("wl-kc-mutant", 1)[0])
    result = _run(version, case)
    core = list(result.arrays["core"])
    core[5] += 1
    problems = WL.check(version, case, dict(result.arrays, core=core), result.outputs)
    assert any("first vertex 5" in p for p in problems)
    if version == "ripple":
        ctrl = list(result.arrays["ctrl"])
        ctrl[0] += 1
        assert WL.check(version, case, dict(result.arrays, ctrl=ctrl), result.outputs)
