"""Options of the pe fabric side by side: cycles per idealised step, tiles per operator, Fmax,
steps per second.

``python -m bench.register_every`` runs two parts, and a third when asked (``--part suite``,
``fabric`` or ``placed`` re-measures one and keeps the others), and writes
bench/results/register_every.json and .md:

* **suite**: every case of the ten RipTide suite graphs on examples/fabrics/ripple.toml under
  each option (one Verilated build per option), checked as bench/ripple_suite.py checks them,
  with the cycle model's prediction of every case (bench/queue_bypass.py ``measure_suite``).
  The loop's cost per step is the slope of compute cycles over the suite's idealised steps
  from a graph's smallest case to its largest.
* **fabric**: a whole ``--size`` x ``--size`` grid of pe tiles (ripple.toml's pe parameters and
  queue depth) per option in the RSN bench's pin-limited harness on the ECP5-85F: LUT/FF from
  synthesis, Fmax from nextpnr (median over ``--seeds``) and its critical path. A whole grid,
  not one tile, because a pass-through output's path runs across tiles: the grid must be at
  least K x K for the longest one to exist.
* **placed** (only when asked for: ``--part placed``): the same grids placed but not routed,
  with nextpnr's Fmax estimate after placement, so that every option is compared like for like
  in a quarter of the time (bench/fpga.py ``build(route=False)``).

An option is (``queue_mode``, ``register_every``, ``[pe] lanes``): ``registered``/1/1 is the
fabric as it was, ``bypass`` lets a PE fire in the cycle its operand arrives, ``register_every``
>= 2 lets a token cross several switches in that cycle (rsn/hops.py), and two lanes put two
operators in a tile (ripple_core/pe/lanes.py). ``--option MODE:EVERY:LANES`` (repeatable)
measures only those options and keeps the others' recorded rows. Steps per microsecond = Fmax /
the geometric mean of the loop cycles per step over the suite's graphs.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from rivulet.frontends.riptide import RIPPLE_FABRIC
from rsn.fabric import Fabric
from rsn.fabric_spec import load_fabric, parse_fabric

from . import rsn as rsn_bench
from .common import BUILD_ROOT, REPO, RESULTS, git_stamp, merged_report
from .queue_bypass import _graph_figures, _revision, measure_suite, publish
from .ripple_suite import KERNELS, SEED, VARIANTS

__all__ = ["OPTIONS", "fabric_job", "markdown", "main", "parse_option"]

OPTIONS = (("registered", 1, 1), ("registered", 2, 1), ("registered", 3, 1),
           ("bypass", 1, 1), ("bypass", 2, 1), ("bypass", 3, 1),
           ("registered", 1, 2), ("bypass", 1, 2), ("bypass", 3, 2))
TARGET = rsn_bench.FABRIC_TARGET
# A 3x3 grid of pe tiles is 61,000 LUTs (73% of the ECP5-85F) and 278,000 arcs; nextpnr's
# default router1 had 178,000 arcs still to route after 15 minutes, as the board flow found on
# large fabrics (board/flow.py), so the grids are routed with router2.
ROUTER = "router2"
COMMAND = "python -m bench.register_every"
RECORD = RESULTS / "register_every.json"


def parse_option(text: str) -> tuple:
    try:
        mode, every, lanes = text.split(":")
        option = (mode, int(every), int(lanes))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: write an option as MODE:EVERY:LANES, e.g. "
                                         f"bypass:3:2") from None
    if option not in OPTIONS:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of the bench's options: "
                                         + ", ".join(":".join(map(str, o)) for o in OPTIONS))
    return option


def label(option) -> str:
    mode, every, lanes = option
    return f"{mode}, every {every}" + ("" if lanes == 1 else f", {lanes} lanes")


def _option_of(row: dict) -> tuple:
    return row["mode"], row.get("register_every", 1), row.get("lanes", 1)


def fabric_job(option, size: int, seeds: tuple[int, ...], build_root: str, route: bool = True) -> dict:
    """A ``size`` x ``size`` grid of pe tiles under ``option`` through the harnessed flow, routed
    or (``route=False``) placed only, with nextpnr's Fmax estimate after placement."""
    started = time.perf_counter()
    mode, every, lanes = option
    ripple = load_fabric(RIPPLE_FABRIC)
    pe = ripple.parameters("pe")
    spec = parse_fabric({
        "rows": size, "cols": size, "tiles": [" ".join(["pe"] * size)] * size,
        "queue_depth": ripple.queue_depth, "queue_mode": mode, "register_every": every,
        "pe": {"mem_depth": pe.mem_depth, "ripple_ops": pe.ripple_ops, "lanes": lanes},
        "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                       {"name": "out0", "tile": [size - 1, size - 1], "side": "E", "direction": "out"}],
    }, f"{size}x{size} of pe, {label(option)}")
    name = f"pe_{size}x{size}_{mode}_every{every}" + ("" if lanes == 1 else f"_lanes{lanes}")
    placed, fold = rsn_bench.place_in_harness(lambda: Fabric(spec), name, TARGET, seeds, Path(build_root),
                                              router=ROUTER, route=route)
    path = rsn_bench.critical_path(Path(placed.reports[0]), Path(placed.netlist)) if route else {}
    return {"mode": mode, "register_every": every, "lanes": lanes, "size": size, "target": TARGET,
            "router": ROUTER if route else None, "flow": "routed" if route else "placed",
            "luts": placed.luts, "ffs": placed.ffs, "fmax_mhz": placed.fmax_mhz,
            "fmax_per_seed": placed.fmax_per_seed, "seeds": list(seeds), "harness_fold": fold,
            "critical_path": path,
            "seconds": round(time.perf_counter() - started, 1)}


