"""Ripple's nine workloads: the ordered-dataflow baseline against the Ripple version, both written
in the Ripple language (ripple_core/workloads).

``python -m bench.ripple9 [--sizes small] [--rtl | --dry]`` runs, for every workload of
``ripple_core.workloads.NAMES`` whose module exists (the others are listed as missing), every
size of its ``sizes`` (``small`` with ``--sizes small``), every graph kind for graph workloads,
both versions on the same inputs (one seed):

* on the golden model (``ripple_core.interp.run``, slot depth 2, memory latency 1): cycles,
  firings, IPC, spill traffic and atomics' contention;
* with ``--rtl``, also on a Verilated fabric with a shared banked memory, native tier (each
  workload's largest size whose arrays fit the fabrics' shared memory: 1,024 vertices and 64x64
  by default; ``--rtl-sizes smallest|all`` for the others): each case on the first of
  :data:`FABRICS` (examples/fabrics/ripple_xl.toml, 12x12 pe tiles of two lanes, then
  ripple_xxl.toml, 16x16 of one lane; ``--fabric`` for others) that both its versions fit and
  route on, the cases of one fabric in ``--jobs``
  simulations of one build side by side: compute cycles (the fabric's counter less the image
  words loaded after START), firings, and the shared memory's bank accesses and conflicts;
* ``--dry`` lowers and places/routes every case for those fabrics without simulating, so that the
  RTL path is known to work without the fabrics' builds.

Every run's final memory and outputs go through the workload's own ``check`` (an independent
reference: numpy or networkx); a failed check is a row's verdict in the table, never dropped.
Ratios are ripple against ordered; the geomeans are over the workloads present (each workload's
own geomean over its sizes and kinds first), compared with the Ripple paper's targets.

Writes bench/results/ripple9.{json,md} (``--rtl``: ripple9_rtl as well; ``--dry``: ripple9_dry; with
``--sizes small`` the name gets ``_small``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import time
from pathlib import Path

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.ops import wrap
from ripple_core.workloads import NAMES, VERSIONS, workload
from ripple_core.workloads.graphs import KINDS

from .common import REPO, RESULTS, git_stamp, now, write_results

__all__ = ["present", "measure_model", "measure_rtl", "fabric_verdict", "markdown", "main"]

# A case goes to the first fabric both its versions route on (with --fabric, list the smallest
# first). A fabric with fewer than PEs / FILL tiles is not tried (the router needs room around busy
# tiles), nor one a version failed to route on at another size.
FABRICS = tuple(REPO / "examples" / "fabrics" / name for name in ("ripple_xl.toml", "ripple_xxl.toml"))
FILL = 0.8
JOBS = 2                # simulations of one fabric's build side by side (one per core)
DEPTH, MEM_LATENCY, SEED = 2, 1, 2025
# A run that ends at quiescence stops by itself when it hangs; this only bounds a livelock. The
# ordered prd at 1,024 vertices takes about 660k cycles on the golden model, several times that on
# the fabric.
RTL_MAX_CYCLES = 8_000_000
HOST_MEMORY_WORDS = (1 << 17, 1 << 15)   # what kc's 1,024-vertex cases need: one build for every size
# The Ripple paper's geomean targets over its nine workloads: (key, label, wanted, higher is better).
TARGETS = (("speedup", "speed-up (ordered cycles / Ripple cycles)", 3.0, True),
           ("ipc_ratio", "IPC ratio (Ripple / ordered)", 1.58, True),
           ("firings_ratio", "firings ratio (Ripple / ordered)", 0.56, False),
           ("size_ratio", "static size ratio (ordered / Ripple instructions)", 1.9, True))


def present() -> tuple[list[str], list[str]]:
    """The workloads whose module exists, and those not written yet."""
    found, missing = [], []
    for name in NAMES:
        spec = importlib.util.find_spec(f"ripple_core.workloads.{name}")
        (found if spec is not None else missing).append(name)
    return found, missing


def _copy(case: dict) -> dict:
    return {"args": dict(case["args"]), "mem": {name: list(words) for name, words in case["mem"].items()}}


def _pes(graph) -> int | str:
    """PEs of the graph on a fabric with a shared memory (one per operator; SINKs are host ports)."""
    from ripple_core.lower import LoweringError, check_lowerable

    try:
        return len(check_lowerable(graph, shared_memory=True))
    except LoweringError as error:
        return f"not lowerable: {error}"


def _model_run(w, version: str, size: int, kind: str) -> dict:
    """One version on the golden model: its figures, its check's problems, or why it did not run."""
    entry = {"problems": []}
    try:
        graph = compile_kernel(w.kernel(version))
    except Exception as error:          # the language refused the kernel: a row of its own
        return {**entry, "error": f"compile: {type(error).__name__}: {error}"}
    case = w.case(version, size, kind, SEED)
    entry.update(static=graph.static_instructions(), pes=_pes(graph))
    started = time.monotonic()
    try:
        result = run(graph, case["args"], _copy(case)["mem"], depth=DEPTH, mem_latency=MEM_LATENCY)
    except Exception as error:          # deadlock, runaway, bad input: reported, not raised
        return {**entry, "error": f"model: {type(error).__name__}: {error}"}
    problems = list(w.check(version, case, result.arrays, result.outputs))
    if not result.drained:
        problems.append(f"tokens left behind: {', '.join(result.leftovers[:4])}")
    entry.update(cycles=result.cycles, firings=result.firings, ipc=round(result.ipc, 3),
                 spill_traffic=result.spill_traffic, contended_acquires=result.contended_acquires,
                 lock_wait_cycles=result.lock_wait_cycles, problems=problems,
                 seconds=round(time.monotonic() - started, 2))
    entry["_run"] = (graph, case, result)      # for the RTL lowering; dropped before writing
    return entry


