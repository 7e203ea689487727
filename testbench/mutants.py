"""Deliberately broken token queues: the benches must catch every one of them.

Each mutant has TokenQueue's exact signature and wraps a real TokenQueue, breaking one promise.
A check that lets a mutant pass could not have failed, and would prove nothing.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring

from hw.token_queue import TokenQueue

__all__ = ["MUTANTS"]


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


# name -> (mutant class, the words of the check that must catch it)
MUTANTS = {
    "dropping_queue": (DroppingQueue, "queue holds"),
    "corrupting_queue": (CorruptingQueue, "expected"),
    "duplicating_queue": (DuplicatingQueue, "queue holds"),
    "impatient_queue": (ImpatientQueue, "valid fell"),
    "fidgeting_queue": (FidgetingQueue, "payload changed"),
}