# --------------------------------------------------------------------------------------------
# The tables


def _rows(suite: list[dict], option) -> list[dict]:
    return [row for row in suite if _option_of(row) == tuple(option)]


def _graph_slopes(suite: list[dict], option) -> dict:
    rows = _rows(suite, option)
    return {(kernel, variant): _graph_figures([row for row in rows if row["kernel"] == kernel
                                               and row["variant"] == variant])
            for kernel in KERNELS for variant in VARIANTS}


def _geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(value) for value in values) / len(values))


def _suite_table(suite: list[dict], options) -> list[str]:
    figures = {option: _graph_slopes(suite, option) for option in options}
    lines = ["| graph | steps | " + " | ".join(label(option) for option in options) + " |",
             "|---|---:|" + "---:|" * len(options)]
    for kernel in KERNELS:
        for variant in VARIANTS:
            cells = []
            for option in options:
                f = figures[option][kernel, variant]
                slope = "-" if f["slope"] is None else f"{f['slope']:.2f}"
                tiles = "" if f["tiles"] is None else f"; {f['tiles']}/{f['operators']}"
                cells.append(f"{slope} ({f['per_step']:.2f}){tiles}")
            steps = figures[options[0]][kernel, variant]["steps"]
            name = f"{kernel} ({'STREAM' if variant == 'stream' else 'no STREAM'})"
            lines.append(f"| {name} | {steps} | " + " | ".join(cells) + " |")

    def summary(name, value):
        cells = [value(figures[option].values()) for option in options]
        lines.append(f"| {name} | | " + " | ".join(cells) + " |")
    summary("**geomean of loop cycles per step**",
            lambda fs: f"**{_geomean(f['slope'] for f in fs if f['slope']):.2f}**")
    summary("**worst loop**", lambda fs: f"{max(f['slope'] for f in fs if f['slope']):.2f}")
    summary("**tiles per operator** (largest cases, all graphs)",
            lambda fs: _tiles_per_operator(list(fs)))
    summary("passed / cycle model exact",
            lambda fs: f"{sum(f['passed'] for f in fs)}/{sum(f['cases'] for f in fs)} / "
                       f"{sum(f['model_exact'] for f in fs)}")
    return lines


def _tiles_per_operator(figures: list[dict]) -> str:
    if any(f["tiles"] is None for f in figures):
        return "-"
    return f"**{sum(f['tiles'] for f in figures) / sum(f['operators'] for f in figures):.2f}**"


