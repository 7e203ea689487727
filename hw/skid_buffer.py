"""A register slice that cuts both the forward (valid, payload) and the backward (ready) path."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .params import check_payload_shape

__all__ = ["SkidBuffer", "elaborate_skid_pair"]


def elaborate_skid_pair(m: Module, sink, source, shape):
    """Add a two-slot skid buffer from stream ``sink`` to stream ``source`` to ``m``.

    The output slot is ``source.payload``/``source.valid`` themselves, held in flip-flops. The
    skid slot catches the one token that arrives in the cycle the output stalls: ``sink.ready``
    is registered, so the upstream cannot see this cycle's ``source.ready`` and has already
    sent. Returns ``skid_valid``; the occupancy is ``source.valid + skid_valid``.
    """
    skid = Signal(shape)
    skid_valid = Signal()
    output_free = ~source.valid | source.ready

    m.d.comb += sink.ready.eq(~skid_valid)
    with m.If(output_free):
        with m.If(skid_valid):
            # sink.ready is low while the skid slot is full, so nothing arrives this cycle.
            m.d.sync += [source.payload.eq(skid), source.valid.eq(1), skid_valid.eq(0)]
        with m.Else():
            m.d.sync += [source.payload.eq(sink.payload), source.valid.eq(sink.valid)]
    with m.Elif(~skid_valid):
        # The skid slot's data register loads whenever the slot is free, valid or not: only
        # `skid_valid` depends on `sink.valid`. Gating the data's clock enable with `valid` would
        # put the upstream's whole valid logic in front of a 32-bit enable net, which was the
        # critical path of large fabrics.
        m.d.sync += [skid.eq(sink.payload), skid_valid.eq(sink.valid)]
    return skid_valid


class SkidBuffer(wiring.Component):
    """Register slice for a stream: two slots, full throughput, no combinational path through.

    Place one on every link that crosses a tile boundary: ``o.valid`` and ``o.payload`` come
    from flip-flops, and ``i.ready`` depends only on the buffer's own state, never on
    ``o.ready``. It sustains one token per cycle while neither side stalls, and has one cycle of
    latency.

    Parameters
    ----------
    shape : shape-castable
        Payload shape of both streams (width >= 1).

    Members
    -------
    i : In(stream.Signature(shape))
        Upstream side.
    o : Out(stream.Signature(shape))
        Downstream side.
    """

    def __init__(self, shape):
        self._shape = check_payload_shape("SkidBuffer", shape)
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)),
        })

    def elaborate(self, platform):
        m = Module()
        elaborate_skid_pair(m, self.i, self.o, self._shape)
        return m
