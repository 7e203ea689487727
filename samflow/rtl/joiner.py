"""The two-input joiners: intersect and union, on (coordinate, reference) pairs."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .common import emit, emit_token, free, release_outputs, token_stream

__all__ = ["Intersect", "Union"]


def _joiner_inputs(width):
    return {f"in_{name}{side}": In(token_stream(width)) for side in (1, 2) for name in ("ref", "crd")}


class _Sides:
    """Both inputs of one side move together: a side is valid when its crd and ref both are."""

    def __init__(self, component, m):
        self.m = m
        self.crd = [component.in_crd1, component.in_crd2]
        self.ref = [component.in_ref1, component.in_ref2]
        self.valid = self.crd[0].valid & self.ref[0].valid & self.crd[1].valid & self.ref[1].valid
        self.kind = [c.payload.kind for c in self.crd]
        self.value = [c.payload.value for c in self.crd]

    def take(self, *sides):
        for side in sides:
            self.m.d.comb += [self.crd[side].ready.eq(1), self.ref[side].ready.eq(1)]


class Intersect(wiring.Component):
    """Coordinates present on both sides, with both references (SAM's Intersect2).

    The smaller side steps on; while it does, ``crd_skip<side>`` offers the other side's
    coordinate once, a hint its scanner may gallop to. ``N`` on a side pairs with one token of the
    other and leaves as ``N`` on ``crd``, ``ref1`` and ``ref2``. Stops close both sides at once
    and go to every output; ``D`` goes to all but the hint streams. One step per cycle.
    """

    def __init__(self, width: int):
        super().__init__(_joiner_inputs(width) | {
            name: Out(token_stream(width)) for name in ("crd", "ref1", "ref2", "crd_skip1", "crd_skip2")})

    def elaborate(self, platform):
        m = Module()
        sides = _Sides(self, m)
        outputs = [self.crd, self.ref1, self.ref2, self.crd_skip1, self.crd_skip2]
        hints = [self.crd_skip1, self.crd_skip2]
        hinted = [Signal(name=f"hinted{k}") for k in (1, 2)]
        last_hint = [Signal.like(sides.value[0], name=f"last_hint{k}") for k in (1, 2)]
        release_outputs(m, *outputs)
        ka, kb = sides.kind
        a, b = sides.value
        data, stop = TokenKind.DATA, TokenKind.STOP

        def emit_match(kind, crd_token=None):
            if crd_token is None:
                for out in (self.crd, self.ref1, self.ref2):
                    emit(m, out, kind)
            else:
                emit_token(m, self.crd, crd_token)
                emit_token(m, self.ref1, sides.ref[0].payload)
                emit_token(m, self.ref2, sides.ref[1].payload)

        def step_past(side):
            other = sides.value[1 - side]
            sides.take(side)
            with m.If(~hinted[side] | (last_hint[side] != other)):
                emit(m, hints[side], data, other)
                m.d.sync += [hinted[side].eq(1), last_hint[side].eq(other)]

        with m.If(sides.valid & free(*outputs)):
            with m.If((ka == TokenKind.DONE) & (kb == TokenKind.DONE)):
                sides.take(0, 1)
                emit_match(TokenKind.DONE)
            with m.Elif((ka == stop) & (kb == stop) & (a == b)):
                sides.take(0, 1)
                emit_match(None, sides.crd[0].payload)
                for hint in hints:
                    emit_token(m, hint, sides.crd[0].payload)
                m.d.sync += [h.eq(0) for h in hinted]
            with m.Elif((ka == TokenKind.EMPTY) | (kb == TokenKind.EMPTY)):
                with m.If((ka == stop) | (kb == stop)):
                    # An N facing an ended fiber has nothing to pair with: it is dropped.
                    with m.If(ka == TokenKind.EMPTY):
                        sides.take(0)
                    with m.If(kb == TokenKind.EMPTY):
                        sides.take(1)
                with m.Elif((ka != TokenKind.DONE) & (kb != TokenKind.DONE)):
                    sides.take(0, 1)
                    emit_match(TokenKind.EMPTY)
            with m.Elif((ka == stop) & (kb == data)):
                sides.take(1)
            with m.Elif((ka == data) & (kb == stop)):
                sides.take(0)
            with m.Elif((ka == data) & (kb == data)):
                with m.If(a == b):
                    sides.take(0, 1)
                    emit_match(None, sides.crd[0].payload)
                with m.Elif(a < b):
                    step_past(0)
                with m.Else():
                    step_past(1)
        return m


class Union(wiring.Component):
    """Coordinates present on either side, with ``N`` for the side that lacks one (SAM's Union2).

    An ``N`` on a side waits while the other side drains its fiber and then leaves as a
    coordinate, as SAM's does. One output token per cycle.
    """

    def __init__(self, width: int):
        super().__init__(_joiner_inputs(width) | {
            name: Out(token_stream(width)) for name in ("crd", "ref1", "ref2")})

    def elaborate(self, platform):
        m = Module()
        sides = _Sides(self, m)
        outputs = [self.crd, self.ref1, self.ref2]
        release_outputs(m, *outputs)
        ka, kb = sides.kind
        a, b = sides.value
        empty, stop = TokenKind.EMPTY, TokenKind.STOP
        held = [(ka == empty) | (ka == stop), (kb == empty) | (kb == stop)]
        ref_out = [self.ref1, self.ref2]

        def emit_from(side_tokens):
            """``side_tokens``: the sides whose crd and ref leave; the others give N."""
            crd_side = side_tokens[0]
            emit_token(m, self.crd, sides.crd[crd_side].payload)
            for side in (0, 1):
                if side in side_tokens:
                    emit_token(m, ref_out[side], sides.ref[side].payload)
                else:
                    emit(m, ref_out[side], empty)
            sides.take(*side_tokens)

        with m.If(sides.valid & free(*outputs)):
            with m.If((ka == TokenKind.DONE) & (kb == TokenKind.DONE)):
                sides.take(0, 1)
                for out in outputs:
                    emit(m, out, TokenKind.DONE)
            with m.Elif(held[0] & held[1]):
                with m.If((ka == empty) & (kb == empty)):
                    emit_from((0, 1))
                with m.Elif(ka == empty):
                    emit_from((0,))
                with m.Elif(kb == empty):
                    emit_from((1,))
                with m.Elif(a == b):
                    emit_from((0, 1))
            with m.Elif(held[0] & (kb == TokenKind.DATA)):
                emit_from((1,))
            with m.Elif(held[1] & (ka == TokenKind.DATA)):
                emit_from((0,))
            with m.Elif((ka == TokenKind.DATA) & (kb == TokenKind.DATA)):
                with m.If(a == b):
                    emit_from((0, 1))
                with m.Elif(a < b):
                    emit_from((0,))
                with m.Else():
                    emit_from((1,))
        return m
