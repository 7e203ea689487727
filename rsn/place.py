"""Placement: bind every FU node of a stream graph to a tile of its kind.

A tile has one FU, so a tile takes at most one node. Pinned nodes stay where they are pinned;
host nodes sit on their host port's tile (they use the switch's boundary side, not the FU, so a
FU node may share that tile). The cost is the total wirelength of the edges, each edge counting
the distance from its source's tile to each sink's tile. Distance is the shortest path over
usable links (failed tiles and links removed), which is the Manhattan distance on an intact grid.

A second cost term counts streams beyond a tile's links: a stream leaving (arriving at) a tile
needs one of its outgoing (incoming) links for the whole program (see rsn/route.py), so e.g. a
two-input node fed from elsewhere on a corner tile leaves that corner no link for anything else.
Each such stream costs a detour across the grid, so placements that cannot route go first.

Algorithm: a greedy initial placement (nodes in breadth-first order from the anchored ones, each
on the free tile nearest its placed neighbours) refined by simulated annealing (moves and swaps
within a shrinking window, VPR-style adaptive cooling) with a fixed seed, so the same graph,
fabric and seed always give the same placement. The cost ignores through-traffic: congestion
beyond tile endpoints is left to the router's negotiation.
"""

import heapq
import itertools
import math
import random
import statistics
from collections import Counter, deque
from dataclasses import dataclass

from rsn.fabric_spec import DIRECTIONS, FabricError, FabricSpec
from rsn.graph import StreamGraph
from rsn.hops import link_weight

__all__ = ["PlaceError", "Placement", "place", "all_placements", "usable_links", "tile_distances",
           "wirelength", "port_overflow", "host_side"]


class PlaceError(ValueError):
    """The graph does not fit the fabric; the message names the kind or node and the numbers."""


@dataclass
class Placement:
    """Where every node sits.

    ``tiles``: node name -> (row, col), for FU nodes their tile and for host nodes their port's
    tile. ``host_sides``: host node name -> the switch port index of its port's side.
    """
    tiles: dict[str, tuple[int, int]]
    host_sides: dict[str, int]
    wirelength: int
    overflow: int           # streams beyond tiles' link counts (port_overflow): > 0 cannot route
    seed: int


def usable_links(spec: FabricSpec) -> dict:
    """tile -> [(side index, neighbour tile)] for every directed link a route may use.

    Links touching a failed tile and failed links (in both directions) are left out.
    """
    adjacency = {}
    for tile in spec.all_tiles():
        if tile in spec.failed_tiles:
            continue
        adjacency[tile] = []
        for side_index, side in enumerate(DIRECTIONS):
            other = spec.neighbour(tile, side)
            if other is None or other in spec.failed_tiles or spec.link_failed(tile, side):
                continue
            adjacency[tile].append((side_index, other))
    return adjacency


def tile_distances(spec: FabricSpec) -> dict:
    """(tile, tile) -> hops over usable links, for every pair of connected usable tiles; on a
    fabric with pass-through links, registered links count twice (rsn.hops.link_weight)."""
    adjacency = usable_links(spec)
    if spec.register_every > 1:
        return _weighted_distances(spec, adjacency)
    distances = {}
    for start in adjacency:
        distances[start, start] = 0
        queue = deque([start])
        while queue:
            tile = queue.popleft()
            for _, other in adjacency[tile]:
                if (start, other) not in distances:
                    distances[start, other] = distances[start, tile] + 1
                    queue.append(other)
    return distances


def _weighted_distances(spec: FabricSpec, adjacency: dict) -> dict:
    """Dijkstra from every tile under :func:`rsn.hops.link_weight`."""
    distances = {}
    for start in adjacency:
        best = {start: 0}
        heap = [(0, start)]
        while heap:
            cost, tile = heapq.heappop(heap)
            if cost > best[tile]:
                continue
            for side, other in adjacency[tile]:
                new = cost + link_weight(spec, tile, side)
                if new < best.get(other, new + 1):
                    best[other] = new
                    heapq.heappush(heap, (new, other))
        distances.update(((start, tile), cost) for tile, cost in best.items())
    return distances