def _ratios(row: dict, cycles: str = "cycles") -> dict:
    o, r = row["ordered"], row["ripple"]
    if any(side.get("error") or side.get(cycles) is None for side in (o, r)):
        return {}
    return {"speedup": o[cycles] / r[cycles],
            "ipc_ratio": (r["firings"] / r[cycles]) / (o["firings"] / o[cycles]),
            "firings_ratio": r["firings"] / o["firings"], "size_ratio": o["static"] / r["static"]}


def measure_model(names: list[str], small: bool) -> list[dict]:
    rows = []
    for name in names:
        w = workload(name)
        for size in ((w.small,) if small else w.sizes):
            for kind in (KINDS if w.graph else (KINDS[0],)):
                row = {"workload": name, "size": size, "kind": kind if w.graph else "-"}
                for version in VERSIONS:
                    row[version] = _model_run(w, version, size, kind)
                row["ratios"] = _ratios(row)
                rows.append(row)
                o, r = row["ordered"], row["ripple"]
                verdict = "ok" if _passed(o) and _passed(r) else "FAILED"
                print(f"{name} n={size} {row['kind']}: ordered {o.get('cycles', o.get('error'))} cycles, "
                      f"Ripple {r.get('cycles', r.get('error'))} cycles, check {verdict}", flush=True)
    return rows


def _passed(entry: dict, problems: str = "problems") -> bool:
    return not entry.get("error") and not entry.get(problems)


def _expect(graph, result) -> dict:
    """What the lowering checks the fabric against: the golden model's final arrays and outputs
    (themselves checked against the workload's reference)."""
    expect = {array: list(words) for array, words in result.arrays.items()}
    expect.update({sink: list(tokens) for sink, tokens in result.outputs.items()})
    return expect


def _case_words(row: dict) -> int:
    """Words of the case's arrays (the larger version's): what the shared memory must hold."""
    return max((sum(len(words) for words in row[version]["_run"][1]["mem"].values())
                for version in VERSIONS if "_run" in row[version]), default=0)


def _chosen_sizes(rows: list[dict], which: str, words: int) -> dict:
    """Each workload's size among ``rows`` that runs on the fabric: its ``largest`` whose arrays
    fit ``words`` of shared memory (the one the fabric figures are wanted at: 1,024 vertices and
    64x64 on the default fabrics, whose 16,384 words do not hold 4,096 vertices or 128x128) or
    its ``smallest`` (a quicker run of the same cases)."""
    pick, chosen = (max if which == "largest" else min), {}
    for row in rows:
        if which == "largest" and _case_words(row) > words:
            continue
        chosen[row["workload"]] = pick(chosen.get(row["workload"], row["size"]), row["size"])
    return chosen


