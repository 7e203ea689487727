"""What every benchmark shares: where things go, the git stamp, the job runner, Fmax from
nextpnr's report, the cycle model's prediction beside a measured count, and the writing of a
result pair (JSON figures + Markdown table).

One place, so that every results file is stamped, located and formatted the same way and no
suite keeps a copy that drifts. Suites import this module; it imports none of them.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["REPO", "RESULTS", "QUICK_RESULTS", "BUILD_ROOT", "ToolError", "relative_path", "git",
           "git_stamp", "now", "run_jobs", "fmax_from_report", "format_fmax", "predicted_cycles",
           "prediction_error", "prediction_cell", "write_results"]

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"            # recorded results, under version control
QUICK_RESULTS = REPO / "build" / "bench" / "quick"  # --quick runs: never overwrite the recorded ones
BUILD_ROOT = REPO / "build" / "bench"           # FPGA builds, one directory per run


class ToolError(RuntimeError):
    """An FPGA tool failed, or its report is not what the benchmark expects."""


def relative_path(path) -> str:
    """Repository-relative path, so the results file holds no machine-specific paths."""
    return Path(path).resolve().relative_to(REPO).as_posix()


def git(*args: str) -> str:
    """``git ARGS`` in the repository; ``unknown`` outside a checkout."""
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def git_stamp() -> dict:
    """The revision a figure was measured at, and whether tracked files differed from it."""
    return {"git_revision": git("rev-parse", "--short", "HEAD"),
            "git_tracked_changes": bool(git("status", "--porcelain", "--untracked-files=no"))}


def now() -> str:
    """The measurement's date, UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_jobs(jobs: list[tuple], workers: int, describe) -> list[dict]:
    """Run ``(function, *args)`` jobs on a process pool, printing ``describe(entry)`` as each
    finishes; the first failure cancels the rest and is raised at once."""
    done = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(*job) for job in jobs]
        for count, future in enumerate(as_completed(futures), start=1):
            try:
                entry = future.result()
            except Exception:  # a tool failed: report it now, do not wait for the rest
                for pending in futures:
                    pending.cancel()
                raise
            done.append(entry)
            print(f"[{count:2}/{len(jobs)}] {describe(entry)}", flush=True)
    return done


def fmax_from_report(report: dict, where) -> tuple[float, float]:
    """Achieved and constrained MHz of the design's one clock in a nextpnr ``--report`` JSON
    (clock names differ per family); ``where`` names the report in the error."""
    clocks = report.get("fmax", {})
    matching = [key for key in clocks if "clk" in key.lower()] or list(clocks)
    if len(matching) != 1:
        raise ToolError(f"expected one clock in {where}, found {list(clocks)}")
    entry = clocks[matching[0]]
    return float(entry["achieved"]), float(entry["constraint"])


def format_fmax(entry: dict) -> str:
    """Median Fmax, with the range over seeds when there is more than one."""
    per_seed = entry["fmax_per_seed"]
    if len(per_seed) == 1:
        return f"{entry['fmax_mhz']:.1f}"
    return f"{entry['fmax_mhz']:.1f} ({min(per_seed):.0f}-{max(per_seed):.0f})"


def predicted_cycles(compiled) -> int | None:
    """The cycle model's counter for a run of ``compiled`` without host stalls (rsn/cycle_model.py),
    or None where it has no timing for the program's units."""
    from rsn.cycle_model import CycleModelError, predict_cycles

    try:
        return predict_cycles(compiled).cycles
    except CycleModelError:
        return None


def prediction_error(predicted: int | None, measured: int) -> float | None:
    """(predicted - measured) / measured, in percent; None without a prediction."""
    return None if predicted is None or not measured else 100 * (predicted - measured) / measured


def prediction_cell(predicted: int | None, measured: int) -> str:
    """A table cell: the predicted count and its error against the measured one."""
    error = prediction_error(predicted, measured)
    if error is None:
        return "-"
    return f"{predicted} (exact)" if predicted == measured else f"{predicted} ({error:+.1f}%)"


def merged_report(name: str, measured: dict, settings: dict) -> dict:
    """The recorded ``RESULTS/NAME.json`` with this run's parts in place of theirs, for a bench
    whose parts can be re-measured one at a time (read last: the parts may run side by side)."""
    previous = RESULTS / f"{name}.json"
    report = {**(json.loads(previous.read_text()) if previous.exists() else {}), **measured}
    report["settings"] = settings
    return report


def write_results(directory: Path, name: str, results, markdown: str, *, indent: int = 2,
                  default=None) -> tuple[Path, Path]:
    """Write ``NAME.json`` (the figures) and ``NAME.md`` (the table) into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    figures, table = directory / f"{name}.json", directory / f"{name}.md"
    figures.write_text(json.dumps(results, indent=indent, default=default) + "\n")
    table.write_text(markdown)
    return figures, table


def options_text(settings: dict) -> str:
    """A run's fabric latency and density options as a phrase for a table's caption, from its
    recorded settings (queue_mode, register_every, lanes); runs from before they were recorded: ""."""
    if "queue_mode" not in settings:
        return ""
    lanes = settings["lanes"]
    return (f"{settings['queue_mode']} queues, register_every {settings['register_every']}, "
            f"{lanes} lane{'s' if lanes != 1 else ''} per tile, ")
