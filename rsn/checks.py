"""Static checks of an RSN program, run before any image is produced.

A program that passes them has micro-ops every unit accepts, token counts that agree along every
stream, every used port fed or drained by exactly one stream, no cyclic wait between functional
units, a placement that respects the fabric, and routes that are connected trees with one writer
per switch output (per phase, for a program in phases: docs/rsn-phases.md). Each failure raises
:class:`ProgramError` naming the stream, node, tile and numbers involved. The routing check
re-derives everything from the fabric, so it verifies the router rather than trusting it.
"""

from rsn import isa
from rsn.fabric_spec import DIRECTIONS, FabricError, FabricSpec
from rsn.fu_kinds import UnknownKindError, find_kind, fu_kind, fu_kinds, kind_names
from rsn.graph import HOST_KINDS, StreamGraph

__all__ = ["ProgramError", "MAX_BEATS", "tokens_per_port", "node_tokens", "check_ops",
           "check_host_ports", "check_pins", "check_phases", "check_tokens", "check_cycles", "check_program",
           "check_placement", "check_routing"]

# The most tokens a counted stream carries: one switch micro-op's beats, its high bits included.
MAX_BEATS = (1 << isa.field_width(isa.SwitchUop, "beats")) - 1
_FU_BASE = 4                    # switch input 4+k = FU output k; switch output 4+k = FU input k


class ProgramError(ValueError):
    """A program breaks a static rule; the message names where and how to fix it."""


def tokens_per_port(kind: str, uops) -> tuple[list[int], list[int]]:
    """(tokens consumed per input port, tokens produced per output port) by an FU's micro-ops;
    None for every port of a kind whose counts depend on the data."""
    try:
        descriptor = fu_kind(kind)
    except UnknownKindError:
        kinds = ", ".join(kind_names())
        raise ProgramError(f"kind {kind!r} has no micro-ops; FU kinds are {kinds}") from None
    if descriptor.data_dependent:
        return [None] * descriptor.n_in, [None] * descriptor.n_out
    try:
        return descriptor.tokens(list(uops))
    except ValueError as error:
        raise ProgramError(str(error)) from None


def node_tokens(node, phase: int | None = None) -> tuple[list[int], list[int]]:
    """:func:`tokens_per_port` for any node (of its micro-ops in ``phase``, or all of them): host
    nodes send or expect their ``tokens``."""
    if node.kind == "host_in":
        return [], [node.tokens]
    if node.kind == "host_out":
        return [node.tokens], []
    return tokens_per_port(node.kind, node.uops if phase is None else node.uops_in(phase))


def _check_uop(node, index: int, uop: dict, spec: FabricSpec | None):
    where = f"node {node.name!r} ({node.kind}) micro-op {index}"
    kind = fu_kind(node.kind)
    try:
        isa.encode(kind.uop_layout, uop)
    except isa.IsaError as error:
        raise ProgramError(f"{where}: {error}") from None
    parameters = spec.parameters(kind.name) if spec is not None else kind.parameters()
    try:
        kind.check_uop(uop, parameters)
        counts = kind.count_fields(uop)
    except ValueError as error:
        raise ProgramError(f"{where}: {error}") from None
    for name in counts:
        if uop.get(name, 0) == 0:
            raise ProgramError(f"{where}: {name} is 0; counts must be at least 1")


def check_ops(graph: StreamGraph, spec: FabricSpec | None = None):
    """Every micro-op encodes for its FU kind, counts are non-zero, vector lengths fit the mac's
    buffer. Mem addresses are not range-checked: the bank wraps them modulo ``mem_depth``."""
    for node in graph.nodes.values():
        if node.kind in HOST_KINDS:
            if isinstance(node.tokens, bool) or not isinstance(node.tokens, int) or node.tokens < 1:
                raise ProgramError(f"host node {node.name!r}: tokens={node.tokens!r} must be >= 1")
            continue
        if node.kind not in kind_names():
            raise ProgramError(f"node {node.name!r}: kind {node.kind!r} is not one of "
                               f"{', '.join(kind_names() + HOST_KINDS)}")
        if not node.uops:
            raise ProgramError(f"node {node.name!r} ({node.kind}) has no micro-ops; give it work or "
                               f"remove it")
        for index, uop in enumerate(node.uops):
            _check_uop(node, index, uop, spec)


