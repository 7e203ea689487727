"""The seven SAM graphs (SAM's four hand-written ones and our three) on random integer tensors,
against scipy / numpy.

Every expected result is computed here with scipy or numpy from the same inputs, never by
samflow. Each case's id carries its size, density and seed, so a failure can be replayed. A
perturbed expectation must fail the same check, so the check is not vacuous.
"""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

from samflow.graph import load_graph, run_graph
from testbench.sparse.random_tensors import matrix as _matrix
from testbench.sparse.random_tensors import scalar as _scalar
from testbench.sparse.random_tensors import vector as _vector

REPO = Path(__file__).resolve().parents[2]
SAM_GRAPHS = REPO.parent / "shared" / "peer-suites" / "sam" / "graphs"
OUR_GRAPHS = REPO / "examples" / "sam"


# graph file -> (inputs from (rng, n, density), the expected outputs by scipy / numpy)
GRAPHS = {
    "mat_residual_HAND": (
        SAM_GRAPHS, lambda r, n, d: {"b": _vector(r, n, d), "C": _matrix(r, n, d), "d": _vector(r, n, d)},
        lambda t: {"x": t["b"] - t["C"] @ t["d"]}),
    "mat_mattransmul_HAND": (
        SAM_GRAPHS, lambda r, n, d: {"b": _scalar(r), "C": _matrix(r, n, d), "d": _vector(r, n, d),
                                     "e": _scalar(r), "f": _vector(r, n, d)},
        lambda t: {"x": t["b"] * (t["C"].T @ t["d"]) + t["e"] * t["f"]}),
    "vec_ds_compression_HAND": (
        SAM_GRAPHS, lambda r, n, d: {"b": _vector(r, n, d)}, lambda t: {"x": t["b"]}),
    "vec_sd_compression_HAND": (
        SAM_GRAPHS, lambda r, n, d: {"b": scipy.sparse.coo_array(_vector(r, n, d))},
        lambda t: {"x": t["b"].toarray()}),
    "spmv_csr": (
        OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d), "c": _vector(r, n, d)},
        lambda t: {"x": t["B"] @ t["c"]}),
    "spmm_gustavson": (
        OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d), "C": _matrix(r, n, d)},
        lambda t: {"X": t["B"] @ t["C"]}),
    "spmm_inner": (
        OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d), "C": _matrix(r, n, d)},
        lambda t: {"X": t["B"] @ t["C"]}),
    "mat_elemadd_csr": (
        OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d), "C": _matrix(r, n, d)},
        lambda t: {"X": t["B"] + t["C"]}),
}

SHAPES = [(8, 0.05), (8, 0.3), (12, 0.15), (16, 0.1), (24, 0.05), (24, 0.3)]
SEEDS = [1, 2, 3]
CASES = [pytest.param(name, n, density, seed, id=f"{name}-n{n}-d{density}-seed{seed}")
         for name in GRAPHS for n, density in SHAPES for seed in SEEDS]


def _dense(value):
    return value.toarray() if hasattr(value, "toarray") else np.asarray(value)


def assert_same(produced: dict, expected: dict, why: str):
    assert set(produced) == set(expected), why
    for name, value in expected.items():
        got, want = _dense(produced[name]), _dense(value)
        assert got.shape == want.shape, f"{why}: {name} has shape {got.shape}, scipy {want.shape}"
        assert np.array_equal(got, want), f"{why}: {name}\n  graph {got.tolist()}\n  scipy {want.tolist()}"


def _run(name, n, density, seed):
    folder, make, reference = GRAPHS[name]
    tensors = make(np.random.default_rng(seed), n, density)
    return run_graph(load_graph(folder / f"{name}.gv"), tensors), reference(tensors)


@pytest.mark.parametrize("name, n, density, seed", CASES)
def test_graph_matches_scipy(name, n, density, seed):
    result, expected = _run(name, n, density, seed)
    assert_same(result.outputs, expected, f"{name} n={n} density={density} seed={seed}")
    for edge, tokens in result.streams.items():
        assert tokens and tokens[-1] == "D" and tokens.count("D") == 1, \
            f"{name} seed={seed}: {edge.describe()} does not end with exactly one 'D': {tokens}"


@pytest.mark.parametrize("name", GRAPHS)
def test_graph_on_empty_tensors(name):
    """All inputs zero (scalars excepted): every fiber is empty, the output is zero."""
    result, expected = _run(name, 10, 0.0, 7)
    assert_same(result.outputs, expected, f"{name} on empty tensors")


@pytest.mark.parametrize("name", ["mat_residual_HAND", "mat_mattransmul_HAND"])
def test_an_empty_reduction_writes_one_zero_without_a_coordinate(name):
    """SAM's reduce turns the stream of an empty root fiber ([S1, D]) into one 0, so these graphs
    write a value and no coordinate; the decoder places nothing (and would refuse a nonzero)."""
    result, _expected = _run(name, 10, 0.0, 7)
    assert result.memory["x", 0] == {"seg": [0], "crd": []}
    assert result.memory["x", "vals"] == [0]


@pytest.mark.parametrize("name", GRAPHS)
def test_graph_on_full_tensors(name):
    result, expected = _run(name, 8, 1.0, 11)
    assert_same(result.outputs, expected, f"{name} on full tensors")


@pytest.mark.parametrize("name", GRAPHS)
def test_a_perturbed_expectation_fails(name):
    result, expected = _run(name, 12, 0.3, 5)
    output = next(iter(expected))
    wrong = _dense(expected[output]).copy()
    wrong.flat[len(wrong.flat) // 2] += 1
    with pytest.raises(AssertionError):
        assert_same(result.outputs, {output: wrong}, f"{name} perturbed")


def test_the_graphs_exercise_empty_fibers():
    """At density 0.05 the joins meet empty fibers (what the repeat of an empty fiber is for)."""
    result, expected = _run("spmm_gustavson", 24, 0.05, 2)
    stops = next(tokens for edge, tokens in result.streams.items() if edge.src == "6" and edge.kind == "crd")
    assert any(a.startswith("S") and b.startswith("S") for a, b in zip(stops, stops[1:], strict=False)
               if isinstance(a, str) and isinstance(b, str)), "no empty fiber in the k intersection"
    assert_same(result.outputs, expected, "spmm_gustavson with empty fibers")
