"""The host side of the link: one driver, two transports (a serial port, the simulated board).

The driver (:class:`HostLink`) only ever awaits its transport's ``write`` and ``read``; it uses
no event loop of its own, so the very same coroutines run under cocotb against the Verilated
board top and, with ``asyncio.run``, against a real board on a serial port::

    import asyncio
    from board.host import HostLink, SerialTransport

    async def main():
        with SerialTransport("/dev/ttyUSB1", 115_200) as port:
            result = await HostLink(port, compiled.spec).run_program(compiled)
        print(result.outputs)

    asyncio.run(main())
"""

from typing import Protocol

from rsn.readout import RtlResult, counter_reads, parse_readback, used_tiles

from .protocol import (
    CHANNEL_CTRL,
    DEFAULT_CREDITS,
    BoardFrameDecoder,
    Credit,
    LinkLayout,
    Output,
    ProtocolError,
    Readback,
    Status,
    encode_ctrl,
    encode_input,
    encode_status_request,
)

__all__ = ["Transport", "TransportTimeout", "SerialTransport", "HostLink", "LinkError", "FabricStalled",
           "BoardProtocolError"]


class TransportTimeout(TimeoutError):
    """Nothing arrived from the board in time."""


class LinkError(RuntimeError):
    """The board reports a link error: a frame overflowed its channel's credits, an unknown
    channel byte arrived, or its UART saw a framing error. Its results cannot be trusted."""


class FabricStalled(RuntimeError):
    """The fabric's watchdog fired: a unit is busy and nothing moves."""


class BoardProtocolError(RuntimeError):
    """The board sent something the protocol does not allow."""


class Transport(Protocol):
    """A byte pipe to a board."""

    async def write(self, data: bytes) -> None:
        """Send ``data`` (all of it)."""

    async def read(self) -> bytes:
        """Whatever has arrived, at least one byte; raise :class:`TransportTimeout` if nothing
        arrives in time."""