def check_host_ports(spec: FabricSpec, graph: StreamGraph):
    """Host nodes name existing, working ports of their direction, each port used once."""
    users = {}
    for node in graph.host_nodes():
        try:
            port = spec.host_port(node.port)
        except FabricError as error:
            raise ProgramError(f"host node {node.name!r}: {error}") from None
        wanted = "in" if node.kind == "host_in" else "out"
        if port.direction != wanted:
            raise ProgramError(f"host node {node.name!r} ({node.kind}) uses host port {port.name!r}, "
                               f"an {port.direction!r} port; use an {wanted!r} port")
        if port.name in users:
            raise ProgramError(f"host port {port.name!r} is used by nodes {users[port.name]!r} and "
                               f"{node.name!r}; a host port carries one stream")
        if port.tile in spec.failed_tiles or spec.link_failed(port.tile, port.side):
            raise ProgramError(f"host node {node.name!r}: host port {port.name!r} on tile "
                               f"{port.tile} side {port.side} is failed")
        users[port.name] = node.name


def check_pins(spec: FabricSpec, graph: StreamGraph):
    """Pinned nodes sit on working tiles of their kind, one node per tile."""
    pinned = {}
    for node in graph.fu_nodes():
        if node.tile is None:
            continue
        tile = tuple(node.tile)
        if not (0 <= tile[0] < spec.rows and 0 <= tile[1] < spec.cols):
            raise ProgramError(f"node {node.name!r} is pinned to tile {tile}, outside the "
                               f"{spec.rows}x{spec.cols} grid")
        if spec.kind(tile) != node.kind:
            raise ProgramError(f"node {node.name!r} ({node.kind}) is pinned to tile {tile}, which is a "
                               f"{spec.kind(tile)} tile")
        if tile in spec.failed_tiles:
            raise ProgramError(f"node {node.name!r} is pinned to failed tile {tile}")
        if tile in pinned:
            raise ProgramError(f"nodes {pinned[tile]!r} and {node.name!r} are both pinned to tile "
                               f"{tile}; a tile has one FU")
        pinned[tile] = node.name


def check_tokens(graph: StreamGraph):
    """Every used port carries exactly one stream, and counts agree along every stream."""
    feeds = {}          # (node, "i"/"o", port, phase) -> streams
    for edge in graph.edges:
        feeds.setdefault((edge.source[0], "o", edge.source[1], edge.phase), []).append(edge)
        for name, port in edge.sinks:
            feeds.setdefault((name, "i", port, edge.phase), []).append(edge)
    for (name, direction, port, _), edges in feeds.items():
        if name not in graph.nodes:
            raise ProgramError(f"stream {edges[0]} names node {name!r}, which is not in the graph")
        if len(edges) > 1:
            what = "output" if direction == "o" else "input"
            raise ProgramError(f"{name}.{direction}{port} is connected {len(edges)} times "
                               f"({'; '.join(map(str, edges))}); a {what} port carries exactly one "
                               f"stream (fan out with one multicast stream instead)")
    for node in graph.nodes.values():
        phases = sorted(set(node.phase_of_uops())) if not node.is_host else [None]
        for phase in phases:
            consumed, produced = node_tokens(node, phase)
            for direction, counts in (("i", consumed), ("o", produced)):
                for port, tokens in enumerate(counts):
                    fed = any(key[:3] == (node.name, direction, port) and phase in (None, key[3])
                              for key in feeds)
                    if tokens and not fed:
                        verb = "consumes" if direction == "i" else "produces"
                        raise ProgramError(f"node {node.name!r} ({node.kind}) {verb} {tokens} tokens on "
                                           f"{node.name}.{direction}{port}{_in_phase(graph, phase)} but no "
                                           f"stream is connected there; connect one")
    for edge in graph.edges:
        _check_edge_tokens(graph, edge)


