"""The crossbar tile's bench, shared by both tiers: random networks and spike trains, checked
spike for spike and membrane for membrane against ``snn.lif_model.LifCrossbarModel``.

One scenario on one simulation: the ``config`` stream writes every weight and a random initial
membrane vector, then the ``i`` stream carries the timesteps (axon ids, then ``END_OF_STEP``).
After each timestep's ``END_OF_STEP`` has left on ``o`` the ``config`` stream reads every
membrane group back, and the next timestep waits for those words (``readback="every_step"``);
with ``readback="end"`` timesteps follow each other freely, so a step's events arrive while the
previous step's spikes are still leaving, and only the last step's membranes are read.

Every stream has a stall profile driver and a protocol monitor (:mod:`rivulet.sim.streams`), the
expected values come from the model alone, and :class:`StreamBench` runs the scenario unchanged
in Amaranth's simulator and under cocotb.
"""

import random
from dataclasses import dataclass

import numpy as np

from rivulet.sim.streams import PROFILES, ScoreboardError, SinkDriver, SourceDriver, StreamBench
from snn.crossbar import ConfigOp, EventKind, config_layout, event_layout
from snn.lif_model import LifCrossbarModel
from snn.lif_params import LifParams

__all__ = ["Size", "Scenario", "random_scenario", "CrossbarChecker", "GatedSource",
           "make_crossbar_bench", "max_cycles_for", "lif_params"]

IN, OUT, CONFIG, READBACK = "i", "o", "config", "readback"


@dataclass(frozen=True)
class Size:
    axons: int
    neurons: int
    banks: int

    @property
    def groups(self) -> int:
        return self.neurons // self.banks


def lif_params(fields: dict) -> LifParams:
    """A ``LifParams`` from its fields (as sent to the cocotb side in JSON)."""
    return LifParams(**fields)


@dataclass
class Scenario:
    weights: np.ndarray             # (axons, neurons)
    initial: np.ndarray             # (neurons,) membranes written before the first event
    steps: list[list[int]]          # per timestep, the input axon ids in arrival order
    spikes: list[list[int]]         # per timestep, the model's spikes in emission order
    membranes: list[np.ndarray]     # per timestep, the model's membranes after it


def _random_membranes(rng: random.Random, params: LifParams, neurons: int) -> np.ndarray:
    """Mostly near the threshold (both signs), some at the range's ends, some at 0."""
    span = max(params.threshold, 8)
    values = []
    for _ in range(neurons):
        kind = rng.random()
        if kind < 0.1:
            values.append(rng.choice((params.v_min, params.v_max, params.v_max - 1, params.v_min + 1)))
        elif kind < 0.2:
            values.append(0)
        else:
            values.append(rng.randint(max(params.v_min, -span), min(params.v_max, span)))
    return np.array(values, dtype=np.int64)


