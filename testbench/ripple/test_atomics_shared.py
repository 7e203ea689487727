"""ACQUIRE and RELEASE PEs on the shared memory's atomic directory, and Ripple's atomic
histogram on a fabric with a shared memory.

Operator level: several sites, each an ACQUIRE PE and a RELEASE PE, on one
:class:`hw.banked_memory.BankedMemory`, in Amaranth's simulator. The bench holds what a site
acquired for a random while before handing it to the site's RELEASE, and checks in every cycle
that no address has two holders. Fabric level: the expected values are the case's own (counts
computed here in Python), never a golden model's.
"""

import random

import pytest

from hw.banked_memory import BankedMemory
from ripple_core.builder import Builder
from ripple_core.lower import LoweringError, compile_lowering, lower_graph
from ripple_core.pe import REG_CONFIG, REG_CONST, STATUS_FAULT, pe_config_word
from ripple_core.pe.model import PeMemoryError, PeModel
from ripple_core.programs import bfs_case, histogram, histogram_case, random_csr, ripple_bfs
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES, ScoreboardError, SinkDriver, SourceDriver, StreamPort
from rsn.channels import Channel
from testbench.ripple.test_pe_shared import WORDS, _Stream, read_fault_registers, shared_pes
from testbench.ripple.test_shared_memory import (
    PRIVATE,
    SHARED,
    SMALL_SHARED,
    check_on_fabric_model,
    check_on_small_rtl,
)


class GrantingMemory(BankedMemory):
    """A mutant whose directories answer yes to every ACQUIRE and RELEASE: no exclusion."""

    def _elaborate_directory(self, m, b, row, acquire, release, result):
        with m.If(acquire | release):
            m.d.sync += result.eq(1)


ACQUIRE = ("ACQUIRE", ("edge", "hold", "hold"), {1: 0, 2: 0})
RELEASE = ("RELEASE", ("edge", "hold", "hold"), {1: 0, 2: 0})


async def _configure(ctx, pe, op, slots, constants):
    for addr, value in [(REG_CONFIG, pe_config_word(op, slots=slots))] + \
            [(REG_CONST + slot, value) for slot, value in constants.items()]:
        ctx.set(pe.cfg.addr, addr)
        ctx.set(pe.cfg.write, 1)
        ctx.set(pe.cfg.data, value)
        await ctx.tick()
    ctx.set(pe.cfg.write, 0)