def _check_edge_tokens(graph: StreamGraph, edge):
    if edge.tokens is None:
        _check_open_edge(graph, edge)
        return
    if not 1 <= edge.tokens <= MAX_BEATS:
        raise ProgramError(f"stream {edge} carries {edge.tokens:,} tokens; a counted stream carries 1.."
                           f"{MAX_BEATS:,} (one switch micro-op's beats); give it less data (several "
                           f"runs), or leave it open (tokens=None) if it joins units whose counts "
                           f"depend on the data")
    name, port = edge.source
    node = graph.nodes[name]
    if port >= node.n_out:
        raise ProgramError(f"stream {edge}: node {name!r} ({node.kind}) has no output {port}")
    produced = node_tokens(node, edge.phase)[1][port]
    if _host_in_phases(graph, node) and produced is not None and produced != edge.tokens:
        raise ProgramError(f"stream {edge} carries {edge.tokens} tokens but node {name!r} "
                           f"({node.kind}) produces {produced} on "
                           f"{name}.o{port}{_in_phase(graph, edge.phase)}")
    for sink, port in edge.sinks:
        node = graph.nodes[sink]
        if port >= node.n_in:
            raise ProgramError(f"stream {edge}: node {sink!r} ({node.kind}) has no input {port}")
        consumed = node_tokens(node, edge.phase)[0][port]
        if _host_in_phases(graph, node) and consumed is not None and consumed != edge.tokens:
            raise ProgramError(f"stream {edge} carries {edge.tokens} tokens but node {sink!r} "
                               f"({node.kind}) consumes {consumed} on "
                               f"{sink}.i{port}{_in_phase(graph, edge.phase)}")


def _in_phase(graph: StreamGraph, phase) -> str:
    """" in phase p" for messages about a phased graph, nothing for a single-phase one."""
    return f" in phase {phase}" if graph.phased and phase is not None else ""


def _host_in_phases(graph: StreamGraph, node) -> bool:
    """Whether a stream's count is compared with ``node``'s own: always for an FU (per phase), and
    for a host node with one stream; a host node with streams in several phases is compared with
    their sum by :func:`check_phases`."""
    if not node.is_host:
        return True
    return sum(edge.source[0] == node.name or node.name in (sink for sink, _ in edge.sinks)
               for edge in graph.edges) <= 1


def _check_open_edge(graph: StreamGraph, edge):
    """An open stream (no count: a static route) joins units whose counts depend on the data
    and that run open: a counted end would wait for a count the stream cannot promise."""
    ends = [(edge.source[0], edge.source[1], True)] + [(name, port, False) for name, port in edge.sinks]
    for name, port, output in ends:
        node = graph.nodes[name]
        if node.kind in HOST_KINDS:
            raise ProgramError(f"stream {edge} is open (tokens=None), but {name!r} is a host port, which "
                               f"sends or expects a count; give the stream its token count")
        if port >= (node.n_out if output else node.n_in):
            side = "output" if output else "input"
            raise ProgramError(f"stream {edge}: node {name!r} ({node.kind}) has no {side} {port}")
        consumed, produced = node_tokens(node)
        counted = (produced if output else consumed)[port]
        if counted is not None:
            raise ProgramError(f"stream {edge} is open (tokens=None), but node {name!r} ({node.kind}) "
                               f"{'produces' if output else 'consumes'} exactly {counted} tokens there; "
                               f"give the stream that count")


def _starts_late(node, port: int) -> bool:
    """An input the kind reads only after its first output (an ``xbar`` input one timestep late)
    is not waited for at the start: a cycle through it is a recurrence, not a wait."""
    kind = find_kind(node.kind)
    return kind is not None and port in kind.late_inputs(node.uops)


def cyclic_kinds() -> tuple[str, ...]:
    """Kinds whose units may wait on each other in a cycle (``FuKind.cyclic``): a dataflow
    operator fires token by token by its own rule, so a loop of them is how a program iterates,
    and it makes progress whenever the rules do, which the golden model establishes for the
    program's data. Every other kind runs counted micro-ops that consume whole blocks before
    producing, so a cycle through one of them deadlocks."""
    return tuple(name for name, kind in fu_kinds().items() if kind.cyclic)


def _successors(graph: StreamGraph, phase: int) -> dict[str, list[str]]:
    successors = {node.name: [] for node in graph.fu_nodes()}
    for edge in graph.edges:
        if edge.source[0] in successors and edge.phase == phase:
            for sink, port in edge.sinks:
                if _starts_late(graph.nodes[sink], port):
                    continue
                if sink in successors and sink not in successors[edge.source[0]]:
                    successors[edge.source[0]].append(sink)
    return successors


def _cycle_through(start: str, successors: dict[str, list[str]]) -> list[str] | None:
    """A shortest cycle through ``start`` (as a path that ends at ``start`` again), or None."""
    parents, frontier = {start: None}, [start]
    while frontier:
        following = []
        for name in frontier:
            for target in successors[name]:
                if target == start:
                    path = [name]
                    while parents[path[-1]] is not None:
                        path.append(parents[path[-1]])
                    return path[::-1] + [start]
                if target not in parents:
                    parents[target] = name
                    following.append(target)
        frontier = following
    return None


