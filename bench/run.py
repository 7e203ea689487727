"""Benchmark suites: TokenQueue vs SyncFIFOBuffered, the RSN switch and fabric, and the boards.

``python -m bench.run`` runs every suite; ``--suite token_queue``, ``--suite rsn``,
``--suite boards``, ``--suite crossbar`` or ``--suite memory`` runs one (described in
:mod:`bench.rsn`, :mod:`bench.boards`, :mod:`bench.crossbar` and :mod:`bench.memory`).

Token-queue suite: TokenQueue against Amaranth's SyncFIFOBuffered: LUT/FF/BRAM, Fmax and
throughput. It builds both queues at each depth on every target in the same run (so
both see the same tools, seeds and machine) and writes ``bench/results/token_queue.json`` (raw
figures) and ``bench/results/token_queue.md`` (tables). ``--quick`` builds a small subset on
iCE40 only, with one seed, and writes to ``build/bench/quick/`` so it never overwrites the
recorded results. Fmax is the median over several fixed nextpnr seeds (``--seeds``), because
one seed's Fmax moves by 10-20% between seeds, more than most differences being measured.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.lib.fifo import SyncFIFOBuffered

from hw import TokenQueue

from . import boards, crossbar, fpga, memory, rsn, throughput
from .attribution import lut_attribution
from .common import (
    QUICK_RESULTS,
    RESULTS,
    format_fmax,
    git_stamp,
    now,
    relative_path,
    run_jobs,
    write_results,
)

WIDTH = 32
DEPTHS = (1, 2, 3, 4, 16)  # 3: SyncFIFOBuffered's smallest full-rate depth, for like for like
KINDS = ("token_queue", "sync_fifo_buffered")  # ours, peer
TOKEN_QUEUE_TARGETS = ("ice40-hx8k-ct256", "ecp5-25f")  # named: other suites add targets
TOKEN_QUEUE_SEEDS = "1,2,3,4,5"
SUITES = ("token_queue", "rsn", "boards", "crossbar", "memory")


def make_design(kind: str, depth: int):
    """Return ``(design, ports)``; ports name the peer's interface, including ``level``."""
    if kind == "token_queue":
        return TokenQueue(WIDTH, depth), None
    fifo = SyncFIFOBuffered(width=WIDTH, depth=depth)
    ports = [fifo.w_data, fifo.w_en, fifo.w_rdy, fifo.r_data, fifo.r_en, fifo.r_rdy, fifo.level]
    return fifo, ports


def build_job(kind: str, depth: int, target: str, seeds: tuple[int, ...],
              build_root: str) -> dict:
    """Worker: one synthesis, then place and route per seed (runs in a pool process)."""
    design, ports = make_design(kind, depth)
    started = time.perf_counter()
    result = fpga.build(design, f"{kind}_d{depth}", target, ports=ports, seeds=seeds,
                        build_root=Path(build_root))
    entry = {"kind": kind, "depth": depth, **result.to_dict(),
             "seconds": round(time.perf_counter() - started, 2),
             "lut_attribution": dict(lut_attribution(result.netlist, result.name, target))}
    entry["build_dir"] = relative_path(entry["build_dir"])
    entry["netlist"] = relative_path(entry["netlist"])
    entry["reports"] = [relative_path(report) for report in entry["reports"]]
    return entry


def throughput_job(kind: str, depth: int, cycles: int) -> dict:
    """Worker: one simulation with a greedy source and sink."""
    design, _ = make_design(kind, depth)
    return {"kind": kind, "depth": depth, **throughput.measure(design, cycles=cycles).to_dict()}


def _progress(entry: dict) -> str:
    what = f"{entry['kind']:<18} depth {entry['depth']:>2}"
    if "tokens_per_cycle" in entry:
        return f"sim   {what}: {entry['tokens_per_cycle']:.3f} tokens/cycle"
    return (f"build {entry['target']:<16} {what}: {entry['luts']:>3} LUT {entry['ffs']:>3} FF "
            f"{entry['brams']} BRAM {format_fmax(entry)} MHz ({entry['seconds']:.1f} s)")


def metadata_block(seeds: tuple[int, ...], quick: bool) -> dict:
    """Everything needed to reproduce or question a figure."""
    return {
        "date": now(),
        **git_stamp(),
        "seeds": list(seeds),
        "quick": quick,
        "width": WIDTH,
        **fpga.tool_metadata(),
        "targets": {name: {"family": spec.family, "device_flags": list(spec.device_flags),
                           "package": spec.package, "freq_constraint_mhz": spec.freq_mhz}
                    for name, spec in fpga.TARGETS.items() if name in TOKEN_QUEUE_TARGETS},
    }


