"""cocotb bench for any catalog stream component, on Verilator.

The pytest side (``testbench/verilator.py``) passes the scenario as JSON in ``RIVULET_BENCH``:
component kind and parameters, its ports, the stall profiles and the seeds. Each (profile,
seed) pair is one cocotb test, so a failure names both; the drivers, monitors and scoreboards
are the simulator-independent ones of :mod:`testbench.streams`.
"""

import json
import os

import cocotb
from cocotb import Param
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from testbench.scenarios import make_bench
from testbench.streams import StreamPort

CONFIG = json.loads(os.environ.get("RIVULET_BENCH", "{}"))


async def run_bench(dut, bench, max_cycles: int) -> int:
    """Drive right after each rising edge, sample in the read-only phase, as Verilator requires."""
    handles = {name: getattr(dut, name) for name in {*bench.sampled, *bench.driven}}
    for name, value in bench.idle_values().items():
        handles[name].value = value
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    for cycle in range(max_cycles):
        for name, value in bench.drive(cycle).items():
            handles[name].value = value
        await ReadOnly()
        # int() raises on X or Z, which Amaranth output never drives: an X is a bug.
        bench.observe(cycle, {name: int(handles[name].value) for name in bench.sampled})
        if bench.finished:
            bench.checker.finish()
            return bench.cycles
        await RisingEdge(dut.clk)
    raise bench.no_progress(max_cycles)


@cocotb.test()
@cocotb.parametrize(profile=[Param(value=name, name=name) for name in CONFIG.get("profiles", [])],
                    seed=CONFIG.get("seeds", []))
async def stream_bench(dut, profile, seed):
    ports = [StreamPort(*port) for port in CONFIG["ports"]]
    cocotb.log.info("%s %s profile=%s seed=%d (replay: RIVULET_SEED=%s)", CONFIG["kind"],
                    CONFIG["params"], profile, seed, CONFIG["base_seed"])
    bench = make_bench(CONFIG["kind"], CONFIG["params"], ports, CONFIG["extra"], profile, seed,
                       CONFIG["tokens"])
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, CONFIG["max_cycles"])
    moved = sum(len(monitor.transfers) for monitor in bench.monitors if not monitor.port.into_design)
    cocotb.log.info("passed: %d cycles, %d output tokens, %.3f tokens/cycle", cycles, moved,
                    moved / cycles)
    if "RIVULET_BENCH_SUMMARY" in os.environ:
        with open(os.environ["RIVULET_BENCH_SUMMARY"], "a") as summary:
            summary.write(json.dumps({"profile": profile, "seed": seed, "cycles": cycles,
                                      "output_tokens": moved}) + "\n")
