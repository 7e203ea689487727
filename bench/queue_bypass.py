"""FU input queue modes side by side: cycles per idealised step on the RipTide suite, and the
cost of one tile on the ECP5.

``python -m bench.queue_bypass`` runs two parts (``--part suite`` or ``--part tiles`` re-measures
one and keeps the other) and writes bench/results/queue_bypass.json and queue_bypass.md:

* **suite**: every case of the ten suite graphs (bench/ripple_suite.py) on
  examples/fabrics/ripple.toml in each queue mode (one Verilated build per mode), with the
  outputs and firings checked as that bench checks them, and the cycle model's prediction of
  every case. Compute cycles = RTL cycles - image words, as bench/ripple_suite.py and
  docs/ripple.md count them; per step = compute cycles / the suite's idealised steps. The loop
  cost per step is the slope between a graph's smallest and largest case, which leaves out
  what every case pays once (configuration, pipeline fill, the done tree).
* **tiles**: an interior ``pe`` tile (ripple.toml's pe parameters and queue depth) and ``alu``
  tile (the default fabric's queue depth 4) in each mode: LUT/FF from synthesis, Fmax from
  nextpnr (the median over seeds 1-3) in the RSN bench's pin-limited harness, as bench/sam.py
  builds its tiles.

Queue depth 2 (ripple.toml) keeps tokens in flip-flops, where ``registered`` and
``fall_through`` are the same hardware, so the suite runs ``registered`` and ``bypass`` only.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from ripple_core.check import fabric_problems
from rivulet.frontends.riptide import RIPPLE_FABRIC
from rivulet.sim.fabric_run import run_many_on_rtl
from rsn.cycle_model import predict_cycles
from rsn.fabric_spec import load_fabric
from rsn.readout import register_reads, split_register_reads

from . import rsn as rsn_bench
from .common import BUILD_ROOT, REPO, RESULTS, git_stamp, merged_report, run_jobs, write_results
from .pe_fmax import tile_job
from .ripple_suite import KERNELS, SEED, VARIANTS, suite_runs

__all__ = ["measure_suite", "measure_tiles", "markdown", "main"]

SUITE_MODES = ("registered", "bypass")
TILE_MODES = {"pe": ("registered", "bypass"), "alu": ("registered", "fall_through", "bypass")}
TILE_TARGET = rsn_bench.FABRIC_TARGET
COMMAND = "python -m bench.queue_bypass"


def measure_suite(mode: str, register_every: int = 1, lanes: int = 1) -> list[dict]:
    """Every suite case on ripple.toml with FU input queues in ``mode`` (and switch outputs
    registered as ``register_every`` says, rsn/hops.py; ``lanes`` operators per pe tile), in one
    simulation. Each row also counts the case's pe tiles and the operators they run."""
    spec = dataclasses.replace(load_fabric(RIPPLE_FABRIC), queue_mode=mode, register_every=register_every)
    if lanes != 1:
        spec = spec.with_parameters("pe", lanes=lanes)
    failures = []
    runs = list(suite_runs(spec, failures=failures))
    started = time.monotonic()
    label = mode if register_every == 1 else f"{mode}-every{register_every}"
    label += "" if lanes == 1 else f"-lanes{lanes}"
    results = run_many_on_rtl([run[5] for run in runs], profiles=["no_stall"] * len(runs),
                              seeds=[SEED] * len(runs), case=f"bench-queue-{label}", max_cycles=5_000_000,
                              extra_reads=[register_reads(run[5]) for run in runs])
    print(f"{label}: {len(runs)} cases simulated in {time.monotonic() - started:.0f} s", flush=True)
    rows = []
    for (kernel, variant, k, case, lowering, compiled), result in zip(runs, results, strict=True):
        reads = split_register_reads(compiled, result.extra)
        problems = fabric_problems(lowering, compiled, result.outputs, result.firings, reads)
        image = len(compiled.image)
        tiles = [node.name for node in lowering.program.graph.fu_nodes()]
        rows.append({"mode": mode, "register_every": register_every, "lanes": lanes, "kernel": kernel,
                     "variant": variant, "case": k, "tiles": len(tiles),
                     "operators": sum(len(lowering.units[tile]) for tile in tiles),
                     "steps": case["reference_steps"][variant], "rtl_cycles": result.cycles,
                     "image_words": image, "compute_cycles": result.cycles - image,
                     "model_cycles": predict_cycles(compiled).cycles,
                     "passed": not problems and result.done_cycle is not None, "problems": problems})
    for kernel, variant, k, case, lowering, error in failures:     # did not place or route
        tiles = [node.name for node in lowering.program.graph.fu_nodes()]
        rows.append({"mode": mode, "register_every": register_every, "lanes": lanes, "kernel": kernel,
                     "variant": variant, "case": k, "tiles": len(tiles),
                     "operators": sum(len(lowering.units[tile]) for tile in tiles),
                     "steps": case["reference_steps"][variant], "rtl_cycles": None, "image_words": None,
                     "compute_cycles": None, "model_cycles": None, "passed": False, "problems": [error]})
    return rows


