"""Random Ripple-language kernels against the CPython reference (ripple_core/lang/random_kernels.py).

``python -m bench.lang_fuzz [--count N] [--seed S] [--jobs J]``: N programs (default 10,000,
half ordered and half ripple mode), each compiled and run on the golden model at slot depth 2
and unbounded, and compared with the 32-bit reference: every array, output and return value.
A refusal is a generator bug, a deadlock or runaway a compiler bug, like any disagreement; the
first few failures are shrunk. Writes bench/results/lang_fuzz.json and lang_fuzz.md.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from ripple_core.lang.random_kernels import check, generate, shrink

from .common import RESULTS, git_stamp, now, write_results

__all__ = ["main"]

SHRUNK = 5          # failures shrunk and shown in full


def _chunk(seeds: list[int]) -> dict:
    kinds, features, failures, cycles = Counter(), Counter(), [], []
    for seed in seeds:
        program = generate(seed)
        outcome = check(program)
        kinds[f"{program.mode} {outcome.kind}"] += 1
        features.update(program.features)
        cycles.append(outcome.cycles)
        if not outcome.ok:
            failures.append({"seed": seed, "mode": program.mode, "kind": outcome.kind,
                             "detail": outcome.detail[:400]})
    return {"kinds": dict(kinds), "features": dict(features), "failures": failures,
            "cycles": [min(cycles), max(cycles), sum(cycles)]}


def measure(count: int, seed: int, jobs: int) -> dict:
    chooser = random.Random(seed)
    seeds = [chooser.randrange(2**32) for _ in range(count)]
    started = time.monotonic()
    parts = [seeds[k::jobs] for k in range(jobs)]
    if jobs == 1:
        results = [_chunk(parts[0])]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_chunk, parts))
    kinds, features = Counter(), Counter()
    for part in results:
        kinds.update(part["kinds"])
        features.update(part["features"])
    failures = [f for part in results for f in part["failures"]]
    for failure in failures[:SHRUNK]:
        failure["shrunk"] = shrink(generate(failure["seed"])).describe()
    return {"measured": now(), **git_stamp(), "base_seed": seed, "programs": count, "jobs": jobs,
            "seconds": round(time.monotonic() - started, 1), "outcomes": dict(sorted(kinds.items())),
            "cycles_depth2": {"min": min(p["cycles"][0] for p in results),
                              "max": max(p["cycles"][1] for p in results),
                              "mean": round(sum(p["cycles"][2] for p in results) / max(count, 1), 1)},
            "features": dict(sorted(features.items())), "failures": failures}


def markdown(report: dict) -> str:
    outcomes = report["outcomes"]
    failed = sum(n for kind, n in outcomes.items() if not kind.endswith(" ok"))
    by_mode = Counter()
    for kind, n in outcomes.items():
        by_mode[kind.split()[0]] += n
    lines = ["# Random Ripple-language kernels against the reference", "",
             f"Measured {report['measured']} at {report['git_revision']}"
             f"{' (with uncommitted changes)' if report['git_tracked_changes'] else ''}, base seed "
             f"{report['base_seed']} (`python -m bench.lang_fuzz --count {report['programs']} --seed "
             f"{report['base_seed']}` replays it; one program: "
             "`check(generate(seed))` in `ripple_core.lang.random_kernels`).", "",
             f"{report['programs']} programs ({by_mode['ordered']} ordered, {by_mode['ripple']} ripple "
             "mode), "
             f"each compiled and run on the golden model at slot depth 2 and unbounded against the 32-bit "
             f"CPython reference, in {report['seconds']} s on {report['jobs']} process(es). "
             f"Golden-model cycles at depth 2: {report['cycles_depth2']['min']} to "
             f"{report['cycles_depth2']['max']}, mean {report['cycles_depth2']['mean']}.", "",
             "| mode | outcome | programs |", "|---|---|---:|"]
    lines += [f"| {kind.split()[0]} | {kind.split()[1]} | {n} |" for kind, n in outcomes.items()]
    lines += ["", f"Failures (refusals, compiler crashes, deadlocks, runaways, leftovers, mismatches): "
              f"**{failed}** (target 0).", ""]
    for failure in report["failures"][:50]:
        lines.append(f"- seed {failure['seed']} ({failure['mode']}): {failure['kind']}: "
                     f"{failure['detail'][:200]}")
    for failure in report["failures"][:SHRUNK]:
        lines += ["", f"Shrunk program of seed {failure['seed']}:", "", "```", failure["shrunk"], "```"]
    lines += ["", "Generated constructs (statement, expression and operator counts over all programs):", "",
              ", ".join(f"{name} {n}" for name, n in report["features"].items())]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lang_fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    print(f"bench.lang_fuzz: {args.count} programs, base seed {seed}", flush=True)
    report = measure(args.count, seed, max(1, args.jobs))
    table = markdown(report)
    figures, text = write_results(RESULTS, "lang_fuzz", report, table, indent=1)
    print(table)
    print(f"wrote {figures.name} and {text.name} in bench/results")
    return 1 if any(not kind.endswith(" ok") for kind in report["outcomes"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
