"""Tensors into SAM's per-level arrays, checked against scipy's own CSR / CSC arrays, and back.

The expected arrays come from scipy (``indptr``, ``indices``, ``data``) or numpy, never from
samflow.graph.
"""

import numpy as np
import pytest
import scipy.sparse

from samflow.graph import GraphError
from samflow.graph.tensors import decode_tensor, encode_tensor, parse_formats

SEEDS = [1, 2, 3, 4]


def _matrix(seed, shape=(9, 7), density=0.25):
    rng = np.random.default_rng(seed)
    return scipy.sparse.random_array(shape, density=density, rng=rng,
                                     data_sampler=lambda size: rng.integers(1, 50, size)).astype(np.int64)


def _format(text):
    return parse_formats(f"T={text}", "test")["T"]


@pytest.mark.parametrize("seed", SEEDS)
def test_ds01_is_csr(seed):
    csr = _matrix(seed).tocsr()
    csr.sort_indices()
    encoded = encode_tensor(_format("ds01"), csr.tocoo())       # any scipy format goes in
    assert encoded.levels == [{"dim": 9}, {"seg": csr.indptr.tolist(), "crd": csr.indices.tolist()}]
    assert encoded.vals == csr.data.tolist()


@pytest.mark.parametrize("seed", SEEDS)
def test_ss10_is_csc_without_its_empty_columns(seed):
    csc = _matrix(seed).tocsc()
    csc.sort_indices()
    counts = np.diff(csc.indptr)
    kept = np.flatnonzero(counts)
    encoded = encode_tensor(_format("ss10"), csc)
    assert encoded.levels[0] == {"seg": [0, len(kept)], "crd": kept.tolist()}
    assert encoded.levels[1] == {"seg": [0, *np.cumsum(counts[kept]).tolist()], "crd": csc.indices.tolist()}
    assert encoded.vals == csc.data.tolist()


@pytest.mark.parametrize("seed", SEEDS)
def test_dense_levels_hold_every_position(seed):
    dense = _matrix(seed).toarray()
    assert encode_tensor(_format("dd01"), dense).vals == dense.ravel().tolist()
    assert encode_tensor(_format("dd10"), dense).vals == dense.T.ravel().tolist()
    # Compressed rows over a dense column level: every column of each nonempty row.
    rows = np.flatnonzero(dense.any(axis=1))
    encoded = encode_tensor(_format("sd01"), dense)
    assert encoded.levels == [{"seg": [0, len(rows)], "crd": rows.tolist()}, {"dim": 7}]
    assert encoded.vals == dense[rows].ravel().tolist()


def test_vectors_and_scalars():
    vector = np.array([0, 3, 0, 0, -2, 5, 0], dtype=np.int64)
    assert encode_tensor(_format("s0"), vector).levels == [{"seg": [0, 3], "crd": [1, 4, 5]}]
    assert encode_tensor(_format("s0"), vector).vals == [3, -2, 5]
    assert encode_tensor(_format("d0"), vector).vals == vector.tolist()
    assert encode_tensor(_format("none"), 7).vals == [7]


def test_stored_zeros_are_not_coordinates():
    csr = scipy.sparse.csr_array((np.array([0, 4]), np.array([1, 2]), np.array([0, 2, 2])), shape=(2, 3))
    encoded = encode_tensor(_format("ss01"), csr)
    assert encoded.levels == [{"seg": [0, 1], "crd": [0]}, {"seg": [0, 1], "crd": [2]}]
    assert encoded.vals == [4]


@pytest.mark.parametrize("text", ["ss01", "ss10", "ds01", "sd10", "dd01"])
@pytest.mark.parametrize("seed", SEEDS)
def test_decode_inverts_encode(text, seed):
    matrix = _matrix(seed)
    fmt = _format(text)
    encoded = encode_tensor(fmt, matrix)
    written = [level if "seg" in level else _dense_as_written(level, encoded, depth)
               for depth, level in enumerate(encoded.levels)]
    decoded = decode_tensor(fmt, matrix.shape, written, encoded.vals, ["l0", "l1", "vals"])
    assert np.array_equal(decoded.toarray(), matrix.toarray())


def _dense_as_written(level, encoded, depth):
    """What a writer keeps for a dense level: every coordinate 0..dim-1 under each position above."""
    above = 1
    for upper in encoded.levels[:depth]:
        above = above * upper["dim"] if "dim" in upper else len(upper["crd"])
    return {"seg": [k * level["dim"] for k in range(above + 1)], "crd": list(range(level["dim"])) * above}


def test_decode_places_values_by_their_coordinates_in_a_dense_level():
    # A sparse vector written into a dense one (SAM's vec_sd_compression): coordinates 1 and 4 only.
    decoded = decode_tensor(_format("d0"), (6,), [{"seg": [0, 2], "crd": [1, 4]}], [8, 9], ["x0", "vals"])
    assert decoded.tolist() == [0, 8, 0, 0, 9, 0]


def test_decode_refuses_values_that_do_not_match_the_coordinates():
    with pytest.raises(GraphError, match="vals: wrote 3 values for the 2 coordinates"):
        decode_tensor(_format("s0"), (6,), [{"seg": [0, 2], "crd": [1, 4]}], [8, 9, 1], ["x0", "vals"])
    with pytest.raises(GraphError, match="x0: coordinates \\[4, 1\\] under \\(\\) do not rise"):
        decode_tensor(_format("s0"), (6,), [{"seg": [0, 2], "crd": [4, 1]}], [8, 9], ["x0", "vals"])
    with pytest.raises(GraphError, match="x0: coordinates \\[1, 6\\] under \\(\\) leave 0..5"):
        decode_tensor(_format("s0"), (6,), [{"seg": [0, 2], "crd": [1, 6]}], [8, 9], ["x0", "vals"])
