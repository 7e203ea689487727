# amaranth: UnusedElaboratable=no
"""The ``mem`` FU against its golden model, in both tiers, plus latency, throughput and mutants.

Every random scenario preloads the whole bank through the config bus, runs a random affine
program of READs and WRITEs (negative steps, single words, long runs, wraparound, starts past the
bank) under a stall profile, checks each READ word and every counter and flag cycle by cycle,
then reads the bank back through the config bus and pulses ``clear``.
"""

import json
from dataclasses import astuple

import pytest
from amaranth.hdl import Value
from amaranth.sim import Simulator

from hw.params import ParameterError
from rivulet.sim.amaranth_sim import port_values, run_each_in_amaranth
from rivulet.sim.seeds import base_seed, seeds_for
from rivulet.sim.streams import PROFILES, ScoreboardError, stream_ports
from rivulet.sim.verilator import build_design, run_cocotb, run_directory
from rivulet.sim.wrappers import Clocked
from rsn.fu import fu_signature
from rsn.fu_mem import (
    MEM_KIND,
    READ_INTERVAL,
    READ_LATENCY,
    WRITE_INTERVAL,
    MemFu,
    MemModel,
    affine_addresses,
)
from rsn.isa import MemUop, encode

from .mem_bench import MUTANTS, make_mem_bench, max_cycles_for

SIM_CONFIGS = [{"width": 32, "mem_depth": 64}, {"width": 8, "mem_depth": 16},
               {"width": 48, "mem_depth": 256}]
VERILATOR_CONFIGS = [{"width": 32, "mem_depth": 1024}, {"width": 8, "mem_depth": 16}]
WORDS = 200


def config_id(config: dict) -> str:
    return f"w{config['width']}-d{config['mem_depth']}"


def run_scenario(component_class, config: dict, profile: str, seed: int, **options):
    """One scenario in Amaranth's simulator; returns the bench for timing inspection."""
    return run_scenarios(component_class, config, profile, [seed], **options)[0]


def run_scenarios(component_class, config: dict, profile: str, seeds, **options) -> list:
    """The scenario once per seed, each from reset, in one simulator; returns the benches."""
    component = component_class(**config)
    ports, extra = stream_ports(component)
    benches = [make_mem_bench(ports, extra, config["width"], config["mem_depth"], profile, seed, **options)
               for seed in seeds]
    cycles = max_cycles_for(config["mem_depth"], WORDS)
    run_each_in_amaranth(component, [(bench, cycles) for bench in benches])
    return benches


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("config", SIM_CONFIGS, ids=config_id)
def test_amaranth_sim(config, profile):
    seeds = seeds_for(f"sim:mem:{config_id(config)}:{profile}")
    print(f"mem {config} profile={profile} seeds={seeds}")
    run_scenarios(MemFu, config, profile, seeds, words=WORDS)


@pytest.mark.verilator
@pytest.mark.parametrize("config", VERILATOR_CONFIGS, ids=config_id)
def test_verilator(config):
    """Generated Verilog on Verilator: one build, every profile and seed in one simulation."""
    component = MemFu(**config)
    ports, extra = stream_ports(component)
    seeds = seeds_for(f"verilator:mem:{config_id(config)}")
    print(f"mem {config} seeds={seeds}")
    case = f"rsn-mem-{config_id(config)}"
    setup = {**config, "ports": [astuple(port) for port in ports], "extra": extra,
             "profiles": list(PROFILES), "seeds": seeds, "words": WORDS, "base_seed": base_seed(),
             "max_cycles": max_cycles_for(config["mem_depth"], WORDS)}
    built = build_design(f"rsn-mem-width={config['width']}-mem_depth={config['mem_depth']}",
                         component)
    with run_directory(case) as directory:
        summary = directory / "summary.jsonl"
        run_cocotb(built, "testbench.rsn.tb_mem", directory,
                   {"RIVULET_MEM_BENCH": json.dumps(setup), "RIVULET_BENCH_SUMMARY": str(summary)})
        records = [json.loads(line) for line in summary.read_text().splitlines()]
    assert len(records) == len(PROFILES) * len(seeds)
    assert all(record["words"] >= WORDS for record in records)


