"""The host link's wire protocol: constants and a sans-IO encoder/decoder.

One source of truth: the RTL bridge (board/bridge.py) takes its channel numbers, frame
lengths and status bits from here, and so do the host driver (board/host.py) and the tests.
See docs/host-link.md for the why.

Host to board, a frame is one channel byte and then a little-endian word:

* ``0x00``: a control word (4 bytes) for the fabric's ``ctrl`` stream;
* ``0x01 + k``: a word for the k-th host input port (``spec.host_ports`` order, direction
  "in"), ``ceil(data_width / 8)`` bytes;
* ``0x7F``: status request (no payload).

Board to host:

* ``0x00``: a read-back word (4 bytes);
* ``0x01 + k``: a word from the k-th host output port (direction "out"), ``ceil(data_width / 8)``
  bytes;
* ``0x40 | ch``: one credit back for host-to-board channel ``ch`` (no payload);
* ``0x80``: status, one byte: bit 0 done, bit 1 stalled, bit 2 link error.

Every host-to-board channel has a FIFO of ``credits`` words in the bridge. The host starts with
``credits`` per channel, spends one per frame and gets one back for each word the bridge hands
to the fabric.
"""

from dataclasses import dataclass

__all__ = [
    "CHANNEL_CTRL", "CHANNEL_STATUS_REQUEST", "FIRST_PORT_CHANNEL", "BOARD_READBACK", "BOARD_CREDIT",
    "BOARD_STATUS", "STATUS_DONE", "STATUS_STALLED", "STATUS_LINK_ERROR", "DEFAULT_CREDITS",
    "CTRL_BYTES", "ProtocolError", "LinkLayout", "Status", "Readback", "Output", "Credit",
    "encode_ctrl", "encode_input", "encode_status_request", "BoardFrameDecoder", "HostFrameDecoder",
    "HostFrame", "StatusRequest",
]

CHANNEL_CTRL = 0x00              # host -> board: a ctrl word
FIRST_PORT_CHANNEL = 0x01        # host -> board: first host input port; board -> host: first output
CHANNEL_STATUS_REQUEST = 0x7F    # host -> board: please send the status
BOARD_READBACK = 0x00            # board -> host: a read-back word
BOARD_CREDIT = 0x40              # board -> host: 0x40 | channel, one credit back
BOARD_STATUS = 0x80              # board -> host: status byte follows

STATUS_DONE = 1 << 0
STATUS_STALLED = 1 << 1
STATUS_LINK_ERROR = 1 << 2

DEFAULT_CREDITS = 8
CTRL_BYTES = 4
MAX_CHANNELS = BOARD_CREDIT     # channels 0x00..0x3F fit the credit byte 0x40 | ch


class ProtocolError(ValueError):
    """A frame or value does not fit the protocol; the message names it."""


def _word_bytes(width: int) -> int:
    return (width + 7) // 8


@dataclass(frozen=True)
class LinkLayout:
    """Channel numbers and frame sizes for one fabric, from its host ports."""
    inputs: tuple[str, ...]          # host input port names, channel 0x01 + k
    outputs: tuple[str, ...]         # host output port names, board channel 0x01 + k
    data_width: int

    @classmethod
    def for_spec(cls, spec) -> "LinkLayout":
        inputs = tuple(port.name for port in spec.host_ports if port.direction == "in")
        outputs = tuple(port.name for port in spec.host_ports if port.direction == "out")
        for what, names in (("input", inputs), ("output", outputs)):
            if FIRST_PORT_CHANNEL + len(names) > MAX_CHANNELS:
                raise ProtocolError(f"the fabric has {len(names)} host {what} ports; the host link "
                                    f"carries at most {MAX_CHANNELS - FIRST_PORT_CHANNEL}")
        return cls(inputs, outputs, spec.data_width)

    @property
    def data_bytes(self) -> int:
        """Payload bytes of a host-port word."""
        return _word_bytes(self.data_width)

    @property
    def channels(self) -> int:
        """Host-to-board channels with a FIFO and credits: ctrl, then the inputs."""
        return 1 + len(self.inputs)

    def input_channel(self, port: str) -> int:
        if port not in self.inputs:
            raise ProtocolError(f"no host input port {port!r}; inputs are {list(self.inputs)}")
        return FIRST_PORT_CHANNEL + self.inputs.index(port)

    def channel_name(self, channel: int) -> str:
        return "ctrl" if channel == CHANNEL_CTRL else self.inputs[channel - FIRST_PORT_CHANNEL]

    def payload_bytes(self, channel: int) -> int:
        return CTRL_BYTES if channel == CHANNEL_CTRL else self.data_bytes

    @property
    def max_frame_bytes(self) -> int:
        """The longest board-to-host frame."""
        return 1 + max(CTRL_BYTES, self.data_bytes if self.outputs else 0, 1)


