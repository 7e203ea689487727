"""The hardware token queue: the FIFO in front of every FU input, and Ripple's ``queue``."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .params import check_int, check_payload_shape
from .skid_buffer import elaborate_skid_pair

__all__ = ["TokenQueue", "QUEUE_MODES"]

# How soon a token that enters the queue is on offer at ``o`` (see TokenQueue's docstring).
QUEUE_MODES = ("registered", "fall_through", "bypass")


class TokenQueue(wiring.Component):
    """First-in first-out token queue of any depth, with registered outputs or a shorter latency.

    Contract, at every depth and in every mode:

    * tokens leave in the order they arrived, none lost or duplicated;
    * ``level`` is the number of tokens held: accepted and not yet delivered (a token that
      passes straight through in ``bypass`` mode is never held);
    * ``i.ready`` is high exactly when ``level < depth``, so it never depends on ``o.ready``;
    * ``o.valid`` stays high and ``o.payload`` stable until ``o.ready`` takes the token.

    The ``mode`` sets how soon a token is on offer at ``o`` (the latency, when the queue is
    empty), which is what a token crossing a fabric pays at every FU input:

    * ``"registered"``: ``o.valid`` and ``o.payload`` come straight from storage registers.
      One cycle up to depth 2 (flip-flop slots), two from depth 3, where tokens pass through a
      memory with a synchronous read port (block RAM on an FPGA) whose read register is the
      output register.
    * ``"fall_through"``: one cycle at every depth. From depth 3 the memory has an asynchronous
      read port (LUT RAM on an FPGA), so ``o.payload`` is the memory's word at the read pointer
      and ``o.valid`` a comparison of the occupancy register; up to depth 2 as ``registered``.
    * ``"bypass"``: zero cycles. While the queue is empty, ``o`` offers what ``i`` offers, and
      a token taken at ``o`` in the cycle it arrives is never stored; one not taken is stored
      in a ``fall_through`` queue, which offers it from the next cycle, so ``o`` keeps offering
      it. This puts a combinational path from ``i.valid`` and ``i.payload`` to ``o`` (the
      producer's registers straight into the consumer's logic); ``i.ready`` still depends
      only on the level.

    Throughput is one token per cycle at every depth >= 2 while neither side stalls. Depth 1
    alternates: its single slot is either full (cannot accept) or empty (cannot deliver), and
    since ``i.ready`` may not look at ``o.ready``, a slot cannot be refilled in the cycle it
    drains: 0.5 tokens per cycle.

    Parameters
    ----------
    shape : shape-castable
        Payload shape (width >= 1).
    depth : int
        Number of tokens the queue holds (>= 1).
    mode : str
        One of :data:`QUEUE_MODES`: ``"registered"`` (the default), ``"fall_through"`` or
        ``"bypass"``.

    Members
    -------
    i : In(stream.Signature(shape))
    o : Out(stream.Signature(shape))
    level : Out(range(depth + 1))
        Occupancy.
    """

    def __init__(self, shape, depth: int, *, mode: str = "registered"):
        self._shape = check_payload_shape("TokenQueue", shape)
        self._depth = check_int("TokenQueue", "depth", depth, minimum=1,
                                meaning="number of tokens the queue holds")
        if mode not in QUEUE_MODES:
            raise ValueError(f"TokenQueue: mode {mode!r} is not one of {', '.join(QUEUE_MODES)}; "
                             f"'registered' keeps registered outputs, 'fall_through' offers a token "
                             f"one cycle after it arrives at every depth, 'bypass' in the cycle it "
                             f"arrives while the queue is empty")
        self._mode = mode
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)),
            "level": Out(range(depth + 1)),
        })

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def mode(self) -> str:
        return self._mode

    def elaborate(self, platform):
        m = Module()
        if self._mode == "bypass":
            self._elaborate_bypass(m)
        else:
            self._elaborate_storage(m, self.i, self.o, self.level, self._mode)
        return m

    def _elaborate_storage(self, m, sink, source, level, mode):
        """The queue in ``mode`` (not ``bypass``), from stream ``sink`` to stream ``source``."""
        if self._depth == 1:
            _elaborate_single_slot(m, sink, source, level)
        elif self._depth == 2:
            skid_valid = elaborate_skid_pair(m, sink, source, self._shape)
            m.d.comb += level.eq(source.valid + skid_valid)
        elif mode == "registered":
            self._elaborate_memory(m, sink, source, level)
        else:
            self._elaborate_fall_through_memory(m, sink, source, level)

    def _elaborate_bypass(self, m):
        # Storage in fall-through mode, in this module (so a formal bench can name its
        # registers); it offers nothing exactly when it holds nothing, so "empty" is its
        # `o.valid` low.
        stored_i = stream.Signature(self._shape).flip().create(path=("stored_i",))
        stored_o = stream.Signature(self._shape).create(path=("stored_o",))
        self._elaborate_storage(m, stored_i, stored_o, self.level, "fall_through")
        empty = ~stored_o.valid
        m.d.comb += [
            self.i.ready.eq(stored_i.ready),
            stored_i.payload.eq(self.i.payload),
            stored_i.valid.eq(self.i.valid & ~(empty & self.o.ready)),
            self.o.valid.eq(stored_o.valid | self.i.valid),
            self.o.payload.eq(Mux(empty, self.i.payload, stored_o.payload)),
            stored_o.ready.eq(self.o.ready),
        ]

    def _elaborate_memory(self, m, sink, source, level):
        # `depth - 1` tokens wait in the memory; the memory's read register holds the token on
        # offer. A read is issued whenever that register is empty or being emptied.
        stored_depth = self._depth - 1
        m.submodules.storage = storage = Memory(shape=self._shape, depth=stored_depth, init=[])
        write = storage.write_port()
        read = storage.read_port(domain="sync")
        stored, write_at, read_at = _ring(stored_depth)
        push = sink.valid & sink.ready
        pull = (stored != 0) & (~source.valid | source.ready)

        # `i.ready` needs only the memory's count: whenever the memory holds a token the output
        # register is full by the next cycle, so "memory full, output empty" cannot occur and
        # `stored != stored_depth` is exactly `level < depth`. Leaving `o.valid` out of it keeps
        # the level adder off the write-enable path (measured: ECP5 depth 16, 186 -> 324 MHz).
        m.d.comb += [
            sink.ready.eq(stored != stored_depth),
            write.addr.eq(write_at),
            write.data.eq(sink.payload),
            write.en.eq(push),
            read.addr.eq(read_at),
            read.en.eq(pull),
            source.payload.eq(read.data),
            level.eq(stored + source.valid),
        ]
        _move_ring(m, stored_depth, (stored, write_at, read_at), push, pull)
        with m.If(pull):
            m.d.sync += source.valid.eq(1)
        with m.Elif(source.ready):
            m.d.sync += source.valid.eq(0)

    def _elaborate_fall_through_memory(self, m, sink, source, level):
        # All `depth` tokens wait in the memory and the one at the read pointer is on offer
        # through the asynchronous read port: a word written in one cycle is read in the next.
        m.submodules.storage = storage = Memory(shape=self._shape, depth=self._depth, init=[])
        write = storage.write_port()
        read = storage.read_port(domain="comb")
        stored, write_at, read_at = _ring(self._depth)
        push = sink.valid & sink.ready
        pull = source.valid & source.ready
        m.d.comb += [
            sink.ready.eq(stored != self._depth),
            write.addr.eq(write_at),
            write.data.eq(sink.payload),
            write.en.eq(push),
            read.addr.eq(read_at),
            source.valid.eq(stored != 0),
            source.payload.eq(read.data),
            level.eq(stored),
        ]
        _move_ring(m, self._depth, (stored, write_at, read_at), push, pull)


def _elaborate_single_slot(m, sink, source, level):
    m.d.comb += [sink.ready.eq(~source.valid), level.eq(source.valid)]
    with m.If(sink.valid & sink.ready):
        m.d.sync += [source.payload.eq(sink.payload), source.valid.eq(1)]
    with m.Elif(source.ready):
        m.d.sync += source.valid.eq(0)


def _ring(slots: int):
    """Occupancy, write and read pointers of a ring buffer of ``slots`` words."""
    return (Signal(range(slots + 1), name="stored"), Signal(range(slots), name="write_at"),
            Signal(range(slots), name="read_at"))


def _move_ring(m, slots: int, ring, push, pull):
    """Advance the ring's pointers and occupancy by a cycle's ``push`` and ``pull``."""
    stored, write_at, read_at = ring

    def advance(pointer):
        if slots & (slots - 1) == 0:  # a power of two wraps by itself
            return (pointer + 1)[:len(pointer)]
        return Mux(pointer == slots - 1, 0, pointer + 1)

    with m.If(push):
        m.d.sync += write_at.eq(advance(write_at))
    with m.If(pull):
        m.d.sync += read_at.eq(advance(read_at))
    with m.If(push & ~pull):
        m.d.sync += stored.eq(stored + 1)
    with m.Elif(pull & ~push):
        m.d.sync += stored.eq(stored - 1)