# --- latency and throughput -------------------------------------------------------------------

LONG_READ = {"write": 0, "start": 5, "stride": 3, "offset": -7, "count_i": 64, "count_j": 8}
LONG_WRITE = {**LONG_READ, "write": 1}


def _cycles(bench, stream: str) -> list[int]:
    return [cycle for cycle, _payload in bench.inner.transfers(stream)]


def _rate(words: int, first: int, last: int) -> float:
    return words / (last - first + 1)


def test_read_latency_and_throughput():
    bench = run_scenario(MemFu, {"width": 32, "mem_depth": 1024}, "no_stall", 1, uops=[LONG_READ])
    (accepted,), words = _cycles(bench, "uop"), _cycles(bench, "o__0")
    assert len(words) == 512
    assert words[0] - accepted == READ_LATENCY
    assert {later - earlier for earlier, later in zip(words, words[1:], strict=False)} == {READ_INTERVAL}
    assert _rate(len(words), accepted, words[-1]) >= 0.95


def test_write_throughput():
    bench = run_scenario(MemFu, {"width": 32, "mem_depth": 1024}, "no_stall", 2, uops=[LONG_WRITE])
    (accepted,), words = _cycles(bench, "uop"), _cycles(bench, "i__0")
    assert len(words) == 512
    assert {later - earlier for earlier, later in zip(words, words[1:], strict=False)} == {WRITE_INTERVAL}
    assert _rate(len(words), accepted, words[-1]) >= 0.95


def test_back_to_back_single_words_stream():
    """The next micro-op is accepted as the current one issues its last address: no bubble."""
    uops = [{"write": 0, "start": 17 * k, "stride": 0, "offset": 0, "count_i": 1, "count_j": 1}
            for k in range(48)]
    bench = run_scenario(MemFu, {"width": 32, "mem_depth": 64}, "no_stall", 3, uops=uops)
    accepted, words = _cycles(bench, "uop"), _cycles(bench, "o__0")
    assert words == [cycle + READ_LATENCY for cycle in accepted] == list(range(3, 3 + 48))


# --- the checks can fail ----------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["random_stall_50", "backpressure_90"])
@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_caught(name, profile):
    for seed in seeds_for(f"mutant:mem:{name}:{profile}", count=2):
        with pytest.raises(ScoreboardError, match="READ word|cfg__rdata"):
            run_scenario(MUTANTS[name], {"width": 32, "mem_depth": 64}, profile, seed, words=WORDS)


# --- config bus against running micro-ops -----------------------------------------------------

def _word(addr: int) -> int:
    return (addr * 0x9E3779B1 + 0x1234) & 0xFFFF_FFFF


