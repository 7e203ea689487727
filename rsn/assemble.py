"""The assembler: per-unit micro-op lists and memory contents -> a configuration image.

Dispatch is in order and blocking (docs/rsn-architecture.md, "Control plane"): while one unit's
micro-op queue is full, no packet behind it reaches any other unit. So the assembler never sends
a unit more micro-ops in one go than its queue holds, and it goes round the units in turn: every
unit gets its first micro-ops early, and a unit waiting for data never holds back the micro-ops
of the unit that would produce it, as long as each unit's own sequence is consistent.

A program in phases goes round the units phase by phase: every micro-op of phase p is sent
before any of phase p+1. Going round by micro-op index alone is not enough once units run
different numbers of micro-ops per phase: a unit with many (a switch that every pass of a long
program crosses) is sent micro-ops of a late phase while a unit with few still waits for its
micro-op of an early phase behind it, and the chain deadlocks. Phase p's work needs only
micro-ops of phases up to p, all of which are then in front of the blocked packet. A unit idle
in phase p still gets its phase p+1 micro-ops while phase p runs, so transitions overlap.

The fabric's shared memory is reached through two global registers of the dispenser
(rsn.control): :func:`shared_memory_packets` preloads it, :func:`shared_memory_read_packets`
reads it back, and :func:`assemble`'s ``shared_memory`` puts a preload in front of START.
"""

from dataclasses import dataclass, field

from .control import MAX_WINDOW_LIMIT
from .isa import GLOBAL_REGISTERS, IsaError, Opcode, encode, packet, uop_layout

__all__ = ["UnitProgram", "assemble", "read_packet", "shared_memory_packets", "shared_memory_read_packets"]

_GLOBAL = {"rows": 0, "cols": 0}


@dataclass
class UnitProgram:
    """The micro-ops of one unit: ``unit`` is "switch" or the FU kind's name."""
    tile: tuple[int, int]
    unit: str
    uops: list[dict] = field(default_factory=list)
    phases: list[int] = field(default_factory=list)     # of each micro-op; empty: all phase 0

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


def _check_register_window(function: str, max_window) -> int:
    if isinstance(max_window, bool) or not isinstance(max_window, int) \
            or not 1 <= max_window <= MAX_WINDOW_LIMIT:
        raise IsaError(f"{function}: max_window={max_window!r} is not allowed; a packet holds 1.."
                       f"{MAX_WINDOW_LIMIT} bodies")
    return max_window


def _word_address(function: str, address) -> int:
    if isinstance(address, bool) or not isinstance(address, int) or not 0 <= address <= 0xFFFF_FFFF:
        raise IsaError(f"{function}: word address {address!r} is not an integer 0..2**32-1")
    return address


def _register_body(register: str, value: int = 0) -> int:
    """A global WRITE/READ body: the register's address low, ``value`` high."""
    return GLOBAL_REGISTERS[register] | ((value & 0xFFFF_FFFF) << 32)


def shared_memory_packets(contents: dict[int, int] | list, max_window: int) -> list[int]:
    """The words of global WRITE packets that preload the shared memory with ``contents``.

    ``contents`` maps word addresses to values (a list: addresses 0, 1, ...); values are taken
    modulo 2**32. Each run of consecutive addresses costs one ``mem_address`` body (the pointer)
    and then one ``mem_data`` body per word; the bodies fill packets of at most ``max_window``
    (1..31). :func:`rsn.image.decode_image` checks the addresses against the fabric's memory.
    """
    _check_register_window("shared_memory_packets", max_window)
    items = enumerate(contents) if isinstance(contents, list) else sorted(contents.items())
    bodies, next_address = [], None
    for address, value in items:
        address = _word_address("shared_memory_packets", address)
        if isinstance(value, bool) or not isinstance(value, int):
            raise IsaError(f"shared_memory_packets: the value at word {address} is {value!r}, not an integer")
        if address != next_address:
            bodies.append(_register_body("mem_address", address))
        bodies.append(_register_body("mem_data", value))
        next_address = address + 1
    words = []
    for start in range(0, len(bodies), max_window):
        words += packet(Opcode.WRITE, _GLOBAL, bodies[start:start + max_window])
    return words


def shared_memory_read_packets(start: int, count: int, max_window: int) -> list[int]:
    """The words that read ``count`` shared-memory words from word ``start`` on: a WRITE of
    ``mem_address``, then READ packets of at most ``max_window`` ``mem_data`` bodies. The values
    arrive on ``readback`` in address order, in order with every other read-back value."""
    _check_register_window("shared_memory_read_packets", max_window)
    start = _word_address("shared_memory_read_packets", start)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise IsaError(f"shared_memory_read_packets: count={count!r} is not an integer >= 0")
    words = packet(Opcode.WRITE, _GLOBAL, [_register_body("mem_address", start)])
    for first in range(0, count, max_window):
        words += read_packet(None, [GLOBAL_REGISTERS["mem_data"]] * min(max_window, count - first))
    return words


def assemble(programs: list[UnitProgram], memories: dict | None = None, *, queue_depth: int,
             max_window: int = 8, shared_memory: dict[int, int] | list | None = None) -> list[int]:
    """The image: the shared memory's preload, START, memory contents, then micro-ops
    round-robin in queue-sized chunks.

    ``memories`` maps a tile to its FU's storage contents (register address -> value);
    ``shared_memory`` is the shared memory's contents (:func:`shared_memory_packets`), in
    packets of ``max_window`` bodies. The preload comes before START on purpose: START zeroes
    the dispenser's cycle counter, so ``cycles`` counts the program from START on and not the
    image load; the load's own cycles are the host's to measure (about 2 per preloaded word;
    see rsn.control). Everything after START (a PE's LOAD included) sees the preloaded words.
    """
    if max_window < 1:
        raise IsaError("max_window must be at least 1")
    words = [] if not shared_memory else shared_memory_packets(shared_memory, max_window)
    words += packet(Opcode.START, {"rows": 0, "cols": 0}, [])
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
    for phase_bodies in _by_phase(programs, encoded):
        for start in range(0, max((len(bodies) for bodies in phase_bodies), default=0), chunk):
            for program, bodies in zip(programs, phase_bodies, strict=True):
                for part in _chunk_packets(program, bodies[start:start + chunk], max_window):
                    words += part
    return words


def _by_phase(programs: list[UnitProgram], encoded: list[list[int]]) -> list[list[list[int]]]:
    """Per phase in order, each unit's encoded micro-ops of that phase (module docstring)."""
    phases = []
    for program, bodies in zip(programs, encoded, strict=True):
        if program.phases and len(program.phases) != len(bodies):
            raise IsaError(f"{program.unit} on tile {list(program.tile)}: {len(program.phases)} phases "
                           f"for {len(bodies)} micro-ops")
        if program.phases != sorted(program.phases):
            raise IsaError(f"{program.unit} on tile {list(program.tile)}: micro-ops out of phase order")
        phases.append(program.phases or [0] * len(bodies))
    order = sorted({phase for unit in phases for phase in unit})
    return [[[body for body, at in zip(bodies, unit, strict=True) if at == phase]
             for bodies, unit in zip(encoded, phases, strict=True)] for phase in order] or [encoded]
