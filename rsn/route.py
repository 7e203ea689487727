"""Routing: bind every stream of a placed graph to switch routes, and emit the switch micro-ops.

Model: circuit switching with every route of a phase held for the whole phase. Each directed
link (a switch's neighbour output) carries at most one stream per phase, so the routes of one
phase share no switch output and no switch input. Every switch micro-op then issues as soon as
it reaches the head of its queue and its outputs' earlier-phase routes have ended (a fenced one
once all of its switch's earlier-phase routes have), and no stream waits for another stream of
its phase: the network adds no waits of its own, only the FUs do.
A single-phase program is the old model exactly: each link carries one stream, ever.

Phases (docs/rsn-phases.md) are routed one after the other, and every link and switch input an
earlier phase used is free again: a later route that reads a switch input an earlier route read
there, and leaves it by other outputs, comes behind a fenced micro-op (``fence``), which issues
only once every counted route of that switch has ended, so it never sees the earlier stream's
tokens.

Algorithm: PathFinder negotiated congestion over the directed link graph (failed tiles and links
removed; a route may pass through any usable tile's switch without using its FU). A multicast
stream is routed as a tree: sinks in order of distance from the source, each joined to the tree
so far by a cheapest path. Links wanted by several streams get dearer each iteration (present
and history costs) and the streams on them are ripped up and rerouted, until no link is shared,
or :class:`RouteError`: after ``max_iterations`` with the present cost growing quickly, then
(from scratch) three times as many growing slowly (``QUICK``, ``PATIENT``).
"""

import dataclasses
import heapq
import itertools
import math
from collections import Counter, defaultdict
from dataclasses import dataclass

from rsn import checks
from rsn.fabric_spec import DIRECTIONS, FabricSpec
from rsn.graph import Edge, StreamGraph
from rsn.hops import link_weight
from rsn.isa import NO_INPUT, SWITCH_OUTPUTS
from rsn.place import Placement, all_placements, place, usable_links

__all__ = ["RouteError", "Hop", "EdgeRoute", "Routing", "route", "place_and_route",
           "source_endpoint", "sink_endpoint", "switch_uops", "switch_uop_phases", "fu_uops", "FU_PORT_BASE"]

FU_PORT_BASE = 4        # switch input 4+k = FU output k; switch output 4+k = FU input k


class RouteError(ValueError):
    """Streams could not be routed; the message names them and the links they compete for.

    ``streams``: the streams (graph edges) concerned; ``links``: the shared (tile, side index)
    links when congestion is the cause, empty when a sink is cut off from its source.
    """

    def __init__(self, message: str, streams=(), links=()):
        super().__init__(message)
        self.streams, self.links = list(streams), list(links)


@dataclass(frozen=True)
class Hop:
    """One stream's use of one switch: the input it enters by and the outputs it copies to."""
    tile: tuple[int, int]
    input: int
    outputs: tuple[int, ...]


@dataclass
class EdgeRoute:
    """The switch hops of one stream (source tile first, parents before children) and its links."""
    edge: Edge
    hops: list[Hop]
    links: list[tuple[tuple[int, int], int]]        # (tile, side index) directed links used


@dataclass
class Routing:
    """Everything place & route produces: the image's contents before the assembler packs them.

    ``routes`` is parallel to ``graph.edges``. ``switch_uops`` and ``fu_uops``: tile -> micro-op
    dicts in execution order, ``last`` set on each unit's final one.
    """
    placement: Placement
    routes: list[EdgeRoute]
    switch_uops: dict
    fu_uops: dict
    iterations: int


def _side_name(side: int) -> str:
    return DIRECTIONS[side]


def source_endpoint(graph: StreamGraph, placement: Placement, edge: Edge) -> tuple[tuple[int, int], int]:
    """(tile, switch input) where a stream enters the network: its FU output or host port."""
    name, port = edge.source
    if graph.nodes[name].is_host:
        return placement.tiles[name], placement.host_sides[name]
    return placement.tiles[name], FU_PORT_BASE + port


