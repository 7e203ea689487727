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

from hw.lif_model import LifCrossbarModel
from rsn.fabric_spec import load_fabric
from rsn.model import FabricModel
from rsn.readout import model_register_reads, register_reads, split_register_reads
from snn.lower import LoweringError, compile_lowered, lower_network
from snn.network import Network
from testbench.seeds import seeds_for
from testbench.streams import PROFILES

FABRIC = load_fabric("examples/fabrics/snn.toml")
# (layer sizes, cluster size): the tiles each shape maps onto.
SHAPES = {1: ((12, 16), 16), 2: ((8, 8, 8), 8), 4: ((8, 16, 16), 8)}


def random_case(seed: int, tiles: int, spec=FABRIC, steps: int = 5):
    rng = np.random.default_rng(seed)
    sizes, cluster_size = SHAPES[tiles]
    sizes = (int(rng.integers(sizes[0] // 2, sizes[0] + 1)), *sizes[1:])
    p = spec.xbar_params
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


def population_reference(net: Network, inputs, params):
    """Unmapped: each population one crossbar of all its sources, events by source population."""
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
    for events in inputs:
        sent = {"input": [net.populations["input"].offset + n for n in events]}
        for name, model in models.items():
            ids, _ = model.step([gid for source in sent.values() for gid in source])
            sent[name] = [net.populations[name].offset + int(n) for n in ids]
            spikes[name].append(sorted(int(n) for n in ids))
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
    spec = dataclasses.replace(FABRIC, xbar_preset="loihi", xbar_threshold=1, xbar_leak=200)
    for seed in seeds_for("snn-lower-loihi", count=4):
        net, inputs, lowered = random_case(seed, 4, spec)
        spikes, membranes = population_reference(net, inputs, spec.xbar_params)
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


def test_lowering_errors():
    rng = np.random.default_rng(0)
    p = FABRIC.xbar_params
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


@pytest.mark.verilator
def test_rtl_equals_golden_model():
    """One fabric build; 1, 2 and 4 tile networks, every host stall profile, spikes and membranes."""
    compiled_programs, lowerings, profiles, seeds, reads = [], [], [], [], []
    rng = random.Random(seeds_for("snn-rtl-profiles", count=1)[0])
    for tiles in SHAPES:
        for seed in seeds_for(f"snn-rtl:{tiles}", count=2):
            _, _, lowered = random_case(seed, tiles, steps=4)
            compiled = compile_lowered(lowered, FABRIC, seed=seed)
            compiled_programs.append(compiled)
            lowerings.append(lowered)
            profiles.append(rng.choice(list(PROFILES)))
            seeds.append(seed)
            reads.append(register_reads(compiled))
    print("snn rtl runs (tiles, seed, profile):",
          [(len(lw.clusters), s, p) for lw, s, p in zip(lowerings, seeds, profiles, strict=True)])
    from testbench.fabric_run import run_many_on_rtl
    results = run_many_on_rtl(compiled_programs, profiles=profiles, seeds=seeds, case="snn-lower-rtl",
                              extra_reads=reads)
    runs = zip(compiled_programs, lowerings, results, seeds, profiles, strict=True)
    for compiled, lowered, result, seed, profile in runs:
        label = f"{len(lowered.clusters)} tiles seed={seed} profile={profile}"
        for port, words in lowered.program.expected.items():
            assert result.outputs[port] == words, f"{label}: spikes on {port} differ"
        assert split_register_reads(compiled, result.extra) == lowered.program.expected_reads, \
            f"{label}: membranes differ"
