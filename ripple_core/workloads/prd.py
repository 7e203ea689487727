"""PageRank-delta (PRD) in fixed point, on ``random_graph(...)`` as generated (self-loops and
repeated edges kept: an edge repeated twice carries two shares).

Formulation (unnormalised, ranks average about 1): ``r[v] = (1 - d) + d * sum(r[u] / out(u))``
over the edges u -> v, with d = 0.85. A vertex without out-edges passes nothing on (its share
leaks; no redistribution), so this is not ``networkx.pagerank``'s normalised formulation, and
the float references below are numpy computations of exactly this equation.

Format: Q16.16 in 32-bit words (1.0 is 65536). ``BASE`` = 1 - d = 9830 (0.15 is 9830.4; the
0.4 is lost). There is no divide, so the host gives ``w[u] = floor(d * 65536 / out(u))`` (d folded
in; 0 for a vertex without out-edges) and a share is ``fxmul(x, w[u])``, x * w / 65536 computed
without overflow in 32 bits: x = hi * 2**15 + lo with lo < 2**15, then
``(hi * w >> 1) + (lo * w >> 16)``. Each floor loses less than one unit, so ``fxmul`` is at most
2 units below the exact product, and w's floor costs less than x / 65536 units more. The products
fit while a rank stays below about 19000.0 (hi * w < 2**31; w < 55706): ranks here sum to at
most n <= 1024.

* ``ordered``: ``ROUNDS`` (16) Jacobi rounds over all vertices, from r = BASE everywhere: the
  next ranks start at BASE and every vertex u adds ``fxmul(r[u], w[u])`` to each out-neighbour.
  ``rank`` has 2n words, rounds alternating between the halves; ROUNDS is even, so the result is
  ``rank[0:n]``.
* ``ripple``: ``rank`` starts at 0 and the residual ``res`` at BASE everywhere; the body pushes
  every vertex. ``process(v)`` takes ``delta = res[v]`` and zeroes it, adds delta to ``rank[v]``
  (under v's lock) and adds ``fxmul(delta, w[v])`` to each out-neighbour's residual under that
  neighbour's lock, pushing the neighbour when its residual crosses ``TAU`` (256 units, 1/256)
  from below. A queued vertex's residual stays >= TAU until it runs, so it is never queued twice,
  every run moves at least TAU, and at the end every residual is below TAU. ``runs[v]`` counts
  v's runs (for the check's rounding bound). How much work that is depends on when a run takes
  its residual: a vertex that waits in the queue gathers more and runs fewer times. ``process``
  is ``@ind(inflight=INFLIGHT)``: at most 4 runs at once. Unbounded, the runs take their
  residuals as soon as they are pushed, and at 256 vertices (R-MAT) do 14,590 runs instead of
  1,626 (golden model, depth 2: 1,006,504 cycles against 142,986; 2 and 8 in flight are within 3%
  of 4, 16 is 17% slower).

Checks. Ordered: bit-exactly against a numpy int64 model of the same fixed-point rounds (wrapped
to 32 bits after every operation), and against float64 power iteration (ROUNDS rounds from 0.15)
within a per-vertex bound B propagated with it (in units): the error E = float - fixed starts at
0.4 and obeys E' = 0.4 + sum over edges (d/out(u) * E[u] + l), 0 <= l < 2 + r[u]/65536 (the
floors above), so 0 <= E <= B with B' = 0.4 + sum (d/out(u) * B[u] + 2 + r[u]/65536).
Ripple: against the float64 fixed point r* (numpy linear solve of the equation). Every run
keeps rank + res = BASE + (shares received), so (I - dM) rank = BASE - res - L with the rounding
loss L >= 0, and L[v] <= sum over edges u -> v (2 * runs[u] + rank[u]/65536) (each run of u
loses under 2 units per edge to the floors, and w's floor under delta/65536); each run moves at
least TAU, so 1 <= runs[u] <= rank[u]/TAU, which the check also verifies. Since (I - dM)^-1 is
non-negative, 0 <= r* - rank <= (I - dM)^-1 (0.4 + res + Lmax) per vertex, in units; the check
computes that bound from the final state. Both also allow 1e-6 of relative float error.
"""

from ripple_core.lang.api import Array, atomic, ind, inline, kernel, push

from . import Workload
from .graphs import random_graph

__all__ = ["WORKLOAD", "prd_ordered", "prd_ripple", "fixed_reference", "ONE", "BASE", "TAU", "ROUNDS"]

ONE = 65536
DAMPING = 0.85
BASE = 9830            # floor((1 - DAMPING) * ONE)
TAU = 256              # Ripple's re-push threshold: 1/256
INFLIGHT = 4           # Ripple's invocations of process at once (see the module docstring)
ROUNDS = 16            # the ordered version's rounds (even: the result ends in rank[0:n])


@inline
def fxmul(x: int, w: int):
    return ((x >> 15) * w >> 1) + ((x & 32767) * w >> 16)


@kernel
def prd_ordered(row: Array, col: Array, w: Array, rank: Array, n: int, rounds: int):
    for it in range(rounds):
        cur = (it & 1) * n
        nxt = n - cur
        for v in range(n):
            rank[nxt + v] = BASE
        for u in range(n):
            c = fxmul(rank[cur + u], w[u])
            for e in range(row[u], row[u + 1]):
                t = nxt + col[e]
                rank[t] = rank[t] + c


