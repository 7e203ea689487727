"""cocotb bench for the crossbar tile on Verilator: the same scenarios as the Amaranth tier.

The pytest side passes the configuration as JSON in ``RIVULET_CROSSBAR_BENCH``: the LIF
parameters, the size, the ports, the stall profiles, the seeds and the read-back modes. Each
(profile, seed, read-back mode) is one cocotb test, so a failure names all three; the drivers,
monitors and scoreboard are those of :mod:`testbench.crossbar.bench`.
"""

import json
import os

import cocotb
from cocotb import Param
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from rivulet.sim.streams import StreamPort
from testbench.crossbar.bench import Size, lif_params, make_crossbar_bench

CONFIG = json.loads(os.environ.get("RIVULET_CROSSBAR_BENCH", "{}"))


@cocotb.test()
@cocotb.parametrize(profile=[Param(value=name, name=name) for name in CONFIG.get("profiles", [])],
                    seed=CONFIG.get("seeds", []), readback=CONFIG.get("readbacks", []))
async def crossbar_bench(dut, profile, seed, readback):
    params, size = lif_params(CONFIG["params"]), Size(*CONFIG["size"])
    ports = [StreamPort(*port) for port in CONFIG["ports"]]
    cocotb.log.info("crossbar %s %s profile=%s seed=%d readback=%s (replay: RIVULET_SEED=%s)",
                    size, params, profile, seed, readback, CONFIG["base_seed"])
    bench = make_crossbar_bench(params, size, ports, CONFIG["extra"], profile, seed, readback=readback)
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, CONFIG["max_cycles"])
    spikes = sum(len(ids) for ids in bench.scenario.spikes)
    cocotb.log.info("passed: %d cycles, %d spikes, %d read-back words", cycles, spikes,
                    bench.checker.reads)
    if "RIVULET_BENCH_SUMMARY" in os.environ:
        with open(os.environ["RIVULET_BENCH_SUMMARY"], "a") as summary:
            summary.write(json.dumps({"profile": profile, "seed": seed, "readback": readback,
                                      "cycles": cycles, "spikes": spikes}) + "\n")