def host_side(spec: FabricSpec, node) -> tuple[tuple[int, int], int]:
    """The tile and switch port index of a host node's port; PlaceError if it cannot be used."""
    try:
        port = spec.host_port(node.port)
    except FabricError as error:
        raise PlaceError(f"host node {node.name!r}: {error}") from None
    wanted = "in" if node.kind == "host_in" else "out"
    if port.direction != wanted:
        raise PlaceError(f"host node {node.name!r} ({node.kind}) uses host port {port.name!r}, which "
                         f"is an {port.direction!r} port; use an {wanted!r} port")
    if port.tile in spec.failed_tiles or spec.link_failed(port.tile, port.side):
        raise PlaceError(f"host node {node.name!r}: host port {port.name!r} on tile {port.tile} side "
                         f"{port.side} is failed; use another port")
    return port.tile, DIRECTIONS.index(port.side)


def wirelength(graph: StreamGraph, tiles: dict, distances: dict, unreachable: int) -> int:
    """Total source-to-sink distance of all edges; a disconnected pair costs ``unreachable``."""
    total = 0
    for edge in graph.edges:
        source = tiles[edge.source[0]]
        for sink, _ in edge.sinks:
            total += distances.get((source, tiles[sink]), unreachable)
    return total


def _anchored_tiles(spec: FabricSpec, graph: StreamGraph):
    """Tiles of host nodes and pinned nodes, with the checks that make them usable."""
    tiles, sides, pinned_by = {}, {}, {}
    for node in graph.host_nodes():
        tiles[node.name], sides[node.name] = host_side(spec, node)
    for node in graph.fu_nodes():
        if node.tile is None:
            continue
        tile = node.tile
        if not (0 <= tile[0] < spec.rows and 0 <= tile[1] < spec.cols):
            raise PlaceError(f"node {node.name!r} is pinned to tile {tile}, outside the "
                             f"{spec.rows}x{spec.cols} grid")
        if spec.kind(tile) != node.kind:
            raise PlaceError(f"node {node.name!r} ({node.kind}) is pinned to tile {tile}, a "
                             f"{spec.kind(tile)} tile; pin it to a {node.kind} tile")
        if tile in spec.failed_tiles:
            raise PlaceError(f"node {node.name!r} is pinned to failed tile {tile}")
        if tile in pinned_by:
            raise PlaceError(f"nodes {pinned_by[tile]!r} and {node.name!r} are both pinned to tile "
                             f"{tile}; a tile has one FU")
        pinned_by[tile] = node.name
        tiles[node.name] = tile
    return tiles, sides, set(pinned_by)


def _check_capacity(spec: FabricSpec, graph: StreamGraph, free_tiles: dict):
    for kind, free in free_tiles.items():
        movable = [node.name for node in graph.fu_nodes() if node.kind == kind and node.tile is None]
        if len(movable) > len(free):
            total = sum(row.count(kind) for row in spec.tiles)
            failed = sum(1 for tile in spec.failed_tiles if spec.kind(tile) == kind)
            pinned = total - failed - len(free)
            raise PlaceError(
                f"{len(movable)} unpinned {kind} node(s) need a {kind} tile but only {len(free)} "
                f"usable {kind} tile(s) are free (the fabric has {total} {kind} tile(s), {failed} "
                f"failed, {pinned} taken by pinned nodes); use a larger fabric or fewer {kind} nodes")


def _neighbours(graph: StreamGraph) -> dict:
    """node -> nodes it shares an edge with (with repeats, one per source-sink pair)."""
    neighbours = {name: [] for name in graph.nodes}
    for edge in graph.edges:
        for sink, _ in edge.sinks:
            neighbours[edge.source[0]].append(sink)
            neighbours[sink].append(edge.source[0])
    return neighbours


def _greedy(spec, graph, tiles, free_tiles, distances, unreachable):
    """Place unpinned nodes breadth-first from the anchored ones, each where it is cheapest."""
    neighbours = _neighbours(graph)
    movable = [node.name for node in graph.fu_nodes() if node.tile is None]
    order, seen = [], set(tiles)
    queue = deque(tiles)
    for start in [None, *movable]:
        if start is not None and start not in seen:
            seen.add(start)
            order.append(start)
            queue.append(start)
        while queue:
            for other in neighbours[queue.popleft()]:
                if other not in seen:
                    seen.add(other)
                    order.append(other)
                    queue.append(other)
    centre = ((spec.rows - 1) / 2, (spec.cols - 1) / 2)
    for name in order:
        free = free_tiles[graph.nodes[name].kind]

        def cost(tile, name=name):
            wire = sum(distances.get((tile, tiles[other]), unreachable)
                       for other in neighbours[name] if other in tiles)
            return wire, abs(tile[0] - centre[0]) + abs(tile[1] - centre[1]), tile
        best = min(free, key=cost)
        free.remove(best)
        tiles[name] = best


