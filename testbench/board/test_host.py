"""The host driver's pieces that need no board: the serial transport (on pyserial's loop-back
port) and the protocol encoder/decoder, against frames written out by hand from the spec."""

import asyncio

import pytest

from board.host import SerialTransport, TransportTimeout
from board.protocol import (
    BoardFrameDecoder,
    Credit,
    LinkLayout,
    Output,
    ProtocolError,
    Readback,
    Status,
    encode_ctrl,
    encode_input,
)
from testbench.board.programs import board_spec


def test_serial_transport_loops_back_and_times_out():
    async def exchange():
        with SerialTransport("loop://", 115_200, timeout=0.05) as port:
            await port.write(b"\x00\x01\x02\x03\x04")
            received = b""
            while len(received) < 5:
                received += await port.read()
            with pytest.raises(TransportTimeout, match="nothing arrived on loop://"):
                await port.read()
            return received

    assert asyncio.run(exchange()) == b"\x00\x01\x02\x03\x04"


def test_frames_as_the_protocol_writes_them():
    layout = LinkLayout.for_spec(board_spec())
    assert layout.inputs == ("in0", "in1") and layout.outputs == ("out0", "out1")
    assert encode_ctrl(0x12345678) == bytes([0x00, 0x78, 0x56, 0x34, 0x12])
    assert encode_input(layout, "in1", 0xA1B2C3D4) == bytes([0x02, 0xD4, 0xC3, 0xB2, 0xA1])
    with pytest.raises(ProtocolError, match="no host input port 'out0'"):
        encode_input(layout, "out0", 1)
    with pytest.raises(ProtocolError, match="does not fit"):
        encode_ctrl(1 << 32)
    decoder = BoardFrameDecoder(layout)
    stream = bytes([0x41, 0x80, 0x05, 0x02, 1, 2, 3, 4, 0x00, 9, 0, 0, 0, 0x40])
    events = []
    for at in range(len(stream)):           # one byte at a time: frames split anywhere
        events += decoder.feed(stream[at:at + 1])
    assert events == [Credit(1), Status(True, False, True), Output("out1", 0x04030201), Readback(9),
                      Credit(0)]
    with pytest.raises(ProtocolError, match="0x3f"):
        decoder.feed(bytes([0x3F]))
