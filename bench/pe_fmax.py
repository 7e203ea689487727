"""The pe tile's clock against the RSN fabric's: one interior tile of each on the ECP5-85F.

``python -m bench.pe_fmax`` builds an interior ``pe`` tile (examples/fabrics/ripple.toml's
``[pe]`` parameters, queue depth 2) in each queue mode (``registered`` and ``bypass``), and with
two operators per tile (``[pe] lanes = 2``, registered), and an
interior tile of each kind of the RSN bench's default fabric mix (``mem``, ``mac``, ``alu``;
bench/rsn.py's ``FABRIC_TILE_MIX``, default queue depth 4, ``registered``), as
bench/queue_bypass.py builds its tiles: LUT/FF from the synthesised bare tile, Fmax from nextpnr
(the median over seeds 1-3) with the tile (a 3x3 grid of its kind, tile (1,1)) in the RSN bench's
pin-limited harness, and the critical path of the first seed.

The reference, "the fabric's clock", is the slowest of the default mix's tiles: a fabric runs on
one clock, so it is the slowest tile that sets it, and every tile of the mix is measured in the
same run and the same harness as the pe tile. The pe/reference ratio is the issue's figure
(target: at least 0.9).

The pe tile's figures are kept under a label: ``--label after`` (the default) for the PE as it
is now, ``--label before`` for the PE before its operator decode was registered (measured at
that revision; the revision is recorded with the figures). A run replaces its own label's
figures and keeps the others, so ``make bench`` re-measures the present PE and the reference
and keeps the recorded "before". Writes bench/results/pe_fmax.json and pe_fmax.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

from rivulet.frontends.riptide import RIPPLE_FABRIC
from rsn.fabric_spec import load_fabric, parse_fabric
from rsn.tile import Tile

from . import rsn as rsn_bench
from .common import BUILD_ROOT, RESULTS, git_stamp, now, run_jobs, write_results

__all__ = ["tile_spec", "tile_job", "measure", "markdown", "main"]

TARGET = rsn_bench.FABRIC_TARGET
PE_VARIANTS = (("registered", 1), ("bypass", 1), ("registered", 2))     # (queue mode, [pe] lanes)
REFERENCE_KINDS = rsn_bench.FABRIC_TILE_MIX
TARGET_RATIO = 0.9
COMMAND = "python -m bench.pe_fmax"


def tile_spec(kind: str, mode: str, lanes: int = 1):
    """A 3x3 grid of ``kind`` in queue ``mode``: ripple.toml's queue depth and [pe] table for
    ``pe`` (with ``lanes`` operators per tile), the defaults for the other kinds."""
    if kind == "pe":
        ripple = load_fabric(RIPPLE_FABRIC)
        return parse_fabric({"rows": 3, "cols": 3, "tiles": ["pe pe pe"] * 3, "queue_mode": mode,
                             "queue_depth": ripple.queue_depth,
                             "pe": {**dataclasses.asdict(ripple.parameters("pe")), "lanes": lanes}},
                            f"3x3 of pe, {mode}, {lanes} lane(s)")
    return parse_fabric({"rows": 3, "cols": 3, "tiles": [f"{kind} {kind} {kind}"] * 3, "queue_mode": mode},
                        f"3x3 of {kind}, {mode}")


def tile_job(kind: str, mode: str, seeds: tuple[int, ...], build_root: str, lanes: int = 1) -> dict:
    """Worker: the interior tile of a 3x3 grid of ``kind``: bare synthesis for LUT/FF, harnessed
    place and route for Fmax."""
    started = time.perf_counter()
    spec = tile_spec(kind, mode, lanes)
    name = f"tile_{kind}_{mode}" + ("" if lanes == 1 else f"_lanes{lanes}")
    area = rsn_bench.synthesise_only(Tile(spec, 1, 1), name, TARGET, Path(build_root))
    placed, fold = rsn_bench.place_in_harness(lambda: Tile(spec, 1, 1), f"{name}_harness", TARGET,
                                              seeds, Path(build_root))
    path = rsn_bench.critical_path(Path(placed.reports[0]), Path(placed.netlist))
    return {"kind": kind, "mode": mode, "lanes": lanes, "queue_depth": spec.queue_depth, "target": TARGET,
            "luts": area["luts"], "ffs": area["ffs"], "brams": area["brams"],
            "mults": area["cells"].get("MULT18X18D", 0), "fmax_mhz": placed.fmax_mhz,
            "fmax_per_seed": placed.fmax_per_seed, "seeds": list(seeds), "harness_fold": fold,
            "critical_path": path, "seconds": round(time.perf_counter() - started, 1)}


def measure(label: str, reference: bool, workers: int, seeds: tuple[int, ...]) -> dict:
    """The pe tile in both modes under ``label`` (and the reference tiles with ``reference``)."""
    build_root = str(BUILD_ROOT / "pe_fmax" / label)
    jobs = [(tile_job, "pe", mode, seeds, build_root, lanes) for mode, lanes in PE_VARIANTS]
    if reference:
        jobs += [(tile_job, kind, "registered", seeds, build_root) for kind in REFERENCE_KINDS]
    stamp = {**git_stamp(), "date": now()}
    done = run_jobs(jobs, workers, lambda e: f"{e['kind']} {e['mode']}: {e['luts']} LUT, {e['ffs']} FF, "
                                             f"{e['fmax_mhz']:.1f} MHz ({e['seconds']} s)")
    order = {(job[1], job[2], job[5] if len(job) > 5 else 1): n for n, job in enumerate(jobs)}
    done.sort(key=lambda e: order[e["kind"], e["mode"], e.get("lanes", 1)])
    measured = {label: {"pe": [e for e in done if e["kind"] == "pe"], **stamp}}
    if reference:
        measured["reference"] = {"tiles": [e for e in done if e["kind"] != "pe"], **stamp}
    return measured


# --------------------------------------------------------------------------------------------
# The tables


def reference_tile(report: dict) -> dict | None:
    """The slowest tile of the default mix: the fabric's clock."""
    tiles = report.get("reference", {}).get("tiles", [])
    return min(tiles, key=lambda e: e["fmax_mhz"]) if tiles else None


