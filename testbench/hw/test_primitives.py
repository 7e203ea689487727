"""Every stream primitive x parameter set x stall profile x 3 seeds, against its golden model."""

import pytest

from hw import catalog
from rivulet.sim.benches import run_amaranth_bench, run_verilator_benches
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES

from .scenarios import VERILATOR_ROWS, primitive_rows, row_id


@primitive_rows
@pytest.mark.parametrize("profile", list(PROFILES))
def test_amaranth_sim(kind, params, profile):
    """Fast tier: Amaranth's simulator, the same drivers, monitors and scoreboards."""
    seeds = seeds_for(f"sim:{row_id(kind, params)}:{profile}")
    print(f"{kind} {params} profile={profile} seeds={seeds}")
    run_amaranth_bench(catalog.build(kind, **params), kind, params, profile=profile, seeds=seeds)


@pytest.mark.verilator
def test_verilator():
    """Generated Verilog on Verilator via cocotb: a row of each shape, side by side in one
    design, each under every profile and seed, all in one simulation."""
    seeds = seeds_for("verilator:primitives")
    print(f"{len(VERILATOR_ROWS)} primitive rows, seeds={seeds}")
    rows = [(row_id(kind, params), catalog.build(kind, **params), kind, params)
            for kind, params in VERILATOR_ROWS]
    # Optimised: the table's runs clock every primitive at once, 36 s against 47 s unoptimised
    # with the compile (cold, one idle core).
    records = run_verilator_benches(rows, case="primitives", design="primitives", profiles=list(PROFILES),
                                    seeds=seeds, optimise=True)
    assert sorted((r["row"], r["profile"], r["seed"]) for r in records) == \
        sorted((name, profile, seed) for name, *_ in rows for profile in PROFILES for seed in seeds)