def _edge_ports(graph: StreamGraph, tiles: dict, index: int) -> list:
    """The link endpoints a stream needs: ("out", source tile) and ("in", each other sink tile)."""
    edge = graph.edges[index]
    source = tiles[edge.source[0]]
    elsewhere = {tiles[sink] for sink, _ in edge.sinks} - {source}
    return [("out", source)] + [("in", tile) for tile in sorted(elsewhere)] if elsewhere else []


def port_overflow(graph: StreamGraph, tiles: dict, adjacency: dict) -> dict:
    """("in"/"out", tile) -> streams beyond the tile's usable links in that direction.

    A stream leaving a tile needs one of its outgoing links and a stream arriving needs one of its
    incoming links for the whole program; a corner tile has two of each, so a two-input node on a
    corner fed from elsewhere leaves no room for anything else. Any overflow makes routing fail.
    """
    demand = Counter(key for index in range(len(graph.edges)) for key in _edge_ports(graph, tiles, index))
    return {key: count - len(adjacency[key[1]]) for key, count in demand.items()
            if count > len(adjacency[key[1]])}


class _Annealer:
    """Moves and swaps of unpinned nodes among usable tiles of their kind, by incremental cost.

    Cost = wirelength + ``overflow_weight`` per stream beyond a tile's link count (see
    :func:`port_overflow`), so placements that cannot be routed are driven out first.

    The inner loop runs hundreds of thousands of times per placement, so it works on integers:
    nodes and tiles are list indices, distances a matrix, and a link endpoint ("out" or "in" at
    a tile) is ``tile`` or ``tiles + tile``. The random choices are made from lists in the
    order of the names they stand for, so a seed gives the same placement as with names.
    """

    def __init__(self, graph, tiles, kind_tiles, distances, adjacency, rng, *, span, unreachable,
                 overflow_weight):
        self.graph, self.tiles, self.rng = graph, tiles, rng
        self.overflow_weight, self.span = overflow_weight, span     # span: the largest move
        grid = sorted({*adjacency, *tiles.values(), *(t for usable in kind_tiles.values() for t in usable)})
        self.grid = grid
        index = {tile: k for k, tile in enumerate(grid)}
        self.dist = [[distances.get((a, b), unreachable) for b in grid] for a in grid]
        self.supply = [len(adjacency.get(tile, ())) for tile in grid] * 2
        self.names = list(graph.nodes)
        node = {name: k for k, name in enumerate(self.names)}
        self.pos = [index[tiles[name]] for name in self.names]
        self.kind = [graph.nodes[name].kind for name in self.names]
        self.pinned = [graph.nodes[name].tile is not None for name in self.names]
        self.movable = [node[n.name] for n in graph.fu_nodes() if n.tile is None]
        self.occupant = {self.pos[node[n.name]]: node[n.name] for n in graph.fu_nodes()}
        self.kind_tiles = {kind: [index[tile] for tile in usable] for kind, usable in kind_tiles.items()}
        self.edges = [(node[edge.source[0]], [node[sink] for sink, _ in edge.sinks]) for edge in graph.edges]
        self.incident = [set() for _ in self.names]
        for k, (source, sinks) in enumerate(self.edges):
            self.incident[source].add(k)
            for sink in sinks:
                self.incident[sink].add(k)
        self.demand = [0] * (2 * len(grid))
        for k in range(len(self.edges)):
            for key in self._edge_terms(k)[1]:
                self.demand[key] += 1

    def cost(self) -> int:
        wire = sum(self._edge_terms(k)[0] for k in range(len(self.edges)))
        over = sum(max(0, demand - supply) for demand, supply in zip(self.demand, self.supply, strict=True))
        return wire + self.overflow_weight * over

    def _relocate(self, name, tile):
        pos, occupant = self.pos, self.occupant
        old = pos[name]
        other = occupant.get(tile)
        pos[name], occupant[tile] = tile, name
        if other is None:
            del occupant[old]
        else:
            pos[other], occupant[old] = old, other

    def _edge_terms(self, k: int):
        """(wirelength, link endpoints needed) of stream ``k`` under the current placement."""
        source_node, sinks = self.edges[k]
        pos = self.pos
        source = pos[source_node]
        row = self.dist[source]
        wire, arrivals = 0, set()
        for sink in sinks:
            tile = pos[sink]
            wire += row[tile]
            if tile != source:
                arrivals.add(tile)
        if not arrivals:
            return wire, ()
        offset = len(self.grid)
        return wire, (source, *(offset + tile for tile in arrivals))

    def _move(self, name, tile, affected) -> tuple[int, dict]:
        """Move (or swap) ``name`` to ``tile``; return the cost change and the change of demand
        per link endpoint, which :meth:`_keep` applies if the move is kept.

        The affected streams' terms are taken away, the nodes moved, and the terms added back;
        only link endpoints whose demand changes can change the overflow."""
        pos, dist, edges, offset = self.pos, self.dist, self.edges, len(self.grid)
        wire, change = 0, {}
        for sign in (-1, 1):
            if sign > 0:
                self._relocate(name, tile)
            for k in affected:
                source_node, sinks = edges[k]
                source = pos[source_node]
                row = dist[source]
                arrivals = []
                for sink in sinks:
                    at = pos[sink]
                    wire += sign * row[at]
                    if at != source and at not in arrivals:
                        arrivals.append(at)
                if arrivals:
                    change[source] = change.get(source, 0) + sign
                    for at in arrivals:
                        key = offset + at
                        change[key] = change.get(key, 0) + sign
        over = 0
        demand, supply = self.demand, self.supply
        for key, diff in change.items():
            if diff:
                old, most = demand[key], supply[key]
                over += max(0, old + diff - most) - max(0, old - most)
        return wire + self.overflow_weight * over, change

    def _keep(self, change: dict):
        demand = self.demand
        for key, diff in change.items():
            demand[key] += diff

    def _candidates(self, kind: str, tile: int, reach: int) -> list:
        """Usable tiles of ``kind`` within ``reach`` rows and columns of ``tile`` (cached)."""
        key = (kind, tile, reach)
        if key not in self.window_cache:
            row, col = self.grid[tile]
            self.window_cache[key] = [
                other for other in self.kind_tiles[kind]
                if abs(self.grid[other][0] - row) <= reach and abs(self.grid[other][1] - col) <= reach]
        return self.window_cache[key]

    def try_move(self, temperature: float, reach: int) -> int | None:
        """Propose one move within ``reach``; keep it by the Metropolis rule.

        Returns the cost change if kept, None if refused or impossible.
        """
        name = self.rng.choice(self.movable)
        tile = self.rng.choice(self._candidates(self.kind[name], self.pos[name], reach))
        other = self.occupant.get(tile)
        if tile == self.pos[name] or (other is not None and self.pinned[other]):
            return None
        affected = self.incident[name] | self.incident[other] if other is not None else self.incident[name]
        old = self.pos[name]
        delta, change = self._move(name, tile, affected)
        if delta <= 0 or (temperature > 0 and self.rng.random() < math.exp(-delta / temperature)):
            self._keep(change)
            return delta
        self._relocate(name, old)       # back: the demand was never changed
        return None

    def run(self, effort: float):
        """Anneal with VPR's adaptive schedule: the starting temperature from the spread of random
        moves, cooling and move range set by the acceptance rate, stop when moves stop paying.
        The walk keeps the best placement seen, and leaves it in ``tiles``."""
        if not self.movable or not self.graph.edges:
            return
        self.window_cache = {}
        moves = max(20, int(effort * 5 * len(self.movable)))
        reach = self.span
        cost = self.cost()
        best_cost, best_pos = cost, list(self.pos)
        deltas = [self.try_move(math.inf, reach) for _ in range(len(self.movable) + 10)]
        deltas = [delta for delta in deltas if delta is not None]
        cost += sum(deltas)
        spread = statistics.pstdev(deltas) if len(deltas) > 1 else 1.0
        temperature = 2.0 * max(spread, 1.0)     # a warm start: the greedy placement is good
        while temperature > 0.005 * max(cost, 1) / len(self.graph.edges):
            accepted = 0
            for _ in range(moves):
                delta = self.try_move(temperature, reach)
                if delta is not None:
                    accepted += 1
                    cost += delta
                    if cost < best_cost:
                        best_cost, best_pos = cost, list(self.pos)
            rate = accepted / moves
            temperature *= 0.5 if rate > 0.96 else 0.9 if rate > 0.8 else 0.95 if rate > 0.15 else 0.8
            reach = min(self.span, max(1, round(reach * (1 - 0.44 + rate))))
        for _ in range(moves):                  # a final quench: improvements only
            delta = self.try_move(0.0, reach)
            if delta is not None:
                cost += delta
                if cost < best_cost:
                    best_cost, best_pos = cost, list(self.pos)
        self.tiles.update((name, self.grid[tile]) for name, tile in zip(self.names, best_pos, strict=True))


