"""Benches for the compute FUs (``alu``, ``mac``): random micro-op programs against golden models.

A scenario (FU kind, parameters, stall profile, seed, program style) fixes the micro-op program,
the data on every input, when ``clear`` pulses and the junk on the ``cfg`` bus, so the Amaranth
simulator and cocotb+Verilator run exactly the same stimulus and the same checks:

* every output token equals the golden model's, in order;
* every cycle, ``busy``, ``finished``, ``firings`` and ``stalls`` equal what the architecture
  note's definitions give for the transfers seen so far, and ``cfg.rdata`` is 0;
* every result is offered no sooner than the kind's latency after its step's last input.
"""

import json
import random
from dataclasses import astuple, dataclass
from typing import NamedTuple

from amaranth.hdl import Module, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In

from rivulet.sim.amaranth_sim import run_each_in_amaranth
from rivulet.sim.seeds import base_seed
from rivulet.sim.streams import (
    PROFILES,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
    StreamBench,
    port_paths,
    stream_ports,
)
from rivulet.sim.verilator import build_design, run_cocotb, run_directory
from rivulet.sim.wrappers import member_value
from rsn.channels import Channel
from rsn.fu_alu import ALU_KIND
from rsn.fu_mac import MAC_KIND
from rsn.isa import MacMode, Precision, decode, encode

__all__ = ["KINDS", "SCENARIOS", "Step", "Planned", "program_for", "golden_outputs", "FuChecker",
           "ComputeBench", "make_compute_bench", "FlatUop", "run_compute_amaranth",
           "run_compute_amaranth_each", "run_compute_verilator"]

KINDS = {"alu": ALU_KIND, "mac": MAC_KIND}
SCENARIOS = ("random", "throughput", "overlong", "load_behind_result")
CFG_INPUTS = ("cfg__addr", "cfg__data", "cfg__write", "cfg__read")


@dataclass(frozen=True)
class Step:
    """One micro-op and its traffic, as the spec fixes it."""
    fields: dict
    inputs: tuple           # tokens it consumes on each input
    outputs: int            # tokens it emits on o[0]
    loads: int              # tokens of i[1] stored in the buffer (these count as firings)
    checked: bool = True    # False: a programming error whose output values the spec leaves open


def step_for(kind: str, uop: dict, checked: bool = True) -> Step:
    if kind == "alu":
        return Step(uop, (uop["beats"],), uop["beats"], 0, checked)
    length, rows = uop["length"], uop["rows"]
    if uop["mode"] == MacMode.LOAD:
        return Step(uop, (0, length), 0, length, checked)
    pair = uop["mode"] == MacMode.DOT2
    return Step(uop, (rows * length, rows * length if pair else 0), rows, 0, checked)


# ---------------------------------------------------------------------------- stimulus

class Planned(NamedTuple):
    """A micro-op of a program being written, with how to make the data it consumes."""
    fields: dict
    patterns: dict = {}         # input port -> data pattern (see _word); "random" if absent
    checked: bool = True


def _word(rng: random.Random, width: int, pattern: str) -> int:
    """A data word: mostly random, often an edge value; every pattern keeps random upper bits."""
    mask = (1 << width) - 1
    if pattern == "int8_min":           # low byte -128, the upper bits must be ignored by INT8
        return (rng.getrandbits(width) & ~0xFF | 0x80) & mask
    if pattern == "most_negative":
        return 1 << (width - 1)
    if rng.random() < 0.4:
        return rng.choice([0, 1, mask, 1 << (width - 1), mask >> 1, mask - 127,
                           (rng.getrandbits(width) & ~0xFF | 0x80) & mask,
                           (rng.getrandbits(width) & ~0xFF | 0x7F) & mask])
    return rng.getrandbits(width)


def _bounds(rng: random.Random) -> tuple[int, int]:
    edges = [-32768, 32767, -1, 0, 1]
    lo, hi = (rng.choice(edges) if rng.random() < 0.5 else rng.randint(-32768, 32767) for _ in range(2))
    return (lo, hi) if rng.random() < 0.15 else (min(lo, hi), max(lo, hi))     # sometimes lo > hi


def _alu_uop(rng: random.Random, beats: int) -> dict:
    lo, hi = _bounds(rng)
    return {"beats": beats, "relu": rng.getrandbits(1), "shift": rng.choice([0, 31, rng.randrange(32)]),
            "clip": rng.getrandbits(1), "lo": lo, "hi": hi}


