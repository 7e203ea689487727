"""Every stream primitive x parameter set x stall profile x 3 seeds, against its golden model."""

import pytest

from hw import catalog
from rivulet.sim.benches import run_amaranth_bench, run_verilator_bench
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES

from .scenarios import primitive_rows, row_id, verilator_rows


@primitive_rows
@pytest.mark.parametrize("profile", list(PROFILES))
def test_amaranth_sim(kind, params, profile):
    """Fast tier: Amaranth's simulator, the same drivers, monitors and scoreboards."""
    seeds = seeds_for(f"sim:{row_id(kind, params)}:{profile}")
    print(f"{kind} {params} profile={profile} seeds={seeds}")
    run_amaranth_bench(catalog.build(kind, **params), kind, params, profile=profile, seeds=seeds)


@pytest.mark.verilator
@verilator_rows
def test_verilator(kind, params):
    """Generated Verilog on Verilator via cocotb: every profile and seed in one simulation."""
    seeds = seeds_for(f"verilator:{row_id(kind, params)}")
    print(f"{kind} {params} seeds={seeds}")
    run_verilator_bench(catalog.build(kind, **params), kind, params,
                        case=f"primitive-{row_id(kind, params)}", profiles=list(PROFILES), seeds=seeds)
