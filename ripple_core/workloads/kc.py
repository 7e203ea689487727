"""k-core decomposition (KC): the core number of every vertex of an undirected graph.

Input: ``random_graph(..., undirected=True)`` made simple (self-loops and duplicate edges
dropped, as networkx's ``core_number`` needs), in CSR with both directions of every edge. Both
versions get ``deg`` (each vertex's degree, ``row[v + 1] - row[v]``, computed by the host) and
``core`` all -1 (-1: not yet removed). They peel by levels k = 0, 1, 2, ...: at level k every
vertex whose remaining degree is at most k is removed with core number k, removing a vertex
decrements its live neighbours' degrees, and those that fall to k are removed at the same level.
A level ends when no such vertex remains; the next level starts only then.

* ``ordered``: per level, a scan of all vertices fills a FIFO ``queue`` with the live vertices
  of degree <= k; popping one decrements its live neighbours and appends those that fall to k.
* ``ripple``: ``scan(k)`` claims, under each vertex's lock, the live vertices of degree <= k
  and pushes ``peel(v, k)`` for each; ``peel`` decrements its live neighbours under their locks
  and pushes ``peel`` for those it takes to k. The end of a level is found without a barrier,
  by counting tokens in ``ctrl[0]`` (under the lock ``n``, no vertex's): a scan holds one token
  per vertex and a peel one per edge, plus one of its own; a claimed vertex's token passes to
  its peel, and each task returns its unused tokens and its own in one block at its end. A peel
  reserves its edge tokens in a block that also reads its CSR bounds, so its loop, and the
  peels it pushes, come after it. The task whose return brings ``ctrl[0]`` to 0 is the last of
  its level: if ``ctrl[1]`` (vertices removed) is below n it sets ``ctrl[0]`` to n + 1 (the next
  scan's tokens) and pushes ``scan(k + 1)``. The host starts with ``ctrl = [n + 1, 0]``.

The check compares ``core`` with ``networkx.core_number``.
"""

from ripple_core.lang.api import Array, atomic, ind, kernel, push

from . import Workload
from .graphs import Graph, random_graph

__all__ = ["WORKLOAD", "kc_ordered", "kc_ripple"]


@kernel
def kc_ordered(row: Array, col: Array, deg: Array, core: Array, queue: Array, n: int):
    removed = 0
    k = 0
    while removed < n:
        tail = 0
        for v in range(n):
            if core[v] < 0 and deg[v] <= k:
                core[v] = k
                queue[tail] = v
                tail += 1
        head = 0
        while head < tail:
            u = queue[head]
            head += 1
            for e in range(row[u], row[u + 1]):
                w = col[e]
                if core[w] < 0:
                    d = deg[w] - 1
                    deg[w] = d
                    if d <= k:
                        core[w] = k
                        queue[tail] = w
                        tail += 1
        removed += tail
        k += 1


@kernel
def kc_ripple(row: Array, col: Array, deg: Array, core: Array, ctrl: Array, n: int):
    @ind
    async def peel(v, k):
        with atomic(n):
            lo = row[v]
            hi = row[v + 1]
            ctrl[0] = ctrl[0] + hi - lo
        c = 0
        for e in range(lo, hi):
            w = col[e]
            with atomic(w):
                claim = 0
                if core[w] < 0:
                    d = deg[w] - 1
                    deg[w] = d
                    if d <= k:
                        core[w] = k
                        claim = 1
            if claim == 1:
                push(peel, w, k)
            c += claim
        with atomic(n):
            left = ctrl[0] - (hi - lo - c) - 1
            ctrl[0] = left
            done = ctrl[1] + c
            ctrl[1] = done
            if left == 0 and done < n:
                ctrl[0] = n + 1
        if left == 0 and done < n:
            push(scan, k + 1)

    @ind
    async def scan(k):
        c = 0
        for v in range(n):
            with atomic(v):
                claim = 0
                if core[v] < 0 and deg[v] <= k:
                    core[v] = k
                    claim = 1
            if claim == 1:
                push(peel, v, k)
            c += claim
        with atomic(n):
            left = ctrl[0] - (n - c) - 1
            ctrl[0] = left
            done = ctrl[1] + c
            ctrl[1] = done
            if left == 0 and done < n:
                ctrl[0] = n + 1
        if left == 0 and done < n:
            push(scan, k + 1)

    push(scan, 0)


def simple_undirected(size: int, kind: str, seed: int) -> Graph:
    """``random_graph(size, kind, seed, undirected=True)`` without self-loops or repeated edges."""
    g = random_graph(size, kind, seed, undirected=True)
    return Graph(size, sorted({(s, t) for s, t in g.edges if s != t}))


def case(version: str, size: int, kind: str, seed: int) -> dict:
    g = simple_undirected(size, kind, seed)
    mem = {"row": list(g.row), "col": list(g.col),
           "deg": [g.row[v + 1] - g.row[v] for v in range(size)], "core": [-1] * size}
    if version == "ordered":
        mem["queue"] = [0] * size
    else:
        mem["ctrl"] = [size + 1, 0]
    return {"args": {"n": size}, "mem": mem}


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import networkx as nx

    n = case["args"]["n"]
    row, col = case["mem"]["row"], case["mem"]["col"]
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((u, col[e]) for u in range(n) for e in range(row[u], row[u + 1]))
    expected = nx.core_number(graph)
    core = memory["core"]
    problems = []
    if len(core) != n:
        return [f"core has {len(core)} words, not {n}"]
    wrong = [v for v in range(n) if core[v] != expected[v]]
    if wrong:
        v = wrong[0]
        problems.append(f"{len(wrong)} core numbers differ from networkx; first vertex {v}: "
                        f"{core[v]}, expected {expected[v]}")
    if version == "ripple" and memory["ctrl"] != [0, n]:
        problems.append(f"ctrl = {memory['ctrl']}, expected [0, {n}] (no tokens left, all removed)")
    return problems


WORKLOAD = Workload("kc", kc_ordered, kc_ripple, case, check, small=32, sizes=(256, 1024, 4096))