def _alu_program(rng, params, scenario) -> list[Planned]:
    """Random micro-ops, after one that shifts the most negative word right by 31."""
    if scenario == "throughput":
        return [Planned(_alu_uop(rng, 300)), Planned(_alu_uop(rng, 100))]
    edge = {"beats": 6, "relu": 0, "shift": 31, "clip": 0, "lo": 0, "hi": 0}
    program = [Planned(edge, {0: "first_most_negative"})]
    program += [Planned(_alu_uop(rng, rng.randint(1, 32))) for _ in range(rng.randint(4, 7))]
    return program


def _mac_program(rng, params, scenario) -> list[Planned]:
    """Random micro-ops, after an opening of edge cases.

    It opens with int8 -128 * -128 over the whole buffer (wraps at W=16), then mixed signs
    against -128, where a wrong int8 sign extension shows.
    """
    depth = params["mac_depth"]
    load, dot, dot2 = MacMode.LOAD, MacMode.DOT, MacMode.DOT2
    int8, int32 = Precision.INT8, Precision.INT32
    if scenario == "overlong":     # length > mac_depth: outputs unspecified, the rest must hold
        over = depth + 3
        return [Planned({"mode": load, "precision": int32, "length": over, "rows": 1}, checked=False),
                Planned({"mode": dot, "precision": int32, "length": over, "rows": 2}, checked=False),
                Planned({"mode": load, "precision": int32, "length": depth, "rows": 1}),
                Planned({"mode": dot, "precision": int32, "length": depth, "rows": 2}),
                Planned({"mode": dot2, "precision": int8, "length": over, "rows": 2})]
    if scenario == "load_behind_result":     # a `last` LOAD ends while a DOT result waits on o[0]
        return [Planned({"mode": load, "precision": int32, "length": depth, "rows": 1, "last": 0}),
                Planned({"mode": dot, "precision": int32, "length": depth, "rows": 1, "last": 0}),
                Planned({"mode": load, "precision": int32, "length": 2, "rows": 1, "last": 1}),
                Planned({"mode": dot, "precision": int8, "length": 2, "rows": 2, "last": 0})]
    if scenario == "throughput":
        return [Planned({"mode": load, "precision": int32, "length": depth, "rows": 1}),
                Planned({"mode": dot, "precision": int32, "length": depth, "rows": 3}),
                Planned({"mode": dot2, "precision": int8, "length": depth, "rows": 2})]
    program = [Planned({"mode": load, "precision": int32, "length": depth, "rows": 1}, {1: "int8_min"}),
               Planned({"mode": dot, "precision": int8, "length": depth, "rows": 2}, {0: "int8_min"}),
               Planned({"mode": dot, "precision": int8, "length": depth, "rows": 1})]
    loaded = depth
    for _ in range(rng.randint(4, 7)):
        mode = rng.choice([load, dot, dot, dot2, dot2])
        patterns = {port: rng.choice(["random"] * 4 + ["int8_min", "most_negative"]) for port in (0, 1)}
        if mode == load:
            length = rng.randint(1, depth)
            loaded = max(loaded, length)
        else:   # DOT reads what was loaded; DOT2 needs no buffer and may exceed it
            length = rng.randint(1, loaded if mode == dot else depth + 5)
        program.append(Planned({"mode": mode, "precision": rng.choice([int8, int32]), "length": length,
                                "rows": rng.randint(1, 4)}, patterns))
    return program


def program_for(kind: str, params: dict, scenario: str, rng: random.Random):
    """The micro-op program (with ``last`` flags) and the tokens of every input, per port."""
    planned = (_alu_program if kind == "alu" else _mac_program)(rng, params, scenario)
    width, layout = params["width"], KINDS[kind].uop_layout
    steps, inputs = [], [[] for _ in range(KINDS[kind].n_in)]
    for position, plan in enumerate(planned):
        final = position == len(planned) - 1
        last = rng.random() < (0.85 if final else 0.25) or (scenario == "throughput" and final)
        # Through encode and decode, so that the fields are exactly what the hardware reads.
        fields = decode(layout, encode(layout, {"last": int(last), **plan.fields}))
        step = step_for(kind, fields, plan.checked)
        steps.append(step)
        for port, count in enumerate(step.inputs):
            pattern = plan.patterns.get(port, "random")
            if pattern == "first_most_negative":
                inputs[port] += [1 << (width - 1)] + [_word(rng, width, "random") for _ in range(count - 1)]
            else:
                inputs[port] += [_word(rng, width, pattern) for _ in range(count)]
    return steps, inputs


