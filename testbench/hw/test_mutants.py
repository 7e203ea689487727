"""The checks must be able to fail: each broken queue is caught, in both tiers, by the right check."""

import pytest
from amaranth.hdl import unsigned

from testbench.benches import run_amaranth_bench, run_verilator_bench
from testbench.mutants import MUTANTS
from testbench.seeds import seeds_for
from testbench.streams import NoProgressError

PARAMS = {"width": 8, "depth": 4}


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_caught_in_amaranth_sim(name):
    mutant, evidence = MUTANTS[name]
    (seed,) = seeds_for(f"mutant-sim:{name}", count=1)
    with pytest.raises(AssertionError, match=evidence) as caught:
        run_amaranth_bench(mutant(unsigned(8), 4), "token_queue", PARAMS,
                           profile="backpressure_90", seed=seed)
    assert not isinstance(caught.value, NoProgressError)


@pytest.mark.verilator
@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutant_caught_on_verilator(name):
    mutant, evidence = MUTANTS[name]
    seeds = seeds_for(f"mutant-verilator:{name}", count=2)
    with pytest.raises(AssertionError, match=evidence) as caught:
        run_verilator_bench(mutant(unsigned(8), 4), "token_queue", PARAMS, case=f"mutant-{name}",
                            profiles=["backpressure_90", "random_stall_50"], seeds=seeds,
                            design=f"mutant-{name}")
    # Every (profile, seed) must have failed, not just one.
    assert "4 cocotb test(s) failed" in str(caught.value)