def measure_tiles(workers: int, seeds: tuple[int, ...]) -> list[dict]:
    build_root = str(BUILD_ROOT / "queue_bypass")
    jobs = [(tile_job, kind, mode, seeds, build_root) for kind, modes in TILE_MODES.items() for mode in modes]
    return run_jobs(jobs, workers, lambda e: f"{e['kind']} {e['mode']}: {e['luts']} LUT, {e['ffs']} FF, "
                                             f"{e['fmax_mhz']:.1f} MHz ({e['seconds']} s)")


# --------------------------------------------------------------------------------------------
# The tables


def loop_slope(points) -> float | None:
    """Compute cycles per idealised step from the smallest case to the largest, over
    ``(steps, compute cycles)`` points: a loop's cost without what a run pays once (None with
    one size of case)."""
    (steps0, cycles0), (steps1, cycles1) = min(points), max(points)
    return None if steps1 == steps0 else (cycles1 - cycles0) / (steps1 - steps0)


def _graph_figures(rows: list[dict]) -> dict:
    """A graph's figures from its cases that ran (a case that did not place or route counts as
    not passed and is left out of the cycles)."""
    ran = [row for row in rows if row["rtl_cycles"] is not None] or rows
    largest = max(ran, key=lambda row: row["steps"])
    smallest = min(ran, key=lambda row: row["steps"])
    slope = loop_slope([(row["steps"], row["compute_cycles"]) for row in (smallest, largest)])
    return {"steps": largest["steps"], "compute": largest["compute_cycles"],
            "per_step": largest["compute_cycles"] / largest["steps"], "slope": slope,
            "passed": sum(row["passed"] for row in rows), "cases": len(rows),
            "model_exact": sum(row["rtl_cycles"] is not None and row["model_cycles"] == row["rtl_cycles"]
                               for row in rows),
            "tiles": largest.get("tiles"), "operators": largest.get("operators")}


def _suite_table(suite: list[dict]) -> list[str]:
    modes = [mode for mode in SUITE_MODES if any(row["mode"] == mode for row in suite)]
    head = " | ".join(f"{mode}: compute / per step / loop per step" for mode in modes)
    lines = [f"| graph | steps (largest case) | {head} | loop speed-up | passed | cycle model exact |",
             "|---|---:|" + "---:|" * len(modes) + "---:|---|---|"]
    for kernel in KERNELS:
        for variant in VARIANTS:
            figures = {mode: _graph_figures([row for row in suite if row["mode"] == mode and
                                             row["kernel"] == kernel and row["variant"] == variant])
                       for mode in modes}
            cells = [f"{f['compute']} / {f['per_step']:.2f} / "
                     f"{'-' if f['slope'] is None else format(f['slope'], '.2f')}" for f in figures.values()]
            first, last = figures[modes[0]], figures[modes[-1]]
            speedup = ("-" if not first["slope"] or not last["slope"]
                       else f"{first['slope'] / last['slope']:.2f}x")
            label = f"{kernel} ({'STREAM' if variant == 'stream' else 'no STREAM'})"
            lines.append(f"| {label} | {first['steps']} | " + " | ".join(cells) + f" | {speedup} | "
                         + ", ".join(f"{f['passed']}/{f['cases']}" for f in figures.values()) + " | "
                         + ", ".join(f"{f['model_exact']}/{f['cases']}" for f in figures.values()) + " |")
    return lines