def golden_outputs(kind: str, params: dict, steps, inputs):
    """Run the golden model to completion on unbounded channels: its outputs and the model.

    Outputs of unchecked steps (``length > mac_depth``) are None: the model runs them with a
    buffer large enough, which leaves the checked steps' results as the spec defines them.
    """
    if not all(step.checked for step in steps):
        params = {**params, "mac_depth": 1 << 12}
    model = KINDS[kind].model(**params)
    model.load([step.fields for step in steps])
    channels_in = []
    for k, tokens in enumerate(inputs):
        channel = Channel(f"i{k}", len(tokens) + 1)
        for token in tokens:
            channel.push(token)
        channels_in.append(channel)
    output = Channel("o0", sum(step.outputs for step in steps) + 1)
    while model.step(channels_in, [output]):
        pass
    if model.busy or any(channel.can_pop() for channel in channels_in):
        raise AssertionError(f"the golden model stopped early: {channels_in}, busy={model.busy}")
    tokens, expected = list(output.tokens), []
    for step in steps:
        produced, tokens = tokens[:step.outputs], tokens[step.outputs:]
        expected += produced if step.checked else [None] * step.outputs
    return expected, model


# ---------------------------------------------------------------------------- checking

def _expect(condition: bool, message: str):
    if not condition:
        raise ScoreboardError(message)


class FuChecker:
    """Scoreboard of a compute FU: outputs against the golden model, status against the spec."""

    def __init__(self, kind: str, steps, inputs, expected, model):
        self.kind, self.steps, self.expected, self.model = kind, list(steps), list(expected), model
        self.latency = KINDS[kind].latency
        self.ports = [f"i__{k}" for k in range(len(inputs))]
        self._thresholds = self._cumulative(self.steps, len(inputs))
        self._load_tokens, self._row_ends = self._token_roles(self.steps)
        self.in_cycles = [[] for _ in inputs]       # transfer cycle of every input token
        self.received, self.latencies = [], []
        self.accepted = self.completed = 0
        self.completion_cycles = []                 # the cycle each micro-op completed in
        self.firings = self.stalls = 0
        self.finished = False
        self.cleared = False
        self.offer_cycle = None
        self.done_cycle = None
        self.cycle = -1

    @staticmethod
    def _cumulative(steps, n_in):
        """For each micro-op: tokens consumed on each input and emitted, up to and including it."""
        totals, out, thresholds = [0] * n_in, 0, []
        for step in steps:
            totals = [total + count for total, count in zip(totals, step.inputs, strict=True)]
            out += step.outputs
            thresholds.append((tuple(totals), out))
        return thresholds

    @staticmethod
    def _token_roles(steps):
        """Which i[1] tokens are loads, and the i[0] token that ends each output's step."""
        loads, row_ends, taken = set(), [], [0, 0]
        for step in steps:
            if step.loads:
                loads.update(range(taken[1], taken[1] + step.loads))
            if step.outputs:
                per_output = step.inputs[0] // step.outputs
                row_ends += [taken[0] + (n + 1) * per_output - 1 for n in range(step.outputs)]
            taken = [taken[k] + (step.inputs[k] if k < len(step.inputs) else 0) for k in range(2)]
        return loads, row_ends

    def on_cycle(self, cycle, sample, transfers):
        self.cycle = cycle
        busy = self.accepted > self.completed
        self._check_status(cycle, sample, busy)
        if sample["clear"]:
            self.firings = self.stalls = 0
            self.finished, self.cleared = False, True
        moved = self._account_inputs(cycle, transfers)
        if sample["o__0__valid"] and self.offer_cycle is None:
            self.offer_cycle = cycle
        if "o__0" in transfers:
            self._check_output(cycle, transfers["o__0"])
            moved = True
        if "uop" in transfers:
            self.accepted += 1
        self.stalls += busy and not moved
        self._retire(cycle)

    def _check_status(self, cycle, sample, busy):
        expected = {"busy": int(busy), "finished": int(self.finished), "firings": self.firings,
                    "stalls": self.stalls, "cfg__rdata": 0}
        for name, value in expected.items():
            _expect(sample[name] == value,
                    f"cycle {cycle}: {name} is {sample[name]}, expected {value} ({self.progress()})")

    def _account_inputs(self, cycle, transfers) -> bool:
        moved = False
        for port, name in enumerate(self.ports):
            if name in transfers:
                moved = True
                if port == 1 and len(self.in_cycles[1]) in self._load_tokens:
                    self.firings += 1
                self.in_cycles[port].append(cycle)
        return moved

    def _check_output(self, cycle, token):
        n = len(self.received)
        _expect(n < len(self.expected), f"cycle {cycle}: extra output token {token:#x}")
        if self.expected[n] not in (None, token):
            raise ScoreboardError(f"cycle {cycle}: output token #{n} is {token:#x}, "
                                  f"expected {self.expected[n]:#x}")
        source = self._row_ends[n]
        _expect(source < len(self.in_cycles[0]),
                f"cycle {cycle}: output token #{n} left before its step's last input arrived")
        self.latencies.append(self.offer_cycle - self.in_cycles[0][source])
        self.received.append(token)
        self.firings += 1
        self.offer_cycle = None

    def _retire(self, cycle):
        """Complete micro-ops, in order, once all their tokens have moved."""
        while self.completed < self.accepted:
            needed_in, needed_out = self._thresholds[self.completed]
            taken = tuple(len(cycles) for cycles in self.in_cycles)
            if any(have < need for have, need in zip(taken, needed_in, strict=True)) \
                    or len(self.received) < needed_out:
                return
            self.finished |= bool(self.steps[self.completed].fields["last"])
            self.completion_cycles.append(cycle)
            self.completed += 1
            if self.completed == len(self.steps):
                self.done_cycle = cycle

    def complete(self) -> bool:
        """Done one cycle after the last micro-op completed, so its flags have been checked."""
        return self.done_cycle is not None and self.cycle > self.done_cycle

    def progress(self) -> str:
        taken = ", ".join(f"{name} {len(self.in_cycles[k])}" for k, name in enumerate(self.ports))
        return (f"micro-ops accepted {self.accepted}, completed {self.completed}/{len(self.steps)}; "
                f"inputs taken {taken}; outputs {len(self.received)}/{len(self.expected)}")

    def finish(self):
        _expect(len(self.received) == len(self.expected)
                and all(want in (None, got) for got, want in zip(self.received, self.expected, strict=True)),
                "the output sequence differs from the golden model's")
        _expect(all(latency >= self.latency for latency in self.latencies),
                f"a result was offered sooner than the latency {self.latency}: {sorted(set(self.latencies))}")
        if not self.cleared:
            _expect((self.firings, self.finished) == (self.model.firings, self.model.finished),
                    f"firings/finished {self.firings}/{self.finished} differ from the golden model's "
                    f"{self.model.firings}/{self.model.finished}")

    def throughput(self, port: int = 0) -> float:
        """Tokens per cycle on input ``port``, from its first transfer to its last."""
        cycles = self.in_cycles[port]
        return len(cycles) / (cycles[-1] - cycles[0] + 1)


