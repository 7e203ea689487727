"""The LIF crossbar model against hand-computed cases (one per parameter) and a naive reference."""

import dataclasses

import numpy as np
import pytest

from rivulet.sim.seeds import seeds_for
from snn import cost
from snn.lif_model import LifCrossbarModel
from snn.lif_params import LifParams, loihi, tinyodin
from testbench.snn.naive_lif import run_neuron


def one_neuron(column, steps, **fields):
    """Run a single neuron whose axon i has weight column[i]; returns (spike lists, membranes)."""
    params = fields.pop("params", None) or LifParams(**fields)
    model = LifCrossbarModel(np.array(column).reshape(-1, 1), params)
    results = model.run(steps)
    return [list(s) for s, _ in results], [int(v[0]) for _, v in results]


def test_compare_ge_fires_at_threshold_gt_does_not():
    assert one_neuron([5], [[0]], threshold=5, compare=">=") == ([[0]], [0])
    assert one_neuron([5], [[0]], threshold=5, compare=">") == ([[]], [5])
    assert one_neuron([6], [[0]], threshold=5, compare=">") == ([[0]], [0])


def test_reset_zero_versus_subtract():
    assert one_neuron([7], [[0]], threshold=5, reset="zero") == ([[0]], [0])
    assert one_neuron([7], [[0]], threshold=5, reset="subtract") == ([[0]], [2])


# A 4-bit membrane (-8..7) that never fires (v > 7 is impossible): axons carry +1, -1, +7, -8.
BOUNDARY = dict(membrane_width=4, weight_width=4, threshold=7, compare=">")


@pytest.mark.parametrize("overflow, expected", [
    ("saturate", [7, 7, 6, -2, -8, -8, -7]),
    ("wrap", [7, -8, 7, -1, 7, 6, 7]),
    ("saturate_symmetric", [7, 7, 6, -2, -7, -7, -6]),
])
def test_overflow_at_the_exact_boundaries(overflow, expected):
    """+7 reaches the top exactly; +1 overflows (7 / -8 / 7); -1 (6 / 7 / 6); -8 (-2 / -1 / -2);
    -8 again underflows (-8 / 7 / -7); -1 (-8 / 6 / -7); +1 (-7 / 7 / -6)."""
    steps = [[2], [0], [1], [3], [3], [1], [0]]
    _, trace = one_neuron([1, -1, 7, -8], steps, overflow=overflow, **BOUNDARY)
    assert trace == expected


def test_overflow_is_applied_per_event_not_per_step():
    # 7 + 7 - 8: per-event saturation gives 7 then -1; the exact sum would be 6.
    _, trace = one_neuron([7, -8], [[0, 0, 1]], overflow="saturate", **BOUNDARY)
    assert trace == [-1]
    _, trace = one_neuron([7, -8], [[0, 0, 1]], overflow="saturate", integrate="step", **BOUNDARY)
    assert trace == [6]


def test_shift_leak_rounds_toward_minus_infinity():
    big = dict(membrane_width=8, weight_width=8, threshold=127, compare=">", leak="shift", leak_amount=2)
    # -5 >> 2 = -2 so -5 -> -3; then -3 -> -2 -> -1 -> 0 (since -1 >> 2 = -1).
    assert one_neuron([-5], [[0], [], [], [], []], **big)[1] == [-3, -2, -1, 0, 0]
    # 5 -> 4 -> 3, then 3 >> 2 = 0 so it stays at 3 for ever.
    assert one_neuron([5], [[0], [], [], []], **big)[1] == [4, 3, 3, 3]


def test_step_leak_stops_at_zero_from_both_sides():
    step = dict(membrane_width=8, weight_width=8, threshold=127, compare=">", leak="step", leak_amount=3)
    assert one_neuron([-5], [[0], [], []], **step)[1] == [-2, 0, 0]
    assert one_neuron([7], [[0], [], [], []], **step)[1] == [4, 1, 0, 0]


def test_multiply_leak_truncates_toward_zero():
    mul = dict(membrane_width=16, weight_width=8, threshold=1000, compare=">", leak="multiply")
    assert one_neuron([7], [[0]], leak_amount=2048, **mul)[1] == [3]
    assert one_neuron([-7], [[0]], leak_amount=2048, **mul)[1] == [-3]
    assert one_neuron([-100], [[0]], leak_amount=1000, **mul)[1] == [-75]     # -75.58 -> -75


