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

A third term estimates through-traffic. Wirelength alone packs a graph into a compact block, and
a block of busy tiles uses most of its own links for its own streams (a two-lane pe tile may take
three or four arrivals), so the streams that must cross it have nowhere to go and negotiation
fails however long it runs. Each stream is taken to cross every column boundary between its
source and its easternmost (westernmost) sink once eastward (westward), in any row of its bounding
box with equal likelihood, and likewise every row boundary: so it loads each usable link of that
crossing by 1/k of a stream (k parallel usable links in the box). Loads are summed over windows of
a link and its parallel neighbours (``WINDOW`` on either side), since the router can detour one
row or column at the cost of two hops and a single overloaded link is cheap; the streams beyond a
window's link count cost ``CONGESTION_WEIGHT`` each. A lone straight stream (load 1 on its links)
costs nothing, so the cost of a graph with room around it is its wirelength as before (its
placement may still change: the annealer's walk passes through congested states), while a dense
graph spreads until its estimated load fits. The term is opt-in (``place(congestion=True)``):
:func:`rsn.route.place_and_route` uses it only for graphs whose plain placements did not route,
so everything that routed before keeps its placement. Loads are integers (units of 1/lcm(1..rows, cols) of a
stream), so the annealer's incremental load updates are exact and never drift.

With the through-traffic term, a multicast stream's wirelength is also measured differently. The
plain cost sums the distances from the source to every sink (a star), but the router builds a
tree, whose length grows far more slowly with its sinks: a loop decider that feeds 19 operators
costs the star about three times its tree, so the star pulls all 19 sinks tightly round the
decider and crowds its links. A stream of several sinks costs instead the half-perimeter of its
terminals' bounding box times a factor for its terminal count (:func:`steiner_factor`, the
expected ratio of a rectilinear Steiner tree to the half-perimeter), the usual estimate of
FPGA placers. A one-sink stream keeps its shortest-path distance (failed tiles detour). On
Ripple's kc (141 and 180 operators) on a 16x16 grid of one-operator tiles this, with the router's
patient schedule (rsn/route.py), routes both versions where the star left 3 and 51 links shared
(docs/ripple-workloads.md).

Algorithm: a greedy initial placement (nodes in breadth-first order from the anchored ones, each
on the free tile nearest its placed neighbours) refined by simulated annealing (moves and swaps
within a shrinking window, VPR-style adaptive cooling) with a fixed seed, so the same graph,
fabric and seed always give the same placement. The through-traffic term is an estimate; the
router's negotiation still decides where each stream goes.
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
           "wirelength", "port_overflow", "host_side", "steiner_factor"]


# Through-traffic (see the module docstring): cost per stream beyond a window's link count, the
# streams a link may carry in the estimate, and the parallel links on either side in a window.
CONGESTION_WEIGHT = 20.0
LINK_CAPACITY = 1.0
WINDOW = 1

# Expected rectilinear Steiner tree length over the bounding box's half-perimeter, by terminal
# count (from C. E. Cheng's published table, as FPGA placers use it); linear between the points
# listed, and beyond 50 terminals growing by 0.02616 a terminal.
_STEINER_POINTS = ((3, 1.0), (4, 1.0828), (5, 1.1536), (6, 1.2206), (7, 1.2823), (8, 1.3385),
                   (9, 1.3991), (10, 1.4493), (15, 1.6899), (20, 1.8924), (25, 2.0743),
                   (30, 2.2334), (35, 2.3895), (40, 2.5356), (45, 2.6625), (50, 2.7933))