def _lower_all(rows: list[dict], specs: list, sizes: str = "all") -> list[tuple]:
    """Lower and place/route every case that ran on the model (``sizes``: every size, or each
    workload's largest or smallest) on the first fabric of ``specs`` that both its versions fit
    and route on, so that a speed-up compares two programs on one fabric; failures go into the
    row."""
    lowered, refused = [], {}        # (workload, version, fabric index) -> why it did not route
    words = max(spec.memory.words if spec.memory else 0 for spec in specs)
    chosen = _chosen_sizes(rows, sizes, words) if sizes != "all" else None
    for row in rows:
        row["on_fabric"] = chosen is None or row["size"] == chosen.get(row["workload"])
        if not row["on_fabric"]:
            continue
        versions = [version for version in VERSIONS if "_run" in row[version]]
        errors = {version: [] for version in versions}
        for index, spec in enumerate(specs):
            tried = {version: _lower_one(row, version, spec, index, refused) for version in versions}
            for version, outcome in tried.items():
                if isinstance(outcome, str):
                    errors[version].append(outcome)
            if versions and all(not isinstance(outcome, str) for outcome in tried.values()):
                for version, (lowering, compiled, seconds) in tried.items():
                    entry = row[version]
                    entry.update(pe_tiles=len(compiled.program.graph.fu_nodes()),
                                 image_words=len(compiled.image), fabric=f"{spec.rows}x{spec.cols}")
                    print(f"{_label(row, version)}: {entry['pe_tiles']} pe tiles on {entry['fabric']}, "
                          f"{entry['image_words']} image words, placed and routed in {seconds:.1f} s",
                          flush=True)
                    lowered.append((row, version, lowering, compiled, index))
                break
            for version, outcome in tried.items():
                if not isinstance(outcome, str):
                    errors[version].append(f"{spec.rows}x{spec.cols}: routed, but the other version did not")
        else:
            for version in versions:
                row[version]["rtl_error"] = "lower/route: " + "; ".join(errors[version])
                print(f"{_label(row, version)}: {row[version]['rtl_error'][:300]}", flush=True)
    return lowered


def _label(row: dict, version: str) -> str:
    label = f"{row['workload']}-{version}-{row['size']}"
    return label + (f"-{row['kind']}" if row["kind"] != "-" else "")


def _lower_one(row: dict, version: str, spec, index: int, refused: dict):
    """(lowering, compiled program, seconds) of one version on one fabric, or why not (a string).
    A version that did not place or route on a fabric is not tried there again at another size
    or kind: the graph is the same, only its counts differ."""
    from ripple_core.lower import compile_lowering, lower_graph

    entry, where = row[version], f"{spec.rows}x{spec.cols}"
    graph, case, result = entry["_run"]
    units, tiles = entry["pes"], spec.rows * spec.cols
    lanes = spec.parameters("pe").lanes
    if isinstance(units, str):                  # _pes: why the graph does not lower
        return f"{where}: {units}"
    if units > FILL * tiles * lanes:            # cannot fit however the lanes pair up
        return f"{where}: {units} PEs, more than {FILL:.0%} of its {tiles} tiles' {tiles * lanes} lanes"
    if (row["workload"], version, index) in refused:
        return f"{where}: not tried, {refused[row['workload'], version, index]}"
    started = time.monotonic()
    try:
        checked = {**_copy(case), "expect": _expect(graph, result)}
        lowering = lower_graph(graph, checked, spec, name=_label(row, version))
        used = len(lowering.program.graph.fu_nodes())
        if used > FILL * tiles:                 # two lanes: the tiles the packing needs
            return f"{where}: {used} pe tiles, more than {FILL:.0%} of its {tiles} tiles"
        compiled = compile_lowering(lowering, spec, seed=SEED)
    except Exception as error:          # does not fit, does not route: the row says so
        failed = {"PlaceError": "place", "RouteError": "route"}.get(type(error).__name__)
        if failed:
            refused[row["workload"], version, index] = f"it did not {failed} there at another size or kind"
        return f"{where}: {type(error).__name__}: {error}"
    return lowering, compiled, time.monotonic() - started


def _rtl_arrays(lowering, reads: dict) -> dict:
    """The arrays read back from the shared memory, as signed 32-bit words."""
    from rsn.program import SHARED_MEMORY

    words, arrays, start = reads.get(SHARED_MEMORY, []), {}, 0
    for array, (_, length) in lowering.shared_arrays.items():
        arrays[array] = [wrap(word) for word in words[start:start + length]]
        start += length
    return arrays


