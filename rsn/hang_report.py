"""Why a fabric hangs, in one report: the same lines from the golden model and from the RTL.

A hang alone does not say whether the program or the hardware is wrong. Both can say where the
tokens stopped: every tile has two diagnostic registers (``fu_ports``, ``switch_ports`` in
:data:`rsn.isa.REGISTERS`) that tell how many tokens wait in front of each FU input, which FU
outputs and switch ports are blocked; the RTL bench reads them once the watchdog fires, and the
golden model (:class:`rsn.model.FabricModel`) computes the same values from its channels when
it deadlocks. This module turns such a snapshot per tile, and the program's switch micro-ops
(place & route's circuits), into report lines, so a model line and an RTL line about the same
tile can be compared as text. A pipeline in0 -> ID -> ADD -> out0 whose ADD was granted 2 of
the stream's 24 firings (queue_depth 2) reports::

    tile [0, 0] pe ID: waiting, 9 of 24 firings; slot 0 holds 4 (full); output 0 blocked by
        tile [0, 1] slot 0 (full, 4 tokens)
    tile [0, 1] pe ADD: finished, 2 of 2 firings; slot 0 holds 4 (full)
    host input 'in0': 13 of 24 tokens taken; blocked by tile [0, 0] slot 0 (full, 4 tokens)

(each on one line): the ADD stopped, its full input holds up the ID, whose full input holds up
the host.

"Blocked by" follows the circuit from a blocked output (or a host input with tokens left) to
the input slots it feeds, and names those that are full: the unit there stopped taking tokens.
A slot counts its token queue and the skid buffer of the switch output in front of it (the
model's FU input channel is both), so its capacity is ``queue_depth + 2``.

What each side knows: the RTL's values are sampled in a state where nothing has moved for the
watchdog's limit, so "valid and not ready" is "holds a token"; the model has no cycles and
reports "holds a token" directly. The model also knows what the RTL cannot read when the
control chain itself is blocked (the reads then never come back: such tiles are listed as not
read back). Where the two may legitimately differ: a kind whose RTL holds tokens in a pipeline
the model does not have, and a kind that counts a firing when its token leaves rather than when
it is made (``mem``: a word blocked in its output register is counted by the model only). The
blocked relations do not depend on either, which is why they are the report's point.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from .assemble import read_packet
from .fabric_spec import DIRECTIONS
from .fu_kinds import fu_kind
from .isa import REGISTERS, SWITCH_OUTPUTS, FuPortState, SwitchPortState, decode

__all__ = ["LINK_CAPACITY", "STATUS_SWITCH_FINISHED", "STATUS_FU_FINISHED", "STATUS_STALLED",
           "diagnostic_addresses", "diagnostic_reads", "TileSnapshot", "snapshots_from_readback",
           "Circuits", "HangReport", "hang_report"]

LINK_CAPACITY = 2               # tokens in a switch output's SkidBuffer
FU_PORT_BASE = 4                # switch input 4+k = FU output k; switch output 4+k = FU input k
STATUS_SWITCH_FINISHED, STATUS_FU_FINISHED, STATUS_STALLED = 1, 2, 4
_TILE_REGISTERS = (REGISTERS["status"], REGISTERS["firings"], REGISTERS["fu_ports"],
                   REGISTERS["switch_ports"])


def diagnostic_addresses(spec, tile) -> list[int]:
    """The registers a hang report reads of ``tile``: status, firings, the two diagnostic
    registers, then the ones its FU kind describes its configuration with."""
    return [*_TILE_REGISTERS, *fu_kind(spec.kind(tile)).describe_registers]


def diagnostic_reads(spec, tiles) -> tuple[list[int], list[tuple]]:
    """READ packets for the diagnostic registers of ``tiles``, and their layout: (tile,
    addresses) per tile, in the order the values come back."""
    words, layout = [], []
    for tile in tiles:
        addresses = diagnostic_addresses(spec, tile)
        words += read_packet(tile, addresses)
        layout.append((tuple(tile), addresses))
    return words, layout


@dataclass(frozen=True)
class TileSnapshot:
    """One tile's diagnostic registers: ``values`` maps register address to the value read."""
    spec: object
    tile: tuple[int, int]
    values: dict

    @property
    def kind(self):
        return fu_kind(self.spec.kind(self.tile))

    @property
    def status(self) -> int:
        return self.values[REGISTERS["status"]]

    @property
    def firings(self) -> int:
        return self.values[REGISTERS["firings"]]

    @property
    def fu_ports(self) -> dict:
        return decode(FuPortState, self.values[REGISTERS["fu_ports"]])

    @property
    def switch_ports(self) -> dict:
        return decode(SwitchPortState, self.values[REGISTERS["switch_ports"]])

    def slot_tokens(self, k: int) -> int:
        """Tokens waiting for FU input ``k``: its token queue and the switch buffer before it."""
        return self.fu_ports["queued"][k] + self.switch_ports["held"][FU_PORT_BASE + k]

    def slot_full(self, k: int) -> bool:
        return (self.fu_ports["queued"][k] == self.spec.queue_depth
                and self.switch_ports["held"][FU_PORT_BASE + k] == LINK_CAPACITY)

    @property
    def description(self) -> str | None:
        """What the FU kind's ``describe_config`` makes of its registers (None: no hook)."""
        kind = self.kind
        if kind.describe_config is None:
            return None
        return kind.describe_config(tuple(self.values[address] for address in kind.describe_registers))


