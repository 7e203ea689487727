"""The assembler: per-unit micro-op lists and memory contents -> a configuration image.

Dispatch is in order and blocking (docs/rsn-architecture.md, "Control plane"): while one unit's
micro-op queue is full, no packet behind it reaches any other unit. So the assembler never sends
a unit more micro-ops in one go than its queue holds, and it goes round the units in turn: every
unit gets its first micro-ops early, and a unit waiting for data never holds back the micro-ops
of the unit that would produce it, as long as each unit's own sequence is consistent.
"""

from dataclasses import dataclass, field

from .isa import IsaError, Opcode, encode, packet, uop_layout

__all__ = ["UnitProgram", "assemble", "read_packet"]


@dataclass
class UnitProgram:
    """The micro-ops of one unit: ``unit`` is "switch" or the FU kind's name."""
    tile: tuple[int, int]
    unit: str
    uops: list[dict] = field(default_factory=list)

    @property
    def opcode(self) -> Opcode:
        return Opcode.SWITCH if self.unit == "switch" else Opcode.FU


def _target(tile) -> dict:
    row, col = tile
    return {"rows": 1 << row, "cols": 1 << col}


def _runs(bodies):
    """Consecutive equal bodies as (body, count) pairs: repeats compress to one packet."""
    runs = []
    for body in bodies:
        if runs and runs[-1][0] == body and runs[-1][1] < 0xFFFF:
            runs[-1][1] += 1
        else:
            runs.append([body, 1])
    return runs


def _chunk_packets(program: UnitProgram, bodies, max_window: int) -> list[list[int]]:
    packets, window = [], []
    for body, count in _runs(bodies):
        if count > 1:
            if window:
                packets.append(packet(program.opcode, _target(program.tile), window))
                window = []
            packets.append(packet(program.opcode, _target(program.tile), [body], repeat=count))
        else:
            window.append(body)
            if len(window) == max_window:
                packets.append(packet(program.opcode, _target(program.tile), window))
                window = []
    if window:
        packets.append(packet(program.opcode, _target(program.tile), window))
    return packets


def _memory_packets(tile, contents: dict[int, int], max_window: int) -> list[list[int]]:
    # A WRITE body is (register address, value), the address in the low word.
    bodies = [address | ((value & 0xFFFF_FFFF) << 32) for address, value in sorted(contents.items())]
    return [packet(Opcode.WRITE, _target(tile), bodies[start:start + max_window])
            for start in range(0, len(bodies), max_window)]


def read_packet(tile, addresses) -> list[int]:
    """A READ packet for ``addresses`` of ``tile`` (``None``: the global registers)."""
    target = {"rows": 0, "cols": 0} if tile is None else _target(tile)
    return packet(Opcode.READ, target, list(addresses))


def assemble(programs: list[UnitProgram], memories: dict | None = None, *, queue_depth: int,
             max_window: int = 8) -> list[int]:
    """The image: START, memory contents, then micro-ops round-robin in queue-sized chunks."""
    if max_window < 1:
        raise IsaError("max_window must be at least 1")
    words = packet(Opcode.START, {"rows": 0, "cols": 0}, [])
    for tile, contents in sorted((memories or {}).items()):
        for chunk in _memory_packets(tile, contents, max_window):
            words += chunk
    encoded = []
    for program in programs:
        layout = uop_layout(program.unit)
        try:
            encoded.append([encode(layout, uop) for uop in program.uops])
        except IsaError as error:
            raise IsaError(f"{program.unit} micro-op on tile {list(program.tile)}: {error}") from None
    chunk = max(1, min(queue_depth, max_window))
    for start in range(0, max((len(bodies) for bodies in encoded), default=0), chunk):
        for program, bodies in zip(programs, encoded, strict=True):
            for part in _chunk_packets(program, bodies[start:start + chunk], max_window):
                words += part
    return words
