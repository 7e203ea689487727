"""The bit-vector primitives: packing, chunking, scanning, intersecting and dropping words whose
bit *i* stands for coordinate *i*. Words are the token's value bits, read as unsigned."""

from amaranth.hdl import Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .bank import Bank, host_port
from .common import emit, emit_token, free, release_outputs, token_stream
from .drop import EmptyStknDrop

__all__ = ["Bv", "BvChunk", "RdScanBv", "IntersectBv", "BvDrop", "popcount"]


def _index_bits(width: int) -> int:
    return max(1, (width - 1).bit_length())


def popcount(value):
    total = Const(0, range(len(value) + 1))
    for bit in value:
        total = total + bit
    return total


class Bv(wiring.Component):
    """Each fiber of ``in_crd`` as one word (SAM's BV); an empty fiber gives only its stop. One
    coordinate per cycle, and a cycle for each word."""

    def __init__(self, width: int):
        super().__init__({"in_crd": In(token_stream(width)), "bv": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        i, o = self.in_crd, self.bv
        word, held = Signal(len(i.payload.value)), Signal()
        release_outputs(m, o)
        with m.If(i.valid & (i.payload.kind == TokenKind.DATA)):
            m.d.comb += i.ready.eq(1)
            # A coordinate past the word's width cannot be a bit of it; the shift amount is cut so
            # that the shifted value stays word-sized.
            bit = i.payload.value.as_unsigned()[:_index_bits(len(word))]
            m.d.sync += [word.eq(word | (Const(1, len(word)) << bit)), held.eq(1)]
        with m.Elif(i.valid & free(o)):
            with m.If(held):
                emit(m, o, TokenKind.DATA, word)
                m.d.sync += [word.eq(0), held.eq(0)]
            with m.Else():
                m.d.comb += i.ready.eq(1)
                emit_token(m, o, i.payload)
        return m


class BvChunk(wiring.Component):
    """Each word as ``size // chunk_width`` chunks of ``chunk_width`` bits, low bits first, with
    the set bits of the word's earlier chunks on ``ref`` (SAM's ChunkBV); run inputs ``size`` and
    ``chunk_width``. One chunk per cycle."""

    def __init__(self, width: int):
        super().__init__({"in_bv": In(token_stream(width)), "bv": Out(token_stream(width)),
                          "ref": Out(token_stream(width)), "size": In(8), "chunk_width": In(8)})

    def elaborate(self, platform):
        m = Module()
        i, words, refs = self.in_bv, self.bv, self.ref
        width = len(i.payload.value)
        shift, below = Signal(8), Signal(range(width + 1))
        release_outputs(m, words, refs)
        mask = (Const(1, width + 1) << self.chunk_width[:_index_bits(width + 1)]) - 1
        chunk = (i.payload.value.as_unsigned() >> shift) & mask
        with m.If(i.valid & free(words, refs)):
            with m.If(i.payload.kind == TokenKind.DATA):
                emit(m, words, TokenKind.DATA, chunk)
                emit(m, refs, TokenKind.DATA, below)
                last = shift + self.chunk_width >= self.size
                m.d.comb += i.ready.eq(last)
                m.d.sync += [shift.eq(shift + self.chunk_width), below.eq(below + popcount(chunk[:width]))]
                with m.If(last):
                    m.d.sync += [shift.eq(0), below.eq(0)]
            with m.Else():
                m.d.comb += i.ready.eq(1)
                emit_token(m, words, i.payload)
                emit_token(m, refs, i.payload)
        return m


class RdScanBv(wiring.Component):
    """A bit-vector level scanner (SAM's BVRdScan): reference *r* gives ``bv[r]`` and, as its
    reference, the set bits of ``bv[0..r-1]`` (summed over *r* cycles, one word per cycle), then
    the fiber's stop, merged with an input stop as in every scanner."""

    def __init__(self, width: int, depth: int = 64):
        self._width, self.depth = width, depth
        super().__init__({"in_ref": In(token_stream(width)), "bv": Out(token_stream(width)),
                          "ref": Out(token_stream(width)), "bv_bank": In(host_port(width, depth))})

    def elaborate(self, platform):
        m = Module()
        i, words, refs = self.in_ref, self.bv, self.ref
        bank = Bank(m, "bv", self.bv_bank, self._width, self.depth)
        target, index = Signal(self._width), Signal(self._width)
        below = Signal(self._width)
        read = bank.read(index)
        release_outputs(m, words, refs)
        both_free = free(words, refs)
        kind = i.payload.kind
        with m.FSM():
            with m.State("IDLE"):
                with m.If(i.valid & both_free):
                    m.d.comb += i.ready.eq(1)
                    with m.Switch(kind):
                        with m.Case(TokenKind.DATA):
                            m.d.sync += [target.eq(i.payload.value), index.eq(0), below.eq(0)]
                            m.next = "COUNT"
                        with m.Case(TokenKind.STOP):
                            emit(m, words, TokenKind.STOP, i.payload.value + 1)
                            emit(m, refs, TokenKind.STOP, i.payload.value + 1)
                        with m.Default():
                            emit_token(m, words, i.payload)
                            emit_token(m, refs, i.payload)
            with m.State("COUNT"):
                with m.If(index == target):
                    with m.If(both_free):
                        emit(m, words, TokenKind.DATA, read)
                        emit(m, refs, TokenKind.DATA, below)
                        m.next = "CLOSE"
                with m.Else():
                    m.d.sync += [below.eq(below + popcount(read)), index.eq(index + 1)]
            with m.State("CLOSE"):
                with m.If(i.valid & both_free):
                    raised = kind == TokenKind.STOP
                    m.d.comb += i.ready.eq(raised)
                    level = raised.as_unsigned() * (i.payload.value + 1)
                    emit(m, words, TokenKind.STOP, level)
                    emit(m, refs, TokenKind.STOP, level)
                    m.next = "IDLE"
        return m


class IntersectBv(wiring.Component):
    """Bit-vector intersection (SAM's IntersectBV2): the AND of each pair of words (not emitted
    when 0 unless ``emit_zeros``), then per set bit of it, lowest first, each side's base reference
    plus that side's set bits below the bit. One reference pair per cycle."""

    def __init__(self, width: int):
        inputs = {f"in_{name}{side}": In(token_stream(width)) for side in (1, 2) for name in ("ref", "bv")}
        super().__init__(inputs | {name: Out(token_stream(width)) for name in ("bv", "ref1", "ref2")}
                         | {"emit_zeros": In(1)})

    def elaborate(self, platform):
        m = Module()
        inputs = [self.in_bv1, self.in_ref1, self.in_bv2, self.in_ref2]
        outputs = [self.bv, self.ref1, self.ref2]
        release_outputs(m, *outputs)
        width = len(self.in_bv1.payload.value)
        w1, w2 = self.in_bv1.payload.value.as_unsigned(), self.in_bv2.payload.value.as_unsigned()
        r1, r2 = self.in_ref1.payload.value, self.in_ref2.payload.value
        remaining, started = Signal(width), Signal()
        valid = self.in_bv1.valid & self.in_ref1.valid & self.in_bv2.valid & self.in_ref2.valid
        data = (self.in_bv1.payload.kind == TokenKind.DATA) & (self.in_bv2.payload.kind == TokenKind.DATA)
        both = w1 & w2
        lowest = remaining & (~remaining + 1)
        below = lowest - 1
        with m.If(valid & free(*outputs)):
            with m.If(data & ~started):
                with m.If((both != 0) | self.emit_zeros):
                    emit(m, self.bv, TokenKind.DATA, both)
                m.d.sync += [remaining.eq(both), started.eq(1)]
            with m.Elif(data & (remaining != 0)):
                emit(m, self.ref1, TokenKind.DATA, r1 + popcount((w1 & below)[:width]))
                emit(m, self.ref2, TokenKind.DATA, r2 + popcount((w2 & below)[:width]))
                m.d.sync += remaining.eq(remaining & (remaining - 1))
            with m.Elif(data):
                m.d.comb += [port.ready.eq(1) for port in inputs]
                m.d.sync += started.eq(0)
            with m.Else():
                m.d.comb += [port.ready.eq(1) for port in inputs]
                for out in outputs:
                    emit_token(m, out, self.in_bv1.payload)
        return m


class BvDrop(wiring.Component):
    """The bit-vector form of crd_drop (SAM's BVDrop): an outer bit whose inner fiber is empty is
    cleared; both streams then pass through an empty-fiber stop drop."""

    def __init__(self, width: int):
        self._width = width
        super().__init__({"in_outer_bv": In(token_stream(width)), "in_inner_bv": In(token_stream(width)),
                          "outer_bv": Out(token_stream(width)), "inner_bv": Out(token_stream(width))})

    def elaborate(self, platform):
        m = Module()
        outer_drop = m.submodules.outer_drop = EmptyStknDrop(self._width)
        inner_drop = m.submodules.inner_drop = EmptyStknDrop(self._width)
        wiring.connect(m, outer_drop.val, wiring.flipped(self.outer_bv))
        wiring.connect(m, inner_drop.val, wiring.flipped(self.inner_bv))
        outer, inner = self.in_outer_bv, self.in_inner_bv
        o_out, i_out = outer_drop.in_stream, inner_drop.in_stream
        release_outputs(m, o_out, i_out)
        width = self._width
        remaining, kept, held, working = Signal(width), Signal(width), Signal(), Signal()
        lowest = remaining & (~remaining + 1)
        with m.If(~working):
            with m.If(outer.valid & (outer.payload.kind == TokenKind.DATA)):
                m.d.sync += [remaining.eq(outer.payload.value), kept.eq(0), held.eq(0), working.eq(1)]
            with m.Elif(outer.valid & (outer.payload.kind == TokenKind.STOP) & free(o_out)):
                m.d.comb += outer.ready.eq(1)
                emit_token(m, o_out, outer.payload)
            with m.Elif(outer.valid & inner.valid & (outer.payload.kind == TokenKind.DONE)
                        & (inner.payload.kind == TokenKind.DONE) & free(o_out, i_out)):
                m.d.comb += [outer.ready.eq(1), inner.ready.eq(1)]
                emit_token(m, o_out, outer.payload)
                emit_token(m, i_out, inner.payload)
        with m.Elif(remaining == 0):
            with m.If(free(o_out)):
                m.d.comb += outer.ready.eq(1)
                emit(m, o_out, TokenKind.DATA, kept)
                m.d.sync += working.eq(0)
        with m.Elif(inner.valid & free(i_out)):
            m.d.comb += inner.ready.eq(1)
            emit_token(m, i_out, inner.payload)
            with m.If(inner.payload.kind == TokenKind.STOP):
                m.d.sync += [remaining.eq(remaining & (remaining - 1)), held.eq(0)]
                with m.If(held):
                    m.d.sync += kept.eq(kept | lowest)
            with m.Else():
                m.d.sync += held.eq(1)
        return m
