"""The native tier and the cocotb tier give the same answers: for the same programs, stall
profiles and seeds, the same host outputs, every counter, and the same handshake on every host
stream in every cycle (each tier records (valid, ready) of every stream per cycle).

The cocotb tier drives its streams from the Python model of the native top's pattern
generators, so the traces must be equal bit for bit: a difference in the first cycle it appears
points at the host side of one tier (its model or its hardware), never at the fabric, which is
the same Verilog in both.

What differs between the tiers is the host side, which no FU kind changes: the RSN fabric takes
every stall profile, and the pe fabric the shared memory's counters and extra register reads
(which the xbar tiles' membranes use too, so the SNN fabric needs no cocotb build of its own).
"""

import random

import pytest

from rivulet.sim.fabric_run import run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rivulet.sim.toolchain import REPOSITORY
from rsn.fabric_spec import default_fabric, parse_fabric
from rsn.program import compile_program, load_program
from rsn.random_programs import random_program
from rsn.readout import register_reads

pytestmark = pytest.mark.verilator

FIELDS = ("outputs", "firings", "link_beats", "status", "stalls", "cycles", "done_cycle",
          "stalled_cycle", "extra", "host_sent", "bank_accesses", "bank_conflicts")


def _assert_tiers_agree(compiled_programs, profiles, seeds, case, extra_reads=None):
    results = {tier: run_many_on_rtl(compiled_programs, profiles=profiles, seeds=seeds, case=f"{case}-{tier}",
                                     extra_reads=extra_reads, tier=tier, trace=True)
               for tier in ("native", "cocotb")}
    runs = zip(compiled_programs, profiles, seeds, results["native"], results["cocotb"], strict=True)
    for compiled, profile, seed, native, cocotb in runs:
        label = f"{compiled.program.name} profile={profile} seed={seed}"
        for name in FIELDS:
            assert getattr(native, name) == getattr(cocotb, name), f"{label}: {name} differs"
        assert len(native.trace) == len(cocotb.trace), f"{label}: the tiers clocked different cycle counts"
        pairs = enumerate(zip(native.trace, cocotb.trace, strict=True))
        differing = next((cycle for cycle, (a, b) in pairs if a != b), None)
        assert differing is None, (f"{label}: handshakes differ first in cycle {differing}: native "
                                   f"{native.trace[differing]:#x}, cocotb {cocotb.trace[differing]:#x}")
        assert native.trace, label
    return results


@pytest.mark.long(0)
def test_tiers_agree_on_the_mlp_and_random_programs():
    spec = default_fabric()
    (base,) = seeds_for("tiers:rsn", count=1)
    rng = random.Random(base)
    mlp = compile_program(load_program(REPOSITORY / "examples" / "mlp.py"), spec)
    # The MLP (1,200 to 1,800 cycles) under two profiles, and six random programs (a few hundred
    # each) that take every profile at least once: each profile's pattern generator is compared.
    mlp_profiles = rng.sample(list(PROFILES), 2)
    random_profiles = list(PROFILES) + [rng.choice(list(PROFILES))]
    rng.shuffle(random_profiles)
    programs = [mlp] * len(mlp_profiles) + [compile_program(random_program(rng.getrandbits(32)), spec)
                                            for _ in random_profiles]
    profiles = mlp_profiles + random_profiles
    seeds = [rng.getrandbits(32) for _ in programs]
    print(f"base seed {base}: {list(zip([c.program.name for c in programs], profiles, seeds, strict=True))}")
    _assert_tiers_agree(programs, profiles, seeds, "tiers-rsn")


# A small fabric of pe tiles (ripple.toml's parameters, a shared memory instead of private
# banks): random Ripple programs of up to 11 operators route on it, both tiers build it in
# seconds, and testbench/ripple/test_shared_memory.py runs its RTL tests on the same build.
SMALL_PE_FABRIC = {
    "rows": 3, "cols": 4, "tiles": ["pe pe pe pe"] * 3, "queue_depth": 2,
    "memory": {"words": 512, "banks": 4}, "pe": {"ripple_ops": True},
    "host_ports": [{"name": "in0", "tile": [1, 0], "side": "W", "direction": "in"},
                   {"name": "out0", "tile": [0, 3], "side": "E", "direction": "out"},
                   {"name": "out1", "tile": [1, 3], "side": "E", "direction": "out"}],
}


@pytest.mark.long(1)
def test_tiers_agree_on_ripple_programs():
    from ripple_core.fuzz.differential import NotRunnable, prepare
    from ripple_core.fuzz.generate import GeneratorLimits
    from ripple_core.fuzz.generate import random_program as random_ripple_program

    spec = parse_fabric(SMALL_PE_FABRIC, "3x4 pe test fabric")
    (base,) = seeds_for("tiers:ripple", count=1)
    rng = random.Random(base)
    programs = []
    while len(programs) < 4:
        seed = rng.getrandbits(32)
        source = random_ripple_program(random.Random(seed), GeneratorLimits(min_ops=4, max_ops=11))
        try:
            prepared = prepare(source, spec, name=f"ripple_{seed}", seed=seed)
        except NotRunnable:
            continue
        programs.append(prepared.compiled)
    profiles = [rng.choice(list(PROFILES)) for _ in programs]
    seeds = [rng.getrandbits(32) for _ in programs]
    print(f"base seed {base}: {list(zip([c.program.name for c in programs], profiles, seeds, strict=True))}")
    _assert_tiers_agree(programs, profiles, seeds, "tiers-ripple",
                        extra_reads=[register_reads(compiled) for compiled in programs])