@kernel
def prd_ripple(row: Array, col: Array, w: Array, rank: Array, res: Array, runs: Array, n: int):
    @ind(inflight=INFLIGHT)
    async def process(v):
        with atomic(v):
            delta = res[v]
            res[v] = 0
            rank[v] = rank[v] + delta
            runs[v] = runs[v] + 1
        c = fxmul(delta, w[v])
        for e in range(row[v], row[v + 1]):
            t = col[e]
            with atomic(t):
                old = res[t]
                new = old + c
                res[t] = new
            if old < TAU and new >= TAU:
                push(process, t)
    for v in range(n):
        push(process, v)


def weights(row: list[int]) -> list[int]:
    """``w[u] = floor(DAMPING * ONE / out(u))``, 0 without out-edges (integer arithmetic)."""
    return [(85 * ONE) // (100 * (row[u + 1] - row[u])) if row[u + 1] > row[u] else 0
            for u in range(len(row) - 1)]


def case(version: str, size: int, kind: str, seed: int) -> dict:
    g = random_graph(size, kind, seed)
    mem = {"row": list(g.row), "col": list(g.col), "w": weights(g.row)}
    if version == "ordered":
        mem["rank"] = [BASE] * size + [0] * size
        return {"args": {"n": size, "rounds": ROUNDS}, "mem": mem}
    mem["rank"] = [0] * size
    mem["res"] = [BASE] * size
    mem["runs"] = [0] * size
    return {"args": {"n": size}, "mem": mem}


def _wrap(x):
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _fxmul(x, w):
    return _wrap((_wrap((x >> 15) * w) >> 1) + (_wrap((x & 32767) * w) >> 16))


def fixed_reference(row, col, w, rounds):
    """The ordered version's fixed-point rounds in numpy int64, wrapped to 32 bits after every
    operation; returns the ranks after each round (rounds + 1 arrays, the first all BASE)."""
    import numpy as np

    row, col, w = (np.asarray(a, dtype=np.int64) for a in (row, col, w))
    n = len(row) - 1
    src = np.repeat(np.arange(n), np.diff(row))
    ranks = [np.full(n, BASE, dtype=np.int64)]
    for _ in range(rounds):
        share = _fxmul(ranks[-1], w)
        nxt = np.full(n, BASE, dtype=np.int64)
        np.add.at(nxt, col, share[src])      # a sum of wrapped words, wrapped once: same mod 2**32
        ranks.append(_wrap(nxt))
    return ranks


def _matrix(row, col):
    import numpy as np

    n = len(row) - 1
    m = np.zeros((n, n))
    for u in range(n):
        for e in range(row[u], row[u + 1]):
            m[col[e], u] += DAMPING / (row[u + 1] - row[u])
    return m


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import numpy as np

    n = case["args"]["n"]
    row, col, w = case["mem"]["row"], case["mem"]["col"], case["mem"]["w"]
    dm = _matrix(row, col)
    indeg_edges = np.zeros((n, n))              # indeg_edges[v, u]: edges u -> v
    for u in range(n):
        for e in range(row[u], row[u + 1]):
            indeg_edges[col[e], u] += 1
    problems = []
    if version == "ordered":
        rank = np.asarray(memory["rank"][:n], dtype=np.int64)
        fixed = fixed_reference(row, col, w, case["args"]["rounds"])
        diff = np.flatnonzero(rank != fixed[-1])
        if diff.size:
            v = diff[0]
            problems.append(f"{diff.size} ranks differ from the fixed-point reference; first vertex {v}: "
                            f"{rank[v]}, expected {fixed[-1][v]}")
        real = np.full(n, 1 - DAMPING)
        bound = np.full(n, (1 - DAMPING) * ONE - BASE)
        for step in fixed[:-1]:
            real = (1 - DAMPING) + dm @ real
            bound = (1 - DAMPING) * ONE - BASE + dm @ bound + indeg_edges @ (2 + step / ONE)
        error = real * ONE - rank
    else:
        rank = np.asarray(memory["rank"], dtype=np.int64)
        res = np.asarray(memory["res"], dtype=np.int64)
        high = np.flatnonzero((res < 0) | (res >= TAU))
        if high.size:
            problems.append(f"{high.size} residuals outside [0, {TAU}); first vertex {high[0]}: "
                            f"{res[high[0]]}")
        runs = np.asarray(memory["runs"], dtype=np.int64)
        few = np.flatnonzero((runs < 1) | (runs > rank // TAU))
        if few.size:
            problems.append(f"{few.size} vertices ran a number of times outside [1, rank/TAU]; first vertex "
                            f"{few[0]}: {runs[few[0]]} runs, rank {rank[few[0]]}")
        loss = indeg_edges @ (2 * runs + rank / ONE)
        solve = np.linalg.inv(np.eye(n) - dm)
        real = solve @ np.full(n, 1 - DAMPING)
        bound = solve @ ((1 - DAMPING) * ONE - BASE + res + loss)
        error = real * ONE - rank
    slack = 1e-6 * np.maximum(1.0, np.abs(real * ONE))
    bad = np.flatnonzero((error < -slack) | (error > bound + slack))
    if bad.size:
        v = bad[0]
        problems.append(f"{bad.size} ranks outside the float reference's bound; first vertex {v}: "
                        f"{rank[v]} ({rank[v] / ONE:.6f}), float {real[v]:.6f}, allowed error "
                        f"[0, {bound[v]:.1f}] units, got {error[v]:.1f}")
    return problems


WORKLOAD = Workload("prd", prd_ordered, prd_ripple, case, check, small=32, sizes=(256, 1024, 4096))