def test_config_bus_wins_without_losing_words():
    """Config reads and writes in the same cycles as a READ and then a WRITE on other words: the
    micro-ops pause instead of losing a word, and every config access lands."""
    top = Clocked(MemFu(width=32, mem_depth=64))
    port = {name: Value.cast(value) for name, value in port_values(top).items()}
    read_run = {"write": 0, "start": 0, "stride": 1, "offset": 0, "count_i": 24, "count_j": 1}
    write_run = {**read_run, "write": 1, "last": 1}
    read_words, cfg_reads, final = [], [], []

    def cfg_access(ctx, write: bool, addr: int, data: int = 0):
        ctx.set(port["cfg__write"], int(write))
        ctx.set(port["cfg__read"], int(not write))
        ctx.set(port["cfg__addr"], addr)
        ctx.set(port["cfg__data"], data)

    def cfg_idle(ctx):
        ctx.set(port["cfg__write"], 0)
        ctx.set(port["cfg__read"], 0)

    async def run_alongside(ctx, uop, feed: bool):
        """Give ``uop``, then alternate a config read of word 32 + k with a config write of
        word 48 + k (k < 16) while it runs; feed WRITE words when ``feed``."""
        ctx.set(port["uop__payload"], encode(MemUop, uop))
        ctx.set(port["uop__valid"], 1)
        await ctx.tick()
        ctx.set(port["uop__valid"], 0)
        fed = 0

        def stream_words():
            """This cycle's WRITE word on offer, and the READ word taken (o[0] is always ready)."""
            nonlocal fed
            offering = feed and fed < 24
            ctx.set(port["i__0__valid"], int(offering))
            ctx.set(port["i__0__payload"], 0xC0DE_0000 + fed)
            if ctx.get(port["o__0__valid"]):
                read_words.append(ctx.get(port["o__0__payload"]))
            fed += offering and ctx.get(port["i__0__ready"])

        for cycle in range(32):
            k = cycle // 2
            if cycle % 2 == 0:
                cfg_access(ctx, False, 32 + k)
            else:
                cfg_access(ctx, True, 48 + k, ~_word(48 + k) & 0xFFFF_FFFF)
            stream_words()
            await ctx.tick()
            if cycle % 2 == 0:
                cfg_reads.append(ctx.get(port["cfg__rdata"]))
        cfg_idle(ctx)
        for _ in range(24):
            stream_words()
            await ctx.tick()
        assert not ctx.get(port["busy"])

    async def testbench(ctx):
        for addr in range(64):
            cfg_access(ctx, True, addr, _word(addr))
            await ctx.tick()
        cfg_idle(ctx)
        ctx.set(port["o__0__ready"], 1)
        await run_alongside(ctx, read_run, feed=False)
        await run_alongside(ctx, write_run, feed=True)
        for addr in range(64):
            cfg_access(ctx, False, addr)
            await ctx.tick()
            final.append(ctx.get(port["cfg__rdata"]))

    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()
    assert read_words == [_word(addr) for addr in range(24)]
    assert cfg_reads == [_word(32 + k) for k in range(16)] * 2
    assert final[:24] == [0xC0DE_0000 + k for k in range(24)]
    assert final[24:48] == [_word(addr) for addr in range(24, 48)]
    assert final[48:] == [~_word(addr) & 0xFFFF_FFFF for addr in range(48, 64)]


# --- the model and the parameters -------------------------------------------------------------

def test_affine_addresses_wrap_modulo_depth():
    fields = {"start": 4095, "stride": -3, "offset": 17, "count_i": 3, "count_j": 2}
    assert affine_addresses(fields, 16) == [15, 12, 9, 0, 13, 10]
    with pytest.raises(ValueError, match="count_j=0"):
        affine_addresses({**fields, "count_j": 0}, 16)


def test_model_config_window():
    model = MemModel(width=8, mem_depth=16)
    model.write_word(0x0FF3, 0x1FF)             # aliases word 3; the width keeps 8 bits
    assert model.memory[3] == 0xFF and model.read_word(0x0003) == 0xFF
    with pytest.raises(ValueError, match="storage window"):
        model.read_word(0x1000)


@pytest.mark.parametrize("mem_depth", [48, 1, 8192, "64"])
def test_bad_mem_depth_refused(mem_depth):
    with pytest.raises(ParameterError, match="mem_depth"):
        MemFu(width=32, mem_depth=mem_depth)
    with pytest.raises(ParameterError, match="mem_depth"):
        MemModel(width=32, mem_depth=mem_depth)


def test_kind_description():
    assert (MEM_KIND.name, MEM_KIND.n_in, MEM_KIND.n_out) == ("mem", 1, 1)
    assert MEM_KIND.uop_layout is MemUop and MEM_KIND.latency == READ_LATENCY
    fu = MEM_KIND.rtl(width=16, mem_depth=256)
    assert fu.signature == fu_signature(MEM_KIND, 16)
    assert isinstance(MEM_KIND.model(width=16, mem_depth=256), MemModel)
