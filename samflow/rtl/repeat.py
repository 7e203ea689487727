"""The repeat-signal generator and the repeater."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .common import emit, emit_token, free, release_outputs, token_stream

__all__ = ["RepeatSigGen", "Repeat"]


class RepeatSigGen(wiring.Component):
    """``in_stream`` -> ``repsig``: ``R`` (a data token) per element, ``S`` (stop 0) per stop, then
    ``D`` (SAM's RepeatSigGen). One token per cycle."""

    def __init__(self, width: int):
        super().__init__({"in_stream": In(token_stream(width)), "repsig": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        i, o = self.in_stream, self.repsig
        release_outputs(m, o)
        m.d.comb += i.ready.eq(free(o))
        kind = i.payload.kind
        with m.If(i.valid & free(o)):
            emit(m, o, Mux(kind == TokenKind.EMPTY, TokenKind.DATA, kind), 0)
        return m


class Repeat(wiring.Component):
    """Emits the held reference once per ``R``; ``S`` closes the fiber (SAM's Repeat).

    A signal is taken only while a reference is held, so the output does not depend on which input
    arrives first (SAM's own Repeat needs the reference to lead). The stop after a fiber merges
    with a stop that follows the reference on ``in_ref``, one level higher. A stop with no
    reference before it (an empty fiber) takes the ``S`` the signal has for it and leaves one
    level higher.
    """

    def __init__(self, width: int):
        super().__init__({"in_ref": In(token_stream(width)), "in_repsig": In(token_stream(width)),
                          "ref": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        ref, signal, o = self.in_ref, self.in_repsig, self.ref
        held, holding = Signal.like(ref.payload), Signal()
        release_outputs(m, o)
        r_kind, s_kind = ref.payload.kind, signal.payload.kind
        with m.If(~holding):
            with m.If(ref.valid & ((r_kind == TokenKind.DATA) | (r_kind == TokenKind.EMPTY))):
                m.d.comb += ref.ready.eq(1)
                m.d.sync += [held.eq(ref.payload), holding.eq(1)]
            with m.Elif(ref.valid & (r_kind == TokenKind.STOP) & signal.valid
                        & (s_kind == TokenKind.STOP) & free(o)):
                # An empty fiber: the signal, made from the level below, has its 'S' here.
                m.d.comb += [ref.ready.eq(1), signal.ready.eq(1)]
                emit(m, o, TokenKind.STOP, ref.payload.value + 1)
            with m.Elif(ref.valid & (r_kind == TokenKind.DONE) & signal.valid
                        & (s_kind == TokenKind.DONE) & free(o)):
                m.d.comb += [ref.ready.eq(1), signal.ready.eq(1)]
                emit(m, o, TokenKind.DONE)
        with m.Else():
            with m.If(signal.valid & (s_kind == TokenKind.DATA) & free(o)):
                m.d.comb += signal.ready.eq(1)
                emit_token(m, o, held)
            with m.Elif(signal.valid & (s_kind == TokenKind.STOP) & ref.valid & free(o)):
                m.d.comb += signal.ready.eq(1)
                m.d.sync += holding.eq(0)
                with m.If(r_kind == TokenKind.STOP):
                    m.d.comb += ref.ready.eq(1)
                    emit(m, o, TokenKind.STOP, ref.payload.value + 1)
                with m.Else():
                    emit(m, o, TokenKind.STOP, 0)
        return m
