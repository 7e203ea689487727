"""UART receiver and transmitter, 8N1, with byte streams.

A frame is a start bit (low), eight data bits (least significant first) and a stop bit (high);
the line idles high. Both ends count ``clocks_per_bit`` cycles of the ``sync`` clock per bit.
"""

from amaranth.hdl import Cat, Module, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from .params import check_int

__all__ = ["UartRx", "UartTx", "MIN_CLOCKS_PER_BIT"]

MIN_CLOCKS_PER_BIT = 4


def _check_clocks_per_bit(component: str, clocks_per_bit) -> int:
    return check_int(component, "clocks_per_bit", clocks_per_bit, minimum=MIN_CLOCKS_PER_BIT,
                     meaning="clock cycles per UART bit, round(clock_hz / baud)")


class UartRx(wiring.Component):
    """UART receiver: the ``rx`` pin in, received bytes out on the stream ``o``.

    The pin passes a two-flip-flop synchroniser. A falling edge starts a frame; the start bit is
    checked again at its middle, and a line that is high again by then was a glitch: it is
    ignored. Data and stop bits are sampled at their middles. A frame whose stop bit is low is
    dropped and sets the sticky ``framing_error``; the receiver then waits for the line to go
    high before it looks for the next start bit.

    A UART cannot be back-pressured: ``o`` holds a byte until it is taken, and a byte that
    arrives while the previous one is still waiting replaces it and sets the sticky ``overrun``.
    A consumer that keeps ``o.ready`` high never loses a byte.

    Members
    -------
    rx : In(1)
        The serial line (asynchronous to the clock).
    o : Out(stream.Signature(8))
        Received bytes.
    framing_error, overrun : Out(1)
        Sticky until reset.
    busy : Out(1)
        A frame is being received.
    """

    def __init__(self, clocks_per_bit: int):
        self.clocks_per_bit = _check_clocks_per_bit("UartRx", clocks_per_bit)
        super().__init__({
            "rx": In(1, init=1),
            "o": Out(stream.Signature(unsigned(8))),
            "framing_error": Out(1),
            "overrun": Out(1),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.clocks_per_bit
        line = Signal(init=1)
        m.submodules.synchroniser = FFSynchronizer(self.rx, line, init=1, stages=2)

        timer = Signal(range(n))
        bit = Signal(range(8))
        shift = Signal(8)

        with m.If(self.o.ready):
            m.d.sync += self.o.valid.eq(0)

        with m.FSM():
            with m.State("IDLE"):
                with m.If(~line):
                    m.d.sync += timer.eq(n // 2 - 1)
                    m.next = "START"
            with m.State("START"):
                m.d.comb += self.busy.eq(1)
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(line):
                    m.next = "IDLE"             # high again at mid-bit: a glitch, not a start bit
                with m.Else():
                    m.d.sync += [timer.eq(n - 1), bit.eq(0)]
                    m.next = "DATA"
            with m.State("DATA"):
                m.d.comb += self.busy.eq(1)
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    m.d.sync += [shift.eq(Cat(shift[1:], line)), timer.eq(n - 1), bit.eq(bit + 1)]
                    with m.If(bit == 7):
                        m.next = "STOP"
            with m.State("STOP"):
                m.d.comb += self.busy.eq(1)
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(line):
                    m.d.sync += [self.o.payload.eq(shift), self.o.valid.eq(1)]
                    with m.If(self.o.valid & ~self.o.ready):
                        m.d.sync += self.overrun.eq(1)
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += self.framing_error.eq(1)
                    m.next = "BREAK"
            with m.State("BREAK"):
                with m.If(line):
                    m.next = "IDLE"
        return m


class UartTx(wiring.Component):
    """UART transmitter: bytes in on the stream ``i``, the ``tx`` pin out.

    ``i.ready`` is high while the transmitter is idle and during the last cycle of a stop bit,
    so back-to-back bytes take exactly ``10 * clocks_per_bit`` cycles each. ``tx`` comes from a
    flip-flop.

    Members
    -------
    i : In(stream.Signature(8))
    tx : Out(1)
        The serial line, high when idle.
    busy : Out(1)
        A frame is being sent.
    """

    def __init__(self, clocks_per_bit: int):
        self.clocks_per_bit = _check_clocks_per_bit("UartTx", clocks_per_bit)
        super().__init__({
            "i": In(stream.Signature(unsigned(8))),
            "tx": Out(1, init=1),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.clocks_per_bit
        sending = Signal()
        timer = Signal(range(n))
        left = Signal(range(10))        # bits still to put on the line after the current one
        shift = Signal(9)               # data bits, then the stop bit

        bit_ends = timer == 0
        m.d.comb += [
            self.busy.eq(sending),
            self.i.ready.eq(~sending | (bit_ends & (left == 0))),
        ]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [self.tx.eq(0), shift.eq(Cat(self.i.payload, 1)), left.eq(9),
                         timer.eq(n - 1), sending.eq(1)]
        with m.Elif(sending):
            with m.If(~bit_ends):
                m.d.sync += timer.eq(timer - 1)
            with m.Elif(left != 0):
                m.d.sync += [self.tx.eq(shift[0]), shift.eq(shift[1:]), left.eq(left - 1),
                             timer.eq(n - 1)]
            with m.Else():
                m.d.sync += sending.eq(0)
        return m
