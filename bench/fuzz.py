"""The pe fabric's differential fuzzer at bench size (docs/fuzzing.md).

``python -m bench.fuzz [--models N] [--rtl N] [--big-rtl N] [--seed S] [--jobs J]``:

* ``--models`` programs of 10 to 28 operators on the reference and both golden models, over
  ``--jobs`` processes (default 10,000 on 2);
* ``--rtl`` of the same size on the Verilated 5x6 fabric (examples/fabrics/ripple.toml), in one
  simulation, under random stall profiles (default 1,000);
* ``--big-rtl`` of 10 to 50 operators on the 7x8 fabric (examples/fabrics/ripple_bfs.toml)
  (default 200).

Every disagreement is shrunk and written to testbench/ripple/fuzz_regressions/ (then it runs in
every ``make test``). Writes bench/results/fuzz.json and fuzz.md: counts, seeds, operator mix,
disagreements, and the time each tier took.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from ripple_core.fuzz.generate import GeneratorLimits
from rivulet.sim.pe_fuzz import fuzz, regression_record
from rsn.fabric_spec import load_fabric

from .common import REPO, RESULTS, git_stamp, now, write_results

__all__ = ["main"]

SMALL = ("examples/fabrics/ripple.toml", GeneratorLimits(10, 28))
BIG = ("examples/fabrics/ripple_bfs.toml", GeneratorLimits(10, 50))
REGRESSIONS = REPO / "testbench" / "ripple" / "fuzz_regressions"


def _model_chunk(args) -> dict:
    count, seed = args
    fabric, limits = SMALL
    report = fuzz(count, load_fabric(REPO / fabric), base_seed=seed, limits=limits, rtl=False,
                  say=lambda line: None)
    return {"seed": seed, "graphs": report.graphs, "not_runnable": report.not_runnable,
            "operators": dict(report.operators), "sizes": [min(report.sizes), max(report.sizes)],
            "findings": [regression_record(f, fabric) for f in report.findings]}


def _tier(name, count, fabric, limits, seed, rtl) -> dict:
    started = time.monotonic()
    report = fuzz(count, load_fabric(REPO / fabric), base_seed=seed, limits=limits, rtl=rtl,
                  case=f"bench-fuzz-{name}")
    return {"tier": name, "fabric": fabric, "seed": seed, "graphs": report.graphs,
            "rtl_graphs": report.rtl_graphs, "not_runnable": report.not_runnable,
            "operators": dict(report.operators), "sizes": [min(report.sizes), max(report.sizes)],
            "findings": [regression_record(f, fabric) for f in report.findings],
            "seconds": round(time.monotonic() - started, 1)}


def measure(models: int, rtl: int, big_rtl: int, seed: int, jobs: int) -> dict:
    chooser = random.Random(seed)
    tiers = []
    if models:
        started = time.monotonic()
        chunks = [(models // jobs + (k < models % jobs), chooser.randrange(2**31)) for k in range(jobs)]
        with ProcessPoolExecutor(jobs) as pool:
            parts = list(pool.map(_model_chunk, chunks))
        operators = Counter()
        for part in parts:
            operators.update(part["operators"])
        tiers.append({"tier": "models", "fabric": SMALL[0], "seed": [part["seed"] for part in parts],
                      "graphs": sum(part["graphs"] for part in parts), "rtl_graphs": 0,
                      "not_runnable": sum(part["not_runnable"] for part in parts),
                      "operators": dict(operators),
                      "sizes": [min(p["sizes"][0] for p in parts), max(p["sizes"][1] for p in parts)],
                      "findings": [f for part in parts for f in part["findings"]],
                      "seconds": round(time.monotonic() - started, 1)})
    if rtl:
        tiers.append(_tier("rtl", rtl, *SMALL, chooser.randrange(2**31), True))
    if big_rtl:
        tiers.append(_tier("big-rtl", big_rtl, *BIG, chooser.randrange(2**31), True))
    return {"measured": now(), **git_stamp(), "base_seed": seed, "tiers": tiers}


def markdown(report: dict) -> str:
    lines = ["# Differential fuzzing of the pe fabric", "",
             f"Measured {report['measured']} at {report['git_revision']}, base seed {report['base_seed']} "
             f"(`python -m bench.fuzz --seed {report['base_seed']}` replays it).", "",
             "| tier | fabric | graphs | on the RTL | operators per graph | did not route | disagreements "
             "| time |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    for tier in report["tiers"]:
        lines.append(f"| {tier['tier']} | `{tier['fabric']}` | {tier['graphs']} | {tier['rtl_graphs']} | "
                     f"{tier['sizes'][0]} to {tier['sizes'][1]} | {tier['not_runnable']} | "
                     f"{len(tier['findings'])} | {tier['seconds']} s |")
    lines += ["", "Operators (static count over all graphs of each tier):", ""]
    for tier in report["tiers"]:
        mix = ", ".join(f"{op} {count}" for op, count in sorted(tier["operators"].items()))
        lines.append(f"- {tier['tier']}: {mix}")
    findings = [f for tier in report["tiers"] for f in tier["findings"]]
    if findings:
        lines += ["", "Disagreements (shrunk, in testbench/ripple/fuzz_regressions/):", ""]
        lines += [f"- seed {f['found_by_seed']}: {f['problem']}" for f in findings]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=10_000)
    parser.add_argument("--rtl", type=int, default=1000)
    parser.add_argument("--big-rtl", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    print(f"bench.fuzz: base seed {seed}")
    report = measure(args.models, args.rtl, args.big_rtl, seed, max(1, args.jobs))
    REGRESSIONS.mkdir(parents=True, exist_ok=True)
    for tier in report["tiers"]:
        for finding in tier["findings"]:
            path = REGRESSIONS / f"{tier['tier']}-{finding['found_by_seed']}.json"
            path.write_text(json.dumps(finding, indent=1) + "\n")
            print(f"disagreement: {finding['problem']} -> {path.relative_to(REPO)}")
    figures, table = write_results(RESULTS, "fuzz", report, markdown(report), indent=1)
    print(markdown(report))
    print(f"wrote {figures.relative_to(REPO)} and {table.relative_to(REPO)}")
    return 1 if any(tier["findings"] for tier in report["tiers"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
