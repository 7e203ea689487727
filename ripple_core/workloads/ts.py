"""Topological sort (TS) of a random DAG (``random_graph(..., dag=True)``; duplicate edges kept).

Both versions get the CSR graph and each vertex's in-degree (an input array the host computes
from ``col``, as it computes ``row``; an edge repeated twice counts twice).

* ``ordered``: Kahn's algorithm. The sources go into a FIFO ``queue`` array; popping a vertex
  decrements its successors' in-degrees and appends those that reach zero. ``queue`` ends as
  the order.
* ``ripple``: a ``visit(v, p)`` task per vertex, ``p`` its place in ``order``. It writes
  ``order[p] = v`` and decrements each successor's in-degree under that successor's lock; the
  visit that takes a successor to zero takes the next place from the counter ``count[0]``
  (under the lock ``n``, no vertex's) and pushes the successor with it. So a vertex's place is
  taken after its predecessors' places, which the push carries as a data dependency. The body
  seeds the sources the same way. A successor that reaches zero is stored as -1, so no
  in-degree word of a non-source is ever 0: the body's unlocked reads of ``indeg`` see 0
  exactly at the sources, whatever the tasks have done meanwhile.

The check is by property, not against one order: ``order`` is a permutation of the vertices
and every edge (u, v) has u before v; networkx confirms the input is a DAG.
"""

from ripple_core.lang.api import Array, atomic, ind, kernel, push

from . import Workload
from .graphs import random_graph

__all__ = ["WORKLOAD", "ts_ordered", "ts_ripple"]


@kernel
def ts_ordered(row: Array, col: Array, indeg: Array, queue: Array, n: int):
    tail = 0
    for v in range(n):
        if indeg[v] == 0:
            queue[tail] = v
            tail += 1
    head = 0
    while head < tail:
        u = queue[head]
        head += 1
        for e in range(row[u], row[u + 1]):
            d = col[e]
            k = indeg[d] - 1
            indeg[d] = k
            if k == 0:
                queue[tail] = d
                tail += 1


@kernel
def ts_ripple(row: Array, col: Array, indeg: Array, order: Array, count: Array, n: int):
    @ind
    async def visit(v, p):
        order[p] = v
        for e in range(row[v], row[v + 1]):
            d = col[e]
            with atomic(d):
                k = indeg[d] - 1
                indeg[d] = -1 if k == 0 else k
            if k == 0:
                with atomic(n):
                    q = count[0]
                    count[0] = q + 1
                push(visit, d, q)
    for v in range(n):
        if indeg[v] == 0:
            with atomic(n):
                q = count[0]
                count[0] = q + 1
            push(visit, v, q)


def _graph(size, kind, seed):
    return random_graph(size, kind, seed, dag=True)


def case(version: str, size: int, kind: str, seed: int) -> dict:
    g = _graph(size, kind, seed)
    indeg = [0] * size
    for d in g.col:
        indeg[d] += 1
    mem = {"row": list(g.row), "col": list(g.col), "indeg": indeg}
    if version == "ordered":
        mem["queue"] = [0] * size
    else:
        mem["order"] = [0] * size
        mem["count"] = [0]
    return {"args": {"n": size}, "mem": mem}


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import networkx as nx

    n = case["args"]["n"]
    row, col = case["mem"]["row"], case["mem"]["col"]
    edges = [(u, col[e]) for u in range(n) for e in range(row[u], row[u + 1])]
    dag = nx.DiGraph()
    dag.add_nodes_from(range(n))
    dag.add_edges_from(edges)
    problems = []
    if not nx.is_directed_acyclic_graph(dag):
        problems.append("the input graph is not a DAG (networkx): no topological order exists")
    order = memory["queue" if version == "ordered" else "order"]
    if len(order) != n:
        return problems + [f"order has {len(order)} words, not {n}"]
    if version == "ripple" and memory["count"][0] != n:
        problems.append(f"count[0] = {memory['count'][0]}, not {n} (vertices placed)")
    place = {}
    for p, v in enumerate(order):
        if not 0 <= v < n:
            problems.append(f"order[{p}] = {v} is not a vertex")
        elif v in place:
            problems.append(f"vertex {v} appears twice in order (places {place[v]} and {p})")
        else:
            place[v] = p
    missing = [v for v in range(n) if v not in place]
    if missing:
        problems.append(f"{len(missing)} vertices missing from order, first {missing[0]}")
    for u, v in edges:
        if u in place and v in place and place[u] >= place[v]:
            problems.append(f"edge ({u}, {v}): {u} at place {place[u]} is not before {v} at {place[v]}")
            break
    return problems


WORKLOAD = Workload("ts", ts_ordered, ts_ripple, case, check, small=32, sizes=(256, 1024, 4096))