def sink_endpoint(graph: StreamGraph, placement: Placement, sink) -> tuple[tuple[int, int], int]:
    """(tile, switch output) where a stream leaves the network: an FU input or a host port."""
    name, port = sink
    if graph.nodes[name].is_host:
        return placement.tiles[name], placement.host_sides[name]
    return placement.tiles[name], FU_PORT_BASE + port


@dataclass
class _Tree:
    root: tuple[int, int]
    parent: dict                # tile -> (parent tile, side index of the parent's output)
    exits: dict                 # tile -> switch outputs that end the stream there

    def links(self):
        return [(parent, side) for parent, side in self.parent.values()]


class _NoPath(Exception):
    def __init__(self, sink):
        self.sink = sink


class _CutOff(Exception):
    """Stream ``index`` has no path from ``source`` to ``sink`` at all (failed tiles or links)."""

    def __init__(self, index, source, sink):
        self.index, self.source, self.sink = index, source, sink


def _join(tree_tiles, target, neighbours, cost):
    """Cheapest path from any tile of the tree to ``target``: [(tile, side, next tile)].

    ``neighbours``: tile -> [(next tile, link)]; ``cost``: link -> its price now."""
    distance = {tile: 0.0 for tile in tree_tiles}
    previous = {}
    order = itertools.count()
    heap = [(0.0, next(order), tile) for tile in tree_tiles]
    heapq.heapify(heap)
    infinity = math.inf
    while heap:
        here, _, tile = heapq.heappop(heap)
        if tile == target:
            break
        if here > distance[tile]:
            continue
        for other, link in neighbours[tile]:
            new = here + cost[link]
            if new < distance.get(other, infinity):
                distance[other] = new
                previous[other] = link
                heapq.heappush(heap, (new, next(order), other))
    if target not in distance:
        return None
    path, tile = [], target
    while tile not in tree_tiles:
        parent, side = previous[tile]
        path.append((parent, side, tile))
        tile = parent
    return path[::-1]


def _route_tree(source, sinks, neighbours, cost) -> _Tree:
    """A tree from the source endpoint to every sink endpoint, sinks joined nearest first."""
    root, _ = source
    tree = _Tree(root, {}, defaultdict(list))
    tiles = {root}

    def distance(sink):
        return abs(sink[0][0] - root[0]) + abs(sink[0][1] - root[1])
    for sink in sorted(sinks, key=distance):
        tile, output = sink
        path = _join(tiles, tile, neighbours, cost) if tile not in tiles else []
        if path is None:
            raise _NoPath(sink)
        for parent, side, child in path:
            tree.parent[child] = (parent, side)
            tiles.add(child)
        tree.exits[tile].append(output)
    return tree


def _hops(tree: _Tree, source_input: int) -> list[Hop]:
    children = defaultdict(list)
    for child, (parent, side) in tree.parent.items():
        children[parent].append((side, child))
    hops, queue = [], [tree.root]
    for tile in queue:
        entered = source_input if tile == tree.root else (tree.parent[tile][1] + 2) % 4
        outputs = sorted([side for side, _ in children[tile]] + tree.exits.get(tile, []))
        hops.append(Hop(tile, entered, tuple(outputs)))
        queue.extend(child for _, child in sorted(children[tile]))
    return hops


def _describe_link(spec: FabricSpec, link) -> str:
    tile, side = link
    return f"tile {tile} output {_side_name(side)} (to {spec.neighbour(tile, _side_name(side))})"


def _check_endpoints(spec: FabricSpec, graph: StreamGraph, placement: Placement, adjacency):
    for edge in graph.edges:
        ends = [source_endpoint(graph, placement, edge)]
        ends += [sink_endpoint(graph, placement, sink) for sink in edge.sinks]
        for tile, _ in ends:
            if tile not in adjacency:
                raise RouteError(f"stream {edge}: an endpoint is on failed tile {tile}")


# PathFinder's schedules: (present-cost growth per iteration, iterations as a multiple of
# ``max_iterations``). The quick one settles most graphs in a few iterations; a graph it leaves
# with a few links shared gets a patient one, whose slower growth lets streams keep trading links
# for longer (Ripple's kc on a 16x16 grid: placements left with 1 to 3 shared links route).
# Everything the quick schedule routes keeps its routes.
QUICK, PATIENT = (1.8, 1), (1.3, 3)