# ---------------------------------------------------------------------------- bench

class ComputeBench(StreamBench):
    """A StreamBench that also pulses ``clear`` once (or never) and drives junk on ``cfg``.

    ``clear_at`` is None, ``("cycle", n)`` or ``("after", k)``: in the first cycle after ``k``
    micro-ops have completed, so that a ``finished`` flag raised mid-program is seen to fall.
    """

    def __init__(self, ports, sources, sinks, checker, extra_signals, *, clear_at, rng, max_cycles):
        super().__init__(ports, sources, sinks, checker, extra_signals)
        self.clear_at, self.rng, self.max_cycles = clear_at, rng, max_cycles
        self.cleared_at = None

    @property
    def driven(self) -> list[str]:
        return super().driven + ["clear", *CFG_INPUTS]

    def _clear_due(self, cycle: int) -> bool:
        if self.clear_at is None or self.cleared_at is not None:
            return False
        how, when = self.clear_at
        if (cycle == when) if how == "cycle" else (self.checker.completed >= when):
            self.cleared_at = cycle
            return True
        return False

    def drive(self, cycle: int) -> dict[str, int]:
        values = super().drive(cycle)
        values["clear"] = int(self._clear_due(cycle))
        values.update({"cfg__addr": self.rng.getrandbits(16), "cfg__data": self.rng.getrandbits(32),
                       "cfg__write": self.rng.getrandbits(1), "cfg__read": self.rng.getrandbits(1)})
        return values


