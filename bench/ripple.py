"""BFS on the Ripple golden model: ordered dataflow with a software queue vs Ripple's async BFS.

``python -m bench.ripple`` runs the two BFS programs of :mod:`ripple_core.programs` (ordered
dataflow with an array queue; Ripple's ``ind async visit`` with a spill queue and an atomic
test-and-set) on random graphs (CSR, uniform random out-degree, 256..1024 vertices) on the golden
model and compares cycles, firings, IPC and static size. Both must mark exactly the vertices
reachable from vertex 0. Model settings: slot depth 2, memory latency 1, unbounded memory ports
(see docs/ripple.md). Writes bench/results/ripple.json and ripple.md.

``python -m bench.ripple --rtl`` runs the same two programs on the Verilated fabric
examples/fabrics/ripple_bfs.toml (graphs of up to 240 vertices, whose column array fits the
1024-word banks), all in one simulation, and writes bench/results/ripple_rtl.json and .md; each
run also records the cycle model's prediction of its counter (rsn/cycle_model.py, from the
compiled program alone) and that prediction's error against the RTL.
``--options NAME NAME ...`` puts such runs (bench/results/NAME.json) side by side in
ripple_rtl_options.md: cycles per idealised step, tiles per operator and, with the whole grids'
clocks of bench/results/register_every.json, steps per microsecond.
``--option MODE:EVERY:LANES`` runs them with one of bench/register_every.py's fabric options
(queue mode, register_every, pe lanes) in place of the fabric's own, and writes
ripple_rtl_MODE_everyEVERY_lanesLANES.json and .md unless ``--name`` says otherwise.
``--fabric PATH --name NAME`` runs them on another fabric instead, writing NAME.json and .md: on
one with a shared memory (examples/fabrics/ripple_large.toml) the graphs go up to 1,024 vertices,
as the arrays are no longer bounded by one PE's bank.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from argparse import ArgumentTypeError
from pathlib import Path

from ripple_core.interp import run
from ripple_core.programs import bfs_case, dmv, dmv_case, ordered_bfs, random_csr, reachable, ripple_bfs

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

__all__ = ["measure", "measure_rtl", "main"]

RTL_FABRIC = REPO / "examples" / "fabrics" / "ripple_bfs.toml"
RTL_CASES = ((64, 4), (128, 4), (112, 8), (240, 4))
SHARED_RTL_CASES = RTL_CASES + ((512, 4), (1024, 4))     # on a fabric with a shared memory
DMV_CASES = ((8, 8), (16, 16), (32, 32))       # (rows, columns)
CASES = ((256, 4), (256, 8), (512, 6), (1024, 4), (1024, 8))
DEPTH, MEM_LATENCY, SPILL_DEPTH, SEED = 2, 1, 8, 2025


def _run(graph, memory):
    started = time.monotonic()
    result = run(graph, memory=memory, depth=DEPTH, mem_latency=MEM_LATENCY)
    return result, time.monotonic() - started


def measure(vertices: int, degree: int, seed: int) -> dict:
    row, col = random_csr(vertices, degree, seed)
    expected = reachable(row, col)
    figures = {"vertices": vertices, "degree": degree, "edges": len(col), "reached": sum(expected)}
    programs = {"ordered": (ordered_bfs(), bfs_case(row, col, ordered=True)),
                "ripple": (ripple_bfs(), bfs_case(row, col, ordered=False))}
    for name, (graph, case) in programs.items():
        result, seconds = _run(graph, case["mem"])
        wrong = [array for array, words in case["expect"].items() if result.arrays[array] != words]
        if wrong or not result.drained:
            raise AssertionError(f"{name} BFS on {vertices} vertices: wrong {wrong} or tokens left")
        figures[name] = {"cycles": result.cycles, "firings": result.firings, "ipc": round(result.ipc, 3),
                         "static": result.static_instructions,
                         "control_share": round(result.control_firings / result.firings, 3),
                         "cycles_per_edge": round(result.cycles / len(col), 2),
                         "spill_traffic": result.spill_traffic,
                         "mem_ops": result.mem_reads + result.mem_writes,
                         "max_locks": result.max_locks_held, "seconds": round(seconds, 2)}
    deeper = run(programs["ripple"][0], memory=programs["ripple"][1]["mem"], depth=4, mem_latency=MEM_LATENCY)
    figures["ripple_depth4"] = {"cycles": deeper.cycles, "ipc": round(deeper.ipc, 3)}
    o, r = figures["ordered"], figures["ripple"]
    figures["speedup"] = round(o["cycles"] / r["cycles"], 2)
    figures["firings_ratio"] = round(r["firings"] / o["firings"], 2)
    figures["ipc_gain"] = round(r["ipc"] / o["ipc"], 2)
    return figures


def _dmv_runs(cases) -> list:
    runs = []
    for k, (m, n) in enumerate(cases):
        rng = random.Random(SEED + 100 + k)
        case = dmv_case([[rng.randint(-99, 99) for _ in range(n)] for _ in range(m)],
                        [rng.randint(-99, 99) for _ in range(n)])
        for name in ("ordered", "ripple"):
            runs.append((("dmv", m, n), name, case, dmv(ripple=name == "ripple")))
    return runs


def measure_rtl(cases=None, dmv_cases=DMV_CASES, fabric: Path = RTL_FABRIC, option=None) -> dict:
    """Both BFS programs on every graph of ``cases`` and both dmv programs on every shape of
    ``dmv_cases``, on the Verilated fabric, in one simulation. A run passes if ``done`` rises,
    every PE's firings equal the golden model's, and the arrays read back from the banks
    (visited and the ordered queue; y) equal the Python reference. ``option``, a
    ``(queue_mode, register_every, lanes)`` triple, replaces the fabric's own (the latency and
    density options of bench/register_every.py)."""
    from ripple_core.check import fabric_problems
    from ripple_core.lower import compile_lowering, lower_graph
    from rivulet.sim.fabric_run import run_many_on_rtl
    from rsn.fabric_spec import load_fabric
    from rsn.readout import register_reads, split_register_reads

    stamp = git_stamp()         # the revision the RTL is built from
    spec = load_fabric(fabric)
    if option is not None:
        mode, every, lanes = option
        spec = dataclasses.replace(spec, queue_mode=mode, register_every=every)
        spec = spec.with_parameters("pe", lanes=lanes)
    shared = spec.memory is not None
    if cases is None:
        cases = SHARED_RTL_CASES if shared else RTL_CASES
    runs = []
    for k, (vertices, degree) in enumerate(cases):
        row, col = random_csr(vertices, degree, SEED + k)
        if not shared and len(col) > spec.parameters("pe").mem_depth:
            raise ValueError(f"{vertices} vertices, degree {degree}: {len(col)} edges do not fit the "
                             f"{spec.parameters('pe').mem_depth}-word banks of {fabric.name}")
        for name, graph in (("ordered", ordered_bfs()), ("ripple", ripple_bfs(depth=SPILL_DEPTH))):
            case = bfs_case(row, col, ordered=name == "ordered")
            lowering = lower_graph(graph, case, spec, name=f"bfs-{name}-{vertices}-{degree}")
            compiled = compile_lowering(lowering, spec, seed=SEED)
            key = (vertices, degree, len(col), sum(case["expect"]["visited"]))
            runs.append((key, name, lowering, compiled))
    for key, name, case, graph in _dmv_runs(dmv_cases):
        lowering = lower_graph(graph, case, spec, name=f"dmv-{name}-{key[1]}x{key[2]}")
        runs.append((key, name, lowering, compile_lowering(lowering, spec, seed=SEED)))
    started = time.monotonic()
    results = run_many_on_rtl([run[3] for run in runs], profiles=["no_stall"] * len(runs),
                              seeds=[SEED] * len(runs), case="bench-ripple-bfs-rtl", max_cycles=2_000_000,
                              extra_reads=[register_reads(run[3]) for run in runs])
    wall = time.monotonic() - started
    rows = {}
    for (graph_key, name, lowering, compiled), result in zip(runs, results, strict=True):
        reads = split_register_reads(compiled, result.extra)
        problems = fabric_problems(lowering, compiled, result.outputs, result.firings, reads)
        firings = lowering.model.firings
        if graph_key[0] == "dmv":
            row = rows.setdefault(graph_key, {"kernel": "dmv", "rows": graph_key[1], "columns": graph_key[2]})
        else:
            vertices, degree, edges, reached = graph_key
            row = rows.setdefault(graph_key, {"kernel": "bfs", "vertices": vertices, "degree": degree,
                                              "edges": edges, "reached": reached})
        preload = _preload_words(compiled)
        compute = result.cycles - (len(compiled.image) - preload)
        row[name] = {"passed": not problems and result.done_cycle is not None, "problems": problems,
                     "rtl_cycles": result.cycles, "image_words": len(compiled.image),
                     "preload_words": preload,
                     "compute_cycles": compute, "firings": firings,
                     "ipc": round(firings / result.cycles, 3), "static": len(lowering.units),
                     "pe_tiles": len(tiles := [node.name for node in compiled.program.graph.fu_nodes()]),
                     "operators": sum(len(lowering.units[tile]) for tile in tiles),
                     "model_cycles": lowering.model.cycles,
                     "predicted_cycles": (predicted := predicted_cycles(compiled)),
                     "prediction_error": prediction_error(predicted, result.cycles)}
    for row in rows.values():
        o, r = row["ordered"], row["ripple"]
        row["speedup"] = round(o["rtl_cycles"] / r["rtl_cycles"], 2)
        row["compute_speedup"] = round(o["compute_cycles"] / r["compute_cycles"], 2)
    memory = (f"a shared memory of {spec.memory.words} words in {spec.memory.banks} banks" if shared
              else f"{spec.parameters('pe').mem_depth}-word banks")
    settings = {"fabric": fabric.name, "rows": spec.rows, "cols": spec.cols, "queue_depth": spec.queue_depth,
                "queue_mode": spec.queue_mode, "register_every": spec.register_every,
                "lanes": spec.parameters("pe").lanes, "memory": memory, "spill_depth": SPILL_DEPTH,
                "seed": SEED, **stamp, "simulation_seconds": round(wall, 1)}
    return {"settings": settings, "runs": list(rows.values())}


_PAIR_HEADER = ("passed (ord / Ripple) | RTL cycles (ord / Ripple) | speed-up "
                "| compute cycles (ord / Ripple) | compute speed-up | firings (ord / Ripple) "
                "| IPC (ord / Ripple) | static PEs (ord / Ripple) | model cycles (ord / Ripple) "
                "| cycle model (ord / Ripple) |")
_PAIR_RULE = "---|---|---:|---|---:|---|---|---|---|---|"


def _pair_cells(row: dict) -> str:
    """The table cells that compare a row's ordered and Ripple runs."""
    o, r = row["ordered"], row["ripple"]
    pairs = [("passed", lambda passed: "yes" if passed else "NO"), ("rtl_cycles", None),
             ("speedup", "x"), ("compute_cycles", None), ("compute_speedup", "x"), ("firings", None),
             ("ipc", None), ("static", None), ("model_cycles", None)]
    cells = []
    for key, how in pairs:
        if how == "x":
            cells.append(f"{row[key]}x")
        else:
            show = how or str
            cells.append(f"{show(o[key])} / {show(r[key])}")
    cells.append(" / ".join(prediction_cell(run.get("predicted_cycles"), run["rtl_cycles"])
                            for run in (o, r)))
    return " | ".join(cells)


