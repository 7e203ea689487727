"""Breadth-first reachability in the Ripple language: one pipelined task per vertex.

    rivulet run examples/lang/bfs.py --sim both            # golden model and RTL, compared
    rivulet run examples/lang/bfs.py -D vertices=200       # a larger random graph

Each ``visit(v)`` walks v's edges; ``with atomic(d)`` makes the test-and-set of ``visited[d]``
one step, so exactly one visitor pushes each vertex; the start vertex comes marked. The
reference is CPython running this very function (``rivulet`` does it), and ``cases()`` also
checks it against a plain Python search.
"""

import random

from ripple_core.lang import Array, atomic, ind, kernel, push


@kernel
def bfs(row: Array, col: Array, visited: Array):
    @ind
    async def visit(v):
        for e in range(row[v], row[v + 1]):
            d = col[e]
            with atomic(d):
                if visited[d] == 0:
                    visited[d] = 1
                    push(visit, d)
    push(visit, 0)


def random_graph(rng, vertices: int, degree: int):
    """A CSR graph: row[v] .. row[v + 1] index v's targets in col."""
    row, col = [0], []
    for _ in range(vertices):
        col += [rng.randrange(vertices) for _ in range(rng.randrange(degree + 1))]
        row.append(len(col))
    return row, col


def reachable(row, col) -> list[int]:
    """The vertices reachable from vertex 0, found with an explicit stack: an independent check."""
    seen, stack = {0}, [0]
    while stack:
        v = stack.pop()
        for d in col[row[v]:row[v + 1]]:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return [1 if v in seen else 0 for v in range(len(row) - 1)]


def cases(vertices: int = 24, degree: int = 3, seed: int = 7, count: int = 2):
    rng, made = random.Random(seed), []
    for _ in range(count):
        row, col = random_graph(rng, vertices, degree)
        made.append({"args": {}, "mem": {"row": row, "col": col, "visited": [1] + [0] * (vertices - 1)},
                     "expect": {"visited": reachable(row, col)}})
    return made
