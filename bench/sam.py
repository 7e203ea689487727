"""SAM graphs on the sparse fabric: cycles against nonzeros, and what each primitive's tile costs.

``python -m bench.sam [--quick] [--part kernels|tiles|all] [--kinds KIND ...]`` writes
bench/results/sam.{json,md}.

* **Kernels.** Every graph the fabric runs (SAM's residual, mattransmul and two vector compression graphs, and
  ours in examples/sam/: SpMV, inner-product and Gustavson SpMM, elementwise add, row sums, row
  scaling) on random integer tensors (``samflow.graph.cli.random_tensors``: every mode ``n`` long,
  the given fraction nonzero), lowered onto examples/fabrics/sparse.toml (the Gustavson SpMM onto
  sparse_gustavson.toml, which has the accumulator's tiles) with its banks made 2,048 words deep,
  and run on the Verilated fabric without stalls, one simulation per fabric. Each output is
  decoded from the writers' host ports and compared with scipy; a wrong one stops the bench.
  Figures: the fabric's cycles from START to done, the nonzeros the inputs hold, and each
  primitive's tokens (its FU's firings) per cycle. The cycles include loading the banks (after
  START, about 2 cycles a word); the table gives that estimate beside them.
* **Tiles.** One interior tile of each sparse kind (switch, queues, micro-op queue and the
  primitive with its banks at the default 256 words), synthesised alone for the ECP5-85F
  (LUT/FF/BRAM from the netlist) and placed and routed in the pin-limited harness of the RSN
  suite (Fmax, one nextpnr seed), beside the RSN's ``alu`` tile built the same way in the same
  run.

SAM's own simulator is not run: it is not published on PyPI, and a pinned install from its
repository could not be made on the machine that measured these figures, so the table has no
column for it (docs/sparse.md, "Not done").
"""

from __future__ import annotations

import argparse
import json
import time
import tomllib
from pathlib import Path

import numpy as np

from rivulet.sim.fabric_run import run_each_on_rtl
from rsn.fabric_spec import parse_fabric
from rsn.fu_kinds import kind_names
from rsn.tile import Tile
from samflow.graph import load_graph
from samflow.graph.cli import REFERENCES, random_tensors
from samflow.graph.lower import compile_lowered, decode_outputs, lower_graph

from . import rsn as rsn_bench
from .common import BUILD_ROOT, QUICK_RESULTS, REPO, RESULTS, git_stamp, now, run_jobs, write_results

__all__ = ["main"]

SAM_GRAPHS = REPO.parent / "shared" / "peer-suites" / "sam" / "graphs"
OUR_GRAPHS = REPO / "examples" / "sam"
KERNELS = {
    "spmv_csr": OUR_GRAPHS, "spmm_inner": OUR_GRAPHS, "mat_elemadd_csr": OUR_GRAPHS,
    "mat_rowsum_csr": OUR_GRAPHS, "mat_rowscale_csr": OUR_GRAPHS, "mat_residual_HAND": SAM_GRAPHS,
    "mat_mattransmul_HAND": SAM_GRAPHS, "vec_ds_compression_HAND": SAM_GRAPHS,
    "vec_sd_compression_HAND": SAM_GRAPHS, "spmm_gustavson": OUR_GRAPHS,
}
# The fabric of each kernel: sparse.toml, but for a graph with a sparse accumulator (as rivulet run
# chooses: rivulet/frontends/sam.py).
KERNEL_FABRICS = {"spmm_gustavson": "sparse_gustavson.toml"}
POINTS = ((64, 0.01), (64, 0.05), (64, 0.1), (64, 0.3), (256, 0.01), (256, 0.03))
QUICK_POINTS = ((16, 0.1), (16, 0.3))
BANK_DEPTH = 2048
SEED = 2026
TILE_TARGET = rsn_bench.FABRIC_TARGET
REFERENCE_KIND = "alu"          # an RSN tile, the same switch and queues around another FU


def bench_fabric(name: str = "sparse.toml"):
    """A fabric of examples/fabrics with every bank BANK_DEPTH words deep."""
    data = tomllib.loads((REPO / "examples" / "fabrics" / name).read_text())
    for kind in ("sam_scan_c", "sam_array"):
        data[kind] = {"depth": BANK_DEPTH}
    return parse_fabric(data, f"{name} with {BANK_DEPTH}-word banks")


def _dense(value):
    return value.toarray() if hasattr(value, "toarray") else np.asarray(value)