def _pathfinder(terminals, adjacency, base, iterations, growth):
    """One negotiation from scratch: (trees by index, iterations used, links still shared).

    A link's price is (base + history) * (1 + present * occupancy); the prices are kept in a
    table, updated where a term changes (every link when ``present`` grows, a tree's links when
    it is ripped up or laid), so that the path search only looks them up."""
    occupancy, history = Counter(), defaultdict(float)
    neighbours = {tile: [(other, (tile, side)) for side, other in links] for tile, links in adjacency.items()}
    trees = dict.fromkeys(terminals)
    present = 0.5
    cost = {}

    def reprice(links):
        for link in links:
            cost[link] = (base[link] + history[link]) * (1.0 + present * occupancy[link])
    for iteration in range(1, iterations + 1):
        reprice(base)
        for index, (source, sinks) in terminals.items():
            if trees[index] is not None:
                if all(occupancy[link] <= 1 for link in trees[index].links()):
                    continue            # only streams on shared links are ripped up
                occupancy.subtract(trees[index].links())
                reprice(trees[index].links())
            try:
                trees[index] = _route_tree(source, sinks, neighbours, cost)
            except _NoPath as missing:
                raise _CutOff(index, source, missing.sink) from None
            occupancy.update(trees[index].links())
            reprice(trees[index].links())
        shared = sorted(link for link, count in occupancy.items() if count > 1)
        if not shared:
            return trees, iteration, []
        for link in shared:
            history[link] += occupancy[link] - 1
        present *= growth
    return trees, iterations, shared


def _negotiate(spec, graph, placement, adjacency, max_iterations, indices=None):
    """PathFinder: route every stream (of ``indices``, all by default); while links are shared,
    make them dearer and reroute the streams that use them, on the quick schedule and then, if
    links are still shared, on the patient one. Returns (trees by index, iterations)."""
    indices = range(len(graph.edges)) if indices is None else indices
    terminals = {index: (source_endpoint(graph, placement, graph.edges[index]),
                         [sink_endpoint(graph, placement, sink) for sink in graph.edges[index].sinks])
                 for index in indices}
    # A register on a link costs a cycle where other links pass through (rsn.hops.link_weight).
    base = {(tile, side): float(link_weight(spec, tile, side))
            for tile, links in adjacency.items() for side, _ in links}
    spent = 0
    for growth, multiple in (QUICK, PATIENT):
        try:
            trees, used, shared = _pathfinder(terminals, adjacency, base, multiple * max_iterations, growth)
        except _CutOff as cut:
            index, source, sink = cut.index, cut.source, cut.sink
            raise RouteError(
                f"stream {graph.edges[index]}: no path from tile {source[0]} to tile {sink[0]} that "
                f"avoids failed tiles {sorted(spec.failed_tiles)} and failed links "
                f"{sorted(spec.failed_links)}; place the nodes elsewhere or repair the fabric",
                streams=[graph.edges[index]]) from None
        spent += used
        if not shared:
            return trees, spent
    users = defaultdict(list)
    for index, tree in trees.items():
        for link in tree.links():
            users[link].append(graph.edges[index])
    lines = [f"{_describe_link(spec, link)} is wanted by {len(users[link])} streams: "
             f"{'; '.join(map(str, users[link]))}" for link in shared]
    streams = [graph.edges[index] for index in indices
               if any(user is graph.edges[index] for link in shared for user in users[link])]
    scope = "phase" if graph.phased else "program"
    raise RouteError(
        f"could not route {len(streams)} stream(s) without "
        f"sharing a link after {max_iterations} iterations and {PATIENT[1] * max_iterations} more "
        f"at a gentler pace (each directed link carries one stream per {scope}):\n  " + "\n  ".join(lines)
        + "\nuse a larger fabric, fewer or smaller multicasts, or pin nodes further apart"
        + (", or move streams to another phase" if graph.phased else ""),
        streams=streams, links=shared)


