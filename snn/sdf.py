"""Synchronous dataflow graphs of crossbar clusters, and their exact throughput.

Throughput is computed two independent ways, both exact (``fractions.Fraction``, iterations
per time unit), so each checks the other:

- ``throughput_mcm``: expand to the homogeneous graph (one node per firing of an iteration),
  then 1 / maximum cycle mean, where a cycle's mean is its execution time over its initial
  tokens. Karp's algorithm runs on the graph of tokens (see ``_token_graph``).
- ``throughput_selftimed``: fire every actor as soon as its input tokens are there, time
  step by time step, until a state repeats; throughput = iterations in the period / its length.

A ``binding`` maps a tile to its static order: the list of actor firings it executes, over and
over, one at a time. The MCM method models it with order edges between consecutive firings (0
tokens) and from the last back to the first (1 token); the simulation enforces it directly.
"""

from dataclasses import dataclass, field
from fractions import Fraction
from math import gcd, lcm

__all__ = ["Deadlock", "SdfEdge", "SdfGraph", "greedy_binding", "throughput_mcm", "throughput_selftimed"]


class Deadlock(ValueError):
    """The graph (with its binding) can never complete an iteration."""


@dataclass(frozen=True)
class SdfEdge:
    src: str
    dst: str
    produce: int = 1
    consume: int = 1
    tokens: int = 0


