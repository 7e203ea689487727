"""cocotb bench for any catalog stream component, on Verilator.

The host side (:func:`rivulet.sim.benches.run_verilator_bench` for one component,
:func:`~rivulet.sim.benches.run_verilator_benches` for several side by side in one design)
passes the scenario as JSON in ``RIVULET_BENCH``: per row, a component's kind, parameters and
ports; the stall profiles and the seeds. Each (row, profile, seed) is one cocotb test, so a
failure names all three; the drivers, monitors and scoreboards are the simulator-independent
ones of :mod:`rivulet.sim.streams`.
"""

import json
import os

import cocotb
from cocotb import Param
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from rivulet.sim.scenarios import make_bench
from rivulet.sim.streams import StreamPort

CONFIG = json.loads(os.environ.get("RIVULET_BENCH", "{}"))
ROWS = {row["name"]: row for row in CONFIG.get("rows", [])}


@cocotb.test()
@cocotb.parametrize(row=[Param(value=name, name=name) for name in ROWS],
                    profile=[Param(value=name, name=name) for name in CONFIG.get("profiles", [])],
                    seed=CONFIG.get("seeds", []))
async def stream_bench(dut, row, profile, seed):
    scenario = ROWS[row]
    ports = [StreamPort(*port) for port in scenario["ports"]]
    cocotb.log.info("%s %s profile=%s seed=%d (replay: RIVULET_SEED=%s)", scenario["kind"],
                    scenario["params"], profile, seed, CONFIG["base_seed"])
    bench = make_bench(scenario["kind"], scenario["params"], ports, scenario["extra"], profile, seed,
                       CONFIG["tokens"])
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, scenario["max_cycles"], scenario["prefix"])
    moved = sum(len(monitor.transfers) for monitor in bench.monitors if not monitor.port.into_design)
    cocotb.log.info("passed: %d cycles, %d output tokens, %.3f tokens/cycle", cycles, moved,
                    moved / cycles)
    if "RIVULET_BENCH_SUMMARY" in os.environ:
        with open(os.environ["RIVULET_BENCH_SUMMARY"], "a") as summary:
            summary.write(json.dumps({"row": row, "profile": profile, "seed": seed, "cycles": cycles,
                                      "output_tokens": moved}) + "\n")