def random_scenario(params: LifParams, size: Size, rng: random.Random, steps: int = 6,
                    max_events: int = 6) -> Scenario:
    """Random weights (a third zero), membranes and spike trains (empty steps and repeated
    axons included), and neurons placed exactly at the threshold by the first event, so that
    a compare off by one (``>`` for ``>=``) shows."""
    weights = np.array([[0 if rng.random() < 0.3 else rng.randint(params.w_min, params.w_max)
                         for _ in range(size.neurons)] for _ in range(size.axons)], dtype=np.int64)
    initial = _random_membranes(rng, params, size.neurons)
    trains = [[rng.randrange(size.axons) for _ in range(rng.choice((0, 1, rng.randint(2, max_events))))]
              for _ in range(steps)]
    if not trains[0]:
        trains[0] = [rng.randrange(size.axons)]
    if params.integrate == "event":
        first = trains[0][0]
        for neuron in rng.sample(range(size.neurons), k=max(1, size.neurons // 8)):
            start = params.threshold - (int(weights[first, neuron]) << params.input_shift)
            if params.v_min <= start <= params.v_max:
                initial[neuron] = start
    model = LifCrossbarModel(weights, params)
    model.v = initial.copy()
    results = model.run(trains)
    return Scenario(weights, initial, trains, [list(map(int, s)) for s, _ in results],
                    [v for _, v in results])


# --- stimulus tokens ------------------------------------------------------------------------

def _config_tokens(params: LifParams, size: Size, scenario: Scenario, readback: str):
    layout = config_layout(size.axons, size.neurons, size.banks, params.membrane_width,
                           params.weight_width)
    B, G = size.banks, size.groups
    preload = [layout.const({"op": ConfigOp.WRITE_WEIGHTS, "axon": a, "group": g,
                             "data": {"weights": [int(w) for w in scenario.weights[a, g * B:(g + 1) * B]]}})
               for a in range(size.axons) for g in range(G)]
    preload += [layout.const({"op": ConfigOp.WRITE_MEMBRANES, "axon": 0, "group": g,
                              "data": {"membranes": [int(v) for v in scenario.initial[g * B:(g + 1) * B]]}})
                for g in range(G)]
    read_steps = range(len(scenario.steps)) if readback == "every_step" else [len(scenario.steps) - 1]
    reads = [(step, g) for step in read_steps for g in range(G)]
    read_tokens = [layout.const({"op": ConfigOp.READ_MEMBRANES, "axon": 0, "group": g}) for _, g in reads]
    return [c.as_bits() for c in preload], [c.as_bits() for c in read_tokens], reads


def _input_tokens(size: Size, scenario: Scenario):
    layout = event_layout(size.axons, "axon")
    tokens, first_of_step = [], []
    for events in scenario.steps:
        first_of_step.append(len(tokens))
        tokens += [layout.const({"kind": EventKind.SPIKE, "axon": a}).as_bits() for a in events]
        tokens.append(layout.const({"kind": EventKind.END_OF_STEP, "axon": 0}).as_bits())
    return tokens, first_of_step


class GatedSource(SourceDriver):
    """A source whose token ``k`` may only be offered once ``gate(k)`` holds (an ordering the
    scenario needs, e.g. weights written before the first spike); idle draws as usual after."""

    def __init__(self, port, tokens, idle, rng, gate):
        super().__init__(port, tokens, idle, rng)
        self.gate = gate

    def drive(self, cycle: int) -> dict[str, int]:
        if not self.offering and not self.done and not self.gate(self.sent):
            return {self.port.valid: 0, self.port.payload: self.rng.getrandbits(self.port.width)}
        return super().drive(cycle)


# --- the scoreboard -------------------------------------------------------------------------

class CrossbarChecker:
    """In order: every ``o`` token against the model's spikes and ``END_OF_STEP`` per step, and
    every read-back word against the model's membranes of that step and group."""

    def __init__(self, params: LifParams, size: Size, scenario: Scenario, reads):
        self.size, self.params = size, params
        out = event_layout(size.neurons, "neuron")
        self._kind_bit, self._neuron_at = out["kind"].offset, out["neuron"].offset
        self.expected = []
        for step, ids in enumerate(scenario.spikes):
            self.expected += [(step, EventKind.SPIKE, n) for n in ids] + [(step, EventKind.END_OF_STEP, None)]
        B = size.banks
        self.expected_reads = [(step, g, [int(v) for v in scenario.membranes[step][g * B:(g + 1) * B]])
                               for step, g in reads]
        self.outputs = 0
        self.ends = 0
        self.reads = 0
        self.output_cycles: list[tuple[int, int, int | None]] = []     # (cycle, kind, neuron)

    def _unpack_membranes(self, payload: int) -> list[int]:
        width = self.params.membrane_width
        values = [(payload >> (b * width)) & ((1 << width) - 1) for b in range(self.size.banks)]
        return [v - (1 << width) if v >> (width - 1) else v for v in values]

    def on_cycle(self, cycle, sample, transfers):
        if OUT in transfers:
            payload = transfers[OUT]
            kind = EventKind((payload >> self._kind_bit) & 1)
            neuron = payload >> self._neuron_at if kind == EventKind.SPIKE else None
            self.output_cycles.append((cycle, kind, neuron))
            got = f"{kind.name} {neuron}" if neuron is not None else kind.name
            if self.outputs >= len(self.expected):
                raise ScoreboardError(f"cycle {cycle}: output {got} after every expected token")
            step, want_kind, want_neuron = self.expected[self.outputs]
            if (kind, neuron) != (want_kind, want_neuron):
                spikes = [n for s, k, n in self.expected if s == step and k == EventKind.SPIKE]
                want = want_kind.name + (f" {want_neuron}" if want_neuron is not None else "")
                raise ScoreboardError(f"cycle {cycle}: timestep {step}: output #{self.outputs} is {got}, "
                                      f"the model expects {want} (its spikes this step: {spikes})")
            self.outputs += 1
            self.ends += kind == EventKind.END_OF_STEP
        if READBACK in transfers:
            if self.reads >= len(self.expected_reads):
                raise ScoreboardError(f"cycle {cycle}: a read-back word nobody asked for")
            step, group, want = self.expected_reads[self.reads]
            got = self._unpack_membranes(transfers[READBACK])
            if got != want:
                B = self.size.banks
                raise ScoreboardError(f"cycle {cycle}: timestep {step}: membranes of neurons "
                                      f"{group * B}..{group * B + B - 1} are {got}, the model has {want}")
            self.reads += 1

    def complete(self) -> bool:
        return self.outputs == len(self.expected) and self.reads == len(self.expected_reads)

    def progress(self) -> str:
        return (f"{self.outputs}/{len(self.expected)} output tokens ({self.ends} END_OF_STEP), "
                f"{self.reads}/{len(self.expected_reads)} read-back words")

    def finish(self):
        if not self.complete():
            raise ScoreboardError(f"the run ended early: {self.progress()}")


def make_crossbar_bench(params: LifParams, size: Size, ports, extra, profile: str, seed: int, *,
                        readback: str = "every_step", steps: int = 6, scenario: Scenario | None = None
                        ) -> StreamBench:
    """The bench for one (design, stall profile, seed). ``scenario`` overrides the random one."""
    stall = PROFILES[profile]
    rng = random.Random(seed)
    scenario = scenario or random_scenario(params, size, rng, steps=steps)
    preload, read_tokens, reads = _config_tokens(params, size, scenario, readback)
    inputs, first_of_step = _input_tokens(size, scenario)
    checker = CrossbarChecker(params, size, scenario, reads)
    by_prefix = {port.prefix: port for port in ports}
    G = size.groups
    config_source: GatedSource

    def input_gate(index: int) -> bool:
        if config_source.sent < len(preload):
            return False
        if readback == "every_step" and index in first_of_step:
            return checker.reads >= first_of_step.index(index) * G
        return True

    def config_gate(index: int) -> bool:
        if index < len(preload):
            return True
        step, _ = reads[index - len(preload)]
        return checker.ends > step

    config_source = GatedSource(by_prefix[CONFIG], preload + read_tokens, stall.idle,
                                random.Random(rng.getrandbits(64)), config_gate)
    input_source = GatedSource(by_prefix[IN], inputs, stall.idle, random.Random(rng.getrandbits(64)),
                               input_gate)
    sinks = [SinkDriver(by_prefix[prefix], stall.backpressure, random.Random(rng.getrandbits(64)))
             for prefix in (OUT, READBACK)]
    bench = StreamBench(ports, [config_source, input_source], sinks, checker, extra)
    bench.scenario = scenario
    return bench


def max_cycles_for(size: Size, steps: int = 6, max_events: int = 6) -> int:
    """Generous: every token 20 times slower than its unstalled cost, plus a blocked phase."""
    tokens = size.axons * size.groups + size.groups * (steps + 1) + steps * (max_events + 1) * size.groups
    spikes = steps * (max_events + 1) * size.neurons
    return 20 * tokens + 12 * spikes + 2000


@dataclass(frozen=True)
class CostMeasurement:
    """Cycle stamps of one run without stalls: input transfers and ``END_OF_STEP`` outputs."""
    event_cycles: list[list[int]]       # per timestep, the cycles its input tokens moved
    end_cycles: list[int]               # per timestep, the cycle its END_OF_STEP left
    spikes: int                         # output spikes in the whole run


def quiet_scenario(params: LifParams, size: Size, events: int, steps: int, rng: random.Random,
                   weights: np.ndarray | None = None) -> Scenario:
    """``events`` input spikes per step; zero weights and membranes unless given (no spikes)."""
    weights = np.zeros((size.axons, size.neurons), dtype=np.int64) if weights is None else weights
    initial = np.zeros(size.neurons, dtype=np.int64)
    trains = [[rng.randrange(size.axons) for _ in range(events)] for _ in range(steps)]
    model = LifCrossbarModel(weights, params)
    results = model.run(trains)
    return Scenario(weights, initial, trains, [list(map(int, s)) for s, _ in results],
                    [v for _, v in results])


def cost_from(bench: StreamBench) -> CostMeasurement:
    """Split a finished bench's ``i`` and ``o`` transfers into timesteps."""
    scenario = bench.scenario
    moved = [cycle for cycle, _ in bench.transfers(IN)]
    per_step, start = [], 0
    for events in scenario.steps:
        per_step.append(moved[start:start + len(events) + 1])
        start += len(events) + 1
    outputs = bench.checker.output_cycles
    ends = [cycle for cycle, kind, _ in outputs if kind == EventKind.END_OF_STEP]
    return CostMeasurement(per_step, ends, sum(kind == EventKind.SPIKE for _, kind, _ in outputs))
