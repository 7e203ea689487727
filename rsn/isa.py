"""The RSN micro-op and packet encoding: the one source of truth.

The layouts below are Amaranth ``data`` layouts. The RTL decodes micro-ops by viewing their bits
through them; the assembler encodes with :func:`encode`; the golden model decodes with
:func:`decode`. All three read the same field list, so they cannot drift apart.
See docs/rsn-architecture.md for the meaning of each field.
"""

import enum as python_enum

from amaranth.hdl import Cat, Shape, signed, unsigned
from amaranth.lib import data, enum

__all__ = [
    "IsaError", "Opcode", "MacMode", "Precision", "BODY_BITS", "BODY_WORDS", "SWITCH_INPUTS",
    "SWITCH_OUTPUTS", "NO_INPUT", "SwitchUop", "MemUop", "MacUop", "AluUop", "Header", "Target",
    "uop_layout", "uop_layouts", "padded_uop", "REGISTERS",
    "MAX_FU_STATUS_REGISTERS", "LINK_BEATS_BITS", "GLOBAL_REGISTERS",
    "MEMORY_REGISTERS", "BANK_COUNTERS", "BANK_COUNTERS_BASE", "MAX_COUNTED_BANKS", "bank_counter",
    "global_register_addresses",
    "FuPortState", "SwitchPortState", "QUEUED_BITS",
    "HIGH_SUFFIX", "high_bits_of", "field_width", "joined_field", "encode", "decode", "body_words",
    "body_from_words", "packet", "tile_mask",
]

BODY_BITS = 64
BODY_WORDS = BODY_BITS // 32
SWITCH_INPUTS = 6        # N, E, S, W, then up to 2 FU outputs
SWITCH_OUTPUTS = 7       # N, E, S, W, then up to 3 FU inputs
NO_INPUT = 7             # select value of an output that copies nothing


class IsaError(ValueError):
    """A micro-op or packet field is out of its range; the message names the field."""


class Opcode(enum.Enum, shape=4):
    NOP = 0
    SWITCH = 1
    FU = 2
    WRITE = 3
    READ = 4
    START = 5


class MacMode(enum.Enum, shape=2):
    LOAD = 0
    DOT = 1
    DOT2 = 2


class Precision(enum.Enum, shape=1):
    INT32 = 0
    INT8 = 1


def padded_uop(fields: dict) -> data.StructLayout:
    """A struct of ``fields`` padded with a reserved field to exactly one 64-bit body."""
    used = sum(Shape.cast(shape).width for shape in fields.values())
    assert used <= BODY_BITS, f"micro-op fields take {used} bits, more than {BODY_BITS}"
    if used < BODY_BITS:
        fields = {**fields, "reserved": BODY_BITS - used}
    return data.StructLayout(fields)


# A count wider than the bits left beside it goes on in a field of its own at the end of the
# layout, named ``<field>_high``, so that every encoding made before it stays bit-identical.
# encode and decode join the two parts: a caller writes and reads one value, ``<field>``, and the
# RTL joins them with :func:`joined_field`; :func:`field_width` is the joined width.
HIGH_SUFFIX = "_high"

SwitchUop = padded_uop({
    "beats": 16,                                        # 0: a static route, never ends
    "enable": SWITCH_OUTPUTS,                           # outputs this micro-op routes
    "select": data.ArrayLayout(3, SWITCH_OUTPUTS),      # the input each output copies
    "last": 1,
    # A fence: the micro-op issues only once no counted route of its switch is active (every
    # earlier counted route has carried all its beats, so no input holds an earlier stream's
    # token). A flag rather than a micro-op of its own: it costs no image words and no issue
    # cycle, and it sits in bits that were reserved, so every unfenced encoding is unchanged.
    "fence": 1,
    # The beat count's high bits: a counted stream (a host port's above all) may carry up to
    # 2**24 - 1 tokens in one route, so it never has to be split into several micro-ops (which,
    # issued in order, could wait on each other). 8 bits, not 16: measured on ECP5, each bit
    # costs every output's remaining-beats counter and link beat counter (docs/rsn-architecture.md).
    "beats_high": 8,
})

MemUop = padded_uop({
    "write": 1,
    "start": 12,
    "stride": signed(12),       # address step of the inner index i
    "offset": signed(12),       # address step of the outer index j
    "count_i": 12,
    "count_j": 12,
    "last": 1,
})

