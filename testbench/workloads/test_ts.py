"""Topological sort, both versions, on small random DAGs of both kinds on the golden model:
each order checked by property (a permutation with every edge forward); the check catches a
swapped pair."""

import pytest

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.workloads import VERSIONS, workload
from ripple_core.workloads.graphs import KINDS
from rivulet.sim.seeds import seeds_for

WL = workload("ts")


def _run(version, case):
    graph = compile_kernel(WL.kernel(version))
    result = run(graph, case["args"], {k: list(v) for k, v in case["mem"].items()}, depth=2)
    assert result.drained
    return result


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_ts_orders_every_edge_forward(version, kind):
    for seed in seeds_for(f"wl-ts-{version}-{kind}"):
        print(f"seed {seed}")
        case = WL.case(version, WL.small, kind, seed)
        result = _run(version, case)
        assert WL.check(version, case, result.arrays, result.outputs) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_ts_check_catches_a_wrong_order(version):
    case = WL.case(version, WL.small, "uniform", seeds_for("wl-ts-mutant", 1)[0])
    result = _run(version, case)
    name = "queue" if version == "ordered" else "order"
    row, col = case["mem"]["row"], case["mem"]["col"]
    u = next(v for v in range(WL.small) if row[v + 1] > row[v])
    order = result.arrays[name]
    a, b = order.index(u), order.index(col[row[u]])
    swapped = dict(result.arrays, **{name: list(order)})
    swapped[name][a], swapped[name][b] = order[b], order[a]
    assert any("is not before" in p for p in WL.check(version, case, swapped, result.outputs))
    duplicated = dict(result.arrays, **{name: [order[0]] + order[1:-1] + [order[0]]})
    assert any("twice" in p for p in WL.check(version, case, duplicated, result.outputs))
