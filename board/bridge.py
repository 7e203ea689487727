"""The UART host bridge: the host link protocol (board/protocol.py) on two pins.

Receive side: the UART receiver feeds a frame parser that puts each word into its channel's
FIFO (a TokenQueue of ``credits`` words): ctrl, then one per host input port. A FIFO hands its
words to the fabric and the bridge owes the host one credit per word handed over. A frame for
a full FIFO is dropped and sets the sticky link error, as do an unknown channel byte and a UART
framing error or overrun: nothing is lost silently.

Transmit side: credit, status, read-back and host-output frames are built as whole frames and
merged by a round-robin Arbiter into a serialiser that feeds the UART transmitter, so frames
never interleave and the only back-pressure on the fabric's outputs is the UART's speed.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.arbiter import Arbiter
from hw.params import check_int
from hw.token_queue import TokenQueue
from hw.uart import UartRx, UartTx

from .protocol import (
    BOARD_CREDIT,
    BOARD_READBACK,
    BOARD_STATUS,
    CHANNEL_CTRL,
    CHANNEL_STATUS_REQUEST,
    CTRL_BYTES,
    DEFAULT_CREDITS,
    FIRST_PORT_CHANNEL,
    LinkLayout,
)

__all__ = ["HostBridge", "frame_layout"]


def frame_layout(max_bytes: int) -> data.StructLayout:
    """A whole board-to-host frame: its length in bytes and the bytes, first in the LSBs."""
    return data.StructLayout({"length": range(max_bytes + 1), "bytes": unsigned(8 * max_bytes)})


class HostBridge(wiring.Component):
    """UART pins on one side, the fabric's streams and status on the other.

    Members
    -------
    uart_rx : In(1)
        From the host (asynchronous; synchronised inside).
    uart_tx : Out(1)
        To the host.
    ctrl : Out(stream.Signature(32))
        To the fabric's ``ctrl``.
    readback : In(stream.Signature(32))
        From the fabric's ``readback``.
    <host port> : Out(stream) for each host input port, In(stream) for each host output port
        (``data_width`` bits): the fabric's host streams, flipped.
    done, stalled : In(1)
        The fabric's status.
    link_error : Out(1)
        Sticky: a frame overflowed its channel's credits, an unknown channel byte arrived, or
        the UART saw a framing error or an overrun.
    rx_busy, tx_busy : Out(1)
        A UART frame is being received / sent (for activity LEDs).
    """

    def __init__(self, spec, *, clocks_per_bit: int, credits: int = DEFAULT_CREDITS):
        self.spec = spec
        self.layout = LinkLayout.for_spec(spec)
        self.clocks_per_bit = clocks_per_bit
        self.credits = check_int("HostBridge", "credits", credits, minimum=1,
                                 meaning="words each host-to-board channel's FIFO holds")
        word = stream.Signature(unsigned(32))
        port_data = stream.Signature(unsigned(spec.data_width))
        members = {
            "uart_rx": In(1, init=1), "uart_tx": Out(1, init=1),
            "ctrl": Out(word), "readback": In(word),
            "done": In(1), "stalled": In(1),
            "link_error": Out(1), "rx_busy": Out(1), "tx_busy": Out(1),
        }
        for port in spec.host_ports:
            members[port.name] = Out(port_data) if port.direction == "in" else In(port_data)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        layout = self.layout
        m.submodules.rx = rx = UartRx(self.clocks_per_bit)
        m.submodules.tx = tx = UartTx(self.clocks_per_bit)
        m.d.comb += [
            rx.rx.eq(self.uart_rx),
            self.uart_tx.eq(tx.tx),
            self.rx_busy.eq(rx.busy),
            self.tx_busy.eq(tx.busy),
        ]

        # Receive: channel FIFOs (ctrl first, then the host inputs) in front of the fabric.
        targets = [self.ctrl] + [getattr(self, name) for name in layout.inputs]
        fifos = []
        for channel, target in enumerate(targets):
            width = 32 if channel == CHANNEL_CTRL else self.spec.data_width
            fifo = TokenQueue(unsigned(width), self.credits)
            m.submodules[f"fifo_{layout.channel_name(channel)}"] = fifo
            wiring.connect(m, fifo.o, wiring.flipped(target))
            fifos.append(fifo)
        status_request = self._elaborate_parser(m, rx, fifos)

        # Transmit: whole frames from every source, round robin, one at a time.
        frame = frame_layout(layout.max_frame_bytes)
        sources = []

        status_now = Signal(3)
        m.d.comb += status_now.eq(Cat(self.done, self.stalled, self.link_error))
        status_valid = Signal()
        status_byte = Signal(3)
        status_sent = Signal(3)             # the last status put into a frame
        status_source = stream.Signature(frame).create()
        m.d.comb += [
            status_source.valid.eq(status_valid),
            status_source.payload.length.eq(2),
            status_source.payload.bytes.eq(Cat(Const(BOARD_STATUS, 8), status_byte)),
        ]
        with m.If(status_source.valid & status_source.ready):
            m.d.sync += status_valid.eq(0)
        with m.Elif(~status_valid & ((status_now != status_sent) | status_request)):
            m.d.sync += [status_valid.eq(1), status_byte.eq(status_now), status_sent.eq(status_now),
                         status_request.eq(0)]
        sources.append(status_source)

        for channel, fifo in enumerate(fifos):
            owed = Signal(range(self.credits + 1), name=f"owed_{layout.channel_name(channel)}")
            source = stream.Signature(frame).create()
            m.d.comb += [
                source.valid.eq(owed != 0),
                source.payload.length.eq(1),
                source.payload.bytes.eq(BOARD_CREDIT | channel),
            ]
            handed = fifo.o.valid & fifo.o.ready
            returned = source.valid & source.ready
            with m.If(handed & ~returned):
                m.d.sync += owed.eq(owed + 1)
            with m.Elif(returned & ~handed):
                m.d.sync += owed.eq(owed - 1)
            sources.append(source)

        word_sources = [(BOARD_READBACK, self.readback, CTRL_BYTES)]
        word_sources += [(FIRST_PORT_CHANNEL + k, getattr(self, name), layout.data_bytes)
                         for k, name in enumerate(layout.outputs)]
        for head, port, size in word_sources:
            source = stream.Signature(frame).create()
            m.d.comb += [
                source.valid.eq(port.valid),
                source.payload.length.eq(1 + size),
                source.payload.bytes.eq(Cat(Const(head, 8), port.payload)),
                port.ready.eq(source.ready),
            ]
            sources.append(source)

        m.submodules.arbiter = arbiter = Arbiter(frame, len(sources))
        for source, arbiter_input in zip(sources, arbiter.i, strict=True):
            wiring.connect(m, source, arbiter_input)

        left = Signal(range(layout.max_frame_bytes + 1))
        shift = Signal(8 * layout.max_frame_bytes)
        m.d.comb += [
            arbiter.o.ready.eq(left == 0),
            tx.i.valid.eq(left != 0),
            tx.i.payload.eq(shift[:8]),
        ]
        with m.If(arbiter.o.valid & arbiter.o.ready):
            m.d.sync += [shift.eq(arbiter.o.payload.bytes), left.eq(arbiter.o.payload.length)]
        with m.Elif(tx.i.valid & tx.i.ready):
            m.d.sync += [shift.eq(shift[8:]), left.eq(left - 1)]
        return m

    def _elaborate_parser(self, m, rx, fifos):
        """Frames from the UART's bytes into the channel FIFOs; returns the status-request flag."""
        layout = self.layout
        channel = Signal(range(len(fifos)))
        index = Signal(range(max(CTRL_BYTES, layout.data_bytes)))
        word = Signal(8 * max(CTRL_BYTES, layout.data_bytes))
        push = Signal()
        unknown_channel = Signal()
        overflow = Signal()
        status_request = Signal()

        byte = rx.o.payload
        arrived = rx.o.valid
        m.d.comb += rx.o.ready.eq(1)        # a UART cannot wait: every byte is taken at once
        last_index = Mux(channel == CHANNEL_CTRL, CTRL_BYTES - 1, layout.data_bytes - 1)

        m.d.sync += push.eq(0)
        with m.FSM():
            with m.State("CHANNEL"):
                with m.If(arrived):
                    with m.If(byte == CHANNEL_STATUS_REQUEST):
                        m.d.sync += status_request.eq(1)
                    with m.Elif(byte < len(fifos)):
                        m.d.sync += [channel.eq(byte), index.eq(0)]
                        m.next = "PAYLOAD"
                    with m.Else():
                        m.d.sync += unknown_channel.eq(1)
            with m.State("PAYLOAD"):
                with m.If(arrived):
                    m.d.sync += word.word_select(index, 8).eq(byte)
                    with m.If(index == last_index):
                        m.d.sync += push.eq(1)
                        m.next = "CHANNEL"
                    with m.Else():
                        m.d.sync += index.eq(index + 1)

        # The word is complete the cycle after its last byte (the next byte is a UART frame away).
        with m.Switch(channel):
            for k, fifo in enumerate(fifos):
                with m.Case(k):
                    m.d.comb += fifo.i.valid.eq(push)
                    with m.If(push & ~fifo.i.ready):
                        m.d.sync += overflow.eq(1)      # more frames than credits: dropped, reported
        for fifo in fifos:
            m.d.comb += fifo.i.payload.eq(word)
        m.d.comb += self.link_error.eq(unknown_channel | overflow | rx.framing_error | rx.overrun)
        return status_request
