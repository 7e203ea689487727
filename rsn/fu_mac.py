"""The ``mac`` functional unit: dot products against a local vector buffer or a second stream.

Semantics (docs/rsn-architecture.md, "Functional units"), per micro-op (:data:`rsn.isa.MacUop`):

* ``LOAD``: consume ``length`` tokens from ``i[1]`` into ``buffer[0 .. length-1]`` (``rows`` is
  ignored);
* ``DOT``: ``rows`` times, consume ``length`` tokens ``a_k`` from ``i[0]`` and emit
  ``sum_k a_k * buffer[k]`` on ``o[0]``;
* ``DOT2``: ``rows`` times, consume ``length`` pairs (``a_k`` from ``i[0]``, ``b_k`` from
  ``i[1]``, taken in the same cycle) and emit ``sum_k a_k * b_k``.

``INT8`` multiplies the low 8 bits of each operand as signed int8 (the upper bits are ignored);
``INT32`` multiplies the full W-bit words as signed. Products and sums wrap in W bits (two's
complement); the output token is the sum modulo ``2**W``. The buffer (a ``lib.memory.Memory``)
starts as zeros and keeps its contents across micro-ops and ``clear``.

Timing: one operand (DOT) or operand pair (DOT2) per cycle sustained, across rows and across
consecutive DOT/DOT2 micro-ops; only a result the output cannot take yet stalls the pipeline.
:data:`LATENCY` is 5 cycles from a row's last input transfer to the offer of its result: the
:data:`MULTIPLY_STAGES` (4) registered stages (operand and buffer read; multiplier inputs, INT8
sign-extended; partial products of 16-bit pieces, one hardware multiplier each; their sum), then
the accumulator into the output register, so no multiplier or BRAM output feeds an adder in the
same cycle. LOAD takes one token per cycle; it starts once the four multiply stages are empty
(up to 4 idle cycles after a DOT's last operand; none between a LOAD and a following DOT) and
may run while the previous result still waits in the output register, as the golden model lets
it (the model's FU output holds one token). Whenever the model can take a token, so can the
hardware. As in the alu, ``o[0].ready`` reaches the input and ``uop`` readies combinationally.

Status: ``firings`` counts output tokens plus tokens loaded by LOAD; ``busy`` is high while a
micro-op has been accepted and not completed; DOT and DOT2 complete when their last result
leaves on ``o[0]``, LOAD when its last token is taken and every earlier result has left;
``stalls`` counts cycles with ``busy`` high and no token moved on ``i[0]``, ``i[1]`` or ``o[0]``
(so the cycles of pipeline latency after a row's last operand count as stalls); ``finished``
rises in the cycle after a micro-op marked ``last`` completes. ``clear`` applies at the start of
its cycle (see :mod:`rsn.fu_alu`). The ``cfg`` bus has no registers; ``rdata`` is always 0.

Programming errors: ``length > mac_depth`` in LOAD or DOT makes :class:`MacModel` raise. The
hardware still consumes exactly ``length`` tokens per row and emits ``rows`` results, so the
fabric keeps flowing, but the buffer index is taken modulo ``2**ceil(log2(mac_depth))``: writes
past ``mac_depth`` are lost or overwrite earlier entries, and reads past it return unspecified
values. DOT2 does not use the buffer and accepts any ``length``. A ``length`` or ``rows`` of 0
(refused by the assembler) counts as 4096 or 65536.
"""

from dataclasses import dataclass

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory

from hw.params import check_int

from .channels import Channel, UnitModel
from .fu import FuKind, KindParameters, count_status, fu_signature
from .isa import IsaError, MacMode, MacUop, Precision

__all__ = ["LATENCY", "MULTIPLY_STAGES", "MacFu", "MacModel", "mac_product", "MAC_KIND"]

MULTIPLY_STAGES = 4     # operand, multiplier inputs, partial products, product
LATENCY = MULTIPLY_STAGES + 1   # then the accumulator into the output register
MULTIPLIER_CHUNK = 16   # operand pieces: one 16x16 hardware multiplier each


