"""Two units to a tile: which PEs share a two-lane ``pe`` tile, and how its ports are mapped.

On a fabric with ``[pe] lanes = 2`` a tile runs two operators behind the tile's own three inputs
and two outputs (ripple_core/pe/lanes.py). A stream from one lane to the other, when that lane
is its only consumer, stays in the tile (an *internal* edge: no switch, no tile input or output,
and a token one cycle after its firing); every other stream leaves through a tile output and
comes in through a tile input, as between tiles. Two units may share a tile when at most one of
them needs the tile's memory (it takes lane 0) and what they exchange with the rest of the graph
fits the ports: at most 3 slots fed from outside and 2 ports read outside. A unit whose firings
need more than one micro-op takes a tile alone: the tile's micro-op completes only once both lanes
have made theirs, so grants split across micro-ops would make each lane wait on the other.

Pairing is a matching on the graph of units that may share a tile. Greedy, fewest options
first: the unit with the fewest possible partners picks the partner it shares the most internal
edges with, then the fewest options. On the RipTide suite and Ripple's workloads this leaves
about 0.5 to 0.6 tiles per operator (bench/results/ripple_suite.md); docs/ripple.md says why.
"""

from dataclasses import dataclass, field

from .pe import BANK_OPS, N_PORTS, N_SLOTS, SHARED_LOCK_OPS, port_map_word

__all__ = ["Tile", "UnitStreams", "pack_tiles", "needs_memory"]


def needs_memory(op: str) -> bool:
    """The operator reaches the tile's bank or its port to the shared memory (lane 0 only)."""
    return op in BANK_OPS or op in SHARED_LOCK_OPS


@dataclass
class UnitStreams:
    """What a unit exchanges: ``sources[slot]`` = (unit, port) feeding each edge slot, and
    ``sinks[port]`` = the (unit, slot) pairs a port feeds, with ``None`` for a host port."""
    sources: dict = field(default_factory=dict)
    sinks: dict = field(default_factory=dict)


@dataclass
class Tile:
    """One pe tile: ``lanes`` its units (lane 0 first; one or two), ``inputs`` (lane, slot) ->
    tile input, ``outputs`` (lane, port) -> tile output, ``internal`` the (lane, port) -> (lane,
    slot) edges that stay in the tile."""
    name: str
    lanes: tuple
    inputs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    internal: dict = field(default_factory=dict)

    def lane_of(self, unit: str) -> int:
        return self.lanes.index(unit)

    def port_map(self) -> int:
        """The tile's port map word (REG_PORTS)."""
        if len(self.lanes) == 1:
            return port_map_word()
        slots = {where: ("in", j) for where, j in self.inputs.items()}
        slots.update({(lane, slot): ("lane", port) for (_, port), (lane, slot) in self.internal.items()})
        return port_map_word(slots, {q: where for where, q in self.outputs.items()})


def _internal(streams: dict, producer: str, port: int, partner: str):
    """The partner's slot the port feeds if that is the port's only consumer, else None."""
    sinks = streams[producer].sinks.get(port, [])
    if len(sinks) == 1 and sinks[0] is not None and sinks[0][0] == partner:
        return sinks[0][1]
    return None


def _external(streams: dict, unit: str, partner: str | None) -> tuple[list, list]:
    """The unit's slots fed from outside the tile and its ports read outside it."""
    own = streams[unit]
    slots = [slot for slot, (source, port) in sorted(own.sources.items())
             if partner is None or source != partner or _internal(streams, partner, port, unit) != slot]
    ports = [port for port, sinks in sorted(own.sinks.items())
             if sinks and (partner is None or _internal(streams, unit, port, partner) is None)]
    return slots, ports


def _fits(streams: dict, ops: dict, a: str, b: str) -> bool:
    if needs_memory(ops[a]) and needs_memory(ops[b]):
        return False
    slots_a, ports_a = _external(streams, a, b)
    slots_b, ports_b = _external(streams, b, a)
    return len(slots_a) + len(slots_b) <= N_SLOTS and len(ports_a) + len(ports_b) <= N_PORTS


def _shared_edges(streams: dict, a: str, b: str) -> int:
    return sum(_internal(streams, x, port, y) is not None
               for x, y in ((a, b), (b, a)) for port in streams[x].sinks)


def pack_tiles(units: list[str], ops: dict, streams: dict, lanes: int, *, alone=frozenset()) -> list[Tile]:
    """The tiles of ``units`` (names in program order; ``ops`` their operators, ``streams`` their
    :class:`UnitStreams`): one unit each with one lane, else pairs as the module docstring says.
    The units of ``alone`` get no partner (ripple_core.lower: those with more firings than one
    micro-op grants)."""
    if lanes == 1:
        return [_single(unit, streams) for unit in units]
    order = {unit: index for index, unit in enumerate(units)}
    partners = {unit: set() for unit in units}
    for index, a in enumerate(units):
        for b in units[index + 1:]:
            if a not in alone and b not in alone and _fits(streams, ops, a, b):
                partners[a].add(b)
                partners[b].add(a)
    paired, tiles = {}, []
    free = set(units)
    while free:
        unit = min(free, key=lambda u: (len(partners[u] & free), order[u]))
        options = partners[unit] & free
        free.discard(unit)
        if not options:
            continue
        partner = max(options, key=lambda v: (_shared_edges(streams, unit, v), -len(partners[v] & free),
                                              -order[v]))
        free.discard(partner)
        paired[unit], paired[partner] = partner, unit
    done = set()
    for unit in units:
        if unit in done:
            continue
        partner = paired.get(unit)
        if partner is None:
            tiles.append(_single(unit, streams))
            done.add(unit)
            continue
        first, second = sorted((unit, partner), key=lambda u: (not needs_memory(ops[u]), order[u]))
        tiles.append(_pair(first, second, streams))
        done |= {unit, partner}
    return tiles


def _single(unit: str, streams: dict) -> Tile:
    """A tile of one unit: its slot k is tile input k and its port q tile output q."""
    own = streams[unit]
    return Tile(unit, (unit,), {(0, slot): slot for slot in own.sources},
                {(0, port): port for port, sinks in own.sinks.items() if sinks})


def _pair(first: str, second: str, streams: dict) -> Tile:
    tile = Tile(f"{first}&{second}", (first, second))
    for lane, (unit, partner) in enumerate(((first, second), (second, first))):
        for port in sorted(streams[unit].sinks):
            slot = _internal(streams, unit, port, partner)
            if slot is not None:
                tile.internal[lane, port] = (1 - lane, slot)
    for lane, (unit, partner) in enumerate(((first, second), (second, first))):
        slots, ports = _external(streams, unit, partner)
        for slot in slots:
            tile.inputs[lane, slot] = len(tile.inputs)
        for port in ports:
            tile.outputs[lane, port] = len(tile.outputs)
    assert len(tile.inputs) <= N_SLOTS and len(tile.outputs) <= N_PORTS, tile
    return tile