def snapshots_from_readback(spec, layout, words) -> dict:
    """Tile -> :class:`TileSnapshot` from the values of :func:`diagnostic_reads`' packets; a tile
    whose values did not all come back is left out."""
    snapshots, at = {}, 0
    for tile, addresses in layout:
        values = words[at:at + len(addresses)]
        if len(values) < len(addresses):
            break
        snapshots[tuple(tile)] = TileSnapshot(spec, tuple(tile), dict(zip(addresses, values, strict=True)))
        at += len(addresses)
    return snapshots


class Circuits:
    """Where tokens go, from the program's switch micro-ops (tile -> micro-op field dicts, as
    place & route emits them or as an image decodes): each switch input's outputs, each
    output's inputs, joined across links and host ports.

    Endpoints are ``("slot", tile, k)`` (FU input k), ``("output", tile, k)`` (FU output k) and
    ``("host", name)``.
    """

    def __init__(self, spec, switch_uops: dict):
        self.spec = spec
        self.outputs, self.inputs = defaultdict(set), defaultdict(set)
        for tile, uops in switch_uops.items():
            for uop in uops:
                for output in range(SWITCH_OUTPUTS):
                    if uop["enable"] >> output & 1:
                        self.outputs[tuple(tile), uop["select"][output]].add(output)
                        self.inputs[tuple(tile), output].add(uop["select"][output])
        self.host_at = {(port.tile, DIRECTIONS.index(port.side)): port.name for port in spec.host_ports}

    def fed(self, tile, k: int) -> bool:
        """A stream reaches FU input ``k`` of ``tile``."""
        return bool(self.inputs.get((tile, FU_PORT_BASE + k)))

    def sinks(self, tile, switch_input: int) -> list:
        """The endpoints that switch input ``switch_input`` of ``tile`` feeds."""
        found, seen, pending = [], set(), [(tile, switch_input)]
        while pending:
            here, entered = pending.pop(0)
            if (here, entered) in seen:
                continue
            seen.add((here, entered))
            for output in sorted(self.outputs.get((here, entered), ())):
                if output >= FU_PORT_BASE:
                    found.append(("slot", here, output - FU_PORT_BASE))
                    continue
                neighbour = self.spec.neighbour(here, DIRECTIONS[output])
                if neighbour is not None:
                    pending.append((neighbour, (output + 2) % 4))
                elif (here, output) in self.host_at:
                    found.append(("host", self.host_at[here, output]))
        return found

    def sources(self, tile, k: int) -> list:
        """The endpoints that feed FU input ``k`` of ``tile``."""
        found, seen, pending = [], set(), [(tile, FU_PORT_BASE + k)]
        while pending:
            here, output = pending.pop(0)
            if (here, output) in seen:
                continue
            seen.add((here, output))
            for entered in sorted(self.inputs.get((here, output), ())):
                if entered >= FU_PORT_BASE:
                    found.append(("output", here, entered - FU_PORT_BASE))
                    continue
                neighbour = self.spec.neighbour(here, DIRECTIONS[entered])
                if neighbour is not None:
                    pending.append((neighbour, (entered + 2) % 4))
                elif (here, entered) in self.host_at:
                    found.append(("host", self.host_at[here, entered]))
        return found


@dataclass
class HangReport:
    """The report's ``lines``, and ``blocked``: the (blocked, blocker) pairs its "blocked by"
    phrases name, each a tile or a host port's text, e.g. ((0, 0), (0, 1)) or
    ("host input 'in0'", (0, 0))."""
    lines: list[str] = field(default_factory=list)
    blocked: set = field(default_factory=set)

    def __str__(self):
        return "\n".join(self.lines)


def _granted(kind, uops) -> int | None:
    """Firings the micro-ops grant, where a micro-op says so: a kind whose count field is
    ``firings`` (the FU interface's counter) grants exactly that many."""
    if uops and all(tuple(kind.count_fields(uop)) == ("firings",) for uop in uops):
        return sum(uop["firings"] for uop in uops)
    return None