def _route_phases(spec, graph, placement, adjacency, max_iterations):
    """Route a graph phase by phase, each phase negotiating its own links (one stream per link
    per phase); links and switch inputs of earlier phases are free again, since the switch
    micro-ops fence a phase that leaves an input an earlier phase read by other outputs
    (:func:`switch_uops`). Returns (trees in program order, iterations)."""
    trees, iterations = [None] * len(graph.edges), 0
    for phase in graph.phases():
        indices = [index for index, edge in enumerate(graph.edges) if edge.phase == phase]
        routed, used = _negotiate(spec, graph, placement, adjacency, max_iterations, indices)
        iterations += used
        for index in indices:
            trees[index] = routed[index]
    return trees, iterations


def switch_uops(routes: list[EdgeRoute]) -> dict:
    """tile -> switch micro-ops: one per (stream, tile) in phase order, program order within a
    phase, ``last`` on the final; ``fence`` (1, and absent otherwise) on a tile's first micro-op
    of a phase if a route of that phase there reads a switch input that an earlier phase's route
    read there and does not take every output that route took.

    A later route that does take all of them needs no fence: it issues only once those outputs
    have ended, i.e. after the earlier stream's last token has left the input. A fence would
    also wait for the tile's unrelated routes, which costs cycles (docs/rsn-phases.md)."""
    per_tile = defaultdict(list)            # tile -> [(phase, hop, beats)] in issue order
    for route_ in sorted(routes, key=lambda route_: route_.edge.phase):     # stable
        for hop in route_.hops:
            per_tile[hop.tile].append((route_.edge.phase, hop, route_.edge.tokens or 0))
    program = {}
    for tile, entries in sorted(per_tile.items()):
        uops, latest = [], {}               # switch input -> outputs of its latest route
        for _, group in itertools.groupby(entries, key=lambda entry: entry[0]):
            group = list(group)
            fence = int(any(hop.input in latest and not latest[hop.input] <= set(hop.outputs)
                            for _, hop, _ in group))
            for position, (_, hop, beats) in enumerate(group):
                select = [NO_INPUT] * SWITCH_OUTPUTS
                for output in hop.outputs:
                    select[output] = hop.input
                uop = {"beats": beats, "enable": sum(1 << output for output in hop.outputs),
                       "select": select, "last": 0}
                if fence and position == 0:
                    uop["fence"] = 1        # left out when 0, as the encoder does
                uops.append(uop)
            latest.update((hop.input, set(hop.outputs)) for _, hop, _ in group)
        uops[-1]["last"] = 1
        program[tile] = uops
    return program


def switch_uop_phases(routes: list[EdgeRoute]) -> dict:
    """tile -> the phase of each of its switch micro-ops, in :func:`switch_uops`' order."""
    phases = defaultdict(list)
    for route_ in sorted(routes, key=lambda route_: route_.edge.phase):     # stable, as there
        for hop in route_.hops:
            phases[hop.tile].append(route_.edge.phase)
    return dict(sorted(phases.items()))


def fu_uops(graph: StreamGraph, placement: Placement) -> dict:
    """tile -> the FU micro-ops of the node placed there, ``last`` set on the final one only."""
    program = {}
    for node in graph.fu_nodes():
        uops = [{**uop, "last": 0} for uop in node.uops]
        if uops:
            uops[-1]["last"] = 1
        program[placement.tiles[node.name]] = uops
    return dict(sorted(program.items()))


def route(spec: FabricSpec, graph: StreamGraph, placement: Placement, *,
          max_iterations: int = 100) -> Routing:
    """Route every stream of a placed graph; RouteError if impossible without sharing links."""
    adjacency = usable_links(spec)
    _check_endpoints(spec, graph, placement, adjacency)
    trees, iterations = _route_phases(spec, graph, placement, adjacency, max_iterations)
    return _routing(graph, placement, trees, iterations)


def _routing(graph: StreamGraph, placement: Placement, trees: list, iterations: int) -> Routing:
    """The routing of ``graph`` along ``trees``: micro-ops from the graph's own token counts."""
    routes = [EdgeRoute(edge, _hops(tree, source_endpoint(graph, placement, edge)[1]), tree.links())
              for edge, tree in zip(graph.edges, trees, strict=True)]
    return Routing(placement=placement, routes=routes, switch_uops=switch_uops(routes),
                   fu_uops=fu_uops(graph, placement), iterations=iterations)


