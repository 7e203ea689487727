"""The level scanners: dense (uncompressed) and compressed."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .bank import Bank, host_port
from .common import emit, free, release_outputs, token_stream

__all__ = ["LevelScanner"]


class LevelScanner(wiring.Component):
    """For each reference *r* on ``in_ref``, emit its fiber's coordinates on ``crd`` and their
    positions on ``ref``, then the stop that closes it (SAM's UncompressCrdRdScan and
    CompressedCrdRdScan).

    Dense (``compressed=False``): positions ``r*dim .. r*dim+dim-1``, coordinates ``0..dim-1``;
    ``dim`` is an input set for the run. Compressed: positions ``seg[r] .. seg[r+1]-1`` and
    coordinates ``crd[p]``, from the scanner's own ``seg`` and ``crd`` banks of ``depth`` words.
    A stop on ``in_ref`` right after a reference is raised one level and closes that fiber (so
    the scanner waits for the next input token before closing); any other stop is raised and
    passed; ``N`` gives ``N`` and a stop. One coordinate per cycle inside a fiber. SAM's skip
    input (galloping) is not built.
    """

    def __init__(self, width: int, compressed: bool = False, depth: int = 64):
        self._width, self.compressed, self.depth = width, compressed, depth
        members = {"in_ref": In(token_stream(width)),
                   "crd": Out(token_stream(width)), "ref": Out(token_stream(width))}
        if compressed:
            members |= {"seg_bank": In(host_port(width, depth)), "crd_bank": In(host_port(width, depth))}
        else:
            members |= {"dim": In(width)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        i, crd, ref = self.in_ref, self.crd, self.ref
        position, end, base = (Signal(self._width) for _ in range(3))
        release_outputs(m, crd, ref)
        outputs_free = free(crd, ref)
        kind, r = i.payload.kind, i.payload.value.as_unsigned()
        if self.compressed:
            seg = Bank(m, "seg", self.seg_bank, self._width, self.depth)
            crds = Bank(m, "crd", self.crd_bank, self._width, self.depth)
            first, last = seg.read(r), seg.read(r + 1)
            coordinate = crds.read(position)
        else:
            first = r * self.dim
            last = first + self.dim
            coordinate = position - base

        with m.FSM():
            with m.State("IDLE"):
                with m.If(i.valid & outputs_free):
                    m.d.comb += i.ready.eq(1)
                    with m.Switch(kind):
                        with m.Case(TokenKind.DATA):
                            m.d.sync += [position.eq(first), end.eq(last), base.eq(first)]
                            with m.If(first != last):
                                m.next = "SCAN"
                            with m.Else():
                                m.next = "CLOSE"
                        with m.Case(TokenKind.EMPTY):
                            emit(m, crd, TokenKind.EMPTY)
                            emit(m, ref, TokenKind.EMPTY)
                            m.next = "CLOSE"
                        with m.Case(TokenKind.STOP):
                            emit(m, crd, TokenKind.STOP, i.payload.value + 1)
                            emit(m, ref, TokenKind.STOP, i.payload.value + 1)
                        with m.Case(TokenKind.DONE):
                            emit(m, crd, TokenKind.DONE)
                            emit(m, ref, TokenKind.DONE)
            with m.State("SCAN"):
                with m.If(outputs_free):
                    emit(m, crd, TokenKind.DATA, coordinate)
                    emit(m, ref, TokenKind.DATA, position)
                    m.d.sync += position.eq(position + 1)
                    with m.If(position + 1 == end):
                        m.next = "CLOSE"
            with m.State("CLOSE"):
                with m.If(i.valid & outputs_free):
                    raised = kind == TokenKind.STOP
                    m.d.comb += i.ready.eq(raised)
                    level = Mux(raised, i.payload.value + 1, 0)
                    emit(m, crd, TokenKind.STOP, level)
                    emit(m, ref, TokenKind.STOP, level)
                    m.next = "IDLE"
        return m
