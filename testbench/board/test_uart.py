# amaranth: UnusedElaboratable=no
"""UartRx and UartTx in the Amaranth simulator, against the 8N1 line model (uart_model.py)."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.sim import Simulator

from hw.params import ParameterError
from hw.uart import UartRx, UartTx
from rivulet.sim.seeds import seeds_for

from .uart_model import decode_line, frame_bits

DIVISORS = [4, 5, 8, 13]


def _simulate(dut, *testbenches):
    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    for index, bench in enumerate(testbenches):
        simulator.add_testbench(bench, background=index > 0)
    simulator.run()


async def _send_levels(ctx, pin, levels_per_cycle):
    for level in levels_per_cycle:
        ctx.set(pin, level)
        await ctx.tick()


def _line(frames, n, rng, *, stretch: float = 1.0, max_idle: int = 30) -> list[int]:
    """Per-cycle levels: each frame's bits ``n * stretch`` cycles long (rounded as time goes on,
    a transmitter whose clock is off by ``stretch``), random idle between frames."""
    levels = [1] * 5
    for bits in frames:
        levels += [1] * rng.randint(0, max_idle)
        start, elapsed = len(levels), 0.0
        for bit in bits:
            elapsed += n * stretch
            levels += [bit] * (start + round(elapsed) - len(levels))
    return levels + [1] * (3 * n)


def _receive(n, levels):
    dut = UartRx(n)
    got, flags = [], {}

    async def drive(ctx):
        await _send_levels(ctx, dut.rx, levels)
        flags["framing_error"] = ctx.get(dut.framing_error)
        flags["overrun"] = ctx.get(dut.overrun)

    async def take(ctx):
        ctx.set(dut.o.ready, 1)
        async for _clk, _rst, valid, payload in ctx.tick().sample(dut.o.valid, dut.o.payload):
            if valid:
                got.append(payload)

    _simulate(dut, drive, take)
    return got, flags


@pytest.mark.parametrize("n", DIVISORS)
def test_rx_receives_random_bytes(n):
    (seed,) = seeds_for(f"uart:rx:{n}", count=1)
    print(f"seed {seed}")
    rng = random.Random(seed)
    sent = [rng.getrandbits(8) for _ in range(40)] + [0x00, 0xFF, 0x55, 0xAA]
    got, flags = _receive(n, _line([frame_bits(byte) for byte in sent], n, rng))
    assert got == sent
    assert flags == {"framing_error": 0, "overrun": 0}


@pytest.mark.parametrize("stretch", [0.98, 1.02])
def test_rx_tolerates_two_percent_baud_error(stretch):
    (seed,) = seeds_for(f"uart:rx-error:{stretch}", count=1)
    print(f"seed {seed}")
    rng = random.Random(seed)
    n = 16
    sent = [rng.getrandbits(8) for _ in range(30)]
    got, flags = _receive(n, _line([frame_bits(byte) for byte in sent], n, rng, stretch=stretch, max_idle=0))
    assert got == sent
    assert not flags["framing_error"]


@pytest.mark.parametrize("n", [4, 8])
def test_rx_drops_a_frame_with_a_low_stop_bit_and_flags_it(n):
    rng = random.Random(n)
    frames = [frame_bits(0x3C), frame_bits(0x81, stop=0), frame_bits(0x7E)]
    got, flags = _receive(n, _line(frames, n, rng))
    assert got == [0x3C, 0x7E]
    assert flags["framing_error"] == 1


@pytest.mark.parametrize("n", [4, 8, 13])
def test_rx_ignores_a_glitch_shorter_than_half_a_bit(n):
    glitch = max(1, n // 2 - 2)      # low, then high again before the start bit's middle
    levels = [1] * 10 + [0] * glitch + [1] * (3 * n)
    levels += _line([frame_bits(0xA5)], n, random.Random(0), max_idle=0)
    got, flags = _receive(n, levels)
    assert got == [0xA5]
    assert flags == {"framing_error": 0, "overrun": 0}


def test_rx_reports_overrun_when_a_byte_is_not_taken():
    n = 4
    dut = UartRx(n)
    levels = _line([frame_bits(1), frame_bits(2)], n, random.Random(0), max_idle=0)
    result = {}

    async def drive(ctx):
        await _send_levels(ctx, dut.rx, levels)
        result["overrun"] = ctx.get(dut.overrun)
        result["payload"] = ctx.get(dut.o.payload)

    _simulate(dut, drive)
    assert result == {"overrun": 1, "payload": 2}


@pytest.mark.parametrize("n", DIVISORS)
def test_tx_sends_random_bytes_with_exact_bit_times(n):
    (seed,) = seeds_for(f"uart:tx:{n}", count=1)
    print(f"seed {seed}")
    rng = random.Random(seed)
    sent = [rng.getrandbits(8) for _ in range(30)]
    dut = UartTx(n)
    levels = []
    state = {"done": False}

    async def feed(ctx):
        for byte in sent:
            for _ in range(rng.choice([0, 0, rng.randint(1, 25)])):
                await ctx.tick()
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload, byte)
            await ctx.tick().until(dut.i.ready)
            ctx.set(dut.i.valid, 0)
        await ctx.tick().repeat(12 * n)
        state["done"] = True

    async def watch(ctx):
        async for _clk, _rst, tx in ctx.tick().sample(dut.tx):
            levels.append(tx)

    _simulate(dut, feed, watch)
    assert decode_line(levels, n) == sent


def test_tx_back_to_back_bytes_take_ten_bits_each():
    n = 5
    dut = UartTx(n)
    sent = [0x00, 0xFF, 0x12, 0x00]
    starts = []

    async def feed(ctx):
        ctx.set(dut.i.valid, 1)
        for byte in sent:
            ctx.set(dut.i.payload, byte)
            await ctx.tick().until(dut.i.ready)
        ctx.set(dut.i.valid, 0)
        await ctx.tick().repeat(11 * n)

    async def watch(ctx):
        previous, cycle = 1, 0
        async for _clk, _rst, tx in ctx.tick().sample(dut.tx):
            if previous == 1 and tx == 0 and (not starts or cycle - starts[-1] >= 10 * n):
                starts.append(cycle)
            previous, cycle = tx, cycle + 1

    _simulate(dut, feed, watch)
    assert [b - a for a, b in zip(starts, starts[1:], strict=False)] == [10 * n] * (len(sent) - 1)


@pytest.mark.parametrize("n", [4, 7])
def test_tx_to_rx_loopback(n):
    (seed,) = seeds_for(f"uart:loop:{n}", count=1)
    print(f"seed {seed}")
    rng = random.Random(seed)
    sent = [rng.getrandbits(8) for _ in range(25)]
    m = Module()
    m.submodules.tx = tx = UartTx(n)
    m.submodules.rx = rx = UartRx(n)
    m.d.comb += rx.rx.eq(tx.tx)
    got = []

    async def feed(ctx):
        for byte in sent:
            ctx.set(tx.i.valid, 1)
            ctx.set(tx.i.payload, byte)
            await ctx.tick().until(tx.i.ready)
            ctx.set(tx.i.valid, 0)
        await ctx.tick().repeat(12 * n)

    async def take(ctx):
        ctx.set(rx.o.ready, 1)
        async for _clk, _rst, valid, payload in ctx.tick().sample(rx.o.valid, rx.o.payload):
            if valid:
                got.append(payload)

    _simulate(m, feed, take)
    assert got == sent


def test_too_few_clocks_per_bit_are_refused():
    with pytest.raises(ParameterError, match="clocks_per_bit=3"):
        UartRx(3)
    with pytest.raises(ParameterError, match="clocks_per_bit=2"):
        UartTx(2)
