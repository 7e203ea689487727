"""Dense int8 layers lowered into phases (dense/): every layer shape against numpy on the golden
model, the digits MLP and random networks on the RTL under host stalls, and every refusal.

The reference is written here in numpy from docs/dense.md's arithmetic, not taken from dense/.
"""

import functools
import random
import re
from pathlib import Path

import numpy as np
import pytest

from dense import DenseLayer, DenseNetwork, LoweringError, NetworkError, lower_network, quantise
from rivulet.sim.fabric_run import run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rsn.cycle_model import predict_cycles
from rsn.fabric_spec import default_fabric, load_fabric, parse_fabric
from rsn.model import FabricModel
from rsn.program import compile_program
from rsn.transitions import transition_bubbles
from testbench.rsn.test_phases import _image_phases

REPOSITORY = Path(__file__).resolve().parents[2]
RIPPLE_FABRIC = REPOSITORY / "examples" / "fabrics" / "ripple.toml"


def reference(network_layers, bias_input, inputs):
    """int8 dot products (+ bias x bias_input), 32-bit wrap, ReLU, arithmetic shift, clip."""
    values = np.asarray(inputs, dtype=np.int64)
    for weights, bias, relu, shift, clip in network_layers:
        sums = values @ np.asarray(weights, dtype=np.int64).T
        if bias is not None:
            sums = sums + np.asarray(bias, dtype=np.int64) * bias_input
        sums = (sums + 2**31) % 2**32 - 2**31
        if relu:
            sums = np.maximum(sums, 0)
        sums = sums >> shift
        if clip is not None:
            sums = np.clip(sums, clip[0], clip[1])
        values = sums
    return values


def random_network(rng: np.random.Generator, sizes, *, bias=True, bias_input=1):
    """Layers of ``sizes`` with random int8 weights; hidden layers requantise into int8."""
    described = []
    for k in range(len(sizes) - 1):
        last = k == len(sizes) - 2
        weights = rng.integers(-128, 128, size=(sizes[k + 1], sizes[k]))
        biases = rng.integers(-128, 128, size=sizes[k + 1]) if bias else None
        relu = bool(rng.integers(2)) if not last else False
        clip = None if last else ((0, 127) if relu else (-128, 127))
        described.append((weights, biases, relu, 0 if last else int(rng.integers(4, 12)), clip))
    network = DenseNetwork(tuple(DenseLayer(w, b, relu=r, shift=s, clip=c) for w, b, r, s, c in described),
                           bias_input)
    return network, described


def _model_outputs(lowered, spec):
    compiled = compile_program(lowered.program, spec)
    result = FabricModel(spec).run(compiled.image, compiled.program.host_inputs)
    assert result.done
    return compiled, lowered.outputs(result.outputs)


# (sizes, vectors, bias): one layer, several, a single output, a vector count that leaves lanes
# idle in the last pass, a layer whose input fills the mac's buffer, one whose 390 rows need two
# streams (65535 // 169 = 387 rows per compute phase), the digits MLP's shape, and layers wider
# than the buffer of 256: split in two round the ring of three lanes and, in the last pass of
# one vector, through a borrowed bank; split in three without a bias, then a normal layer.
SHAPES = [((8, 4), 3, True), ((5, 7, 3), 4, False), ((16, 12, 8, 1), 5, True), ((255, 6, 2), 2, True),
          ((168, 390), 1, True), ((64, 64, 32, 10), 3, True), ((300, 20, 10), 4, True),
          ((520, 9, 4), 2, False)]


@pytest.mark.parametrize("sizes,vectors,bias", SHAPES, ids=["-".join(map(str, s[0])) for s in SHAPES])
def test_every_layer_shape_matches_numpy_on_the_golden_model(sizes, vectors, bias):
    (seed,) = seeds_for(f"dense:{sizes}", count=1)
    rng = np.random.default_rng(seed)
    network, described = random_network(rng, sizes, bias=bias, bias_input=int(rng.integers(1, 128)))
    inputs = rng.integers(-128, 128, size=(vectors, sizes[0]))
    expected = reference(described, network.bias_input, inputs)
    lowered = lower_network(network, inputs, default_fabric(), expected=expected)
    print(f"seed {seed}: {sizes}, {vectors} vectors, {lowered.lanes} lanes, "
          f"{len(lowered.program.graph.phases())} phases")
    compiled, outputs = _model_outputs(lowered, default_fabric())
    assert np.array_equal(outputs, expected)
    phases = _image_phases(compiled)
    assert phases == sorted(phases)


