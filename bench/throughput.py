"""Tokens per cycle of a stream queue in the Amaranth simulator, with an order check.

The source is always valid and sends a counting payload; the sink is always ready. After a
warm-up, the transfers at the output are counted over a fixed number of cycles. Every token that
leaves is checked against the count, so a queue that drops, duplicates, reorders or invents
tokens raises :class:`OrderError` instead of scoring well.

Works with anything that has an input and an output ``stream.Interface``: a component with
ports ``i``/``o`` (TokenQueue) or an ``amaranth.lib.fifo`` queue (via ``w_stream``/``r_stream``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from amaranth.sim import Simulator

__all__ = ["OrderError", "Throughput", "measure", "stream_ends"]


class OrderError(AssertionError):
    """The queue under test delivered a token other than the next one sent."""


@dataclass
class Throughput:
    """Output transfers counted over ``cycles`` cycles after ``warmup`` cycles.

    ``latency`` is the number of cycles from the first input transfer to the first output
    transfer (None if nothing came out).
    """

    transfers: int
    cycles: int
    warmup: int
    latency: int | None

    @property
    def tokens_per_cycle(self) -> float:
        return self.transfers / self.cycles

    def to_dict(self) -> dict:
        return {**asdict(self), "tokens_per_cycle": self.tokens_per_cycle}


def stream_ends(dut):
    """Return the (input, output) stream interfaces of ``dut``, whichever convention it uses."""
    if hasattr(dut, "w_stream") and hasattr(dut, "r_stream"):
        return dut.w_stream, dut.r_stream
    return dut.i, dut.o


def measure(dut, *, cycles: int = 256, warmup: int = 32) -> Throughput:
    """Simulate ``dut`` with a greedy source and sink; return its measured throughput."""
    source, sink = stream_ends(dut)
    mask = (1 << len(sink.payload)) - 1
    outcome = {}

    async def testbench(ctx):
        ctx.set(source.valid, 1)
        ctx.set(sink.ready, 1)
        ctx.set(source.payload, 0)
        sent = received = counted = 0
        first_in = first_out = None
        for cycle in range(warmup + cycles):
            _, _, took, gave, data = await ctx.tick().sample(source.ready, sink.valid,
                                                            sink.payload)
            sent += took
            first_in = cycle if first_in is None and took else first_in
            if gave:
                _check_token(cycle, data, received, sent, mask)
                received += 1
                counted += cycle >= warmup
                first_out = cycle if first_out is None else first_out
            ctx.set(source.payload, sent & mask)
        latency = None if first_out is None else first_out - first_in
        outcome["result"] = Throughput(counted, cycles, warmup, latency)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    return outcome["result"]


def _check_token(cycle: int, data: int, received: int, sent: int, mask: int) -> None:
    if received >= sent:
        raise OrderError(f"cycle {cycle}: token {received} delivered but only {sent} were sent")
    if data != received & mask:
        raise OrderError(f"cycle {cycle}: expected token {received & mask:#x}, got {data:#x} "
                         f"(dropped, duplicated or reordered)")