# Where every node went and which links each stream took depend on the graph's shape alone (its
# nodes' kinds and pins, its streams' ends), never on token counts or micro-ops. So the cases of one
# program (a vectors file, a suite's cases) are placed and routed once per process; each still
# gets micro-ops from its own counts and the full routing check; a shape that did not route fails
# again at once. The newest few shapes are kept.
_ROUTED: dict = {}
_ROUTED_KEPT = 128


def _shape(spec: FabricSpec, graph: StreamGraph, options: tuple) -> tuple:
    nodes = tuple((node.name, node.kind, node.tile, node.port) for node in graph.nodes.values())
    edges = tuple((edge.source, tuple(edge.sinks), edge.phase) for edge in graph.edges)
    return spec, nodes, edges, options


def _remember(shape: tuple, *outcome):
    """Keep a shape's (placement, trees, iterations), or the RouteError none of its tries escaped."""
    if len(_ROUTED) >= _ROUTED_KEPT:
        del _ROUTED[next(iter(_ROUTED))]
    _ROUTED[shape] = outcome[0] if isinstance(outcome[0], RouteError) else outcome


def _shared(error: RouteError) -> float:
    """How far a failed routing was from routing: its shared links (a cut-off sink: never close)."""
    return len(error.links) if error.links else float("inf")


def place_and_route(spec: FabricSpec, graph: StreamGraph, *, seed: int = 0, attempts: int = 3,
                    max_iterations: int = 100, exhaustive: int = 64, spread: bool = True) -> Routing:
    """Check, place, route and check again: the one call a front-end needs.

    If routing fails, placement is retried with seeds ``seed+1 ..`` (``attempts`` in all). If
    none routes and the problem is small (:func:`rsn.place.all_placements`), the other
    placements are tried too, likeliest first, up to ``exhaustive`` of them. Then (if
    ``spread``) ``attempts`` placements that also weigh through-traffic
    (``place(congestion=True)``), which spread a dense graph so that streams can cross it.
    If none succeeds, the failure that left the fewest links shared is raised (the closest miss:
    its message names what to change, and :func:`ripple_core.lower.compile_lowering` judges by
    it whether re-placing can help); a stream cut off from its sink ranks last. Deterministic for
    a given ``seed``.
    """
    checks.check_program(spec, graph)
    shape = _shape(spec, graph, (seed, attempts, max_iterations, exhaustive, spread))
    if shape in _ROUTED:
        if isinstance(_ROUTED[shape], RouteError):
            raise _ROUTED[shape]
        placement, trees, iterations = _ROUTED[shape]
        routing = _routing(graph, dataclasses.replace(placement, tiles=dict(placement.tiles),
                                                      host_sides=dict(placement.host_sides)),
                           trees, iterations)
        checks.check_routing(spec, graph, routing)
        return routing
    closest, tried = None, []
    candidates = (place(spec, graph, seed=seed + attempt) for attempt in range(attempts))

    def fallback():                             # only enumerated once annealing has failed
        yield from all_placements(spec, graph)[:exhaustive] if exhaustive else ()

    spreading = (place(spec, graph, seed=seed + attempt, congestion=True)
                 for attempt in range(attempts if spread else 0))
    for placement in itertools.chain(candidates, fallback(), spreading):
        if placement.tiles in tried:            # a later try that lands where an earlier one did
            continue
        tried.append(placement.tiles)
        checks.check_placement(spec, graph, placement)
        try:
            adjacency = usable_links(spec)
            _check_endpoints(spec, graph, placement, adjacency)
            trees, iterations = _route_phases(spec, graph, placement, adjacency, max_iterations)
        except RouteError as error:
            if closest is None or _shared(error) < _shared(closest):
                closest = error
            continue
        routing = _routing(graph, placement, trees, iterations)
        checks.check_routing(spec, graph, routing)
        _remember(shape, dataclasses.replace(placement, tiles=dict(placement.tiles),
                                             host_sides=dict(placement.host_sides)), trees, iterations)
        return routing
    _remember(shape, closest)
    raise closest
