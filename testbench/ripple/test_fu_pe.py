# amaranth: UnusedElaboratable=no
"""The ``pe`` FU: its golden model and its RTL against the ops.py operators, micro-ops granting
firings, registers through the config bus."""

import random

import pytest

from hw.params import ParameterError
from ripple_core.pe import (
    LATENCY,
    MEM_WINDOW,
    PE_KIND,
    REG_CONFIG,
    REG_CONST,
    REG_FAULT,
    REG_ORIGIN,
    REG_PAGE,
    REG_STATUS,
    PeFu,
    PeMemoryError,
    PeModel,
    PeUop,
    decode_config,
    pe_config_word,
)
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rsn.channels import Channel
from rsn.fu import fu_signature
from rsn.fu_kinds import fu_kind
from rsn.isa import IsaError, decode, encode, uop_layout
from testbench.ripple.pe_bench import (
    OPERATORS,
    Phase,
    drained,
    golden,
    memory_phases,
    random_phase,
    run_pe_amaranth,
    run_pe_amaranth_each,
    with_front,
)
from testbench.ripple.ripple_ops_bench import fu_design


def configure(model: PeModel, phase: Phase):
    model.write_word(REG_CONFIG, pe_config_word(phase.op, pred=phase.pred, cmp=phase.cmp, slots=phase.kinds,
                                                drop=phase.drop))
    for k, kind in enumerate(phase.kinds):
        if kind != "edge":
            model.write_word(REG_CONST + k, phase.consts[k])
    if model.mem_depth:
        model.write_word(REG_ORIGIN, phase.origin)
        for word, value in phase.preload:
            model.write_word(REG_PAGE, word // 2048)
            model.write_word(MEM_WINDOW + word % 2048, value)


def run_model(phase: Phase, grant: int, model: PeModel | None = None):
    model = model or PeModel()
    configure(model, phase)
    model.load([decode(PeUop, encode(PeUop, {"firings": grant, "last": 1}))])
    inputs = [Channel(f"i{k}", 1000) for k in range(3)]
    for k, tokens in enumerate(phase.streams):
        for token in tokens:
            inputs[k].push(token & 0xFFFF_FFFF)
    outputs = [Channel(f"o{p}", 1) for p in range(2)]
    emitted = [[], []]
    for _ in range(10_000):
        moved = model.step(inputs, outputs)
        for p, channel in enumerate(outputs):
            while channel.can_pop():
                emitted[p].append(channel.pop())
                moved = True
        if not moved:
            break
    return model, emitted


def test_kind_and_registration():
    assert fu_kind("pe") is PE_KIND and uop_layout("pe") is PeUop
    assert (PE_KIND.n_in, PE_KIND.n_out, PE_KIND.latency) == (3, 2, LATENCY)
    assert PeFu(32).signature == fu_signature(PE_KIND, 32)
    with pytest.raises(ParameterError, match="data_width must be 32"):
        PeFu(16)
    with pytest.raises(IsaError, match="firings=0"):
        PeModel().load([{"firings": 0, "last": 1}])
    word = pe_config_word("CARRY", pred=True, slots=("edge", "hold", "const"), drop=(1,))
    assert decode_config(word) == {"op": "CARRY", "pred": True, "cmp": "SLT",
                                   "slots": ("edge", "hold", "const"), "drop": (1,)}
    with pytest.raises(ParameterError, match="reserved kind"):
        decode_config(word | 0b11 << 10)


@pytest.mark.parametrize("op", OPERATORS)
def test_model_follows_ops(op):
    """The FU model fires exactly as ops.py does, and stops where its micro-op's grant ends."""
    for seed in seeds_for(f"pe-model:{op}", count=5):
        rng = random.Random(seed)
        phase = random_phase(op, rng)
        run = golden(phase)
        if run.firings == 0:        # nothing can fire: a micro-op stays in progress
            model, emitted = run_model(phase, 1)
            assert emitted == [[], []] and model.firings == 0 and model.busy and not model.finished
            continue
        for grant in {run.firings, max(1, run.firings // 2)}:
            expected = golden(Phase(**{**phase.__dict__, "grant": grant}))
            model, emitted = run_model(phase, grant)
            masked = [[t & 0xFFFF_FFFF for t in port] for port in expected.outputs]
            assert emitted == masked, f"seed {seed}, grant {grant}"
            assert model.firings == expected.firings and model.finished and not model.busy
            armed = sum(1 << (k + 1) for k in range(len(expected.left))
                        if phase.kinds[k] != "edge" and expected.left[k])
            assert model.read_word(REG_STATUS) == int(expected.idle) | armed


def test_model_memory_follows_ops():
    """LOADs and STOREs of the FU model against the ops.py operators over a reference bank; the
    model's bank, read through the window, ends as the reference does."""
    for seed in seeds_for("pe-model-memory", count=10):
        model, bank = PeModel(mem_depth=32), [0] * 32
        for k, phase in enumerate(memory_phases(random.Random(seed), 32)):
            run = golden(phase, bank=bank)
            bank = run.bank
            if run.firings == 0:        # nothing to grant; the preload still happens
                configure(model, phase)
                continue
            _, emitted = run_model(phase, run.firings, model)
            want = [[t & 0xFFFF_FFFF for t in port] for port in run.outputs]
            assert emitted == want, f"seed {seed} phase {k}"
            assert model.memory == [word & 0xFFFF_FFFF for word in bank], f"seed {seed} phase {k}"
        model.write_word(REG_PAGE, 0)
        assert [model.read_word(MEM_WINDOW + word) for word in range(32)] == model.memory


def test_model_memory_registers_and_errors():
    model = PeModel(mem_depth=16, name="tile (1, 2) pe")
    model.write_word(MEM_WINDOW + 16 + 3, 42)           # the window aliases a 16-word bank
    assert model.memory[3] == 42 and model.read_word(MEM_WINDOW + 3 + 2032) == 42
    model.write_word(REG_ORIGIN, -5)
    model.write_word(REG_PAGE, 3)
    assert model.read_word(REG_ORIGIN) == 0xFFFF_FFFB and model.read_word(REG_PAGE) == 1
    assert model.read_word(REG_FAULT) == 0 and model.read_word(REG_STATUS) & 0x10 == 0
    big = PeModel(mem_depth=4096)
    big.write_word(REG_PAGE, 1)
    big.write_word(MEM_WINDOW + 7, 9)
    assert big.memory[2048 + 7] == 9 and big.memory[7] == 0

    phase = Phase("LOAD", [[], [11], []], ("hold", "edge", "hold"), (0, 0, 0), origin=-5)
    with pytest.raises(PeMemoryError, match=r"tile \(1, 2\) pe: LOAD of address 11, outside the memory "
                                            r"bank \(flat addresses -5\.\.10: origin -5, mem_depth 16\)"):
        run_model(phase, 1, model)
    phase = Phase("STORE", [[], [-6], [1]], ("hold", "edge", "edge"), (0, 0, 0), origin=-5)
    with pytest.raises(PeMemoryError, match="STORE of address -6"):
        run_model(phase, 1, model)
    with pytest.raises(PeMemoryError, match=r"pe: configured as STORE, but this PE has no memory bank"):
        PeModel().write_word(REG_CONFIG, pe_config_word("STORE"))
    for bad in (3, 8192, 1):
        with pytest.raises(ParameterError, match=f"PeModel: mem_depth={bad} is not allowed"):
            PeModel(mem_depth=bad)
    assert PeModel().read_word(MEM_WINDOW) == 0 and PeModel().read_word(REG_ORIGIN) == 0


@pytest.mark.parametrize("profile", list(PROFILES))
def test_rtl_memory(profile):
    """The FU's RTL with a 32-word bank: a preloaded array, LOADs and STOREs, read-backs."""
    seeds = seeds_for(f"pe-fu-memory:{profile}", count=2)
    print(f"pe FU memory profile={profile} seeds={seeds}")
    run_pe_amaranth_each(fu_design(32, mem_depth=32),
                         [(memory_phases(random.Random(seed), 32), profile, seed) for seed in seeds])


@pytest.mark.parametrize("profile", list(PROFILES))
def test_rtl_every_operator(profile):
    """The FU's RTL through every operator, each phase one micro-op granting its firings."""
    runs = []
    for seed in seeds_for(f"pe-fu:{profile}", count=2):
        print(f"pe FU profile={profile} seed={seed}")
        rng = random.Random(seed)
        phases = [drained(random_phase(op, rng)) for op in OPERATORS]
        rng.shuffle(phases)
        runs.append((phases, profile, seed))
    run_pe_amaranth_each(fu_design(32), runs)


def test_rtl_micro_op_grants_only_its_firings():
    (seed,) = seeds_for("pe-fu-grant", count=1)
    rng = random.Random(seed)
    for op in ("ADD", "CARRY", "STREAM", "STEER"):
        phase = random_phase(op, rng)
        firings = golden(phase).firings
        if firings >= 2:
            phase = with_front(Phase(**{**phase.__dict__, "grant": firings // 2}))
            print(f"pe FU grant {op} {firings // 2} of {firings} seed={seed}")
            run_pe_amaranth(PeFu(32), [phase], profile="random_stall_50", seed=seed)


def test_checks_know_the_pe_kind():
    """A pe node's micro-ops need firings >= 1; its token counts depend on its data, so the
    program states them on its streams (a STEER may pass 2 of its 4 tokens)."""
    from rsn.checks import ProgramError, check_ops, check_tokens, tokens_per_port
    from rsn.graph import StreamGraph

    assert tokens_per_port("pe", [{"firings": 5}]) == ([None] * 3, [None] * 2)
    graph = StreamGraph()
    graph.add_node("decide", "host_in", port="d", tokens=4)
    graph.add_node("data", "host_in", port="x", tokens=4)
    graph.add_node("steer", "pe", [{"firings": 4, "last": 1}])
    graph.add_node("dst", "host_out", port="y", tokens=2)
    graph.connect("decide", [("steer", 0)], 4)
    graph.connect("data", [("steer", 1)], 4)
    graph.connect(("steer", 0), ["dst"], 2)
    check_ops(graph)
    check_tokens(graph)
    graph.nodes["steer"].uops = [{"firings": 0, "last": 1}]
    with pytest.raises(ProgramError, match="firings is 0"):
        check_ops(graph)


@pytest.mark.verilator
def test_verilator():
    """The FU's generated Verilog: every operator in random order, every profile x 3 seeds."""
    import json
    from dataclasses import astuple

    from rivulet.sim.seeds import base_seed
    from rivulet.sim.streams import stream_ports
    from rivulet.sim.verilator import build_design, run_cocotb, run_directory

    seeds = seeds_for("pe-fu-verilator")
    print(f"pe FU verilator seeds={seeds}")
    phases = {}
    for seed in seeds:
        rng = random.Random(seed)
        chosen = [drained(random_phase(op, rng)) for op in OPERATORS]
        rng.shuffle(chosen)
        phases[str(seed)] = [phase.to_json() for phase in chosen]
    fu = PeFu(32)
    ports, _ = stream_ports(fu)
    config = {"depth": 0, "ports": [astuple(port) for port in ports], "profiles": list(PROFILES),
              "seeds": seeds, "phases": phases, "base_seed": base_seed()}
    built = build_design("rsn-pe-width=32", fu)
    with run_directory("rsn-pe-random") as directory:
        run_cocotb(built, "testbench.ripple.tb_pe", directory, {"RIVULET_PE": json.dumps(config)})