def _loop_geomean(suite: list[dict], option) -> float | None:
    if not _rows(suite, option):
        return None
    return _geomean(f["slope"] for f in _graph_slopes(suite, option).values() if f["slope"])


def _fabric_table(fabric: list[dict], suite: list[dict], paths: bool = True) -> list[str]:
    lines = ["| option | grid | LUT | FF | Fmax (MHz), median | per seed | loop cycles per step (geomean) "
             "| steps per µs | vs registered, every 1 |" + (" critical path (first seed) |" if paths else ""),
             "|---|---|---:|---:|---:|---|---:|---:|---:|" + ("---|" if paths else "")]
    per_step = {_option_of(e): _loop_geomean(suite, _option_of(e)) for e in fabric}
    rates = {_option_of(e): e["fmax_mhz"] / per_step[_option_of(e)] if per_step[_option_of(e)] else None
             for e in fabric}
    base = rates.get(OPTIONS[0])
    for entry in fabric:
        option = _option_of(entry)
        cycles, rate = per_step[option], rates[option]
        seeds = " / ".join(format(f, ".1f") for f in entry["fmax_per_seed"])
        grid = f"{entry['size']}x{entry['size']}"
        lines.append(f"| {label(option)} | {grid} | {entry['luts']} | {entry['ffs']} "
                     f"| {entry['fmax_mhz']:.1f} | {seeds} | {'-' if cycles is None else f'{cycles:.2f}'} "
                     f"| {'-' if rate is None else f'{rate:.1f}'} "
                     f"| {f'{rate / base:.2f}x' if rate and base else '-'} |"
                     + (f" {rsn_bench._path_summary(entry['critical_path'])} |" if paths else ""))
    return lines


def _rows_revisions(report: dict, part: str) -> str:
    """The revision a part was measured at, or each row's where they differ (``--option``
    re-measures some rows and keeps the others)."""
    rows = report.get(part, [])
    revisions = {_revision(row["git"]) for row in rows if row.get("git")}
    if len(revisions) <= 1:
        return _revision(report.get(f"{part}_git"))
    return ", ".join(f"{_revision(row['git'])} ({label(_option_of(row))})" for row in rows if row.get("git"))


def _estimate_gap(routed: list[dict], placed: list[dict]) -> str:
    """How far the estimate after placement sits below the routed Fmax, on the grids measured
    both ways."""
    estimates = {(_option_of(e), e["size"]): e["fmax_mhz"] for e in placed}
    gaps = [(label(_option_of(e)), e["fmax_mhz"] / estimates[_option_of(e), e["size"]] - 1)
            for e in routed if (_option_of(e), e["size"]) in estimates]
    if not gaps:
        return ""
    return (" Routed, the grids measured both ways ran faster than estimated: "
            + ", ".join(f"{name} by {gap:.0%}" for name, gap in gaps) + ".")


