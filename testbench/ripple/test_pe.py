# amaranth: UnusedElaboratable=no
"""The Ripple PE against ripple_core.ops: every operator, random streams, every stall profile,
queue depths 1, 2 and 4, and the issue's specific cases (expectations written from the spec
and checked against the golden operator first)."""

import random

import pytest

from hw.params import ParameterError
from ripple_core.ops import STREAM_COMPARES
from ripple_core.pe import (
    MEM_WINDOW,
    PE_CONFIG,
    REG_CONFIG,
    REG_CONST,
    REG_ORIGIN,
    PeFu,
    PeOp,
    RipplePE,
    SlotKind,
    StreamCmp,
    pe_config_word,
)
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES, ScoreboardError

from .pe_bench import (
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
from .ripple_ops_bench import pe_design

DEPTHS = [1, 2, 4]
MIN, MAX = -(1 << 31), (1 << 31) - 1


def run_directed(phase: Phase, outputs, *, depth: int, profile: str = "random_stall_50", idle=True):
    """Check the spec's expectation against the golden operator, then the RTL against both."""
    run = golden(phase)
    assert run.outputs == [list(o) for o in outputs], f"the golden operator gives {run.outputs}"
    assert run.idle == idle
    seeds = seeds_for(f"pe-directed:{phase.op}:{phase.streams}:{depth}", count=2)
    print(f"pe {phase.op} depth={depth} profile={profile} seeds={seeds}")
    # Tokens behind a slot's leftover front never matter and could not enter a full queue.
    run_pe_amaranth_each(pe_design(depth), [([with_front(phase)], profile, seed) for seed in seeds])


def test_config_word_layout():
    word = pe_config_word("STREAM", pred=True, cmp="UGE", slots=("edge", "hold", "const"), drop=(1,))
    view = PE_CONFIG.const({"op": PeOp.STREAM, "pred": 1, "cmp": StreamCmp.UGE,
                            "slots": [SlotKind.EDGE, SlotKind.HOLD, SlotKind.CONST], "drop": 2})
    assert word == view.as_bits()
    assert word & 0x3F == PeOp.STREAM.value and (word >> 6) & 1 == 1
    assert pe_config_word("GEP4") == pe_config_word("ADD")
    assert tuple(mode.name for mode in StreamCmp) == STREAM_COMPARES
    for bad in [dict(op="SINK"), dict(op="ADD", cmp="LT"), dict(op="ADD", slots=("wire",)),
                dict(op="ADD", drop=(2,))]:
        with pytest.raises(ParameterError, match="RipplePE"):
            pe_config_word(**bad)
    with pytest.raises(ParameterError, match="depth"):
        RipplePE(-1)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_operator_random(depth, profile):
    """One PE reconfigured through every operator in random order, drained random streams."""
    runs = []
    for seed in seeds_for(f"pe-random:{depth}:{profile}"):
        print(f"pe all operators depth={depth} profile={profile} seed={seed}")
        rng = random.Random(seed)
        phases = [drained(random_phase(op, rng)) for op in OPERATORS]
        rng.shuffle(phases)
        runs.append((phases, profile, seed))
    run_pe_amaranth_each(pe_design(depth), runs)


@pytest.mark.parametrize("depth", DEPTHS)
def test_every_operator_with_leftovers(depth):
    """Each operator alone, random streams that leave tokens at the slots' fronts."""
    (seed,) = seeds_for(f"pe-fronts:{depth}", count=1)
    print(f"pe fronts depth={depth} seed={seed}")
    rng = random.Random(seed)
    profiles = list(PROFILES)
    # Each operator from reset, one after another in one simulator.
    runs = [([with_front(random_phase(op, rng))], profiles[k % len(profiles)], rng.getrandbits(32))
            for k, op in enumerate(OPERATORS)]
    run_pe_amaranth_each(pe_design(depth), runs)


ARITHMETIC = [("ADD", MAX, 1, MIN), ("SUB", MIN, 1, MAX), ("MUL", 0x10000, 0x10000, 0), ("MUL", -3, 7, -21),
              ("MUL", MAX, MAX, 1), ("AND", -1, 5, 5), ("OR", 8, 1, 9), ("XOR", -1, 5, -6),
              ("SHL", 1, 33, 2), ("SHL", 3, 31, MIN), ("ASHR", MIN, 31, -1), ("ASHR", -7, 1, -4),
              ("LSHR", MIN, 31, 1), ("LSHR", -1, 36, 0x0FFF_FFFF), ("EQ", -1, -1, 1), ("NE", 3, 3, 0),
              ("SLT", -1, 1, 1), ("ULT", -1, 1, 0), ("SLE", -5, -6, 0), ("ULE", 0, -1, 1),
              ("SGT", 1, MIN, 1), ("UGT", 1, MIN, 0), ("SGE", 5, 5, 1), ("UGE", 4, 5, 0)]


@pytest.mark.parametrize("depth", DEPTHS)
def test_32_bit_arithmetic(depth):
    phases = [Phase(op, [[a], [b], []]) for op, a, b, _ in ARITHMETIC]
    for phase, (*_, want) in zip(phases, ARITHMETIC, strict=True):
        assert golden(phase).outputs == [[want], []], phase.op
    (seed,) = seeds_for(f"pe-arith:{depth}", count=1)
    print(f"pe arithmetic depth={depth} seed={seed}")
    run_pe_amaranth(pe_design(depth), phases, profile="random_stall_50", seed=seed)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("pred", [True, False])
def test_steer_discards_on_the_other_polarity(depth, pred):
    want = [10, 30, 50] if pred else [20, 40]
    run_directed(Phase("STEER", [[1, 0, 1, 0, 5], [10, 20, 30, 40, 50], []], pred=pred), [want, []],
                 depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
def test_merge_never_takes_the_unchosen_side(depth):
    # f's token is there from the start (d waits 30 cycles); three true deciders must leave it.
    run_directed(Phase("MERGE", [[1, 1, 1, 0], [7, 8, 9], [100]], delays={0: 30}), [[7, 8, 9, 100], []],
                 depth=depth)
    run_directed(Phase("MERGE", [[0, 1, 0], [5], [6, 7]]), [[6, 5, 7], []], depth=depth,
                 profile="backpressure_90")


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("pred", [True, False])
def test_carry_rearms_zero_iterations_early_next(depth, pred):
    # Loops of 2, 0 and 1 iterations; every `next` token is queued before any decider arrives.
    deciders = [int(x == pred) for x in (1, 1, 0, 0, 1, 0)]
    run_directed(Phase("CARRY", [deciders, [1, 2, 3], [10, 11, 12]], pred=pred, delays={0: 30}),
                 [[1, 10, 11, 2, 3, 12], []], depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("pred", [True, False])
def test_invariant_rearms_and_peeks(depth, pred):
    deciders = [int(x == pred) for x in (1, 1, 0, 0)]
    run_directed(Phase("INVARIANT", [deciders, [5, 6], []], pred=pred, delays={0: 30}), [[5, 5, 5, 6], []],
                 depth=depth)
    # A hold value is never taken: after each exit INIT emits it again, and the PE ends in LOOP.
    run_directed(Phase("INVARIANT", [[1, 0, 0], [], []], kinds=("edge", "hold", "edge"),
                       consts=(0, 9, 0), pred=True), [[9, 9, 9, 9], []], depth=depth, idle=False)


STREAM_MODES = {"SLT": [-2, -1, 0, 1], "SLE": [-2, -1, 0, 1, 2], "ULT": [], "ULE": [],
                "SGT": [-2, -1, 0, 1, 2], "SGE": [-2, -1, 0, 1], "UGT": [], "UGE": []}


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("cmp", STREAM_COMPARES)
def test_stream_compare_modes(depth, cmp):
    """start -2, bound 2, step 1: -2 is huge unsigned, so U* modes give empty ranges."""
    indices = STREAM_MODES[cmp]
    pred = cmp in ("SLT", "UGE")
    flags = [int(pred)] * len(indices) + [int(not pred)]
    run_directed(Phase("STREAM", [[-2], [2], [1]], pred=pred, cmp=cmp), [indices, flags], depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
def test_stream_empty_ranges_and_negative_steps(depth):
    run_directed(Phase("STREAM", [[5], [5], [1]], cmp="SLT"), [[], [1]], depth=depth)
    # A negative step under ULT ends when the index wraps to a huge unsigned value.
    run_directed(Phase("STREAM", [[3], [10], [-1]], cmp="ULT"), [[3, 2, 1, 0], [0, 0, 0, 0, 1]], depth=depth)
    # Three streams back to back, bound and step held: 4..6, empty, 0..-4 by -2 under SGE.
    run_directed(Phase("STREAM", [[4, 9, 2], [], []], kinds=("edge", "hold", "hold"), consts=(0, 7, 1),
                       cmp="SLT", pred=True), [[4, 5, 6, 2, 3, 4, 5, 6], [1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0]],
                 depth=depth)
    run_directed(Phase("STREAM", [[0], [-4], [-2]], cmp="SLE", drop=(1,)), [[], []], depth=depth)
    run_directed(Phase("STREAM", [[-9], [-5], [2]], cmp="SGE", drop=(0,)), [[], [0, 0, 1]], depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("profile", ["no_stall", "random_stall_50"])
def test_stream_with_both_ports_dropped_runs_to_its_end(depth, profile):
    """Both ports dropped: every firing is silent and the edge tokens wait in their queues until
    the final firing takes them, so nothing moves on any port for N + 1 cycles. The phase ends
    only after the last firing: status idle, the const bound taken, the hold step still armed."""
    run_directed(Phase("STREAM", [[0], [20], [1]], drop=(0, 1)), [[], []], depth=depth, profile=profile)
    run_directed(Phase("STREAM", [[15], [31], [1]], cmp="SGE", drop=(0, 1)), [[], []], depth=depth,
                 profile=profile)
    run_directed(Phase("STREAM", [[1], [], []], kinds=("edge", "const", "hold"), consts=(0, 18, 1),
                       drop=(0, 1)), [[], []], depth=depth, profile=profile)


@pytest.mark.parametrize("depth", DEPTHS)
def test_hold_never_taken_const_taken_once(depth):
    run_directed(Phase("ADD", [[1, 2, 3], [], []], kinds=("edge", "hold", "edge"), consts=(0, 100, 0)),
                 [[101, 102, 103], []], depth=depth)
    run_directed(Phase("ADD", [[1, 2, 3], [], []], kinds=("edge", "const", "edge"), consts=(0, 100, 0)),
                 [[101], []], depth=depth)
    run_directed(Phase("SUB", [[], [1, 2], []], kinds=("const", "edge", "edge"), consts=(50, 0, 0)),
                 [[49], []], depth=depth)
    # SELECT takes all three slots, so its first firing uses up the const f; the held t stays.
    run_directed(Phase("SELECT", [[1, 0, 1], [], []], kinds=("edge", "hold", "const"), consts=(0, 4, 8)),
                 [[4], []], depth=depth)


# ---------------------------------------------------------------------------- the memory bank

MEM_DEPTH = 32


def test_memory_parameters():
    for bad in (1, 3, 8192, -1, "4", 4.0):
        with pytest.raises(ParameterError, match=r"mem_depth=.*power of two from 2 to 4096|mem_depth"):
            RipplePE(2, mem_depth=bad)
    with pytest.raises(ParameterError, match="PeFu: mem_depth=24 is not allowed"):
        PeFu(32, mem_depth=24)
    assert RipplePE(2).mem_depth == 0 and RipplePE(2, mem_depth=4096).mem_depth == 4096
    assert (pe_config_word("LOAD", slots=("hold", "edge", "hold")) & 0x1F) == PeOp.LOAD.value


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("profile", list(PROFILES))
def test_memory_random(depth, profile):
    """A random array preloaded, then LOADs and STOREs on a few hot words (every STORE followed by
    a LOAD), random origins, offsets, slot kinds, late sync tokens and dropped ports; the bank is
    read back after every memory phase."""
    seeds = seeds_for(f"pe-memory:{depth}:{profile}", count=2)
    print(f"pe memory depth={depth} profile={profile} seeds={seeds}")
    run_pe_amaranth_each(pe_design(depth, mem_depth=MEM_DEPTH),
                         [(memory_phases(random.Random(seed), MEM_DEPTH), profile, seed) for seed in seeds])


def test_a_pe_without_ripples_operators_still_loads_and_stores():
    """LOAD and STORE need a bank, not Ripple's operators (ripple_ops=False once left them out,
    so such a PE never fired a LOAD while the golden model did)."""
    seeds = seeds_for("pe-memory:no-ripple-ops", count=2)
    print(f"pe memory without ripple_ops seeds={seeds}")
    run_pe_amaranth_each(pe_design(2, mem_depth=MEM_DEPTH, ripple_ops=False),
                         [(memory_phases(random.Random(seed), MEM_DEPTH), "random_stall_50", seed)
                          for seed in seeds])


def run_memory_directed(phases, outputs, *, depth: int, mem_depth: int = 16, faults=None,
                        profile: str = "random_stall_50"):
    """Check the spec's expectation against the golden operators over a reference bank, then the RTL."""
    bank = [0] * mem_depth
    for k, (phase, want) in enumerate(zip(phases, outputs, strict=True)):
        run = golden(phase, bank=bank)
        assert run.outputs == [list(o) for o in want], f"phase {k}: the golden operator gives {run.outputs}"
        assert run.fault == (faults or {}).get(k), f"phase {k}: the golden fault is {run.fault}"
        bank = run.bank
    seeds = seeds_for(f"pe-memory-directed:{phases[0].op}:{len(phases)}:{depth}:{mem_depth}", count=2)
    print(f"pe memory directed depth={depth} mem_depth={mem_depth} profile={profile} seeds={seeds}")
    run_pe_amaranth_each(pe_design(depth, mem_depth=mem_depth), [(phases, profile, seed) for seed in seeds])


HOLD_BASE = ("hold", "edge", "hold")
PRELOAD = tuple((word, 1000 + word) for word in range(16))


@pytest.mark.parametrize("depth", DEPTHS)
def test_load_after_store_reads_the_new_value(depth):
    """Stores to words 5, 5, 6 (the last write wins), then loads of them; a late sync token holds
    a LOAD back and is taken with it. Bank word w is flat address 100 + w."""
    phases = [
        Phase("STORE", [[], [5, 5, 6], [111, 222, 333]], ("hold", "edge", "edge"), (100, 0, 0),
              origin=100, preload=PRELOAD),
        Phase("LOAD", [[], [15, 16, 17], []], HOLD_BASE, (90, 0, 0), origin=100, drop=(1,)),
        Phase("LOAD", [[100, 106], [], [7, 8]], ("edge", "hold", "edge"), (0, 0, 0), origin=100,
              delays={2: 30}),
    ]
    run_memory_directed(phases, [[[1, 1, 1], []], [[222, 333, 1007], []], [[1000, 333], [1, 1]]],
                        depth=depth)


@pytest.mark.parametrize("depth", DEPTHS)
def test_out_of_range_sets_the_fault(depth):
    """Bank words are flat addresses 100..115: outside, a LOAD gives 0, a STORE writes nothing,
    and status bit 4 and the fault register keep the first bad address. The origin is signed, so
    with origin MAX - 15 the address MIN is far below the bank, not just past its end."""
    phases = [
        Phase("LOAD", [[], [0, 15, 16, -1, 7], []], HOLD_BASE, (100, 0, 0), origin=100, preload=PRELOAD),
        Phase("STORE", [[], [-1, 16, 3], [7, 8, 9]], ("hold", "edge", "edge"), (100, 0, 0), origin=100),
        Phase("LOAD", [[], [0, 3], []], HOLD_BASE, (100, 0, 0), origin=100),
        Phase("LOAD", [[MIN, MAX, MAX - 15], [], []], ("edge", "hold", "hold"), origin=MAX - 15),
    ]
    outputs = [[[1000, 1015, 0, 0, 1007], [1] * 5], [[1, 1, 1], []], [[1000, 9], [1, 1]],
               [[0, 1015, 1000], [1, 1, 1]]]
    run_memory_directed(phases, outputs, depth=depth, faults={0: 116, 1: 99, 3: MIN})


def test_window_pages_of_a_4096_word_bank():
    """Words on both sides of the 2048-word page boundary, preloaded and read back through the
    page register, loaded and stored."""
    preload = ((0, 1), (2047, 2), (2048, 3), (4095, 4), (3000, 5))
    phases = [
        Phase("LOAD", [[], [4095, 2048, 0, 2047, 3000], []], HOLD_BASE, origin=0, preload=preload),
        Phase("STORE", [[], [2049, 2046], [77, 78]], ("hold", "edge", "edge"), origin=0),
        Phase("LOAD", [[], [2049, 2046], []], HOLD_BASE, origin=0, drop=(1,)),
    ]
    run_memory_directed(phases, [[[4, 3, 1, 2, 5], [1] * 5], [[1, 1], []], [[77, 78], []]], depth=2,
                        mem_depth=4096)


def test_memory_timing():
    """A LOAD's word is offered two cycles after its firing and an ADD's result one cycle after;
    both fire once per cycle while o[0] is ready. A STORE's write has landed in the cycle after
    its firing (a window read then sees it), when its done token is offered. The preload goes
    through an aliased window address (word + 16 on a 16-word bank); a PE without a bank never
    fires as a LOAD."""
    from amaranth.sim import Simulator

    pe, bankless = RipplePE(4, mem_depth=16), RipplePE(4)
    offsets = [(5 * k) % 16 for k in range(12)]
    seen = {}

    async def bench(ctx):
        async def write(unit, address, data):
            ctx.set(unit.cfg.addr, address)
            ctx.set(unit.cfg.data, data)
            ctx.set(unit.cfg.write, 1)
            await ctx.tick()
            ctx.set(unit.cfg.write, 0)

        for word in range(16):
            await write(pe, MEM_WINDOW + 16 + word, 500 + word)
        await write(pe, REG_ORIGIN, 40)
        for op, base in (("LOAD", 40), ("ADD", 1000)):
            await write(pe, REG_CONFIG, pe_config_word(op, slots=("hold", "edge", "hold"), drop=(1,)))
            await write(pe, REG_CONST, base)
            await write(pe, REG_CONST + 2, 0)
            await write(bankless, REG_CONFIG, pe_config_word(op, slots=("hold", "edge", "hold")))
            await write(bankless, REG_CONST, base)
            await write(bankless, REG_CONST + 2, 0)
            fired, words, sent = [], [], 0
            for unit in (pe, bankless):
                ctx.set(unit.o[0].ready, 1)
            for cycle in range(30):
                for unit in (pe, bankless):
                    ctx.set(unit.i[1].valid, sent < len(offsets))
                    ctx.set(unit.i[1].payload, offsets[min(sent, len(offsets) - 1)])
                if ctx.get(pe.fire):
                    fired.append(cycle)
                if ctx.get(pe.o[0].valid):
                    words.append((cycle, ctx.get(pe.o[0].payload)))
                if op == "LOAD":
                    assert not ctx.get(bankless.fire), "a PE without a bank fired as a LOAD"
                sent += ctx.get(pe.i[1].ready) and sent < len(offsets)
                await ctx.tick()
            seen[op] = fired, words
        # A STORE writes at the edge of its firing: a window read in the next cycle sees the word.
        await write(pe, REG_CONFIG, pe_config_word("STORE", slots=("hold", "edge", "hold")))
        await write(pe, REG_CONST, 40)
        await write(pe, REG_CONST + 2, 777)
        ctx.set(pe.i[1].valid, 1)
        ctx.set(pe.i[1].payload, 3)
        await ctx.tick()
        ctx.set(pe.i[1].valid, 0)
        for _ in range(4):
            if ctx.get(pe.fire):
                break
            await ctx.tick()
        assert ctx.get(pe.fire), "the STORE did not fire"
        await ctx.tick()
        ctx.set(pe.cfg.addr, MEM_WINDOW + 3)
        ctx.set(pe.cfg.read, 1)
        seen["done"] = ctx.get(pe.o[0].valid), ctx.get(pe.o[0].payload)
        await ctx.tick()
        ctx.set(pe.cfg.read, 0)
        seen["stored"] = ctx.get(pe.cfg.rdata)

    simulator = Simulator(pe)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    for op, latency, first in (("LOAD", 2, 500), ("ADD", 1, 1000)):
        fired, words = seen[op]
        assert len(fired) == len(offsets) and fired == list(range(fired[0], fired[0] + len(offsets))), \
            f"{op} fired in cycles {fired}, not once per cycle"
        expected = [(cycle + latency, first + offset) for cycle, offset in zip(fired, offsets, strict=True)]
        assert words == expected, f"{op}: o[0] offered {words} for firings in cycles {fired}"
    assert seen["done"] == (1, 1), f"the STORE's done token, the cycle after its firing: {seen['done']}"
    assert seen["stored"] == 777, f"a window read right after the STORE gives {seen['stored']}"


def test_runs_sharing_a_simulator_each_start_from_reset():
    """Runs of one PE in one simulator (``Simulator.reset`` between them) move the same tokens
    in the same cycles as each in a simulator of its own: nothing of one run (the queues, the
    operator's state, the bank) reaches the next."""
    (seed,) = seeds_for("pe-shared-simulator", count=1)
    print(f"pe runs in one simulator seed={seed}")
    rng = random.Random(seed)
    runs = [(memory_phases(rng, MEM_DEPTH), profile, rng.getrandbits(32))
            for profile in ("no_stall", "backpressure_90")]
    runs += [([drained(random_phase(op, rng))], "random_stall_50", rng.getrandbits(32))
             for op in ("STREAM", "CARRY")]

    def moved(bench):
        return bench.cycles, [monitor.transfers for monitor in bench.monitors]

    together = run_pe_amaranth_each(RipplePE(2, mem_depth=MEM_DEPTH), runs)
    alone = [run_pe_amaranth(RipplePE(2, mem_depth=MEM_DEPTH), phases, profile=profile, seed=run_seed)
             for phases, profile, run_seed in runs]
    assert [moved(bench) for bench in together] == [moved(bench) for bench in alone]


def test_bench_catches_a_wrong_expectation():
    """The scoreboard is live: a phase whose golden outputs are tampered with fails."""
    phase = drained(random_phase("ADD", random.Random(1)))
    from . import pe_bench

    original = pe_bench.golden

    def tampered(p, limit=20_000, bank=None):
        run = original(p, limit, bank)
        run.outputs[0] = [x + 1 for x in run.outputs[0]]
        return run

    pe_bench.golden = tampered
    try:
        with pytest.raises(ScoreboardError, match="expected"):
            run_pe_amaranth(pe_design(2), [phase], profile="no_stall", seed=1)
    finally:
        pe_bench.golden = original


@pytest.mark.verilator
def test_verilator():
    """The generated Verilog (depth 2, a 32-word bank): every operator in random order, then a
    memory run (preload, LOADs and STOREs, read-backs), every profile x 3 seeds."""
    import json
    from dataclasses import astuple

    from rivulet.sim.seeds import base_seed
    from rivulet.sim.streams import stream_ports
    from rivulet.sim.verilator import build_design, run_cocotb, run_directory

    depth, mem_depth, seeds = 2, MEM_DEPTH, seeds_for("pe-verilator")
    print(f"pe verilator depth={depth} mem_depth={mem_depth} seeds={seeds}")
    phases = {}
    for seed in seeds:
        rng = random.Random(seed)
        chosen = [drained(random_phase(op, rng)) for op in OPERATORS]
        rng.shuffle(chosen)
        chosen += memory_phases(rng, mem_depth)
        phases[str(seed)] = [phase.to_json() for phase in chosen]
    pe = RipplePE(depth, mem_depth=mem_depth)
    ports, _ = stream_ports(pe)
    config = {"depth": depth, "mem_depth": mem_depth, "ports": [astuple(port) for port in ports],
              "profiles": list(PROFILES), "seeds": seeds, "phases": phases, "base_seed": base_seed()}
    built = build_design(f"ripple-pe-depth={depth}-mem_depth={mem_depth}", pe)
    with run_directory("ripple-pe-random") as directory:
        run_cocotb(built, "testbench.ripple.tb_pe", directory, {"RIVULET_PE": json.dumps(config)})