def fabric_verdict(w, version: str, case: dict, lowering, compiled, outputs: dict, firings: dict,
                   reads: dict) -> list[str]:
    """What a fabric run got wrong: the workload's check on the arrays read back from the shared
    memory and the host outputs (by SINK name), then the PEs' firing counters against the golden
    model's."""
    from ripple_core.check import firing_problems

    by_sink = {sink: [wrap(v) for v in outputs.get(port, [])] for sink, port in lowering.outputs.items()}
    problems = list(w.check(version, case, _rtl_arrays(lowering, reads), by_sink))
    return problems + firing_problems(lowering, compiled, firings)


def _preload_words(compiled) -> int:
    """Image words that preload the shared memory: sent before START, so the fabric's cycle
    counter does not include them."""
    from rsn.assemble import shared_memory_packets
    from rsn.program import SHARED_MEMORY

    contents = compiled.program.memories.get(SHARED_MEMORY)
    return len(shared_memory_packets(contents, 8)) if contents else 0


def measure_rtl(rows: list[dict], dry: bool, sizes: str = "all", fabrics=FABRICS, jobs: int = JOBS) -> dict:
    """Lower every case onto the first of ``fabrics`` both its versions route on and (unless
    ``dry``) run each fabric's cases in ``jobs`` simulations of one build, side by side; each run
    is judged by the workload's check on the words read back, plus the fabric's own status
    (faults) and firing counters against the golden model's."""
    from concurrent.futures import ThreadPoolExecutor

    from rsn.fabric_spec import load_fabric

    specs = [load_fabric(path) for path in fabrics]
    lowered = _lower_all(rows, specs, sizes)
    settings = {"sizes": sizes,
                "fabrics": [{"fabric": path.name, "rows": spec.rows, "cols": spec.cols,
                             "queue_depth": spec.queue_depth,
                             "memory": f"{spec.memory.words} words in {spec.memory.banks} banks"}
                            for path, spec in zip(fabrics, specs, strict=True)], "dry": dry}
    if dry or not lowered:
        return settings
    groups = [chunk for index in range(len(specs))
              for chunk in _balanced([item for item in lowered if item[4] == index], jobs) if chunk]
    with ThreadPoolExecutor(max_workers=len(groups)) as pool:
        seconds = list(pool.map(lambda group: _simulate_group(group, rows), groups))
    settings["simulation_seconds"] = [round(s, 1) for s in seconds]
    for row in rows:
        row["rtl_ratios"] = _ratios(row, "compute_cycles")
    return settings


def _balanced(items: list[tuple], jobs: int) -> list[list[tuple]]:
    """``items`` in ``jobs`` lists of about equal golden-model cycles (longest first, each to the
    least loaded list): the simulations of one build run side by side, one per core."""
    chunks, loads = [[] for _ in range(max(1, jobs))], [0] * max(1, jobs)
    for item in sorted(items, key=lambda item: -item[0][item[1]]["cycles"]):
        least = loads.index(min(loads))
        chunks[least].append(item)
        loads[least] += item[0][item[1]]["cycles"]
    return chunks


