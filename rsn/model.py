"""The fabric's golden model: run a configuration image token by token.

The fabric is modelled as a network of processes, one per switch and per FU, joined by bounded
channels whose capacities are the hardware's buffers (a link's skid buffer, an FU input's token
queue). Each unit's behaviour comes from its own golden model (written from the contract, not
from the RTL); this module only wires them the way the fabric generator wires the hardware and
dispatches the image in order, blocking on full micro-op queues as the control chain does.

What comes out on the host ports is fixed by the program, not by timing, so the RTL must match it
exactly. Stall counts depend on timing and are not modelled.
"""

from dataclasses import dataclass, field

from .channels import Channel
from .fabric_spec import DIRECTIONS, FabricSpec
from .fu_kinds import FU_KINDS, fu_parameters
from .image import decode_image
from .isa import GLOBAL_REGISTERS, REGISTERS
from .switch_model import SwitchModel

__all__ = ["FabricModel", "ModelResult", "DeadlockError"]

_OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E"}
_LINK_CAPACITY = 2          # the SkidBuffer on every switch output


class DeadlockError(AssertionError):
    """No unit can move and the program has not finished; the message names the stuck units."""


@dataclass
class ModelResult:
    outputs: dict[str, list[int]]
    done: bool
    firings: dict[tuple[int, int], int]
    link_beats: dict[tuple[int, int], list[int]]
    reads: list[int] = field(default_factory=list)


class _Tile:
    def __init__(self, spec: FabricSpec, tile):
        kind = FU_KINDS[spec.kind(tile)]
        self.tile, self.kind = tile, kind
        self.switch = SwitchModel(kind.n_in, kind.n_out)
        self.fu = kind.model(width=spec.data_width, **fu_parameters(kind.name, spec))
        self.switch_used = self.fu_used = False
        capacity = _LINK_CAPACITY + spec.queue_depth
        self.fu_in = [Channel(f"{tile} fu.i[{k}]", capacity) for k in range(kind.n_in)]
        self.fu_out = [Channel(f"{tile} fu.o[{k}]", 1) for k in range(kind.n_out)]
        self.switch_in: list[Channel] = []
        self.switch_out: list[Channel] = []

    @property
    def finished(self) -> bool:
        return (not self.switch_used or self.switch.finished) and (not self.fu_used or self.fu.finished)

    def step(self) -> bool:
        moved = self.switch.step(self.switch_in, self.switch_out)
        return self.fu.step(self.fu_in, self.fu_out) or moved


