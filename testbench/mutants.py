# amaranth: UnusedElaboratable=no
"""Deliberately broken primitives: the benches must catch every one of them.

Each mutant has the exact signature of the primitive it imitates and breaks one promise. A check
that lets a mutant pass could not have failed, and would prove nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import wiring

from hw.arbiter import Arbiter
from hw.banked_memory import BankedMemory
from hw.fork import Fork
from hw.token_queue import TokenQueue

__all__ = ["Mutant", "MUTANTS", "LateBankZeroMemory", "CarelessDirectoryMemory"]


class _QueueMutant(wiring.Component):
    def __init__(self, shape, depth: int):
        self.inner = TokenQueue(shape, depth)
        super().__init__(self.inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self.inner
        m.d.comb += [
            inner.i.payload.eq(self.i.payload),
            inner.i.valid.eq(self.i.valid),
            self.i.ready.eq(inner.i.ready),
            self.o.payload.eq(inner.o.payload),
            self.o.valid.eq(inner.o.valid),
            inner.o.ready.eq(self.o.ready),
            self.level.eq(inner.level),
        ]
        self.break_it(m, inner)
        return m


class DroppingQueue(_QueueMutant):
    """Accepts every fifth token without storing it."""

    def break_it(self, m, inner):
        count = Signal(range(5))
        drop = count == 4
        m.d.comb += inner.i.valid.eq(self.i.valid & ~drop)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += count.eq(Mux(drop, 0, count + 1))


class CorruptingQueue(_QueueMutant):
    """Flips the low bit of every seventh token it stores."""

    def break_it(self, m, inner):
        count = Signal(range(7))
        m.d.comb += inner.i.payload.eq(self.i.payload ^ (count == 6))
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += count.eq(Mux(count == 6, 0, count + 1))


class DuplicatingQueue(_QueueMutant):
    """Delivers every fourth token twice."""

    def break_it(self, m, inner):
        count = Signal(2)
        m.d.comb += inner.o.ready.eq(self.o.ready & (count != 3))
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += count.eq(count + 1)


class ImpatientQueue(_QueueMutant):
    """Lowers ``o.valid`` for one cycle after its offer has waited two cycles."""

    def break_it(self, m, inner):
        waited = Signal(2)
        m.d.comb += self.o.valid.eq(inner.o.valid & (waited != 2))
        with m.If((waited == 2) | (self.o.valid & self.o.ready)):
            m.d.sync += waited.eq(0)
        with m.Elif(inner.o.valid):
            m.d.sync += waited.eq(waited + 1)


class FidgetingQueue(_QueueMutant):
    """Changes ``o.payload`` while its offer waits."""

    def break_it(self, m, inner):
        waiting = Signal()
        m.d.sync += waiting.eq(self.o.valid & ~self.o.ready)
        m.d.comb += self.o.payload.eq(inner.o.payload ^ waiting)


class FixedPriorityArbiter(wiring.Component):
    """An Arbiter look-alike that always prefers the lowest-numbered requesting input."""

    def __init__(self, shape, n: int):
        self.n = n
        super().__init__(Arbiter(shape, n).signature)

    def elaborate(self, platform):
        m = Module()
        held = Signal()
        current = Signal(range(self.n))
        choice = Signal(range(self.n))
        for k in reversed(range(self.n)):
            with m.If(self.i[k].valid):
                m.d.comb += choice.eq(k)
        m.d.comb += self.grant.eq(Mux(held, current, choice))
        with m.Switch(self.grant):
            for k in range(self.n):
                with m.Case(k):
                    m.d.comb += [self.o.valid.eq(self.i[k].valid),
                                 self.o.payload.eq(self.i[k].payload),
                                 self.i[k].ready.eq(self.o.ready)]
        m.d.sync += [held.eq(self.o.valid & ~self.o.ready), current.eq(self.grant)]
        return m


class HastyFork(wiring.Component):
    """An eager Fork look-alike that retires the input as soon as output 0 has the token."""

    def __init__(self, shape, n: int):
        self.n = n
        super().__init__(Fork(shape, n).signature)

    def elaborate(self, platform):
        m = Module()
        delivered = Signal(self.n)
        done = delivered[0] | self.o[0].ready
        m.d.comb += self.i.ready.eq(done)
        for k, output in enumerate(self.o):
            m.d.comb += [output.payload.eq(self.i.payload),
                         output.valid.eq(self.i.valid & ~delivered[k])]
            with m.If(self.i.valid & done):
                m.d.sync += delivered[k].eq(0)
            with m.Elif(output.valid & output.ready):
                m.d.sync += delivered[k].eq(1)
        return m


class LateBankZeroMemory(BankedMemory):
    """A BankedMemory whose bank 0 answers one cycle late.

    A port's response from bank 0 then reaches the response buffer in the same cycle as the
    response to the port's next request, if that went to another bank, and is queued after it:
    responses to one port come back out of request order. The credits still count every
    response, so nothing is lost; only the order breaks. (Not in MUTANTS: BankedMemory is not a
    catalog primitive; its own bench judges it.)
    """

    def _arrivals(self, m, port, valid, arrival, from_bank_zero):
        late_valid = Signal(name=f"late_valid{port}")
        late = Signal.like(arrival, name=f"late{port}")
        m.d.sync += [late_valid.eq(valid & from_bank_zero), late.eq(arrival)]
        return [(valid & ~from_bank_zero, arrival), (late_valid, late)]


class CarelessDirectoryMemory(BankedMemory):
    """A BankedMemory whose atomic directory grants every ACQUIRE and accepts every RELEASE."""

    def _elaborate_directory(self, m, b, row, acquire, release, result):
        with m.If(acquire | release):
            m.d.sync += result.eq(1)


@dataclass(frozen=True)
class Mutant:
    build: Callable
    kind: str           # the catalog primitive it pretends to be, whose scoreboard judges it
    params: dict
    evidence: str       # words of the failure message of the check that must catch it


_QUEUE = {"width": 8, "depth": 4}

MUTANTS = {
    "dropping_queue": Mutant(lambda: DroppingQueue(unsigned(8), 4), "token_queue", _QUEUE, "queue holds"),
    "corrupting_queue": Mutant(lambda: CorruptingQueue(unsigned(8), 4), "token_queue", _QUEUE, "expected"),
    "duplicating_queue": Mutant(lambda: DuplicatingQueue(unsigned(8), 4), "token_queue", _QUEUE,
                                "queue holds"),
    "impatient_queue": Mutant(lambda: ImpatientQueue(unsigned(8), 4), "token_queue", _QUEUE, "valid fell"),
    "fidgeting_queue": Mutant(lambda: FidgetingQueue(unsigned(8), 4), "token_queue", _QUEUE,
                              "payload changed"),
    "fixed_priority_arbiter": Mutant(lambda: FixedPriorityArbiter(unsigned(8), 3), "arbiter",
                                     {"width": 8, "n": 3, "tuple_beats": 1}, "round-robin"),
    "hasty_fork": Mutant(lambda: HastyFork(unsigned(8), 3), "fork",
                         {"width": 8, "n": 3, "mode": "eager"}, "must retire exactly when all"),
}