MacUop = padded_uop({
    "mode": MacMode,
    "precision": Precision,
    "length": 12,               # tokens per dot product (or loaded into the buffer)
    "rows": 16,                 # dot products per micro-op (DOT, DOT2)
    "last": 1,
})

AluUop = padded_uop({
    "beats": 16,
    "relu": 1,
    "shift": 5,                 # arithmetic shift right
    "clip": 1,
    "lo": signed(16),
    "hi": signed(16),
    "last": 1,
})

Header = data.StructLayout({"opcode": Opcode, "window": 5, "repeat": 16, "reserved": 7})
Target = data.StructLayout({"rows": 16, "cols": 16})



def uop_layout(unit: str):
    """The micro-op layout of ``unit``: "switch" or a registered FU kind's name."""
    if unit == "switch":
        return SwitchUop
    from .fu_kinds import fu_kind  # the kinds' modules import this one
    return fu_kind(unit).uop_layout


def uop_layouts() -> dict:
    """Every micro-op layout by unit: the switch's and each registered FU kind's."""
    from .fu_kinds import fu_kinds
    return {"switch": SwitchUop, **{name: kind.uop_layout for name, kind in fu_kinds().items()}}

# Per-tile register addresses (control plane WRITE/READ).
REGISTERS = {
    "storage": 0x0000,          # 0x0000-0x0FFF: FU storage (mem words)
    "firings": 0x1000,
    "stalls": 0x1001,
    "status": 0x1002,           # bit 0 switch finished, bit 1 FU finished, bit 2 watchdog stalled
    "fu_ports": 0x1003,         # FuPortState: where the FU's tokens wait (hang diagnosis)
    "switch_ports": 0x1004,     # SwitchPortState: where the switch's tokens wait
    "link_beats": 0x1010,       # + switch output index
    "fu_status": 0x2000,        # 0x2000-0x200F: read-only registers of the FU (FuKind.status_registers)
}
MAX_FU_STATUS_REGISTERS = 16

# The two diagnostic registers: a snapshot of where tokens wait, read after the watchdog fires
# so that a hang can be told apart as a program's (a unit stopped early, a count too small) or
# the hardware's (rsn.hang_report turns them into a report). Every tile has them, whatever its
# FU kind: they look only at the tile's own streams. Bits of ports a tile lacks read 0.
QUEUED_BITS = 8                 # queue levels: a queue_depth of at most 64 fits


def _padded_register(fields: dict) -> data.StructLayout:
    used = sum(Shape.cast(shape).width for shape in fields.values())
    assert used <= 32, f"register fields take {used} bits, more than 32"
    return data.StructLayout({**fields, "reserved": 32 - used} if used < 32 else fields)


FuPortState = _padded_register({
    # tokens in the TokenQueue in front of fu.i[k]
    "queued": data.ArrayLayout(QUEUED_BITS, SWITCH_OUTPUTS - 4),
    # fu.i[k] offers a token that the FU does not take (valid and not ready)
    "waiting": SWITCH_OUTPUTS - 4,
    # fu.o[k] offers a token that the switch does not take (valid and not ready)
    "blocked": SWITCH_INPUTS - 4,
    # the FU has a micro-op in progress or waiting (in its queue or leaving the expander)
    "busy": 1,
})

SwitchPortState = _padded_register({
    # tokens in switch output j's SkidBuffer (0..2): a link's stage, or the one before a FU queue
    "held": data.ArrayLayout(2, SWITCH_OUTPUTS),
    # switch output j offers a token that its consumer does not take
    "blocked": SWITCH_OUTPUTS,
    # switch input k is offered a token that the switch does not take
    "waiting": SWITCH_INPUTS,
})

# Global registers: READ (and, for the two memory registers, WRITE) with all-zero target masks.
# mem_address and mem_data are the host's path into the fabric's shared memory, through the
# dispenser (rsn.control): a word pointer, and the word at it (each access moves the pointer
# on by one). Only a fabric with a [memory] table has them.
GLOBAL_REGISTERS = {"cycles": 0x0000, "done": 0x0001, "watchdog": 0x0002,
                    "mem_address": 0x0010, "mem_data": 0x0011}
MEMORY_REGISTERS = ("mem_address", "mem_data")      # the global registers a WRITE may address