def _nonzeros(value) -> int:
    return int(np.count_nonzero(_dense(value)))


def _prepare(points):
    """Per (kernel, n, density): its inputs, fabric, lowering and compiled image, or why it cannot run."""
    cases, fabrics = [], {}
    for kernel, folder in KERNELS.items():
        fabric = KERNEL_FABRICS.get(kernel, "sparse.toml")
        spec = fabrics.setdefault(fabric, bench_fabric(fabric))
        graph = load_graph(folder / f"{kernel}.gv")
        for n, density in points:
            tensors = random_tensors(graph, n, density, SEED)
            case = {"kernel": kernel, "fabric": fabric, "n": n, "density": density, "seed": SEED,
                    "input_nonzeros": sum(_nonzeros(v) for v in tensors.values())}
            try:
                lowered = lower_graph(graph, tensors, spec)
                compiled = compile_lowered(lowered, spec)
            except Exception as error:      # a bank too small, a stream too long for a micro-op: say so
                cases.append({**case, "refused": str(error).replace(f"{REPO}/", "")})
                continue
            loaded = sum(len(words) for words in lowered.program.memories.values())
            cases.append({**case, "tensors": tensors, "lowered": lowered, "compiled": compiled,
                          "bank_words": loaded, "spec": spec})
    return cases


def _figures(case, spec, rtl) -> dict:
    lowered, compiled = case["lowered"], case["compiled"]
    expected = REFERENCES[case["kernel"]](case["tensors"])
    decoded = decode_outputs(lowered, rtl.outputs)
    for name, value in expected.items():
        if not np.array_equal(_dense(decoded[name]), _dense(value)):
            raise AssertionError(f"{case['kernel']} n={case['n']} density={case['density']} seed {SEED}: "
                                 f"{name} from the RTL differs from scipy")
    cycles = rtl.cycles
    primitives = []
    for node, tile in sorted(compiled.routing.placement.tiles.items()):
        if node.startswith("to_"):
            continue
        tokens = rtl.firings.get(tile, 0)
        primitives.append({"node": node, "kind": spec.tiles[tile[0]][tile[1]], "tile": list(tile),
                           "tokens": tokens, "tokens_per_cycle": round(tokens / cycles, 3)})
    busiest = max(primitives, key=lambda p: p["tokens"])
    tokens = sum(p["tokens"] for p in primitives)
    return {"output_nonzeros": sum(_nonzeros(v) for v in expected.values()), "cycles": cycles,
            "bank_load_cycles_estimate": 2 * case["bank_words"],
            "cycles_per_input_nonzero": round(cycles / max(case["input_nonzeros"], 1), 2),
            "tokens": tokens, "tokens_per_cycle": round(tokens / cycles, 3),
            "busiest": busiest["node"], "busiest_tokens_per_cycle": busiest["tokens_per_cycle"],
            "primitives": primitives, "correct": True}


def measure_kernels(points) -> list[dict]:
    cases = _prepare(points)
    for fabric in dict.fromkeys(case["fabric"] for case in cases):
        runnable = [case for case in cases if "refused" not in case and case["fabric"] == fabric]
        print(f"{len(runnable)} kernel runs on the Verilated {fabric} "
              f"({sum('refused' in c for c in cases if c['fabric'] == fabric)} refused by the lowering), "
              f"seed {SEED}", flush=True)
        started = time.perf_counter()
        results = run_each_on_rtl([case["compiled"] for case in runnable],
                                  profiles=["no_stall"] * len(runnable), seeds=[SEED] * len(runnable),
                                  case="bench-sam")
        print(f"simulated in {time.perf_counter() - started:.0f} s", flush=True)
        for case, rtl in zip(runnable, results, strict=True):
            if isinstance(rtl, str):
                raise AssertionError(f"{case['kernel']} n={case['n']} density={case['density']}: {rtl}")
            case.update(_figures(case, case["spec"], rtl))
    kept = ("tensors", "lowered", "compiled", "spec")
    return [{key: value for key, value in case.items() if key not in kept} for case in cases]


def sparse_kinds() -> list[str]:
    return [kind for kind in kind_names() if kind.startswith("sam_")]


