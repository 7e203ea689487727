"""The two-input ALU: add (with SAM's negate flags, so also subtract) and multiply."""

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .common import emit, emit_token, free, release_outputs, token_stream

__all__ = ["Alu"]


class Alu(wiring.Component):
    """``val = f(in_val1, in_val2)`` on aligned streams (SAM's Add2 / Multiply2).

    ``op`` is ``"add"`` (``neg1``/``neg2`` negate an operand, as SAM's ``neg1``/``neg2``),
    ``"mul"``, or ``"select"``: both, with a ``multiply`` input choosing per run. A value facing
    a stop on the other input is combined with 0 while the stop waits,
    as SAM does. Matching stops and ``D`` pass once. Results wrap at the data width.
    """

    def __init__(self, width: int, op: str):
        if op not in ("add", "mul", "select"):
            raise ValueError(f"ALU op {op!r} is not known; use 'add', 'mul' or 'select'")
        self._op = op
        members = {"in_val1": In(token_stream(width)), "in_val2": In(token_stream(width)),
                   "val": Out(token_stream(width))}
        if op != "mul":
            members |= {"neg1": In(1), "neg2": In(1)}
        if op == "select":
            members |= {"multiply": In(1)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        a, b, o = self.in_val1, self.in_val2, self.val

        def result(p, q):
            """The output for operands ``p`` and ``q`` (0 stands for an operand at a stop)."""
            if self._op == "mul":
                return p * q
            total = Mux(self.neg1, -p, p) + Mux(self.neg2, -q, q)
            return total if self._op == "add" else Mux(self.multiply, p * q, total)

        x, y = a.payload.value, b.payload.value
        data_a, data_b = a.payload.kind == TokenKind.DATA, b.payload.kind == TokenKind.DATA
        stop_a, stop_b = a.payload.kind == TokenKind.STOP, b.payload.kind == TokenKind.STOP
        release_outputs(m, o)
        with m.If(a.valid & b.valid & free(o)):
            with m.If(data_a & data_b):
                m.d.comb += [a.ready.eq(1), b.ready.eq(1)]
                emit(m, o, TokenKind.DATA, result(x, y))
            with m.Elif(data_a & stop_b):
                m.d.comb += a.ready.eq(1)
                emit(m, o, TokenKind.DATA, result(x, 0))
            with m.Elif(stop_a & data_b):
                m.d.comb += b.ready.eq(1)
                emit(m, o, TokenKind.DATA, result(0, y))
            with m.Elif(a.payload.as_value() == b.payload.as_value()):
                m.d.comb += [a.ready.eq(1), b.ready.eq(1)]
                emit_token(m, o, a.payload)
        return m