# The shared memory's per-bank counters (hw.banked_memory.BankedMemory), read-only global
# registers of a fabric with a [memory] table: bank b's requests served ("accesses") at
# BANK_COUNTERS_BASE + 2 * b, and its cycles in which some request for it had to wait
# ("conflicts") at BANK_COUNTERS_BASE + 2 * b + 1. START zeroes both, as it zeroes the tiles'
# counters, so they count the run (not the preload before START). 32 bits, wrapping.
BANK_COUNTERS = ("accesses", "conflicts")
BANK_COUNTERS_BASE = 0x0020
MAX_COUNTED_BANKS = 64          # rsn.fabric_spec's MAX_MEMORY_BANKS: the block ends at 0x009F


def bank_counter(bank: int, counter: str) -> int:
    """The global register address of ``counter`` ("accesses" or "conflicts") of ``bank``."""
    if counter not in BANK_COUNTERS:
        raise IsaError(f"bank counter {counter!r} is not one of {', '.join(BANK_COUNTERS)}")
    if isinstance(bank, bool) or not isinstance(bank, int) or not 0 <= bank < MAX_COUNTED_BANKS:
        raise IsaError(f"bank {bank!r} is outside 0..{MAX_COUNTED_BANKS - 1}")
    return BANK_COUNTERS_BASE + len(BANK_COUNTERS) * bank + BANK_COUNTERS.index(counter)


def global_register_addresses() -> set[int]:
    """Every address a global READ may name: the named registers and the bank counter block."""
    block = range(BANK_COUNTERS_BASE, BANK_COUNTERS_BASE + len(BANK_COUNTERS) * MAX_COUNTED_BANKS)
    return set(GLOBAL_REGISTERS.values()) | set(block)


def _fields(layout):
    """The fields a caller names: not the reserved bits, nor a ``<field>_high`` continuation."""
    for name, field in layout:
        if name != "reserved" and high_bits_of(layout, name) is None:
            yield name, field


def high_bits_of(layout: data.StructLayout, name: str) -> str | None:
    """The field whose high bits field ``name`` of ``layout`` holds, or None."""
    names = {other for other, _ in layout}
    low = name.removesuffix(HIGH_SUFFIX)
    return low if low != name and name in names and low in names else None


def _high_part(layout: data.StructLayout, name: str):
    """The ``<name>_high`` field of ``layout``, or None."""
    return next((field for other, field in layout if other == name + HIGH_SUFFIX), None)


def field_width(layout: data.StructLayout, name: str) -> int:
    """The width of field ``name`` of ``layout``, its ``_high`` continuation included."""
    high = _high_part(layout, name)
    return Shape.cast(layout[name].shape).width + (Shape.cast(high.shape).width if high else 0)


def joined_field(view, name: str):
    """The value of field ``name`` of a layout ``view`` (an RTL signal), joined with its
    ``_high`` continuation, so that hardware reads the whole count as the assembler wrote it."""
    layout = data.Layout.cast(view.shape())
    part = view[name]
    return Cat(part, view[name + HIGH_SUFFIX]) if _high_part(layout, name) else part


# The link_beats registers count modulo 2**LINK_BEATS_BITS: the width of a route's beat count, so
# one route's count is exact; the read value is zero-extended to 32 bits.
LINK_BEATS_BITS = field_width(SwitchUop, "beats")


def _check_scalar(name: str, shape, value) -> int:
    """Return the raw bits of ``value`` for a field of ``shape``; raise :class:`IsaError`."""
    if isinstance(shape, type) and issubclass(shape, python_enum.Enum):
        if isinstance(value, str):
            try:
                value = shape[value]
            except KeyError:
                allowed = ", ".join(member.name for member in shape)
                raise IsaError(f"field {name}: {value!r} is not one of {allowed}") from None
        if not isinstance(value, shape):
            raise IsaError(f"field {name}: expected a {shape.__name__}, got {value!r}")
        return value.value
    shape = Shape.cast(shape)
    if isinstance(value, bool) or not isinstance(value, int):
        raise IsaError(f"field {name}: {value!r} is not an integer")
    low, high = (-(1 << (shape.width - 1)), (1 << (shape.width - 1)) - 1) if shape.signed \
        else (0, (1 << shape.width) - 1)
    if not low <= value <= high:
        raise IsaError(f"field {name}={value} does not fit {shape.width} bits "
                       f"({'signed' if shape.signed else 'unsigned'}: {low}..{high})")
    return value & ((1 << shape.width) - 1)


