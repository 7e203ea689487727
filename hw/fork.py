"""One stream to N: every token goes to every output (multicast)."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .params import check_choice, check_int, check_payload_shape

__all__ = ["Fork", "FORK_MODES"]

FORK_MODES = ("eager", "lockstep")


class Fork(wiring.Component):
    """Copy each input token to all N outputs.

    ``mode="eager"`` (the default): each output hands the token over on its own, as soon as it
    is ready; the fork remembers which outputs already have it, and retires the input token when
    the last one takes it. A slow consumer delays the others by at most one token. Every output
    obeys the stream rules whatever its consumer does.

    ``mode="lockstep"``: stateless; all outputs take each token in the same cycle. Output k is
    valid only while every *other* output is ready, so ``o[k].valid`` depends on its siblings'
    ``ready``. This keeps the stream rules only if a consumer's ready never falls without a
    transfer (true of TokenQueue and SkidBuffer inputs), and it must not feed logic that
    combines sibling outputs combinationally (e.g. a Join), which would close a loop. Use it
    where the cost of eager's N state bits matters and the consumers are queues.

    Parameters
    ----------
    shape : shape-castable
        Payload shape (width >= 1).
    n : int
        Number of outputs (>= 2).
    mode : "eager" or "lockstep"

    Members
    -------
    i : In(stream.Signature(shape))
    o : Out(stream.Signature(shape)).array(n)
    """

    def __init__(self, shape, n: int, *, mode: str = "eager"):
        self._shape = check_payload_shape("Fork", shape)
        self._n = check_int("Fork", "n", n, minimum=2, meaning="number of outputs")
        self._mode = check_choice("Fork", "mode", mode, FORK_MODES)
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)).array(n),
        })

    @property
    def mode(self) -> str:
        return self._mode

    def elaborate(self, platform):
        m = Module()
        for output in self.o:
            m.d.comb += output.payload.eq(self.i.payload)
        if self._mode == "eager":
            self._elaborate_eager(m)
        else:
            self._elaborate_lockstep(m)
        return m

    def _elaborate_eager(self, m):
        delivered = Signal(self._n)   # outputs that already took the current input token
        taken = [delivered[k] | self.o[k].ready for k in range(self._n)]
        all_taken = Signal()
        m.d.comb += all_taken.eq(_all(taken))
        m.d.comb += self.i.ready.eq(all_taken)
        for k, output in enumerate(self.o):
            m.d.comb += output.valid.eq(self.i.valid & ~delivered[k])
            with m.If(self.i.valid & all_taken):
                m.d.sync += delivered[k].eq(0)
            with m.Elif(output.valid & output.ready):
                m.d.sync += delivered[k].eq(1)

    def _elaborate_lockstep(self, m):
        readies = [output.ready for output in self.o]
        m.d.comb += self.i.ready.eq(_all(readies))
        for k, output in enumerate(self.o):
            others = readies[:k] + readies[k + 1:]
            m.d.comb += output.valid.eq(self.i.valid & _all(others))


def _all(bits):
    result = bits[0]
    for bit in bits[1:]:
        result = result & bit
    return result
