# amaranth: UnusedElaboratable=no
"""SNN programs on crossbar tiles: random networks and spike trains on 1, 2 and 4 tiles.

The reference is the mapped network simulated with ``LifCrossbarModel`` (``snn.lower``), and for
per-step arithmetic (Loihi: the order of a step's events cannot matter) also the unmapped network
simulated population by population here. The golden fabric model and the RTL must give its
spikes at every timestep (the output words, end-of-step words included) and, read back through
the control plane, its final membranes, with random back-pressure on the host streams.
"""

import dataclasses
import random

import numpy as np
import pytest

from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rsn.fabric_spec import load_fabric
from rsn.model import FabricModel
from rsn.readout import model_register_reads, register_reads, split_register_reads
from snn.lif_model import LifCrossbarModel
from snn.lower import LoweringError, compile_lowered, lower_network
from snn.network import Network

FABRIC = load_fabric("examples/fabrics/snn.toml")
# (layer sizes, cluster size): the tiles each shape maps onto.
SHAPES = {1: ((12, 16), 16), 2: ((8, 8, 8), 8), 4: ((8, 16, 16), 8)}


def random_case(seed: int, tiles: int, spec=FABRIC, steps: int = 5):
    rng = np.random.default_rng(seed)
    sizes, cluster_size = SHAPES[tiles]
    sizes = (int(rng.integers(sizes[0] // 2, sizes[0] + 1)), *sizes[1:])
    p = spec.parameters("xbar").lif_params
    low = p.w_min if p.integrate == "event" else p.w_min // 4
    high = p.w_max if p.integrate == "event" else p.w_max // 4
    weights = [rng.integers(low, high + 1, size=(a, b)) * (rng.random((a, b)) < 0.7)
               for a, b in zip(sizes, sizes[1:], strict=False)]
    net = Network.from_layers(weights, p)
    rate = rng.uniform(0.1, 0.6)
    inputs = [[int(n) for n in rng.permutation(sizes[0])[:rng.binomial(sizes[0], rate)]]
              for _ in range(steps)]
    lowered = lower_network(net, spec, inputs, name=f"snn{tiles}-{seed}", cluster_size=cluster_size)
    assert len(lowered.clusters) == tiles
    return net, inputs, lowered


def recurrent_case(seed: int, spec=FABRIC, steps: int = 6, self_only: bool = False):
    """input(4) -> a(5), a -> a with delay 1, and unless ``self_only``: a -> b(5), b -> a with delay 1.

    The axons are 4 + 5 + 5 = 14 of 16. tinyODIN may fire a neuron on every event, so a draw
    whose recurrent streams carry more words in a timestep than the fabric's routes hold (the
    lowering refuses those, see test_recurrent_buffer_check_guards_a_real_deadlock) is redrawn
    from the same generator."""
    rng = np.random.default_rng(seed)
    p = spec.parameters("xbar").lif_params
    scale = 1 if p.integrate == "event" else 4

    def weights(a, b, low, high, density):
        return rng.integers(low // scale, high // scale + 1, size=(a, b)) * (rng.random((a, b)) < density)

    for _attempt in range(50):
        net = Network()
        net.add_input("input", 4)
        net.add_population("a", 5, p, output=self_only)
        net.connect_dense("input", "a", weights(4, 5, 0, p.w_max, 0.7))
        net.connect_dense("a", "a", weights(5, 5, p.w_min, p.w_max // 2, 0.5), delay=1)
        if not self_only:
            net.add_population("b", 5, p, output=True)
            net.connect_dense("a", "b", weights(5, 5, 0, p.w_max, 0.7))
            net.connect_dense("b", "a", weights(5, 5, p.w_min, p.w_max // 2, 0.5), delay=1)
        inputs = [[int(n) for n in rng.permutation(4)[:rng.binomial(4, 0.5)]] for _ in range(steps)]
        try:
            lowered = lower_network(net, spec, inputs, name=f"snn-rec-{seed}", cluster_size=8)
        except LoweringError as error:
            if "recurrent" not in str(error):
                raise
            continue
        assert len(lowered.clusters) == (1 if self_only else 2)
        return net, inputs, lowered
    raise AssertionError(f"seed={seed}: no draw fits the recurrent buffers")


def population_reference(net: Network, inputs, params):
    """Unmapped: each population one crossbar of all its sources, events by source population;
    a delay-1 projection delivers the spikes its source sent in the previous timestep."""
    pre, post, weight = net.synapses()
    models, spikes = {}, {}
    for name, pop in net.populations.items():
        if pop.params is None:
            continue
        w = np.zeros((net.size, pop.size), dtype=np.int64)
        mine = (post >= pop.offset) & (post < pop.offset + pop.size)
        w[pre[mine], post[mine] - pop.offset] = weight[mine]
        models[name] = LifCrossbarModel(w, params)
        spikes[name] = []
    delay = {(k.pre, k.post): k.delay for k in net.projections}
    previous = {name: [] for name in net.populations}
    for events in inputs:
        sent = {"input": [net.populations["input"].offset + n for n in events]}
        for name, model in models.items():     # declaration order: zero-delay sources come first
            heard = [gid for source in net.populations if (source, name) in delay
                     for gid in (previous[source] if delay[source, name] else sent[source])]
            ids, _ = model.step(heard)
            sent[name] = [net.populations[name].offset + int(n) for n in ids]
            spikes[name].append(sorted(int(n) for n in ids))
        previous = {name: sent.get(name, []) for name in net.populations}
    return spikes, {name: model.v.tolist() for name, model in models.items()}


def run_model(lowered, seed: int):
    compiled = compile_lowered(lowered, FABRIC, seed=seed)
    model = FabricModel(FABRIC)
    result = model.run(compiled.image, lowered.program.host_inputs)
    return compiled, result, model_register_reads(model, compiled)


@pytest.mark.parametrize("tiles", list(SHAPES))
def test_golden_model_runs_the_mapped_network(tiles):
    for seed in seeds_for(f"snn-lower-model:{tiles}", count=6):
        print(f"snn lowering on {tiles} tiles, seed={seed}")
        _, _, lowered = random_case(seed, tiles)
        _, result, membranes = run_model(lowered, seed)
        assert result.outputs == {port: words for port, words in lowered.program.expected.items()} | {
            port: [] for port in result.outputs if port not in lowered.program.expected}
        assert membranes == lowered.program.expected_reads
        signed = {name: [v - (1 << 32) if v >> 31 else v for v in values]
                  for name, values in membranes.items()}
        assert signed == lowered.membranes


def test_mapped_equals_unmapped_for_per_step_arithmetic():
    """Loihi's arithmetic sums a step's input, so the mapping's event order cannot matter."""
    spec = FABRIC.with_parameters("xbar", preset="loihi", threshold=1, leak=200)
    for seed in seeds_for("snn-lower-loihi", count=4):
        net, inputs, lowered = random_case(seed, 4, spec)
        spikes, membranes = population_reference(net, inputs, spec.parameters("xbar").lif_params)
        for name, pop in net.populations.items():
            if pop.params is None:
                continue
            mine = [c for c in lowered.clusters if c.population == name]
            for step in range(len(inputs)):
                mapped = sorted(c.gids[n] - pop.offset for c in mine for n in lowered.spikes[c.name][step])
                assert mapped == spikes[name][step], f"seed={seed} {name} step {step}"
            for c in mine:
                assert [lowered.membranes[c.name][i] for i in range(len(c.gids))] == \
                    [membranes[name][gid - pop.offset] for gid in c.gids]


@pytest.mark.parametrize("self_only", [True, False], ids=["self", "two-populations"])
def test_recurrent_networks_on_the_golden_model(self_only):
    """Delay-1 projections close cycles; the golden fabric model must follow the reference."""
    for seed in seeds_for(f"snn-recurrent-model:{self_only}", count=6):
        print(f"recurrent snn self_only={self_only} seed={seed}")
        _, _, lowered = recurrent_case(seed, self_only=self_only)
        assert any(any(c.delayed) for c in lowered.clusters)
        _, result, membranes = run_model(lowered, seed)
        for port, words in lowered.program.expected.items():
            assert result.outputs[port] == words, f"seed={seed}: spikes on {port} differ"
        assert membranes == lowered.program.expected_reads, f"seed={seed}: membranes differ"


def test_recurrent_mapping_equals_the_unmapped_network():
    """Loihi (per-step sums): the mapped recurrent network equals one crossbar per population,
    simulated here with the delays taken straight from the projections."""
    spec = FABRIC.with_parameters("xbar", preset="loihi", threshold=1, leak=200)
    for seed in seeds_for("snn-recurrent-loihi", count=4):
        net, inputs, lowered = recurrent_case(seed, spec)
        spikes, membranes = population_reference(net, inputs, spec.parameters("xbar").lif_params)
        assert sum(len(step) for name in ("a", "b") for step in spikes[name]) > 0, f"seed={seed}: silent"
        for c in lowered.clusters:
            offset = net.populations[c.population].offset
            for step in range(len(inputs)):
                assert sorted(c.gids[n] - offset for n in lowered.spikes[c.name][step]) == \
                    spikes[c.population][step], f"seed={seed} {c.name} step {step}"
            assert lowered.membranes[c.name][:len(c.gids)] == membranes[c.population]


def test_recurrent_buffer_check_guards_a_real_deadlock(monkeypatch):
    """With queue_depth 1 a recurrent route holds 3 words; a step of more stops the fabric, so the
    lowering refuses it, naming the stream. Without the check the golden model deadlocks."""
    import snn.lower
    from rsn.model import DeadlockError

    small = dataclasses.replace(FABRIC, queue_depth=1)
    p = small.parameters("xbar").lif_params
    net = Network()
    net.add_input("input", 4)
    net.add_population("a", 5, p, output=True)
    net.connect_dense("input", "a", np.eye(4, 5, dtype=int) * p.threshold)    # one spike per event
    net.connect_sparse("a", "a", [0], [4], [-1], delay=1)
    inputs = [[0, 1, 2, 3]] * 4                 # 4 spikes and the end-of-step word a timestep
    with pytest.raises(LoweringError, match=r"recurrent \(delay 1\) stream a_c0 -> a_c0 carries up to 5 "
                                            r"words .* only 3 .* queue_depth to at least 3"):
        lower_network(net, small, inputs, cluster_size=8)
    monkeypatch.setattr(snn.lower, "_check_recurrent_buffers", lambda *args: None)
    lowered = lower_network(net, small, inputs, cluster_size=8)
    compiled = compile_lowered(lowered, small)
    with pytest.raises(DeadlockError):
        FabricModel(small).run(compiled.image, lowered.program.host_inputs)


def test_network_delays_are_checked():
    p = FABRIC.parameters("xbar").lif_params
    net = Network()
    net.add_input("input", 2)
    net.add_population("a", 2, p)
    net.add_population("b", 2, p, output=True)
    with pytest.raises(ValueError, match="delay=2"):
        net.connect_dense("a", "b", np.ones((2, 2), dtype=int), delay=2)
    net.connect_dense("input", "a", np.ones((2, 2), dtype=int))
    net.connect_dense("a", "b", np.ones((2, 2), dtype=int))
    with pytest.raises(ValueError, match="one population pair has one delay"):
        net.connect_sparse("a", "b", [0], [0], [1], name="late", delay=1)
    net.connect_dense("b", "a", np.ones((2, 2), dtype=int), name="back")
    with pytest.raises(LoweringError, match=r"\['a', 'b'\] form a cycle of zero-delay projections.*delay=1"):
        lower_network(net, FABRIC, [[0]])


def test_lowering_errors():
    rng = np.random.default_rng(0)
    p = FABRIC.parameters("xbar").lif_params
    net = Network.from_layers([rng.integers(1, 3, size=(8, 16)), rng.integers(1, 3, size=(16, 8))], p)
    net.connect_dense("input", "layer2", rng.integers(1, 3, size=(8, 8)), name="skip")
    with pytest.raises(ValueError, match="fan-in 24"):
        lower_network(net, FABRIC, [[1]])           # 24 distinct sources: no crossbar takes them
    net = Network.from_layers([rng.integers(1, 3, size=(8, 16))], p)
    net.add_population("out", 4, p, output=True)
    net.connect_dense("input", "out", rng.integers(1, 3, size=(8, 4)))
    net.connect_sparse("layer1", "out", [0, 1], [0, 1], [1, 1])
    with pytest.raises(LoweringError, match="24 neurons together, more than the tile's 16 axons"):
        lower_network(net, FABRIC, [[1]])           # 10 sources, but whole ranges of 8 and 16 ids
    other = Network.from_layers([rng.integers(0, 3, size=(8, 8))], dataclasses.replace(p, threshold=9))
    with pytest.raises(LoweringError, match="fabric's parameters"):
        lower_network(other, FABRIC, [[1]])


@pytest.mark.parametrize("spike,message", [
    (8, r"input spike id 8 in timestep 1 is outside the input population 'input' of 8 neurons; use "
        r"ids 0\.\.7"),
    (-1, r"input spike id -1 in timestep 1 is outside the input population 'input' of 8 neurons"),
    (2.0, r"input spike id 2\.0 in timestep 1 is outside the input population"),
    (True, r"input spike id True in timestep 1 is outside the input population"),
])
def test_input_spike_ids_beyond_the_population_are_refused(spike, message):
    """An id beyond the input population would land on the axons of the tile's next source."""
    net = Network.from_layers([np.ones((8, 8), dtype=int)], FABRIC.parameters("xbar").lif_params)
    with pytest.raises(LoweringError, match=message):
        lower_network(net, FABRIC, [[0], [1, spike]])
    lower_network(net, FABRIC, [[0], [1, 7]])          # the last neuron is fine


@pytest.mark.verilator
@pytest.mark.long(0)
def test_rtl_equals_golden_model():
    """One fabric build; 1, 2 and 4 tile networks and two recurrent ones (delay-1 projections),
    random host stall profiles, spikes and membranes."""
    compiled_programs, lowerings, profiles, seeds, reads = [], [], [], [], []
    rng = random.Random(seeds_for("snn-rtl-profiles", count=1)[0])
    cases = [(seed, lambda seed, tiles=tiles: random_case(seed, tiles, steps=4))
             for tiles in SHAPES for seed in seeds_for(f"snn-rtl:{tiles}", count=2)]
    cases += [(seed, lambda seed, self_only=self_only: recurrent_case(seed, steps=5, self_only=self_only))
              for self_only in (True, False) for seed in seeds_for(f"snn-rtl-recurrent:{self_only}", count=1)]
    for seed, make in cases:
        _, _, lowered = make(seed)
        compiled = compile_lowered(lowered, FABRIC, seed=seed)
        compiled_programs.append(compiled)
        lowerings.append(lowered)
        profiles.append(rng.choice(list(PROFILES)))
        seeds.append(seed)
        reads.append(register_reads(compiled))
    print("snn rtl runs (tiles, seed, profile):",
          [(len(lw.clusters), s, p) for lw, s, p in zip(lowerings, seeds, profiles, strict=True)])
    from rivulet.sim.fabric_run import run_many_on_rtl
    results = run_many_on_rtl(compiled_programs, profiles=profiles, seeds=seeds, case="snn-lower-rtl",
                              extra_reads=reads)
    runs = zip(compiled_programs, lowerings, results, seeds, profiles, strict=True)
    for compiled, lowered, result, seed, profile in runs:
        label = f"{len(lowered.clusters)} tiles seed={seed} profile={profile}"
        for port, words in lowered.program.expected.items():
            assert result.outputs[port] == words, f"{label}: spikes on {port} differ"
        assert split_register_reads(compiled, result.extra) == lowered.program.expected_reads, \
            f"{label}: membranes differ"


def test_cycle_model_names_the_untimed_kind():
    """The RSN cycle model times mem/mac/alu only; an SNN program gets a clear refusal."""
    from rsn.cycle_model import CycleModelError, predict_cycles

    _, _, lowered = random_case(1, 2, steps=2)
    with pytest.raises(CycleModelError, match="no timing for FU kind xbar.*snn.sdf"):
        predict_cycles(compile_lowered(lowered, FABRIC))


@pytest.mark.verilator
@pytest.mark.parametrize("example", ["snn_small", "snn_recurrent"])
def test_examples_run_with_rivulet_run(example, capsys):
    """The documented commands: both SNN examples on the golden model and the RTL, compared."""
    from rivulet.cli import main

    argv = ["run", f"examples/{example}.py", "--fabric", "examples/fabrics/snn.toml", "--sim", "both"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("outputs equal the program's reference") == 2
    assert "RTL and golden model agree: outputs, firings, link beats, register reads" in out


def test_full_grids_route_through_the_exhaustive_fallback():
    """Four clusters on the 2x2 fabric fill it: for these seeds every annealed placement is
    unroutable (each of a tile's links is wanted by two multicasts) while another one routes,
    which place_and_route finds by trying the small problem's placements, likeliest first (before
    the congestion-aware placements, which are turned off here with it)."""
    import functools

    import rsn.program
    from rsn.route import RouteError, place_and_route

    cases = [(seed, random_case(seed, 4)[2]) for seed in range(62, 66)]
    for seed, lowered in cases:
        compile_lowered(lowered, FABRIC, seed=seed)
    annealing_only = functools.partial(place_and_route, exhaustive=0, spread=False)
    failures = 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rsn.program, "place_and_route", annealing_only)
        for seed, lowered in cases:
            try:
                compile_lowered(lowered, FABRIC, seed=seed)
            except RouteError:
                failures += 1
    assert failures > 0, "annealing alone routed every case: the fallback is untested here"
