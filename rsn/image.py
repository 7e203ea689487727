"""The golden decoder of a configuration image: what every tile receives, from the contract alone.

Written from docs/rsn-architecture.md ("Control plane"), sharing only :mod:`rsn.isa` with the RTL,
so that a control-plane bug and a decoder bug cannot agree by construction. The fabric's golden
model loads its units from :func:`decode_image`; the assembler checks each packet it emits with
:func:`check_packet`.

What an image means, packet by packet in image order:

* SWITCH / FU: each target tile's switch (FU) receives the ``window`` bodies, ``repeat`` times
  over, in order;
* WRITE: each body (register address, value) is written in every target tile, in order;
* READ: each body (register address, unused) is read in the one target tile, or from the global
  registers if both masks are zero; one value per body appears on ``readback``, in order;
* WRITE or READ with both masks zero, to ``mem_address`` / ``mem_data``: the host's path into the
  fabric's shared memory (rsn.control's Dispenser). A WRITE to ``mem_address`` sets the word
  pointer; a WRITE to ``mem_data`` writes the word at the pointer, a READ of it reads that word
  (on ``readback``, in order); either moves the pointer on by one; a READ of ``mem_address``
  returns the pointer. The pointer changes only by these packets, so every word such an image
  touches is known before it runs: :func:`decode_image` refuses them on a fabric without a
  shared memory and any ``mem_data`` access at or past its end;
* START: clears every tile and the global cycle counter (whatever its target masks);
* NOP, and masks naming rows or columns outside the grid: no effect.
"""

from dataclasses import dataclass, field

from .isa import (
    BANK_COUNTERS_BASE,
    BODY_WORDS,
    GLOBAL_REGISTERS,
    MAX_COUNTED_BANKS,
    MEMORY_REGISTERS,
    Header,
    Opcode,
    SwitchUop,
    body_from_words,
    decode,
    global_register_addresses,
)

__all__ = ["ImageError", "Packet", "Access", "ReadSlot", "TileImage", "Image", "split_packets",
           "check_packet", "decode_image", "MAX_GRID"]

MAX_GRID = 16
_OPCODES = {opcode.value: opcode for opcode in Opcode}
_RESERVED_AT = Header["reserved"].offset
_MEMORY_ADDRESSES = {GLOBAL_REGISTERS[name]: name for name in MEMORY_REGISTERS}


class ImageError(ValueError):
    """An image is malformed or breaks a rule of the control plane; the message says where."""


@dataclass(frozen=True)
class Packet:
    """One control packet, as found at word ``offset`` of an image."""
    index: int                  # position among the image's packets
    offset: int                 # word index of its header
    opcode: Opcode
    window: int
    repeat: int
    rows: int                   # row mask
    cols: int                   # column mask
    bodies: tuple[int, ...]     # 64-bit bodies
    reserved: int = 0           # the header's reserved bits

    @property
    def is_global(self) -> bool:
        """All-zero target masks: the global registers (READ), or no tile at all."""
        return self.rows == 0 and self.cols == 0

    def tiles(self, rows: int, cols: int) -> list[tuple[int, int]]:
        """The grid's tiles that the masks select, row-major."""
        return [(row, col) for row in range(rows) if self.rows >> row & 1
                for col in range(cols) if self.cols >> col & 1]

    def describe(self) -> str:
        return f"packet {self.index} ({self.opcode.name} at word {self.offset})"


@dataclass(frozen=True)
class Access:
    """A register access through a tile's config bus."""
    kind: str                   # "write" or "read"
    address: int
    value: int | None           # the value written; None for a read
    packet: int                 # index of the packet that made it


@dataclass(frozen=True)
class ReadSlot:
    """One value on ``readback``: which register of which tile (None: a global register);
    ``word``: for a READ of ``mem_data``, the shared memory's word address it returns."""
    tile: tuple[int, int] | None
    address: int
    packet: int
    word: int | None = None


@dataclass
class TileImage:
    """What one tile receives from an image."""
    row: int
    col: int
    switch_bodies: list[int] = field(default_factory=list)     # expanded, in delivery order
    fu_bodies: list[int] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)        # writes and reads, in order
    fu_layout: object = None

    @property
    def switch_uops(self) -> list[dict]:
        return [decode(SwitchUop, body) for body in self.switch_bodies]

    @property
    def fu_uops(self) -> list[dict]:
        if self.fu_layout is None:
            raise ImageError(f"tile ({self.row}, {self.col}): no FU layout was given to decode_image; "
                             f"use fu_bodies for the raw bits")
        return [decode(self.fu_layout, body) for body in self.fu_bodies]

    @property
    def writes(self) -> list[tuple[int, int]]:
        return [(access.address, access.value) for access in self.accesses if access.kind == "write"]

    @property
    def reads(self) -> list[int]:
        return [access.address for access in self.accesses if access.kind == "read"]