def markdown(results: dict) -> str:
    """One table per target plus the like-for-like full-rate comparison and a footer."""
    meta = results["meta"]
    rates = {(e["kind"], e["depth"]): e["tokens_per_cycle"] for e in results["throughput"]}
    lines = ["# TokenQueue vs amaranth.lib.fifo.SyncFIFOBuffered", "",
             f"Width {meta['width']} bits. Ours = `hw.TokenQueue`, peer = `SyncFIFOBuffered`; "
             "ratio = ours / peer (LUT ratio > 1 or Fmax ratio < 1 means TokenQueue is worse). "
             "Depth 3 is there because it is SyncFIFOBuffered's smallest full-rate depth (its "
             "depth 2 moves 0.5 tokens/cycle); compare it with TokenQueue depth 2, as in the line "
             "under each table.",
             ""]
    for target in meta["targets_built"]:
        builds = {(e["kind"], e["depth"]): e for e in results["builds"]
                  if e["target"] == target}
        lines += _target_table(target, builds, rates, meta["depths"])
    lines += _footer(meta, _io_mismatches(results["builds"]))
    return "\n".join(lines) + "\n"


def _target_table(target: str, builds: dict, rates: dict, depths: list[int]) -> list[str]:
    lines = [f"## {target}", "",
             "| depth | LUT ours | LUT peer | LUT ratio | FF ours/peer | BRAM ours/peer "
             "| Fmax ours (MHz) | Fmax peer (MHz) | Fmax ratio | tokens/cycle ours/peer |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for depth in depths:
        ours, peer = builds[(KINDS[0], depth)], builds[(KINDS[1], depth)]
        lines.append(
            f"| {depth} | {ours['luts']} | {peer['luts']} | {_ratio(ours['luts'], peer['luts'])} "
            f"| {ours['ffs']}/{peer['ffs']} | {ours['brams']}/{peer['brams']} "
            f"| {format_fmax(ours)} | {format_fmax(peer)} "
            f"| {_ratio(ours['fmax_mhz'], peer['fmax_mhz'])} "
            f"| {rates[(KINDS[0], depth)]:.2f}/{rates[(KINDS[1], depth)]:.2f} |")
    if (KINDS[0], 2) in builds and (KINDS[1], 3) in builds:
        lines += ["", _full_rate_line(builds[(KINDS[0], 2)], builds[(KINDS[1], 3)])]
    return lines + [""]


def _full_rate_line(ours: dict, peer: dict) -> str:
    return (f"Smallest full-rate queue (TokenQueue depth 2 vs SyncFIFOBuffered depth 3): "
            f"LUT {ours['luts']} vs {peer['luts']} ({_ratio(ours['luts'], peer['luts'])}), "
            f"FF {ours['ffs']} vs {peer['ffs']}, BRAM {ours['brams']} vs {peer['brams']}, "
            f"Fmax {format_fmax(ours)} vs {format_fmax(peer)} MHz "
            f"({_ratio(ours['fmax_mhz'], peer['fmax_mhz'])}).")


def _ratio(ours: float, peer: float) -> str:
    return f"{ours / peer:.2f}" if peer else "n/a"


def _footer(meta: dict, io_mismatches: list[str]) -> list[str]:
    tools = "; ".join(f"{name} {version}" for name, version in meta["packages"].items())
    seeds = meta["seeds"]
    fmax_how = (f"median over nextpnr seeds {', '.join(map(str, seeds))} (min-max in brackets; "
                "ratio of medians)" if len(seeds) > 1 else f"nextpnr seed {seeds[0]}")
    ios = ("IO count identical for ours and peer in every row."
           if not io_mismatches else "IO counts differ: " + ", ".join(io_mismatches) + ".")
    return [
        "Counting: LUT/FF/BRAM from the Yosys netlist nextpnr places (`synth.json`, by cell "
        "type): iCE40 LUT = SB_LUT4 (SB_CARRY not counted: it sits in the LUT's logic cell), "
        "FF = SB_DFF*, BRAM = SB_RAM40_4K; ECP5 LUT = LUT4 + 2 x CCU2C + 4 x TRELLIS_DPR16X4 "
        "(LUT RAM counted as the four LUT4s that store it), FF = TRELLIS_FF, BRAM = DP16KD. "
        "Fmax = nextpnr's achieved reg-to-reg clock frequency from its `--report` JSON, "
        f"{fmax_how}; constraint set above reach with `--timing-allow-fail`; no pin "
        f"constraints. {ios} Throughput = output transfers per cycle over {meta['cycles']} "
        "cycles after warm-up, greedy source and sink, output order checked.",
        "",
        f"git {meta['git_revision']}"
        f"{' (with uncommitted changes)' if meta['git_tracked_changes'] else ''}; "
        f"{meta['date']}; {tools} ({meta['tools']['yosys']}); "
        f"wall time {meta['wall_time_s']:.0f} s with {meta['workers']} workers.",
    ]


def _io_mismatches(builds: list[dict]) -> list[str]:
    """Rows where ours and the peer do not use the same number of IOs (they should)."""
    ios = {(e["target"], e["depth"], e["kind"]): e["ios"] for e in builds}
    return [f"{target} depth {depth}" for (target, depth, kind), count in ios.items()
            if kind == KINDS[0] and ios.get((target, depth, KINDS[1])) != count]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("--suite", choices=("all", *SUITES), default="all",
                        help="which suite to run (default: all of them, one after the other)")
    parser.add_argument("--quick", action="store_true",
                        help="a small subset of each suite, one seed, short simulation "
                             "(token queue: iCE40 only, depths 2 and 3); output in "
                             "build/bench/quick/")
    parser.add_argument("--jobs", type=int, default=2, help="parallel builds (default 2)")
    parser.add_argument("--seeds", default=None,
                        help="nextpnr seeds, comma-separated; Fmax is their median (default "
                             f"{TOKEN_QUEUE_SEEDS} for the token queue; the RSN suite's own "
                             "default is in bench/rsn.py)")
    parser.add_argument("--boards", default=None,
                        help="boards suite: which boards, comma-separated (default: all)")
    parser.add_argument("--memory-part", choices=("all", "pes"), default="all",
                        help="memory suite: 'pes' re-measures only the Per PE rows and keeps the "
                             "recorded network rows (default: all)")
    return parser.parse_args(argv)


@dataclass(frozen=True)
class Plan:
    targets: list[str]
    depths: list[int]
    seeds: tuple[int, ...]
    cycles: int
    out_dir: Path


def plan(args: argparse.Namespace) -> Plan:
    """What this invocation builds and where it writes."""
    if args.quick:
        return Plan(["ice40-hx8k-ct256"], [2, 3], (fpga.DEFAULT_SEED,), 64, QUICK_RESULTS)
    seeds = tuple(int(seed) for seed in (args.seeds or TOKEN_QUEUE_SEEDS).split(","))
    return Plan(list(TOKEN_QUEUE_TARGETS), list(DEPTHS), seeds, 256, RESULTS)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.suite in ("all", "token_queue"):
        run_token_queue(args)
    if args.suite in ("all", "rsn"):
        rsn.run_suite(args)
    if args.suite in ("all", "boards"):
        boards.run_suite(args)
    if args.suite in ("all", "crossbar"):
        crossbar.run_suite(args)
    if args.suite in ("all", "memory"):
        memory.run_suite(args)


def run_token_queue(args: argparse.Namespace) -> None:
    """The token-queue suite: builds, simulations, token_queue.json and token_queue.md."""
    todo = plan(args)
    started = time.perf_counter()
    meta = metadata_block(todo.seeds, args.quick)  # also warms the YoWASP caches up
    build_root = str(fpga.BUILD_ROOT)
    jobs = [(build_job, kind, depth, target, todo.seeds, build_root)
            for target in todo.targets for depth in todo.depths for kind in KINDS]
    jobs += [(throughput_job, kind, depth, todo.cycles) for depth in todo.depths for kind in KINDS]
    done = run_jobs(jobs, args.jobs, _progress)
    meta.update(targets_built=todo.targets, depths=todo.depths, cycles=todo.cycles,
                workers=args.jobs, wall_time_s=round(time.perf_counter() - started, 1))
    results = {"meta": meta,
               "builds": sorted((e for e in done if "target" in e), key=_order),
               "throughput": sorted((e for e in done if "target" not in e), key=_order)}
    figures, _ = write_results(todo.out_dir, "token_queue", results, markdown(results))
    print(markdown(results))
    print(f"wrote {relative_path(figures)} and token_queue.md in {meta['wall_time_s']:.1f} s")


def _order(entry: dict) -> tuple:
    return entry.get("target", ""), entry["depth"], KINDS.index(entry["kind"])


if __name__ == "__main__":
    main()
