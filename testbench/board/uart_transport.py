"""A host link transport for cocotb: bit-bangs the board top's ``uart_rx`` pin and decodes its
``uart_tx`` pin in a background coroutine, so board/host.py drives the Verilated board top
exactly as it drives a real board on a serial port."""

import random

import cocotb
from cocotb.triggers import ClockCycles, Event, FallingEdge, First

from board.host import TransportTimeout

__all__ = ["CocotbUartTransport"]


class CocotbUartTransport:
    """``write`` sends 8N1 frames on ``rx_pin`` at ``clocks_per_bit``, after a random idle of up to
    ``max_idle`` cycles (with probability ``idle``) before each write call (the host driver writes
    one frame per call); ``read`` returns what the receiver has decoded from ``tx_pin``, waiting
    at most ``timeout_cycles`` for the first byte."""

    def __init__(self, clk, rx_pin, tx_pin, clocks_per_bit: int, *, rng: random.Random | None = None,
                 idle: float = 0.0, max_idle: int = 0, timeout_cycles: int = 1_000_000):
        self.clk, self.rx_pin, self.tx_pin = clk, rx_pin, tx_pin
        self.clocks_per_bit = clocks_per_bit
        self.rng, self.idle, self.max_idle = rng or random.Random(0), idle, max_idle
        self.timeout_cycles = timeout_cycles
        self.bytes_written = 0
        self.framing_errors = 0
        self._received = bytearray()
        self._arrived = Event()
        self.rx_pin.value = 1
        self._receiver = cocotb.start_soon(self._receive())

    async def write(self, data: bytes) -> None:
        if self.max_idle and self.rng.random() < self.idle:
            await ClockCycles(self.clk, self.rng.randint(1, self.max_idle))
        n = self.clocks_per_bit
        for byte in data:
            for bit in [0] + [(byte >> k) & 1 for k in range(8)] + [1]:
                self.rx_pin.value = bit
                await ClockCycles(self.clk, n)
            self.bytes_written += 1

    async def read(self) -> bytes:
        if not self._received:
            self._arrived.clear()
            await First(self._arrived.wait(), ClockCycles(self.clk, self.timeout_cycles))
            if not self._received:
                raise TransportTimeout(f"nothing arrived on uart_tx for {self.timeout_cycles} cycles")
        data = bytes(self._received)
        self._received.clear()
        return data

    def stop(self):
        self._receiver.cancel()

    async def _receive(self):
        n = self.clocks_per_bit
        while True:
            await FallingEdge(self.tx_pin)
            # tx changes just after a rising edge: n // 2 edges later is the start bit's middle.
            await ClockCycles(self.clk, n // 2)
            if int(self.tx_pin.value) != 0:
                continue
            byte = 0
            for k in range(8):
                await ClockCycles(self.clk, n)
                byte |= int(self.tx_pin.value) << k
            await ClockCycles(self.clk, n)
            if int(self.tx_pin.value) != 1:
                self.framing_errors += 1
                continue
            self._received.append(byte)
            self._arrived.set()
