# amaranth: UnusedElaboratable=no
"""The crossbar tile against ``snn.lif_model.LifCrossbarModel``: both presets, several sizes, every
stall profile, several seeds, spikes and membranes compared at every timestep.

A wrong compare is caught: :func:`test_wrong_compare_is_caught` builds the tile with ``>`` where
tinyODIN's model says ``>=`` and requires the scoreboard to fail on every seed (every scenario
puts neurons exactly on the threshold with its first event), naming timestep 0 and the missing
spike or the membranes that differ.
"""

import dataclasses
import functools
import json
import random
from dataclasses import astuple

import numpy as np
import pytest

import snn.crossbar
from hw import ParameterError
from rivulet.sim.amaranth_sim import AmaranthDesign, component_of, run_each_in_amaranth, run_in_amaranth
from rivulet.sim.seeds import base_seed, seeds_for
from rivulet.sim.streams import PROFILES, ScoreboardError, stream_ports
from rivulet.sim.verilator import build_design, run_cocotb, run_directory
from snn import cost
from snn.crossbar import Crossbar
from snn.lif_params import LifParams, loihi, tinyodin

from .bench import (
    Size,
    cost_from,
    make_crossbar_bench,
    max_cycles_for,
    quiet_scenario,
    random_scenario,
)

PRESETS = {
    "tinyodin": tinyodin(threshold=20, leak_amount=3),
    "loihi": loihi(vth=150, dv=300),
}
SIZES = {"16x16b4": Size(16, 16, 4), "64x32b8": Size(64, 32, 8)}
# Corner shapes for the fast tier. With fewer groups than the write distance (3) a pass comes
# back to a group the pass ahead of it has not written yet and must wait: one group, two groups;
# with three it reads the group in the cycle it is written (the transparent read port). One bank.
HAZARDS = {"8x8b8": Size(8, 8, 8), "8x8b4": Size(8, 8, 4), "12x6b2": Size(12, 6, 2)}
CORNERS = {**HAZARDS, "8x4b1": Size(8, 4, 1)}
READBACKS = ("every_step", "end")


def build(preset: str, size: Size, params: LifParams | None = None) -> Crossbar:
    return Crossbar(params or PRESETS[preset], axons=size.axons, neurons=size.neurons, banks=size.banks)


def run_sim(dut: Crossbar, params: LifParams, size: Size, profile: str, seed: int, **options):
    return run_sims(dut, params, size, profile, [seed], **options)[0]


def run_sims(dut: Crossbar | AmaranthDesign, params: LifParams, size: Size, profile: str, seeds,
             **options) -> list:
    """One run per seed, each from reset, in one simulator (the design's own, for an
    :class:`AmaranthDesign`); returns the benches."""
    ports, extra = stream_ports(component_of(dut))
    benches = [make_crossbar_bench(params, size, ports, extra, profile, seed, **options) for seed in seeds]
    run_each_in_amaranth(dut, [(bench, max_cycles_for(size)) for bench in benches])
    return benches


@pytest.mark.parametrize("readback", READBACKS)
@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("size", [*SIZES, *CORNERS])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_amaranth_sim(preset, size, profile, readback):
    """Fast tier: random weights, membranes and spike trains; the model's spikes and membranes."""
    shape = {**SIZES, **CORNERS}[size]
    seeds = seeds_for(f"crossbar:{preset}:{size}:{profile}:{readback}", count=2)
    print(f"crossbar {preset} {size} profile={profile} readback={readback} seeds={seeds}")
    run_sims(_shared_design(preset, size), PRESETS[preset], shape, profile, seeds, readback=readback)


@functools.cache
def _shared_design(preset: str, size: str) -> AmaranthDesign:
    """One simulator per (preset, size) for all the fast tier's profiles, read-back modes and seeds."""
    return AmaranthDesign(build(preset, {**SIZES, **CORNERS}[size]))


@pytest.mark.verilator
@pytest.mark.parametrize("preset,size", [("tinyodin", "16x16b4"), ("loihi", "64x32b8")])
def test_verilator(preset, size):
    """Generated Verilog on Verilator via cocotb: every profile x seed x read-back mode. Each
    preset at one size (a build each): the fast tier runs every preset at every size, and the
    Verilog of one preset at two sizes differs only in its widths and depths."""
    run_verilator(preset, size, SIZES[size])


@pytest.mark.verilator
def test_verilator_two_groups():
    """The read-after-write wait in generated Verilog: Loihi (a spike pass updates the input sum,
    the end-of-step pass multiplies) on two groups, where every pass waits for the one ahead."""
    run_verilator("loihi", "8x8b4", HAZARDS["8x8b4"])