def _clear_plan(steps, tokens: int, rng: random.Random):
    """No clear, a clear at a random cycle, or one right after a mid-program ``last`` completes."""
    mid_last = [n for n, step in enumerate(steps[:-1]) if step.fields["last"]]
    choice = rng.random()
    if choice < 1 / 3:
        return None
    if choice < 2 / 3 or not mid_last:
        return ("cycle", rng.randint(0, tokens))
    return ("after", mid_last[0] + 1)


def make_compute_bench(kind: str, params: dict, ports, extra_signals, profile: str, seed: int,
                       scenario: str = "random") -> ComputeBench:
    """The bench of one scenario; every random choice derives from ``seed``."""
    stall, rng = PROFILES[profile], random.Random(seed)
    steps, inputs = program_for(kind, params, scenario, rng)
    expected, model = golden_outputs(kind, params, steps, inputs)
    layout = KINDS[kind].uop_layout
    streams = {"uop": [encode(layout, step.fields) for step in steps]}
    streams.update({f"i__{k}": tokens for k, tokens in enumerate(inputs)})
    by_name = {port.prefix: port for port in ports}
    sources = [SourceDriver(by_name[name], tokens, stall.idle, random.Random(rng.getrandbits(64)))
               for name, tokens in streams.items()]
    sinks = [SinkDriver(by_name["o__0"], stall.backpressure, random.Random(rng.getrandbits(64)))]
    tokens = sum(len(t) for t in streams.values()) + len(expected)
    clear_at = _clear_plan(steps, tokens, rng) if scenario == "random" else None
    checker = FuChecker(kind, steps, inputs, expected, model)
    return ComputeBench(ports, sources, sinks, checker, extra_signals, clear_at=clear_at,
                        rng=random.Random(rng.getrandbits(64)), max_cycles=40 * tokens + 1000)


class FlatUop(wiring.Component):
    """The FU with its ``uop`` payload seen as plain bits: the same ports and Verilog names.

    ``run_in_amaranth`` sets ports with integers, which Amaranth refuses for a port shaped by a
    ``data`` layout (the micro-op view), so the fast tier drives the FU through this shim.
    """

    def __init__(self, component):
        self.component = component
        members = dict(component.signature.members)
        members["uop"] = In(stream.Signature(unsigned(len(component.uop.payload.as_value()))))
        super().__init__(wiring.Signature(members))

    def elaborate(self, platform):
        m = Module()
        m.submodules.fu = self.component
        for path, member in port_paths(self.signature):
            outer, inner = member_value(self, path), member_value(self.component, path)
            m.d.comb += inner.eq(outer) if member.flow == wiring.In else outer.eq(inner)
        return m


def run_compute_amaranth(component, kind: str, params: dict, *, profile: str, seed: int,
                         scenario: str = "random") -> ComputeBench:
    """One scenario in Amaranth's simulator; returns the bench (its checker holds the measurements)."""
    return run_compute_amaranth_each(component, kind, params, profile=profile, seeds=[seed],
                                     scenario=scenario)[0]


def run_compute_amaranth_each(component, kind: str, params: dict, *, profile: str, seeds,
                              scenario: str = "random") -> list[ComputeBench]:
    """The scenario once per seed, each from reset, in one Amaranth simulator of ``component``."""
    flat = FlatUop(component)
    ports, extra = stream_ports(flat)
    benches = []
    for seed in seeds:
        print(f"{kind} {params} profile={profile} seed={seed}")
        benches.append(make_compute_bench(kind, params, ports, extra, profile, seed, scenario))
    run_each_in_amaranth(flat, [(bench, bench.max_cycles) for bench in benches])
    return benches


def run_compute_verilator(component, kind: str, params: dict, *, design: str, case: str, profiles,
                          seeds, scenario: str = "random") -> list[dict]:
    """Build ``component`` once with Verilator and run every (profile, seed) on it via cocotb.

    Returns one record per passing run: profile, seed, cycles, latencies and throughput.
    """
    ports, extra = stream_ports(component)
    config = {"kind": kind, "params": params, "ports": [astuple(port) for port in ports], "extra": extra,
              "profiles": list(profiles), "seeds": list(seeds), "scenario": scenario,
              "base_seed": base_seed()}
    built = build_design(design, component)
    with run_directory(case) as directory:
        summary = directory / "summary.jsonl"
        run_cocotb(built, "testbench.rsn.tb_compute", directory,
                   {"RIVULET_COMPUTE": json.dumps(config), "RIVULET_COMPUTE_SUMMARY": str(summary)})
        return [json.loads(line) for line in summary.read_text().splitlines()]
