"""N streams to one: a token made of one token from each input."""

from amaranth.hdl import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .params import check_int, check_payload_shape

__all__ = ["Join"]


class Join(wiring.Component):
    """Wait until every input offers a token, then emit them together as one output token.

    The output payload is ``data.ArrayLayout(shape, n)``: element k is input k's token, and in
    Verilog element 0 sits in the least significant bits. All inputs are consumed in the same
    cycle as the output transfer. No state, no added latency.

    Parameters
    ----------
    shape : shape-castable
        Payload shape of each input (width >= 1).
    n : int
        Number of inputs (>= 2).

    Members
    -------
    i : In(stream.Signature(shape)).array(n)
    o : Out(stream.Signature(data.ArrayLayout(shape, n)))
    """

    def __init__(self, shape, n: int):
        self._shape = check_payload_shape("Join", shape)
        self._n = check_int("Join", "n", n, minimum=2, meaning="number of inputs")
        super().__init__({
            "i": In(stream.Signature(shape)).array(n),
            "o": Out(stream.Signature(data.ArrayLayout(shape, n))),
        })

    def elaborate(self, platform):
        m = Module()
        all_valid = self.i[0].valid
        for sink in self.i[1:]:
            all_valid = all_valid & sink.valid
        m.d.comb += self.o.valid.eq(all_valid)
        for k, sink in enumerate(self.i):
            m.d.comb += [
                self.o.payload[k].eq(sink.payload),
                sink.ready.eq(self.o.ready & all_valid),
            ]
        return m