def _zero(shape):
    """The value a field takes when the assembler leaves it out: 0, or an enum's zero member."""
    if isinstance(shape, type) and issubclass(shape, python_enum.Enum):
        return shape(0)
    return 0


def encode(layout: data.StructLayout, fields: dict) -> int:
    """Pack ``fields`` into the bits of ``layout``; missing fields are 0, unknown ones an error."""
    known = {name for name, _ in _fields(layout)}
    unknown = set(fields) - known
    if unknown:
        raise IsaError(f"unknown field(s) {sorted(unknown)}; fields are {sorted(known)}")
    bits = 0
    for name, field in _fields(layout):
        value = fields.get(name, _zero(field.shape))
        if isinstance(field.shape, data.ArrayLayout):
            elements = list(value) if not isinstance(value, int) else [value] * field.shape.length
            if len(elements) != field.shape.length:
                raise IsaError(f"field {name}: expected {field.shape.length} elements, "
                               f"got {len(elements)}")
            element_width = Shape.cast(field.shape.elem_shape).width
            for index, element in enumerate(elements):
                raw = _check_scalar(f"{name}[{index}]", field.shape.elem_shape, element)
                bits |= raw << (field.offset + index * element_width)
        elif (high := _high_part(layout, name)) is not None:
            raw = _check_scalar(name, unsigned(field_width(layout, name)), value)
            low_width = Shape.cast(field.shape).width
            bits |= (raw & ((1 << low_width) - 1)) << field.offset
            bits |= (raw >> low_width) << high.offset
        else:
            bits |= _check_scalar(name, field.shape, value) << field.offset
    return bits


def _unpack_scalar(shape, raw: int):
    if isinstance(shape, type) and issubclass(shape, python_enum.Enum):
        return shape(raw)
    shape = Shape.cast(shape)
    if shape.signed and raw >> (shape.width - 1):
        return raw - (1 << shape.width)
    return raw


def decode(layout: data.StructLayout, bits: int) -> dict:
    """The fields of ``layout`` in ``bits`` (enums as members, signed fields as negative ints)."""
    fields = {}
    for name, field in _fields(layout):
        if isinstance(field.shape, data.ArrayLayout):
            width = Shape.cast(field.shape.elem_shape).width
            fields[name] = [
                _unpack_scalar(field.shape.elem_shape,
                               (bits >> (field.offset + index * width)) & ((1 << width) - 1))
                for index in range(field.shape.length)]
        else:
            width = Shape.cast(field.shape).width
            fields[name] = _unpack_scalar(field.shape, (bits >> field.offset) & ((1 << width) - 1))
            if (high := _high_part(layout, name)) is not None:
                high_width = Shape.cast(high.shape).width
                fields[name] |= ((bits >> high.offset) & ((1 << high_width) - 1)) << width
    return fields


def body_words(bits: int) -> list[int]:
    """A 64-bit body as 32-bit words, least significant first."""
    return [(bits >> (32 * k)) & 0xFFFF_FFFF for k in range(BODY_WORDS)]


def body_from_words(words) -> int:
    return sum(word << (32 * k) for k, word in enumerate(words))


def tile_mask(tiles) -> dict:
    """Row and column masks covering ``tiles`` (an iterable of (row, col)).

    The packet reaches the cross product of the rows and columns, so the tiles must form one.
    """
    tiles = set(tiles)
    rows = {row for row, _ in tiles}
    cols = {col for _, col in tiles}
    if tiles != {(row, col) for row in rows for col in cols}:
        raise IsaError(f"tiles {sorted(tiles)} are not a cross product of rows and columns; "
                       f"send one packet per tile instead")
    return {"rows": sum(1 << row for row in rows), "cols": sum(1 << col for col in cols)}


def packet(opcode: Opcode, target: dict, bodies, *, repeat: int = 1) -> list[int]:
    """The words of one control packet: header, target masks, then each body's two words."""
    bodies = list(bodies)
    if not 0 <= len(bodies) <= 31:
        raise IsaError(f"a packet holds at most 31 bodies (window), not {len(bodies)}")
    if not 1 <= repeat <= 0xFFFF:
        raise IsaError(f"repeat={repeat} is outside 1..65535")
    words = [encode(Header, {"opcode": opcode, "window": len(bodies), "repeat": repeat}),
             encode(Target, target)]
    for body in bodies:
        words += body_words(body)
    return words
