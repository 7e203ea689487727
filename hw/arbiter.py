"""N streams to one, fairly: round-robin merge with optional multi-beat grants."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .params import check_int, check_payload_shape

__all__ = ["Arbiter"]


class Arbiter(wiring.Component):
    """Merge N streams into one, granting the inputs in round-robin order.

    Rule: when a grant ends, the next grant goes to the first requesting (valid) input after
    the last granted one, in cyclic order 0, 1, ..., N-1, 0, ... Before any grant, input 0 has
    priority. So an input that keeps requesting waits at most N-1 grants.

    A grant lasts ``tuple_beats`` transfers (count-based framing, as on RSN paths): the tuple's
    beats are never interleaved with another input's, and a granted input that pauses between
    beats holds the output until its tuple is complete. Once the output offers a token, the
    grant does not change until that token is taken, so ``o.valid`` and ``o.payload`` stay
    stable while stalled.

    ``o`` is driven combinationally from the granted input; put a SkidBuffer after the arbiter
    where a registered output is needed.

    Parameters
    ----------
    shape : shape-castable
        Payload shape (width >= 1).
    n : int
        Number of inputs (>= 2).
    tuple_beats : int
        Transfers per grant (>= 1).

    Members
    -------
    i : In(stream.Signature(shape)).array(n)
    o : Out(stream.Signature(shape))
    grant : Out(range(n))
        Which input the token on ``o`` comes from.
    """

    def __init__(self, shape, n: int, *, tuple_beats: int = 1):
        self._shape = check_payload_shape("Arbiter", shape)
        self._n = check_int("Arbiter", "n", n, minimum=2, meaning="number of inputs")
        self._tuple_beats = check_int("Arbiter", "tuple_beats", tuple_beats, minimum=1,
                                      meaning="transfers per grant")
        super().__init__({
            "i": In(stream.Signature(shape)).array(n),
            "o": Out(stream.Signature(shape)),
            "grant": Out(range(n)),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._n
        last = Signal(range(n), init=n - 1)     # most recently granted input
        held = Signal()                         # a grant is in force: keep `current`
        current = Signal(range(n))
        beat = Signal(range(self._tuple_beats))

        choice = Signal(range(n))               # round-robin pick among this cycle's requests
        with m.Switch(last):
            for previous in range(n):
                with m.Case(previous):
                    order = [(previous + step) % n for step in range(1, n + 1)]
                    # Lowest priority first, so that the last assignment made wins.
                    for candidate in reversed(order):
                        with m.If(self.i[candidate].valid):
                            m.d.comb += choice.eq(candidate)

        m.d.comb += self.grant.eq(Mux(held, current, choice))
        with m.Switch(self.grant):
            for k in range(n):
                with m.Case(k):
                    m.d.comb += [
                        self.o.valid.eq(self.i[k].valid),
                        self.o.payload.eq(self.i[k].payload),
                        self.i[k].ready.eq(self.o.ready),
                    ]

        with m.If(self.o.valid & self.o.ready):
            if self._tuple_beats == 1:
                m.d.sync += [held.eq(0), last.eq(self.grant)]
            else:
                with m.If(beat == self._tuple_beats - 1):
                    m.d.sync += [held.eq(0), last.eq(self.grant), beat.eq(0)]
                with m.Else():
                    m.d.sync += [held.eq(1), current.eq(self.grant), beat.eq(beat + 1)]
        with m.Elif(self.o.valid):
            m.d.sync += [held.eq(1), current.eq(self.grant)]
        return m