def _simulate_group(group: list[tuple], rows: list[dict]) -> float:
    """Every case of one fabric in one native simulation; the verdicts go into the rows."""
    from rivulet.sim.fabric_run import run_each_on_rtl
    from rsn.readout import register_reads, split_register_reads

    started = time.monotonic()
    label = f"bench-ripple9-{group[0][3].program.name.split('-')[0]}-{len(group)}"
    results = run_each_on_rtl([item[3] for item in group], profiles=["no_stall"] * len(group),
                              seeds=[SEED] * len(group), case=label, max_cycles=RTL_MAX_CYCLES,
                              extra_reads=[register_reads(item[3]) for item in group],
                              host_words=HOST_MEMORY_WORDS)
    for (row, version, lowering, compiled, _), result in zip(group, results, strict=True):
        entry = row[version]
        if isinstance(result, str):
            entry["rtl_problems"] = [f"the run failed: {result.splitlines()[0]}"]
            continue
        reads = split_register_reads(compiled, result.extra)
        problems = fabric_verdict(workload(row["workload"]), version, entry["_run"][1], lowering, compiled,
                                  result.outputs, result.firings, reads)
        if result.done_cycle is None:
            problems.append("done never rose")
        loaded_after_start = len(compiled.image) - _preload_words(compiled)
        entry.update(rtl_cycles=result.cycles, compute_cycles=result.cycles - loaded_after_start,
                     bank_accesses=sum(result.bank_accesses or []),
                     bank_conflicts=sum(result.bank_conflicts or []), rtl_problems=problems)
    return time.monotonic() - started


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def geomeans(rows: list[dict], ratios: str = "ratios") -> dict:
    """Per workload, the geomean of each ratio over its passing rows; then over the workloads."""
    per = {}
    for row in rows:
        if not (_passed(row["ordered"]) and _passed(row["ripple"])) or not row.get(ratios):
            continue
        if ratios == "rtl_ratios" and not all(_passed(row[v], "rtl_problems") for v in VERSIONS):
            continue
        per.setdefault(row["workload"], []).append(row[ratios])
    workloads = {name: {key: _geomean([r[key] for r in found]) for key, *_ in TARGETS}
                 for name, found in per.items()}
    overall = {key: _geomean([figures[key] for figures in workloads.values()]) for key, *_ in TARGETS} \
        if workloads else {}
    return {"workloads": workloads, "overall": overall}


def _short(value: float, wanted: float, higher: bool) -> str:
    if value is None:
        return "-"
    if (value >= wanted) if higher else (value <= wanted):
        return "met"
    factor = wanted / value if higher else value / wanted
    return f"short by {factor:.2f}x"


def _count(value) -> str:
    return str(value) if isinstance(value, int) else "n/a"


def _pair(row: dict, key: str, fmt=str) -> str:
    cells = []
    for version in VERSIONS:
        value = row[version].get(key)
        cells.append("-" if value is None else fmt(value))
    return " / ".join(cells)


def _verdict(row: dict, problems: str = "problems", error: str = "error") -> str:
    bad = [v for v in VERSIONS if row[v].get(error) or row[v].get(problems)]
    return "ok" if not bad else "**FAIL** (" + ", ".join(bad) + ")"


def _ratio_cells(ratios: dict) -> str:
    if not ratios:
        return "- | - | - | -"
    return (f"{ratios['speedup']:.2f}x | {ratios['ipc_ratio']:.2f} | {ratios['firings_ratio']:.2f} "
            f"| {ratios['size_ratio']:.2f}")


def _provenance(report: dict) -> list[str]:
    """Who wrote the table: the command of one run, or the parts a --combine joined."""
    settings = report["settings"]
    rtl = settings.get("rtl")
    if rtl and rtl.get("parts"):
        files = " ".join(f"bench/results/{part['file']}" for part in rtl["parts"])
        lines = [f"Written by `python -m bench.ripple9 --combine {files}` from these parts:"]
        lines += [f"* {part['file']}: {', '.join(part['workloads'])} (git {part['git_revision']}, "
                  f"measured {part['measured']})" for part in rtl["parts"]]
        absent = [name for name in NAMES if name not in report["present"]]
        if absent:
            lines += ["", f"**Partial**: {len(report['present'])} of {len(NAMES)} workloads. In no part, so "
                      f"left out of every figure and geomean: {', '.join(absent)}."]
        return lines + [""]
    dirty = " (with uncommitted changes)" if settings["git_tracked_changes"] else ""
    return [f"git {settings['git_revision']}{dirty}"
            f", measured {settings['measured']}; written by `python -m bench.ripple9"
            f"{' --sizes small' if settings['small'] else ''}{' --rtl' if rtl and not rtl['dry'] else ''}"
            f"{' --dry' if rtl and rtl['dry'] else ''}`.", ""]


