"""Which values a ``width``-bit word accepts: the one rule every entry point checks data against.

A value is accepted when it is an integer from -2^(width-1) to 2^width - 1: a ``width``-bit word
written either signed (two's complement) or unsigned. It is stored modulo 2^width, so -1 and
2^width - 1 are the same word. Anything else is refused rather than truncated: a wider integer
would lose its high bits, and a float or a bool is not a word at all.

The same rule compares results: a word the fabric returns equals an expected value when they
agree modulo 2^width, whichever way the expected value is written, and a difference is shown in
both readings (:func:`words_problem`), since a reader may have written either.
"""

from numbers import Integral

__all__ = ["word_range", "word_problem", "as_word", "READ_WIDTH", "same_word", "word_text",
           "words_problem"]

# Register reads (READ packets) return 32-bit words, whatever the fabric's data_width.
READ_WIDTH = 32


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


def same_word(got, expected, width: int) -> bool:
    """Whether ``got`` and ``expected`` are the same ``width``-bit word (equal modulo 2^width)."""
    if isinstance(got, bool) or isinstance(expected, bool) or not (
            isinstance(got, Integral) and isinstance(expected, Integral)):
        return got == expected
    return (got - expected) % (1 << width) == 0


def word_text(value, width: int) -> str:
    """``value`` as the unsigned word, with its signed reading where that differs:
    ``4294967295 (-1)`` for 32 bits."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        return repr(value)
    unsigned = int(value) % (1 << width)
    signed = unsigned - (1 << width) if unsigned >> (width - 1) else unsigned
    return str(unsigned) if signed == unsigned else f"{unsigned} ({signed})"


def words_problem(what: str, got, expected, width: int, unit: str = "token") -> str | None:
    """Where the words ``got`` first differ from ``expected`` (compared modulo 2^width), or None.

    E.g. ``host port out0 differs at token 2: got 4294967295 (-1), expected 1 (8 vs 8 tokens)``.
    """
    got, expected = list(got), list(expected)
    k = next((k for k, (a, b) in enumerate(zip(got, expected, strict=False)) if not same_word(a, b, width)),
             None)
    if k is None:
        if len(got) == len(expected):
            return None
        k = min(len(got), len(expected))
    shown = [word_text(words[k], width) if k < len(words) else "nothing" for words in (got, expected)]
    return (f"{what} differs at {unit} {k}: got {shown[0]}, expected {shown[1]} "
            f"({len(got)} vs {len(expected)} {unit}s)")
