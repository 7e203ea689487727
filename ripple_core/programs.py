"""Dataflow programs written with the builder: BFS both ways, and small programs that exercise
Ripple's tasks, queues and atomics. Each has the shape the fabric's PEs can run (docs/ripple.md,
"Ripple's operators in hardware"): a LOAD and a STORE of one array share a PE and have no sync
slot, so memory order goes through ORDER nodes, and a loaded word stands in for a LOAD's done
token. The same graphs run on the golden model and on the RTL fabric.

* :func:`ordered_bfs`: the C loop ``while head < tail: v = queue[head++]; for e in edges(v):
  d = col[e]; if !visited[d]: visited[d] = 1; queue[tail++] = d``, with CARRYs for head, tail
  and a memory token that orders every visited/queue access after the previous one (what an
  ordered-dataflow compiler must insert, as it has no alias information between iterations).
* :func:`ripple_bfs`: ``ind async visit(v)`` that, for each neighbour d, acquires d, tests and
  sets visited[d] and pushes ``visit(d)`` when it was new; the self-push goes to a spill queue.
* :func:`dmv`: ``y[i] = sum_j A[i*n + j] * x[j]`` for i < m, ordered (an outer STREAM over the
  rows) or with Ripple (the outer STREAM pushes ``ind async row(i)``). Regular code: Ripple's
  tasks add a queue and a dispatch and take nothing away, so the two should run alike.
* :func:`tree_walk`: a task that pushes itself twice per invocation (a binary tree of ``n``
  nodes), so its queue must spill; each invocation marks its node in ``seen``.
* :func:`serial_walk`: an ``async`` task (one invocation at a time) that marks ``seen[n]`` and
  pushes ``walk(n + step)`` while below ``nodes``; an invocation ends with its mark's done token.
* :func:`histogram`: ``count[keys[i]] += 1`` pipelined over i; with ``atomic`` each increment is
  an acquire / load / add / store / release of its key, without it increments to one key race.
"""

import random

from .builder import Builder
from .graph import Graph

__all__ = ["ordered_bfs", "ripple_bfs", "tree_walk", "histogram", "random_csr", "reachable", "bfs_queue",
           "bfs_case", "histogram_case", "tree_case", "bfs_memory", "dmv", "dmv_case", "serial_walk",
           "serial_case"]


