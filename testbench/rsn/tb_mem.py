"""cocotb bench for the ``mem`` FU on Verilator: the same scenarios as the Amaranth tier.

The pytest side passes the configuration as JSON in ``RIVULET_MEM_BENCH``: data width, bank
depth, ports, stall profiles, seeds. Each (profile, seed) is one cocotb test, so a failure names
both. :class:`~testbench.rsn.mem_bench.MemBench` drives the config bus itself (preload, read-back,
``clear``) around the stream phase, so the generic ``run_bench`` loop runs it as it is.
"""

import json
import os

import cocotb
from cocotb import Param
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from rivulet.sim.streams import StreamPort
from testbench.rsn.mem_bench import make_mem_bench

CONFIG = json.loads(os.environ.get("RIVULET_MEM_BENCH", "{}"))


@cocotb.test()
@cocotb.parametrize(profile=[Param(value=name, name=name) for name in CONFIG.get("profiles", [])],
                    seed=CONFIG.get("seeds", []))
async def mem_bench(dut, profile, seed):
    ports = [StreamPort(*port) for port in CONFIG["ports"]]
    cocotb.log.info("mem width=%d mem_depth=%d profile=%s seed=%d (replay: RIVULET_SEED=%s)",
                    CONFIG["width"], CONFIG["mem_depth"], profile, seed, CONFIG["base_seed"])
    bench = make_mem_bench(ports, CONFIG["extra"], CONFIG["width"], CONFIG["mem_depth"], profile,
                           seed, words=CONFIG["words"])
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, CONFIG["max_cycles"])
    checker = bench.inner.checker
    cocotb.log.info("passed: %d cycles, %d words moved, %d stall cycles", cycles, checker.moved,
                    checker.stalls)
    if "RIVULET_BENCH_SUMMARY" in os.environ:
        with open(os.environ["RIVULET_BENCH_SUMMARY"], "a") as summary:
            summary.write(json.dumps({"profile": profile, "seed": seed, "cycles": cycles,
                                      "words": checker.moved}) + "\n")