def run_sites(addresses, *, profile, seed, hold=(0, 12), lock_entries=4, memory_class=BankedMemory,
              max_cycles=20_000):
    """Site k is PE 2k (ACQUIRE of ``addresses[k]``, in order) and PE 2k+1 (its RELEASE). What
    site k acquires, the bench holds for a random number of cycles in ``hold`` and then feeds to
    its RELEASE. Checks every cycle that no address has two holders; returns the holders' log."""
    rng = random.Random(seed)
    stall = PROFILES[profile]
    sites = len(addresses)
    dut = shared_pes(2 * sites, memory_class=memory_class, lock_entries=lock_entries)
    acquired, released = [], []

    def source(name, stream, tokens):
        driver = SourceDriver(StreamPort(name, True, 32), tokens, stall.idle,
                              random.Random(rng.getrandbits(32)))
        return _Stream(name, stream, source=driver)

    def sink(name, stream):
        driver = SinkDriver(StreamPort(name, False, 32), stall.backpressure,
                            random.Random(rng.getrandbits(32)))
        return _Stream(name, stream, sink=driver)

    for k in range(sites):
        acquire, release = dut.pes[2 * k], dut.pes[2 * k + 1]
        acquired += [source(f"site{k}_acquire_i0", acquire.i[0], list(addresses[k])),
                     sink(f"site{k}_acquire_o0", acquire.o[0])]
        released += [source(f"site{k}_release_i0", release.i[0], []),
                     sink(f"site{k}_release_o0", release.o[0])]
    watched = [_Stream(f"pe{k}_mem_req", pe.mem_req) for k, pe in enumerate(dut.pes)]
    holders: dict[int, set[int]] = {}
    log = {"most_held": 0, "most_sites": 0, "grants": [[] for _ in range(sites)],
           "dones": [[] for _ in range(sites)]}
    due = [[] for _ in range(sites)]            # (cycle, address) to hand to the site's RELEASE

    async def testbench(ctx):
        for k in range(sites):
            for pe, (op, slots, constants) in ((dut.pes[2 * k], ACQUIRE), (dut.pes[2 * k + 1], RELEASE)):
                await _configure(ctx, pe, op, slots, constants)
        for cycle in range(max_cycles):
            for k in range(sites):
                source = released[2 * k].source
                while due[k] and due[k][0][0] <= cycle:
                    source.tokens.append(due[k].pop(0)[1])
            for stream in acquired + released:
                stream.drive(ctx, cycle)
            for k in range(sites):
                if acquired[2 * k + 1].observe(ctx, cycle):
                    address = acquired[2 * k + 1].monitor.transfers[-1][1]
                    holders.setdefault(address, set()).add(k)
                    log["grants"][k].append(address)
                    due[k].append((cycle + rng.randint(*hold), address))
                acquired[2 * k].observe(ctx, cycle)
                if released[2 * k].observe(ctx, cycle):
                    address = released[2 * k].monitor.transfers[-1][1]
                    holders[address].discard(k)
                if released[2 * k + 1].observe(ctx, cycle):
                    log["dones"][k].append(released[2 * k + 1].monitor.transfers[-1][1])
            for stream in watched:
                stream.observe(ctx, cycle)
            shared = {address: sorted(who) for address, who in holders.items() if len(who) > 1}
            if shared:
                raise ScoreboardError(f"cycle {cycle}: address(es) held by more than one site at once "
                                      f"(address: sites): {shared}")
            log["most_held"] = max(log["most_held"], sum(1 for who in holders.values() if who))
            log["most_sites"] = max(log["most_sites"], len(set().union(*holders.values())))
            await ctx.tick()
            if all(len(log["dones"][k]) == len(addresses[k]) for k in range(sites)):
                break
        else:
            raise ScoreboardError(f"no completion after {max_cycles} cycles: grants per site "
                                  f"{[len(g) for g in log['grants']]}, done tokens "
                                  f"{[len(d) for d in log['dones']]}, of {[len(a) for a in addresses]}")
        log["faults"] = [await read_fault_registers(ctx, pe) for pe in dut.pes]
        log["asked"] = [len(watched[2 * k].monitor.transfers) for k in range(sites)]

    dut.run(testbench)
    for k in range(sites):
        assert log["grants"][k] == list(addresses[k]), f"site {k}: acquired {log['grants'][k]}"
        assert log["dones"][k] == [1] * len(addresses[k]), f"site {k}: done tokens {log['dones'][k]}"
    return log


@pytest.mark.parametrize("profile", list(PROFILES))
def test_sites_contending_for_a_few_addresses_never_hold_one_together(profile):
    """Four sites (eight PEs) acquire from five addresses, three of them in one bank, under
    every stall profile: each site gets its addresses in order, one holder per address at any
    time, some ACQUIREs answered busy and asked again, and no fault."""
    for seed in seeds_for(f"atomics-shared:{profile}", count=2):
        print(f"contending sites profile={profile} seed={seed}")
        rng = random.Random(seed)
        pool = [1, 5, 9, 2, 63]             # 1, 5 and 9 share bank 1 of 4
        addresses = [[rng.choice(pool) for _ in range(12)] for _ in range(4)]
        log = run_sites(addresses, profile=profile, seed=seed)
        assert sum(log["asked"]) > sum(map(len, addresses)), "no ACQUIRE was ever answered busy"
        for k, (status, _) in enumerate(log["faults"]):
            assert not status & STATUS_FAULT, f"PE {k}: fault bit set, status {status:#x}"


def test_a_directory_that_grants_everything_is_caught():
    """The every-cycle check sees two holders of one address when the directory never refuses."""
    (seed,) = seeds_for("atomics-shared-mutant", count=1)
    print(f"granting directory seed={seed}")
    addresses = [[3] * 6 for _ in range(3)]
    with pytest.raises(ScoreboardError, match=r"more than one site at once \(address: sites\): \{3: "):
        run_sites(addresses, profile="no_stall", seed=seed, memory_class=GrantingMemory)