def markdown(report: dict) -> str:
    rows, settings, missing = report["runs"], report["settings"], report["missing"]
    rtl = settings.get("rtl")
    lines = ["# Ripple's nine workloads: ordered dataflow vs Ripple", "", *_provenance(report)]
    if missing:
        lines += [f"**Partial**: {len(report['present'])} of {len(NAMES)} workloads. Not written yet, so "
                  f"left out of every figure and geomean: {', '.join(missing)}.", ""]
    lines += [f"Both versions of each workload (ripple_core/workloads) on the same inputs (seed {SEED}). "
              f"Golden model: slot depth {DEPTH}, memory latency {MEM_LATENCY}, unbounded memory ports. "
              "Static = `graph.static_instructions()`; PEs = operators on a shared-memory fabric (one pe "
              "tile each; SINKs are host ports). Ratios: speed-up = ordered cycles / Ripple cycles, IPC "
              "ratio = Ripple IPC / ordered IPC, firings ratio = Ripple / ordered firings, size ratio = "
              "ordered / Ripple static instructions. Atomics' contention: the ACQUIREs that found "
              "their address held with their inputs ready, and the cycles they waited (an ACQUIRE "
              "also waits for its own site's previous RELEASE). Check: the workload's own check "
              "against its independent reference (numpy, networkx) on the final memory and outputs.", "",
              "| workload | n | kind | static (ord / Rip) | PEs (ord / Rip) | cycles (ord / Rip) "
              "| IPC (ord / Rip) | speed-up | IPC ratio | firings ratio | size ratio | firings (ord / Rip) "
              "| spill words (ord / Rip) | contended acquires (ord / Rip) | lock wait cycles (ord / Rip) "
              "| check |",
              "|---|---:|---|---|---|---|---|---:|---:|---:|---:|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['workload']} | {row['size']} | {row['kind']} | {_pair(row, 'static')} "
                     f"| {_pair(row, 'pes', _count)} | {_pair(row, 'cycles')} "
                     f"| {_pair(row, 'ipc')} | {_ratio_cells(row['ratios'])} | {_pair(row, 'firings')} "
                     f"| {_pair(row, 'spill_traffic')} | {_pair(row, 'contended_acquires')} "
                     f"| {_pair(row, 'lock_wait_cycles')} | {_verdict(row)} |")
    failures = [(row, v) for row in rows for v in VERSIONS if row[v].get("error") or row[v].get("problems")]
    if failures:
        lines += ["", "Failed runs:", ""]
        for row, version in failures:
            what = row[version].get("error") or "; ".join(row[version]["problems"][:3])
            lines.append(f"* {row['workload']} n={row['size']} {row['kind']} {version}: {what}")
    lines += _geomean_lines(report["geomeans"], "golden model")
    if rtl:
        lines += _rtl_lines(report)
    else:
        lines += ["", "Golden model only: the fabric's figures (compute cycles, bank conflicts) come from "
                  "`python -m bench.ripple9 --rtl`, written to ripple9_rtl.md."]
    return "\n".join(lines) + "\n"


def _geomean_lines(figures: dict, where: str) -> list[str]:
    lines = ["", f"## Geomeans ({where})", "",
             "Each workload's geomean over its passing sizes and kinds, then the geomean over the workloads "
             "present, against the Ripple paper's targets.", "",
             "| workload | speed-up | IPC ratio | firings ratio | size ratio |", "|---|---:|---:|---:|---:|"]
    for name, ratios in figures["workloads"].items():
        lines.append(f"| {name} | {_ratio_cells(ratios)} |")
    overall = figures["overall"]
    if not overall:
        return lines + ["", "No workload passed: no geomean."]
    lines.append(f"| **geomean** | {_ratio_cells(overall)} |")
    lines += ["", "| target | geomean | wanted | |", "|---|---:|---:|---|"]
    for key, label, wanted, higher in TARGETS:
        lines.append(f"| {label} | {overall[key]:.2f} | {'>=' if higher else '<='} {wanted} "
                     f"| {_short(overall[key], wanted, higher)} |")
    return lines


