"""The hardware token queue: the FIFO in front of every FU input, and Ripple's ``queue``."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .params import check_int, check_payload_shape
from .skid_buffer import elaborate_skid_pair

__all__ = ["TokenQueue"]


class TokenQueue(wiring.Component):
    """First-in first-out token queue of any depth with registered outputs.

    Contract, at every depth:

    * tokens leave in the order they arrived, none lost or duplicated;
    * ``level`` is the number of tokens held: accepted and not yet delivered;
    * ``i.ready`` is high exactly when ``level < depth``, so it never depends on ``o.ready``;
    * ``o.valid`` and ``o.payload`` come straight from storage registers.

    Throughput is one token per cycle at every depth >= 2 while neither side stalls. Depth 1
    alternates: its single slot is either full (cannot accept) or empty (cannot deliver), and
    since ``i.ready`` may not look at ``o.ready``, a slot cannot be refilled in the cycle it
    drains: 0.5 tokens per cycle.

    Latency from ``i`` to ``o`` is one cycle up to depth 2 (flip-flop slots) and two cycles from
    depth 3, where tokens pass through a memory with a synchronous read port (block RAM on an
    FPGA) whose read register is the output register.

    Parameters
    ----------
    shape : shape-castable
        Payload shape (width >= 1).
    depth : int
        Number of tokens the queue holds (>= 1).

    Members
    -------
    i : In(stream.Signature(shape))
    o : Out(stream.Signature(shape))
    level : Out(range(depth + 1))
        Occupancy.
    """

    def __init__(self, shape, depth: int):
        self._shape = check_payload_shape("TokenQueue", shape)
        self._depth = check_int("TokenQueue", "depth", depth, minimum=1,
                                meaning="number of tokens the queue holds")
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)),
            "level": Out(range(depth + 1)),
        })

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform):
        m = Module()
        if self._depth == 1:
            self._elaborate_single_slot(m)
        elif self._depth == 2:
            skid_valid = elaborate_skid_pair(m, self.i, self.o, self._shape)
            m.d.comb += self.level.eq(self.o.valid + skid_valid)
        else:
            self._elaborate_memory(m)
        return m

    def _elaborate_single_slot(self, m):
        m.d.comb += [self.i.ready.eq(~self.o.valid), self.level.eq(self.o.valid)]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [self.o.payload.eq(self.i.payload), self.o.valid.eq(1)]
        with m.Elif(self.o.ready):
            m.d.sync += self.o.valid.eq(0)

    def _elaborate_memory(self, m):
        # `depth - 1` tokens wait in the memory; the memory's read register holds the token on
        # offer. A read is issued whenever that register is empty or being emptied.
        stored_depth = self._depth - 1
        m.submodules.storage = storage = Memory(shape=self._shape, depth=stored_depth, init=[])
        write = storage.write_port()
        read = storage.read_port(domain="sync")

        stored = Signal(range(stored_depth + 1))
        write_at = Signal(range(stored_depth))
        read_at = Signal(range(stored_depth))

        def advance(pointer):
            if stored_depth & (stored_depth - 1) == 0:  # a power of two wraps by itself
                return (pointer + 1)[:len(pointer)]
            return Mux(pointer == stored_depth - 1, 0, pointer + 1)

        push = self.i.valid & self.i.ready
        pull = (stored != 0) & (~self.o.valid | self.o.ready)

        # `i.ready` needs only the memory's count: whenever the memory holds a token the output
        # register is full by the next cycle, so "memory full, output empty" cannot occur and
        # `stored != stored_depth` is exactly `level < depth`. Leaving `o.valid` out of it keeps
        # the level adder off the write-enable path (measured: ECP5 depth 16, 186 -> 324 MHz).
        m.d.comb += [
            self.i.ready.eq(stored != stored_depth),
            write.addr.eq(write_at),
            write.data.eq(self.i.payload),
            write.en.eq(push),
            read.addr.eq(read_at),
            read.en.eq(pull),
            self.o.payload.eq(read.data),
            self.level.eq(stored + self.o.valid),
        ]
        with m.If(push):
            m.d.sync += write_at.eq(advance(write_at))
        with m.If(pull):
            m.d.sync += read_at.eq(advance(read_at))
        with m.If(push & ~pull):
            m.d.sync += stored.eq(stored + 1)
        with m.Elif(pull & ~push):
            m.d.sync += stored.eq(stored - 1)
        with m.If(pull):
            m.d.sync += self.o.valid.eq(1)
        with m.Elif(self.o.ready):
            m.d.sync += self.o.valid.eq(0)