def random_csr(vertices: int, degree: int, seed: int) -> tuple[list[int], list[int]]:
    """CSR (row offsets, column indices) with out-degree uniform in [degree/2, 3*degree/2]."""
    rng = random.Random(seed)
    row, col = [0], []
    for _ in range(vertices):
        col += [rng.randrange(vertices) for _ in range(rng.randint(degree // 2, degree * 3 // 2))]
        row.append(len(col))
    return row, col


def reachable(row, col, source=0) -> list[int]:
    """The reference: 1 for every vertex reachable from ``source``."""
    seen, stack = {source}, [source]
    while stack:
        v = stack.pop()
        for d in col[row[v]:row[v + 1]]:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return [int(v in seen) for v in range(len(row) - 1)]


def bfs_queue(row, col, source=0) -> list[int]:
    """The reference for ordered BFS's queue array: the source, then each vertex in the order a
    FIFO breadth-first search discovers it (edges in column order), then zeros."""
    vertices = len(row) - 1
    order, seen, head = [source], {source}, 0
    while head < len(order):
        v = order[head]
        head += 1
        for d in col[row[v]:row[v + 1]]:
            if d not in seen:
                seen.add(d)
                order.append(d)
    return order + [0] * (vertices + 1 - len(order))


def bfs_memory(row, col, ordered: bool) -> dict:
    """Initial arrays for a BFS from vertex 0 (visited[0] set; the ordered queue holds 0)."""
    vertices = len(row) - 1
    memory = {"row": row, "col": col, "visited": [1] + [0] * (vertices - 1)}
    if ordered:
        memory["queue"] = [0] * (vertices + 1)
    return memory


def bfs_case(row, col, ordered: bool) -> dict:
    """A case for either BFS program: its arrays and, as the reference, the reachable set (and
    for ordered BFS its queue's contents), computed here in Python."""
    expect = {"visited": reachable(row, col)}
    if ordered:
        expect["queue"] = bfs_queue(row, col)
    return {"mem": bfs_memory(row, col, ordered), "expect": expect}


def ordered_bfs() -> Graph:
    """RipTide-style BFS with an array queue (see the module docstring)."""
    b = Builder("bfs-ordered")
    row, col, visited, queue = (b.array(name) for name in ("row", "col", "visited", "queue"))
    go, h_next, t_next, m_next = (b.wire(label) for label in ("go", "head", "tail", "mem"))
    head = b.carry(go, b.const(0), h_next)
    tail = b.carry(go, b.const(1), t_next)
    mem = b.carry(go, b.const(0), m_next)
    go.bind(b.slt(head, tail))
    h = b.steer(go, head)
    h_next.bind(b.add(h, b.hold(1)))
    vertex = b.load(queue, b.order(h, b.steer(go, mem)))
    start = b.load(row, vertex)
    end = b.load(row, b.add(vertex, b.hold(1)))
    edge, flag = b.stream(start, end, b.hold(1), cmp="SLT", pred=False)
    ti_next, mi_next = b.wire("inner tail"), b.wire("inner mem")
    ti = b.carry(flag, b.steer(go, tail), ti_next, pred=False)
    mi = b.carry(flag, vertex, mi_next, pred=False)
    t_cur, m_cur = b.steer(flag, ti, pred=False), b.steer(flag, mi, pred=False)
    t_next.bind(b.steer(flag, ti, pred=True))
    m_next.bind(b.steer(flag, mi, pred=True))
    d = b.load(col, edge)
    seen = b.load(visited, b.order(d, m_cur))
    new = b.eq(seen, b.hold(0))
    d_new = b.steer(new, d)
    marked = b.store(visited, d_new, b.hold(1))
    queued = b.store(queue, b.order(b.steer(new, t_cur), marked), d_new)
    ti_next.bind(b.add(t_cur, new))
    mi_next.bind(b.merge(new, queued, b.steer(new, seen, pred=False)))
    return b.build()


def ripple_bfs(spill: bool = True, depth: int = 8) -> Graph:
    """``ind async visit(v)`` with an atomic test-and-set of visited and a self-push."""
    b = Builder("bfs-ripple")
    row, col, visited = (b.array(name) for name in ("row", "col", "visited"))
    visit = b.task("visit", 1, ind=True, depth=depth, spill=spill)
    (vertex,) = visit.args
    start = b.load(row, vertex)
    end = b.load(row, b.add(vertex, b.hold(1)))
    edge, _ = b.stream(start, end, b.hold(1), cmp="SLT")
    d = b.acquire(b.load(col, edge))
    seen = b.load(visited, d)
    new = b.eq(seen, b.hold(0))
    d_new = b.steer(new, d)
    marked = b.store(visited, d_new, b.hold(1))
    b.release(d, sync=b.merge(new, marked, b.steer(new, seen, pred=False)))
    b.push(visit, d_new)
    b.push(visit, b.const(0))
    return b.build()


def tree_walk(nodes: int, *, spill: bool = True, depth: int = 2) -> Graph:
    """``ind async walk(n)``: mark seen[n], push walk(2n + 1) and walk(2n + 2) below ``nodes``.
    Every mark's done token goes to the host output ``done``."""
    b = Builder("tree-walk")
    seen = b.array("seen")
    walk = b.task("walk", 1, ind=True, depth=depth, spill=spill)
    (n,) = walk.args
    b.sink("done", b.store(seen, n, b.hold(1)))
    left = b.add(b.add(n, n), b.hold(1))
    right = b.add(left, b.hold(1))
    b.push(walk, b.const(0))
    b.push(walk, b.steer(b.slt(left, b.hold(nodes)), left))
    b.push(walk, b.steer(b.slt(right, b.hold(nodes)), right))
    return b.build()


def tree_case(nodes: int) -> dict:
    return {"mem": {"seen": [0] * nodes}, "expect": {"seen": [1] * nodes, "done": [1] * nodes}}


def serial_walk(nodes: int, step: int = 3) -> Graph:
    """``async walk(n)``: mark seen[n], push walk(n + step) while it is below ``nodes``. Without
    ``ind`` each invocation waits for the previous one's mark (its finish token). The host output
    ``order`` gets every n, in invocation order."""
    b = Builder("serial-walk")
    seen = b.array("seen")
    walk = b.task("walk", 1, ind=False, depth=2, spill=True)
    (n,) = walk.args
    b.sink("order", n)
    walk.finish(b.store(seen, n, b.hold(1)))
    following = b.add(n, b.hold(step))
    b.push(walk, b.const(0))
    b.push(walk, b.steer(b.slt(following, b.hold(nodes)), following))
    return b.build()


def serial_case(nodes: int, step: int = 3) -> dict:
    visits = list(range(0, nodes, step))
    return {"mem": {"seen": [0] * nodes},
            "expect": {"seen": [int(k in visits) for k in range(nodes)], "order": visits}}


def histogram(*, atomic: bool = True) -> Graph:
    """``count[keys[i]] += 1`` for i < n; the host output ``done`` gets one 1 per increment."""
    b = Builder("histogram" if atomic else "histogram-racy")
    keys, count = b.array("keys"), b.array("count")
    i, _ = b.stream(b.const(0), b.scalar("n"), b.hold(1), cmp="SLT")
    key = b.load(keys, i)
    k = b.acquire(key) if atomic else key
    done = b.store(count, k, b.add(b.load(count, k), b.hold(1)))
    b.sink("done", b.release(k, sync=done) if atomic else done)
    return b.build()


def histogram_case(keys: list[int], bins: int) -> dict:
    counts = [0] * bins
    for key in keys:
        counts[key] += 1
    return {"args": {"n": len(keys)}, "mem": {"keys": keys, "count": [0] * bins},
            "expect": {"count": counts, "done": [1] * len(keys)}}


def dmv(*, ripple: bool) -> Graph:
    """Dense matrix-vector product (see the module docstring)."""
    b = Builder("dmv-ripple" if ripple else "dmv-ordered")
    matrix, vector, result = b.array("A"), b.array("x"), b.array("y")
    n = b.scalar("n")
    i, _ = b.stream(b.const(0), b.scalar("m"), b.hold(1), cmp="SLT")
    if ripple:
        row = b.task("row", 1, ind=True, depth=2)
        b.push(row, i)
        (i,) = row.args
    base = b.mul(i, n)
    zero = b.op("AND", i, b.hold(0))
    ja, flag = b.stream(base, b.add(base, n), b.hold(1), cmp="SLT")
    jx, _ = b.stream(zero, n, b.hold(1), cmp="SLT")
    product = b.mul(b.load(matrix, ja), b.load(vector, jx))
    s_next = b.wire("sum")
    s = b.carry(flag, zero, s_next, pred=False)
    s_next.bind(b.add(b.steer(flag, s, pred=False), product))
    b.store(result, i, b.steer(flag, s, pred=True))
    return b.build()


def dmv_case(matrix: list[list[int]], vector: list[int]) -> dict:
    m, n = len(matrix), len(vector)
    y = [sum(a * v for a, v in zip(row, vector, strict=True)) for row in matrix]
    return {"args": {"m": m, "n": n},
            "mem": {"A": [a for row in matrix for a in row], "x": vector, "y": [0] * m},
            "expect": {"y": y}}
