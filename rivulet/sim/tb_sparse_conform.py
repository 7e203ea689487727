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

from rivulet.sim.cocotb_loop import DesignPorts
from rivulet.sim.streams import (
    PROFILES,
    NoProgressError,
    ProtocolError,
    SinkDriver,
    SourceDriver,
    StreamBench,
    StreamPort,
)
from samflow.rtl_jobs import HINT_LOCKSTEP, RECORDED_SCHEDULE
from samflow.skip import hinted_output_problem
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


class LockstepHints:
    """Offers hint k once the scanner has emitted ``visible_after[k]`` tokens (samflow.skip):
    the point of its progress at which the hint arrived in SAM's timing."""

    def __init__(self, port: StreamPort, tokens, visible_after, progress: "ScannerProgress"):
        self.port, self.tokens, self.visible_after = port, list(tokens), visible_after
        self.progress = progress
        self.sent = 0
        self.offering = False
        self.since = 0          # the cycle from which the hint on offer has been on offer
        self.settled = False

    @property
    def done(self):
        return self.sent == len(self.tokens)

    def due(self, emitted: int) -> bool:
        """The next hint must be on offer before the scanner decides token ``emitted``."""
        return not self.done and self.visible_after[self.sent] <= emitted

    def drive(self, cycle):
        if not self.offering:
            self.since = cycle
        self.offering = self.due(self.progress.appeared)
        # On offer in the last cycle and left there: a fresh hint (a stale one, of a fiber already
        # closed, goes at once).
        self.settled = self.offering and self.since < cycle
        if self.offering:
            return {self.port.valid: 1, self.port.payload: self.tokens[self.sent]}
        return {self.port.valid: 0, self.port.payload: 0}

    def observe(self, transferred):
        self.sent += bool(transferred)
        if transferred:
            self.offering = False


class ScannerProgress:
    """The tokens a scanner has put out on ``crd``: taken, plus the one in its output register."""

    def __init__(self, port: StreamPort):
        self.port = port
        self.taken = 0
        self.waiting = False

    @property
    def appeared(self) -> int:
        return self.taken + self.waiting

    def on_cycle(self, sample, transferred):
        self.taken += transferred
        self.waiting = bool(sample[self.port.valid]) and not transferred


class LockstepSink:
    """Takes the scanner's token k only once it has seen it waiting (so the scanner's state after
    it is settled) and the hints due before token k + 1 are taken, but for one on offer that the
    scanner left waiting (a stale hint, of a fiber already closed, goes at once): the scanner
    decides each token with exactly the hints SAM had by then."""

    def __init__(self, port: StreamPort, hints: LockstepHints, progress: ScannerProgress):
        self.port, self.hints, self.progress = port, hints, progress

    def drive(self, cycle):
        hinted = not self.hints.due(self.progress.taken + 1) or self.hints.settled
        return {self.port.ready: int(self.progress.waiting and hinted)}

    def observe(self, transferred):
        pass


class ExpectedTokens:
    """Collects each output's tokens; complete once every output has as many as the case, or,
    for a hinted scan under random stalls (whose output length depends on the timing), once
    every output has sent its ``D``."""

    def __init__(self, expected, width, until_done=False, scanner=None):
        self.expected, self.width, self.until_done, self.scanner = expected, width, until_done, scanner
        self.got = {port: [] for port in expected}

    def on_cycle(self, cycle, sample, transfers):
        for port, payload in transfers.items():
            if port in self.got:
                self.got[port].append(payload)
        if self.scanner:
            self.scanner.on_cycle(sample, self.scanner.port.prefix in transfers)

    def complete(self):
        if self.until_done:
            return all(tokens and decode(tokens[-1], self.width) == "D" for tokens in self.got.values())
        return all(len(self.got[port]) >= len(tokens) for port, tokens in self.expected.items())

    def finish(self):
        pass

    def progress(self):
        return ", ".join(f"{port} {len(self.got[port])}/{len(tokens)}"
                         for port, tokens in self.expected.items())


def _arrivals(schedule, port):
    return [cycle for cycle, ports in enumerate(schedule) for name in ports if name == port]


def _difference(job, got, width, exact=True):
    def shown(port, tokens):
        return [decode(t, width, repsig=port in job["repsig"]) for t in tokens]
    if not exact:
        hinted = job["hinted"]
        prefix = hinted["crd"][:-len("crd")]
        outputs = {port[len(prefix):]: shown(port, tokens) for port, tokens in got.items()}
        problem = hinted_output_problem(hinted["memory"], hinted["inputs"], outputs)
        return f"breaks the skip rules: {problem} (crd {outputs['crd'][:24]})" if problem else ""
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
    hinted, lockstep = job["hinted"], profile_name == HINT_LOCKSTEP
    progress = ScannerProgress(StreamPort(hinted["crd"], False, bits)) if lockstep else None
    sources, hints = [], None
    for prefix, tokens in job["inputs"].items():
        port = StreamPort(prefix, True, bits)
        if profile_name == RECORDED_SCHEDULE:
            sources.append(ScheduledSource(port, tokens, _arrivals(job["schedule"], prefix)))
        elif lockstep and prefix == hinted["hints"]:
            hints = LockstepHints(port, tokens, hinted["visible_after"], progress)
            sources.append(hints)
        else:
            idle = PROFILES["no_stall" if lockstep else profile_name].idle
            sources.append(SourceDriver(port, tokens, idle, rng))
    calm = profile_name in (RECORDED_SCHEDULE, HINT_LOCKSTEP)
    backpressure = PROFILES["no_stall" if calm else profile_name].backpressure
    sinks = []
    for prefix in [*job["outputs"], *job["unrecorded"]]:
        port = StreamPort(prefix, False, bits)
        if lockstep and prefix == hinted["crd"]:
            sinks.append(LockstepSink(port, hints, progress))
        else:
            sinks.append(SinkDriver(port, backpressure, rng))
    exact = hinted is None or lockstep
    checker = ExpectedTokens(job["outputs"], width, until_done=not exact, scanner=progress)
    bench = StreamBench([s.port for s in sources] + [s.port for s in sinks], sources, sinks, checker)
    ports = DesignPorts(dut, {*bench.sampled, *bench.driven})
    tokens = sum(len(t) for t in job["inputs"].values()) + sum(len(t) for t in job["outputs"].values())
    max_cycles = 40 * tokens + 1000
    tail = None
    for cycle in range(max_cycles):
        ports.write(bench.drive(cycle))
        await ReadOnly()
        bench.observe(cycle, ports.read())
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
    ports.write({sink.port.ready: 0 for sink in sinks})
    difference = _difference(job, checker.got, width, exact)
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
            if job["hinted"] is not None and "runs" not in job:
                runs.append((HINT_LOCKSTEP, 0))
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