@dataclass
class Image:
    """A decoded image: per-tile contents, the readback sequence and where START packets are."""
    rows: int
    cols: int
    packets: list[Packet]
    tiles: dict[tuple[int, int], TileImage]
    readback: list[ReadSlot]        # every value the host will read back, in order
    starts: list[int]               # indices of START packets
    memory_words: int | None = None     # the shared memory's size (None: the fabric has none)
    # The shared memory's accesses through mem_data, in order: Access(kind, word address, value
    # written or None, packet).
    memory: list[Access] = field(default_factory=list)
    pointer: int = 0                # mem_address after the image

    def tile(self, row: int, col: int) -> TileImage:
        return self.tiles[row, col]

    @property
    def global_reads(self) -> list[ReadSlot]:
        return [slot for slot in self.readback if slot.tile is None]

    @property
    def start_offsets(self) -> list[int]:
        """Word offsets of the START headers."""
        return [self.packets[index].offset for index in self.starts]


def _check_word(words, at: int) -> int:
    word = words[at]
    if isinstance(word, bool) or not isinstance(word, int) or not 0 <= word <= 0xFFFF_FFFF:
        raise ImageError(f"word {at} ({word!r}) is not a 32-bit unsigned integer")
    return word


def split_packets(words) -> list[Packet]:
    """Cut an image into packets; raise :class:`ImageError` on a bad opcode or a truncated packet."""
    words = list(words)
    packets = []
    at = 0
    while at < len(words):
        header = _check_word(words, at)
        raw_opcode = header & 0xF
        if raw_opcode not in _OPCODES:
            known = ", ".join(f"{opcode.name}={opcode.value}" for opcode in Opcode)
            raise ImageError(f"word {at}: header {header:#010x} has opcode {raw_opcode}, "
                             f"which is not one of {known}")
        fields = decode(Header, header)
        length = 2 + BODY_WORDS * fields["window"]
        if at + length > len(words):
            raise ImageError(
                f"word {at}: {fields['opcode'].name} packet with window {fields['window']} needs "
                f"{length} words but the image ends after {len(words) - at}")
        target = _check_word(words, at + 1)
        bodies = tuple(
            body_from_words([_check_word(words, first) for first in range(start, start + BODY_WORDS)])
            for start in range(at + 2, at + length, BODY_WORDS))
        packets.append(Packet(len(packets), at, fields["opcode"], fields["window"], fields["repeat"],
                              target & 0xFFFF, target >> 16, bodies, header >> _RESERVED_AT))
        at += length
    return packets


def _single_bit(mask: int) -> bool:
    return mask != 0 and mask & (mask - 1) == 0


def _refuse(packet: Packet, max_window: int | None):
    """Raise :class:`ImageError` if the assembler must not emit ``packet``."""
    where = packet.describe()
    if packet.reserved:
        raise ImageError(f"{where}: reserved header bits are {packet.reserved:#x}, must be 0")
    opcode = packet.opcode
    if opcode in (Opcode.SWITCH, Opcode.FU):
        if max_window is not None and packet.window > max_window:
            raise ImageError(f"{where}: window {packet.window} exceeds the expander's "
                             f"max_window {max_window}; split the window into several packets")
        if packet.repeat < 1:
            raise ImageError(f"{where}: repeat {packet.repeat} is not allowed; use 1..65535")
    if opcode in (Opcode.SWITCH, Opcode.FU) and packet.is_global:
        raise ImageError(f"{where}: all-zero target masks reach no tile")
    if opcode == Opcode.WRITE and packet.is_global:
        for k, body in enumerate(packet.bodies):
            if body & 0xFFFF_FFFF not in _MEMORY_ADDRESSES:
                raise ImageError(f"{where}: body {k} writes global register {body & 0xFFFF_FFFF:#x}; "
                                 f"all-zero target masks reach no tile, and the only writable global "
                                 f"registers are mem_address ({GLOBAL_REGISTERS['mem_address']:#x}) and "
                                 f"mem_data ({GLOBAL_REGISTERS['mem_data']:#x})")
    if opcode in (Opcode.WRITE, Opcode.READ):
        for k, body in enumerate(packet.bodies):
            address = body & 0xFFFF_FFFF
            if address > 0xFFFF:
                raise ImageError(f"{where}: body {k} addresses register {address:#x}, beyond 16 bits")
    if opcode == Opcode.READ:
        if packet.is_global:
            known = global_register_addresses()
            for k, body in enumerate(packet.bodies):
                if body & 0xFFFF_FFFF not in known:
                    raise ImageError(f"{where}: body {k} reads global register {body & 0xFFFF_FFFF:#x}; "
                                     f"global registers are {GLOBAL_REGISTERS} and the bank counters "
                                     f"{BANK_COUNTERS_BASE:#x}.."
                                     f"{BANK_COUNTERS_BASE + 2 * MAX_COUNTED_BANKS - 1:#x}")
        elif not (_single_bit(packet.rows) and _single_bit(packet.cols)):
            raise ImageError(f"{where}: a READ needs exactly one target tile (or all-zero masks for "
                             f"global registers), not rows={packet.rows:#x} cols={packet.cols:#x}")
    if opcode == Opcode.START and packet.window:
        raise ImageError(f"{where}: START carries no bodies, not window {packet.window}")


