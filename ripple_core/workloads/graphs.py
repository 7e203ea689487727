"""Seeded random graphs in CSR form for the graph workloads: ``row`` (vertices + 1 offsets) and
``col`` (edge targets), optionally ``weight`` per edge.

Two kinds, so that a result does not hang on one degree distribution:

* ``uniform``: every vertex's out-degree uniform in [degree/2, 3*degree/2], targets uniform;
* ``rmat``: R-MAT edges (Chakrabarti et al.: quadrant probabilities a=0.57, b=0.19, c=0.19,
  d=0.05, on the next power of two, out-of-range endpoints redrawn), giving a skewed, power-law-like
  degree distribution with the same mean degree.

Self-loops and duplicate edges are kept (they are legal inputs for every workload); ``dag=True``
keeps only edges from a lower to a higher vertex of a random permutation's order, so the graph
is acyclic; ``undirected=True`` adds every edge's reverse.
"""

import random

__all__ = ["KINDS", "random_graph", "Graph"]

KINDS = ("uniform", "rmat")
_RMAT = (0.57, 0.19, 0.19, 0.05)


class Graph:
    """A CSR graph: ``row``, ``col`` and, if weighted, ``weight`` (lists of ints)."""

    def __init__(self, vertices: int, edges: list[tuple[int, int]], weights: list[int] | None = None):
        order = sorted(range(len(edges)), key=lambda k: edges[k][0])     # stable: keeps edge order
        self.vertices = vertices
        self.edges = [edges[k] for k in order]
        self.row = [0] * (vertices + 1)
        for source, _ in self.edges:
            self.row[source + 1] += 1
        for v in range(vertices):
            self.row[v + 1] += self.row[v]
        self.col = [target for _, target in self.edges]
        self.weight = [weights[k] for k in order] if weights is not None else None


def _uniform_edges(rng, vertices, degree):
    return [(v, rng.randrange(vertices)) for v in range(vertices)
            for _ in range(rng.randint(degree // 2, degree * 3 // 2))]


def _rmat_edges(rng, vertices, degree):
    scale = max(1, (vertices - 1).bit_length())
    edges = []
    while len(edges) < vertices * degree:
        source = target = 0
        for _ in range(scale):
            pick, quadrant = rng.random(), 0
            while quadrant < 3 and pick >= _RMAT[quadrant]:
                pick -= _RMAT[quadrant]
                quadrant += 1
            source, target = 2 * source + (quadrant >> 1), 2 * target + (quadrant & 1)
        if source < vertices and target < vertices:
            edges.append((source, target))
    return edges


def random_graph(vertices: int, kind: str, seed: int, *, degree: int = 4, dag: bool = False,
                 undirected: bool = False, max_weight: int | None = None) -> Graph:
    """A graph of ``vertices`` vertices and mean out-degree about ``degree``, of ``kind``."""
    if kind not in KINDS:
        raise ValueError(f"graph kind {kind!r}: use one of {', '.join(KINDS)}")
    if vertices < 1:
        raise ValueError(f"a graph needs at least one vertex, not {vertices}")
    rng = random.Random(seed)
    edges = (_uniform_edges if kind == "uniform" else _rmat_edges)(rng, vertices, degree)
    if dag:
        rank = list(range(vertices))
        rng.shuffle(rank)
        edges = [(s, t) if rank[s] < rank[t] else (t, s) for s, t in edges if s != t]
    if undirected:
        edges = edges + [(t, s) for s, t in edges]
    weights = [rng.randint(1, max_weight) for _ in edges] if max_weight is not None else None
    return Graph(vertices, edges, weights)
