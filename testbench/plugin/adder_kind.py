"""A FU kind that lives in the test suite only, to prove that a kind is a plug-in: nothing in
``rsn`` names it, and one ``register`` call makes the fabric generator, the checks, place &
route, the assembler, the golden model and the RTL take it.

``adder``: per micro-op, ``beats`` times, take one token from each of ``i[0]`` and ``i[1]`` and
emit ``a + b + offset`` modulo ``2**width`` on ``o[0]``; ``offset`` comes from the fabric
description's ``[adder]`` table. One registered output stage; ``firings`` counts output tokens.
"""

from dataclasses import dataclass

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from rsn.channels import Channel, UnitModel
from rsn.fu import FuKind, KindParameters, count_status, fu_signature
from rsn.isa import padded_uop

AdderUop = padded_uop({"beats": 16, "last": 1})


@dataclass(frozen=True)
class AdderParameters(KindParameters):
    offset: int = 0         # added to every sum

    def check(self):
        if isinstance(self.offset, bool) or not isinstance(self.offset, int) or not 0 <= self.offset <= 255:
            raise ValueError(f"offset={self.offset!r} is not allowed; use an integer 0..255")


class AdderFu(wiring.Component):
    def __init__(self, width: int, offset: int = 0):
        self._width, self._offset = width, offset
        super().__init__(fu_signature(ADDER_KIND, width))

    def elaborate(self, platform):
        m = Module()
        a, b, out = self.i[0], self.i[1], self.o[0]
        active, last, closes = Signal(), Signal(), Signal()
        left = Signal(16)
        take = Signal()
        m.d.comb += [
            take.eq(active & a.valid & b.valid & (~out.valid | out.ready)),
            a.ready.eq(take), b.ready.eq(take),
            self.uop.ready.eq(~active),
        ]
        final = take & (left == 1)
        with m.If(self.uop.valid & self.uop.ready):
            m.d.sync += [active.eq(1), left.eq(self.uop.payload.beats), last.eq(self.uop.payload.last)]
        with m.If(take):
            m.d.sync += [left.eq(left - 1), out.payload.eq(a.payload + b.payload + self._offset),
                         out.valid.eq(1), closes.eq(final & last)]
        with m.Elif(out.ready):
            m.d.sync += out.valid.eq(0)
        with m.If(final):
            m.d.sync += active.eq(0)
        sent = out.valid & out.ready
        busy = active | out.valid
        m.d.comb += [self.busy.eq(busy), self.cfg.rdata.eq(0)]
        count_status(m, self, firing=sent, stall=busy & ~take & ~sent, completes_last=sent & closes)
        return m


class AdderModel(UnitModel):
    KIND, COUNT_FIELD = "adder", "beats"

    def __init__(self, width: int = 32, offset: int = 0):
        super().__init__()
        self.mask, self.offset = (1 << width) - 1, offset
        self.left = 0

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.left = self.current["beats"]
        if not (inputs[0].can_pop() and inputs[1].can_pop() and outputs[0].can_push()):
            return False
        outputs[0].push((inputs[0].pop() + inputs[1].pop() + self.offset) & self.mask)
        self.firings += 1
        self.left -= 1
        if self.left == 0:
            self.finished |= bool(self.current["last"])
            self.current = None
        return True


def _tokens(uops):
    beats = sum(uop.get("beats", 0) for uop in uops)
    return [beats, beats], [beats]


ADDER_KIND = FuKind("adder", 2, 1, AdderUop, 1, AdderFu, AdderModel, parameters=AdderParameters,
                    tokens=_tokens, count_fields=lambda uop: ("beats",))