def markdown_rtl(report: dict) -> str:
    settings = report["settings"]
    lines = [
        "# BFS and dmv on the RTL fabric: ordered dataflow vs Ripple",
        "",
        f"git {settings.get('git_revision', 'unknown')}; {settings['simulation_seconds']} s of simulation.",
        "",
        f"Both programs of `ripple_core/programs.py`, lowered onto `{settings['fabric']}` "
        f"({settings['rows']}x{settings['cols']} pe tiles, queue depth {settings['queue_depth']}, "
        f"{options_text(settings)}{settings['memory']}; Ripple's task queue: depth {settings['spill_depth']} "
        f"with spill) and run in one simulation of the Verilated fabric, no host stalls, seed "
        f"{settings['seed']}. RTL cycles count from START to done and include loading the image "
        f"after START (configuration, and arrays in private banks, at most one word per cycle); "
        f"compute = RTL cycles - those image words (approximate: PEs configured early start before "
        f"the last word arrives). A shared memory is preloaded before START, so its words are in "
        f"neither (about 2 cycles per word, the host's to count). Firings are "
        f"the PEs' firing counters (equal to the golden model's in every run); IPC = firings / RTL "
        f"cycles; static = PEs (with private banks a LOAD and a STORE of one array share one, as do "
        f"ACQUIRE and RELEASE; with the shared memory each is a PE of its own). Model cycles: the "
        f"Ripple golden model's; cycle model: rsn/cycle_model.py's prediction of the RTL counter "
        f"from the compiled program alone, with its error ((predicted - RTL) / RTL). "
        f"{_accuracy(report['runs'])}",
        "",
        "| vertices | d | edges | reached | " + _PAIR_HEADER,
        "|---:|---:|---:|---:|" + _PAIR_RULE,
    ]
    for row in [row for row in report["runs"] if row["kernel"] == "bfs"]:
        lines.append(f"| {row['vertices']} | {row['degree']} | {row['edges']} | {row['reached']} | "
                     f"{_pair_cells(row)} |")
    lines += ["", "dmv (`y = A x`, random values in -99..99): ordered, and Ripple with one `ind async` task "
              "per row pushed by the row loop. Regular code, so Ripple is expected to run alike.", "",
              "| rows x columns | " + _PAIR_HEADER, "|---|" + _PAIR_RULE]
    for row in [row for row in report["runs"] if row["kernel"] == "dmv"]:
        lines.append(f"| {row['rows']} x {row['columns']} | {_pair_cells(row)} |")
    return "\n".join(lines) + "\n"


