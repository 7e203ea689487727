# amaranth: UnusedElaboratable=no
"""The ``xbar`` FU: its golden model against ``LifCrossbarModel`` and the module's rules, and the
RTL against ``LifCrossbarModel`` in Amaranth's simulator with random stalls on every stream.

The expected words are built here from the specification: per timestep, the enabled inputs'
spikes in port order translated by ``base`` (a delayed input's from the step before), run
through ``LifCrossbarModel``; the tile must send
the step's spikes as AER words and then one end-of-step word, and its membranes (read through the
control plane's latch) must equal the model's.
"""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from hw import ParameterError
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rsn.channels import Channel
from rsn.fabric_spec import FabricError, parse_fabric
from rsn.fu import fu_signature
from rsn.isa import IsaError, decode, encode
from snn.lif_model import LifCrossbarModel
from snn.xbar import END_WORD, XBAR_KIND, XbarAddressMap, XbarFu, XbarModel, XbarUop, aer_word, xbar_params

SHAPES = {"16x16b4": (16, 16, 4), "8x8b8": (8, 8, 8), "12x6b3": (12, 6, 3)}
PARAMS = {"tinyodin": xbar_params("tinyodin", threshold=6, leak=1),
          "loihi": xbar_params("loihi", threshold=2, leak=300, weight_width=8)}


def uop(**fields) -> dict:
    return decode(XbarUop, encode(XbarUop, fields))


