"""cocotb bench of the conformance build: every job (one case of one vector file) under every
stall profile and seed, with the repo's drivers and protocol monitors (rivulet.sim.streams).

A failing run is recorded, not raised, so that the runner can count passed and failed cases;
the job list comes from :mod:`samflow.rtl_runner` through the file named in ``SAMFLOW_JOBS``.
"""

import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from rivulet.sim.streams import (
    PROFILES,
    NoProgressError,
    ProtocolError,
    SinkDriver,
    SourceDriver,
    StreamBench,
    StreamPort,
)
from samflow.rtl_jobs import RECORDED_SCHEDULE
from samflow.tokens import decode

TAIL_CYCLES = 16        # cycles kept running after the last expected token, to catch extra ones


class ScheduledSource:
    """Offers each token from the cycle the case's recorded schedule says it arrived."""

    def __init__(self, port: StreamPort, tokens, arrivals):
        self.port, self.tokens, self.arrivals = port, list(tokens), arrivals
        self.sent = 0

    @property
    def done(self):
        return self.sent == len(self.tokens)

    def drive(self, cycle):
        if not self.done and self.arrivals[self.sent] <= cycle:
            return {self.port.valid: 1, self.port.payload: self.tokens[self.sent]}
        return {self.port.valid: 0, self.port.payload: 0}

    def observe(self, transferred):
        self.sent += bool(transferred)


class ExpectedTokens:
    """Collects each output's tokens; complete once every output has as many as the case."""

    def __init__(self, expected):
        self.expected = expected
        self.got = {port: [] for port in expected}

    def on_cycle(self, cycle, sample, transfers):
        for port, payload in transfers.items():
            if port in self.got:
                self.got[port].append(payload)

    def complete(self):
        return all(len(self.got[port]) >= len(tokens) for port, tokens in self.expected.items())

    def finish(self):
        pass

    def progress(self):
        return ", ".join(f"{port} {len(self.got[port])}/{len(tokens)}"
                         for port, tokens in self.expected.items())


def _arrivals(schedule, port):
    return [cycle for cycle, ports in enumerate(schedule) for name in ports if name == port]


def _difference(job, got, width):
    def shown(port, tokens):
        return [decode(t, width, repsig=port in job["repsig"]) for t in tokens]
    for port, expected in job["outputs"].items():
        if got[port] != expected:
            at = next((k for k, (a, b) in enumerate(zip(expected, got[port], strict=False)) if a != b),
                      min(len(expected), len(got[port])))
            return (f"{port} differs at token {at}: expected {shown(port, expected[at:at + 4])}, "
                    f"got {shown(port, got[port][at:at + 4])} ({len(expected)} vs {len(got[port])} tokens)")
    return ""


async def _run(dut, job, profile_name, seed, width, all_inputs):
    for name in all_inputs:
        getattr(dut, name).value = 0
    for name, value in job["config"].items():
        getattr(dut, name).value = value
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    for bank, words in job["loads"].items():
        for address, word in enumerate(words):
            getattr(dut, f"{bank}__we").value = 1
            getattr(dut, f"{bank}__waddr").value = address
            getattr(dut, f"{bank}__wdata").value = word
            await RisingEdge(dut.clk)
        getattr(dut, f"{bank}__we").value = 0

    rng = random.Random(seed)
    bits = width + 2
    sources = []
    for prefix, tokens in job["inputs"].items():
        port = StreamPort(prefix, True, bits)
        if profile_name == RECORDED_SCHEDULE:
            sources.append(ScheduledSource(port, tokens, _arrivals(job["schedule"], prefix)))
        else:
            sources.append(SourceDriver(port, tokens, PROFILES[profile_name].idle, rng))
    backpressure = PROFILES["no_stall" if profile_name == RECORDED_SCHEDULE else profile_name].backpressure
    sinks = [SinkDriver(StreamPort(prefix, False, bits), backpressure, rng)
             for prefix in [*job["outputs"], *job["unrecorded"]]]
    checker = ExpectedTokens(job["outputs"])
    bench = StreamBench([s.port for s in sources] + [s.port for s in sinks], sources, sinks, checker)
    handles = {name: getattr(dut, name) for name in {*bench.sampled, *bench.driven}}
    tokens = sum(len(t) for t in job["inputs"].values()) + sum(len(t) for t in job["outputs"].values())
    max_cycles = 40 * tokens + 1000
    tail = None
    for cycle in range(max_cycles):
        for name, value in bench.drive(cycle).items():
            handles[name].value = value
        await ReadOnly()
        bench.observe(cycle, {name: int(handles[name].value) for name in bench.sampled})
        await RisingEdge(dut.clk)
        if tail is None and bench.finished:
            tail = TAIL_CYCLES
            completed = cycle + 1
        elif tail is not None:
            tail -= 1
            if tail == 0:
                break
    else:
        raise bench.no_progress(max_cycles)
    for sink in sinks:
        handles[sink.port.ready].value = 0
    difference = _difference(job, checker.got, width)
    for bank, expected in job["reads"].items():
        got = []
        for address in range(len(expected)):
            getattr(dut, f"{bank}__raddr").value = address
            await ReadOnly()
            got.append(int(getattr(dut, f"{bank}__rdata").value))
            await RisingEdge(dut.clk)
        if got != expected and not difference:
            at = next(k for k, (a, b) in enumerate(zip(expected, got, strict=True)) if a != b)
            difference = f"{bank} word {at}: expected {expected[at]}, got {got[at]}"
    return difference, completed


@cocotb.test()
async def conformance(dut):
    with open(os.environ["SAMFLOW_JOBS"]) as file:
        setup = json.load(file)
    width = setup["width"]
    all_inputs = setup["top_inputs"]
    Clock(dut.clk, 10, unit="ns").start()
    with open(os.environ["SAMFLOW_RESULTS"], "w") as results:
        for job in setup["jobs"]:
            runs = [(profile, seed) for profile in setup["profiles"] for seed in setup["seeds"]]
            if "runs" in job:
                runs = [tuple(run) for run in job["runs"]]
            elif job["schedule"] is not None:
                runs.append((RECORDED_SCHEDULE, 0))
            for profile, seed in runs:
                try:
                    difference, cycles = await _run(dut, job, profile, seed, width, all_inputs)
                except (ProtocolError, NoProgressError) as error:
                    difference, cycles = f"{type(error).__name__}: {error}", 0
                    await RisingEdge(dut.clk)
                results.write(json.dumps({
                    "file": job["file"], "case": job["case"], "profile": profile, "seed": seed,
                    "status": "failed" if difference else "passed", "detail": difference,
                    "cycles": cycles}) + "\n")
                if difference:
                    cocotb.log.warning("%s %s profile=%s seed=%d: %s", job["file"], job["case"], profile,
                                       seed, difference)

