"""cocotb bench for the Ripple PE on Verilator.

The pytest side (``test_pe.py::test_verilator``) passes the phases and seeds as JSON in
``RIVULET_PE``; each (profile, seed) pair is one cocotb test. Stimulus and checks are those of
:class:`testbench.ripple.pe_bench.PeBench`, the same as in the Amaranth simulator.
"""

import json
import os

import cocotb
from cocotb import Param
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from rivulet.sim.streams import StreamPort
from testbench.ripple.pe_bench import Phase, make_pe_bench

CONFIG = json.loads(os.environ.get("RIVULET_PE", "{}"))


@cocotb.test()
@cocotb.parametrize(profile=[Param(value=name, name=name) for name in CONFIG.get("profiles", [])],
                    seed=CONFIG.get("seeds", []))
async def pe_bench(dut, profile, seed):
    ports = [StreamPort(*port) for port in CONFIG["ports"]]
    phases = [Phase.from_json(phase) for phase in CONFIG["phases"][str(seed)]]
    mem_depth = CONFIG.get("mem_depth", 0)
    cocotb.log.info("ripple PE depth=%d mem_depth=%d profile=%s seed=%d, %d phases (replay: RIVULET_SEED=%s)",
                    CONFIG["depth"], mem_depth, profile, seed, len(phases), CONFIG["base_seed"])
    bench = make_pe_bench(ports, phases, profile, seed, mem_depth)
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, bench.max_cycles)
    cocotb.log.info("passed: %d cycles", cycles)