def check_cycles(graph: StreamGraph):
    """No FU waits, through streams, on its own output, unless every unit on the cycle is of a
    kind in :func:`cyclic_kinds` (ordered-dataflow PEs, whose loops are the normal case).

    In a phased graph, each phase on its own: every wait of a unit or a switch is on its own phase
    or an earlier one (:func:`check_phases` keeps every unit's micro-ops in phase order, the
    router every switch's), so a cycle of waits cannot leave a phase."""
    allowed = cyclic_kinds()
    for phase in graph.phases():
        _check_cycles_in(graph, phase, allowed)


def _check_cycles_in(graph: StreamGraph, phase: int, allowed):
    successors = _successors(graph, phase)
    for node in graph.fu_nodes():
        if node.kind in allowed:
            continue
        cycle = _cycle_through(node.name, successors)
        if cycle is not None:
            kinds = ", ".join(f"{name} ({graph.nodes[name].kind})" for name in cycle[:-1])
            raise ProgramError(f"cyclic wait between functional units{_in_phase(graph, phase)}: "
                               f"{' -> '.join(cycle)} [{kinds}]; "
                               f"each waits for the tokens of the one before it, so the cycle "
                               f"deadlocks; break it (e.g. through a mem node in a later program). "
                               f"Only cycles made of {', '.join(allowed) or 'no'} nodes alone are allowed")


def check_phases(graph: StreamGraph):
    """The rules that let streams of different phases share ports, links and units
    (docs/rsn-phases.md): every unit's micro-ops in phase order; a host node fed or drained in
    several phases carries the sum of their counts. A unit output may feed different sinks in
    different phases: the later route's switch micro-ops are fenced wherever it reads an input the
    earlier one read (:func:`rsn.route.switch_uops`), so it issues only after the earlier stream's
    last token has left every such switch, and the unit, whose micro-ops run in phase order,
    produces the later stream's tokens only after the earlier one's."""
    for edge in graph.edges:
        if isinstance(edge.phase, bool) or not isinstance(edge.phase, int) or edge.phase < 0:
            raise ProgramError(f"stream {edge}: phase {edge.phase!r} must be an integer >= 0")
    for node in graph.fu_nodes():
        phases = node.phase_of_uops()
        for index in range(1, len(phases)):
            if phases[index] < phases[index - 1]:
                raise ProgramError(
                    f"node {node.name!r} ({node.kind}) micro-op {index} is in phase {phases[index]}, "
                    f"after a micro-op of phase {phases[index - 1]}; a unit runs its micro-ops in order, "
                    f"so the later phase would wait for the earlier one and the earlier for the later; "
                    f"add each node's micro-ops in phase order")
    for node in graph.host_nodes():
        streams = [edge for edge in graph.edges if edge.source[0] == node.name
                   or node.name in (sink for sink, _ in edge.sinks)]
        if len(streams) > 1 and sum(edge.tokens or 0 for edge in streams) != node.tokens:
            raise ProgramError(f"host node {node.name!r} has streams in several phases carrying "
                               f"{' + '.join(str(edge.tokens) for edge in streams)} tokens, but declares "
                               f"{node.tokens}; declare their sum")


def check_program(spec: FabricSpec, graph: StreamGraph):
    """All checks that need no placement, cheapest and most basic first."""
    check_ops(graph, spec)
    check_host_ports(spec, graph)
    check_pins(spec, graph)
    check_phases(graph)
    check_tokens(graph)
    check_cycles(graph)


def check_placement(spec: FabricSpec, graph: StreamGraph, placement):
    """Each FU node on a working tile of its kind (its pin if it has one), one node per tile."""
    taken = {}
    for node in graph.nodes.values():
        tile = placement.tiles.get(node.name)
        if tile is None:
            raise ProgramError(f"node {node.name!r} has no tile in the placement")
        if node.is_host:
            port = spec.host_port(node.port)
            if tile != port.tile:
                raise ProgramError(f"host node {node.name!r} is placed on {tile}, not on tile {port.tile} "
                                   f"of its port {port.name!r}")
            continue
        if not (0 <= tile[0] < spec.rows and 0 <= tile[1] < spec.cols):
            raise ProgramError(f"node {node.name!r} is placed on {tile}, outside the grid")
        if spec.kind(tile) != node.kind:
            raise ProgramError(f"node {node.name!r} ({node.kind}) is placed on tile {tile}, a "
                               f"{spec.kind(tile)} tile")
        if tile in spec.failed_tiles:
            raise ProgramError(f"node {node.name!r} is placed on failed tile {tile}")
        if node.tile is not None and tuple(node.tile) != tile:
            raise ProgramError(f"node {node.name!r} is pinned to {tuple(node.tile)} but placed on {tile}")
        if tile in taken:
            raise ProgramError(f"nodes {taken[tile]!r} and {node.name!r} are both placed on tile {tile}")
        taken[tile] = node.name


