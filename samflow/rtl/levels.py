"""Primitives that change how coordinates are split over levels: split, flatten, the point-form
converter and the coordinate holder."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .common import emit, emit_token, free, release_outputs, token_stream
from .repeat import Repeat, RepeatSigGen

__all__ = ["Split", "Flatten", "CrdPtConverter", "CrdHold"]


class Split(wiring.Component):
    """One level into two (SAM's Split): ``outer_crd`` gets ``crd // split_factor`` once per
    change, ``inner_crd`` gets ``crd % split_factor`` (or ``crd`` when ``orig_crd``) with ``S0``
    between outer groups; an input stop goes to the outer output and, one level higher, to the
    inner one. ``split_factor`` and ``orig_crd`` are inputs set for the run (a combinational
    divider: this is the general form, a power of two would be a shift)."""

    def __init__(self, width: int):
        super().__init__({"in_crd": In(token_stream(width)), "outer_crd": Out(token_stream(width)),
                          "inner_crd": Out(token_stream(width)), "split_factor": In(width),
                          "orig_crd": In(1)})

    def elaborate(self, platform):
        m = Module()
        i, outer, inner = self.in_crd, self.outer_crd, self.inner_crd
        grouped, group = Signal(), Signal.like(i.payload.value)
        value = i.payload.value.as_unsigned()
        quotient = value // self.split_factor
        remainder = value % self.split_factor
        release_outputs(m, outer, inner)
        with m.If(i.valid & free(outer, inner)):
            with m.Switch(i.payload.kind):
                with m.Case(TokenKind.DATA):
                    with m.If(grouped & (quotient != group)):
                        emit(m, inner, TokenKind.STOP, 0)       # close the group; the crd waits
                        m.d.sync += grouped.eq(0)
                    with m.Else():
                        m.d.comb += i.ready.eq(1)
                        with m.If(~grouped):
                            emit(m, outer, TokenKind.DATA, quotient)
                            m.d.sync += [grouped.eq(1), group.eq(quotient)]
                        with m.If(self.orig_crd):
                            emit(m, inner, TokenKind.DATA, value)
                        with m.Else():
                            emit(m, inner, TokenKind.DATA, remainder)
                with m.Case(TokenKind.STOP):
                    m.d.comb += i.ready.eq(1)
                    emit_token(m, outer, i.payload)
                    emit(m, inner, TokenKind.STOP, i.payload.value + 1)
                    m.d.sync += grouped.eq(0)
                with m.Default():
                    m.d.comb += i.ready.eq(1)
                    emit_token(m, outer, i.payload)
                    emit_token(m, inner, i.payload)
        return m


class Flatten(wiring.Component):
    """Two levels into one (SAM's Flatten): ``outer * split_factor + inner`` for each inner
    coordinate; inner stops are absorbed and outer stops pass. It waits for the outer coordinate
    of each inner fiber, so unlike SAM's it loses nothing when the inner stream runs ahead."""

    def __init__(self, width: int):
        super().__init__({"in_outer_crd": In(token_stream(width)), "in_inner_crd": In(token_stream(width)),
                          "crd": Out(token_stream(width)), "split_factor": In(width)})

    def elaborate(self, platform):
        m = Module()
        outer, inner, o = self.in_outer_crd, self.in_inner_crd, self.crd
        holding, base = Signal(), Signal.like(outer.payload.value)
        release_outputs(m, o)
        o_kind, i_kind = outer.payload.kind, inner.payload.kind
        with m.If(~holding):
            with m.If(outer.valid & (o_kind == TokenKind.DATA)):
                m.d.comb += outer.ready.eq(1)
                m.d.sync += [holding.eq(1), base.eq(outer.payload.value * self.split_factor)]
            with m.Elif(outer.valid & (o_kind == TokenKind.STOP) & free(o)):
                m.d.comb += outer.ready.eq(1)
                emit_token(m, o, outer.payload)
            with m.Elif(outer.valid & (o_kind == TokenKind.DONE) & inner.valid & (i_kind == TokenKind.DONE)
                        & free(o)):
                m.d.comb += [outer.ready.eq(1), inner.ready.eq(1)]
                emit(m, o, TokenKind.DONE)
        with m.Else():
            with m.If(inner.valid & (i_kind == TokenKind.STOP)):
                m.d.comb += inner.ready.eq(1)
                m.d.sync += holding.eq(0)
            with m.Elif(inner.valid & (i_kind == TokenKind.DATA) & free(o)):
                m.d.comb += inner.ready.eq(1)
                emit(m, o, TokenKind.DATA, base + inner.payload.value)
        return m


class CrdPtConverter(wiring.Component):
    """Point form back to nested coordinate streams (SAM's CrdPtConverter): a new outer
    coordinate closes the inner group with ``S0``; at ``D`` both streams are closed, the inner
    one with ``S1`` when ``last_level`` (an input set for the run)."""

    def __init__(self, width: int):
        super().__init__({
            "in_outer_crdpt": In(token_stream(width)), "in_inner_crdpt": In(token_stream(width)),
            "outer_crd": Out(token_stream(width)), "inner_crd": Out(token_stream(width)),
            "last_level": In(1)})

    def elaborate(self, platform):
        m = Module()
        o_in, i_in, outer, inner = self.in_outer_crdpt, self.in_inner_crdpt, self.outer_crd, self.inner_crd
        grouped, group = Signal(), Signal.like(o_in.payload.value)
        release_outputs(m, outer, inner)
        both = o_in.valid & i_in.valid & free(outer, inner)
        data = (o_in.payload.kind == TokenKind.DATA) & (i_in.payload.kind == TokenKind.DATA)
        done = (o_in.payload.kind == TokenKind.DONE) & (i_in.payload.kind == TokenKind.DONE)
        with m.If(both & data):
            with m.If(grouped & (o_in.payload.value != group)):
                emit(m, inner, TokenKind.STOP, 0)
                m.d.sync += grouped.eq(0)
            with m.Else():
                m.d.comb += [o_in.ready.eq(1), i_in.ready.eq(1)]
                with m.If(~grouped):
                    emit_token(m, outer, o_in.payload)
                    m.d.sync += [grouped.eq(1), group.eq(o_in.payload.value)]
                emit_token(m, inner, i_in.payload)
        with m.Elif(both & done):
            with m.If(grouped):
                emit(m, outer, TokenKind.STOP, 0)
                emit(m, inner, TokenKind.STOP, self.last_level)
                m.d.sync += grouped.eq(0)
            with m.Else():
                m.d.comb += [o_in.ready.eq(1), i_in.ready.eq(1)]
                emit(m, outer, TokenKind.DONE)
                emit(m, inner, TokenKind.DONE)
        return m


class CrdHold(wiring.Component):
    """The outer coordinate once per inner element (SAM's CrdHold): the inner stream passes
    through and, in lock step, drives a repeat-signal generator whose signals repeat the outer
    coordinates."""

    def __init__(self, width: int):
        self._width = width
        super().__init__({"in_outer_crd": In(token_stream(width)), "in_inner_crd": In(token_stream(width)),
                          "outer_crd": Out(token_stream(width)), "inner_crd": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        signals = m.submodules.signals = RepeatSigGen(self._width)
        repeater = m.submodules.repeater = Repeat(self._width)
        inner, inner_out = self.in_inner_crd, self.inner_crd
        release_outputs(m, inner_out)
        # Lock step: an inner token moves only when both the copy and the signal path take it.
        m.d.comb += [
            signals.in_stream.valid.eq(inner.valid & free(inner_out)),
            signals.in_stream.payload.eq(inner.payload),
            inner.ready.eq(signals.in_stream.ready & free(inner_out)),
        ]
        with m.If(inner.valid & inner.ready):
            emit_token(m, inner_out, inner.payload)
        wiring.connect(m, signals.repsig, repeater.in_repsig)
        wiring.connect(m, wiring.flipped(self.in_outer_crd), repeater.in_ref)
        wiring.connect(m, repeater.ref, wiring.flipped(self.outer_crd))
        return m
