"""The ``alu`` functional unit: an elementwise relu / arithmetic shift / clip stage.

Semantics (docs/rsn-architecture.md, "Functional units"), per micro-op (:data:`rsn.isa.AluUop`):
consume ``beats`` tokens from ``i[0]`` and emit ``beats`` tokens on ``o[0]``, each

    y = x as a signed W-bit integer
    if relu: y = max(y, 0)
    y = y >> shift                      (arithmetic)
    if clip: y = min(max(y, lo), hi)    (lo, hi: signed 16-bit fields)

and the token sent is ``y`` modulo ``2**W``. ``lo`` and ``hi`` are compared as integers, which
for ``W >= 16`` is the same as sign-extending them to ``W`` bits; for ``W < 16`` a bound outside
the W-bit range is still compared exactly and the result is then truncated to W bits. ``lo >
hi`` is allowed and yields ``hi`` (the formula's order). A ``shift >= W`` gives 0 or -1.

Timing: one token per cycle sustained, also across micro-ops (the next micro-op is accepted in
the cycle the current one takes its last input). Two registered stages: relu and shift into
stage 1, the clip into the output register, so :data:`LATENCY` is 2 cycles from an input token's
transfer to its result's offer on ``o[0]``. Both stages move together unless stage 1 holds a
token and the output register one that is not taken (then the input waits); so the unit holds
up to two tokens. ``o[0].ready`` reaches ``i[0].ready`` and ``uop.ready`` combinationally (the
FU's inputs are token queues, whose ``ready`` never depends on their output side, so no loop can
form).

Status: ``firings`` counts output tokens; ``busy`` is high while a micro-op has been accepted
and not completed; a micro-op completes when its last output token leaves on ``o[0]``;
``stalls`` counts cycles with ``busy`` high and no token moved on ``i[0]`` or ``o[0]``;
``finished`` rises in the cycle after a micro-op marked ``last`` completes. ``clear`` applies at
the start of its cycle: the counters restart from that cycle's events, and ``finished`` is set
afterwards only by a completion in or after the clear cycle; micro-ops in progress go on. The
``cfg`` bus has no registers; ``rdata`` is always 0. ``beats == 0`` (refused by the assembler)
runs 65536 beats.
"""

from amaranth.hdl import Module, Mux, Signal, signed
from amaranth.lib import wiring

from hw.params import check_int

from .channels import Channel, UnitModel
from .fu import FuKind, count_status, fu_signature
from .isa import AluUop

__all__ = ["LATENCY", "AluFu", "AluModel", "alu_result", "ALU_KIND"]

LATENCY = 2     # relu and shift into stage 1, clip into the output register


def alu_result(token: int, uop: dict, width: int) -> int:
    """The output token for input ``token`` under the decoded micro-op ``uop``, as the doc says."""
    mask = (1 << width) - 1
    token &= mask
    value = token - (1 << width) if token >> (width - 1) else token
    if uop["relu"]:
        value = max(value, 0)
    value >>= uop["shift"]          # Python's >> on ints is arithmetic
    if uop["clip"]:
        value = min(max(value, uop["lo"]), uop["hi"])
    return value & mask