class FabricModel:
    """The golden model of the fabric described by ``spec``."""

    def __init__(self, spec: FabricSpec, *, max_steps: int = 10_000_000):
        self.spec, self.max_steps = spec, max_steps
        self.tiles = {tile: _Tile(spec, tile) for tile in spec.all_tiles()}
        self.host_in: dict[str, Channel] = {}
        self.host_out: dict[str, Channel] = {}
        self._wire()

    def _wire(self):
        spec = self.spec
        links = {(tile, side): Channel(f"{tile}->{side}", _LINK_CAPACITY)
                 for tile in spec.all_tiles() for side in DIRECTIONS if spec.neighbour(tile, side)}
        host_at = {(port.tile, port.side): port for port in spec.host_ports}
        for tile, unit in self.tiles.items():
            for side in DIRECTIONS:
                neighbour = spec.neighbour(tile, side)
                port = host_at.get((tile, side))
                if neighbour is not None:
                    unit.switch_in.append(links[neighbour, _OPPOSITE[side]])
                    unit.switch_out.append(links[tile, side])
                    continue
                incoming = Channel(f"{tile} {side} (no host port)", 0)
                outgoing = Channel(f"{tile} {side} (no host port)", 0)
                if port is not None and port.direction == "in":
                    incoming = self.host_in[port.name] = Channel(f"host {port.name}", 1 << 62)
                if port is not None and port.direction == "out":
                    outgoing = self.host_out[port.name] = Channel(f"host {port.name}", 1 << 62)
                unit.switch_in.append(incoming)
                unit.switch_out.append(outgoing)
            unit.switch_in += unit.fu_out
            unit.switch_out += unit.fu_in

    def _register(self, tile, address: int) -> int:
        if tile is None:
            if address == GLOBAL_REGISTERS["done"]:
                return int(self._done())
            return 0        # the cycle counter and the watchdog are timing: not modelled
        unit = self.tiles[tile]
        if address < REGISTERS["firings"]:
            return unit.fu.read_word(address) if hasattr(unit.fu, "read_word") else 0
        if address == REGISTERS["firings"]:
            return unit.fu.firings
        if address == REGISTERS["status"]:
            return int(unit.switch.finished) | (int(unit.fu.finished) << 1)
        base = REGISTERS["link_beats"]
        if base <= address < base + len(unit.switch_out):
            return unit.switch.beats[address - base]
        return 0

    def _done(self) -> bool:
        used = [unit for unit in self.tiles.values() if unit.switch_used or unit.fu_used]
        return bool(used) and all(unit.finished for unit in used) and \
            not any(unit.switch.busy or unit.fu.busy for unit in used)

    def run(self, image: list[int], host_inputs: dict[str, list[int]] | None = None) -> ModelResult:
        """Execute ``image`` with ``host_inputs`` queued on the host ports; raise on deadlock."""
        for name, tokens in (host_inputs or {}).items():
            channel = self.host_in.get(name)
            if channel is None:
                known = ", ".join(self.host_in) or "none"
                raise ValueError(f"no host input port {name!r}; input ports: {known}")
            for token in tokens:
                channel.push(token)
        events = list(decode_image(image, self.spec.rows, self.spec.cols).events)
        reads, position, steps = [], 0, 0
        while True:
            moved = False
            while position < len(events) and self._dispatch(events[position], reads):
                position += 1
                moved = True
            for unit in self.tiles.values():
                while unit.step():
                    moved = True
                    steps += 1
            if steps > self.max_steps:
                raise DeadlockError(f"no completion after {self.max_steps} steps")
            if not moved:
                break
        if position < len(events) or not self._done():
            raise DeadlockError(self._stuck(position, events))
        return ModelResult(
            outputs={name: list(channel.tokens) for name, channel in self.host_out.items()},
            done=self._done(),
            firings={tile: unit.fu.firings for tile, unit in self.tiles.items()},
            link_beats={tile: list(unit.switch.beats) for tile, unit in self.tiles.items()},
            reads=reads)

    def _dispatch(self, event, reads) -> bool:
        """Apply one image event if its unit can take it now (in order, blocking)."""
        kind, tile = event.kind, event.tile
        if kind == "start":
            return True
        unit = self.tiles.get(tile)
        queue_room = self.spec.uop_queue_depth
        if kind == "switch":
            if len(unit.switch.uops) >= queue_room:
                return False
            unit.switch.load([event.uop])
            unit.switch_used = True
        elif kind == "fu":
            if len(unit.fu.uops) >= queue_room:
                return False
            unit.fu.load([event.uop])
            unit.fu_used = True
        elif kind == "write":
            if event.address < REGISTERS["firings"]:
                unit.fu.write_word(event.address, event.value)
        elif kind == "read":
            reads.append(self._register(tile, event.address))
        return True

    def _stuck(self, position, events) -> str:
        lines = ["the program deadlocked:"]
        if position < len(events):
            event = events[position]
            lines.append(f"  dispatch blocked at event {position} ({event.kind} for tile "
                         f"{list(event.tile) if event.tile else 'global'}): its micro-op queue is full")
        for tile, unit in self.tiles.items():
            parts = []
            if unit.switch.busy:
                parts.append(f"switch waiting ({len(unit.switch.uops)} micro-ops queued)")
            if unit.fu.busy:
                parts.append(f"{unit.kind.name} waiting ({len(unit.fu.uops)} micro-ops queued)")
            if parts:
                held = ", ".join(f"{channel.name}: {len(channel.tokens)}" for channel in unit.fu_in)
                lines.append(f"  tile {list(tile)}: " + "; ".join(parts) + (f" [{held}]" if held else ""))
        return "\n".join(lines)
