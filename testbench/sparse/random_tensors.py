"""Random integer tensors for the graph tests: nonzeros in -9..9 without 0, so a density is exact
in the values (a drawn 0 would vanish from a sparse format)."""

import numpy as np
import scipy.sparse

__all__ = ["values", "matrix", "vector", "scalar"]


def values(rng, size):
    return rng.choice(np.r_[-9:0, 1:10], size=size).astype(np.int64)


def matrix(rng, n, density):
    return scipy.sparse.random_array((n, n), density=density, rng=rng,
                                     data_sampler=lambda size: values(rng, size)).tocsr().astype(np.int64)


def vector(rng, n, density):
    return np.where(rng.random(n) < density, values(rng, n), 0).astype(np.int64)


def scalar(rng):
    return int(rng.integers(1, 10))