def _tile_table(tiles: list[dict]) -> list[str]:
    lines = ["| tile | queue depth | mode | LUT | FF | Fmax (MHz), median | per seed | Fmax / registered "
             "| critical path (first seed) |",
             "|---|---:|---|---:|---:|---:|---|---:|---|"]
    for entry in tiles:
        base = next(e for e in tiles if e["kind"] == entry["kind"] and e["mode"] == "registered")
        where = rsn_bench._path_summary(entry["critical_path"])
        ratio = entry["fmax_mhz"] / base["fmax_mhz"]
        lines.append(f"| {entry['kind']} | {entry['queue_depth']} | {entry['mode']} | {entry['luts']} | "
                     f"{entry['ffs']} | {entry['fmax_mhz']:.1f} | "
                     f"{' / '.join(format(f, '.1f') for f in entry.get('fmax_per_seed', []))} | "
                     f"{ratio:.2f} | {where} |")
    return lines


def _revision(stamp: dict | None) -> str:
    if stamp is None:
        return "-"
    return stamp["git_revision"] + (" with uncommitted changes" if stamp["git_tracked_changes"] else "")


def markdown(report: dict) -> str:
    lines = ["# FU input queue modes: cycles per step and tile cost", "",
             f"Written by `{COMMAND}` (`--part suite` at git {_revision(report.get('suite_git'))}, "
             f"`--part tiles` at git {_revision(report.get('tiles_git'))}); bench/queue_bypass.py says how "
             f"each figure is taken, docs/ripple.md what follows from them.", ""]
    if report.get("suite"):
        lines += ["## The RipTide suite on ripple.toml (5x6 pe tiles, queue depth 2), no stalls", "",
                  "Compute = RTL cycles - image words of the graph's largest case; per step = compute / "
                  "the suite's idealised steps; loop per step = the slope of compute over steps from the "
                  "graph's smallest to its largest case (the loop's cost, without what a run pays once). "
                  "Loop speed-up: registered / bypass slope. Cycle model exact: cases whose predicted "
                  "counter equals the RTL's.", ""]
        lines += _suite_table(report["suite"])
    if report.get("tiles"):
        lines += ["", f"## One interior tile on the {TILE_TARGET}", "",
                  "LUT/FF from the synthesised bare tile, Fmax from nextpnr (median over the seeds) with "
                  "the tile in the RSN bench's pin-limited harness (bench/rsn.py).", ""]
        lines += _tile_table(report["tiles"])
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("suite", "tiles", "both"), default="both")
    parser.add_argument("--workers", type=int, default=1, help="place-and-route jobs at once")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3],
                        help="nextpnr seeds per tile (Fmax: their median)")
    args = parser.parse_args(argv)
    stamp = git_stamp()         # the revision the RTL is built from: taken before a long run, not after
    measured = {}
    if args.part in ("suite", "both"):
        measured["suite"] = [row for mode in SUITE_MODES for row in measure_suite(mode)]
        measured["suite_git"] = stamp
    if args.part in ("tiles", "both"):
        measured["tiles"] = measure_tiles(args.workers, tuple(args.seeds))
        measured["tiles_git"] = stamp
    report = merged_report("queue_bypass", measured, {"fabric": str(RIPPLE_FABRIC.relative_to(REPO)),
                                                      "seed": SEED})
    return publish("queue_bypass", report, markdown(report))


def publish(name: str, report: dict, table: str) -> int:
    """Write RESULTS/NAME.json and .md, print the table and every suite case that failed;
    the exit status: 1 if one did."""
    figures, written = write_results(RESULTS, name, report, table, indent=1)
    print(table)
    failed = [row for row in report.get("suite", []) if not row["passed"]]
    for row in failed:
        print(f"FAILED {row['mode']}, every {row.get('register_every', 1)}: {row['kernel']} "
              f"({row['variant']}) case {row['case']}: {'; '.join(row['problems'])}")
    print(f"wrote {figures} and {written}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