def test_sites_on_different_addresses_hold_them_at_the_same_time():
    """Three sites on addresses of their own. In one bank whose directory has two entries, two
    addresses are held at once and a third ACQUIRE waits ("busy", asked again); in three banks
    with one entry each, all three sites hold an address at once."""
    (seed,) = seeds_for("atomics-shared-parallel", count=1)
    print(f"parallel sites seed={seed}")
    one_bank = [[4 * (3 * j + k) for j in range(4)] for k in range(3)]      # bank 0, all different
    log = run_sites(one_bank, profile="no_stall", seed=seed, hold=(20, 20), lock_entries=2)
    assert log["most_held"] == 2, f"at most {log['most_held']} addresses were held at once"
    three_banks = [[4 * j + k for j in range(4)] for k in range(3)]           # site k in bank k
    log = run_sites(three_banks, profile="no_stall", seed=seed, hold=(20, 20), lock_entries=1)
    assert (log["most_held"], log["most_sites"]) == (3, 3), log


def test_a_release_of_a_free_address_faults_with_the_address_and_does_not_hang():
    """PE 0 acquires 5 and PE 1 releases it; PE 2 then releases 7, which nobody holds: only PE
    2 has the fault bit, with 7 in its fault register, and its done token still comes."""
    dut = shared_pes(3)
    seen = {}

    async def send(ctx, pe, address):
        ctx.set(pe.i[0].payload, address)
        ctx.set(pe.i[0].valid, 1)
        await ctx.tick().until(pe.i[0].ready)
        ctx.set(pe.i[0].valid, 0)
        for _ in range(40):
            if ctx.get(pe.o[0].valid):
                seen.setdefault(pe, []).append(ctx.get(pe.o[0].payload))
            await ctx.tick()

    async def testbench(ctx):
        for pe, config in zip(dut.pes, (ACQUIRE, RELEASE, RELEASE), strict=True):
            await _configure(ctx, pe, *config)
            ctx.set(pe.o[0].ready, 1)
        await send(ctx, dut.pes[0], 5)
        await send(ctx, dut.pes[1], 5)
        await send(ctx, dut.pes[2], 7)
        seen["registers"] = [await read_fault_registers(ctx, pe) for pe in dut.pes]

    dut.run(testbench)
    assert [seen.get(pe) for pe in dut.pes] == [[5], [1], [1]], seen
    (status0, _), (status1, _), (status2, fault2) = seen["registers"]
    assert not status0 & STATUS_FAULT and not status1 & STATUS_FAULT, seen["registers"]
    assert status2 & STATUS_FAULT and fault2 == 7, f"PE 2: status {status2:#x}, fault register {fault2}"


def test_the_model_refuses_a_release_of_a_free_address_naming_pe_and_address():
    model = PeModel(shared_words=WORDS, name="pe_r")
    model.write_word(REG_CONFIG, pe_config_word("RELEASE", slots=("const", "hold", "hold")))
    for slot, value in enumerate((9, 0, 0)):
        model.write_word(REG_CONST + slot, value)
    model.uops.append({"firings": 1, "last": 1})
    inputs, outputs = [Channel(f"i{k}", 1) for k in range(3)], [Channel(f"o{k}", 1) for k in range(2)]
    with pytest.raises(PeMemoryError, match=r"pe_r: RELEASE of address 9, which no ACQUIRE holds"):
        while model.step(inputs, outputs):
            pass


# ---------------------------------------------------------------------------------- fabric level

def two_site_histogram():
    """Two loops, each its own ACQUIRE and RELEASE site, increment one array of counts: without
    mutual exclusion across the sites, increments would be lost."""
    b = Builder("histogram2")
    count = b.array("count")
    for site in ("a", "b"):
        keys = b.array(f"keys_{site}")
        i, _ = b.stream(b.const(0), b.scalar(f"n_{site}"), b.hold(1), cmp="SLT")
        key = b.acquire(b.load(keys, i))
        done = b.store(count, key, b.add(b.load(count, key), b.hold(1)))
        b.sink(f"done_{site}", b.release(key, sync=done))
    return b.build()