ONE_LANE = {"rows": 1, "cols": 3, "tiles": ["mem mac alu"],
            "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                           {"name": "out0", "tile": [0, 2], "side": "E", "direction": "out"}]}


def test_one_lane_and_one_host_port_in_each_direction():
    """A 1x3 fabric (one mem, mac and alu, one port each way): vectors and weights share in0."""
    spec = parse_fabric(ONE_LANE, "1x3 test fabric")
    rng = np.random.default_rng(5)
    network, described = random_network(rng, (6, 5, 4))
    inputs = rng.integers(-128, 128, size=(3, 6))
    lowered = lower_network(network, inputs, spec, expected=reference(described, 1, inputs))
    assert lowered.lanes == 1 and set(lowered.program.host_inputs) == {"in0"}
    _, outputs = _model_outputs(lowered, spec)
    assert np.array_equal(outputs, reference(described, 1, inputs))


def test_a_mac_starts_its_next_phase_while_the_last_one_ends():
    """Overlapped transitions, per the cycle model's record: once the image's dispatch is ahead of
    the units (the second pass), every compute phase's weights (multicast to all lanes) start as
    soon as the last mac has loaded its vector, and that mac takes its first weight at most two
    cycles after its LOAD's last word (its compute micro-op waits in the queue). Each micro-op's
    tokens come after the previous one's, and a mac has one transition per change of phase."""
    rng = np.random.default_rng(11)
    network, _ = random_network(rng, (20, 12, 6))
    lowered = lower_network(network, rng.integers(-128, 128, size=(6, 20)), default_fabric())
    compiled = compile_program(lowered.program, default_fabric())
    prediction = predict_cycles(compiled)
    transitions = [each for each in transition_bubbles(compiled, prediction) if each.kind == "mac"]
    tiles = compiled.routing.placement.tiles
    for node in compiled.program.graph.fu_nodes():
        if node.kind == "mac":
            phases = node.phase_of_uops()
            changes = sum(phases[k] != phases[k - 1] for k in range(1, len(phases)))
            assert len([each for each in transitions if each.tile == tiles[node.name]]) == changes
    into_compute = {}
    for each in transitions:
        windows = prediction.work[each.tile]
        assert all(windows[k - 1][1] < windows[k][0] for k in range(1, len(windows)))
        if lowered.phase_roles[each.after].startswith("compute") and lowered.phase_passes[each.after] == 1:
            into_compute.setdefault(each.after, []).append(each.bubble)
    assert len(into_compute) == len(network.layers)
    for phase, bubbles in into_compute.items():
        assert len(bubbles) == 3 and min(bubbles) <= 2, (lowered.phase_roles[phase], bubbles)


@functools.cache
def _digits_example():
    """The example module, loaded once per process: its ``trained`` cache then trains once."""
    import importlib.util

    path = REPOSITORY / "examples" / "digits_mlp.py"
    spec = importlib.util.spec_from_file_location("digits_mlp_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _digits_subset(images: int):
    example = _digits_example()
    result, labels = example.lowered(default_fabric(), images)
    quantised, inputs, _, _ = example.trained()
    return result, example.int8_logits(quantised.network, inputs[:images]), labels


@pytest.mark.long(0)
def test_the_digits_mlp_and_random_networks_on_the_rtl_under_host_stalls():
    """The digits MLP on a few test images, random networks and one whose first layer is split
    over two mac buffers, on the RTL under random host profiles: every vector's outputs equal
    numpy's, and the RTL's counters equal the model's."""
    (seed,) = seeds_for("dense:rtl", count=1)
    rng = random.Random(seed)
    spec = default_fabric()
    cases = [_digits_subset(6)[0]]
    for k in range(3):
        sizes = [rng.randint(2, 40) for _ in range(rng.randint(2, 4))]
        network, described = random_network(np.random.default_rng(rng.getrandbits(32)), sizes)
        inputs = np.array([[rng.randint(-128, 127) for _ in range(sizes[0])]
                           for _ in range(rng.randint(1, 7))])
        cases.append(lower_network(network, inputs, spec, expected=reference(described, 1, inputs),
                                   name=f"dense-random-{k}"))
    network, described = random_network(np.random.default_rng(rng.getrandbits(32)), (300, 6, 3))
    inputs = np.array([[rng.randint(-128, 127) for _ in range(300)] for _ in range(4)])
    cases.append(lower_network(network, inputs, spec, expected=reference(described, 1, inputs),
                               name="dense-split"))
    compiled = [compile_program(case.program, spec, seed=k) for k, case in enumerate(cases)]
    profiles = [rng.choice(list(PROFILES)) for _ in compiled]
    seeds = [rng.getrandbits(32) for _ in compiled]
    runs = zip(cases, profiles, seeds, strict=True)
    print(f"seed {seed}: " + ", ".join(f"{case.program.name} {profile} {run_seed}"
                                       for case, profile, run_seed in runs))
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds, case="dense-rtl")
    for case, each, rtl in zip(cases, compiled, results, strict=True):
        assert rtl.outputs == case.program.expected, case.program.name
        model = FabricModel(spec).run(each.image, each.program.host_inputs)
        for tile in rtl.firings:
            counters = (model.firings[tile], model.link_beats[tile])
            assert (rtl.firings[tile], rtl.link_beats[tile]) == counters, (case.program.name, tile)


def test_the_digits_int8_network_classifies_like_the_float_one():
    """On the golden model, 12 test images' logits equal numpy's int8 ones; over the whole test
    split (numpy only), the int8 network is at most 3 points less accurate than the float one."""
    result, logits, _ = _digits_subset(12)
    assert [layer.outputs for layer in result.network.layers] == [64, 32, 10]
    _, outputs = _model_outputs(result, default_fabric())
    assert np.array_equal(outputs, logits)
    example = _digits_example()
    quantised, inputs, labels, float_accuracy = example.trained()
    int8_accuracy = np.mean(example.int8_logits(quantised.network, inputs).argmax(axis=1) == labels)
    print(f"digits: float {float_accuracy:.4f}, int8 {int8_accuracy:.4f} on {len(labels)} test images")
    assert float_accuracy >= 0.9 and int8_accuracy >= float_accuracy - 0.03


def test_quantise_uses_the_int8_range_and_the_least_shift():
    rng = np.random.default_rng(11)
    layers = [(rng.normal(size=(12, 9)), rng.normal(size=12) * 0.1), (rng.normal(size=(4, 12)), None)]
    calibration = rng.uniform(0, 3, size=(50, 9))
    quantised = quantise(layers, calibration)
    first = quantised.network.layers[0]
    assert np.abs(first.weights).max() == 127 and first.relu and first.clip == (0, 127)
    x = quantised.inputs(calibration)
    assert x.max() == 127
    sums = np.maximum(x @ first.weights.T + first.bias * quantised.network.bias_input, 0)
    assert (sums.max() >> first.shift) <= 127 < (sums.max() >> max(first.shift - 1, 0)) or first.shift == 0
    assert quantised.clipped_biases == 0


@pytest.mark.parametrize("make,message", [
    (lambda: DenseLayer([[1.5, 2.0]]), "must hold integers"),
    (lambda: DenseLayer([[1, 200]]), "must be int8"),
    (lambda: DenseLayer([[1, 2]], bias=[1, 2]), "2 biases for 1 outputs"),
    (lambda: DenseLayer([[1]], shift=40), "shift=40"),
    (lambda: DenseLayer([[1]], clip=(5, 1)), "clip=(5, 1)"),
    (lambda: DenseNetwork(()), "no layers"),
    (lambda: DenseNetwork((DenseLayer([[1, 2]], clip=(0, 127)), DenseLayer([[1, 2, 3]]))),
     "layer 1 takes 3 inputs but layer 0 makes 1"),
    (lambda: DenseNetwork((DenseLayer([[1, 2]]), DenseLayer([[1]]))), "does not clip into int8"),
    (lambda: DenseNetwork((DenseLayer([[1]]),), bias_input=0), "bias_input=0"),
])
def test_bad_networks_are_refused_naming_the_fault(make, message):
    with pytest.raises(NetworkError, match=re.escape(message)):
        make()


def _lowering(network, inputs, spec=None, **options):
    return lower_network(network, inputs, spec or default_fabric(), **options)


def _zeros(*shape):
    return np.zeros(shape, dtype=int)


def _ones(*shape):
    return np.ones(shape, dtype=int)


def _one_layer(rows: int, inputs: int):
    return DenseNetwork((DenseLayer(_ones(rows, inputs)),))


@pytest.mark.parametrize("case,message", [
    (lambda: _lowering(_one_layer(2, 300), _zeros(1, 300), lanes=1),
     "layer 0: its 300 input words exceed a mac's buffer of 256, so its partial sums are added on a "
     "second lane; use lanes >= 2 or a fabric with [mac] depth >= 300"),
    (lambda: _lowering(_one_layer(2, 300), _zeros(1, 300), parse_fabric(ONE_LANE, "1x3")),
     "use lanes >= 2"),
    (lambda: _lowering(DenseNetwork((DenseLayer(_ones(900, 200), clip=(0, 127)), DenseLayer(_ones(2, 900)))),
                       _zeros(1, 200)),
     "needs 1114 words per bank (200 + 900 layer inputs with their bias words, + 2 outputs, + 8 partial "
     "sums and 4 ones)"),
    (lambda: _lowering(_one_layer(800, 250), _zeros(1, 250)), "needs 1050 words per bank"),
    (lambda: _lowering(_one_layer(1, 2), [[1, 2, 3]]), "vectors of 3 values"),
    (lambda: _lowering(_one_layer(1, 2), [[1, 2]], lanes=4), "has 3 lanes"),
    (lambda: _lowering(_one_layer(1, 2), [[1, 2]], load_fabric(RIPPLE_FABRIC)), "at least one working mem"),
    (lambda: _lowering(_one_layer(1, 2), [[1, 2]], expected=np.zeros((2, 1))),
     "expected outputs have shape (2, 1)"),
])
def test_what_the_fabric_cannot_hold_is_refused_before_anything_is_placed(case, message):
    with pytest.raises(LoweringError, match=re.escape(message)):
        case()