def test_refractory_step_discards_input_and_freezes_state():
    steps = [[0]] * 5
    assert one_neuron([4], steps, threshold=3, refractory=0)[0] == [[0]] * 5
    spikes, trace = one_neuron([4], steps, threshold=3, refractory=1)
    assert spikes == [[0], [], [0], [], [0]]
    assert trace == [0, 0, 0, 0, 0]
    # Subtract reset keeps a residual, untouched by the leak through the frozen step:
    # 5 -> leak 4 -> fire 1; frozen 1; 1+5 = 6 -> 5 -> fire 2; frozen 2; 7 -> 6 -> fire 3.
    spikes, trace = one_neuron([5], steps, threshold=3, reset="subtract", refractory=1,
                               leak="step", leak_amount=1)
    assert spikes == [[0], [], [0], [], [0]]
    assert trace == [1, 1, 2, 2, 3]


def test_fire_per_event_versus_per_step():
    steps = [[0, 0, 1]]
    assert one_neuron([4, -4], steps, threshold=5, fire="event") == ([[0]], [-4])
    assert one_neuron([4, -4], steps, threshold=5, fire="step") == ([[]], [4])


def test_tinyodin_preset():
    p = tinyodin(threshold=10, leak_amount=3)
    assert (p.membrane_width, p.weight_width, p.compare, p.reset, p.overflow) == (12, 4, ">=", "zero",
                                                                                    "saturate")
    # 7 then 14 >= 10: fires on the second event, mid-step; leak leaves 0.
    # Then -8 -> leak -5 -> -2 -> 0, stopping at zero.
    spikes, trace = one_neuron([7, -8], [[0, 0], [1], [], [], []], params=p)
    assert spikes == [[0], [], [], [], []]
    assert trace == [0, -5, -2, 0, 0]
    # Saturation at -2048 (0x800), per event.
    assert one_neuron([7, -8], [[1] * 300], params=tinyodin(threshold=10))[1] == [-2048]
    # Threshold 0: every update that leaves v >= 0 fires, so a zero-weight event and the leak both
    # fire a resting neuron: two spikes in one timestep, as tinyODIN's per-update compare does.
    assert one_neuron([0], [[0]], params=tinyodin(threshold=0))[0] == [[0, 0]]
    with pytest.raises(ValueError, match="7-bit leak_str"):
        tinyodin(leak_amount=128)


def test_loihi_preset():
    p = loihi(vth=1, dv=0)
    assert (p.threshold, p.compare, p.input_shift, p.membrane_width) == (64, ">", 6, 24)
    # One event of weight 1 = 64, not > 64; the second step reaches 128 > 64 and resets.
    assert one_neuron([1], [[0], [0]], params=p) == ([[], [0]], [64, 0])
    # Leak before input: 64 -> 32 (dv = 2048), plus 64 = 96 > 64.
    assert one_neuron([1], [[0], [0]], params=loihi(vth=1, dv=2048)) == ([[], [0]], [64, 0])
    # Truncation toward zero: -192 * (4096 - 1000) / 4096 = -145.125 -> -145, then -64 more.
    assert one_neuron([-3, -1], [[0], [1]], params=loihi(vth=1, dv=1000))[1] == [-192, -209]
    # Symmetric clip: 8 steps of 128 events of -128 << 6 reach -2**23, clipped to -(2**23 - 1).
    trace = one_neuron([-128], [[0] * 128] * 8, params=loihi(vth=1))[1]
    assert trace[6] == -7 * 2**20 and trace[7] == -(2**23 - 1)


def test_validation_errors_name_the_parameter():
    with pytest.raises(ValueError, match="compare"):
        LifParams(compare="=>")
    with pytest.raises(ValueError, match="threshold=4096"):
        LifParams(membrane_width=12, threshold=4096)
    with pytest.raises(ValueError, match="fire must be 'step'"):
        LifParams(integrate="step", fire="event")
    with pytest.raises(ValueError, match="leak_amount"):
        LifParams(leak="shift", leak_amount=0)
    with pytest.raises(ValueError, match="4-bit signed range -8..7"):
        LifCrossbarModel(np.array([[8]]), LifParams())
    with pytest.raises(ValueError, match="axon id 3"):
        LifCrossbarModel(np.zeros((3, 2), dtype=int), LifParams()).step([3])


