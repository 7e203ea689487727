"""cocotb bench of a whole fabric that also records *when* things happened.

The same runs as ``rivulet.sim.tb_fabric`` (image in, host streams, counters read back after
``done``), from the same JSON (``RIVULET_LATENCY_RUN``), but each result line also carries the
bench cycle of every transfer on ``ctrl`` and on each host output port, so that a test can
measure latencies (e.g. from a micro-op's dispatch to the first output token) against the cycle
model. Results go to ``RIVULET_LATENCY_RESULT``, one JSON line per run.
"""

import json
import os

import cocotb
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from rivulet.sim.fabric_bench import make_fabric_bench
from rivulet.sim.streams import StreamPort

CONFIG = json.loads(os.environ.get("RIVULET_LATENCY_RUN", '{"runs": []}'))


@cocotb.test()
@cocotb.parametrize(index=list(range(len(CONFIG["runs"]))))
async def latency_run(dut, index):
    run = CONFIG["runs"][index]
    ports = [StreamPort(*port) for port in CONFIG["ports"]]
    bench = make_fabric_bench(
        ports, image=run["image"], reads=run["reads"], readback_words=run["readback_words"],
        host_inputs=run["host_inputs"], host_outputs=run["host_outputs"],
        profile=run["profile"], seed=run["seed"])
    Clock(dut.clk, 10, unit="ns").start()
    cycles = await run_bench(dut, bench, run["max_cycles"])
    checker = bench.checker
    arrivals = {name: [cycle for cycle, _ in bench.transfers(name)] for name in checker.outputs}
    ctrl = [cycle for cycle, _ in bench.transfers("ctrl")]
    with open(os.environ["RIVULET_LATENCY_RESULT"], "a") as result:
        result.write(json.dumps({"index": index, "outputs": checker.outputs, "readback": checker.readback,
                                 "done_cycle": checker.done_cycle, "cycles": cycles,
                                 "arrivals": arrivals, "ctrl_cycles": ctrl}) + "\n")