def scenario(rng, params, axons, neurons, steps=4):
    """Random weights and membranes, a micro-op (enabled inputs, bases) and per-port spike trains."""
    weights = np.array([[rng.randint(params.w_min, params.w_max) for _ in range(neurons)]
                        for _ in range(axons)])
    membranes = [rng.randint(-params.threshold // 2, params.threshold) for _ in range(neurons)]
    inputs = rng.randint(1, 7)
    base, spans = [0, 0, 0], [1, 1, 1]
    for k in range(3):
        spans[k] = rng.randint(1, axons)
        base[k] = rng.randint(0, axons - spans[k])
    if params.integrate == "step":      # keep the step's input sum within the model's register
        weights = weights // 4
    trains = [[[rng.randrange(spans[k]) for _ in range(rng.randint(0, 4))] if inputs >> k & 1 else []
               for _ in range(steps)] for k in range(3)]
    delayed = rng.randint(0, 7)         # recurrent inputs: one timestep late
    return weights, membranes, uop(steps=steps, inputs=inputs, base=base, delayed=delayed, last=1), trains


def expected(params, weights, membranes, fields, trains):
    model = LifCrossbarModel(weights, params)
    model.v[:] = membranes
    words = []
    for step in range(fields["steps"]):
        # A delayed input's step t carries the sender's step t - 1 (nothing in step 0); its last
        # step arrives after the micro-op's last timestep and is dropped.
        late = [fields["delayed"] >> k & 1 for k in range(3)]
        events = [fields["base"][k] + n for k in range(3) if fields["inputs"] >> k & 1
                  for n in ((trains[k][step - 1] if step else []) if late[k] else trains[k][step])]
        spikes, _ = model.step(events)
        words += [aer_word(int(n)) for n in spikes] + [END_WORD]
    return words, [int(v) for v in model.v]


def port_words(fields, trains, k):
    if not fields["inputs"] >> k & 1:
        return []
    return [word for step in trains[k] for word in [aer_word(n) for n in step] + [END_WORD]]


def config_words(amap: XbarAddressMap, weights, membranes) -> list[tuple[int, int]]:
    return sorted(amap.weight_words(weights).items()) + sorted(amap.membrane_words(membranes).items())


# --- the golden model -----------------------------------------------------------------------------

def test_aer_words_and_address_map():
    assert (aer_word(5), aer_word(0, end=True), END_WORD) == (10, 1, 1)
    amap = XbarAddressMap(PARAMS["tinyodin"], 16, 16, 4)      # 16 bits per group: one word
    assert (amap.words_per_group, amap.weight_address(1, 2, 0), amap.membrane_base) == (1, 6, 64)
    assert (amap.membrane_address(5), amap.latch_address) == (64 + 4 + 1, 64 + 16)
    amap = XbarAddressMap(PARAMS["loihi"], 12, 6, 3)          # 24 bits per group; 2 groups, 3 banks
    assert (amap.words_per_group, amap.gbits, amap.bbits, amap.membrane_address(4)) == (1, 1, 2, 24 + 5)
    wide = XbarAddressMap(xbar_params("loihi", weight_width=16), 4, 8, 4)    # 64 bits: two words
    assert (wide.words_per_group, wide.weight_address(3, 1, 1)) == (2, 0b11_1_1)
    with pytest.raises(ValueError, match="storage window"):
        XbarAddressMap(PARAMS["tinyodin"], 256, 64, 1)


def test_model_follows_the_crossbar_model():
    rng = random.Random(7)
    params = PARAMS["tinyodin"]
    weights, membranes, fields, trains = scenario(rng, params, 16, 16)
    model = XbarModel(16, params=params, axons=16, neurons=16, banks=4)
    for address, value in config_words(model.map, weights, membranes):
        model.write_word(address, value)
    assert (model.crossbar.weights == weights).all() and model.membranes() == membranes
    model.load([fields])
    inputs = [Channel(f"i{k}", 1000) for k in range(3)]
    for k in range(3):
        for word in port_words(fields, trains, k):
            inputs[k].push(word)
    output = Channel("o", 1000)
    while model.step(inputs, [output]):
        pass
    words, final = expected(params, weights, membranes, fields, trains)
    assert list(output.tokens) == words
    assert (model.firings, model.finished, model.busy) == (len(words), True, False)
    model.write_word(model.map.latch_address, 2)
    assert [model.read_word(model.map.membrane_address(8 + b)) for b in range(4)] == \
        [v & 0xFFFF_FFFF for v in final[8:12]]


def test_model_refuses_zero_steps_and_bad_axons():
    with pytest.raises(IsaError, match="steps=0"):
        XbarModel().load([uop(steps=0)])
    model = XbarModel(axons=16)
    model.load([uop(steps=1, inputs=1, base=[15, 0, 0])])
    source = Channel("i0", 4)
    source.push(aer_word(1))
    source.push(END_WORD)
    with pytest.raises(ValueError, match="axon id 16"):
        while model.step([source, Channel("i1", 1), Channel("i2", 1)], [Channel("o", 4)]):
            pass


def test_kind_and_fabric_fields():
    assert (XBAR_KIND.name, XBAR_KIND.n_in, XBAR_KIND.n_out) == ("xbar", 3, 1)
    assert XBAR_KIND.rtl(width=16).signature == fu_signature(XBAR_KIND, 16)
    with pytest.raises(ParameterError, match="data_width >= 9"):
        XbarFu(8, axons=256, neurons=8, banks=1)
    base = {"rows": 1, "cols": 2, "tiles": ["xbar xbar"]}
    spec = parse_fabric({**base, "xbar": {"preset": "loihi", "threshold": 3}})
    assert spec.parameters("xbar").lif_params.threshold == 3 << 6 and spec.parameters("xbar").axons == 16
    for fields, message in [({"xbar": {"banks": 3}}, "does not divide"),
                            ({"xbar": {"preset": "odin"}}, r"\[xbar\]: preset"),
                            ({"data_width": 8, "xbar": {"axons": 512, "neurons": 4, "banks": 1}},
                             "data_width=8 cannot carry"),
                            ({"xbar": {"axons": 128, "neurons": 128}}, "storage window")]:
        with pytest.raises(FabricError, match=message):
            parse_fabric({**base, **fields})


# --- the RTL in Amaranth's simulator ---------------------------------------------------------------

def run_rtl(params, shape, profile_name, seed):
    axons, neurons, banks = shape
    rng = random.Random(seed)
    weights, membranes, fields, trains = scenario(rng, params, axons, neurons)
    words, final = expected(params, weights, membranes, fields, trains)
    profile = PROFILES[profile_name]
    dut = XbarFu(16, params=params, axons=axons, neurons=neurons, banks=banks)
    amap = dut.map
    sources = [port_words(fields, trains, k) for k in range(3)]
    received, membranes_read, status = [], [], {}

    async def bench(ctx):
        for address, value in config_words(amap, weights, membranes):
            ctx.set(dut.cfg.addr, address)
            ctx.set(dut.cfg.data, value)
            ctx.set(dut.cfg.write, 1)
            await ctx.tick()
            ctx.set(dut.cfg.write, 0)
            await ctx.tick()
        ctx.set(dut.uop.payload.as_value(), encode(XbarUop, fields))
        ctx.set(dut.uop.valid, 1)
        offered = [False] * 3
        for cycle in range(20_000):
            for k in range(3):
                if sources[k] and not offered[k]:
                    offered[k] = rng.random() >= profile.idle.at(cycle)
                ctx.set(dut.i[k].valid, offered[k])
                ctx.set(dut.i[k].payload, sources[k][0] if sources[k] else 0)
            ctx.set(dut.o[0].ready, rng.random() >= profile.backpressure.at(cycle))
            taken = [offered[k] and ctx.get(dut.i[k].ready) for k in range(3)]
            if ctx.get(dut.o[0].valid) and ctx.get(dut.o[0].ready):
                received.append(ctx.get(dut.o[0].payload))
            uop_taken = ctx.get(dut.uop.valid) and ctx.get(dut.uop.ready)
            await ctx.tick()
            if uop_taken:
                ctx.set(dut.uop.valid, 0)
            for k in range(3):
                if taken[k]:
                    sources[k].pop(0)
                    offered[k] = False
            if len(received) >= len(words) and not ctx.get(dut.busy):
                break
        await ctx.tick()
        status.update(busy=ctx.get(dut.busy), finished=ctx.get(dut.finished), firings=ctx.get(dut.firings))
        for group in range(amap.groups):
            ctx.set(dut.cfg.addr, amap.latch_address)
            ctx.set(dut.cfg.data, group)
            ctx.set(dut.cfg.write, 1)
            await ctx.tick()
            ctx.set(dut.cfg.write, 0)
            await ctx.tick().repeat(4)
            for b in range(banks):
                ctx.set(dut.cfg.addr, amap.membrane_address(group * banks + b))
                ctx.set(dut.cfg.read, 1)
                await ctx.tick()
                ctx.set(dut.cfg.read, 0)
                value = ctx.get(dut.cfg.rdata)
                membranes_read.append(value - (1 << 32) if value >> 31 else value)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    label = f"{profile_name} seed={seed} uop={fields}"
    assert received == words, f"{label}: spikes differ\n got {received}\nwant {words}"
    assert status == {"busy": 0, "finished": 1, "firings": len(words)}, f"{label}: {status}"
    assert membranes_read == final, f"{label}: membranes differ\n got {membranes_read}\nwant {final}"


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("preset", list(PARAMS))
def test_amaranth_sim(preset, shape, profile):
    for seed in seeds_for(f"xbar-fu:{preset}:{shape}:{profile}", count=2):
        print(f"xbar fu {preset} {shape} profile={profile} seed={seed}")
        run_rtl(PARAMS[preset], SHAPES[shape], profile, seed)
