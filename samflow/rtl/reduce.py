"""The reducer."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .common import emit, free, release_outputs, token_stream

__all__ = ["Reduce"]


class Reduce(wiring.Component):
    """Sums each innermost fiber (SAM's Reduce): ``S0`` gives the sum, ``Sn`` the sum then
    ``S(n-1)``; an empty fiber sums to 0. Values wrap at the data width."""

    def __init__(self, width: int):
        self._width = width
        super().__init__({"in_val": In(token_stream(width)), "val": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        i, o = self.in_val, self.val
        total = Signal.like(i.payload.value)
        pending, level = Signal(), Signal(4)
        kind = i.payload.kind
        release_outputs(m, o)
        with m.If(pending):
            with m.If(free(o)):
                emit(m, o, TokenKind.STOP, level)
                m.d.sync += pending.eq(0)
        with m.Elif(i.valid & (kind == TokenKind.DATA)):
            m.d.comb += i.ready.eq(1)
            m.d.sync += total.eq(total + i.payload.value)
        with m.Elif(i.valid & free(o)):
            m.d.comb += i.ready.eq(1)
            with m.If(kind == TokenKind.STOP):
                emit(m, o, TokenKind.DATA, total)
                m.d.sync += [total.eq(0), pending.eq(i.payload.value != 0), level.eq(i.payload.value - 1)]
            with m.Else():
                emit(m, o, TokenKind.DONE)
        return m