def _rtl_lines(report: dict) -> list[str]:
    rtl = report["settings"]["rtl"]
    rows = [row for row in report["runs"] if row.get("on_fabric", True)]
    fabrics = "; ".join(f"{f['fabric']}: {f['rows']}x{f['cols']} pe tiles, queue depth {f['queue_depth']}, "
                        f"shared memory of {f['memory']}" for f in rtl["fabrics"])
    lines = ["", f"## On the fabric ({fabrics})", "",
             "Both versions of each case run on the first fabric they both fit (at most "
             f"{FILL:.0%} of the tiles taken) and route on; `fabric` names it. "
             + {"all": "Every size.", "largest": "Each workload's largest size whose arrays fit the "
                "shared memory (`--rtl-sizes all` runs every size).",
                "smallest": "Each workload's smallest size (`--rtl-sizes smallest`; `largest` runs "
                "the sizes the headline figures are for)."}[rtl.get("sizes", "all")], ""]
    if rtl["dry"]:
        lines += ["Dry run: every case lowered and placed/routed, nothing simulated.", "",
                  "| workload | n | kind | fabric (ord / Rip) | pe tiles (ord / Rip) "
                  "| image words (ord / Rip) | lowered |", "|---|---:|---|---|---|---|---|"]
        for row in rows:
            errors = [f"{v}: {row[v]['rtl_error']}" for v in VERSIONS if row[v].get("rtl_error")]
            lowered = "**FAIL**: " + "; ".join(errors) if errors else "ok"
            lines.append(f"| {row['workload']} | {row['size']} | {row['kind']} | {_pair(row, 'fabric')} "
                         f"| {_pair(row, 'pe_tiles')} | {_pair(row, 'image_words')} | {lowered} |")
        return lines
    seconds = " and ".join(f"{value} s" for value in rtl.get("simulation_seconds", [])) or "-"
    lines += [f"Native tier, the cases of a fabric in simulations of one build side by side ({seconds}), "
              "no host stalls. Cycles with image load = the fabric's counter from START to done, which "
              "includes loading the image words that come after START (the shared memory is preloaded "
              "before START); compute cycles = those less the image words; bank accesses and "
              "conflicts are summed over the 8 banks. Check: the workload's check on the arrays read back, "
              "the PEs' firing counters against the golden model's, and `done`.", "",
              "| workload | n | kind | fabric (ord / Rip) | pe tiles (ord / Rip) "
              "| cycles with image load (ord / Rip) | compute cycles (ord / Rip) | speed-up | IPC ratio "
              "| firings ratio | size ratio | bank accesses (ord / Rip) | bank conflicts (ord / Rip) "
              "| check |",
              "|---|---:|---|---|---|---|---|---:|---:|---:|---:|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['workload']} | {row['size']} | {row['kind']} | {_pair(row, 'fabric')} "
                     f"| {_pair(row, 'pe_tiles')} | {_pair(row, 'rtl_cycles')} "
                     f"| {_pair(row, 'compute_cycles')} | {_ratio_cells(row.get('rtl_ratios', {}))} "
                     f"| {_pair(row, 'bank_accesses')} | {_pair(row, 'bank_conflicts')} "
                     f"| {_verdict(row, 'rtl_problems', 'rtl_error')} |")
    failures = [(row, v) for row in rows for v in VERSIONS
                if row[v].get("rtl_error") or row[v].get("rtl_problems")]
    if failures:
        lines += ["", "Failed fabric runs:", ""]
        for row, version in failures:
            what = row[version].get("rtl_error") or "; ".join(row[version]["rtl_problems"][:3])
            lines.append(f"* {row['workload']} n={row['size']} {row['kind']} {version}: {what}")
    return lines + _geomean_lines(report["rtl_geomeans"], "fabric, compute cycles")