def run_verilator(preset: str, size: str, shape: Size):
    params = PRESETS[preset]
    dut = build(preset, shape)
    ports, extra = stream_ports(dut)
    seeds = seeds_for(f"crossbar-verilator:{preset}:{size}")
    print(f"crossbar {preset} {size} seeds={seeds}")
    config = {"params": dataclasses.asdict(params), "size": astuple(shape),
              "ports": [astuple(port) for port in ports], "extra": extra,
              "profiles": list(PROFILES), "seeds": seeds, "readbacks": list(READBACKS),
              "base_seed": base_seed(), "max_cycles": max_cycles_for(shape)}
    case = f"crossbar-{preset}-{size}"
    built = build_design(case, dut)
    with run_directory(case) as directory:
        summary = directory / "summary.jsonl"
        run_cocotb(built, "testbench.crossbar.tb_crossbar", directory,
                   {"RIVULET_CROSSBAR_BENCH": json.dumps(config), "RIVULET_BENCH_SUMMARY": str(summary)})
        records = [json.loads(line) for line in summary.read_text().splitlines()]
    assert len(records) == len(PROFILES) * len(seeds) * len(READBACKS)
    assert sum(record["spikes"] for record in records) > 0


# --- cost ----------------------------------------------------------------------------------

@pytest.mark.parametrize("events", [0, 1, 5])
@pytest.mark.parametrize("size", [Size(16, 16, 4), Size(8, 8, 8), Size(8, 8, 4), Size(12, 6, 2),
                                  Size(8, 16, 1), Size(16, 32, 2)])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_cost_without_stalls_is_the_documented_one(preset, size, events):
    """No stalls, no output spikes: an input token every P = max(N/B, 3) cycles, a timestep
    every (E+1) P cycles, END_OF_STEP E P + N/B + 4 cycles after an idle tile takes the first
    token (the first pass from idle does not wait, so its next token comes N/B cycles later).
    ``snn.cost`` says the same (docs/crossbar.md)."""
    params = PRESETS[preset]
    dut = build(preset, size)
    ports, extra = stream_ports(dut)
    scenario = quiet_scenario(params, size, events, steps=4, rng=random.Random(events))
    bench = make_crossbar_bench(params, size, ports, extra, "no_stall", 0, readback="end",
                                scenario=scenario)
    run_in_amaranth(dut, bench, max_cycles=max_cycles_for(size))
    measured = cost_from(bench)
    assert measured.spikes == 0
    G, P = size.neurons // size.banks, max(size.neurons // size.banks, 3)
    assert G == cost.cycles_per_group_pass(size.neurons, size.banks)
    assert P == cost.cycles_per_event(size.neurons, size.banks)
    for step, tokens in enumerate(measured.event_cycles):
        gaps = [b - a for a, b in zip(tokens, tokens[1:], strict=False)]
        assert gaps == ([G] + [P] * (events - 1) if step == 0 and events else [P] * events)
    periods = [b - a for a, b in zip(measured.end_cycles, measured.end_cycles[1:], strict=False)]
    assert periods == [(events + 1) * P] * 3
    first = measured.event_cycles[0][0]      # the tile was idle: the preload had finished
    assert measured.end_cycles[0] - first == cost.cycles_per_timestep(events, size.neurons, size.banks)
    assert cost.cycles_per_timestep(events, size.neurons, size.banks) == events * P + G + 4


@pytest.mark.parametrize("preset", list(PRESETS))
def test_output_spikes_cost_at_most_one_cycle_each(preset):
    """With spikes, each one delays the timestep by at most a cycle (the output drains one id
    per cycle while the pass goes on)."""
    params, size = PRESETS[preset], Size(16, 16, 4)
    dut = build(preset, size)
    ports, extra = stream_ports(dut)
    for seed in seeds_for(f"crossbar-cost-spikes:{preset}", count=4):
        rng = random.Random(seed)
        weights = np.array([[rng.choice((0, params.w_max)) for _ in range(size.neurons)]
                            for _ in range(size.axons)], dtype=np.int64)
        scenario = quiet_scenario(params, size, 4, steps=4, rng=rng, weights=weights)
        bench = make_crossbar_bench(params, size, ports, extra, "no_stall", seed, readback="end",
                                    scenario=scenario)
        run_in_amaranth(dut, bench, max_cycles=max_cycles_for(size))
        measured = cost_from(bench)
        base = cost.cycles_per_timestep(4, size.neurons, size.banks)
        spikes = [len(ids) for ids in scenario.spikes]
        print(f"seed={seed} spikes per step {spikes}")
        assert sum(spikes) > 0
        first = measured.event_cycles[0][0]
        assert base <= measured.end_cycles[0] - first <= base + spikes[0]


