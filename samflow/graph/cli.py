"""``python -m samflow.graph GRAPH.gv``: one SAM graph on random integer tensors, checked against scipy.

The graph's comment says which tensors it reads and their orders; each gets random values (every
mode ``--size`` long, ``--density`` of the entries nonzero, values -9..9 without 0, scalars 1..9),
the graph runs on the golden models, and its output is compared with what scipy computes for the
graphs whose expression is known here (SAM's four hand-written graphs and ours in examples/sam/,
by file name). One line reports the outcome and the tokens on every stream. Exit status: 0 when the
output matches (or the graph has no reference here, which the line says), 1 when it does not, 2
for a graph or an input that cannot run.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

from .dot import GraphError
from .model import load_graph
from .run import check_graph, run_graph

__all__ = ["main", "random_tensors", "REFERENCES", "MAX_ENTRIES"]

# The most entries a tensor may have: the inputs are drawn over every entry and the check compares
# dense arrays, so a matrix of --size N takes N^2 words (2^24 of them: 128 MiB of int64).
MAX_ENTRIES = 1 << 24

# What each known graph computes, in scipy / numpy, by the graph file's name.
REFERENCES = {
    "mat_residual_HAND": lambda t: {"x": t["b"] - t["C"] @ t["d"]},
    "mat_mattransmul_HAND": lambda t: {"x": t["b"] * (t["C"].T @ t["d"]) + t["e"] * t["f"]},
    "vec_ds_compression_HAND": lambda t: {"x": t["b"]},
    "vec_sd_compression_HAND": lambda t: {"x": t["b"]},
    "spmv_csr": lambda t: {"x": t["B"] @ t["c"]},
    "spmm_gustavson": lambda t: {"X": t["B"] @ t["C"]},
    "spmm_inner": lambda t: {"X": t["B"] @ t["C"]},
    "mat_elemadd_csr": lambda t: {"X": t["B"] + t["C"]},
    "mat_rowsum_csr": lambda t: {"x": np.asarray(t["B"].sum(axis=1)).ravel()},
    "mat_rowscale_csr": lambda t: {"X": t["B"].multiply(np.asarray(t["b"]).reshape(-1, 1)).tocsr()},
}


def random_tensors(graph, size: int, density: float, seed: int) -> dict:
    """Random integer inputs for ``graph``: numbers, numpy vectors and scipy CSR matrices."""
    import scipy.sparse

    rng = np.random.default_rng(seed)

    def values(size):
        return rng.choice(np.r_[-9:0, 1:10], size=size).astype(np.int64)

    tensors = {}
    for name, fmt in graph.formats.items():
        if name in graph.written:
            continue
        if fmt.order == 0:
            tensors[name] = int(rng.integers(1, 10))
        elif fmt.order == 1:
            tensors[name] = np.where(rng.random(size) < density, values(size), 0).astype(np.int64)
        elif fmt.order == 2:
            tensors[name] = scipy.sparse.random_array((size, size), density=density, rng=rng,
                                                      data_sampler=values).tocsr().astype(np.int64)
        else:
            raise GraphError(f"tensor {name} has order {fmt.order}; random inputs are made for "
                             "scalars, vectors and matrices only")
    return tensors


def _check_entries(graph, size: int):
    """Refuse a size whose largest tensor would not fit in memory, before drawing it."""
    order = max((fmt.order for fmt in graph.formats.values()), default=0)
    if size ** order > MAX_ENTRIES:
        largest = round(MAX_ENTRIES ** (1 / order))
        largest -= largest ** order > MAX_ENTRIES
        raise GraphError(f"--size {size}: the graph's order-{order} tensors would have {size ** order:,} "
                         f"entries, more than the {MAX_ENTRIES:,} drawn and compared densely here; use "
                         f"--size {largest} or less")


def _dense(value):
    return value.toarray() if hasattr(value, "toarray") else np.asarray(value)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m samflow.graph", description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a SAM graph (.gv)")
    parser.add_argument("--size", type=int, default=16, help="length of every mode (default 16)")
    parser.add_argument("--density", type=float, default=0.2, help="fraction of nonzeros (default 0.2)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the inputs (default 0)")
    args = parser.parse_args(argv)
    try:
        if args.size < 1 or not 0 <= args.density <= 1:
            raise GraphError(f"--size {args.size} --density {args.density}: the size must be at least 1 "
                             "and the density between 0 and 1")
        graph = load_graph(args.graph)
        _check_entries(graph, args.size)
        plan = check_graph(graph)
        tensors = random_tensors(graph, args.size, args.density, args.seed)
        result = run_graph(graph, tensors, plan)
    except GraphError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stem = Path(args.graph).stem
    counts = " ".join(f"{e.src}->{e.dst}:{e.kind}{'/' + e.port if e.port else ''}={len(tokens)}"
                      for e, tokens in result.streams.items())
    where = f"size {args.size}, density {args.density}, seed {args.seed}"
    if stem not in REFERENCES:
        print(f"{stem}: ran ({where}), no scipy reference for this graph; tokens per stream: {counts}")
        return 0
    expected = REFERENCES[stem](tensors)
    wrong = [name for name in expected
             if not np.array_equal(_dense(result.outputs[name]), _dense(expected[name]))]
    verdict = f"{', '.join(wrong)} differs from scipy" if wrong else f"{', '.join(expected)} matches scipy"
    print(f"{stem}: {verdict} ({where}); tokens per stream: {counts}")
    return 1 if wrong else 0