@dataclass(frozen=True)
class Status:
    done: bool
    stalled: bool
    link_error: bool

    @classmethod
    def from_byte(cls, value: int) -> "Status":
        return cls(bool(value & STATUS_DONE), bool(value & STATUS_STALLED),
                   bool(value & STATUS_LINK_ERROR))

    def to_byte(self) -> int:
        return ((STATUS_DONE if self.done else 0) | (STATUS_STALLED if self.stalled else 0)
                | (STATUS_LINK_ERROR if self.link_error else 0))

    def __str__(self):
        return (f"done={int(self.done)} stalled={int(self.stalled)} "
                f"link_error={int(self.link_error)}")


@dataclass(frozen=True)
class Readback:
    word: int


@dataclass(frozen=True)
class Output:
    port: str
    word: int


@dataclass(frozen=True)
class Credit:
    channel: int


def _encode_word(word: int, size: int, what: str) -> bytes:
    if not isinstance(word, int) or word < 0 or word >= 1 << (8 * size):
        raise ProtocolError(f"{what}: word {word!r} does not fit {8 * size} bits")
    return word.to_bytes(size, "little")


def encode_ctrl(word: int) -> bytes:
    """A host-to-board frame carrying one ctrl word."""
    return bytes([CHANNEL_CTRL]) + _encode_word(word, CTRL_BYTES, "ctrl")


def encode_input(layout: LinkLayout, port: str, word: int) -> bytes:
    """A host-to-board frame carrying one word for host input ``port``."""
    if word >= 1 << layout.data_width:
        raise ProtocolError(f"host input {port}: word {word:#x} does not fit {layout.data_width} bits")
    return bytes([layout.input_channel(port)]) + _encode_word(word, layout.data_bytes, f"host input {port}")


def encode_status_request() -> bytes:
    return bytes([CHANNEL_STATUS_REQUEST])


class _FrameDecoder:
    """Bytes in, in any chunks; events out, one per complete frame. A subclass says, from a
    frame's first byte, how long the frame is and which event its payload makes."""

    def __init__(self, layout: LinkLayout):
        self.layout = layout
        self._pending = bytearray()

    def _frame(self, head: int):
        """``(size in bytes, event from the little-endian payload)`` of a frame starting with ``head``."""
        raise NotImplementedError

    def feed(self, data: bytes) -> list:
        self._pending += data
        events = []
        while self._pending:
            size, event = self._frame(self._pending[0])
            if len(self._pending) < size:
                break
            payload = int.from_bytes(self._pending[1:size], "little")
            del self._pending[:size]
            events.append(event(payload))
        return events

    @property
    def partial(self) -> bool:
        """Bytes of an unfinished frame are waiting."""
        return bool(self._pending)


class BoardFrameDecoder(_FrameDecoder):
    """Board-to-host bytes in (any chunks), events out: Readback, Output, Credit, Status."""

    def _frame(self, head: int):
        if head == BOARD_STATUS:
            return 2, Status.from_byte
        if head & BOARD_CREDIT and head < BOARD_STATUS:
            channel = head & (BOARD_CREDIT - 1)
            if channel >= self.layout.channels:
                raise ProtocolError(f"board sent a credit for channel {channel:#04x}, "
                                    f"which does not exist")
            return 1, lambda _: Credit(channel)
        if head == BOARD_READBACK:
            return 1 + CTRL_BYTES, Readback
        if FIRST_PORT_CHANNEL <= head < FIRST_PORT_CHANNEL + len(self.layout.outputs):
            port = self.layout.outputs[head - FIRST_PORT_CHANNEL]
            return 1 + self.layout.data_bytes, lambda payload: Output(port, payload)
        raise ProtocolError(f"board sent frame byte {head:#04x}, which the protocol does not define")


@dataclass(frozen=True)
class HostFrame:
    channel: int
    word: int


@dataclass(frozen=True)
class StatusRequest:
    pass


class HostFrameDecoder(_FrameDecoder):
    """Host-to-board bytes in, events out (HostFrame, StatusRequest) or an unknown channel byte
    reported as ``ProtocolError`` in the event list (the board skips such a byte)."""

    def _frame(self, head: int):
        if head == CHANNEL_STATUS_REQUEST:
            return 1, lambda _: StatusRequest()
        if head >= self.layout.channels:
            return 1, lambda _: ProtocolError(f"unknown channel byte {head:#04x}")
        mask = (1 << 8 * CTRL_BYTES) - 1 if head == CHANNEL_CTRL else (1 << self.layout.data_width) - 1
        return 1 + self.layout.payload_bytes(head), lambda word: HostFrame(head, word & mask)
