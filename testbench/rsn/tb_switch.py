"""cocotb module for the RSN switch on Verilator: one cocotb test per scenario.

``testbench/rsn/test_switch.py`` passes the configuration as JSON in ``RIVULET_SWITCH_BENCH``
(switch parameters, its ports, the scenarios); each scenario becomes one test named after it, and
builds the same bench as the Amaranth tier (:func:`testbench.rsn.switch_bench.make_switch_bench`).
"""

import json
import os

import cocotb
from cocotb import Param
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from rivulet.sim.streams import StreamPort
from testbench.rsn.switch_bench import SwitchParams, make_switch_bench, scenario_name

CONFIG = json.loads(os.environ.get("RIVULET_SWITCH_BENCH", "{}"))


@cocotb.test()
@cocotb.parametrize(scenario=[Param(value=scenario, name=scenario_name(scenario))
                              for scenario in CONFIG.get("scenarios", [])])
async def switch_bench(dut, scenario):
    params = SwitchParams(**{**CONFIG["params"], "pass_through": tuple(CONFIG["params"]["pass_through"])})
    ports = [StreamPort(*port) for port in CONFIG["ports"]]
    cocotb.log.info("switch %s scenario %s (replay: RIVULET_SEED=%s)", CONFIG["params"], scenario,
                    CONFIG["base_seed"])
    bench, max_cycles = make_switch_bench(params, ports, CONFIG["extra"], scenario)
    dut.clear.value = 0
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, max_cycles)
    moved = sum(len(monitor.transfers) for monitor in bench.monitors
                if not monitor.port.into_design)
    cocotb.log.info("passed: %d cycles, %d output tokens", cycles, moved)
    if "RIVULET_BENCH_SUMMARY" in os.environ:
        with open(os.environ["RIVULET_BENCH_SUMMARY"], "a") as summary:
            summary.write(json.dumps({**scenario, "cycles": cycles, "output_tokens": moved}) + "\n")
