"""Malformed streams at run time: the sparse tile's sticky fault, in both the RTL and the model.

Static checks refuse what can be seen before a run (a vector file's streams, a graph's tensors).
A stream made inside the fabric, or given by a hand-written program, reaches a primitive
unchecked, and a primitive trusts three rules:

* **nesting**: no stop closes more fibers than the stream's last stop, which comes right before
  ``D`` (a stream with no stops has none to nest);
* **order**: on a coordinate input, coordinates rise strictly within a fiber (``N`` is no
  coordinate: it neither breaks nor resets the order);
* **sides**: the two inputs of an aligned primitive (the ALU, the joiners) close the same
  fibers: where both stand at a stop or ``D`` they stand at the same one, and neither meets the
  other's ``D`` with an element.

A tile keeps the first break of a run (the lowest input first within a cycle) in three read-only
status registers, cleared by START; the primitive goes on as it would (a break of the sides
rule leaves it waiting, so the run hangs and the hang report shows the fault):

* ``0x2000``: bits 0-1 the code (0: none), 2-3 the input, 4-5 the offending token's kind,
  16-31 its place in its stream (from 0, saturating at 65,535);
* ``0x2001``: the token's value (a stop's level), as a signed 32-bit word;
* ``0x2002``: for *order* the coordinate before it; for *nesting* the level of the stream's last
  stop, or -1 where an element follows the outermost stop; for *sides* the other input's token,
  its kind times 16 plus its value.
"""

from dataclasses import dataclass

from amaranth.lib import enum

from .pairs import unpack
from .tokens import is_data, is_stop, stop_level

__all__ = ["FaultCode", "Fault", "FAULT_REGISTERS", "StreamRules", "sides_fault", "describe"]

FAULT_REGISTERS = 3
_KINDS = {"data": 0, "stop": 1, "done": 2, "empty": 3}


class FaultCode(enum.Enum, shape=2):
    NONE = 0
    NESTING = 1
    ORDER = 2
    SIDES = 3


def _kind(token) -> int:
    if is_data(token):
        return _KINDS["data"]
    if is_stop(token):
        return _KINDS["stop"]
    return _KINDS["done"] if token == "D" else _KINDS["empty"]


def _value(token) -> int:
    return token if is_data(token) else stop_level(token) if is_stop(token) else 0


def _token(kind: int, value: int):
    return value if kind == 0 else f"S{value}" if kind == 1 else "D" if kind == 2 else "N"


@dataclass(frozen=True)
class Fault:
    """A break of a rule: ``code``, the tile's ``input``, the offending token and its ``index``,
    and ``previous`` (see the module's register words)."""
    code: FaultCode
    input: int
    index: int
    token: object
    previous: object = None

    def words(self) -> list[int]:
        """The three status registers' words."""
        head = self.code.value | self.input << 2 | _kind(self.token) << 4 | min(self.index, 0xFFFF) << 16
        if self.code == FaultCode.SIDES:
            previous = _kind(self.previous) * 16 + _value(self.previous)
        elif self.code == FaultCode.NESTING:
            previous = -1 if self.previous is None else stop_level(self.previous)
        else:
            previous = self.previous
        return [head, _value(self.token) & 0xFFFF_FFFF, previous & 0xFFFF_FFFF]

    @classmethod
    def from_words(cls, words) -> "Fault | None":
        head, value, previous = (int(w) & 0xFFFF_FFFF for w in words)
        code = FaultCode(head & 3)
        if code == FaultCode.NONE:
            return None
        signed = value - (1 << 32) if value >> 31 else value
        before = previous - (1 << 32) if previous >> 31 else previous
        if code == FaultCode.SIDES:
            other = _token(previous >> 4 & 3, previous & 15)
        elif code == FaultCode.NESTING:
            other = None if before == -1 else f"S{before}"
        else:
            other = before
        return cls(code, head >> 2 & 3, head >> 16, _token(head >> 4 & 3, signed), other)

    def describe(self, inputs) -> str:
        """One line naming the input and the token, for errors and hang reports."""
        port = inputs[self.input] if self.input < len(inputs) else f"i[{self.input}]"
        at = f"input {port}, token {self.index} ({self.token})"
        if self.code == FaultCode.ORDER:
            return f"{at}: coordinates do not rise within a fiber ({self.previous} before {self.token})"
        if self.code == FaultCode.NESTING and self.previous is None:
            return f"{at}: stop levels do not nest: an element after the stream's outermost stop"
        if self.code == FaultCode.NESTING:
            return (f"{at}: stop levels do not nest: {self.token} closes more fibers than the stream's "
                    f"last stop {self.previous}")
        other = inputs[1 - self.input] if len(inputs) > 1 else "the other input"
        return f"{at}: the inputs close different fibers ({other} stands at {self.previous})"


def describe(words, inputs) -> str | None:
    """The fault in ``words`` (the three registers), or None where there is none."""
    fault = Fault.from_words(words)
    return None if fault is None else fault.describe(inputs)


class StreamRules:
    """The nesting and order rules over one input's tokens as a primitive takes them.

    ``coordinates``: 0 no order to keep, 1 coordinates in the token, 2 in the high half of a packed
    pair (samflow.pairs, ``value_width`` bits); ``nesting`` False for a repeat-signal stream."""

    def __init__(self, input: int, coordinates: int = 0, value_width: int = 30, nesting: bool = True):
        self.input, self.coordinates, self.value_width = input, coordinates, value_width
        self.nesting = nesting
        self.taken, self.top, self.last_coordinate = [], None, None

    def _coordinate(self, token):
        if self.coordinates == 2 and is_data(token):
            return unpack([token], self.value_width)[1][0]
        return token

    def take(self, token) -> Fault | None:
        index = len(self.taken)
        self.taken.append(token)
        if is_stop(token) and (self.top is None or stop_level(token) > stop_level(self.taken[self.top])):
            self.top = index
        if token == "D" and self.nesting and self.top is not None and index:
            last = self.taken[index - 1]
            if not is_stop(last):
                return Fault(FaultCode.NESTING, self.input, index - 1, last)
            if stop_level(last) < stop_level(self.taken[self.top]):
                return Fault(FaultCode.NESTING, self.input, self.top, self.taken[self.top], last)
        if not self.coordinates:
            return None
        coordinate = self._coordinate(token)
        if is_data(coordinate):
            if self.last_coordinate is not None and coordinate <= self.last_coordinate:
                return Fault(FaultCode.ORDER, self.input, index, coordinate, self.last_coordinate)
            self.last_coordinate = coordinate
        elif coordinate != "N":
            self.last_coordinate = None
        return None


def _element(token) -> bool:
    return is_data(token) or token == "N"


def sides_fault(side1: list, side2: list, advance) -> Fault | None:
    """Where two aligned streams first fail to close the same fibers, walking them as the primitive
    takes them: ``advance(a, b)`` says which of two elements go on (1, 2 or 3 for both)."""
    i = j = 0
    while i < len(side1) and j < len(side2):
        a, b = side1[i], side2[j]
        if _element(a) and _element(b):
            step = advance(a, b)
            i, j = i + (step & 1), j + (step >> 1 & 1)
        elif _element(a) and is_stop(b):
            i += 1
        elif _element(b) and is_stop(a):
            j += 1
        elif a == b:
            if a == "D":
                return None
            i, j = i + 1, j + 1
        else:
            return Fault(FaultCode.SIDES, 1, j, b, a)
    return None