def tile_job(kind: str, build_root: str) -> dict:
    """Worker: one interior tile of ``kind`` (a 3x3 grid of it), bare synthesis and harnessed P&R."""
    started = time.perf_counter()
    spec = parse_fabric({"rows": 3, "cols": 3, "tiles": [f"{kind} {kind} {kind}"] * 3},
                        f"3x3 of {kind}")
    name = f"tile_{kind}"
    area = rsn_bench.synthesise_only(Tile(spec, 1, 1), name, TILE_TARGET, Path(build_root))
    placed, fold = rsn_bench.place_in_harness(lambda: Tile(spec, 1, 1), f"{name}_harness", TILE_TARGET,
                                              (1,), Path(build_root))
    return {"kind": kind, "target": TILE_TARGET, "width": spec.data_width,
            "luts": area["luts"], "ffs": area["ffs"], "brams": area["brams"],
            "fmax_mhz": placed.fmax_mhz, "harness_fold": fold,
            "critical_path": rsn_bench.critical_path(Path(placed.reports[0]), Path(placed.netlist)),
            "seconds": round(time.perf_counter() - started, 1)}


def measure_tiles(kinds, workers: int) -> list[dict]:
    build_root = str(BUILD_ROOT / "sam")
    jobs = [(tile_job, kind, build_root) for kind in kinds]
    entries = run_jobs(jobs, workers, lambda e: f"{e['kind']}: {e['luts']} LUT, {e['ffs']} FF, "
                                                f"{e['fmax_mhz']:.1f} MHz ({e['seconds']} s)")
    order = {kind: index for index, kind in enumerate(kinds)}
    return sorted(entries, key=lambda e: order[e["kind"]])


