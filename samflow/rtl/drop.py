"""Stop-token drop, empty-fiber stop drop and coordinate drop."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .common import emit, emit_token, free, release_outputs, token_stream

__all__ = ["StknDrop", "EmptyStknDrop", "CrdDrop", "ZeroValueDrop"]


class StknDrop(wiring.Component):
    """``in_stream`` -> ``val`` without its stop tokens (SAM's StknDrop): one token per cycle."""

    def __init__(self, width: int):
        super().__init__({"in_stream": In(token_stream(width)), "val": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        i, o = self.in_stream, self.val
        release_outputs(m, o)
        m.d.comb += i.ready.eq(free(o))
        with m.If(i.valid & free(o) & (i.payload.kind != TokenKind.STOP)):
            emit_token(m, o, i.payload)
        return m


class EmptyStknDrop(wiring.Component):
    """Drops the stops of empty fibers: a run of stops leaves as one stop of the run's highest
    level, just before the next non-stop token, and stops before a stream's first element are
    dropped (SAM's EmptyFiberStknDrop)."""

    def __init__(self, width: int):
        super().__init__({"in_stream": In(token_stream(width)), "val": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        i, o = self.in_stream, self.val
        pending, level, seen = Signal(), Signal(4), Signal()
        is_stop = i.payload.kind == TokenKind.STOP
        release_outputs(m, o)
        m.d.comb += i.ready.eq(free(o) & (is_stop | ~pending))
        with m.If(i.valid & free(o)):
            with m.If(is_stop):
                with m.If(seen):
                    m.d.sync += [pending.eq(1),
                                 level.eq(Mux(pending & (level > i.payload.value), level, i.payload.value))]
            with m.Elif(pending):
                emit(m, o, TokenKind.STOP, level)
                m.d.sync += pending.eq(0)
            with m.Else():
                emit_token(m, o, i.payload)
                m.d.sync += seen.eq(i.payload.kind != TokenKind.DONE)
        return m


class CrdDrop(wiring.Component):
    """Keeps an outer coordinate only if its inner fiber has an element (SAM's CrdDrop).

    The inner stream passes through unchanged; the outer coordinate leaves with the first
    element of its inner fiber, so a kept coordinate costs no cycle of its own.
    """

    def __init__(self, width: int):
        super().__init__({
            "in_outer_crd": In(token_stream(width)), "in_inner_crd": In(token_stream(width)),
            "outer_crd": Out(token_stream(width)), "inner_crd": Out(token_stream(width)),
        })

    def elaborate(self, platform):
        m = Module()
        outer, inner = self.in_outer_crd, self.in_inner_crd
        o_out, i_out = self.outer_crd, self.inner_crd
        fiber_open, emitted, crds_in_fiber = Signal(), Signal(), Signal()
        crd = Signal.like(outer.payload)
        release_outputs(m, o_out, i_out)
        o_kind, i_kind = outer.payload.kind, inner.payload.kind
        with m.If(~fiber_open):
            with m.If(outer.valid & (o_kind == TokenKind.DATA)):
                m.d.comb += outer.ready.eq(1)
                m.d.sync += [crd.eq(outer.payload), fiber_open.eq(1), emitted.eq(0)]
            with m.Elif(outer.valid & (o_kind == TokenKind.STOP) & crds_in_fiber & free(o_out)):
                m.d.comb += outer.ready.eq(1)
                emit_token(m, o_out, outer.payload)
                m.d.sync += crds_in_fiber.eq(0)
            with m.Elif(outer.valid & inner.valid & free(o_out, i_out)
                        & (((o_kind == TokenKind.STOP) & (i_kind == TokenKind.STOP))
                           | ((o_kind == TokenKind.DONE) & (i_kind == TokenKind.DONE)))):
                # An empty outer fiber's one inner stop, or the end of both streams.
                m.d.comb += [outer.ready.eq(1), inner.ready.eq(1)]
                emit_token(m, o_out, outer.payload)
                emit_token(m, i_out, inner.payload)
                m.d.sync += crds_in_fiber.eq(0)
        with m.Else():
            with m.If(inner.valid & (i_kind == TokenKind.STOP) & free(i_out)):
                m.d.comb += inner.ready.eq(1)
                emit_token(m, i_out, inner.payload)
                m.d.sync += [fiber_open.eq(0), crds_in_fiber.eq(1)]
            with m.Elif(inner.valid & (i_kind != TokenKind.STOP) & (i_kind != TokenKind.DONE)
                        & free(i_out) & (emitted | free(o_out))):
                m.d.comb += inner.ready.eq(1)
                emit_token(m, i_out, inner.payload)
                with m.If(~emitted):
                    emit_token(m, o_out, crd)
                    m.d.sync += emitted.eq(1)
        return m


class ZeroValueDrop(wiring.Component):
    """Drops each coordinate whose value is 0, with the value (SAM's value dropper: ``crddrop``
    with ``vals=true`` behind a dense scanner). ``in_crd`` and ``in_val`` line up token for token;
    every other pair passes, one pair per cycle."""

    def __init__(self, width: int):
        super().__init__({
            "in_crd": In(token_stream(width)), "in_val": In(token_stream(width)),
            "crd": Out(token_stream(width)), "val": Out(token_stream(width)),
        })

    def elaborate(self, platform):
        m = Module()
        crd, val, crd_out, val_out = self.in_crd, self.in_val, self.crd, self.val
        release_outputs(m, crd_out, val_out)
        moving = crd.valid & val.valid & free(crd_out, val_out)
        m.d.comb += [crd.ready.eq(moving), val.ready.eq(moving)]
        zero = (val.payload.kind == TokenKind.DATA) & (val.payload.value == 0) \
            & (crd.payload.kind == TokenKind.DATA)
        with m.If(moving & ~zero):
            emit_token(m, crd_out, crd.payload)
            emit_token(m, val_out, val.payload)
        return m
