"""The sparse accumulators: SAM's SparseAccumulator1/2 and their point forms."""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .common import emit, free, release_outputs, token_stream
from .pairs import pair_word

__all__ = ["SparseAccumulator", "PackedAccumulator"]

POINT_INPUTS = ("in_outer_crdpt", "in_inner_crdpt", "in_val")


def lowest_set(bits):
    """(any bit set, the index of the lowest set bit) of ``bits``, a power-of-two width, as a tree
    of halves: log2(width) levels of muxes, where a chain of ``If``s would be ``width`` deep (and
    too deep for synthesis at 256 bits)."""
    if len(bits) == 1:
        return bits[0], Const(0, 0)
    half = len(bits) // 2
    (low_any, low_at), (high_any, high_at) = lowest_set(bits[:half]), lowest_set(bits[half:])
    return low_any | high_any, Mux(low_any, Cat(low_at, 0), Cat(high_at, 1))


class SparseAccumulator(wiring.Component):
    """Sums values per (outer, inner) point in a dense workspace, then emits the stored points
    in order of their coordinates.

    ``order=1`` (SAM's SparseAccumulator1) sums within each run of equal outer coordinates and
    emits a run when the next one starts; ``order=2`` (SparseAccumulator2) sums over the whole
    stream and emits at its ``D``, rows in rising outer order. The three inputs are aligned point
    streams (no stops) ending in ``D``. ``points=False`` gives SAM's fibers: the outer coordinate
    of each run on ``outer_crd`` (then ``S0``), the inner coordinates on ``inner_crd`` with ``S0``
    between runs and, after the last, ``S1`` (``last_level``) or ``S0``; the sums on ``val``, with
    the same stops when ``val_stkn``. ``points=True`` gives one (outer, inner, sum) per stored
    point on ``outer_crdpt``, ``inner_crdpt`` and ``val``, without stops. A point keeps its sum
    even when it is 0. Sums wrap at the data width.

    Stops on any input are dropped one input at a time, as SAM's graphs put a stop dropper on each
    of the accumulator's streams.

    The workspace holds ``rows`` x ``cols`` words (``rows`` is 1 for ``order=1``) and an
    occupancy bit per word; a priority encoder finds the next stored inner coordinate of a row, so
    emitting takes a cycle per point, not per column. A point outside the workspace, or with an
    ``N`` in it, is taken and not stored, and sets the sticky ``dropped`` flag until reset.
    """

    def __init__(self, width: int, order: int = 1, points: bool = False, cols: int = 64, rows: int = 16):
        if order not in (1, 2):
            raise ValueError(f"SparseAccumulator: order={order!r}; use 1 (runs) or 2 (the whole stream)")
        for name, value in (("cols", cols), ("rows", rows)):
            if not isinstance(value, int) or value < 2 or value & (value - 1):
                raise ValueError(f"SparseAccumulator: {name}={value!r}; use a power of two from 2")
        self._width, self.order, self.points = width, order, points
        self.cols, self.rows = cols, rows if order == 2 else 1
        outputs = ("outer_crdpt", "inner_crdpt", "val") if points else ("outer_crd", "inner_crd", "val")
        members = {name: In(token_stream(width)) for name in POINT_INPUTS}
        members |= {name: Out(token_stream(width)) for name in outputs}
        members |= {"dropped": Out(1)}
        if not points:
            members |= {"last_level": In(1), "val_stkn": In(1)}
        self._outputs = outputs
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        outer_in, inner_in, val_in = (getattr(self, name) for name in POINT_INPUTS)
        outer_out, inner_out, val_out = (getattr(self, name) for name in self._outputs)
        release_outputs(m, outer_out, inner_out, val_out)
        outputs_free = free(outer_out, inner_out, val_out)
        col_bits, row_bits = (self.cols - 1).bit_length(), max(1, (self.rows - 1).bit_length())

        m.submodules.workspace = workspace = memory.Memory(shape=self._width, depth=self.rows * self.cols,
                                                           init=[])
        write = workspace.write_port()
        read_point, read_next = workspace.read_port(domain="comb"), workspace.read_port(domain="comb")
        occupied = Array(Signal(self.cols, name=f"occupied{r}") for r in range(self.rows))
        mark = Signal()                         # the point summed now takes its occupancy bit
        unmark = Signal()                       # the point emitted now gives its bit back
        present = Signal(self.rows)             # rows holding a point (order 2)
        run_outer = Signal(self._width)         # the outer coordinate of the run being summed
        run_active = Signal()
        emitted = Signal()                      # a run has been emitted: the next one needs a stop first
        final = Signal()                        # the stream's D was taken: emit all, then close
        row = Signal(row_bits)                  # the row being emitted
        outer_of_row = Signal(self._width)

        kinds = [port.payload.kind for port in (outer_in, inner_in, val_in)]
        # A point: no input at a stop or D; one with an N in it is taken but not stored.
        is_point = Const(1)
        whole = Const(1)
        for kind in kinds:
            is_point &= (kind == TokenKind.DATA) | (kind == TokenKind.EMPTY)
            whole &= kind == TokenKind.DATA
        all_valid = outer_in.valid & inner_in.valid & val_in.valid
        outer, inner = outer_in.payload.value, inner_in.payload.value
        point_row = outer[:row_bits] if self.order == 2 else Const(0, row_bits)
        fits = (inner.as_unsigned() < self.cols) & (inner >= 0)
        if self.order == 2:
            fits &= (outer.as_unsigned() < self.rows) & (outer >= 0)
        # Rows read into signals of their own: slices of an Array element would each be a mux.
        point_bits, pending = Signal(self.cols), Signal(self.cols)
        m.d.comb += [point_bits.eq(occupied[point_row]), pending.eq(occupied[row])]
        stored = point_bits.bit_select(inner[:col_bits], 1)
        m.d.comb += read_point.addr.eq(Cat(inner[:col_bits], point_row))

        def take_inputs():
            m.d.comb += [outer_in.ready.eq(1), inner_in.ready.eq(1), val_in.ready.eq(1)]

        # The lowest stored inner coordinate of the row being emitted, and the lowest row holding one.
        next_col = Signal(col_bits)
        m.d.comb += [next_col.eq(lowest_set(pending)[1]), read_next.addr.eq(Cat(next_col, row))]
        lowest_row = Signal(row_bits)
        m.d.comb += lowest_row.eq(lowest_set(present)[1])

        stop_between = (TokenKind.STOP, 0)     # the S0 between two runs
        with m.FSM():
            with m.State("SUM"):
                with m.If(all_valid & (kinds[0] == TokenKind.DONE) & (kinds[1] == TokenKind.DONE)
                          & (kinds[2] == TokenKind.DONE)):
                    take_inputs()
                    m.d.sync += final.eq(1)
                    if self.order == 1:
                        m.d.sync += [row.eq(0), outer_of_row.eq(run_outer)]
                        m.next = "BODY" if self.points else "HEAD"
                        with m.If(~run_active):
                            m.next = "CLOSE"
                    else:
                        m.next = "NEXT_ROW"
                with m.Elif(all_valid & is_point):
                    if self.order == 1:
                        new_run = run_active & (outer != run_outer)
                    else:
                        new_run = Const(0)
                    with m.If(new_run):             # emit the run before summing into a new one
                        m.d.sync += [row.eq(0), outer_of_row.eq(run_outer)]
                        m.next = "BODY" if self.points else "HEAD"
                    with m.Else():
                        take_inputs()
                        with m.If(fits & whole):
                            total = val_in.payload.value + Mux(stored, read_point.data, 0)
                            m.d.comb += [write.en.eq(1), write.addr.eq(Cat(inner[:col_bits], point_row)),
                                         write.data.eq(total)]
                            m.d.comb += mark.eq(1)
                            if self.order == 2:
                                m.d.sync += present.bit_select(point_row, 1).eq(1)
                        with m.Else():
                            m.d.sync += self.dropped.eq(1)
                        m.d.sync += [run_outer.eq(outer), run_active.eq(1)]
                with m.Else():                      # a stop on any input is dropped on its own
                    for port, kind in zip((outer_in, inner_in, val_in), kinds, strict=True):
                        with m.If(port.valid & (kind == TokenKind.STOP)):
                            m.d.comb += port.ready.eq(1)
            with m.State("NEXT_ROW"):               # order 2: the lowest row left, or the close
                with m.If(present.any()):
                    m.d.sync += [row.eq(lowest_row), outer_of_row.eq(lowest_row)]
                    m.next = "BODY" if self.points else "HEAD"
                with m.Else():
                    m.next = "CLOSE"
            if not self.points:
                with m.State("HEAD"):               # the run's outer coordinate, after the stop before it
                    with m.If(outputs_free):
                        emit(m, outer_out, TokenKind.DATA, outer_of_row)
                        with m.If(emitted):
                            emit(m, inner_out, *stop_between)
                            with m.If(self.val_stkn):
                                emit(m, val_out, *stop_between)
                        m.d.sync += emitted.eq(1)
                        m.next = "BODY"
            with m.State("BODY"):                   # one stored point per cycle, in rising inner order
                with m.If(pending == 0):
                    if self.order == 1:
                        m.d.sync += run_active.eq(0)
                        m.next = "SUM"
                        with m.If(final):
                            m.next = "CLOSE"
                    else:
                        m.d.sync += present.bit_select(row, 1).eq(0)
                        m.next = "NEXT_ROW"
                with m.Elif(outputs_free):
                    if self.points:
                        emit(m, outer_out, TokenKind.DATA, outer_of_row)
                    emit(m, inner_out, TokenKind.DATA, next_col)
                    emit(m, val_out, TokenKind.DATA, read_next.data)
                    m.d.comb += unmark.eq(1)
            with m.State("CLOSE"):                  # the stops after the last run, then D
                with m.If(outputs_free):
                    if not self.points:
                        with m.If(emitted):
                            emit(m, outer_out, TokenKind.STOP, 0)
                            emit(m, inner_out, TokenKind.STOP, self.last_level)
                            with m.If(self.val_stkn):
                                emit(m, val_out, TokenKind.STOP, self.last_level)
                    m.next = "DONE"
            with m.State("DONE"):
                with m.If(outputs_free):
                    for output in (outer_out, inner_out, val_out):
                        emit(m, output, TokenKind.DONE)
                    m.d.sync += [final.eq(0), emitted.eq(0), run_active.eq(0)]
                    m.next = "SUM"

        # The occupancy bits change as whole rows, a one-hot column under the row's own test.
        # Written as a bit of a dynamically indexed row, each change was a case per row and column
        # and each bit read a mux of its own: an order-2 accumulator was 51,000 lines of Verilog,
        # now 3,100, for the same registers and the same logic.
        def one_hot(column):
            return (Const(1, self.cols) << column)[:self.cols]

        taken, given = Mux(mark, one_hot(inner[:col_bits]), 0), Mux(unmark, one_hot(next_col), 0)
        for r, bits in enumerate(occupied):
            here_taken = Mux(point_row == r, taken, 0) if self.rows > 1 else taken
            here_given = Mux(row == r, given, 0) if self.rows > 1 else given
            m.d.sync += bits.eq((bits | here_taken) & ~here_given)
        return m