def steiner_factor(terminals: int) -> float:
    """Expected Steiner tree length of ``terminals`` points over their bounding box's half-perimeter."""
    if terminals <= 3:
        return 1.0
    last, factor = _STEINER_POINTS[-1]
    if terminals >= last:
        return factor + 0.02616 * (terminals - last)
    for (low, at_low), (high, at_high) in itertools.pairwise(_STEINER_POINTS):
        if terminals <= high:
            return at_low + (at_high - at_low) * (terminals - low) / (high - low)
    raise AssertionError(terminals)


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
    :func:`port_overflow`), so placements that cannot be routed are driven out first, +
    ``congestion_weight`` per stream of estimated through-traffic beyond a window of links'
    capacity (:meth:`_net_load`, the module docstring). With that term, a stream of several
    sinks has its bounding-box wirelength (:meth:`_box_wire`) instead of the star's.

    The inner loop runs hundreds of thousands of times per placement, so it works on integers:
    nodes and tiles are list indices, distances a matrix, and a link endpoint ("out" or "in" at
    a tile) is ``tile`` or ``tiles + tile``. The random choices are made from lists in the
    order of the names they stand for, so a seed gives the same placement as with names.
    """

    def __init__(self, graph, tiles, kind_tiles, distances, adjacency, rng, *, span, unreachable,
                 overflow_weight, shape, congestion_weight=0.0, capacity=1.0):
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
        self.box = congestion_weight > 0
        self.factor = [steiner_factor(len({source, *sinks})) for source, sinks in self.edges]
        self.unreachable = unreachable
        self.demand = [0] * (2 * len(grid))
        self.terms = [self._edge_terms(k) for k in range(len(self.edges))]   # kept current by _keep
        for _, keys in self.terms:
            for key in keys:
                self.demand[key] += 1
        self.congestion_weight = congestion_weight
        if congestion_weight:
            self._links_init(adjacency, shape, capacity)

    def cost(self) -> float:
        wire = sum(wire for wire, _ in self.terms)
        over = sum(max(0, demand - supply) for demand, supply in zip(self.demand, self.supply, strict=True))
        return wire + self.overflow_weight * over + self.congestion_weight * self.congestion()

    # --- through-traffic: each stream's expected load on the links of its bounding box ---------

    def _links_init(self, adjacency, shape, capacity):
        rows, cols = shape
        self.cols = cols
        # Loads are integers in units of 1/lcm(1..n) of a stream, so that spreading a stream over
        # any number of parallel links is exact and the incremental sums never drift.
        self.unit = math.lcm(*range(1, max(rows, cols) + 1))
        self.usable = {(tile[0] * cols + tile[1]) * 4 + side
                       for tile, links in adjacency.items() for side, _ in links}
        self.segment_cache, self.segments, self.segment_windows = {}, [], []
        self.load_cache = {}            # a stream's source and box -> its _net_load
        self.load = [0] * (rows * cols * 4)
        # A window: a usable link and its usable parallel neighbours within WINDOW rows (columns).
        self.windows_of = [[] for _ in self.load]
        self.window_cap, self.window_load = {}, {}
        for centre in sorted(self.usable):
            tile, side = divmod(centre, 4)
            row, col = divmod(tile, cols)
            step = cols * 4 if side in (1, 3) else 4
            members = [centre + offset * step for offset in range(-WINDOW, WINDOW + 1)
                       if 0 <= (row if side in (1, 3) else col) + offset < (rows if side in (1, 3) else cols)]
            members = [link for link in members if link in self.usable]
            self.window_cap[centre] = round(capacity * self.unit * len(members))
            self.window_load[centre] = 0
            for link in members:
                self.windows_of[link].append(centre)
        self.net_load = [self._net_load(k) for k in range(len(self.edges))]
        for loads in self.net_load:
            for segment in loads:
                links, amount = self.segments[segment]
                for link in links:
                    self.load[link] += amount
                    for centre in self.windows_of[link]:
                        self.window_load[centre] += amount

    def _segment(self, side, line, low, high) -> int:
        """The usable links leaving tiles of row or column ``line`` by ``side`` (E/W: rows
        ``low..high`` of column ``line``; N/S: columns ``low..high`` of row ``line``), as an index
        into ``segments``: (links, the share of a stream each carries if it crosses there once)."""
        key = (side, line, low, high)
        segment = self.segment_cache.get(key)
        if segment is None:
            cols = self.cols
            if side in (1, 3):
                links = [(row * cols + line) * 4 + side for row in range(low, high + 1)]
            else:
                links = [(line * cols + col) * 4 + side for col in range(low, high + 1)]
            links = tuple(link for link in links if link in self.usable)
            segment = self.segment_cache[key] = len(self.segments)
            share = self.unit // len(links) if links else 0
            self.segments.append((links, share))
            windows = {}            # what one more stream crossing here adds to each window
            for link in links:
                for centre in self.windows_of[link]:
                    windows[centre] = windows.get(centre, 0) + share
            self.segment_windows.append(tuple(windows.items()))
        return segment

    def _net_load(self, k: int) -> list:
        """Stream ``k``'s expected link load, as [(links, share of a stream on each)]: any route
        of it crosses every column boundary between its source and its farthest sink east (west)
        eastward (westward) at least once, and every row boundary likewise, and is as likely to
        cross in any row (column) of its bounding box."""
        bounds = self._bounds(k)
        load = self.load_cache.get(bounds)
        if load is None:
            top, left, row_low, row_high, col_low, col_high = bounds
            segment = self._segment
            load = self.load_cache[bounds] = (
                [segment(1, col, row_low, row_high) for col in range(left, col_high)]
                + [segment(3, col, row_low, row_high) for col in range(col_low + 1, left + 1)]
                + [segment(2, row, col_low, col_high) for row in range(top, row_high)]
                + [segment(0, row, col_low, col_high) for row in range(row_low + 1, top + 1)])
        return load

    def congestion(self) -> float:
        """Expected streams beyond the links' capacity, summed over links."""
        if not self.congestion_weight:
            return 0.0
        caps = self.window_cap
        return sum(max(0, load - caps[centre]) for centre, load in self.window_load.items()) / self.unit

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
        box = self.box and len(sinks) > 1
        row = self.dist[source]
        wire, arrivals = 0, []
        for sink in sinks:
            tile = pos[sink]
            if not box:
                wire += row[tile]
            if tile != source and tile not in arrivals:
                arrivals.append(tile)
        if box:
            wire = self._box_wire(k)
        if not arrivals:
            return wire, ()
        offset = len(self.grid)
        return wire, (source, *(offset + tile for tile in arrivals))

    def _box_wire(self, k: int) -> float:
        """Stream ``k``'s bounding-box wirelength: the half-perimeter of its terminals' box
        times :func:`steiner_factor` of its nodes (a node a stream feeds twice is one terminal),
        plus the unreachable penalty for each sink cut off."""
        source_node, sinks = self.edges[k]
        pos, unreachable = self.pos, self.unreachable
        row = self.dist[pos[source_node]]
        cut_off = sum(unreachable for sink in sinks if row[pos[sink]] >= unreachable)
        _, _, row_low, row_high, col_low, col_high = self._bounds(k)
        return self.factor[k] * (row_high - row_low + col_high - col_low) + cut_off

    def _bounds(self, k: int) -> tuple:
        """Stream ``k``'s source (row, column) and its terminals' box: rows low, high, columns
        low, high."""
        source_node, sinks = self.edges[k]
        grid, pos = self.grid, self.pos
        top, left = grid[pos[source_node]]
        row_low = row_high = top
        col_low = col_high = left
        for sink in sinks:
            row, col = grid[pos[sink]]
            if row < row_low:
                row_low = row
            elif row > row_high:
                row_high = row
            if col < col_low:
                col_low = col
            elif col > col_high:
                col_high = col
        return top, left, row_low, row_high, col_low, col_high

    def _move(self, name, tile, affected) -> tuple[int, dict]:
        """Move (or swap) ``name`` to ``tile``; return the cost change and the change of demand
        per link endpoint, which :meth:`_keep` applies if the move is kept.

        The affected streams' terms (kept per stream in ``terms``) are taken away, the nodes
        moved, and their new terms added; only link endpoints whose demand changes can change
        the overflow, and only windows whose streams' crossings change, the congestion."""
        terms, wire, change = self.terms, 0, {}
        for k in affected:
            old_wire, keys = terms[k]
            wire -= old_wire
            for key in keys:
                change[key] = change.get(key, 0) - 1
        self._relocate(name, tile)
        moved = {}
        for k in affected:
            new_wire, keys = moved[k] = self._edge_terms(k)
            wire += new_wire
            for key in keys:
                change[key] = change.get(key, 0) + 1
        over = 0
        demand, supply = self.demand, self.supply
        for key, diff in change.items():
            if diff:
                old, most = demand[key], supply[key]
                over += max(0, old + diff - most) - max(0, old - most)
        if not self.congestion_weight:
            return wire + self.overflow_weight * over, (change, moved, None)
        net_load, loads = self.net_load, {}
        crossings = {}                  # segment -> change of the streams crossing it
        for k in affected:
            old, new = net_load[k], self._net_load(k)
            if new is old or new == old:
                continue
            loads[k] = new
            for segment in old:
                crossings[segment] = crossings.get(segment, 0) - 1
            for segment in new:
                crossings[segment] = crossings.get(segment, 0) + 1
        window_change, segment_windows = {}, self.segment_windows
        get = window_change.get
        for segment, count in crossings.items():
            if count:
                for centre, amount in segment_windows[segment]:
                    window_change[centre] = get(centre, 0) + amount * count
        beyond, load, caps = 0, self.window_load, self.window_cap
        for centre, diff in window_change.items():
            old, cap = load[centre], caps[centre]
            new = old + diff
            if new > cap:
                beyond += new - cap
            if old > cap:
                beyond -= old - cap
        return (wire + self.overflow_weight * over + self.congestion_weight * beyond / self.unit,
                (change, moved, (loads, crossings, window_change)))

    def _keep(self, changes):
        change, moved, links = changes
        demand = self.demand
        for key, diff in change.items():
            demand[key] += diff
        for k, terms in moved.items():
            self.terms[k] = terms
        if links is not None:
            loads, crossings, window_change = links
            for k, new in loads.items():
                self.net_load[k] = new
            load, segments = self.load, self.segments
            for segment, count in crossings.items():
                links_crossed, amount = segments[segment]
                for link in links_crossed:
                    load[link] += amount * count
            load = self.window_load
            for centre, diff in window_change.items():
                load[centre] += diff

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


def place(spec: FabricSpec, graph: StreamGraph, *, seed: int = 0, effort: float = 1.0,
          congestion: bool = False) -> Placement:
    """Bind FU nodes to tiles (pins, kinds and failed tiles respected), minimising wirelength.

    ``effort`` scales the number of annealing moves; ``seed`` fixes their random choices.
    ``congestion`` adds the through-traffic term (module docstring): it spreads a dense graph
    so that streams can cross it, at 3-5x the annealing time, so the router asks for it only
    once plain placements have failed to route.
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
              overflow_weight=2 * (spec.rows + spec.cols), shape=(spec.rows, spec.cols),
              congestion_weight=CONGESTION_WEIGHT if congestion else 0.0,
              capacity=LINK_CAPACITY).run(effort)
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