def place(spec: FabricSpec, graph: StreamGraph, *, seed: int = 0, effort: float = 1.0) -> Placement:
    """Bind FU nodes to tiles (pins, kinds and failed tiles respected), minimising wirelength.

    ``effort`` scales the number of annealing moves; ``seed`` fixes their random choices.
    """
    tiles, sides, pinned = _anchored_tiles(spec, graph)
    kind_tiles = {kind: [tile for tile in spec.all_tiles()
                         if spec.kind(tile) == kind and tile not in spec.failed_tiles]
                  for kind in sorted({node.kind for node in graph.fu_nodes()})}
    free_tiles = {kind: [tile for tile in usable if tile not in pinned]
                  for kind, usable in kind_tiles.items()}
    _check_capacity(spec, graph, free_tiles)
    distances, adjacency = tile_distances(spec), usable_links(spec)
    unreachable = 10 * spec.rows * spec.cols        # more than any path: avoid split placements
    _greedy(spec, graph, tiles, free_tiles, distances, unreachable)
    _Annealer(graph, tiles, kind_tiles, distances, adjacency, random.Random(seed),
              span=max(spec.rows, spec.cols), unreachable=unreachable,
              overflow_weight=2 * (spec.rows + spec.cols)).run(effort)
    return Placement(tiles=tiles, host_sides=sides,
                     wirelength=wirelength(graph, tiles, distances, unreachable),
                     overflow=sum(port_overflow(graph, tiles, adjacency).values()), seed=seed)


