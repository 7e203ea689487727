"""Single-source shortest paths on a directed graph with integer edge weights in
[1, :data:`MAX_WEIGHT`]: ``dist`` starts at :data:`UNREACHED` (2^31 - 1) everywhere but the
source (vertex 0), which is 0, and ends as each vertex's distance (:data:`UNREACHED` if the
source cannot reach it).

* ``ordered``: Bellman-Ford with a FIFO worklist (the queue-based variant): a vertex whose
  distance fell is enqueued unless it is already waiting (``waiting`` flags), so the circular
  ``queue`` of one word per vertex never overflows; the case seeds it with the source.
* ``ripple``: ``relax(v, d)`` offers ``d + weight`` to each neighbour under an atomic on that
  neighbour, which stores it and pushes itself when it is lower (an atomic min). Stale offers,
  made before a vertex's distance fell again, only offer too much and change nothing.

The check compares ``dist`` with networkx's ``single_source_dijkstra_path_length`` on the same
edges (a multigraph: parallel edges keep their own weights).
"""

from ripple_core.lang.api import Array, atomic, ind, kernel, push

from . import Workload
from .graphs import random_graph

__all__ = ["WORKLOAD", "UNREACHED", "MAX_WEIGHT", "ordered", "ripple"]

UNREACHED = 0x7FFF_FFFF
MAX_WEIGHT = 16
SOURCE = 0
DEGREE = 4


@kernel
def ordered(row: Array, col: Array, weight: Array, dist: Array, queue: Array, waiting: Array, n: int):
    head = 0
    tail = 1
    count = 1
    while count > 0:
        v = queue[head]
        head = 0 if head + 1 == n else head + 1
        count -= 1
        waiting[v] = 0
        base = dist[v]
        for e in range(row[v], row[v + 1]):
            d = col[e]
            offer = base + weight[e]
            if offer < dist[d]:
                dist[d] = offer
                if waiting[d] == 0:
                    waiting[d] = 1
                    queue[tail] = d
                    tail = 0 if tail + 1 == n else tail + 1
                    count += 1


@kernel
def ripple(row: Array, col: Array, weight: Array, dist: Array, source: int):
    @ind
    async def relax(v, base):
        for e in range(row[v], row[v + 1]):
            d = col[e]
            offer = base + weight[e]
            with atomic(d):
                if offer < dist[d]:
                    dist[d] = offer
                    push(relax, d, offer)
    push(relax, source, 0)


def case(version: str, size: int, kind: str, seed: int) -> dict:
    graph = random_graph(size, kind, seed, degree=DEGREE, max_weight=MAX_WEIGHT)
    dist = [UNREACHED] * size
    dist[SOURCE] = 0
    mem = {"row": graph.row, "col": graph.col, "weight": graph.weight, "dist": dist}
    if version == "ordered":
        queue = [0] * size
        queue[0] = SOURCE
        waiting = [0] * size
        waiting[SOURCE] = 1
        return {"args": {"n": size}, "mem": {**mem, "queue": queue, "waiting": waiting}}
    return {"args": {"source": SOURCE}, "mem": mem}


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import networkx

    row, col, weight = case["mem"]["row"], case["mem"]["col"], case["mem"]["weight"]
    vertices = len(row) - 1
    graph = networkx.MultiDiGraph()
    graph.add_nodes_from(range(vertices))
    graph.add_weighted_edges_from((v, col[e], weight[e]) for v in range(vertices)
                                  for e in range(row[v], row[v + 1]))
    lengths = networkx.single_source_dijkstra_path_length(graph, SOURCE, weight="weight")
    expected = [lengths.get(v, UNREACHED) for v in range(vertices)]
    got = memory.get("dist")
    if got is None:
        return ["no array 'dist' in the final memory"]
    if len(got) != vertices:
        return [f"dist has {len(got)} words, expected {vertices}"]
    wrong = [v for v in range(vertices) if got[v] != expected[v]]
    if not wrong:
        return []
    first = wrong[0]
    return [f"dist[{first}] = {got[first]}, expected {expected[first]} "
            f"({len(wrong)} of {vertices} words differ; unreached = {UNREACHED})"]


WORKLOAD = Workload(name="sssp", ordered=ordered, ripple=ripple, case=case, check=check,
                    small=32, sizes=(256, 1024, 4096))
