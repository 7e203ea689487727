"""The default fabric family, swept (``bench/sweep/family.toml``): grids 2x2 to 4x4, queue depths
2 to 8, the MLP and a Ripple-language kernel; model and RTL runs everywhere, synthesis and place
and route for the ULX3S-85F at some points.

``python -m bench.sweep`` runs it with ``rivulet sweep``'s machinery (jobs kept in
``build/sweep/family/``, so a second run, or one after an interruption, does only what is
missing) and writes ``bench/results/sweep_family.json`` (rows, wall time, executor, stamp),
``bench/results/sweep_family.md`` (the sweep's summary) and its Pareto plots beside them.
``--executor ray`` runs the same jobs on a local Ray cluster; ``--kinds model`` runs only the
model runs (a quick comparison of the executors' wall times, each into a fresh directory with
``--fresh``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from rivulet.sweep import load_sweep, run_sweep

from .common import BUILD_ROOT, REPO, RESULTS, git_stamp, now, relative_path, write_results

SPEC = REPO / "bench" / "sweep" / "family.toml"


def _relative(value):
    """Repository-relative paths in a row, so the results hold no machine's paths."""
    if isinstance(value, str) and value.startswith(str(REPO)):
        return relative_path(value)
    return value


def _described(job) -> str:
    what = {"rtl": f"RTL runs ({job.profile})", "synth": f"synthesis for the {job.board}",
            "pnr": f"place and route and bitstream for the {job.board}", "model": "model runs",
            "generate": "Verilog"}[job.kind]
    where = ", ".join(f"{axis} in {values}" for axis, values in job.where.items())
    programs = f" for {', '.join(job.programs)}" if job.programs else ""
    return what + programs + (f" where {where}" if where else " at every point")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executor", choices=("pool", "ray"), default="pool")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--spec", type=Path, default=SPEC)
    parser.add_argument("--kinds", nargs="*", help="run only these job kinds (e.g. model)")
    parser.add_argument("--fresh", action="store_true", help="start from an empty job directory")
    parser.add_argument("--name", help="results name (default: sweep_ plus the sweep's name)")
    parser.add_argument("--table-only", action="store_true",
                        help="run nothing: write the results of the jobs done so far (a stopped run)")
    arguments = parser.parse_args(argv)

    spec = load_sweep(arguments.spec)
    if arguments.kinds:
        spec.jobs = [job for job in spec.jobs if job.kind in arguments.kinds]
    name = arguments.name or f"sweep_{spec.name}"
    directory = BUILD_ROOT.parent / "sweep" / name
    if arguments.fresh:
        shutil.rmtree(directory, ignore_errors=True)
    started = time.monotonic()
    outcome = run_sweep(spec, executor=arguments.executor, workers=arguments.jobs, directory=directory,
                        say=lambda line: print(line, flush=True), run_missing=not arguments.table_only)
    wall = time.monotonic() - started
    rows = [{key: _relative(value) for key, value in row.items()} for row in outcome.rows]
    figures = {"sweep": spec.name, "spec": relative_path(arguments.spec), "executor": arguments.executor,
               "workers": arguments.jobs, "wall_seconds": round(wall, 1), "jobs_run": outcome.ran,
               "jobs": len(rows), "date": now(), **git_stamp(), "rows": rows}
    summary = (directory / "summary.md").read_text()
    for path in outcome.files:
        if path.name.startswith("pareto_"):
            shutil.copyfile(path, RESULTS / f"{name}_{path.name}")
            summary = summary.replace(f"]({path.name})", f"]({name}_{path.name})")
    summary = summary.replace(str(REPO) + "/", "")
    header = (f"{figures['date']}, git {figures['git_revision']}; `python -m bench.sweep` "
              f"({arguments.executor}, {arguments.jobs} workers): {outcome.ran} of {len(rows)} jobs run in "
              f"{wall:.0f} s wall (the others were done before).\n\n")
    if arguments.table_only:
        header = (f"{figures['date']}, git {figures['git_revision']}: the jobs done so far of "
                  f"`python -m bench.sweep` ({arguments.executor}, {arguments.jobs} workers); rows "
                  f"\"not run\" were stopped before they ran.\n\n")
    header += "Jobs: " + "; ".join(_described(job) for job in spec.jobs) + ".\n\n"
    title, _, body = summary.partition("\n\n")
    write_results(RESULTS, name, figures, f"{title}\n\n{header}{body}")
    print(f"wrote {relative_path(RESULTS / name)}.json/.md in {wall:.0f} s; "
          f"{len(outcome.failed)} jobs did not pass (see the summary)")
    print(json.dumps({"wall_seconds": round(wall, 1), "jobs_run": outcome.ran}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
