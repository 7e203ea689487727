"""The packed form of samflow.pairs in hardware: a joiner with one stream per side and one for
both references, and the half a packed reference's consumer takes."""

from amaranth.hdl import Cat, Const, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.pairs import empty_half, half_bits
from samflow.tokens import TokenKind

from .common import token_stream
from .joiner import Intersect, Union

__all__ = ["PairedJoiner", "pair_word", "picked_half"]


def pair_word(high, low, value_width: int):
    """A data token's bits (``value_width`` + 2) holding ``high`` and ``low``."""
    bits = half_bits(value_width)
    return Cat(low[:bits], high[:bits], Const(0, value_width - 2 * bits), Const(TokenKind.DATA.value, 2))


def _half_token(kind, value, half: int, value_width: int):
    """(kind, value) of one half of a packed token."""
    bits, empty = half_bits(value_width), empty_half(value_width)
    field = value[half * bits:(half + 1) * bits]
    is_pair = kind == TokenKind.DATA
    out_kind = Mux(is_pair & (field == empty), TokenKind.EMPTY, kind)
    out_value = Mux(is_pair, Mux(field == empty, 0, field), value)
    return out_kind, out_value


def picked_half(word, half, value_width: int):
    """``word`` (a packed token's bits) as the token of its ``half`` (1 low, 2 high; 0: itself)."""
    kind, value = word[value_width:value_width + 2], word[:value_width]
    low_kind, low_value = _half_token(kind, value, 0, value_width)
    high_kind, high_value = _half_token(kind, value, 1, value_width)
    return Mux(half == 0, word, Mux(half == 1, Cat(low_value, low_kind), Cat(high_value, high_kind)))


class PairedJoiner(wiring.Component):
    """``intersect`` or ``union`` whose sides arrive packed (coordinate high, reference low) on
    ``in_side1`` and ``in_side2``; ``crd`` is the joined coordinate and ``refs`` both references
    packed (side 1 low). The joiner moves a side's coordinate and reference together and offers
    its outputs together, so splitting and packing cost no cycle."""

    def __init__(self, width: int, union: bool):
        self._width, self._union = width, union
        super().__init__({"in_side1": In(token_stream(width)), "in_side2": In(token_stream(width)),
                          "crd": Out(token_stream(width)), "refs": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        w = self._width
        joiner = m.submodules.joiner = Union(w) if self._union else Intersect(w)
        for k, side in enumerate((self.in_side1, self.in_side2), start=1):
            crd, ref = getattr(joiner, f"in_crd{k}"), getattr(joiner, f"in_ref{k}")
            word = side.payload.as_value()
            for port, half in ((crd, 2), (ref, 1)):
                m.d.comb += [port.valid.eq(side.valid), port.payload.eq(picked_half(word, half, w))]
            m.d.comb += side.ready.eq(crd.ready & ref.ready)
        wiring.connect(m, joiner.crd, wiring.flipped(self.crd))
        if not self._union:
            m.d.comb += [joiner.crd_skip1.ready.eq(1), joiner.crd_skip2.ready.eq(1)]
        ref1, ref2 = joiner.ref1, joiner.ref2
        both = ref1.valid & ref2.valid
        data_like = [(r.payload.kind == TokenKind.DATA) | (r.payload.kind == TokenKind.EMPTY)
                     for r in (ref1, ref2)]
        empty = Const(empty_half(w), half_bits(w))

        def field(ref):
            return Mux(ref.payload.kind == TokenKind.EMPTY, empty, ref.payload.value[:half_bits(w)])

        both_empty = (ref1.payload.kind == TokenKind.EMPTY) & (ref2.payload.kind == TokenKind.EMPTY)
        packed = Mux(both_empty, ref1.payload.as_value(), pair_word(field(ref2), field(ref1), w))
        m.d.comb += [
            self.refs.valid.eq(both),
            self.refs.payload.eq(Mux(data_like[0] & data_like[1], packed, ref1.payload.as_value())),
            ref1.ready.eq(self.refs.ready & both), ref2.ready.eq(self.refs.ready & both),
        ]
        return m