def _partial_products(x, y, width: int) -> list:
    """``x * y mod 2**width`` as (term, shift) pairs: the products of MULTIPLIER_CHUNK-bit pieces
    that reach below bit ``width``, each cut to the bits it contributes. Signedness does not
    matter modulo ``2**width``, so the pieces are multiplied as unsigned numbers."""
    pieces = range(0, width, MULTIPLIER_CHUNK)
    terms = []
    for i in pieces:
        for j in pieces:
            if i + j < width:
                product = x[i:i + MULTIPLIER_CHUNK] * y[j:j + MULTIPLIER_CHUNK]
                terms.append((product[:width - (i + j)], i + j))
    return terms


class _StageTags:
    """What travels with an operand down the multiplier stages."""

    def __init__(self, prefix: str):
        self.valid = Signal(name=f"{prefix}_valid")
        self.first = Signal(name=f"{prefix}_first")         # the row's first operand
        self.row_end = Signal(name=f"{prefix}_row_end")     # the row's last operand
        self.closes = Signal(name=f"{prefix}_closes")       # the final row of a `last` micro-op

    def follow(self, earlier: "_StageTags") -> list:
        return [self.valid.eq(earlier.valid), self.first.eq(earlier.first),
                self.row_end.eq(earlier.row_end), self.closes.eq(earlier.closes)]


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def mac_product(a: int, b: int, precision: Precision, width: int) -> int:
    """The product the spec defines for one operand pair (before wrapping)."""
    bits = 8 if precision == Precision.INT8 else width
    return _signed(a, bits) * _signed(b, bits)


