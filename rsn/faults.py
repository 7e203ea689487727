"""Run-time faults in the golden model: a link stuck not-ready, a link that drops or corrupts a
token, a tile that stops (docs/faults.md).

A fault is physical: it names a tile, and for a link fault the side of the tile whose outgoing
link fails, whatever program runs there. ``stuck`` and ``stop`` are **permanent** (the part
stays broken for every later run); ``drop`` and ``corrupt`` are **transient** (one token of one
run: a re-run of the same image does not meet them again). Written on the command line as::

    stuck:R,C,SIDE[@N]      the link from tile (R, C) out of SIDE takes N more tokens (default 0),
                            then never again (ready stuck low)
    drop:R,C,SIDE[@N]       the link loses its N-th token (default 1)
    corrupt:R,C,SIDE[@N][/B]  the link flips bit B (default 0) of its N-th token (default 1)
    stop:R,C[@N]            the tile's switch and unit stop after N steps of work (default 0)
"""

import re
from dataclasses import dataclass

from .channels import Channel
from .fabric_spec import DIRECTIONS
from .link_fault import AT_BITS

__all__ = ["Fault", "FaultError", "parse_fault", "FaultyLink", "KINDS", "PERMANENT"]

KINDS = ("stuck", "drop", "corrupt", "stop")
PERMANENT = frozenset({"stuck", "stop"})
_DEFAULT_AT = {"stuck": 0, "drop": 1, "corrupt": 1, "stop": 0}
_SYNTAX = re.compile(r"^(?P<kind>\w+):(?P<row>-?\d+),(?P<col>-?\d+)(?:,(?P<side>[A-Za-z]+))?"
                     r"(?:@(?P<at>-?\d+))?(?:/(?P<bit>-?\d+))?$")


class FaultError(ValueError):
    """A fault that does not name a part of the fabric; the message says what to write instead."""


@dataclass(frozen=True)
class Fault:
    kind: str
    tile: tuple[int, int]
    side: str | None = None     # a link fault's side of ``tile``
    at: int = 0                 # stuck: tokens it still takes; drop/corrupt: which token; stop: steps
    bit: int = 0                # corrupt: the bit it flips

    @property
    def permanent(self) -> bool:
        return self.kind in PERMANENT

    def __str__(self) -> str:
        where = f"{self.tile[0]},{self.tile[1]}" + (f",{self.side}" if self.side else "")
        return f"{self.kind}:{where}@{self.at}" + (f"/{self.bit}" if self.kind == "corrupt" else "")

    def describe(self) -> str:
        tile = f"tile {list(self.tile)}"
        link = f"the link out of {tile} side {self.side}"
        return {"stuck": f"{link} stuck not-ready after {self.at} tokens",
                "drop": f"{link} drops its token {self.at}",
                "corrupt": f"{link} flips bit {self.bit} of its token {self.at}",
                "stop": f"{tile} stops after {self.at} steps"}[self.kind]


def parse_fault(text: str, spec) -> Fault:
    """A :class:`Fault` from its command-line form, checked against ``spec``'s grid."""
    found = _SYNTAX.match(text.strip())
    usage = ("write stuck:R,C,SIDE[@N], drop:R,C,SIDE[@N], corrupt:R,C,SIDE[@N][/BIT] or stop:R,C[@N], "
             "e.g. stuck:1,1,E@10")
    if found is None:
        raise FaultError(f"fault {text!r}: {usage}")
    kind = found["kind"]
    if kind not in KINDS:
        raise FaultError(f"fault {text!r}: unknown kind {kind!r}; {usage}")
    tile = (int(found["row"]), int(found["col"]))
    if not (0 <= tile[0] < spec.rows and 0 <= tile[1] < spec.cols):
        raise FaultError(f"fault {text!r}: tile {list(tile)} is outside the {spec.rows}x{spec.cols} grid")
    side = found["side"].upper() if found["side"] else None
    if kind == "stop" and side is not None:
        raise FaultError(f"fault {text!r}: a stop names a tile only (stop:{tile[0]},{tile[1]}), not a side")
    if kind != "stop":
        if side not in DIRECTIONS:
            raise FaultError(f"fault {text!r}: a {kind} fault names a link: a side N, E, S or W after the "
                             f"tile, e.g. {kind}:{tile[0]},{tile[1]},E")
        if spec.neighbour(tile, side) is None:
            raise FaultError(f"fault {text!r}: tile {list(tile)} has no neighbour on side {side} (links "
                             f"between tiles only; a host port's stream is the host's)")
    at = _DEFAULT_AT[kind] if found["at"] is None else int(found["at"])
    counted = kind in ("drop", "corrupt")
    if at < (1 if counted else 0):
        what = "a token number (from 1)" if counted else "a count (from 0)"
        raise FaultError(f"fault {text!r}: @{at} must be {what}")
    if kind != "stop" and at >= 1 << AT_BITS:
        raise FaultError(f"fault {text!r}: @{at} is beyond what a link's fault gate counts (a route's "
                         f"beats, at most {(1 << AT_BITS) - 1}); choose a smaller @")
    bit = 0 if found["bit"] is None else int(found["bit"])
    if found["bit"] is not None and kind != "corrupt":
        raise FaultError(f"fault {text!r}: /BIT applies to corrupt faults only")
    if not 0 <= bit < spec.data_width:
        raise FaultError(f"fault {text!r}: bit {bit} is outside the {spec.data_width}-bit token")
    return Fault(kind, tile, side, at, bit)


class FaultyLink(Channel):
    """A link channel with one link fault: stuck (refuses tokens after ``at``), drop (loses token
    ``at``) or corrupt (flips a bit of token ``at``). ``hit`` says whether the fault has acted."""

    def __init__(self, channel: Channel, fault: Fault):
        super().__init__(channel.name, channel.capacity)
        self.fault, self.hit = fault, False
        self._offered = 0

    def can_push(self) -> bool:
        if self.fault.kind == "stuck" and self._offered >= self.fault.at:
            self.hit = True
            return False
        return super().can_push()

    def push(self, token: int):
        assert self.can_push(), f"channel {self.name} overflow"
        self._offered += 1
        self.passed += 1                # the sender counts a dropped token as sent
        if self._offered == self.fault.at and self.fault.kind == "drop":
            self.hit = True
            return
        if self._offered == self.fault.at and self.fault.kind == "corrupt":
            self.hit = True
            token ^= 1 << self.fault.bit
        self.tokens.append(token)