def combine(paths: list[Path], out: str) -> int:
    """One RTL report from parts (``--rtl --only`` runs of different workloads): their rows in
    order, each part's revision, timing and fabrics kept (a row names the fabric both its versions
    ran on), the geomeans over all."""
    parts = [json.loads(path.read_text()) for path in paths]
    if any(not part["settings"].get("rtl") or part["settings"]["rtl"].get("dry") for part in parts):
        raise SystemExit("--combine takes the JSON of --rtl runs (ripple9_rtl_*.json), not model or dry runs")
    # Each row names the fabric both its versions ran on; the table lists every part's fabrics.
    fabrics = list({json.dumps(fabric, sort_keys=True): fabric
                    for part in parts for fabric in part["settings"]["rtl"]["fabrics"]}.values())
    names = [name for part in parts for name in part["present"]]
    if len(set(names)) < len(names):
        raise SystemExit(f"--combine: a workload is in more than one part ({', '.join(names)}); "
                         f"give each once")
    rows = [row for part in parts for row in part["runs"]]
    first = parts[0]["settings"]
    seconds = [value for part in parts for value in part["settings"]["rtl"].get("simulation_seconds", [])]
    made = [{"file": path.name, "workloads": part["present"], "measured": part["settings"]["measured"],
             "git_revision": part["settings"]["git_revision"]}
            for path, part in zip(paths, parts, strict=True)]
    rtl = {**first["rtl"], "fabrics": fabrics, "simulation_seconds": seconds, "parts": made}
    report = {"settings": {**first, "rtl": rtl,
                           "git_tracked_changes": any(p["settings"]["git_tracked_changes"] for p in parts)},
              "present": names, "missing": [], "runs": rows,
              "rtl_geomeans": geomeans(rows, "rtl_ratios"), "geomeans": geomeans(rows)}
    figures, table = write_results(out, "ripple9_rtl", report, markdown(report), indent=1)
    print(f"wrote {figures} and {table}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", choices=("bench", "small"), default="bench",
                        help="each workload's bench sizes (default) or its small test size")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--rtl", action="store_true",
                       help="also run every case on a Verilated fabric (12x12, else 16x16)")
    group.add_argument("--dry", action="store_true",
                       help="lower and place/route every case for the fabric, without simulating")
    parser.add_argument("--rtl-sizes", choices=("largest", "smallest", "all"), default="largest",
                        help="with --rtl or --dry: each workload's largest size that fits the fabric "
                             "(default), "
                             "its smallest, or every size")
    parser.add_argument("--fabric", action="append", type=Path, metavar="TOML",
                        help="with --rtl or --dry: a fabric to try, in the order given (repeat it; default: "
                             "ripple_xl.toml, 12x12 pe tiles of two lanes, then ripple_xxl.toml, 16x16 "
                             "of one lane)")
    parser.add_argument("--jobs", type=int, default=JOBS,
                        help=f"with --rtl: simulations of each fabric side by side (default {JOBS})")
    parser.add_argument("--only", nargs="+", choices=NAMES, help="these workloads only")
    parser.add_argument("--out", default=str(RESULTS), help="results directory")
    parser.add_argument("--combine", nargs="+", type=Path, metavar="JSON",
                        help="write one RTL table (ripple9_rtl) from parts run with --rtl --only, "
                             "recomputing the geomeans; runs nothing")
    arguments = parser.parse_args(argv)
    if arguments.combine:
        return combine(arguments.combine, arguments.out)
    small = arguments.sizes == "small"
    stamp = git_stamp()         # the revision everything is built from: before the run, not after
    found, missing = present()
    if arguments.only:
        found = [name for name in found if name in arguments.only]
    for name in missing:
        print(f"{name}: ripple_core/workloads/{name}.py is not there yet; skipped", flush=True)
    rows = measure_model(found, small)
    settings = {"measured": now(), **stamp, "depth": DEPTH, "mem_latency": MEM_LATENCY, "seed": SEED,
                "small": small, "rtl": None}
    report = {"settings": settings, "present": found, "missing": missing, "runs": rows}
    if arguments.rtl or arguments.dry:
        settings["rtl"] = measure_rtl(rows, dry=arguments.dry, sizes=arguments.rtl_sizes,
                                      fabrics=tuple(arguments.fabric or FABRICS), jobs=arguments.jobs)
        if not arguments.dry:
            report["rtl_geomeans"] = geomeans(rows, "rtl_ratios")
    report["geomeans"] = geomeans(rows)
    for row in rows:
        for version in VERSIONS:
            row[version].pop("_run", None)
    # A part never replaces the whole: the sizes and workloads run go into the name.
    tail = ("_small" if small else "") + ("_" + "_".join(arguments.only) if arguments.only else "")
    name = "ripple9" + ("_rtl" if arguments.rtl else "_dry" if arguments.dry else "")
    if (arguments.rtl or arguments.dry) and arguments.rtl_sizes != "largest":
        name += f"_{arguments.rtl_sizes}"
    name += tail
    figures, table = write_results(arguments.out, name, report, markdown(report), indent=1)
    print(f"wrote {figures} and {table}")
    if arguments.rtl:       # the golden-model half is the plain run's: its table is written too
        model_only = {**report, "settings": {**settings, "rtl": None}}
        model_only.pop("rtl_geomeans", None)
        figures, table = write_results(arguments.out, "ripple9" + tail, model_only,
                                       markdown(model_only), indent=1)
        print(f"wrote {figures} and {table}")
    checks = [("problems", "error")]
    if arguments.rtl or arguments.dry:
        checks.append(("rtl_problems", "rtl_error"))
    failed = any(row[v].get(p) or row[v].get(e) for row in rows for v in VERSIONS for p, e in checks)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
