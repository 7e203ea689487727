"""Two 15-bit fields in one token: how a joiner's side, or its two references, fit one stream.

A tile has at most 3 inputs and 2 outputs, and a joiner takes a coordinate and a reference per
side and gives a coordinate and a reference per side. On the fabric a side travels as one token
whose value holds the coordinate in its high half and the reference in its low half, and the two
references leave as one token (side 1 low, side 2 high). A half that is all ones is ``N`` (the
side has no element there); a token of kind ``N`` is ``N`` in both halves; stops and ``D`` are
the same in both. So coordinates and references must be below ``2**half - 1`` (16,383 in a 32-bit
fabric: 30-bit values, 15-bit halves). The consumer of a packed reference picks its half with the
``half`` field of its micro-op (1 low, 2 high).
"""

from .tokens import is_data

__all__ = ["half_bits", "empty_half", "pack", "unpack", "pick", "pack_sums", "unpack_sums", "sum_range"]


def half_bits(value_width: int) -> int:
    return value_width // 2


def empty_half(value_width: int) -> int:
    return (1 << half_bits(value_width)) - 1


def _field(token, value_width: int) -> int:
    return empty_half(value_width) if token == "N" else token


def pack(low, high, value_width: int) -> list:
    """Two aligned token streams as one: data (or ``N``) pairs packed, control tokens shared."""
    out, bits = [], half_bits(value_width)
    for lo, hi in zip(low, high, strict=True):
        if (is_data(lo) or lo == "N") and (is_data(hi) or hi == "N"):
            if lo == "N" and hi == "N":
                out.append("N")
                continue
            word = _field(hi, value_width) << bits | _field(lo, value_width)
            out.append(word - (1 << value_width) if word >> (value_width - 1) else word)
        else:
            out.append(lo)
    return out


def unpack(tokens, value_width: int) -> tuple[list, list]:
    """A packed stream as its low and high streams."""
    bits, empty = half_bits(value_width), empty_half(value_width)
    low, high = [], []
    for token in tokens:
        if is_data(token):
            word = token & ((1 << value_width) - 1)
            lo, hi = word & empty, word >> bits & empty
            low.append("N" if lo == empty else lo)
            high.append("N" if hi == empty else hi)
        else:
            low.append(token)
            high.append(token)
    return low, high


def pick(tokens, half: int, value_width: int) -> list:
    """The low (``half`` 1) or high (2) stream of a packed one; ``half`` 0 is the stream itself."""
    if half == 0:
        return list(tokens)
    return unpack(tokens, value_width)[half - 1]


def sum_range(value_width: int) -> range:
    """The sums an accumulator's packed token holds: a signed low half (no ``N`` among sums)."""
    bits = half_bits(value_width)
    return range(-(1 << (bits - 1)), 1 << (bits - 1))


def pack_sums(sums, crds, value_width: int) -> list:
    """An accumulator's aligned sums and inner coordinates as one stream: the coordinate in the high
    half, the sum in the low half as a signed field; control tokens shared."""
    bits = half_bits(value_width)
    out = []
    for total, crd in zip(sums, crds, strict=True):
        if is_data(total) and is_data(crd):
            word = crd << bits | (total & ((1 << bits) - 1))
            out.append(word - (1 << value_width) if word >> (value_width - 1) else word)
        else:
            out.append(crd)
    return out


def unpack_sums(tokens, value_width: int) -> tuple[list, list]:
    """A stream of :func:`pack_sums` as its sums and its coordinates."""
    bits = half_bits(value_width)
    sums, crds = [], []
    for token in tokens:
        if is_data(token):
            word = token & ((1 << value_width) - 1)
            low = word & ((1 << bits) - 1)
            sums.append(low - (1 << bits) if low >> (bits - 1) else low)
            crds.append(word >> bits & ((1 << bits) - 1))
        else:
            sums.append(token)
            crds.append(token)
    return sums, crds