def all_placements(spec: FabricSpec, graph: StreamGraph, *, limit: int = 50_000):
    """Every placement of a small problem, the likeliest to route first: ascending link
    overflow, then wirelength (ties in enumeration order, so the order is deterministic).

    For the routing fallback of :func:`rsn.route.place_and_route`: on a grid that the program
    nearly fills, the annealer's few low-wirelength optima may all be unroutable while another
    placement routes. Returns an empty list when the problem has more than ``limit``
    placements (then only annealing is used)."""
    tiles, sides, pinned = _anchored_tiles(spec, graph)
    kinds = sorted({node.kind for node in graph.fu_nodes()})
    movable = {kind: [node.name for node in graph.fu_nodes() if node.kind == kind and node.tile is None]
               for kind in kinds}
    free = {kind: [tile for tile in spec.all_tiles() if spec.kind(tile) == kind
                   and tile not in spec.failed_tiles and tile not in pinned] for kind in kinds}
    _check_capacity(spec, graph, free)
    count = math.prod(math.perm(len(free[kind]), len(movable[kind])) for kind in kinds)
    if count > limit:
        return []
    distances, adjacency = tile_distances(spec), usable_links(spec)
    unreachable = 10 * spec.rows * spec.cols
    options = []
    for choice in itertools.product(*(itertools.permutations(free[kind], len(movable[kind]))
                                      for kind in kinds)):
        candidate = dict(tiles)
        for kind, chosen in zip(kinds, choice, strict=True):
            candidate.update(zip(movable[kind], chosen, strict=True))
        overflow = sum(port_overflow(graph, candidate, adjacency).values())
        length = wirelength(graph, candidate, distances, unreachable)
        options.append((overflow, length, len(options), candidate))
    options.sort(key=lambda option: option[:3])
    return [Placement(tiles=candidate, host_sides=sides, wirelength=length, overflow=overflow, seed=-1)
            for overflow, length, _, candidate in options]
