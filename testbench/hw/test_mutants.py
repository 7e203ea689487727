"""The checks must be able to fail: each broken primitive is caught, in both tiers, by the right check."""

import pytest

from rivulet.sim.benches import run_amaranth_bench, run_verilator_benches
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import NoProgressError
from rivulet.sim.verilator import CocotbFailure
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
def test_mutants_caught_on_verilator():
    """All mutants side by side in one design and one simulation: every (profile, seed) of each
    must fail, by its own check."""
    seeds = seeds_for("mutant-verilator", count=2)
    print(f"mutants on Verilator, seeds={seeds}")
    rows = [(name, mutant.build(), mutant.kind, mutant.params) for name, mutant in MUTANTS.items()]
    with pytest.raises(CocotbFailure) as caught:
        run_verilator_benches(rows, case="mutants", design="mutants", profiles=PROFILES, seeds=seeds)
    failed = caught.value.tests
    for name, mutant in MUTANTS.items():
        for profile in PROFILES:
            for seed in seeds:
                test = f"stream_bench/row={name}/profile={profile}/seed={seed}"
                assert test in failed, f"{name} passed under {profile} seed {seed}"
                assert mutant.evidence in failed[test], f"{name}, {profile}, {seed}: {failed[test]}"
    assert len(failed) == len(MUTANTS) * len(PROFILES) * len(seeds), sorted(failed)
