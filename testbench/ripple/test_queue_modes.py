"""RipTide suite cases with bypassing FU input queues (``queue_mode = "bypass"``): on ripple.toml,
and with pass-through switch outputs every third hop (``register_every = 3``, rsn/hops.py) on
the two-lane 4x5 fabric with private banks of test_lanes_timing.py. Checked: the outputs,
firings and arrays of the golden model under any stall profile, and the cycle model's counter
to the cycle without stalls.
"""

import dataclasses
import random

import pytest

from ripple_core.lower import compile_lowering, lower_graph
from ripple_core.riptide import load_vectors
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rsn.cycle_model import predict_cycles
from rsn.readout import register_reads, split_register_reads
from testbench.ripple.test_lanes_timing import LANE_FABRIC
from testbench.ripple.test_lower import FABRIC, SUITE, _check, needs_suite, suite_graph

# K = 3 runs on the two-lane fabric that test_lanes_timing.py builds anyway (ripple.toml's options
# otherwise, a shared memory, 4x5 tiles): a 5x6 fabric for K = 3 alone was the suite's costliest
# build for one test.
OPTIONS = {"bypass": dataclasses.replace(FABRIC, queue_mode="bypass"),
           "bypass-every3": LANE_FABRIC}
# (kernel, variant): a recurrence through the network (no STREAM), a pipelined array loop, and
# the nested loops of dmv; each graph's longest case. (bench/results/queue_bypass.md has the
# cycle model on every suite case in both modes.)
GRAPHS = [("simple", "nostream"), ("nn-vadd", "stream"), ("nn-relu", "nostream"), ("dmv", "stream")]


@needs_suite
@pytest.mark.verilator
@pytest.mark.long(1)
@pytest.mark.parametrize("option", OPTIONS)
def test_suite_cases_with_bypassing_queues(option):
    from rivulet.sim.fabric_run import run_many_on_rtl

    fabric = OPTIONS[option]
    (seed,) = seeds_for(f"ripple-queue-{option}", count=1)
    rng = random.Random(seed)
    runs = []
    for kernel, variant in GRAPHS:
        cases = load_vectors(SUITE / f"{kernel}.vectors.json")
        k = max(range(len(cases)), key=lambda k: cases[k]["reference_steps"][variant])
        case = cases[k]
        lowering = lower_graph(suite_graph(kernel, variant), case, fabric, name=f"{kernel}-{variant}-case{k}")
        compiled = compile_lowering(lowering, fabric, seed=seed)
        runs += [(lowering, compiled, "no_stall"), (lowering, compiled, rng.choice(list(PROFILES)))]
    run_seeds = [rng.randrange(2**31) for _ in runs]
    print(f"seed {seed}:", [(run[0].program.name, run[2], s) for run, s in zip(runs, run_seeds, strict=True)])
    results = run_many_on_rtl([run[1] for run in runs], profiles=[run[2] for run in runs], seeds=run_seeds,
                              case=f"ripple-queue-{option}",
                              extra_reads=[register_reads(run[1]) for run in runs])
    for (lowering, compiled, profile), result, run_seed in zip(runs, results, run_seeds, strict=True):
        label = f"{lowering.program.name} profile={profile} seed={run_seed}"
        _check(label, lowering, compiled, result.outputs, result.firings,
               split_register_reads(compiled, result.extra))
        if profile == "no_stall":
            predicted = predict_cycles(compiled).cycles
            print(f"{label}: RTL {result.cycles} cycles, cycle model {predicted}")
            assert predicted == result.cycles, label