class PackedAccumulator(wiring.Component):
    """The order-1 accumulator as a tile takes it: two outputs, not three. ``outer_crd`` as
    :class:`SparseAccumulator` gives it, and ``pairs``: each inner coordinate and its sum in one
    token (samflow.pairs.pack_sums: the coordinate in the high half, the sum's low bits, signed, in
    the low half), the stops between and
    after runs as they are (the sums carry the same stops, ``val_stkn``). SAM's graphs close the
    inner level with ``S1`` (``last_level``)."""

    def __init__(self, width: int, cols: int):
        self._width, self.cols = width, cols
        members = {name: In(token_stream(width)) for name in POINT_INPUTS}
        members |= {"outer_crd": Out(token_stream(width)), "pairs": Out(token_stream(width)),
                    "dropped": Out(1)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        acc = m.submodules.accumulator = SparseAccumulator(self._width, order=1, cols=self.cols)
        for name in POINT_INPUTS:
            wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(acc, name))
        wiring.connect(m, acc.outer_crd, wiring.flipped(self.outer_crd))
        m.d.comb += [acc.last_level.eq(1), acc.val_stkn.eq(1), self.dropped.eq(acc.dropped)]
        inner, total = acc.inner_crd, acc.val       # loaded in the same cycles, so they leave together
        both = inner.valid & total.valid
        packed = pair_word(inner.payload.value, total.payload.value, self._width)
        m.d.comb += [
            self.pairs.valid.eq(both),
            self.pairs.payload.eq(Mux(inner.payload.kind == TokenKind.DATA, packed,
                                      inner.payload.as_value())),
            inner.ready.eq(self.pairs.ready & both), total.ready.eq(self.pairs.ready & both),
        ]
        return m
