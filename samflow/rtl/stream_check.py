"""Watching one input stream of a sparse tile for the two rules a primitive takes on trust.

A primitive follows SAM's semantics only on well-formed streams: stop levels that nest (no stop
closes more fibers than the stream's last stop, and that last stop comes right before ``D``),
and, on a coordinate input, coordinates that rise strictly within a fiber. A stream that breaks
them makes a joiner skip or repeat elements, or a two-sided primitive wait forever, with nothing
to say why. :class:`StreamCheck` sees every token the primitive takes and reports the first break
of the micro-op's stream for the tile's sticky fault (samflow.faults gives the codes and words).
"""

from amaranth.hdl import Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.faults import FaultCode
from samflow.tokens import TokenKind

from .pairs import picked_half

__all__ = ["StreamCheck", "INDEX_BITS"]

INDEX_BITS = 16                 # a token's place in its stream, saturating (a stream has <= 65,535)
_LEVEL_BITS = 4                 # S0..S9


class StreamCheck(wiring.Component):
    """One stream's rules, token by token. ``taken`` marks a token the primitive takes
    (``token`` its bits: ``value_width`` + 2); ``fault`` is high in the cycle a break shows,
    with ``code``, ``index`` (the offending token's place), ``kind``/``value`` (that token) and
    ``previous`` (the coordinate before it, or the level of the stream's last stop).

    ``coordinates``: 0 for a stream with no order to keep, 1 for coordinates in the token's
    value, 2 for coordinates in the high half of a packed pair (samflow.pairs). ``nesting``
    False for a repeat-signal stream, whose stops are not levels."""

    def __init__(self, value_width: int, coordinates: int = 0, nesting: bool = True):
        self._width, self._coordinates, self._nesting = value_width, coordinates, nesting
        super().__init__({
            "taken": In(1), "token": In(value_width + 2), "restart": In(1),
            "fault": Out(1), "code": Out(2), "index": Out(INDEX_BITS), "kind": Out(2),
            "value": Out(signed(value_width)), "previous": Out(signed(value_width)),
        })

    def elaborate(self, platform):
        m = Module()
        w = self._width
        word = self.token
        kind, value = word[w:w + 2], word[:w].as_signed()
        index = Signal(INDEX_BITS)                      # of the token being taken
        seen_stop, top_level, top_index = Signal(), Signal(_LEVEL_BITS), Signal(INDEX_BITS)
        last_kind, last_value = Signal(2), Signal(signed(w))
        fault = Signal()
        m.d.comb += self.index.eq(index)
        with m.If(self.restart):
            m.d.sync += [index.eq(0), seen_stop.eq(0), top_level.eq(0), last_kind.eq(TokenKind.STOP)]
        with m.Elif(self.taken):
            m.d.sync += [index.eq(index + (index != (1 << INDEX_BITS) - 1)),
                         last_kind.eq(kind), last_value.eq(value)]
            with m.If((kind == TokenKind.STOP) & (~seen_stop | (value[:_LEVEL_BITS] > top_level))):
                m.d.sync += [seen_stop.eq(1), top_level.eq(value[:_LEVEL_BITS]), top_index.eq(index)]
        with m.If(self.taken & (kind == TokenKind.DONE) & seen_stop & self._nesting):
            with m.If(last_kind != TokenKind.STOP):     # an element after the outermost stop
                m.d.comb += [fault.eq(1), self.index.eq(index - 1), self.kind.eq(last_kind),
                             self.value.eq(last_value), self.previous.eq(-1)]
            with m.Elif(last_value[:_LEVEL_BITS] < top_level):     # a stop closing more than the last
                m.d.comb += [fault.eq(1), self.index.eq(top_index), self.kind.eq(TokenKind.STOP),
                             self.value.eq(top_level), self.previous.eq(last_value)]
            m.d.comb += self.code.eq(FaultCode.NESTING)
        if self._coordinates:
            self._elaborate_order(m, fault)
        m.d.comb += self.fault.eq(fault)
        return m

    def _elaborate_order(self, m, fault):
        """Coordinates rise strictly within a fiber; ``N`` neither breaks nor resets the order."""
        w = self._width
        word = self.token if self._coordinates == 1 else picked_half(self.token, 2, w)
        kind, value = word[w:w + 2], word[:w].as_signed()
        in_fiber, last = Signal(), Signal(signed(w))
        with m.If(self.restart):
            m.d.sync += in_fiber.eq(0)
        with m.Elif(self.taken & (kind == TokenKind.DATA)):
            m.d.sync += [in_fiber.eq(1), last.eq(value)]
        with m.Elif(self.taken & (kind != TokenKind.EMPTY)):
            m.d.sync += in_fiber.eq(0)
        with m.If(self.taken & (kind == TokenKind.DATA) & in_fiber & (value <= last)):
            m.d.comb += [fault.eq(1), self.code.eq(FaultCode.ORDER), self.kind.eq(TokenKind.DATA),
                         self.value.eq(value), self.previous.eq(last)]