def _endpoint(spec: FabricSpec, graph: StreamGraph, placement, ref) -> tuple:
    name, port = ref
    node = graph.nodes[name]
    if node.is_host:
        host = spec.host_port(node.port)
        return host.tile, DIRECTIONS.index(host.side)
    return placement.tiles[name], _FU_BASE + port


def _check_tree(spec: FabricSpec, graph: StreamGraph, placement, edge, hops) -> None:
    """The hops of ``edge`` form a tree over working links from its source to exactly its sinks."""
    by_tile = {}
    for hop in hops:
        if hop.tile in by_tile:
            raise ProgramError(f"stream {edge} enters tile {hop.tile} twice; a route is a tree")
        if hop.tile in spec.failed_tiles:
            raise ProgramError(f"stream {edge} passes through failed tile {hop.tile}")
        by_tile[hop.tile] = hop
    source_tile, source_input = _endpoint(spec, graph, placement, edge.source)
    root = by_tile.get(source_tile)
    if root is None or root.input != source_input:
        raise ProgramError(f"stream {edge} does not start at tile {source_tile} switch input "
                           f"{source_input} (its source)")
    reached, exits, pending = {source_tile}, set(), [source_tile]
    while pending:
        tile = pending.pop()
        for output in by_tile[tile].outputs:
            other = spec.neighbour(tile, DIRECTIONS[output]) if output < _FU_BASE else None
            if other is None:
                exits.add((tile, output))
                continue
            if spec.link_failed(tile, DIRECTIONS[output]):
                raise ProgramError(f"stream {edge} uses failed link {tile} {DIRECTIONS[output]}")
            following = by_tile.get(other)
            if following is None or following.input != (output + 2) % 4 or other in reached:
                raise ProgramError(f"stream {edge} leaves tile {tile} by {DIRECTIONS[output]} but "
                                   f"tile {other} does not continue it from {DIRECTIONS[(output + 2) % 4]}")
            reached.add(other)
            pending.append(other)
    if reached != set(by_tile):
        raise ProgramError(f"stream {edge} has hops at {sorted(set(by_tile) - reached)} that its source "
                           f"does not reach")
    wanted = {_endpoint(spec, graph, placement, sink) for sink in edge.sinks}
    if exits != wanted:
        raise ProgramError(f"stream {edge} ends at (tile, switch output) {sorted(exits)}, but its "
                           f"sinks are at {sorted(wanted)}")


def _hops_in_issue_order(routes) -> dict:
    """tile -> [(phase, hop, stream)] in the order its switch micro-ops must come."""
    per_tile = {}
    for route in sorted(routes, key=lambda route: route.edge.phase):      # stable: program order
        for hop in route.hops:
            per_tile.setdefault(hop.tile, []).append((route.edge.phase, hop, route.edge))
    return per_tile


def _fenced_phases(per_tile: dict) -> dict:
    """tile -> {phase: index of the micro-op that must carry the fence}: the first of each phase
    in which a route of the tile reads an input that the tile's latest route of an earlier phase
    on that input read, without taking every output that route took."""
    fenced = {}
    for tile, entries in per_tile.items():
        first, earlier, current = {}, {}, {}    # input -> outputs of earlier phases / this phase
        for index, (phase, hop, _) in enumerate(entries):
            if phase not in first:
                first[phase] = index
                earlier.update(current)
                current = {}
            before = earlier.get(hop.input)
            if before is not None and not before <= set(hop.outputs):
                fenced.setdefault(tile, {})[phase] = first[phase]
            current[hop.input] = set(hop.outputs)
    return fenced


def _expected_switch_uops(routes) -> dict:
    per_tile = _hops_in_issue_order(routes)
    fenced = _fenced_phases(per_tile)
    expected = {}
    for tile, entries in per_tile.items():
        fences = set(fenced.get(tile, {}).values())
        uops = []
        for index, (_, hop, edge) in enumerate(entries):
            select = [isa.NO_INPUT] * isa.SWITCH_OUTPUTS
            for output in hop.outputs:
                select[output] = hop.input
            uops.append({"beats": edge.tokens or 0, "enable": sum(1 << output for output in hop.outputs),
                         "select": select, "last": int(index == len(entries) - 1),
                         **({"fence": 1} if index in fences else {})})
        expected[tile] = uops
    return expected