def test_cost_model():
    assert cost.cycles_per_event(128) == 128
    assert cost.cycles_per_event(128, banks=4) == 32
    assert cost.cycles_per_event(100, banks=3) == 34
    assert cost.cycles_per_timestep(2, 128, banks=4) == 3 * 32 + 4
    # Fewer groups than the write distance: a pass waits for the one ahead to write its groups.
    assert cost.cycles_per_event(16, banks=8) == cost.WRITE_DISTANCE == 3
    assert cost.cycles_per_timestep(2, 16, banks=8) == 2 * 3 + 2 + 4
    assert cost.tinyodin_cycles_per_event(256) == 513
    assert cost.tinyodin_cycles_per_timestep(2, 256) == 2 * 513 + 512


def _random_params(rng):
    width = int(rng.integers(4, 13))
    integrate = str(rng.choice(["event", "step"]))
    # A step's input sum (at most 3 events) must fit the membrane: 2 bits of headroom.
    weight = int(rng.integers(2, min(width - (2 if integrate == "step" else 0), 6) + 1))
    leak = str(rng.choice(["none", "shift", "step", "multiply"]))
    amount = {"none": 0, "shift": int(rng.integers(1, width)), "step": int(rng.integers(0, 6)),
              "multiply": int(rng.integers(0, 4096))}[leak]
    return LifParams(
        membrane_width=width, weight_width=weight, threshold=int(rng.integers(0, 2 ** (width - 1))),
        compare=str(rng.choice([">=", ">"])), spike_requires_nonnegative=bool(rng.integers(2)),
        reset=str(rng.choice(["zero", "subtract"])),
        overflow=str(rng.choice(["saturate", "saturate_symmetric", "wrap"])),
        leak=leak, leak_amount=amount, integrate=integrate,
        fire="step" if integrate == "step" else str(rng.choice(["event", "step"])),
        leak_first=integrate == "step" and bool(rng.integers(2)),
        input_shift=int(rng.integers(0, 2)) if width - weight >= 6 else 0,
        refractory=int(rng.integers(2)))


@pytest.mark.parametrize("seed", seeds_for("snn-lif-random", 4))
def test_random_against_naive_reference(seed):
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    for _ in range(60):
        p = _random_params(rng)
        axons, neurons = int(rng.integers(1, 7)), int(rng.integers(1, 6))
        weights = rng.integers(p.w_min, p.w_max + 1, size=(axons, neurons))
        # At most 3 events a step keeps a step's input sum inside the membrane range.
        steps = [list(rng.integers(0, axons, size=int(rng.integers(0, 4)))) for _ in range(25)]
        results = LifCrossbarModel(weights, p).run(steps)
        for n in range(neurons):
            counts, trace = run_neuron(p, [int(w) for w in weights[:, n]], steps)
            assert [int(v[n]) for _, v in results] == trace, (p, n)
            assert [int(np.count_nonzero(s == n)) for s, _ in results] == counts, (p, n)
        for s, _ in results:
            if p.fire == "step":
                assert list(s) == sorted(set(s))


def test_nonnegative_rule_is_implied_by_a_signed_compare():
    """tinyODIN needs its sign check because its compare is unsigned; ours is signed with a
    threshold >= 0, so the flag cannot change any result. Kept so the preset reads like the RTL."""
    rng = np.random.default_rng(0)
    p = tinyodin(threshold=3, leak_amount=1)
    weights = rng.integers(-8, 8, size=(5, 6))
    steps = [list(rng.integers(0, 5, size=4)) for _ in range(30)]
    a = LifCrossbarModel(weights, p).run(steps)
    b = LifCrossbarModel(weights, dataclasses.replace(p, spike_requires_nonnegative=False)).run(steps)
    assert all((x[0] == y[0]).all() and (x[1] == y[1]).all() for x, y in zip(a, b, strict=True))
