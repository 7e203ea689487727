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
    passed; ``N`` gives ``N`` and a stop. One coordinate per cycle inside a fiber.

    ``skip=True`` (compressed only) adds SAM's ``in_crd_skip``: hints from an intersecter, with the
    rules of :mod:`samflow.skip`. Before each coordinate it emits, the scanner takes the hint on
    offer, if any: a data hint ``h`` first drops the coordinates below ``h``, one per cycle and
    without an output (so a hint also saves the tokens downstream), a stop hint ends the fiber.
    Hints of fibers already closed (counted in ``owed``) are drained as they come, in any state.
    """

    def __init__(self, width: int, compressed: bool = False, depth: int = 64, skip: bool = False):
        if skip and not compressed:
            raise ValueError("LevelScanner: skip hints need a compressed level (compressed=True)")
        self._width, self.compressed, self.depth, self.skip = width, compressed, depth, skip
        members = {"in_ref": In(token_stream(width)),
                   "crd": Out(token_stream(width)), "ref": Out(token_stream(width))}
        if compressed:
            members |= {"seg_bank": In(host_port(width, depth)), "crd_bank": In(host_port(width, depth))}
        else:
            members |= {"dim": In(width)}
        if skip:
            members |= {"in_crd_skip": In(token_stream(width))}
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
        hints = _Hints(m, self.in_crd_skip, self._width) if self.skip else None

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
                            if hints:
                                hints.closed()
                        with m.Case(TokenKind.DONE):
                            emit(m, crd, TokenKind.DONE)
                            emit(m, ref, TokenKind.DONE)
            with m.State("SCAN"):
                last = position + 1 == end
                if hints:
                    with m.If(hints.stop):              # the fiber ends here
                        hints.take()
                        m.next = "CLOSE"
                    with m.Elif(hints.above(coordinate)):   # drop one coordinate below the hint
                        m.d.sync += position.eq(position + 1)
                        with m.If(last):
                            hints.take()
                            m.next = "CLOSE"
                    with m.Elif(outputs_free):
                        with m.If(hints.fresh):             # the hint is at or below this coordinate
                            hints.take()
                        self._emit_coordinate(m, coordinate, position, last)
                else:
                    with m.If(outputs_free):
                        self._emit_coordinate(m, coordinate, position, last)
            with m.State("CLOSE"):
                with m.If(i.valid & outputs_free):
                    raised = kind == TokenKind.STOP
                    m.d.comb += i.ready.eq(raised)
                    level = Mux(raised, i.payload.value + 1, 0)
                    emit(m, crd, TokenKind.STOP, level)
                    emit(m, ref, TokenKind.STOP, level)
                    if hints:
                        hints.closed()
                    m.next = "IDLE"
        return m

    def _emit_coordinate(self, m, coordinate, position, last):
        emit(m, self.crd, TokenKind.DATA, coordinate)
        emit(m, self.ref, TokenKind.DATA, position)
        m.d.sync += position.eq(position + 1)
        with m.If(last):
            m.next = "CLOSE"


class _Hints:
    """The skip input's bookkeeping (samflow.skip): a hint is *fresh* when no closed fiber still
    owes its stop; stale hints are drained here, fresh ones taken by the scanner's ``take``."""

    def __init__(self, m, port, width: int):
        self._m, self._port = m, port
        owed = Signal(width, name="hints_owed")       # stops of the hint stream owed by closed fibers
        stop_taken = Signal(name="hint_stop_taken")   # the current fiber's stop hint has been taken
        self._stop_taken = stop_taken
        kind = port.payload.kind
        self.fresh = port.valid & (owed == 0) & ~stop_taken
        self.stop = self.fresh & (kind == TokenKind.STOP)
        self._data = self.fresh & (kind == TokenKind.DATA)
        self._value = port.payload.value
        self._closing = Signal(name="hint_fiber_closing")
        stale_stop = port.valid & (owed != 0) & (kind == TokenKind.STOP)
        with m.If(port.valid & (owed != 0)):
            m.d.comb += port.ready.eq(1)
        m.d.sync += owed.eq(owed + (self._closing & ~stop_taken) - stale_stop)
        with m.If(self._closing):
            m.d.sync += stop_taken.eq(0)

    def above(self, coordinate):
        """A fresh data hint lies above ``coordinate``, which must therefore be dropped."""
        return self._data & (coordinate.as_signed() < self._value)

    def take(self):
        self._m.d.comb += self._port.ready.eq(1)
        with self._m.If(self._port.payload.kind == TokenKind.STOP):
            self._m.d.sync += self._stop_taken.eq(1)

    def closed(self):
        """The scanner emits a stop this cycle: it owns one stop of the hint stream."""
        self._m.d.comb += self._closing.eq(1)