def check_packet(words, max_window: int) -> Packet:
    """The assembler's check of one packet's words; return it parsed or raise :class:`ImageError`.

    Refused, because the hardware's behaviour would be unspecified or wedge the control plane:
    nonzero reserved header bits; SWITCH/FU windows above ``max_window`` (the expander's buffer;
    WRITE and READ bodies stream through and may use all 31) or ``repeat`` 0; SWITCH/FU with
    all-zero masks, and WRITE with all-zero masks to anything but ``mem_address`` and
    ``mem_data`` (the only writable global registers); register addresses beyond 16 bits;
    a READ aimed at anything but one tile or, with all-zero masks, at an unknown global
    register (a READ to no tile would leave the dispenser waiting for values forever); START
    with bodies. :func:`decode_image` applies the same rules, plus "a READ's tile is in the grid"
    and the shared memory's (which needs the fabric: whether it has one, and its size).
    """
    packets = split_packets(words)
    if len(packets) != 1:
        raise ImageError(f"expected the words of one packet, found {len(packets)} packets")
    _refuse(packets[0], max_window)
    return packets[0]


def decode_image(words, rows: int, cols: int, *, max_window: int | None = None,
                 fu_layouts: dict | None = None, memory_words: int | None = None) -> Image:
    """Decode ``words`` for an ``rows`` x ``cols`` grid (see the module docstring for the rules).

    ``max_window``, if given, also refuses micro-op windows the expanders cannot hold;
    ``fu_layouts`` maps (row, col) to the FU's micro-op layout, for :attr:`TileImage.fu_uops`;
    ``memory_words`` is the size of the fabric's shared memory (``spec.memory.words``; None: the
    fabric has none, and an image that uses ``mem_address`` or ``mem_data`` is refused).
    """
    for name, value in (("rows", rows), ("cols", cols)):
        if not 1 <= value <= MAX_GRID:
            raise ImageError(f"{name}={value} is outside 1..{MAX_GRID}")
    fu_layouts = fu_layouts or {}
    tiles = {(row, col): TileImage(row, col, fu_layout=fu_layouts.get((row, col)))
             for row in range(rows) for col in range(cols)}
    image = Image(rows, cols, split_packets(words), tiles, [], [], memory_words)
    for packet in image.packets:
        _refuse(packet, max_window)
        _apply(image, packet)
    return image


def _memory_word(image: Image, packet: Packet, k: int, body: int, write: bool) -> int | None:
    """Apply global body ``k`` to the shared memory's pointer; return the word it accesses
    through ``mem_data`` (None for ``mem_address``), or raise :class:`ImageError`."""
    name = _MEMORY_ADDRESSES[body & 0xFFFF]
    verb = "writes" if write else "reads"
    where = f"{packet.describe()}: body {k} {verb} global register {name} ({body & 0xFFFF:#x})"
    if image.memory_words is None:
        raise ImageError(f"{where}, but this fabric has no shared memory; add a [memory] table to "
                         f"the fabric description (e.g. words = 4096), or leave {name} out of the image")
    if name == "mem_address":
        if write:
            image.pointer = body >> 32
        return None
    word = image.pointer
    if word >= image.memory_words:
        raise ImageError(f"{where} at word {word}, past the end of the shared memory of "
                         f"{image.memory_words} words (0..{image.memory_words - 1}); set mem_address "
                         f"lower, move fewer words, or give the [memory] table more words")
    image.pointer += 1
    image.memory.append(Access("write" if write else "read", word, body >> 32 if write else None,
                               packet.index))
    return word


def _apply(image: Image, packet: Packet):
    targets = packet.tiles(image.rows, image.cols)
    if packet.is_global and packet.opcode in (Opcode.WRITE, Opcode.READ):
        write = packet.opcode == Opcode.WRITE
        for k, body in enumerate(packet.bodies):
            word = _memory_word(image, packet, k, body, write) if body & 0xFFFF in _MEMORY_ADDRESSES \
                else None
            if not write:
                image.readback.append(ReadSlot(None, body & 0xFFFF, packet.index, word))
        return
    if packet.opcode in (Opcode.SWITCH, Opcode.FU):
        expanded = list(packet.bodies) * packet.repeat
        for tile in targets:
            unit = image.tiles[tile]
            (unit.switch_bodies if packet.opcode == Opcode.SWITCH else unit.fu_bodies).extend(expanded)
    elif packet.opcode == Opcode.WRITE:
        for tile in targets:
            image.tiles[tile].accesses.extend(
                Access("write", body & 0xFFFF, body >> 32, packet.index) for body in packet.bodies)
    elif packet.opcode == Opcode.READ:
        if packet.is_global:
            tile = None
        elif len(targets) != 1:
            raise ImageError(f"{packet.describe()}: its target tile (rows={packet.rows:#x}, "
                             f"cols={packet.cols:#x}) is outside the {image.rows}x{image.cols} grid")
        else:
            (tile,) = targets
        for body in packet.bodies:
            image.readback.append(ReadSlot(tile, body & 0xFFFF, packet.index))
            if tile is not None:
                image.tiles[tile].accesses.append(Access("read", body & 0xFFFF, None, packet.index))
    elif packet.opcode == Opcode.START:
        image.starts.append(packet.index)