def _revision(stamp: dict) -> str:
    return stamp["git_revision"] + (" with uncommitted changes" if stamp["git_tracked_changes"] else "")


def _row(label: str, entry: dict, reference: dict | None) -> str:
    ratio = f"{entry['fmax_mhz'] / reference['fmax_mhz']:.2f}" if reference and entry["kind"] == "pe" else "-"
    mode = entry["mode"] + ("" if entry.get("lanes", 1) == 1 else f", {entry['lanes']} lanes")
    return (f"| {label} | {entry['kind']} | {entry['queue_depth']} | {mode} | {entry['luts']} | "
            f"{entry['ffs']} | {entry.get('mults', '-')} | {entry['fmax_mhz']:.1f} | "
            f"{' / '.join(format(f, '.1f') for f in entry['fmax_per_seed'])} | {ratio} | "
            f"{rsn_bench._path_summary(entry['critical_path'])} |")


def _path_lines(label: str, entry: dict) -> list[str]:
    path = entry["critical_path"]
    if not path:
        return []
    sources = sorted({source for net in path["nets"] for source in net["src"]})
    lanes = "" if entry.get("lanes", 1) == 1 else f", {entry['lanes']} lanes"
    return [f"- **{label}, {entry['kind']} {entry['mode']}{lanes}**: {path['delay_ns']:.2f} ns = "
            f"{path['logic_ns']:.2f} logic + {path['routing_ns']:.2f} routing, {path['logic_steps']} logic "
            f"steps, from `{path['from_cell']}` ({', '.join(path['from_src']) or 'no src'}) to "
            f"`{path['to_cell']}.{path['to_port']}`; nets from {', '.join(sources) or 'no src'}."]


def markdown(report: dict) -> str:
    reference = reference_tile(report)
    lines = ["# The pe tile's Fmax against the fabric's", "",
             f"Written by `{COMMAND}`; bench/pe_fmax.py says how each figure is taken. One interior tile "
             f"(tile (1,1) of a 3x3 grid of its kind) on the {TARGET}: LUT/FF/MULT18 from the synthesised "
             "bare tile, Fmax from nextpnr (median over the seeds) with the tile in the RSN bench's "
             "pin-limited harness (bench/rsn.py).", ""]
    if reference:
        lines += [f"Reference (the fabric's clock): the slowest tile of the RSN bench's default mix "
                  f"({', '.join(REFERENCE_KINDS)}), here **{reference['kind']} at "
                  f"{reference['fmax_mhz']:.1f} MHz**. A fabric has one clock, so its slowest tile kind "
                  f"sets it; pe / reference is the issue's figure (target: at least {TARGET_RATIO}).", ""]
    lines += ["| PE | tile | queue depth | mode | LUT | FF | MULT18 | Fmax (MHz), median | per seed | "
              "pe / reference | critical path (first seed) |",
              "|---|---|---:|---|---:|---:|---:|---:|---|---:|---|"]
    labelled = [(label, report[label]) for label in ("before", "after") if label in report]
    for label, part in labelled:
        lines += [_row(label, entry, reference) for entry in part["pe"]]
    if "reference" in report:
        lines += [_row("-", entry, None) for entry in report["reference"]["tiles"]]
    lines += ["", "Measured at:", ""]
    lines += [f"- {label}: git {_revision(part)}, {part['date']}" for label, part in labelled]
    if "reference" in report:
        stamp = report["reference"]
        lines.append(f"- reference tiles: git {_revision(stamp)}, {stamp['date']}")
    lines += ["", "Critical paths (cells as nextpnr names them; Amaranth source lines from the `src` "
              "attributes Yosys keeps):", ""]
    for label, part in labelled:
        for entry in part["pe"]:
            lines += _path_lines(label, entry)
    for entry in report.get("reference", {}).get("tiles", []):
        lines += _path_lines("reference", entry)
    notes = report.get("notes")
    if notes:
        lines += ["", "## What limits the pe tile now", "", *notes]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("--label", choices=("before", "after"), default="after",
                        help="which PE the figures are of (see the module docstring)")
    parser.add_argument("--no-reference", action="store_true",
                        help="measure only the pe tile, keep the recorded reference tiles")
    parser.add_argument("--workers", type=int, default=1, help="place-and-route jobs at once")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3],
                        help="nextpnr seeds per tile (Fmax: their median)")
    parser.add_argument("--notes", type=Path, default=None,
                        help="a Markdown file whose text becomes the analysis section (kept in the JSON)")
    parser.add_argument("--rewrite", action="store_true",
                        help="measure nothing: rewrite pe_fmax.md (and the notes) from the recorded JSON")
    args = parser.parse_args(argv)
    measured = {} if args.rewrite else measure(args.label, not args.no_reference, args.workers,
                                                tuple(args.seeds))
    previous = RESULTS / "pe_fmax.json"
    report = {**(json.loads(previous.read_text()) if previous.exists() else {}), **measured}
    if args.notes is not None:
        report["notes"] = args.notes.read_text().strip().splitlines()
    figures, table = write_results(RESULTS, "pe_fmax", report, markdown(report), indent=1)
    print(markdown(report))
    print(f"wrote {figures} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
