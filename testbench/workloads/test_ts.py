"""Topological sort, both versions, on small random DAGs of both kinds on the golden model:
each order checked by property (a permutation with every edge forward); the check catches a
swapped pair.
The runs on random graphs are parametrised in test_graph_workloads.py; this file keeps the
workload's own checks of a wrong answer."""

import pytest

from ripple_core.workloads import VERSIONS, workload
from rivulet.sim.seeds import seeds_for

from .harness import run_small_case

WL = workload("ts")


@pytest.mark.parametrize("version", VERSIONS)
def test_ts_check_catches_a_wrong_order(version):
    case = WL.case(version, WL.small, "uniform", seeds_for("wl-ts-mutant", 1)[0])
    result = run_small_case(WL, version, case)
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