def _kernel_table(kernels) -> list[str]:
    lines = ["| kernel | n | density | input nnz | output nnz | cycles | of which bank load (est.) "
             "| cycles per input nnz | tokens | tokens/cycle (all primitives) | busiest primitive "
             "| its tokens/cycle |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for e in kernels:
        head = f"| {e['kernel']} | {e['n']} | {e['density']} | {e['input_nonzeros']} |"
        if "refused" in e:
            lines.append(f"{head} refused: {e['refused'].splitlines()[0]} ||||||||")
            continue
        lines.append(f"{head} {e['output_nonzeros']} | {e['cycles']} | {e['bank_load_cycles_estimate']} | "
                     f"{e['cycles_per_input_nonzero']} | "
                     f"{e['tokens']} | {e['tokens_per_cycle']} | {e['busiest']} | "
                     f"{e['busiest_tokens_per_cycle']} |")
    return lines


def _primitive_lines(kernels) -> list[str]:
    lines = []
    for e in kernels:
        if "refused" in e or (e["n"], e["density"]) != (64, 0.1):
            continue
        each = ", ".join(f"{p['node']} ({p['kind']}) {p['tokens_per_cycle']}" for p in e["primitives"])
        lines.append(f"- **{e['kernel']}**: {each}")
    return lines


def _tile_table(tiles) -> list[str]:
    reference = next((t for t in tiles if t["kind"] == REFERENCE_KIND), None)
    lines = ["| tile kind | LUT | FF | BRAM | Fmax (MHz) | LUT / alu tile | Fmax / alu tile |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for t in tiles:
        ratio = (f"{t['luts'] / reference['luts']:.2f} | {t['fmax_mhz'] / reference['fmax_mhz']:.2f}"
                 if reference else "- | -")
        lines.append(f"| {t['kind']} | {t['luts']} | {t['ffs']} | {t['brams']} | {t['fmax_mhz']:.1f} "
                     f"| {ratio} |")
    return lines


def _stamp(part: dict) -> str:
    changes = " with uncommitted changes" if part["git"]["git_tracked_changes"] else ""
    return f"git {part['git']['git_revision']}{changes}, measured {part['date']}"


def _later_runs(tiles: dict) -> list[dict]:
    """The ``--kinds`` runs whose rows the tile table holds (one dict in older results)."""
    runs = tiles.get("remeasured", [])
    return [runs] if isinstance(runs, dict) else list(runs)


def merge_tiles(tiles: dict, measured: list[dict], kinds: list[str], stamp: dict) -> dict:
    """The tile part with ``measured`` rows in place of the same kinds' rows, in ``kinds``' order,
    and the run that measured them (``stamp``: git and date) in place of those kinds' earlier
    runs, so that every row keeps the stamp of the run it came from."""
    new = {entry["kind"]: entry for entry in measured}
    kept = [entry for entry in tiles.get("entries", []) if entry["kind"] not in new]
    order = {kind: index for index, kind in enumerate(kinds)}
    entries = sorted(kept + list(new.values()), key=lambda entry: order.get(entry["kind"], len(order)))
    runs = [{**run, "kinds": [kind for kind in run["kinds"] if kind not in new]}
            for run in _later_runs(tiles)]
    runs = [run for run in runs if run["kinds"]] + [{"kinds": list(new), **stamp}]
    return {**tiles, "entries": entries, "remeasured": runs}


def markdown(report: dict) -> str:
    lines = ["# SAM graphs on the sparse fabric", "",
             "Written by `python -m bench.sam` (`--part kernels` or `--part tiles` re-measures one "
             "section and keeps the other); docs/sparse.md says what the figures mean.", ""]
    if "kernels" in report:
        part = report["kernels"]
        lines += ["## Kernels on the Verilated fabric", "", f"{_stamp(part)}.", "",
                  f"examples/fabrics/sparse.toml (5x6; sparse_gustavson.toml, also 5x6, for the Gustavson "
                  f"SpMM, which needs sam_spacc tiles) with {BANK_DEPTH}-word banks, no stalls, inputs from "
                  f"`random_tensors` with seed {SEED}; every output equals scipy's. Cycles: the fabric's "
                  "counter from START to done. The assembler loads a tile's banks after START, so the "
                  "cycles include the load of every scanner's and array's bank through the control "
                  "chain, about 2 cycles per word (the estimate column: 2 x words loaded); the "
                  "compute is roughly the difference. Moving the tiles' preload before START, as the "
                  "shared memory's already is, would take it out of the counter. "
                  "Tokens: the firings of every "
                  "primitive's FU (a scanner's firing is one coordinate or stop out, a joiner's one match "
                  "or stop); the busiest primitive bounds the rate at one token per cycle.", ""]
        lines += _kernel_table(part["entries"])
        lines += ["", "Tokens per cycle of each primitive at n = 64, density 0.1:", ""]
        lines += _primitive_lines(part["entries"])
        lines.append("")
    if "tiles" in report:
        part = report["tiles"]
        later = "".join(f" Rows {', '.join(run['kinds'])}: a later run ({_stamp(run)}; `--kinds`)."
                        for run in _later_runs(part))
        lines += ["## One tile of each sparse kind on the ECP5-85F", "", f"{_stamp(part)}.{later}", "",
                  "An interior tile of a 3x3 grid of the kind (32-bit links, banks at 256 words): "
                  "LUT/FF/BRAM from the synthesised netlist (LUT = LUT4 + 2 x CCU2C + 4 x "
                  "TRELLIS_DPR16X4), Fmax from nextpnr seed 1 in the RSN suite's pin-limited harness. "
                  "The `alu` row is the RSN tile, built the same way in the same run.", ""]
        lines += _tile_table(part["entries"])
        lines.append("")
    lines += ["SAM's own simulator: not run (not on PyPI; no pinned install could be made here), so there is "
              "no column of its cycles.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sam", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="two small points per kernel and two tile kinds; results under build/")
    parser.add_argument("--part", choices=("all", "kernels", "tiles"), default="all")
    parser.add_argument("--workers", type=int, default=2, help="parallel tile builds (default 2)")
    parser.add_argument("--kinds", nargs="+", metavar="KIND",
                        help="re-measure only these tiles (with --part tiles) and keep the others' rows")
    args = parser.parse_args(argv)
    directory = QUICK_RESULTS if args.quick else RESULTS
    previous = directory / "sam.json"
    report = json.loads(previous.read_text()) if previous.exists() else {}
    if args.part in ("all", "kernels"):
        report["kernels"] = {"git": git_stamp(), "date": now(),
                             "entries": measure_kernels(QUICK_POINTS if args.quick else POINTS)}
    if args.part in ("all", "tiles"):
        kinds = ["sam_alu", REFERENCE_KIND] if args.quick else [*sparse_kinds(), REFERENCE_KIND]
        if args.kinds:
            report["tiles"] = merge_tiles(report.get("tiles", {}), measure_tiles(args.kinds, args.workers),
                                          kinds, {"git": git_stamp(), "date": now()})
        else:
            entries = measure_tiles(kinds, args.workers)
            report["tiles"] = {"git": git_stamp(), "date": now(), "entries": entries}
    figures, table = write_results(directory, "sam", report, markdown(report))
    print(f"wrote {table} and {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
