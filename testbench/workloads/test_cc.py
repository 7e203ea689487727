"""Connected components, both versions, on small seeded undirected graphs of both kinds on the
golden model (depth 2): the labels partition the vertices as networkx's components do, and the
check catches a split component and two merged ones.
The runs on random graphs are parametrised in test_graph_workloads.py; this file keeps the
workload's own checks of a wrong answer."""

import pytest

from ripple_core.workloads import VERSIONS, workload
from rivulet.sim.seeds import seeds_for

from .harness import run_small_case

W = workload("cc")


@pytest.mark.parametrize("version", VERSIONS)
def test_cc_check_catches_one_wrong_label(version):
    (seed,) = seeds_for(f"wl-cc:mutant:{version}", count=1)
    print(f"seed {seed}")
    case = W.case(version, W.small, "rmat", seed)
    result = run_small_case(W, version, case)
    label = result.arrays["label"]
    # A vertex given a label no other vertex has: a split if its component has other vertices,
    # else (a lone vertex) nothing wrong, so take one that shares its label.
    shared = next(v for v in range(len(label)) if label.count(label[v]) > 1)
    split = list(label)
    split[shared] = max(label) + 1
    assert any("labels" in p for p in W.check(version, case, {**result.arrays, "label": split}, {}))
    # A vertex given another component's label: that label now spans two components.
    other = next((v for v in range(len(label)) if label[v] != label[shared]), None)
    if other is not None:               # R-MAT graphs this small have lone vertices, nearly always
        merged = list(label)
        merged[other] = label[shared]
        assert W.check(version, case, {**result.arrays, "label": merged}, {}) != []