def _option_of(settings: dict) -> tuple:
    """(queue_mode, register_every, lanes) of a run (runs that did not record them: the defaults)."""
    return (settings.get("queue_mode", "registered"), settings.get("register_every", 1),
            settings.get("lanes", 1))


def markdown_options(reports: list[dict], fmax: dict, names: list[str], placed: dict | None = None) -> str:
    """BFS and dmv under several fabric options side by side (one ``measure_rtl`` report per
    option). Idealised steps: the golden model's cycles (slot depth 2, memory latency 1,
    unbounded memory ports); ``fmax`` maps an option to its whole pe grid's clock (MHz) from
    bench/results/register_every.json, where measured, and ``placed`` to its estimate after
    placement (``--part placed``); ``names`` are the reports' files."""
    from .queue_bypass import loop_slope
    from .register_every import _geomean, label
    options = [_option_of(report["settings"]) for report in reports]
    lines = ["# BFS and dmv on the RTL fabric under the pe fabric's options", "",
             f"Written by `python -m bench.ripple --options {' '.join(names)}` from "
             + ", ".join(f"{label(option)} (git {report['settings']['git_revision']})"
                         for option, report in zip(options, reports, strict=True))
             + f"; every run on `{reports[0]['settings']['fabric']}` "
             f"({reports[0]['settings']['rows']}x{reports[0]['settings']['cols']}), checked as in "
             "ripple_rtl.md. Steps: the golden model's cycles (slot depth 2, memory latency 1, unbounded "
             "memory ports), the idealised machine. Per run: RTL cycles per step with the image load, "
             "compute cycles per step, and pe tiles / operator nodes (an LDST or LOCK unit is two). Per "
             "program, the loop: compute cycles per step from its smallest case to its largest. Steps "
             "per µs: the option's whole 3x3 pe "
             "grid's Fmax (bench/results/register_every.md, where measured: routed, or nextpnr's "
             "estimate after placement) / the geomean of the programs' loop cycles per step.", "",
             "| program | case | steps | " + " | ".join(label(option) for option in options) + " |",
             "|---|---|---:|" + "---|" * len(options)]
    runs = {}
    for report in reports:
        for row in report["runs"]:
            case = (f"{row['vertices']} vertices, d = {row['degree']}" if row["kernel"] == "bfs"
                    else f"{row['rows']} x {row['columns']}")
            for version in ("ordered", "ripple"):
                runs.setdefault((row["kernel"], version, case), []).append(row[version])
    slopes = {option: [] for option in options}
    for (kernel, version, case), per_option in runs.items():
        steps = per_option[0]["model_cycles"]
        cells = []
        for one in per_option:
            ok = "" if one["passed"] else " FAILED"
            cells.append(f"{one['rtl_cycles'] / steps:.2f} / {one['compute_cycles'] / steps:.2f}; "
                         f"{one['pe_tiles']}/{one['operators']}{ok}")
        lines.append(f"| {kernel} {version} | {case} | {steps} | " + " | ".join(cells) + " |")
    programs = sorted({(kernel, version) for kernel, version, _ in runs})
    lines += ["", "| program | " + " | ".join(label(option) for option in options) + " |",
              "|---|" + "---:|" * len(options)]
    for kernel, version in programs:
        cells = []
        for n, option in enumerate(options):
            points = [(per_option[n]["model_cycles"], per_option[n]["compute_cycles"])
                      for (k, v, _), per_option in runs.items() if (k, v) == (kernel, version)]
            slope = loop_slope(points)
            if slope is not None:
                slopes[option].append(slope)
            cells.append("-" if slope is None else f"{slope:.2f}")
        lines.append(f"| {kernel} {version}: loop cycles per step | " + " | ".join(cells) + " |")
    geomeans = {option: _geomean(values) if values else None for option, values in slopes.items()}
    lines.append("| **geomean of loop cycles per step** | "
                 + " | ".join("-" if g is None else f"**{g:.2f}**" for g in geomeans.values()) + " |")
    for clocks, what in ((fmax, "whole-grid Fmax (MHz), routed"),
                         (placed or {}, "whole-grid Fmax (MHz), estimated after placement")):
        if not any(option in clocks for option in options):
            continue
        lines.append(f"| {what} | " + " | ".join(
            f"{clocks[option]:.1f}" if option in clocks else "-" for option in options) + " |")
        lines.append("| **steps per µs** | " + " | ".join(
            f"**{clocks[option] / geomeans[option]:.1f}**" if option in clocks and geomeans[option] else "-"
            for option in options) + " |")
    return "\n".join(lines) + "\n"