def markdown(report: dict) -> str:
    options = [option for option in OPTIONS if _rows(report.get("suite", []), option)]
    lines = ["# Options of the pe fabric: cycles per step, tiles per operator, Fmax, steps per second", "",
             f"Written by `{COMMAND}` (`--part suite` at git {_revision(report.get('suite_git'))}, "
             f"`--part fabric` at git {_rows_revisions(report, 'fabric')}, `--part placed` at git "
             f"{_rows_revisions(report, 'placed')}); bench/register_every.py says "
             f"how each figure is taken, docs/ripple.md what follows from them.", ""]
    if options:
        lines += ["## The RipTide suite on ripple.toml (5x6 pe tiles, queue depth 2), no stalls", "",
                  "Per graph: the loop's cycles per idealised step (the slope of compute cycles over the "
                  "suite's steps from the graph's smallest case to its largest), and in brackets the "
                  "largest case's compute cycles per step (RTL cycles - image words, / steps), which "
                  "includes what a run pays once; then the largest case's pe tiles / operators. Options are "
                  "(queue_mode, register_every, [pe] lanes).", ""]
        lines += _suite_table(report["suite"], options)
        failed = [row for row in report["suite"] if row.get("rtl_cycles") is None]
        if failed:
            lines += ["", "Cases that did not place or route (left out of their graph's figures; a graph "
                      "with one case left shows no loop figure):", ""]
            lines += [f"- {label(_option_of(row))}: {row['kernel']} ({row['variant']}) case {row['case']}, "
                      f"{row['tiles']} tiles: {row['problems'][0].splitlines()[0]}" for row in failed]
    if report.get("fabric"):
        lines += ["", f"## Whole pe grids on the {TARGET}", "",
                  "In the RSN bench's pin-limited harness (bench/rsn.py), routed by nextpnr's router2: "
                  "LUT/FF include the harness, Fmax is nextpnr's (median over the seeds), not comparable "
                  "one to one with bench/results/pe_fmax.md's tiles (router1). Steps per µs = Fmax / the "
                  "geomean of the loop cycles per step above.", ""]
        lines += _fabric_table(report["fabric"], report.get("suite", []))
    if report.get("placed"):
        lines += ["", f"## Whole pe grids on the {TARGET}, placed only", "",
                  "The same grids and harness, synthesised and placed but not routed (`--part placed`): "
                  "Fmax is nextpnr's estimate after placement, which guesses each wire's delay from its "
                  "length. A grid synthesises and places in about 20 minutes where routing takes 8 to 60 "
                  "more (and router2 diverged on some), so every option is compared like for like here."
                  + _estimate_gap(report.get("fabric", []), report["placed"]), ""]
        lines += _fabric_table(report["placed"], report.get("suite", []), paths=False)
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("suite", "fabric", "placed", "both"), default="both",
                        help="both: suite and fabric; placed: the grids placed only (Fmax estimated)")
    parser.add_argument("--size", type=int, default=3, help="pe grid size for Fmax (at least the largest K)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1], help="nextpnr seeds per grid")
    parser.add_argument("--option", action="append", type=parse_option, metavar="MODE:EVERY:LANES",
                        help="measure only this option (repeatable); the others keep their recorded rows")
    args = parser.parse_args(argv)
    options = args.option or list(OPTIONS)
    stamp = git_stamp()         # the revision the RTL is built from: taken before a long run, not after
    measured = {}

    def recorded(part):
        """The recorded rows of ``part`` for the options not measured now, read when this run's are
        in: runs of other options may have finished meanwhile."""
        rows = json.loads(RECORD.read_text()).get(part, []) if RECORD.exists() else []
        return [row for row in rows if _option_of(row) not in options]

    if args.part in ("suite", "both"):
        rows = [row for option in options for row in measure_suite(*option)]
        measured["suite"] = recorded("suite") + rows
        measured["suite_git"] = stamp
    if args.part in ("fabric", "placed", "both"):
        route = args.part != "placed"
        part = "fabric" if route else "placed"
        build_root = str(BUILD_ROOT / "register_every")
        entries = []
        for option in options:
            if option[2] > 1 and args.size >= 3:
                print(f"{label(option)}: a {args.size}x{args.size} grid of two-lane pe tiles (about "
                      f"{10_700 * args.size ** 2:,} LUTs) does not fit the {TARGET}; skipped (a smaller "
                      f"--size fits, but shows no path across a 3x3 block)", flush=True)
                continue
            entry = {**fabric_job(option, args.size, tuple(args.seeds), build_root, route), "git": stamp}
            print(f"{label(option)}: {entry['luts']} LUT, {entry['fmax_mhz']:.1f} MHz ({entry['seconds']} s)",
                  flush=True)
            entries.append(entry)
        measured[part] = recorded(part) + entries
        measured[f"{part}_git"] = stamp
    report = merged_report("register_every", measured, {"fabric": str(RIPPLE_FABRIC.relative_to(REPO)),
                                                        "seed": SEED,
                                                        "options": [list(option) for option in OPTIONS]})
    for part in ("suite", "fabric", "placed"):      # in OPTIONS order, whichever were measured now
        report[part] = sorted(report.get(part, []), key=lambda row: OPTIONS.index(_option_of(row))
                              if _option_of(row) in OPTIONS else len(OPTIONS))
    return publish("register_every", report, markdown(report))


if __name__ == "__main__":
    raise SystemExit(main())