# --- the checks can fail ----------------------------------------------------------------------

def test_wrong_compare_is_caught():
    """The tile built with ``>`` against tinyODIN's ``>=`` model: the scoreboard must fail."""
    params, size = PRESETS["tinyodin"], SIZES["16x16b4"]
    mutant = build("tinyodin", size, dataclasses.replace(params, compare=">"))
    for seed in seeds_for("crossbar-mutant-compare", count=3):
        print(f"mutant compare '>' seed={seed}")
        # Caught in timestep 0, where the neurons on the threshold are: by a missing spike, or
        # (if a later event makes the mutant fire the same ids) by the membranes read back.
        with pytest.raises(ScoreboardError, match="timestep 0: .*(the model expects SPIKE|the model has)"):
            run_sim(mutant, params, size, "random_stall_50", seed)


# --- read after write on few groups ----------------------------------------------------------

def _back_to_back(preset: str, size: Size, seed: int):
    """A bench whose passes follow each other without a gap: no stalls, free-running timesteps
    of up to 12 events (repeated axons included)."""
    params = PRESETS[preset]
    dut = build(preset, size)
    ports, extra = stream_ports(dut)
    rng = random.Random(seed)
    scenario = random_scenario(params, size, rng, steps=6, max_events=12)
    while max(len(events) for events in scenario.steps) < 4:
        # Back-to-back passes need a timestep of several events (the first two from idle are
        # G cycles apart); about one draw in nine has none, so draw again from the same seed.
        scenario = random_scenario(params, size, rng, steps=6, max_events=12)
    bench = make_crossbar_bench(params, size, ports, extra, "no_stall", seed, readback="end",
                                scenario=scenario)
    return dut, bench


@pytest.mark.parametrize("size", list(HAZARDS))
@pytest.mark.parametrize("preset", list(PRESETS))
def test_back_to_back_passes_on_few_groups(preset, size):
    """Each pass reads the groups the pass ahead of it is still updating: with one or two groups
    it must wait for the write, with three it reads in the cycle of the write. Some events must
    have been taken exactly P = 3 cycles apart, i.e. the passes really were back to back."""
    shape = HAZARDS[size]
    for seed in seeds_for(f"crossbar-back-to-back:{preset}:{size}", count=3):
        print(f"back to back {preset} {size} seed={seed}")
        dut, bench = _back_to_back(preset, shape, seed)
        run_in_amaranth(dut, bench, max_cycles=max_cycles_for(shape, max_events=12))
        gaps = {b - a for tokens in cost_from(bench).event_cycles
                for a, b in zip(tokens, tokens[1:], strict=False)}
        assert cost.cycles_per_event(shape.neurons, shape.banks) == 3 in gaps


@pytest.mark.parametrize("size", list(HAZARDS))
@pytest.mark.parametrize("preset", list(PRESETS))
def test_missing_read_after_write_handling_is_caught(monkeypatch, preset, size):
    """The tile elaborated as if a group were written one cycle after its read (no wait for the
    pass ahead, and no transparent read port except with one group): a pass then reads a
    membrane (or input sum) the pass ahead has not written yet, and the scoreboard must fail."""
    monkeypatch.setattr(snn.crossbar, "WRITE_DISTANCE", 1)
    shape = HAZARDS[size]
    for seed in seeds_for(f"crossbar-mutant-hazard:{preset}:{size}", count=2):
        print(f"mutant without read-after-write handling {preset} {size} seed={seed}")
        dut, bench = _back_to_back(preset, shape, seed)
        with pytest.raises(ScoreboardError):
            run_in_amaranth(dut, bench, max_cycles=max_cycles_for(shape, max_events=12))


# --- bad parameters ---------------------------------------------------------------------------

@pytest.mark.parametrize("arguments, message", [
    (dict(params=dataclasses.replace(tinyodin(), refractory=1)), "refractory=1 is not supported"),
    (dict(neurons=16, banks=3), "banks=3 does not divide neurons=16"),
    (dict(axons=0), "axons=0 is not allowed"),
    (dict(params="tinyodin"), "is not a LifParams"),
])
def test_bad_parameters_are_refused(arguments, message):
    values = {"params": tinyodin(), "axons": 4, "neurons": 8, "banks": 2, **arguments}
    params = values.pop("params")
    with pytest.raises(ParameterError, match=message):
        Crossbar(params, **values)
