"""Bounded FIFO channels: the streams of the golden model.

The golden model runs the fabric as a network of processes (switches, FUs) connected by these
channels, one token at a time. Channel capacities are the hardware's queue depths, so a program
that would deadlock in hardware for lack of buffering deadlocks in the model too.
"""

from collections import deque

from .isa import IsaError

__all__ = ["Channel", "UnitModel"]


class Channel:
    """A FIFO of at most ``capacity`` tokens, with a count of every token that passed."""

    def __init__(self, name: str, capacity: int):
        self.name, self.capacity = name, capacity
        self.tokens = deque()
        self.passed = 0

    def can_push(self) -> bool:
        return len(self.tokens) < self.capacity

    def push(self, token: int):
        assert self.can_push(), f"channel {self.name} overflow"
        self.tokens.append(token)
        self.passed += 1

    def can_pop(self) -> bool:
        return bool(self.tokens)

    def peek(self) -> int:
        return self.tokens[0]

    def pop(self) -> int:
        return self.tokens.popleft()

    def __repr__(self):
        return f"Channel({self.name}, {len(self.tokens)}/{self.capacity})"


class UnitModel:
    """What every unit's golden model (a switch or a FU kind) provides.

    ``load`` takes the unit's decoded micro-ops (dicts from ``rsn.isa.decode``) in execution
    order. ``step`` makes at most one token's worth of progress on the unit's channels and says
    whether it did; the fabric model calls it until no unit can move (finished or deadlocked).
    """

    # A FU kind whose micro-op carries a count (beats, firings, steps) names the field here;
    # ``load`` refuses a count of 0, which the RTL would run as the field's full range.
    KIND = "unit"
    COUNT_FIELD: str | None = None

    def __init__(self):
        self.uops = deque()
        self.current = None         # the decoded micro-op in progress
        self.finished = False
        self.firings = 0
        # Running an open micro-op (no count; the program ends at quiescence): the fabric model
        # then counts the unit's channels' tokens as work it holds.
        self.open = False

    def load(self, uops):
        uops = list(uops)
        for uop in uops:
            self.check_uop(uop)
        self.uops.extend(uops)

    def check_uop(self, uop: dict):
        """Raise :class:`rsn.isa.IsaError` for a micro-op this unit refuses."""
        field = self.COUNT_FIELD
        if field is not None and uop[field] < 1:
            raise IsaError(f"{self.KIND} micro-op {field}={uop[field]}: a count of 0 is not allowed")

    @property
    def busy(self) -> bool:
        """A micro-op is waiting or in progress."""
        return self.current is not None or bool(self.uops)

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        raise NotImplementedError