class _Writer:
    def __init__(self, spec, circuits: Circuits, snapshots: dict):
        self.spec, self.circuits, self.snapshots = spec, circuits, snapshots
        self.report = HangReport()

    def endpoint(self, end) -> str:
        if end[0] == "host":
            port = self.spec.host_port(end[1])
            return f"host {'input' if port.direction == 'in' else 'output'} {end[1]!r}"
        what, tile, k = end
        text = f"tile {list(tile)} {'slot' if what == 'slot' else 'output'} {k}"
        snapshot = self.snapshots.get(tile)
        if what != "slot" or snapshot is None:
            return text
        tokens = snapshot.slot_tokens(k)
        state = "empty" if not tokens else f"{tokens} token{'s' if tokens != 1 else ''}"
        return f"{text} ({'full, ' if snapshot.slot_full(k) else ''}{state})"

    def blocked_by(self, blocked, tile, switch_input: int) -> str:
        """The sinks that hold the stream up: the full slots among those it feeds, else all."""
        sinks = self.circuits.sinks(tile, switch_input)
        full = [end for end in sinks if end[0] == "slot" and end[1] in self.snapshots
                and self.snapshots[end[1]].slot_full(end[2])]
        for end in full or sinks:
            self.report.blocked.add((blocked, end[1] if end[0] == "slot" else self.endpoint(end)))
        return ", ".join(self.endpoint(end) for end in full or sinks) or "nothing (no route)"

    def tile_line(self, tile, fu_uops) -> str | None:
        snapshot = self.snapshots[tile]
        kind = snapshot.kind
        ports, links = snapshot.fu_ports, snapshot.switch_ports
        if not fu_uops:                 # a tile the program only routes streams through
            held = [(DIRECTIONS[j], links["held"][j]) for j in range(len(DIRECTIONS)) if links["held"][j]]
            if not held and not snapshot.status & STATUS_STALLED:
                return None
            return f"tile {list(tile)} {kind.name}: routes only" + "".join(
                f"; link {side} holds {count}{' (full)' if count == LINK_CAPACITY else ''}"
                for side, count in held)
        fed = [k for k in range(kind.n_in) if self.circuits.fed(tile, k)]
        blocked = [k for k in range(kind.n_out) if ports["blocked"] >> k & 1]
        holding = any(snapshot.slot_tokens(k) for k in fed)
        if not (ports["busy"] or holding or blocked):
            return None
        state = "waiting" if ports["busy"] else \
            "finished" if snapshot.status & STATUS_FU_FINISHED else "idle"
        granted = _granted(kind, fu_uops)
        parts = [f"{state}, {snapshot.firings}" + (f" of {granted}" if granted is not None else "")
                 + " firings"]
        slots = []
        for k in fed:
            tokens = snapshot.slot_tokens(k)
            if tokens:
                slots.append(f"slot {k} holds {tokens}" + (" (full)" if snapshot.slot_full(k) else ""))
            elif ports["busy"]:
                feeders = ", ".join(self.endpoint(end) for end in self.circuits.sources(tile, k))
                slots.append(f"slot {k} empty (waits for {feeders or 'no stream'})")
            else:
                slots.append(f"slot {k} empty")
        if slots:
            parts.append(", ".join(slots))
        for k in blocked:
            parts.append(f"output {k} blocked by {self.blocked_by(tile, tile, FU_PORT_BASE + k)}")
        description = snapshot.description
        name = kind.name + (f" {description}" if description else "")
        return f"tile {list(tile)} {name}: " + "; ".join(parts)


def hang_report(spec, switch_uops: dict, fu_uops: dict, snapshots: dict,
                host_inputs: dict | None = None) -> HangReport:
    """The report of a hung run of a program on the fabric ``spec``.

    ``switch_uops``, ``fu_uops``: tile -> the program's micro-ops (field dicts); ``snapshots``:
    tile -> :class:`TileSnapshot` (a used tile missing from it was not read back);
    ``host_inputs``: host input port -> (tokens the fabric took, tokens the host had).

    A line per tile with FU micro-ops that is busy, holds tokens or has a blocked output, and
    per routes-only tile that holds tokens or is stalled, in row-major order; then a line per
    host input with tokens left.
    """
    circuits = Circuits(spec, switch_uops)
    writer = _Writer(spec, circuits, snapshots)
    lines, unread = writer.report.lines, []
    for tile in sorted(set(map(tuple, switch_uops)) | set(map(tuple, fu_uops))):
        if tile not in snapshots:
            unread.append(str(list(tile)))
            continue
        line = writer.tile_line(tile, fu_uops.get(tile, []))
        if line:
            lines.append(line)
    for port, (taken, given) in (host_inputs or {}).items():
        if taken < given:
            tile, side = spec.host_port(port).tile, DIRECTIONS.index(spec.host_port(port).side)
            lines.append(f"host input {port!r}: {taken} of {given} tokens taken; blocked by "
                         f"{writer.blocked_by(f'host input {port!r}', tile, side)}")
    if unread:
        lines.append(f"not read back: tile{'s' if len(unread) > 1 else ''} {', '.join(unread)} (the "
                     f"control chain did not deliver their READs: it waits behind micro-ops a unit "
                     f"cannot take)")
    return writer.report
