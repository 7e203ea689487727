"""The RipTide peer suite on the Verilated fabric of pe tiles: RTL cycles against the suite's steps.

``python -m bench.ripple_suite`` lowers every case of the ten suite graphs (simple, simple-mem,
nn-vadd, nn-relu, dmv; STREAM and no-STREAM variants) onto examples/fabrics/ripple.toml, runs all
of them in one simulation of the fabric (one build), and records per case:

* ``reference_steps``: the suite's step count (idealised: unbounded queues, no latency);
* ``model_cycles``: the Ripple golden model at the fabric's queue depth, memory latency 1;
* ``rtl_cycles``: the fabric's cycle counter from START to ``done``, which includes loading the
  image (``image_words``, at most one word per cycle; the banks' preloads are part of it);
* ``predicted_cycles``: the cycle model's counter for the same run (rsn/cycle_model.py, from the
  compiled program alone), and ``prediction_error``, its error against ``rtl_cycles`` in percent;
* whether the case passed: host outputs, per-PE firings equal to the model's, the memory PEs'
  status (no fault) and the STOREd arrays equal to the case's ``expect``.

The suite graphs have no host stream, so the stall profile does not matter; the runs use
``no_stall``. Writes bench/results/ripple_suite.json and ripple_suite.md.

``--fabric examples/fabrics/ripple_large.toml --name ripple_suite_shared`` runs the same cases on
the fabric with the shared memory (docs/shared-memory.md), where the arrays are preloaded before
START (so ``rtl_cycles`` no longer counts them), and adds ordered BFS at 1,024 vertices (random
graph, out-degree 2 to 6) with its queue and visited arrays checked against Python's BFS. There
each case also records:

* ``preload_cycles``: the cycles before START, which the fabric's counter leaves out: the image
  words in front of START (the preload), which the dispenser takes one per cycle since no PE
  runs yet to contend for the banks. (The bench's clock says the same, the cycle ``done`` rose
  less the counter and one, except in cases where ``done`` rises early, before the last
  micro-ops arrive: there the first rise is not the end);
* ``bank_accesses`` and ``bank_conflicts``: the memory's per-bank counters, read through the
  control plane after the run (since START, so the preload is not in them); the accesses must
  add up to the golden model's LOAD and STORE firings, or the case fails.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ripple_core.check import fabric_problems
from ripple_core.lower import compile_lowering, lower_graph
from ripple_core.programs import bfs_case, ordered_bfs, random_csr
from ripple_core.riptide import load_graph, load_vectors
from rivulet.frontends.riptide import RIPPLE_FABRIC
from rivulet.sim.fabric_run import run_many_on_rtl
from rsn.fabric_spec import load_fabric
from rsn.image import split_packets
from rsn.isa import Opcode
from rsn.readout import register_reads, split_register_reads

from .common import (
    REPO,
    RESULTS,
    git_stamp,
    options_text,
    predicted_cycles,
    prediction_cell,
    prediction_error,
    write_results,
)

__all__ = ["SUITE", "KERNELS", "suite_runs", "measure", "markdown", "main"]

SUITE = REPO.parent / "shared" / "peer-suites" / "riptide"
KERNELS = ("simple", "simple-mem", "nn-vadd", "nn-relu", "dmv")
VARIANTS = ("stream", "nostream")
PROFILE, SEED = "no_stall", 1
BFS_VERTICES, BFS_DEGREE = 1024, 4      # on a fabric with a shared memory


def suite_runs(spec, suite: Path = SUITE, failures: list | None = None):
    """(kernel, variant, case index, case, lowering, compiled) for every graph-case pair of the suite.

    With ``failures`` (a list), a case that does not place or route is left out and added to it
    as (kernel, variant, case index, case, lowering, error), so that a bench can report it."""
    from rsn.place import PlaceError
    from rsn.route import RouteError

    for kernel in KERNELS:
        cases = load_vectors(suite / f"{kernel}.vectors.json")
        for variant in VARIANTS:
            graph = load_graph(suite / f"{kernel}.riptide{'.nostream' if variant == 'nostream' else ''}.json")
            for k, case in enumerate(cases):
                lowering = lower_graph(graph, case, spec, name=f"{kernel}-{variant}-case{k}")
                try:
                    compiled = compile_lowering(lowering, spec, seed=SEED)
                except (PlaceError, RouteError) as error:
                    if failures is None:
                        raise
                    failures.append((kernel, variant, k, case, lowering, f"{type(error).__name__}: {error}"))
                    continue
                yield kernel, variant, k, case, lowering, compiled


def measure(suite: Path = SUITE, fabric: Path = RIPPLE_FABRIC) -> dict:
    """Every graph-case pair of the suite on the RTL fabric, in one simulation."""
    stamp = git_stamp()         # the revision the RTL is built from
    spec = load_fabric(fabric)
    runs = list(suite_runs(spec, suite))
    if spec.memory is not None:
        row, col = random_csr(BFS_VERTICES, BFS_DEGREE, SEED)
        case = {**bfs_case(row, col, ordered=True), "origin": "generated",
                "reference_steps": {"stream": 0}}
        lowering = lower_graph(ordered_bfs(), case, spec, name=f"bfs-ordered-{BFS_VERTICES}")
        runs.append(("bfs-ordered", "stream", 0, case, lowering, compile_lowering(lowering, spec, seed=SEED)))
    started = time.monotonic()
    results = run_many_on_rtl([run[5] for run in runs], profiles=[PROFILE] * len(runs),
                              seeds=[SEED] * len(runs), case="bench-ripple-suite", max_cycles=5_000_000,
                              extra_reads=[register_reads(run[5]) for run in runs])
    wall = time.monotonic() - started
    rows = []
    for (kernel, variant, k, case, lowering, compiled), result in zip(runs, results, strict=True):
        reads = split_register_reads(compiled, result.extra)
        problems = fabric_problems(lowering, compiled, result.outputs, result.firings, reads)
        row = {"kernel": kernel, "variant": variant, "case": k, "origin": case.get("origin"),
               "reference_steps": case["reference_steps"][variant],
               "model_cycles": lowering.model.cycles, "rtl_cycles": result.cycles,
               "predicted_cycles": (predicted := predicted_cycles(compiled)),
               "prediction_error": prediction_error(predicted, result.cycles),
               "image_words": len(compiled.image), "pe_tiles": len(compiled.program.graph.fu_nodes()),
               "firings": lowering.model.firings}
        if spec.memory is not None:
            memory_firings = lowering.model.mem_reads + lowering.model.mem_writes
            if sum(result.bank_accesses) != memory_firings:
                problems = [*problems, f"the banks served {sum(result.bank_accesses)} requests, but the "
                                       f"golden model fired LOAD and STORE {memory_firings} times"]
            row.update(preload_cycles=_words_before_start(compiled.image), memory_firings=memory_firings,
                       bank_accesses=result.bank_accesses,
                       bank_conflicts=result.bank_conflicts)
        rows.append({**row, "passed": not problems and result.done_cycle is not None, "problems": problems})
    fabric = Path(fabric).resolve()
    memory = spec.memory
    settings = {"fabric": str(fabric.relative_to(REPO)) if fabric.is_relative_to(REPO) else fabric.name,
                "rows": spec.rows, "cols": spec.cols, "queue_depth": spec.queue_depth,
                "queue_mode": spec.queue_mode, "register_every": spec.register_every,
                "lanes": spec.parameters("pe").lanes,
                "pe_mem_depth": spec.parameters("pe").mem_depth, "profile": PROFILE, "seed": SEED,
                "shared_memory": None if memory is None else {"words": memory.words, "banks": memory.banks},
                **stamp, "simulation_seconds": round(wall, 1)}
    return {"settings": settings, "runs": rows}


def _words_before_start(image) -> int:
    return next(found.offset for found in split_packets(image) if found.opcode == Opcode.START)


def _span(values) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low} / {high}"


def markdown(report: dict) -> str:
    settings, rows = report["settings"], report["runs"]
    shared = settings.get("shared_memory")
    memory = (f"a shared memory of {shared['words']} words in {shared['banks']} banks" if shared
              else f"{settings['pe_mem_depth']}-word banks")
    loaded = ("the configuration part of the image (the arrays are preloaded before START)" if shared
              else "the image load (image words arrive at most one per cycle)")
    lines = [
        "# The RipTide peer suite on the RTL fabric" + (" with the shared memory" if shared else ""),
        "",
        f"Every case of the ten suite graphs lowered onto `{settings['fabric']}` ({settings['rows']}x"
        f"{settings['cols']} pe tiles, queue depth {settings['queue_depth']}, "
        f"{options_text(settings)}{memory}) and run in one "
        f"simulation of the Verilated fabric "
        f"(stall profile {settings['profile']}, seed {settings['seed']}; git {settings['git_revision']}). "
        f"Steps: the suite's idealised step count. "
        f"Model: the Ripple golden model's cycles at the fabric's queue depth. RTL: the fabric's cycle "
        f"counter from START to done, including {loaded}. Cycle model: rsn/cycle_model.py's "
        f"prediction of that counter from the compiled program alone (error: (predicted - RTL) / RTL).",
        "",
        "## Per graph (min / max over cases)",
        "",
    ]
    if shared:
        lines += [
            "PEs: pe tiles the graph takes. Accesses: requests the memory's banks served from START "
            "to done, summed over the banks (they equal the golden model's LOAD and STORE firings in "
            "every passing case); conflicts: cycles, summed over the banks, in which a request waited "
            "for another's grant. Both are read from the banks' counters through the control plane. "
            "RTL: the fabric's counter (compute, with the configuration after START); preload: the "
            "cycles before START, which the counter leaves out (the preload's image words, one per "
            "cycle); RTL + preload: the whole image load and run.",
            "",
            "| graph | cases passed | PEs | steps | RTL cycles | preload cycles | accesses | conflicts "
            "| RTL / steps | (RTL + preload) / steps | cycle model: exact, max error |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
    else:
        lines += ["| graph | cases passed | steps | model cycles | RTL cycles | image words | RTL / steps "
                  "| cycle model: exact, max error |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for kernel in KERNELS:
        for variant in VARIANTS:
            group = [row for row in rows if row["kernel"] == kernel and row["variant"] == variant]
            if not group:
                continue
            ratios = [row["rtl_cycles"] / row["reference_steps"] for row in group]
            head = (f"| {kernel} ({'STREAM' if variant == 'stream' else 'no STREAM'}) | "
                    f"{sum(row['passed'] for row in group)} / {len(group)} | ")
            if shared:
                loaded = [(row["rtl_cycles"] + (row["preload_cycles"] or 0)) / row["reference_steps"]
                          for row in group]
                lines.append(head + f"{_span([r['pe_tiles'] for r in group])} | "
                             f"{_span([r['reference_steps'] for r in group])} | "
                             f"{_span([r['rtl_cycles'] for r in group])} | "
                             f"{_span([r['preload_cycles'] or 0 for r in group])} | "
                             f"{_span([sum(r['bank_accesses'] or [0]) for r in group])} | "
                             f"{_span([sum(r['bank_conflicts'] or [0]) for r in group])} | "
                             f"{min(ratios):.1f} / {max(ratios):.1f} | "
                             f"{min(loaded):.1f} / {max(loaded):.1f} | {_accuracy(group)} |")
                continue
            lines.append(head + f"{_span([r['reference_steps'] for r in group])} | "
                         f"{_span([r['model_cycles'] for r in group])} | "
                         f"{_span([r['rtl_cycles'] for r in group])} | "
                         f"{_span([r['image_words'] for r in group])} | "
                         f"{min(ratios):.1f} / {max(ratios):.1f} | {_accuracy(group)} |")
    kernel_rows = [row for row in rows if row["kernel"] in KERNELS]
    lines += ["", f"Cycle model over all {len(kernel_rows)} cases: {_accuracy(kernel_rows)}."]
    for row in (row for row in rows if row["kernel"] not in KERNELS):
        lines += ["", f"## {row['kernel']} at {BFS_VERTICES} vertices (out-degree {BFS_DEGREE // 2} to "
                      f"{BFS_DEGREE * 3 // 2})", "",
                  f"{'Passed' if row['passed'] else 'FAILED'}: the queue and visited arrays read back equal "
                  f"Python's BFS, and every PE fired as often as in the golden model. {row['pe_tiles']} pe "
                  f"tiles, {row['firings']} firings, {row['image_words']} image words; RTL "
                  f"{row['rtl_cycles']} cycles from START to done against the golden model's "
                  f"{row['model_cycles']} (the cycle model predicts "
                  f"{prediction_cell(row.get('predicted_cycles'), row['rtl_cycles'])}), after "
                  f"{row['preload_cycles']} cycles of preload. The banks "
                  f"served {_per_bank(row['bank_accesses'])} requests and waited "
                  f"{_per_bank(row['bank_conflicts'])} cycles for conflicts (bank 0 first)."]
    rows = [row for row in rows if row["kernel"] in KERNELS]
    memory_columns = ((" preload cycles | accesses per bank | conflicts per bank |", "---:|---|---|")
                      if shared else ("", ""))
    lines += ["", "## Every case", "",
              "| graph | case | origin | passed | steps | model cycles | RTL cycles | cycle model "
              "| image words | pe tiles |" + memory_columns[0],
              "|---|---:|---|---|---:|---:|---:|---:|---:|---:|" + memory_columns[1]]
    for row in rows:
        memory = (f" {row['preload_cycles']} | {_per_bank(row['bank_accesses'])} | "
                  f"{_per_bank(row['bank_conflicts'])} |") if shared else ""
        lines.append(f"| {row['kernel']} ({row['variant']}) | {row['case']} | {row['origin']} | "
                     f"{'yes' if row['passed'] else 'NO'} | {row['reference_steps']} | "
                     f"{row['model_cycles']} | {row['rtl_cycles']} | "
                     f"{prediction_cell(row.get('predicted_cycles'), row['rtl_cycles'])} | "
                     f"{row['image_words']} | {row['pe_tiles']} |" + memory)
    return "\n".join(lines) + "\n"


def _accuracy(rows) -> str:
    """How many of ``rows`` the cycle model predicts exactly, and its largest error."""
    errors = [row.get("prediction_error") for row in rows]
    if any(error is None for error in errors):
        return "-"
    exact = sum(row["predicted_cycles"] == row["rtl_cycles"] for row in rows)
    return f"{exact} / {len(rows)} exact, max {max(abs(error) for error in errors):.1f}%"


def _per_bank(values) -> str:
    return "-" if values is None else " ".join(str(value) for value in values)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ripple_suite", description=__doc__.split("\n")[0])
    parser.add_argument("--fabric", type=Path, default=RIPPLE_FABRIC, help="fabric description")
    parser.add_argument("--name", default="ripple_suite", help="results file name (bench/results/NAME.*)")
    args = parser.parse_args(argv)
    report = measure(fabric=args.fabric)
    figures, table = write_results(RESULTS, args.name, report, markdown(report), indent=1)
    failed = [row for row in report["runs"] if not row["passed"]]
    print(markdown(report).split("## Every case")[0])
    for row in failed:
        print(f"FAILED {row['kernel']} ({row['variant']}) case {row['case']}: {'; '.join(row['problems'])}")
    print(f"wrote {figures} and {table}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
