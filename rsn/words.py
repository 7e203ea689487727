"""Which values a ``width``-bit word accepts: the one rule every entry point checks data against.

A value is accepted when it is an integer from -2^(width-1) to 2^width - 1: a ``width``-bit word
written either signed (two's complement) or unsigned. It is stored modulo 2^width, so -1 and
2^width - 1 are the same word. Anything else is refused rather than truncated: a wider integer
would lose its high bits, and a float or a bool is not a word at all.
"""

from numbers import Integral

__all__ = ["word_range", "word_problem", "as_word"]


def word_range(width: int) -> tuple[int, int]:
    """The lowest and highest value a ``width``-bit word accepts."""
    return -(1 << (width - 1)), (1 << width) - 1


def word_problem(value, width: int, limit: str = "") -> str | None:
    """Why ``value`` is not a ``width``-bit word, naming the value and the range, or None.

    ``limit`` says where the width comes from (e.g. "the fabric's data_width").
    """
    low, high = word_range(width)
    bits = f"{limit} of {width} bits" if limit else f"{width} bits"
    allowed = f"use an integer {low}..{high} (signed or unsigned; stored modulo 2^{width})"
    if isinstance(value, bool) or not isinstance(value, Integral):
        return f"{value!r} is a {type(value).__name__}, not an integer; {allowed}"
    if not low <= value <= high:
        return f"{value} does not fit {bits}; {allowed}"
    return None


def as_word(value, width: int) -> int:
    """``value`` (already checked with :func:`word_problem`) as the unsigned word stored."""
    return int(value) % (1 << width)
