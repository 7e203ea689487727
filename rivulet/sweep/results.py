"""A sweep's results: one row per point and job, as JSON and CSV, a Markdown summary, and the
data of the Pareto plots (:mod:`.plots` draws them when matplotlib is installed).

A row holds the axis values, the program, the job, its status, its figures (cycles, firings,
LUTs, Fmax, ...), its error and log when it failed, its key and the source revision. ``seconds``
and ``cached`` say how this run went, so they are the only columns that differ between two runs
of the same sweep (and between executors).
"""

import csv
import hashlib
import io
import json
import tomllib
from pathlib import Path

from rivulet.files import write_atomically

from .pareto import pareto_front

__all__ = ["result_rows", "write_tables", "pareto_sets", "RUN_COLUMNS"]

_FIGURES = ("cycles", "firings", "link_beats", "stalls", "tiles_used", "cases", "lut", "ff", "bram", "dsp",
            "fmax_mhz", "target_mhz", "meets_timing", "lut_mapper", "verilog_lines", "board", "bitstream")
RUN_COLUMNS = ("cached", "seconds")       # how this run went, not what the job computed


def result_rows(spec, jobs, results: dict) -> list[dict]:
    rows = []
    for k, job in enumerate(jobs):
        result = results.get(k)
        fabric = tomllib.loads(job.inputs["fabric"])        # the exact description the job ran on
        row = {**job.point, "rows": fabric["rows"], "cols": fabric["cols"], "program": job.program,
               "job": job.kind, "fabric": hashlib.sha256(job.inputs["fabric"].encode()).hexdigest()[:8]}
        if "profile" in job.inputs:                         # an RTL run's host stall profile
            row["profile"] = job.inputs["profile"]
        if result is None:
            row.update(status="not run", error="the sweep stopped before this job ran")
        else:
            row.update(status=result["status"], **result.get("figures", {}), error=result.get("error"))
            row.update(log=result.get("log"), git_revision=result["stamp"].get("git_revision"),
                       cached=result["cached"], seconds=result["seconds"])
        row["key"] = job.key
        rows.append(row)
    return rows


def _columns(rows: list[dict]) -> list[str]:
    seen = []
    for row in rows:
        seen += [name for name in row if name not in seen]
    leading = [name for name in seen if name not in _FIGURES and name not in
               ("error", "log", "key", "git_revision", *RUN_COLUMNS)]
    figures = [name for name in _FIGURES if name in seen]
    extra = [name for name in seen if name not in leading and name not in figures and name not in
             ("error", "log", "key", "git_revision", *RUN_COLUMNS)]
    return leading + figures + extra + [name for name in ("error", "log", "key", "git_revision", *RUN_COLUMNS)
                                        if name in seen]


def _csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_columns(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def pareto_sets(rows: list[dict]) -> dict:
    """The data of each plot: name -> (x label, y label, senses, {program: [(x, y, point)]}).
    Plots whose figures the sweep did not measure are left out."""
    passed = [row for row in rows if row["status"] == "passed"]
    luts = {row["fabric"]: row["lut"] for row in passed if "lut" in row}
    sets = {}
    lut_cycles, depth_cycles, fmax_grid = {}, {}, {}
    for row in passed:
        label = _label(row)
        if row["job"] == "rtl" and "cycles" in row:
            series = f"{row['program']}, {row['profile']}"
            if row["fabric"] in luts:
                lut_cycles.setdefault(series, []).append((luts[row["fabric"]], row["cycles"], label))
            if "queue_depth" in row:
                depth_cycles.setdefault(series, []).append((row["queue_depth"], row["cycles"], label))
        if row["job"] == "pnr" and "fmax_mhz" in row:
            tiles = row["rows"] * row["cols"]
            fmax_grid.setdefault(row["program"], []).append((tiles, row["fmax_mhz"], label))
    if lut_cycles:
        sets["luts_vs_cycles"] = ("LUTs", "cycles (RTL)", ("min", "min"), lut_cycles)
    if fmax_grid:
        sets["fmax_vs_grid"] = ("tiles in the grid", "Fmax (MHz)", ("max", "max"), fmax_grid)
    if depth_cycles:
        sets["cycles_vs_queue_depth"] = ("queue depth", "cycles (RTL)", ("min", "min"), depth_cycles)
    return sets


def _label(row: dict) -> str:
    """The row's point: its axis values."""
    return " ".join(f"{name}={value}" for name, value in row.items() if name not in _NOT_AXES)


_NOT_AXES = {"rows", "cols", "program", "job", "fabric", "profile", "status", "error", "log", "key",
             "git_revision",
             *RUN_COLUMNS, *_FIGURES}


def _markdown(rows: list[dict], spec, sets: dict, plots: list[Path]) -> str:
    passed = sum(row["status"] == "passed" for row in rows)
    revisions = sorted({row.get("git_revision") or "-" for row in rows})
    lines = [f"# Sweep {spec.name}", "",
             f"{len(rows)} jobs: {passed} passed, {len(rows) - passed} did not. Source revision "
             f"{', '.join(revision[:12] for revision in revisions)}; seed {spec.seed}.", ""]
    columns = [name for name in _columns(rows) if name not in ("log", "key", "git_revision", "error",
                                                               *RUN_COLUMNS, "board", "bitstream")]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(name)) for name in columns) + " |" for row in rows]
    failed = [row for row in rows if row["status"] != "passed"]
    if failed:
        lines += ["", "## Jobs that did not pass", ""]
        lines += [f"- {row['job']} {_label(row)} {row['program']}: {row.get('error')} "
                  f"(log: {row.get('log', '-')})" for row in failed]
    if sets:
        lines += ["", "## Best points (Pareto fronts)", ""]
        for name, (x_label, y_label, senses, series) in sets.items():
            for program, points in series.items():
                best = [points[k] for k in pareto_front([(x, y) for x, y, _ in points], senses)]
                lines.append(f"- {name}, {program}: " + "; ".join(f"{label} ({x_label} {x}, {y_label} {y})"
                                                                   for x, y, label in best))
    if plots:
        lines += ["", "## Plots", ""]
        lines += [f"![{path.stem}]({path.name})" for path in plots if path.suffix == ".png"]
    return "\n".join(lines) + "\n"


def _cell(value) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def write_tables(rows: list[dict], directory: Path, spec) -> list[Path]:
    """``results.json``, ``results.csv``, the plots (when matplotlib is there) and ``summary.md``."""
    directory = Path(directory)
    sets = pareto_sets(rows)
    plots = []
    if sets:
        from .plots import draw_pareto_plots, plotting_available
        if plotting_available():
            plots = draw_pareto_plots(sets, directory)
    written = [directory / "results.json", directory / "results.csv", directory / "summary.md"]
    write_atomically(written[0], json.dumps({"sweep": spec.name, "rows": rows}, indent=2) + "\n")
    write_atomically(written[1], _csv(rows))
    write_atomically(written[2], _markdown(rows, spec, sets, plots))
    return written + plots
