"""cocotb bench of the control plane on Verilator: one cocotb test per (stall profile, seed).

The pytest side (``test_control.py``) passes the grid, the profiles and the seeds as JSON in
``RIVULET_CONTROL_BENCH``; the bench itself is :func:`~testbench.rsn.control_bench.make_control_bench`,
the same as in the Amaranth tier.
"""

import json
import os

import cocotb
from cocotb import Param
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from testbench.rsn.control_bench import ControlTop, make_control_bench

CONFIG = json.loads(os.environ.get("RIVULET_CONTROL_BENCH", "{}"))


@cocotb.test()
@cocotb.parametrize(profile=[Param(value=name, name=name) for name in CONFIG.get("profiles", [])],
                    seed=CONFIG.get("seeds", []))
async def control_bench(dut, profile, seed):
    top = ControlTop(**CONFIG["grid"])
    bench, max_cycles = make_control_bench(top, profile, seed, packets=CONFIG["packets"])
    cocotb.log.info("control plane %s profile=%s seed=%d (replay: RIVULET_SEED=%s)", CONFIG["grid"],
                    profile, seed, CONFIG["base_seed"])
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, max_cycles)
    words = len(bench.checker.words)
    cocotb.log.info("passed: %d cycles for %d control words", cycles, words)
    if "RIVULET_BENCH_SUMMARY" in os.environ:
        with open(os.environ["RIVULET_BENCH_SUMMARY"], "a") as summary:
            summary.write(json.dumps({"profile": profile, "seed": seed, "cycles": cycles,
                                      "words": words}) + "\n")