def _accuracy(rows: list[dict]) -> str:
    """The cycle model over every run: how many it predicts exactly, and its largest error."""
    runs = [row[name] for row in rows for name in ("ordered", "ripple")]
    errors = [run.get("prediction_error") for run in runs]
    if any(error is None for error in errors):
        return "The cycle model did not time every run."
    exact = sum(run["predicted_cycles"] == run["rtl_cycles"] for run in runs)
    return (f"The cycle model predicts {exact} of the {len(runs)} runs exactly; its largest error is "
            f"{max(abs(error) for error in errors):.1f}%.")


def markdown(rows: list[dict]) -> str:
    first = rows[0]
    lines = [
        "# BFS on the Ripple golden model",
        "",
        f"Ordered-dataflow BFS with a software queue vs Ripple BFS (`ind async` self-push on a spill queue "
        f"of depth {SPILL_DEPTH}, atomic test-and-set of `visited`). Golden model: slot depth {DEPTH}, "
        f"memory latency {MEM_LATENCY}, unbounded memory ports. Random CSR graphs, out-degree uniform in "
        f"[d/2, 3d/2], seed {SEED}; both programs reach exactly the reference vertex set. Static size: "
        f"{first['ordered']['static']} (ordered) vs {first['ripple']['static']} (Ripple) instructions.",
        "",
        "The programs are those of `ripple_core/programs.py`, which also run on the RTL fabric "
        "(`ripple_rtl.md`). There a LOAD and a STORE of one array share a PE with three slots, so the "
        "ordered version's three memory-order sync tokens pass through ORDER nodes in front of the "
        "addresses. That adds 3 instructions and about 1.3 cycles per edge on this model: at 256 "
        "vertices, d = 4, it took 7.91 cycles per edge with sync slots and takes 9.34 with ORDERs. "
        "The reference notes give about 9 steps per edge. The Ripple version is unchanged.",
        "",
        "At slot depth 2 the Ripple pipeline is limited by buffering, not by the task: the address waits "
        "in the release's slot while the test-and-set runs (acquire, load, compare, store, merge), so two "
        "places cannot cover that path. The last column reruns Ripple BFS with depth-4 slots.",
        "",
        "| vertices | d | edges | reached | ordered cycles | Ripple cycles | speed-up | ordered firings "
        "| Ripple firings | firings ratio | ordered IPC | Ripple IPC | cycles/edge (ord / Ripple) "
        "| control share (ord / Ripple) | spill words | Ripple cycles, depth 4 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|",
    ]
    for f in rows:
        o, r = f["ordered"], f["ripple"]
        lines.append(f"| {f['vertices']} | {f['degree']} | {f['edges']} | {f['reached']} | {o['cycles']} | "
                     f"{r['cycles']} | {f['speedup']}x | {o['firings']} | {r['firings']} | "
                     f"{f['firings_ratio']} | {o['ipc']} | {r['ipc']} | {o['cycles_per_edge']} / "
                     f"{r['cycles_per_edge']} | {o['control_share']} / {r['control_share']} | "
                     f"{r['spill_traffic']} | {f['ripple_depth4']['cycles']} |")
    return "\n".join(lines) + "\n"


