"""SAM conformance cases on the Verilated sparse primitives (``rivulet conform --sim rtl``).

The cases, the design and the per-case verdicts are :mod:`samflow`'s; this module builds the one
design, runs every job under every stall profile and seed in one cocotb simulation
(:mod:`rivulet.sim.tb_sparse_conform`) and hands the records back.
"""

import json

from amaranth.hdl import Fragment

from samflow.rtl_jobs import HINT_LOCKSTEP, WIDTH, SparsePrimitives, case_outcomes, rtl_jobs, top_inputs

from .run_dirs import run_directory
from .seeds import base_seed, seeds_for
from .streams import PROFILES
from .verilator import build_design, run_cocotb

__all__ = ["run_rtl"]


def run_rtl(files, *, profiles=None, seeds=None, once=(), say=print):
    """Outcomes on the RTL for every case of ``files`` (unsupported ones with their reason).

    Every case runs under each profile and seed; the cases of the files in ``once`` run a single
    time (no stalls, the first seed; a hinted scan in lock step), for checks that only need to see
    a verdict.
    """
    files = list(files)
    once = list(once)
    top = SparsePrimitives(WIDTH)
    jobs, outcomes = rtl_jobs(files + once, top)
    single = {vectors.path.name for vectors in once}
    if not jobs:
        Fragment.get(top, None)     # elaborated, so it is not reported as an unused design
        return outcomes
    profiles = list(profiles or PROFILES)
    seeds = list(seeds or seeds_for("samflow:conform", 2))
    say(f"RTL: {len(jobs)} cases x {len(profiles)} stall profiles x {len(seeds)} seeds {seeds} "
        f"(replay: RIVULET_SEED={base_seed()})")
    for job in jobs:
        if job["file"] in single:       # a hinted scan's exact run is its lock-step one
            job["runs"] = [[HINT_LOCKSTEP, 0] if job["hinted"] else [profiles[0], seeds[0]]]
    built = build_design(f"samflow-primitives-w{WIDTH}", top, what="the sparse primitives")
    with run_directory("samflow-conform") as directory:
        setup, results = directory / "jobs.json", directory / "results.jsonl"
        setup.write_text(json.dumps({"jobs": jobs, "profiles": profiles, "seeds": seeds, "width": WIDTH,
                                     "top_inputs": top_inputs(top)}))
        run_cocotb(built, "rivulet.sim.tb_sparse_conform", directory,
                   {"SAMFLOW_JOBS": str(setup), "SAMFLOW_RESULTS": str(results)})
        records = [json.loads(line) for line in results.read_text().splitlines()]
    return outcomes + case_outcomes(jobs, records)
