"""The primitives whose result or source is an array: value array, value and compressed writers."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from samflow.tokens import TokenKind

from .bank import Bank, host_port
from .common import emit, emit_token, free, release_outputs, token_stream

__all__ = ["Array", "ValsWriter", "CompressedWriter"]


class Array(wiring.Component):
    """Loads ``arr[address]`` per address on ``in_load_addr`` (``N`` loads 0; stops and ``D`` pass
    through), and stores each (``in_store_addr``, ``in_store_val``) pair (SAM's Array)."""

    def __init__(self, width: int, depth: int = 64):
        self._width, self.depth = width, depth
        super().__init__({
            "in_load_addr": In(token_stream(width)), "in_store_addr": In(token_stream(width)),
            "in_store_val": In(token_stream(width)), "load": Out(token_stream(width)),
            "arr_bank": In(host_port(width, depth)),
        })

    def elaborate(self, platform):
        m = Module()
        load, address, value, o = self.in_load_addr, self.in_store_addr, self.in_store_val, self.load
        bank = Bank(m, "arr", self.arr_bank, self._width, self.depth)
        loaded = bank.read(load.payload.value.as_unsigned())
        release_outputs(m, o)
        m.d.comb += load.ready.eq(free(o))
        with m.If(load.valid & free(o)):
            with m.Switch(load.payload.kind):
                with m.Case(TokenKind.DATA):
                    emit(m, o, TokenKind.DATA, loaded)
                with m.Case(TokenKind.EMPTY):
                    emit(m, o, TokenKind.DATA, 0)
                with m.Default():
                    emit_token(m, o, load.payload)
        both = address.valid & value.valid
        m.d.comb += [address.ready.eq(both), value.ready.eq(both)]
        bank.write(both & (address.payload.kind == TokenKind.DATA), address.payload.value.as_unsigned(),
                   value.payload.value)
        return m


class ValsWriter(wiring.Component):
    """Writes each value of ``in_val`` to the next word of its bank, skipping stops (SAM's
    ValsWrScan). One value per cycle."""

    def __init__(self, width: int, depth: int = 64):
        self._width, self.depth = width, depth
        super().__init__({"in_val": In(token_stream(width)), "arr_bank": In(host_port(width, depth))})

    def elaborate(self, platform):
        m = Module()
        i = self.in_val
        bank = Bank(m, "arr", self.arr_bank, self._width, self.depth)
        count = Signal(range(self.depth + 1))
        m.d.comb += i.ready.eq(1)
        writing = i.valid & (i.payload.kind == TokenKind.DATA)
        bank.write(writing, count, i.payload.value)
        with m.If(writing):
            m.d.sync += count.eq(count + 1)
        return m


class CompressedWriter(wiring.Component):
    """Writes a compressed level (SAM's CompressWrScan): coordinates go to the ``crd`` bank, and
    each stop that closes a non-empty fiber appends the running count to ``seg``, which starts
    with 0. One token per cycle, after one cycle that writes ``seg[0]``."""

    def __init__(self, width: int, depth: int = 64):
        self._width, self.depth = width, depth
        super().__init__({"in_crd": In(token_stream(width)),
                          "crd_bank": In(host_port(width, depth)), "seg_bank": In(host_port(width, depth))})

    def elaborate(self, platform):
        m = Module()
        i = self.in_crd
        crds = Bank(m, "crd", self.crd_bank, self._width, self.depth)
        seg = Bank(m, "seg", self.seg_bank, self._width, self.depth)
        count, segments = Signal(range(self.depth + 1)), Signal(range(self.depth + 1))
        fiber_open, started = Signal(), Signal()
        kind = i.payload.kind
        m.d.comb += i.ready.eq(started)
        taking = i.valid & started
        write_crd = taking & (kind == TokenKind.DATA)
        closes = taking & (kind == TokenKind.STOP) & fiber_open
        crds.write(write_crd, count, i.payload.value)
        seg.write(~started | closes, segments, count)
        with m.If(~started):
            m.d.sync += [started.eq(1), segments.eq(1)]
        with m.If(write_crd):
            m.d.sync += [count.eq(count + 1), fiber_open.eq(1)]
        with m.If(closes):
            m.d.sync += [segments.eq(segments + 1), fiber_open.eq(0)]
        return m
