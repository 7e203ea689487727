"""cocotb bench for the compute FUs (``alu``, ``mac``) on Verilator.

The pytest side (:func:`testbench.rsn.compute_bench.run_compute_verilator`) passes the scenario
as JSON in ``RIVULET_COMPUTE``: FU kind and parameters, its ports, the stall profiles, the seeds
and the program style. Each (profile, seed) pair is one cocotb test, so a failure names both;
stimulus and checks are those of :func:`~testbench.rsn.compute_bench.make_compute_bench`, the
same as in the Amaranth simulator.
"""

import json
import os

import cocotb
from cocotb import Param
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from rivulet.sim.streams import StreamPort
from testbench.rsn.compute_bench import make_compute_bench

CONFIG = json.loads(os.environ.get("RIVULET_COMPUTE", "{}"))


@cocotb.test()
@cocotb.parametrize(profile=[Param(value=name, name=name) for name in CONFIG.get("profiles", [])],
                    seed=CONFIG.get("seeds", []))
async def compute_bench(dut, profile, seed):
    ports = [StreamPort(*port) for port in CONFIG["ports"]]
    cocotb.log.info("%s %s %s profile=%s seed=%d (replay: RIVULET_SEED=%s)", CONFIG["kind"],
                    CONFIG["params"], CONFIG["scenario"], profile, seed, CONFIG["base_seed"])
    bench = make_compute_bench(CONFIG["kind"], CONFIG["params"], ports, CONFIG["extra"], profile, seed,
                               CONFIG["scenario"])
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, bench.max_cycles)
    checker = bench.checker
    cocotb.log.info("passed: %d cycles, %d outputs, i[0] %.3f tokens/cycle", cycles, len(checker.received),
                    checker.throughput())
    if "RIVULET_COMPUTE_SUMMARY" in os.environ:
        with open(os.environ["RIVULET_COMPUTE_SUMMARY"], "a") as summary:
            summary.write(json.dumps({"profile": profile, "seed": seed, "cycles": cycles,
                                      "latencies": sorted(set(checker.latencies)),
                                      "throughput": checker.throughput()}) + "\n")