class MacFu(wiring.Component):
    """The ``mac`` FU: a pipelined multiply-accumulate with a ``mac_depth``-word vector buffer.

    Parameters
    ----------
    width : int
        Data width ``W`` (>= 8, since INT8 reads the low 8 bits).
    mac_depth : int
        Words in the vector buffer.
    """

    def __init__(self, width: int, mac_depth: int):
        self._width = check_int("MacFu", "width", width, minimum=8, meaning="data width in bits")
        self._depth = check_int("MacFu", "mac_depth", mac_depth, minimum=1,
                                meaning="words in the vector buffer")
        super().__init__(fu_signature(MAC_KIND, width))

    @staticmethod
    def _int8_operand(word):
        """The low 8 bits as a signed int8 (sign-extended by whoever widens it)."""
        return word[:8].as_signed()

    def _operand(self, m, word, int8, name):
        """``word`` as a W-bit multiplier input; INT8 sign-extends its low byte."""
        operand = Signal(self._width, name=name)
        m.d.comb += operand.eq(Mux(int8, self._int8_operand(word), word))
        return operand

    def elaborate(self, platform):
        m = Module()
        width = self._width
        operand_a, operand_b, result = self.i[0], self.i[1], self.o[0]

        m.submodules.buffer = buffer = Memory(shape=unsigned(width), depth=self._depth, init=[])
        write = buffer.write_port()
        read = buffer.read_port(domain="sync")

        uop = Signal(MacUop)            # the micro-op taking inputs
        active = Signal()
        index = Signal(12)              # k within the current row (or load)
        rows_left = Signal(16)          # rows after the current one

        # Pipeline (one row of registers per stage, all moving together on `advance`):
        # 1. the operands, and the buffer read started in the take cycle;
        # 2. the multiplier's inputs: the operand or buffer word, INT8 sign-extended;
        # 3. the partial products of MULTIPLIER_CHUNK-bit pieces (one hardware multiplier each);
        # 4. their sum, the product modulo 2**W;
        # then the accumulator adds the product and, at a row's end, fills the output register.
        a1, b1, from_buffer1, int8_1 = Signal(width), Signal(width), Signal(), Signal()
        x2, y2 = Signal(width), Signal(width)
        product4 = Signal(width)
        stages = [_StageTags(f"s{n}") for n in range(1, MULTIPLY_STAGES + 1)]
        tail = stages[-1]
        accumulator = Signal(width)
        out_closes = Signal()           # the output register holds the final result of a `last` uop

        # The pipeline moves unless a finished row meets an output that cannot take it.
        advance = ~(tail.valid & tail.row_end & result.valid & ~result.ready)
        multiplier_empty = ~Cat(stage.valid for stage in stages).any()

        is_load = active & (uop.mode == MacMode.LOAD)
        is_dot = active & (uop.mode == MacMode.DOT)
        is_dot2 = active & (uop.mode == MacMode.DOT2)
        m.d.comb += [
            operand_a.ready.eq(advance & (is_dot | (is_dot2 & operand_b.valid))),
            operand_b.ready.eq((is_load & multiplier_empty) | (advance & is_dot2 & operand_a.valid)),
        ]
        took_a = operand_a.valid & operand_a.ready
        loaded = is_load & operand_b.valid & operand_b.ready
        take = took_a | loaded
        row_done = index == (uop.length - 1)[:len(index)]
        final_take = take & row_done & (is_load | (rows_left == 0))
        m.d.comb += self.uop.ready.eq(~active | final_take)

        with m.If(take):
            m.d.sync += index.eq(Mux(row_done, 0, index + 1))
            with m.If(row_done):
                m.d.sync += rows_left.eq(rows_left - 1)
        with m.If(final_take):
            m.d.sync += active.eq(0)
        with m.If(self.uop.valid & self.uop.ready):
            m.d.sync += [uop.eq(self.uop.payload), index.eq(0),
                         rows_left.eq(self.uop.payload.rows - 1), active.eq(1)]

        m.d.comb += [
            write.addr.eq(index), write.data.eq(operand_b.payload), write.en.eq(loaded),
            read.addr.eq(index), read.en.eq(advance),
        ]

        multiplier = self._operand(m, a1, int8_1, "multiplier")
        multiplicand = self._operand(m, Mux(from_buffer1, read.data, b1), int8_1, "multiplicand")
        partials = _partial_products(x2, y2, width)
        partial_regs = [Signal(len(term), name=f"partial{n}") for n, (term, _) in enumerate(partials)]
        product = sum(reg << shift for reg, (_, shift) in zip(partial_regs, partials, strict=True))
        with m.If(advance):
            m.d.sync += [
                a1.eq(operand_a.payload), b1.eq(operand_b.payload),
                from_buffer1.eq(is_dot), int8_1.eq(uop.precision == Precision.INT8),
                stages[0].valid.eq(took_a), stages[0].first.eq(index == 0),
                stages[0].row_end.eq(row_done), stages[0].closes.eq(final_take & uop.last),
                x2.eq(multiplier), y2.eq(multiplicand),
                *(reg.eq(term) for reg, (term, _) in zip(partial_regs, partials, strict=True)),
                product4.eq(product[:width]),
            ]
            for earlier, later in zip(stages, stages[1:], strict=False):
                m.d.sync += later.follow(earlier)

        total = Mux(tail.first, 0, accumulator) + product4
        with m.If(advance & tail.valid & tail.row_end):
            m.d.sync += [result.payload.eq(total), result.valid.eq(1), out_closes.eq(tail.closes)]
        with m.Elif(result.ready):
            m.d.sync += result.valid.eq(0)
        with m.If(advance & tail.valid & ~tail.row_end):
            m.d.sync += accumulator.eq(total)

        sent = result.valid & result.ready
        busy = active | ~multiplier_empty | result.valid
        m.d.comb += [self.busy.eq(busy), self.cfg.rdata.eq(0)]
        count_status(m, self, firing=sent + loaded, stall=busy & ~(take | sent),
                     completes_last=self._completes_last(m, sent, out_closes, loaded & final_take & uop.last,
                                                         result.valid))
        return m

    @staticmethod
    def _completes_last(m, sent, out_closes, last_load_done, result_waiting):
        """A ``last`` micro-op completes: its final result leaves, or its final load is taken
        once no earlier result waits on ``o[0]`` (or in the cycle that result leaves)."""
        load_pending = Signal()
        with m.If(last_load_done & result_waiting & ~sent):
            m.d.sync += load_pending.eq(1)
        with m.Elif(sent):
            m.d.sync += load_pending.eq(0)
        return ((sent & out_closes) | (last_load_done & (~result_waiting | sent))
                | (load_pending & sent))