def _fenced_in(routing, per_tile: dict, tile, phase) -> bool:
    """Whether the given micro-ops of ``tile`` fence ``phase`` there: the phase's first micro-op
    (which comes right after the tile's routes of earlier phases) carries the fence."""
    uops = routing.switch_uops.get(tile, [])
    start = next(index for index, (other, _, _) in enumerate(per_tile[tile]) if other == phase)
    return start < len(uops) and bool(uops[start].get("fence"))


def check_routing(spec: FabricSpec, graph: StreamGraph, routing):
    """Routes are trees from source to sinks over working links, each switch output (link, FU
    input or host port) has one writer per phase, and micro-ops match the hops.

    Routes of one phase are held together (circuit switching), so every pair of them overlaps
    in time: "one writer per link per micro-op" means one stream per switch output and phase.
    Routes of different phases may share an output: its micro-ops issue in phase order, and a
    route issues only once the output's earlier route has carried all its beats. They may share
    an input if the later route's micro-op there comes behind a fence (it issues only once every
    counted route of the switch has ended), or, unfenced, if its outputs include all of the
    earlier's there (its issue then waits until every output of the earlier route has ended):
    either way it never sees the earlier stream's tokens (docs/rsn-phases.md).
    """
    placement = routing.placement
    if len(routing.routes) != len(graph.edges):
        raise ProgramError(f"routing has {len(routing.routes)} routes for {len(graph.edges)} streams")
    for edge, route in zip(graph.edges, routing.routes, strict=True):
        if route.edge != edge:
            raise ProgramError(f"routes are not in program order: found {route.edge} where {edge} is")
    writers, readers, latest = {}, {}, {}
    per_tile = _hops_in_issue_order(routing.routes)
    for route in sorted(routing.routes, key=lambda route: route.edge.phase):
        edge = route.edge
        _check_tree(spec, graph, placement, edge, route.hops)
        for hop in route.hops:
            if (hop.tile, hop.input, edge.phase) in readers:
                raise ProgramError(f"tile {hop.tile} switch input {hop.input} is read by streams "
                                   f"{readers[hop.tile, hop.input, edge.phase]} and {edge}")
            readers[hop.tile, hop.input, edge.phase] = edge
            before = latest.get((hop.tile, hop.input))
            if (before is not None and before[0].phase < edge.phase and not set(before[1]) <= set(hop.outputs)
                    and not _fenced_in(routing, per_tile, hop.tile, edge.phase)):
                raise ProgramError(
                    f"tile {hop.tile} switch input {hop.input} is read by stream {before[0]} (outputs "
                    f"{list(before[1])}) and later by {edge} (outputs {list(hop.outputs)}) with no "
                    f"fence between them; a later route on a shared input must come behind a fenced "
                    f"switch micro-op (or take every output of the earlier one), or it may issue while "
                    f"the earlier route still carries tokens and take some of them")
            latest[hop.tile, hop.input] = (edge, hop.outputs)
            for output in hop.outputs:
                if (hop.tile, output, edge.phase) in writers:
                    raise ProgramError(
                        f"tile {hop.tile} switch output {output} has two writers: streams "
                        f"{writers[hop.tile, output, edge.phase]} and {edge}; one writer per link per "
                        f"micro-op")
                writers[hop.tile, output, edge.phase] = edge
    expected = _expected_switch_uops(routing.routes)
    for tile in sorted(set(expected) | set(routing.switch_uops)):
        got, wanted = routing.switch_uops.get(tile, []), expected.get(tile, [])
        if got != wanted:
            raise ProgramError(f"tile {tile}: switch micro-ops {got} do not match its hops, which "
                               f"need {wanted}")
        for index, uop in enumerate(got):
            try:
                isa.encode(isa.SwitchUop, uop)
            except isa.IsaError as error:
                raise ProgramError(f"tile {tile} switch micro-op {index}: {error}") from None
    for node in graph.fu_nodes():
        tile = placement.tiles[node.name]
        wanted = [{**uop, "last": int(index == len(node.uops) - 1)} for index, uop in enumerate(node.uops)]
        if routing.fu_uops.get(tile) != wanted:
            raise ProgramError(f"tile {tile}: FU micro-ops {routing.fu_uops.get(tile)} are not node "
                               f"{node.name!r}'s with last on the final one: {wanted}")
