"""cocotb bench of a whole fabric: for each run, load an image, stream host data, wait for done,
read the counters back.

The runs arrive as a JSON file named by ``RIVULET_FABRIC_RUN`` (see rivulet/sim/fabric_run.py; a
file, because many runs' images exceed what one environment variable may hold): one cocotb test
per run, each starting from reset, in one simulation. Results (host outputs, read-back words,
cycles, tokens taken per host input) go to ``RIVULET_FABRIC_RESULT``, one JSON line per run,
also for a run that fails (``error`` then says why): the tokens it took name a short host input,
and ``diagnostics``, the diagnostic registers read after an unexpected watchdog stall, say where
its tokens wait.
"""

import json
import os
import time
from pathlib import Path

import cocotb
from cocotb.clock import Clock

from rivulet.sim.cocotb_loop import run_bench
from rivulet.sim.fabric_bench import make_fabric_bench
from rivulet.sim.streams import StreamPort

_CONFIG_FILE = os.environ.get("RIVULET_FABRIC_RUN")
CONFIG = json.loads(Path(_CONFIG_FILE).read_text()) if _CONFIG_FILE else {"runs": []}


@cocotb.test()
@cocotb.parametrize(index=list(range(len(CONFIG["runs"]))))
async def fabric_run(dut, index):
    run = CONFIG["runs"][index]
    ports = [StreamPort(*port) for port in CONFIG["ports"]]
    cocotb.log.info("run %d (%s): image of %d words, profile=%s seed=%d", index, run["name"],
                    len(run["image"]), run["profile"], run["seed"])
    bench = make_fabric_bench(
        ports, image=run["image"], reads=run["reads"], readback_words=run["readback_words"],
        host_inputs=run["host_inputs"], host_outputs=run["host_outputs"],
        profile=run["profile"], seed=run["seed"], expect_stall=run.get("expect_stall", False),
        diagnostic_reads=run.get("diagnostic_reads", []), diagnostic_words=run.get("diagnostic_words", 0),
        max_cycles=run["max_cycles"], trace=CONFIG.get("trace", False))
    Clock(dut.clk, 10, unit="ns").start()
    checker, cycles, error = bench.checker, None, None
    started = time.monotonic()
    try:
        cycles = await run_bench(dut, bench, run["max_cycles"])
    except BaseException as failure:
        error = str(failure) or type(failure).__name__
        raise
    finally:
        with open(os.environ["RIVULET_FABRIC_RESULT"], "a") as result:
            result.write(json.dumps({
                "index": index, "outputs": checker.outputs, "readback": checker.readback,
                "done_cycle": checker.done_cycle, "stalled_cycle": checker.stalled_cycle, "cycles": cycles,
                "host_sent": checker.host_sent(), "diagnostics": checker.diagnostics,
                "error": error, "clocked": bench.cycles, "run_seconds": time.monotonic() - started,
                **({"trace": checker.trace} if checker.trace is not None else {})}) + "\n")
    cocotb.log.info("run %d done at cycle %s", index, checker.done_cycle)
