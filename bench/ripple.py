"""BFS on the Ripple golden model: ordered dataflow with a software queue vs Ripple's async BFS.

``python -m bench.ripple`` builds both programs with :mod:`ripple_core.builder`, runs them on
random graphs (CSR, uniform random out-degree, 256..1024 vertices) and compares cycles,
firings, IPC and static size. Both must mark exactly the vertices reachable from vertex 0.

* ordered: the C loop ``while head < tail: v = queue[head++]; for e in edges(v): d = col[e];
  if !visited[d]: visited[d] = 1; queue[tail++] = d``, with CARRYs for head, tail and a memory
  token that orders every visited/queue access after the previous one (what an ordered-dataflow
  compiler must insert, as there is no alias information between iterations);
* ripple: ``ind async visit(v)`` that, for each neighbour d, acquires d, tests and sets
  visited[d] and pushes ``visit(d)`` when it was new; the self-push goes to a spill queue.

Model settings: slot depth 2, memory latency 1, unbounded memory ports (see docs/ripple.md).
Writes bench/results/ripple.json and ripple.md.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from ripple_core.builder import Builder
from ripple_core.interp import run

__all__ = ["ordered_bfs", "ripple_bfs", "random_csr", "reachable", "measure", "main"]

RESULTS = Path(__file__).resolve().parent / "results"
CASES = ((256, 4), (256, 8), (512, 6), (1024, 4), (1024, 8))
DEPTH, MEM_LATENCY, SPILL_DEPTH, SEED = 2, 1, 8, 2025


def random_csr(vertices: int, degree: int, seed: int) -> tuple[list[int], list[int]]:
    """CSR (row offsets, column indices) with out-degree uniform in [degree/2, 3*degree/2]."""
    rng = random.Random(seed)
    row, col = [0], []
    for _ in range(vertices):
        col += [rng.randrange(vertices) for _ in range(rng.randint(degree // 2, degree * 3 // 2))]
        row.append(len(col))
    return row, col


def reachable(row, col, source=0) -> list[int]:
    seen, stack = {source}, [source]
    while stack:
        v = stack.pop()
        for d in col[row[v]:row[v + 1]]:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return [int(v in seen) for v in range(len(row) - 1)]


def ordered_bfs():
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
    vertex = b.load(queue, h, sync=b.steer(go, mem))
    start = b.load(row, vertex)
    end = b.load(row, b.add(vertex, b.hold(1)))
    edge, flag = b.stream(start, end, b.hold(1), cmp="SLT", pred=False)
    ti_next, mi_next = b.wire("inner tail"), b.wire("inner mem")
    ti = b.carry(flag, b.steer(go, tail), ti_next, pred=False)
    mi = b.carry(flag, vertex.at(1), mi_next, pred=False)
    t_cur, m_cur = b.steer(flag, ti, pred=False), b.steer(flag, mi, pred=False)
    t_next.bind(b.steer(flag, ti, pred=True))
    m_next.bind(b.steer(flag, mi, pred=True))
    d = b.load(col, edge)
    seen = b.load(visited, d, sync=m_cur)
    new = b.eq(seen, b.hold(0))
    d_new = b.steer(new, d)
    marked = b.store(visited, d_new, b.hold(1))
    queued = b.store(queue, b.steer(new, t_cur), d_new, sync=marked)
    ti_next.bind(b.add(t_cur, new))
    mi_next.bind(b.merge(new, queued, b.steer(new, seen.at(1), pred=False)))
    return b.build()


def ripple_bfs(spill: bool = True, depth: int = SPILL_DEPTH):
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
    b.release(d, sync=b.merge(new, marked, b.steer(new, seen.at(1), pred=False)))
    b.push(visit, d_new)
    b.push(visit, b.const(0))
    return b.build()


def _run(graph, memory):
    started = time.monotonic()
    result = run(graph, memory=memory, depth=DEPTH, mem_latency=MEM_LATENCY)
    return result, time.monotonic() - started


def measure(vertices: int, degree: int, seed: int) -> dict:
    row, col = random_csr(vertices, degree, seed)
    expected = reachable(row, col)
    visited = [1] + [0] * (vertices - 1)
    figures = {"vertices": vertices, "degree": degree, "edges": len(col), "reached": sum(expected)}
    programs = {"ordered": (ordered_bfs(), {"row": row, "col": col, "visited": visited,
                                            "queue": [0] * (vertices + 1)}),
                "ripple": (ripple_bfs(), {"row": row, "col": col, "visited": visited})}
    for name, (graph, memory) in programs.items():
        result, seconds = _run(graph, memory)
        if result.arrays["visited"] != expected or not result.drained:
            raise AssertionError(f"{name} BFS on {vertices} vertices: wrong visited set or tokens left")
        figures[name] = {"cycles": result.cycles, "firings": result.firings, "ipc": round(result.ipc, 3),
                         "static": result.static_instructions,
                         "control_share": round(result.control_firings / result.firings, 3),
                         "cycles_per_edge": round(result.cycles / len(col), 2),
                         "spill_traffic": result.spill_traffic,
                         "mem_ops": result.mem_reads + result.mem_writes,
                         "max_locks": result.max_locks_held, "seconds": round(seconds, 2)}
    deeper = run(programs["ripple"][0], memory=programs["ripple"][1], depth=4, mem_latency=MEM_LATENCY)
    figures["ripple_depth4"] = {"cycles": deeper.cycles, "ipc": round(deeper.ipc, 3)}
    o, r = figures["ordered"], figures["ripple"]
    figures["speedup"] = round(o["cycles"] / r["cycles"], 2)
    figures["firings_ratio"] = round(r["firings"] / o["firings"], 2)
    figures["ipc_gain"] = round(r["ipc"] / o["ipc"], 2)
    return figures


def markdown(rows: list[dict]) -> str:
    first = rows[0]
    lines = [
        "# BFS on the Ripple golden model",
        "",
        f"Ordered-dataflow BFS with a software queue vs Ripple BFS (`ind async` self-push on a spill queue "
        f"of depth {SPILL_DEPTH}, atomic test-and-set of `visited`). Golden model: slot depth {DEPTH}, "
        f"memory latency {MEM_LATENCY}, unbounded memory ports. Random CSR graphs, out-degree uniform in "
        f"[d/2, 3d/2], seed {SEED}; both programs reach exactly the reference vertex set. Static size: "
        f"{first['ordered']['static']} (ordered) vs {first['ripple']['static']} (Ripple) instructions.",
        "",
        "At slot depth 2 the Ripple pipeline is limited by buffering, not by the task: the address waits "
        "in the release's slot while the test-and-set runs (acquire, load, compare, store, merge), so two "
        "places cannot cover that path. The last column reruns Ripple BFS with depth-4 slots.",
        "",
        "| vertices | d | edges | reached | ordered cycles | Ripple cycles | speed-up | ordered firings "
        "| Ripple firings | firings ratio | ordered IPC | Ripple IPC | cycles/edge (ord / Ripple) "
        "| control share (ord / Ripple) | spill words | Ripple cycles, depth 4 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|",
    ]
    for f in rows:
        o, r = f["ordered"], f["ripple"]
        lines.append(f"| {f['vertices']} | {f['degree']} | {f['edges']} | {f['reached']} | {o['cycles']} | "
                     f"{r['cycles']} | {f['speedup']}x | {o['firings']} | {r['firings']} | "
                     f"{f['firings_ratio']} | {o['ipc']} | {r['ipc']} | {o['cycles_per_edge']} / "
                     f"{r['cycles_per_edge']} | {o['control_share']} / {r['control_share']} | "
                     f"{r['spill_traffic']} | {f['ripple_depth4']['cycles']} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    rows = []
    for k, (vertices, degree) in enumerate(CASES):
        figures = measure(vertices, degree, SEED + k)
        rows.append(figures)
        print(f"{vertices} vertices, d={degree}: ordered {figures['ordered']['cycles']} cycles, Ripple "
              f"{figures['ripple']['cycles']} cycles ({figures['speedup']}x), "
              f"IPC {figures['ordered']['ipc']} -> {figures['ripple']['ipc']}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    settings = {"depth": DEPTH, "mem_latency": MEM_LATENCY, "spill_depth": SPILL_DEPTH, "seed": SEED}
    (RESULTS / "ripple.json").write_text(json.dumps({"settings": settings, "runs": rows}, indent=1) + "\n")
    (RESULTS / "ripple.md").write_text(markdown(rows))
    print(f"wrote {RESULTS / 'ripple.json'} and {RESULTS / 'ripple.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
