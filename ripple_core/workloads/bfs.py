"""Breadth-first search: every vertex's level (hops from the source), on a directed graph.

``level`` starts at :data:`UNREACHED` (2^31 - 1) everywhere but the source, which is 0; a
vertex the source cannot reach keeps :data:`UNREACHED`. The source is vertex 0 (on R-MAT graphs
the densest one).

* ``ordered``: a FIFO queue BFS. The case seeds ``queue[0]`` with the source; a vertex is
  enqueued the first time it is seen, at its parent's level + 1, which FIFO order makes minimal.
* ``ripple``: ``visit(v, d)`` offers level ``d + 1`` to each neighbour under an atomic on that
  neighbour, and stores and re-pushes it when it is lower than the neighbour's level. Pipelined
  invocations run out of BFS order, so a vertex may first be reached at a level that is too high;
  a later, lower offer then lowers it and pushes again, and the fixed point is the minimal level.

The check compares ``level`` with networkx's ``single_source_shortest_path_length``.
"""

from ripple_core.lang.api import Array, atomic, ind, kernel, push

from . import Workload
from .graphs import random_graph

__all__ = ["WORKLOAD", "UNREACHED", "ordered", "ripple"]

UNREACHED = 0x7FFF_FFFF
SOURCE = 0
DEGREE = 4


@kernel
def ordered(row: Array, col: Array, level: Array, queue: Array):
    head = 0
    tail = 1
    while head < tail:
        v = queue[head]
        head += 1
        next_level = level[v] + 1
        for e in range(row[v], row[v + 1]):
            d = col[e]
            if level[d] == UNREACHED:
                level[d] = next_level
                queue[tail] = d
                tail += 1


@kernel
def ripple(row: Array, col: Array, level: Array, source: int):
    @ind
    async def visit(v, depth):
        offer = depth + 1
        for e in range(row[v], row[v + 1]):
            d = col[e]
            with atomic(d):
                if offer < level[d]:
                    level[d] = offer
                    push(visit, d, offer)
    push(visit, source, 0)


def case(version: str, size: int, kind: str, seed: int) -> dict:
    graph = random_graph(size, kind, seed, degree=DEGREE)
    level = [UNREACHED] * size
    level[SOURCE] = 0
    mem = {"row": graph.row, "col": graph.col, "level": level}
    if version == "ordered":
        queue = [0] * (size + 1)
        queue[0] = SOURCE
        return {"args": {}, "mem": {**mem, "queue": queue}}
    return {"args": {"source": SOURCE}, "mem": mem}


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import networkx

    row, col = case["mem"]["row"], case["mem"]["col"]
    vertices = len(row) - 1
    graph = networkx.DiGraph()
    graph.add_nodes_from(range(vertices))
    graph.add_edges_from((v, col[e]) for v in range(vertices) for e in range(row[v], row[v + 1]))
    hops = networkx.single_source_shortest_path_length(graph, SOURCE)
    expected = [hops.get(v, UNREACHED) for v in range(vertices)]
    return _compare("level", expected, memory.get("level"))


def _compare(name: str, expected: list[int], got) -> list[str]:
    if got is None:
        return [f"no array {name!r} in the final memory"]
    got = list(got)
    if len(got) != len(expected):
        return [f"{name} has {len(got)} words, expected {len(expected)}"]
    wrong = [v for v in range(len(expected)) if got[v] != expected[v]]
    if not wrong:
        return []
    first = wrong[0]
    return [f"{name}[{first}] = {got[first]}, expected {expected[first]} "
            f"({len(wrong)} of {len(expected)} words differ; unreached = {UNREACHED})"]


WORKLOAD = Workload(name="bfs", ordered=ordered, ripple=ripple, case=case, check=check,
                    small=32, sizes=(256, 1024, 4096))