class AluFu(wiring.Component):
    """The ``alu`` FU: one registered stage of relu, arithmetic shift and clip.

    Parameters
    ----------
    width : int
        Data width ``W`` of the tile's streams.
    """

    def __init__(self, width: int):
        self._width = check_int("AluFu", "width", width, minimum=1, meaning="data width in bits")
        super().__init__(fu_signature(ALU_KIND, width))

    @staticmethod
    def _shift_right(value, amount):
        """Arithmetic shift: ``value`` is signed, so ``>>`` replicates its sign bit."""
        return value >> amount

    def _rectify_and_shift(self, token, uop):
        """Stage 1: relu(x) >> shift on the signed view of ``token``."""
        value = token.as_signed()
        rectified = Mux(uop.relu & value[-1], 0, value)
        return self._shift_right(rectified, uop.shift)

    @staticmethod
    def _clip(shifted, clip, lo, hi):
        """Stage 2: the clip, if the micro-op asks for it: ``min(max(y, lo), hi)``.

        The three compares run side by side rather than ``max`` feeding ``min``, which would put
        two carry chains in series: below ``lo`` the result is ``min(lo, hi)``, otherwise it is
        ``hi`` above ``hi`` and ``y`` in between."""
        below, above = shifted < lo, shifted > hi
        low_bound = Mux(lo > hi, hi, lo)
        clipped = Mux(below, low_bound, Mux(above, hi, shifted))
        return Mux(clip, clipped, shifted)

    def elaborate(self, platform):
        m = Module()
        width = self._width
        data_in, data_out = self.i[0], self.o[0]

        uop = Signal(AluUop)            # the micro-op taking inputs
        active = Signal()
        beats_left = Signal(16)         # inputs still to take, minus one
        out_closes = Signal()           # the output register holds the final token of a `last` uop

        # Stage 1 holds relu(x) >> shift and the clip fields of its micro-op; the clip goes into
        # the output register. Both move together unless stage 1 meets an output that stays full.
        valid1, shifted1, closes1 = Signal(), Signal(signed(width)), Signal()
        clip1, lo1, hi1 = Signal(), Signal(signed(16)), Signal(signed(16))
        advance = ~(valid1 & data_out.valid & ~data_out.ready)
        take = Signal()
        m.d.comb += [
            data_in.ready.eq(active & advance),
            take.eq(data_in.valid & data_in.ready),
        ]
        final_take = take & (beats_left == 0)
        m.d.comb += self.uop.ready.eq(~active | final_take)

        with m.If(take):
            m.d.sync += beats_left.eq(beats_left - 1)
        with m.If(final_take):
            m.d.sync += active.eq(0)
        with m.If(self.uop.valid & self.uop.ready):
            m.d.sync += [uop.eq(self.uop.payload), beats_left.eq(self.uop.payload.beats - 1),
                         active.eq(1)]

        with m.If(advance):
            m.d.sync += [valid1.eq(take), shifted1.eq(self._rectify_and_shift(data_in.payload, uop)),
                         clip1.eq(uop.clip), lo1.eq(uop.lo), hi1.eq(uop.hi),
                         closes1.eq(final_take & uop.last)]
        with m.If(advance & valid1):
            m.d.sync += [data_out.payload.eq(self._clip(shifted1, clip1, lo1, hi1)),
                         data_out.valid.eq(1), out_closes.eq(closes1)]
        with m.Elif(data_out.ready):
            m.d.sync += data_out.valid.eq(0)

        sent = data_out.valid & data_out.ready
        busy = active | valid1 | data_out.valid
        m.d.comb += [self.busy.eq(busy), self.cfg.rdata.eq(0)]
        count_status(m, self, firing=sent, stall=busy & ~take & ~sent, completes_last=sent & out_closes)
        return m



class AluModel(UnitModel):
    """Golden model of the ``alu`` FU, written from the architecture note.

    One call of :meth:`step` moves one input token to the output, or nothing.
    """

    KIND, COUNT_FIELD = "alu", "beats"

    def __init__(self, width: int = 32):
        super().__init__()
        self.width = width
        self.beats_left = 0

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.beats_left = self.current["beats"]
        if not (inputs[0].can_pop() and outputs[0].can_push()):
            return False
        outputs[0].push(alu_result(inputs[0].pop(), self.current, self.width))
        self.firings += 1
        self.beats_left -= 1
        if self.beats_left == 0:
            self.finished |= bool(self.current["last"])
            self.current = None
        return True


def _tokens(uops) -> tuple[list[int], list[int]]:
    beats = sum(uop.get("beats", 0) for uop in uops)
    return [beats], [beats]


def _check_uop(uop: dict, parameters):
    if uop.get("clip", 0) and uop.get("lo", 0) > uop.get("hi", 0):
        raise ValueError(f"clip range lo={uop['lo']} > hi={uop['hi']}")


def _timing(uop_queue, input_queues):
    from .cycle_model import AluTiming  # the cycle model imports this module
    return AluTiming(uop_queue, input_queues)


ALU_KIND = FuKind("alu", 1, 1, AluUop, LATENCY, AluFu, AluModel, tokens=_tokens,
                  count_fields=lambda uop: ("beats",), check_uop=_check_uop, timing=_timing)