def two_site_case(keys_a, keys_b, bins):
    counts = [0] * bins
    for key in keys_a + keys_b:
        counts[key] += 1
    return {"args": {"n_a": len(keys_a), "n_b": len(keys_b)},
            "mem": {"count": [0] * bins, "keys_a": keys_a, "keys_b": keys_b},
            "expect": {"count": counts, "done_a": [1] * len(keys_a), "done_b": [1] * len(keys_b)}}


def test_atomic_histograms_on_the_shared_memory_golden_model():
    """Ripple's atomic histogram (one site) and a two-site one on the shared memory's fabric
    model, which private banks refuse (two STOREs of one array). Counts computed here from the keys."""
    (seed,) = seeds_for("atomics-shared-model", count=1)
    print(f"atomic histograms on the shared memory model seed={seed}")
    rng = random.Random(seed)
    for bins in (1, 3):
        keys = [rng.randrange(bins) for _ in range(rng.randint(10, 30))]
        lowering = lower_graph(histogram(atomic=True), histogram_case(keys, bins), SHARED, name="histogram")
        check_on_fabric_model(f"histogram bins={bins}", lowering, SHARED, seed)
    keys_a, keys_b = ([rng.randrange(3) for _ in range(rng.randint(8, 20))] for _ in range(2))
    case = two_site_case(keys_a, keys_b, 3)
    with pytest.raises(LoweringError, match=r"both access array 'count'"):
        lower_graph(two_site_histogram(), case, PRIVATE)
    lowering = lower_graph(two_site_histogram(), case, SHARED, name="histogram2")
    assert sum(1 for nodes in lowering.units.values() if "acquire" in nodes[0]) == 2
    check_on_fabric_model("two-site histogram", lowering, SHARED, seed)


def test_ripple_bfs_runs_on_the_shared_memory():
    """Ripple BFS (atomic test-and-set of ``visited``, a self-push on a spill queue) lowers on
    the shared memory and reaches exactly the vertices a plain depth-first search reaches."""
    (seed,) = seeds_for("atomics:ripple_bfs", count=1)
    print(f"seed={seed}")
    row, col = random_csr(48, 3, seed)
    case = bfs_case(row, col, ordered=False)
    assert case["expect"]["visited"] == _reachable_by_search(row, col)
    lowering = lower_graph(ripple_bfs(), case, SHARED, name=f"ripple-bfs-{seed}")
    check_on_fabric_model("Ripple BFS", lowering, SHARED, seed)


def _reachable_by_search(row, col) -> list[int]:
    """Vertices reachable from 0, by a recursive search written here (not the programs' own)."""
    seen = [0] * (len(row) - 1)

    def visit(v):
        seen[v] = 1
        for d in col[row[v]:row[v + 1]]:
            if not seen[d]:
                visit(d)
    visit(0)
    return seen


def test_atomics_on_a_memory_without_a_directory_are_refused():
    """An ACQUIRE on a memory without a directory would never be granted."""
    no_directory = SHARED.__class__(**{**SHARED.__dict__, "memory": SHARED.memory.__class__(
        words=SHARED.memory.words, banks=SHARED.memory.banks, lock_entries=0)})
    with pytest.raises(LoweringError, match=r"lock_entries = 0\) would wait for ever"):
        lower_graph(histogram(atomic=True), histogram_case([0], 1), no_directory)


@pytest.mark.verilator
def test_the_atomic_histogram_on_the_rtl_under_back_pressure():
    """Ripple's atomic histogram on the 3x4 shared-memory fabric of the shared-memory RTL
    tests (one build for both), in one native simulation under every stall profile."""
    (seed,) = seeds_for("atomics-shared-rtl", count=1)
    rng = random.Random(seed)
    runs = []
    for profile in PROFILES:
        bins = rng.choice([1, 2, 3])
        keys = [rng.randrange(bins) for _ in range(rng.randint(8, 16))]
        lowering = lower_graph(histogram(atomic=True), histogram_case(keys, bins), SMALL_SHARED,
                               name="histogram")
        run_seed = rng.randrange(2**31)
        runs.append((f"histogram {profile} keys={keys} seed={run_seed}", lowering,
                     compile_lowering(lowering, SMALL_SHARED, seed=run_seed), profile, run_seed))
    print(f"atomic histogram on the RTL, base seed {seed}: {[run[0] for run in runs]}")
    check_on_small_rtl(runs, "atomics-shared-rtl")
