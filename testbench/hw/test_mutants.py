"""The checks must be able to fail: each broken primitive is caught, in both tiers, by the right check."""

import pytest

from rivulet.sim.benches import run_amaranth_bench, run_verilator_bench
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import NoProgressError
from testbench.mutants import MUTANTS

PROFILES = ["backpressure_90", "random_stall_50"]


@pytest.mark.parametrize("name", list(MUTANTS))
@pytest.mark.parametrize("profile", PROFILES)
def test_mutant_caught_in_amaranth_sim(name, profile):
    mutant = MUTANTS[name]
    (seed,) = seeds_for(f"mutant-sim:{name}:{profile}", count=1)
    with pytest.raises(AssertionError, match=mutant.evidence) as caught:
        run_amaranth_bench(mutant.build(), mutant.kind, mutant.params, profile=profile, seeds=[seed])
    assert not isinstance(caught.value, NoProgressError)


@pytest.mark.verilator
@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_caught_on_verilator(name):
    mutant = MUTANTS[name]
    seeds = seeds_for(f"mutant-verilator:{name}", count=2)
    with pytest.raises(AssertionError, match=mutant.evidence) as caught:
        run_verilator_bench(mutant.build(), mutant.kind, mutant.params, case=f"mutant-{name}",
                            profiles=PROFILES, seeds=seeds, design=f"mutant-{name}")
    # Every (profile, seed) must have failed, not just one.
    assert f"{len(PROFILES) * len(seeds)} cocotb test(s) failed" in str(caught.value)
