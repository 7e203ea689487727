"""The token on every sparse stream, and its spellings in the vector files.

A stream carries data tokens (a coordinate, a reference or a value) and control tokens: a stop of
level *n* (``Sn`` closes the innermost fiber and *n* fibers around it), done (``D``, the last
token of a stream) and empty (``N``, a position with no element). The hardware form is one
Amaranth ``data`` struct: a signed ``value`` field of the data width and a 2-bit ``kind``; a stop
keeps its level in ``value``. Repeat-signal streams use the same layout: ``R`` is a data token
and ``S`` a stop of level 0.

In Python a token is what the vector files hold: an ``int``, ``"S0"``..``"S<n>"``, ``"D"``,
``"N"``, and on repeat-signal streams ``"R"`` and ``"S"``.
"""

import re

from amaranth.hdl import signed
from amaranth.lib import data, enum

__all__ = ["TokenKind", "token_layout", "TokenError", "MAX_STOP_LEVEL", "is_stop", "stop_level",
           "stop", "is_data", "check_token", "encode", "decode", "token_bits"]

MAX_STOP_LEVEL = 9          # SAM's S0..S9
_STOP = re.compile(r"S([0-9])\Z")


class TokenKind(enum.Enum, shape=2):
    DATA = 0
    STOP = 1
    DONE = 2
    EMPTY = 3


def token_layout(width: int) -> data.StructLayout:
    """The stream payload for data of ``width`` bits: ``width + 2`` bits in all."""
    if not isinstance(width, int) or isinstance(width, bool) or width < 5:
        raise ValueError(f"token width {width!r} is too small: use at least 5 bits, so that a stop "
                         f"level up to {MAX_STOP_LEVEL} fits the value field")
    return data.StructLayout({"value": signed(width), "kind": TokenKind})


def token_bits(width: int) -> int:
    return token_layout(width).size


class TokenError(ValueError):
    """A token that is malformed, or does not fit where it is."""


def is_stop(token) -> bool:
    return isinstance(token, str) and _STOP.match(token) is not None


def stop_level(token) -> int:
    return int(token[1:])


def stop(level: int) -> str:
    if not 0 <= level <= MAX_STOP_LEVEL:
        raise TokenError(f"stop level {level} is outside S0..S{MAX_STOP_LEVEL}")
    return f"S{level}"


def is_data(token) -> bool:
    return isinstance(token, int) and not isinstance(token, bool)


def check_token(token, *, repsig: bool = False):
    """Raise :class:`TokenError` unless ``token`` is a token of a value or a repeat-signal stream."""
    if repsig:
        if token not in ("R", "S", "D"):
            raise TokenError(f"{token!r} is not a repeat-signal token; use 'R', 'S' or 'D'")
        return
    if is_data(token) or token in ("D", "N") or is_stop(token):
        return
    if isinstance(token, float):
        raise TokenError(f"{token!r} is a fractional value; the integer primitives take integers only")
    raise TokenError(f"{token!r} is not a token; use an integer, 'S0'..'S{MAX_STOP_LEVEL}', 'D' or 'N'")


def encode(token, width: int, *, repsig: bool = False) -> int:
    """The payload bits of ``token`` in :func:`token_layout` (``width``)."""
    check_token(token, repsig=repsig)
    if repsig:
        kind, value = {"R": (TokenKind.DATA, 0), "S": (TokenKind.STOP, 0), "D": (TokenKind.DONE, 0)}[token]
    elif is_data(token):
        if not -(1 << (width - 1)) <= token < (1 << (width - 1)):
            raise TokenError(f"value {token} does not fit a signed {width}-bit token; use a wider stream")
        kind, value = TokenKind.DATA, token
    elif is_stop(token):
        kind, value = TokenKind.STOP, stop_level(token)
    else:
        kind, value = (TokenKind.DONE if token == "D" else TokenKind.EMPTY), 0
    return (value & ((1 << width) - 1)) | (kind.value << width)


def decode(bits: int, width: int, *, repsig: bool = False):
    """The token whose payload bits are ``bits``."""
    kind = TokenKind(bits >> width & 3)
    value = bits & ((1 << width) - 1)
    if value >> (width - 1):
        value -= 1 << width
    if repsig:
        return {TokenKind.DATA: "R", TokenKind.STOP: "S", TokenKind.DONE: "D"}.get(kind, f"?{bits:#x}")
    if kind is TokenKind.DATA:
        return value
    if kind is TokenKind.STOP:
        return f"S{value}" if 0 <= value <= MAX_STOP_LEVEL else f"S?{value}"
    return "D" if kind is TokenKind.DONE else "N"
