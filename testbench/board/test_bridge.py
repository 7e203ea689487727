# amaranth: UnusedElaboratable=no
"""HostBridge in the Amaranth simulator, against a model of the host link protocol written from
its specification (docs/host-link.md), not from the RTL: frames, per-channel FIFOs of
``credits`` words, one credit back per word handed to the fabric, overflow and unknown channels
as a sticky link error, status frames on every change and on request, whole frames out."""

import random

import pytest
from amaranth.sim import Simulator

from board.bridge import HostBridge
from rivulet.sim.seeds import seeds_for
from rsn.fabric_spec import parse_fabric

from .uart_model import frame_bits

N = 4               # clocks per bit
CREDITS = 3
WIDTH = 16          # host-port words: two bytes on the wire
SPEC = parse_fabric({
    "rows": 1, "cols": 2, "tiles": ["alu alu"], "data_width": WIDTH,
    "host_ports": [
        {"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
        {"name": "out0", "tile": [0, 1], "side": "E", "direction": "out"},
        {"name": "in1", "tile": [0, 0], "side": "N", "direction": "in"},
    ],
}, "bridge test fabric")

# The specification, restated: host -> board channels and their payload sizes.
CHANNELS = {0x00: ("ctrl", 4, 32), 0x01: ("in0", 2, WIDTH), 0x02: ("in1", 2, WIDTH)}
STATUS_REQUEST = 0x7F


def host_frame(channel: int, word: int) -> bytes:
    size = CHANNELS[channel][1]
    return bytes([channel]) + word.to_bytes(size, "little")


def decode_board_frames(data: bytes, *, partial: bool = False) -> list[tuple]:
    """Board -> host: 0x00 + 4 bytes readback, 0x01 + 2 bytes out0, 0x40|ch credit,
    0x80 + status byte. Anything else is a failure, and so is a frame cut short unless
    ``partial`` (the capture is still going on)."""
    frames, at = [], 0
    while at < len(data):
        head = data[at]
        size = {0x00: 5, 0x01: 3, 0x80: 2}.get(head, 1)
        if partial and at + size > len(data):
            break
        if head == 0x00:
            frames.append(("readback", int.from_bytes(data[at + 1:at + 5], "little")))
            at += 5
        elif head == 0x01:
            frames.append(("out0", int.from_bytes(data[at + 1:at + 3], "little")))
            at += 3
        elif 0x40 <= head < 0x40 + len(CHANNELS):
            frames.append(("credit", head - 0x40))
            at += 1
        elif head == 0x80:
            frames.append(("status", data[at + 1]))
            at += 2
        else:
            raise AssertionError(f"board sent undefined frame byte {head:#04x} at byte {at}")
        if at > len(data):
            raise AssertionError(f"the last frame {frames[-1]} is cut short")
    return frames


class BridgeModel:
    """What the bridge must do with the host's bytes while the fabric takes nothing."""

    def __init__(self):
        self.fifos = {channel: [] for channel in CHANNELS}
        self.link_error = False

    def host_bytes(self, data: bytes):
        at = 0
        while at < len(data):
            head = data[at]
            if head == STATUS_REQUEST:
                at += 1
            elif head in CHANNELS:
                size = CHANNELS[head][1]
                word = int.from_bytes(data[at + 1:at + 1 + size], "little")
                at += 1 + size
                if len(self.fifos[head]) < CREDITS:
                    self.fifos[head].append(word)
                else:
                    self.link_error = True        # more frames than credits: dropped, reported
            else:
                self.link_error = True            # unknown channel byte: skipped, reported
                at += 1


class Harness:
    """The bridge with a bit-banging host, a line decoder and scriptable fabric-side ports."""

    def __init__(self, rng: random.Random):
        self.dut = HostBridge(SPEC, clocks_per_bit=N, credits=CREDITS)
        self.rng = rng
        self.board = bytearray()        # bytes decoded from uart_tx so far
        self.taken = {channel: [] for channel in CHANNELS}
        self.open = False               # the fabric side takes words
        self.ready_probability = 1.0
        self.simulator = Simulator(self.dut)
        self.simulator.add_clock(1e-8)
        self.simulator.add_testbench(self._watch_line, background=True)
        for channel, (name, _size, _width) in CHANNELS.items():
            self.simulator.add_testbench(self._sink(channel, getattr(self.dut, name)), background=True)

    async def _watch_line(self, ctx):
        """Decode uart_tx as it goes: a fall starts a frame, bits are sampled at their middles."""
        cycle, start, bits = 0, None, []
        async for _clk, _rst, tx in ctx.tick().sample(self.dut.uart_tx):
            if start is None:
                if tx == 0:
                    start = cycle
            elif (cycle - start - N // 2) % N == 0 and cycle - start >= N // 2:
                bits.append(tx)
                if len(bits) == 10:
                    assert bits[0] == 0 and bits[9] == 1, f"bad frame from the board at cycle {start}"
                    self.board.append(sum(bit << k for k, bit in enumerate(bits[1:9])))
                    start, bits = None, []
            cycle += 1

    def _sink(self, channel, port):
        async def sink(ctx):
            async for _clk, _rst, valid, ready, payload in ctx.tick().sample(port.valid, port.ready,
                                                                              port.payload):
                if valid and ready:
                    self.taken[channel].append(payload)
                ctx.set(port.ready, self.open and self.rng.random() < self.ready_probability)
        return sink

    async def send(self, ctx, data: bytes, *, max_idle: int = 0):
        for byte in data:
            for bit in frame_bits(byte):
                ctx.set(self.dut.uart_rx, bit)
                await ctx.tick().repeat(N)
            if max_idle:
                await ctx.tick().repeat(self.rng.randint(0, max_idle) or 1)

    def frames(self, *, partial: bool = False) -> list[tuple]:
        return decode_board_frames(bytes(self.board), partial=partial)

    def run(self, testbench):
        self.simulator.add_testbench(testbench)
        self.simulator.run()


@pytest.mark.parametrize("index", range(2))
def test_overflow_and_unknown_channels_are_link_errors(index):
    """The fabric takes nothing while the host sends random frames, some past the credits and
    some on unknown channels; then the fabric drains the FIFOs."""
    (seed,) = seeds_for(f"bridge:overflow:{index}", count=1)
    print(f"seed {seed}")
    rng = random.Random(seed)
    harness = Harness(rng)
    model = BridgeModel()
    script = bytearray()
    for _ in range(rng.randint(4, 12)):
        if rng.random() < 0.1 * index:
            script += bytes([rng.choice([0x03, 0x3E, 0x40, 0x81, 0xFF])])
        else:
            channel = rng.choice(list(CHANNELS))
            script += host_frame(channel, rng.getrandbits(CHANNELS[channel][2]))
    model.host_bytes(bytes(script))
    seen = {}

    async def host(ctx):
        await ctx.tick().repeat(5)
        await harness.send(ctx, bytes(script), max_idle=3)
        await harness.send(ctx, bytes([STATUS_REQUEST]))
        await ctx.tick().repeat(30 * N)
        seen["link_error"] = ctx.get(harness.dut.link_error)
        harness.open, harness.ready_probability = True, 0.5
        await ctx.tick().repeat(8 * CREDITS * len(CHANNELS) * 10 * N)

    harness.run(host)
    frames = harness.frames()
    assert seen["link_error"] == model.link_error
    assert [value for kind, value in frames if kind == "status"][-1] == (0b100 if model.link_error else 0)
    for channel in CHANNELS:
        assert harness.taken[channel] == model.fifos[channel], f"channel {channel}"
        returned = sum(1 for kind, value in frames if kind == "credit" and value == channel)
        assert returned == len(model.fifos[channel]), f"credits of channel {channel}"


def test_one_frame_past_the_credits_is_reported():
    rng = random.Random(1)
    harness = Harness(rng)
    seen = {}

    async def host(ctx):
        await ctx.tick().repeat(5)
        for word in range(CREDITS):
            await harness.send(ctx, host_frame(0x01, word))
        await ctx.tick().repeat(4 * N)
        seen["before"] = ctx.get(harness.dut.link_error)
        await harness.send(ctx, host_frame(0x01, 0xBEEF))
        await ctx.tick().repeat(4 * N)
        seen["after"] = ctx.get(harness.dut.link_error)
        await ctx.tick().repeat(30 * N)

    harness.run(host)
    assert seen == {"before": 0, "after": 1}
    assert harness.frames() == [("status", 0b100)]


@pytest.mark.parametrize("index", range(2))
def test_host_within_credits_loses_nothing(index):
    """A host that spends credits only as they come back, random fabric back-pressure, read-back
    and host-output words and status changes competing for the transmitter."""
    (seed,) = seeds_for(f"bridge:credits:{index}", count=1)
    print(f"seed {seed}")
    rng = random.Random(seed)
    harness = Harness(rng)
    harness.open, harness.ready_probability = True, rng.choice([0.05, 0.3, 1.0])
    plan = {channel: [rng.getrandbits(CHANNELS[channel][2]) for _ in range(rng.randint(4, 12))]
            for channel in CHANNELS}
    readback = [rng.getrandbits(32) for _ in range(rng.randint(1, 6))]
    outputs = [rng.getrandbits(WIDTH) for _ in range(rng.randint(1, 6))]
    status_changes = [(rng.randint(200, 4000), rng.getrandbits(2)) for _ in range(3)]
    dut = harness.dut
    finished = {}

    def returned(channel):
        return sum(1 for kind, value in harness.frames(partial=True) if kind == "credit" and value == channel)

    async def host(ctx):
        await ctx.tick().repeat(5)
        sent = dict.fromkeys(CHANNELS, 0)
        while any(sent[channel] < len(words) for channel, words in plan.items()):
            ready = [channel for channel, words in plan.items()
                     if sent[channel] < len(words) and sent[channel] - returned(channel) < CREDITS]
            if not ready:
                await ctx.tick().repeat(N)
                continue
            channel = rng.choice(ready)
            await harness.send(ctx, host_frame(channel, plan[channel][sent[channel]]),
                               max_idle=rng.choice([0, 5]))
            sent[channel] += 1
        while any(len(harness.taken[channel]) < len(words) for channel, words in plan.items()):
            await ctx.tick().repeat(N)
        await ctx.tick().repeat(60 * 10 * N)
        finished["link_error"] = ctx.get(dut.link_error)

    def producer(port, words):
        async def produce(ctx):
            await _produce(ctx, port, words)
        return produce

    async def _produce(ctx, port, words):
        for word in words:
            await ctx.tick().repeat(rng.randint(1, 300))     # repeat(0) is refused
            ctx.set(port.valid, 1)
            ctx.set(port.payload, word)
            await ctx.tick().until(port.ready)
            ctx.set(port.valid, 0)

    async def status(ctx):
        cycle = 0
        for at, value in sorted(status_changes):
            if at > cycle:                                  # two changes may share a cycle
                await ctx.tick().repeat(at - cycle)
            cycle = at
            ctx.set(dut.done, value & 1)
            ctx.set(dut.stalled, value >> 1)

    harness.simulator.add_testbench(producer(dut.readback, readback), background=True)
    harness.simulator.add_testbench(producer(dut.out0, outputs), background=True)
    harness.simulator.add_testbench(status, background=True)
    harness.run(host)

    frames = harness.frames()
    assert finished["link_error"] == 0
    for channel, words in plan.items():
        assert harness.taken[channel] == words, f"channel {channel}"
        assert sum(1 for kind, value in frames if kind == "credit" and value == channel) == len(words)
    assert [value for kind, value in frames if kind == "readback"] == readback
    assert [value for kind, value in frames if kind == "out0"] == outputs
    statuses = [value for kind, value in frames if kind == "status"]
    if any(value for _, value in status_changes):
        assert statuses and statuses[-1] == sorted(status_changes)[-1][1]
    else:
        assert statuses == [], "the status never left its reset value: no status frame is due"
    assert all(a != b for a, b in zip(statuses, statuses[1:], strict=False)), \
        f"a status frame without a change (and without a request): {statuses}"