def _preload_words(compiled) -> int:
    """Image words that preload a shared memory: they come before START, so the fabric's cycle
    counter does not count them (rsn.assemble.assemble)."""
    from rsn.assemble import shared_memory_packets
    from rsn.program import SHARED_MEMORY

    contents = compiled.program.memories.get(SHARED_MEMORY)
    return len(shared_memory_packets(contents, 8)) if contents else 0


def _option(args: list[str], name: str, default: str) -> str:
    """The value after ``name`` in ``args``, or ``default``."""
    if name not in args:
        return default
    at = args.index(name)
    if at + 1 == len(args):
        raise SystemExit(f"{name} needs a value")
    return args[at + 1]


def main(argv=None) -> int:
    import sys

    args = sys.argv[1:] if argv is None else argv
    if "--options" in args:
        names = args[args.index("--options") + 1:]
        if len(names) < 2:
            raise SystemExit("--options needs two or more names of bench/results/ripple_rtl*.json files "
                             "(runs of --rtl under different --option)")
        reports = []
        for name in names:
            path = RESULTS / f"{name}.json"
            if not path.exists():
                raise SystemExit(f"--options: {path} does not exist; run python -m bench.ripple --rtl "
                                 f"[--option MODE:EVERY:LANES] first")
            reports.append(json.loads(path.read_text()))
        from .register_every import _option_of as grid_option
        record = RESULTS / "register_every.json"
        grids = json.loads(record.read_text()) if record.exists() else {}
        fmax, placed = ({grid_option(grid): grid["fmax_mhz"] for grid in grids.get(part, [])}
                        for part in ("fabric", "placed"))
        table = RESULTS / "ripple_rtl_options.md"
        table.write_text(markdown_options(reports, fmax, names, placed))
        print(f"wrote {table}")
        return 0
    if "--rtl" in args:
        fabric = Path(_option(args, "--fabric", str(RTL_FABRIC)))
        option = _option(args, "--option", None)
        if option is not None:
            from .register_every import parse_option
            try:
                option = parse_option(option)
            except ArgumentTypeError as error:
                raise SystemExit(f"--option {error}") from None
        report = measure_rtl(fabric=fabric, option=option)
        default_name = "ripple_rtl" if option is None else "ripple_rtl_{}_every{}_lanes{}".format(*option)
        figures, table = write_results(RESULTS, _option(args, "--name", default_name), report,
                                       markdown_rtl(report), indent=1)
        for row in report["runs"]:
            o, r = row["ordered"], row["ripple"]
            what = f"{row['vertices']} vertices, d={row['degree']}" if row["kernel"] == "bfs" else \
                f"dmv {row['rows']}x{row['columns']}"
            print(f"{what}: ordered {o['rtl_cycles']} RTL cycles, "
                  f"Ripple {r['rtl_cycles']} ({row['speedup']}x; compute {row['compute_speedup']}x)")
        print(f"wrote {figures} and {table}")
        return 0 if all(row[p]["passed"] for row in report["runs"] for p in ("ordered", "ripple")) else 1
    rows = []
    for k, (vertices, degree) in enumerate(CASES):
        figures = measure(vertices, degree, SEED + k)
        rows.append(figures)
        print(f"{vertices} vertices, d={degree}: ordered {figures['ordered']['cycles']} cycles, Ripple "
              f"{figures['ripple']['cycles']} cycles ({figures['speedup']}x), "
              f"IPC {figures['ordered']['ipc']} -> {figures['ripple']['ipc']}", flush=True)
    settings = {"depth": DEPTH, "mem_latency": MEM_LATENCY, "spill_depth": SPILL_DEPTH, "seed": SEED}
    figures, table = write_results(RESULTS, "ripple", {"settings": settings, "runs": rows}, markdown(rows),
                                   indent=1)
    print(f"wrote {figures} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