class SerialTransport:
    """A real board on a serial port, through pyserial (imported only when used). ``port`` is a
    device name or a pyserial URL (``loop://`` loops back, for tests)."""

    def __init__(self, port: str, baud: int = 115_200, *, timeout: float = 2.0):
        try:
            import serial
        except ImportError as error:
            raise ImportError("SerialTransport needs pyserial (pip install pyserial)") from error
        self.port, self.baud, self.timeout = port, baud, timeout
        try:
            self._serial = serial.serial_for_url(port, baudrate=baud, timeout=timeout,
                                                 write_timeout=timeout)
        except serial.SerialException as error:
            raise OSError(f"cannot open serial port {port} at {baud} baud: {error}") from error
        self._serial.reset_input_buffer()

    async def write(self, data: bytes) -> None:
        self._serial.write(data)
        self._serial.flush()

    async def read(self) -> bytes:
        first = self._serial.read(1)
        if not first:
            raise TransportTimeout(f"nothing arrived on {self.port} for {self.timeout} s "
                                   f"(is the board programmed, and the baud rate {self.baud}?)")
        waiting = self._serial.in_waiting
        return first + (self._serial.read(waiting) if waiting else b"")

    def close(self):
        self._serial.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class HostLink:
    """Drive a fabric through a :class:`Transport` with the host link protocol.

    The host keeps ``credits`` per host-to-board channel, spends one per frame and waits (by
    reading) when a channel it needs has none left. Everything the board sends is collected as
    it arrives: host outputs in :attr:`outputs`, read-back words in :attr:`readback`, the latest
    status in :attr:`status`.
    """

    def __init__(self, transport: Transport, spec, *, credits: int = DEFAULT_CREDITS):
        self.transport, self.spec, self.initial_credits = transport, spec, credits
        self.layout = LinkLayout.for_spec(spec)
        self.decoder = BoardFrameDecoder(self.layout)
        self.credits = [credits] * self.layout.channels
        self.outputs: dict[str, list[int]] = {name: [] for name in self.layout.outputs}
        self.readback: list[int] = []
        self.status: Status | None = None
        self.frames_sent = 0
        self.bytes_received = 0

    # Receiving --------------------------------------------------------------------------------

    async def poll(self) -> None:
        """Wait for bytes from the board and take in every complete frame."""
        data = await self.transport.read()
        self.bytes_received += len(data)
        try:
            events = self.decoder.feed(data)
        except ProtocolError as error:
            raise BoardProtocolError(f"{error} ({self._progress()})") from None
        for event in events:
            if isinstance(event, Credit):
                self.credits[event.channel] += 1
                if self.credits[event.channel] > self.initial_credits:
                    raise BoardProtocolError(
                        f"the board returned more credits than were spent on channel "
                        f"{self.layout.channel_name(event.channel)}")
            elif isinstance(event, Output):
                self.outputs[event.port].append(event.word)
            elif isinstance(event, Readback):
                self.readback.append(event.word)
            elif isinstance(event, Status):
                self.status = event
                if event.link_error:
                    raise LinkError(f"the board reports a link error (status {event}): a frame "
                                    f"overflowed its credits, a channel byte was unknown or the UART "
                                    f"saw a framing error; reset the board ({self._progress()})")
                if event.stalled:
                    raise FabricStalled(f"the fabric's watchdog fired (status {event}): a unit waits "
                                        f"and nothing moves ({self._progress()})")

    def _progress(self) -> str:
        outputs = ", ".join(f"{name} {len(words)}" for name, words in self.outputs.items())
        return (f"status {self.status or 'not yet received'}, {self.frames_sent} frames sent, "
                f"outputs: {outputs or 'none'}, readback {len(self.readback)}")

    # Sending ----------------------------------------------------------------------------------

    async def _send(self, channel: int, frame: bytes) -> None:
        while self.credits[channel] == 0:
            await self.poll()
        self.credits[channel] -= 1
        self.frames_sent += 1
        await self.transport.write(frame)

    async def send_ctrl(self, words) -> None:
        """Send ctrl words (configuration, micro-ops, READ packets) under credits."""
        for word in words:
            await self._send(CHANNEL_CTRL, encode_ctrl(word))

    async def stream(self, ctrl=(), inputs: dict[str, list[int]] | None = None) -> None:
        """Send ctrl words and host input words, interleaved round robin over the channels that
        have both words left and credits, reading from the board whenever none can send."""
        queues = {CHANNEL_CTRL: [encode_ctrl(word) for word in ctrl]}
        for port, words in (inputs or {}).items():
            channel = self.layout.input_channel(port)
            queues[channel] = [encode_input(self.layout, port, word) for word in words]
        positions = dict.fromkeys(queues, 0)
        while any(positions[channel] < len(frames) for channel, frames in queues.items()):
            sent = False
            for channel, frames in queues.items():
                if positions[channel] < len(frames) and self.credits[channel]:
                    await self._send(channel, frames[positions[channel]])
                    positions[channel] += 1
                    sent = True
            if not sent:
                await self.poll()

    async def request_status(self) -> Status:
        """Ask for the status and wait for the answer."""
        self.status = None
        await self.transport.write(encode_status_request())
        while self.status is None:
            await self.poll()
        return self.status

    async def image_taken(self) -> None:
        """Wait until the fabric has taken every ctrl word sent (every ctrl credit back), then ask
        for a fresh status. ``done`` counts only once the whole image is inside the fabric: a
        program of open micro-ops, which finish at once, shows ``done`` between its packets
        (rsn.fabric.Fabric). The status asked for now is sampled many UART bytes, so far more than
        DONE_LATENCY cycles, after the last word went in."""
        while self.credits[CHANNEL_CTRL] < self.initial_credits:
            await self.poll()
        await self.request_status()

    async def wait_done(self, expected_outputs: dict[str, int] | None = None) -> None:
        """Wait until the board says done and every expected host output word has arrived."""
        expected = expected_outputs or {}
        for port in expected:
            if port not in self.outputs:
                raise ValueError(f"no host output port {port!r}; outputs are {list(self.outputs)}")
        while not (self.status is not None and self.status.done
                   and all(len(self.outputs[port]) >= count for port, count in expected.items())):
            await self.poll()

    async def read_registers(self, read_packets: list[int], count: int) -> list[int]:
        """Send READ packets and return the ``count`` words they read back."""
        first = len(self.readback)
        await self.send_ctrl(read_packets)
        while len(self.readback) < first + count:
            await self.poll()
        return self.readback[first:first + count]

    async def run_program(self, compiled) -> RtlResult:
        """Load and run a compiled program, then read its counters: what the simulation
        harness's ``run_on_rtl`` returns (``done_cycle`` is not visible over the link)."""
        await self.stream(compiled.image, compiled.program.host_inputs)
        await self.image_taken()
        await self.wait_done(compiled.host_outputs)
        reads, layout = counter_reads(compiled.spec, used_tiles(compiled))
        readback = await self.read_registers(reads, sum(count for _, count in layout))
        outputs = {port: list(words) for port, words in self.outputs.items()}
        return parse_readback(outputs, readback, layout)