class MacModel(UnitModel):
    """Golden model of the ``mac`` FU, written from the architecture note.

    One call of :meth:`step` moves one token (LOAD, DOT) or one operand pair (DOT2), plus the
    row's result when that token ends a row; it takes a row's last operand only if the output
    channel has room for the result.
    """

    def __init__(self, width: int = 32, mac_depth: int = 256):
        super().__init__()
        self.width, self.mac_depth = width, mac_depth
        self.buffer = [0] * mac_depth
        self.index = 0              # k within the row
        self.rows_done = 0
        self.sum = 0

    def check_uop(self, uop):
        mode, length = uop["mode"], uop["length"]
        if length < 1:
            raise IsaError(f"mac {mode.name} length=0: a count of 0 is not allowed")
        if mode != MacMode.LOAD and uop["rows"] < 1:
            raise IsaError(f"mac {mode.name} rows=0: a count of 0 is not allowed")
        if mode in (MacMode.LOAD, MacMode.DOT) and length > self.mac_depth:
            raise IsaError(f"mac {mode.name} length={length} exceeds the buffer (mac_depth="
                           f"{self.mac_depth})")

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.index = self.rows_done = self.sum = 0
        if self.current["mode"] == MacMode.LOAD:
            return self._step_load(inputs[1])
        return self._step_dot(inputs, outputs[0])

    def _step_load(self, source: Channel) -> bool:
        if not source.can_pop():
            return False
        self.buffer[self.index] = source.pop()
        self.firings += 1
        self.index += 1
        if self.index == self.current["length"]:
            self._complete()
        return True

    def _step_dot(self, inputs: list[Channel], output: Channel) -> bool:
        uop = self.current
        pair = uop["mode"] == MacMode.DOT2
        row_end = self.index == uop["length"] - 1
        if not inputs[0].can_pop() or (pair and not inputs[1].can_pop()):
            return False
        if row_end and not output.can_push():
            return False
        a = inputs[0].pop()
        b = inputs[1].pop() if pair else self.buffer[self.index]
        self.sum += mac_product(a, b, uop["precision"], self.width)
        self.index += 1
        if row_end:
            output.push(self.sum & ((1 << self.width) - 1))
            self.firings += 1
            self.index, self.sum = 0, 0
            self.rows_done += 1
            if self.rows_done == uop["rows"]:
                self._complete()
        return True

    def _complete(self):
        self.finished |= bool(self.current["last"])
        self.current = None


@dataclass(frozen=True)
class MacParameters(KindParameters):
    """The ``[mac]`` table of a fabric description."""
    depth: int = 256        # words in every mac tile's vector buffer

    def check(self):
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or not 4 <= self.depth <= 4096:
            raise ValueError(f"depth={self.depth!r} is not allowed; use an integer 4..4096 (words in the "
                             f"vector buffer)")

    def rtl_arguments(self):
        return {"mac_depth": self.depth}


def micro_op_mode(uop: dict, where: str | None = None) -> MacMode:
    """The micro-op's mode (LOAD when absent, as ``rsn.isa.encode`` has it), by member or name."""
    value = uop.get("mode", MacMode.LOAD)
    if isinstance(value, MacMode):
        return value
    if isinstance(value, str) and value in MacMode.__members__:
        return MacMode[value]
    prefix = f"{where}: " if where else ""
    raise ValueError(f"{prefix}mode {value!r} is not one of LOAD, DOT, DOT2")


def _tokens(uops) -> tuple[list[int], list[int]]:
    consumed, produced = [0, 0], [0]
    for index, uop in enumerate(uops):
        mode = micro_op_mode(uop, f"mac micro-op {index}")
        length, rows = uop.get("length", 0), uop.get("rows", 0)
        if mode == MacMode.LOAD:
            consumed[1] += length
        else:
            consumed[0] += rows * length
            if mode == MacMode.DOT2:
                consumed[1] += rows * length
            produced[0] += rows
    return consumed, produced


def _count_fields(uop: dict) -> tuple[str, ...]:
    return ("length",) if micro_op_mode(uop) == MacMode.LOAD else ("length", "rows")


def _check_uop(uop: dict, parameters: MacParameters):
    mode = micro_op_mode(uop)
    if mode != MacMode.DOT2 and uop.get("length", 0) > parameters.depth:
        raise ValueError(f"{mode.name} length {uop['length']} exceeds the vector buffer "
                         f"([mac] depth {parameters.depth})")


def _timing(uop_queue, input_queues):
    from .cycle_model import MacTiming  # the cycle model imports this module
    return MacTiming(uop_queue, input_queues)


MAC_KIND = FuKind("mac", 2, 1, MacUop, LATENCY, MacFu, MacModel, parameters=MacParameters, tokens=_tokens,
                  count_fields=_count_fields, check_uop=_check_uop, timing=_timing)