@dataclass
class SdfGraph:
    """Actors with integer execution times (>= 1) and edges with rates and initial tokens."""

    times: dict = field(default_factory=dict)
    edges: list = field(default_factory=list)

    def add_actor(self, name: str, time: int):
        if name in self.times:
            raise ValueError(f"SDF: actor {name!r} already exists")
        if not isinstance(time, int) or time < 1:
            raise ValueError(f"SDF: actor {name!r} has execution time {time!r}; it must be an int >= 1")
        self.times[name] = time

    def add_edge(self, src: str, dst: str, produce: int = 1, consume: int = 1, tokens: int = 0):
        for end in (src, dst):
            if end not in self.times:
                raise ValueError(f"SDF: edge {src!r} -> {dst!r} names unknown actor {end!r}")
        if produce < 1 or consume < 1 or tokens < 0:
            raise ValueError(f"SDF: edge {src!r} -> {dst!r} needs rates >= 1 and tokens >= 0, got "
                             f"produce={produce}, consume={consume}, tokens={tokens}")
        self.edges.append(SdfEdge(src, dst, produce, consume, tokens))

    def repetition_vector(self) -> dict:
        """The smallest positive firing counts that return every edge to its initial tokens."""
        if not self.times:
            raise ValueError("SDF: the graph has no actors")
        ratio: dict = {}
        neighbours: dict = {a: [] for a in self.times}
        for e in self.edges:
            neighbours[e.src].append((e.dst, Fraction(e.produce, e.consume)))
            neighbours[e.dst].append((e.src, Fraction(e.consume, e.produce)))
        for root in self.times:
            if root in ratio:
                continue
            ratio[root] = Fraction(1)
            stack = [root]
            while stack:
                a = stack.pop()
                for b, factor in neighbours[a]:
                    if b not in ratio:
                        ratio[b] = ratio[a] * factor
                        stack.append(b)
        for e in self.edges:
            if ratio[e.src] * e.produce != ratio[e.dst] * e.consume:
                raise ValueError(f"SDF: inconsistent rates on edge {e.src!r} -> {e.dst!r} "
                                 f"(produce {e.produce}, consume {e.consume}): no repetition vector")
        scale = lcm(*(r.denominator for r in ratio.values()))
        counts = {a: int(r * scale) for a, r in ratio.items()}
        common = gcd(*counts.values())
        return {a: c // common for a, c in counts.items()}


def _check_binding(graph: SdfGraph, q: dict, binding) -> dict:
    binding = dict(binding or {})
    owner = {}
    for tile, order in binding.items():
        if not order:
            raise ValueError(f"SDF binding: tile {tile!r} has an empty static order")
        for actor in order:
            if actor not in graph.times:
                raise ValueError(f"SDF binding: tile {tile!r} orders unknown actor {actor!r}")
            if owner.setdefault(actor, tile) != tile:
                raise ValueError(f"SDF binding: actor {actor!r} is bound to tiles {owner[actor]!r} "
                                 f"and {tile!r}")
        for actor in set(order):
            if order.count(actor) != q[actor]:
                raise ValueError(f"SDF binding: tile {tile!r} fires {actor!r} {order.count(actor)} times per "
                                 f"iteration; the repetition vector needs {q[actor]}")
    return binding


def _hsdf(graph: SdfGraph, binding):
    """Nodes (actor, k) for each firing k of an iteration, their times, and edges (u, v, tokens)."""
    q = graph.repetition_vector()
    binding = _check_binding(graph, q, binding)
    nodes = [(a, k) for a in graph.times for k in range(q[a])]
    index = {n: i for i, n in enumerate(nodes)}
    best: dict = {}

    def link(u, v, tokens):
        key = (index[u], index[v])
        best[key] = min(best.get(key, tokens), tokens)

    for e in graph.edges:
        for j in range(q[e.dst]):
            for t in range(j * e.consume, (j + 1) * e.consume):
                firing = (t - e.tokens) // e.produce        # negative: an earlier iteration
                link((e.src, firing % q[e.src]), (e.dst, j), -(firing // q[e.src]))
    for order in binding.values():
        seen: dict = {}
        firings = []
        for actor in order:
            firings.append((actor, seen.get(actor, 0)))
            seen[actor] = seen.get(actor, 0) + 1
        for u, v in zip(firings, firings[1:], strict=False):
            link(u, v, 0)
        link(firings[-1], firings[0], 1)
    times = [graph.times[a] for a, _ in nodes]
    return nodes, times, [(u, v, d) for (u, v), d in best.items()]


def _token_graph(times, edges):
    """Karp's input: one node per initial token, an arc token -> token weighted by the longest
    token-free path between them (node times at both ends included). A cycle of n arcs here is a
    cycle of the HSDF graph holding n tokens, with the same total time."""
    times = list(times)
    unit = []          # (tail, head) of 1-token edges, after splitting d-token edges into d hops
    free = {u: [] for u in range(len(times))}
    for u, v, d in edges:
        if d == 0:
            free[u].append(v)
            continue
        prev = u
        for _ in range(d - 1):
            times.append(0)
            free[len(times) - 1] = []
            unit.append((prev, len(times) - 1))
            prev = len(times) - 1
        unit.append((prev, v))
    order = _topological(free, len(times))
    rank = {u: i for i, u in enumerate(order)}
    by_tail: dict = {}
    for t, (tail, _) in enumerate(unit):
        by_tail.setdefault(tail, []).append(t)
    arcs = []
    for t, (_, head) in enumerate(unit):
        longest = {head: times[head]}
        for u in order[rank[head]:]:
            if u not in longest:
                continue
            for w in free[u]:
                longest[w] = max(longest.get(w, -1), longest[u] + times[w])
        for u, length in longest.items():
            for t2 in by_tail.get(u, ()):
                arcs.append((t, t2, length))
    return len(unit), arcs


def _topological(free, count):
    indegree = [0] * count
    for u in range(count):
        for v in free[u]:
            indegree[v] += 1
    ready = [u for u in range(count) if indegree[u] == 0]
    order = []
    while ready:
        u = ready.pop()
        order.append(u)
        for v in free[u]:
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    if len(order) != count:
        raise Deadlock("SDF: a cycle holds no initial token, so no actor on it can ever fire")
    return order


def _karp(count, arcs):
    """Maximum cycle mean of a graph with ``count`` nodes and weighted arcs, or None if acyclic."""
    minus = None
    rows = [[0] * count]
    for _ in range(count):
        prev, row = rows[-1], [minus] * count
        for u, v, w in arcs:
            if prev[u] is not None and (row[v] is None or prev[u] + w > row[v]):
                row[v] = prev[u] + w
        rows.append(row)
    best = None
    for v in range(count):
        if rows[count][v] is None:
            continue
        worst = min(Fraction(rows[count][v] - rows[k][v], count - k)
                    for k in range(count) if rows[k][v] is not None)
        best = worst if best is None else max(best, worst)
    return best


def throughput_mcm(graph: SdfGraph, binding=None) -> Fraction:
    """Iterations per time unit, as 1 / the maximum cycle mean of the HSDF expansion."""
    _, times, edges = _hsdf(graph, binding)
    count, arcs = _token_graph(times, edges)
    mcm = _karp(count, arcs)
    if mcm is None:
        raise ValueError("SDF: no cycle bounds the throughput (an actor may fire without limit); "
                         "give each actor a self-loop or bind it to a tile")
    return 1 / mcm


def throughput_selftimed(graph: SdfGraph, binding=None, max_states: int = 200_000) -> Fraction:
    """Iterations per time unit of self-timed execution, found by running until a state repeats."""
    q = graph.repetition_vector()
    binding = _check_binding(graph, q, binding)
    actors = list(graph.times)
    tile_of = {a: tile for tile, order in binding.items() for a in order}
    inputs = {a: [] for a in actors}
    for i, e in enumerate(graph.edges):
        inputs[e.dst].append(i)
    for a in actors:
        if not inputs[a] and a not in tile_of:
            raise ValueError(f"SDF: actor {a!r} has no input and no tile, so it could fire without limit; "
                             "give it a self-loop or bind it to a tile")
    tiles = list(binding)
    tokens = [e.tokens for e in graph.edges]
    running = {a: [] for a in actors}       # remaining times of firings in progress
    position = {tile: 0 for tile in tiles}
    busy = {tile: False for tile in tiles}
    reference = actors[0]
    started = 0
    now = 0
    seen = {}
    while True:
        progress = True
        while progress:
            progress = False
            for a in actors:
                tile = tile_of.get(a)
                while all(tokens[i] >= graph.edges[i].consume for i in inputs[a]):
                    if tile is not None and (busy[tile] or binding[tile][position[tile]] != a):
                        break
                    for i in inputs[a]:
                        tokens[i] -= graph.edges[i].consume
                    running[a].append(graph.times[a])
                    started += a == reference
                    progress = True
                    if tile is not None:
                        busy[tile] = True
                        position[tile] = (position[tile] + 1) % len(binding[tile])
        state = (tuple(tokens), tuple(tuple(sorted(running[a])) for a in actors),
                 tuple(position[t] for t in tiles), tuple(busy[t] for t in tiles))
        if state in seen:
            then, started_then = seen[state]
            return Fraction(started - started_then, q[reference] * (now - then))
        if len(seen) >= max_states:
            raise ValueError(f"SDF: no repeated state within {max_states} states; token counts may grow "
                             "without bound (add buffer back-edges)")
        seen[state] = (now, started)
        remaining = [r for a in actors for r in running[a]]
        if not remaining:
            raise Deadlock(f"SDF: self-timed execution deadlocks at time {now}")
        step = min(remaining)
        now += step
        for a in actors:
            left = [r - step for r in running[a]]
            done = left.count(0)
            running[a] = [r for r in left if r]
            for e_index, e in enumerate(graph.edges):
                if e.src == a:
                    tokens[e_index] += done * e.produce
            if done and a in tile_of:
                busy[tile_of[a]] = False


def greedy_binding(graph: SdfGraph, tiles: int) -> dict:
    """Bind actors to at most ``tiles`` tiles, each with a static order.

    Actors are taken in a topological order of the token-free edges and cut into contiguous
    runs of about equal work (repetitions x time): a pipeline stays a pipeline, one stage group
    per tile. (Dealing actors out round-robin would chain every tile into one serial loop.) Each
    tile fires its actors in that order, each its repetition count in a row, so no order edge
    runs against a token-free dependency.
    """
    if tiles < 1:
        raise ValueError(f"SDF binding: tiles={tiles} must be >= 1")
    q = graph.repetition_vector()
    names = list(graph.times)
    free = {i: [] for i in range(len(names))}
    for e in graph.edges:
        if e.tokens == 0 and e.src != e.dst:
            free[names.index(e.src)].append(names.index(e.dst))
    order = [names[u] for u in _topological(free, len(names))]
    work = {a: q[a] * graph.times[a] for a in names}
    total = sum(work.values())
    binding: dict = {}
    done, tile = 0, 0
    for a in order:
        binding.setdefault(f"tile{tile}", []).extend([a] * q[a])
        done += work[a]
        if done * tiles >= total * (tile + 1) and tile < tiles - 1:
            tile += 1
    return binding
