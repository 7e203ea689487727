"""Boards: the largest default fabric that fits each board, its Fmax, and the LUTs of each tile kind.

``python -m bench.run --suite boards`` writes ``bench/results/boards.json`` and ``boards.md``.

* **Tile kinds**: one interior tile of each kind (switch, FU, token queues, micro-op queues and
  expanders, counters), synthesised alone at 32 bits for iCE40 and ECP5: what a tile costs.
* **Largest fabric per board**: grids of the default tile mix (each row "mem mac alu" repeated
  or cut to the column count), default depths, one host port in and one out, with the UART host
  bridge and board top, as ``rivulet build`` makes them. Grids are tried in growing order and
  synthesised until the netlist exceeds the part; the largest that passes synthesis is placed
  and routed with the board's pins and clock (if placement overflows, the next smaller one).
  On iCE40, where even small grids are large for the part, narrower data widths are tried too.
"""

from __future__ import annotations

import time

from amaranth.back import verilog

from board import flow
from board.boards import BOARDS
from rsn.fabric_spec import parse_fabric
from rsn.fu_kinds import kind_names
from rsn.tile import Tile

from . import fpga
from .common import BUILD_ROOT, QUICK_RESULTS, RESULTS, git_stamp, now, relative_path, write_results

__all__ = ["run_suite", "markdown", "default_mix"]

BUILD = BUILD_ROOT / "boards"
# Grids in growing tile count; each board starts where smaller grids are known to fit.
GRIDS = ((1, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (4, 5), (5, 5), (5, 6), (6, 6))
SEARCH = {  # board -> (widths to try, first grid)
    "icebreaker": ((32, 16, 8), (1, 1)),
    "ulx3s-25f": ((32,), (2, 2)),
    "ulx3s-85f": ((32,), (4, 4)),
}
QUICK_SEARCH = {"icebreaker": ((16,), (1, 1))}
# A grid near the part's size can keep nextpnr's router busy for hours (the 85F at 5x5 had not
# converged after an hour): past this, the grid counts as not placeable and the next smaller one
# is tried.
PLACE_TIME_LIMIT_S = 45 * 60


# The RSN program mix, cycled along each row (the xbar and pe kinds serve other front-ends and
# have their own fabrics).
DEFAULT_MIX = ("mem", "mac", "alu")


def default_mix(rows: int, cols: int, width: int):
    """The default tile mix on a rows x cols grid, in W of (0,0) and out E of the last tile."""
    row = " ".join(DEFAULT_MIX[col % len(DEFAULT_MIX)] for col in range(cols))
    return parse_fabric({
        "rows": rows, "cols": cols, "tiles": [row] * rows, "data_width": width,
        "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                       {"name": "out0", "tile": [rows - 1, cols - 1], "side": "E", "direction": "out"}],
    }, f"bench {rows}x{cols} w{width}")


def tile_costs(log=print) -> list[dict]:
    """Each tile kind alone (an interior tile of a 3x3 grid of that kind), on each family."""
    entries = []
    for kind in kind_names():
        spec = parse_fabric({"rows": 3, "cols": 3, "tiles": [f"{kind} {kind} {kind}"] * 3})
        for board_name in ("icebreaker", "ulx3s-85f"):
            board = BOARDS[board_name]
            directory = BUILD / "tiles" / f"{kind}_{board.family}"
            directory.mkdir(parents=True, exist_ok=True)
            # Standalone: no board top, so write the tile's own Verilog under the name "top".
            (directory / "top.v").write_text(verilog.convert(Tile(spec, 1, 1), name="top", emit_src=False))
            started = time.perf_counter()
            resources = flow.synthesise(board, directory, log=lambda line: None)
            entries.append({"kind": kind, "family": board.family, "width": spec.data_width, **resources,
                            "seconds": round(time.perf_counter() - started, 1)})
            log(f"tile {kind:<4} {board.family:<6} {resources}")
    return entries


def largest_fabric(board_name: str, widths, first, log=print) -> list[dict]:
    """Fit search and final build for one board; one entry per width tried."""
    board = BOARDS[board_name]
    entries = []
    for width in widths:
        grids = list(GRIDS[GRIDS.index(first):])
        fitting = []
        tried = []
        for rows, cols in grids:
            directory = BUILD / board.name / f"{rows}x{cols}_w{width}"
            directory.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            flow.write_top(board, default_mix(rows, cols, width), directory)
            resources = flow.synthesise(board, directory, log=lambda line: None)
            fits = all(used <= board.capacity[name] for name, used in resources.items())
            tried.append({"grid": [rows, cols], "fits_synthesis": fits, **resources,
                          "seconds": round(time.perf_counter() - started, 1)})
            log(f"{board.name} w{width} {rows}x{cols}: {resources} {'fits' if fits else 'too large'}")
            if not fits:
                break
            fitting.append((rows, cols, directory, resources))
        entry = {"board": board.name, "width": width, "synthesised": tried, "placed": None}
        while fitting:
            rows, cols, directory, resources = fitting.pop()
            started = time.perf_counter()
            try:
                report = flow.build_bitstream(board, default_mix(rows, cols, width),
                                              fabric_name=f"{rows}x{cols} w{width}", directory=directory,
                                              allow_timing_fail=True, synthesised=resources, log=log,
                                              time_limit_s=PLACE_TIME_LIMIT_S)
            except (flow.FitError, flow.ToolFailedError) as error:
                tried.append({"grid": [rows, cols], "fits_placement": False, "error": str(error)})
                continue
            entry["placed"] = {
                "grid": [rows, cols], "tiles": rows * cols, **resources, "placed": report.placed,
                "fmax_mhz": round(report.fmax_mhz, 2), "clock_mhz": report.target_mhz,
                "meets_timing": report.meets_timing, "directory": relative_path(directory),
                "seconds": round(time.perf_counter() - started, 1)}
            break
        entries.append(entry)
        if entry["placed"] and entry["placed"]["grid"] != [1, 1]:
            break          # a wider fabric already fits more than one tile: narrower is not needed
        if entry["placed"] and width == widths[-1]:
            break
    return entries


def run_suite(args) -> dict:
    started = time.perf_counter()
    quick = getattr(args, "quick", False)
    search = QUICK_SEARCH if quick else SEARCH
    boards = [name.strip() for name in (getattr(args, "boards", None) or ",".join(search)).split(",")]
    stamp = git_stamp()
    meta = {"date": now(), "git": stamp["git_revision"], "dirty": stamp["git_tracked_changes"],
            **fpga.tool_metadata(), "quick": quick}
    results = {"meta": meta, "tiles": [] if quick else tile_costs(),
               "boards": [entry for name in boards for entry in largest_fabric(name, *search[name])]}
    meta["wall_time_s"] = round(time.perf_counter() - started, 1)
    out_dir = QUICK_RESULTS if quick else RESULTS
    figures, _ = write_results(out_dir, "boards", results, markdown(results))
    print(markdown(results))
    print(f"wrote {relative_path(figures)} and boards.md in {meta['wall_time_s']:.0f} s")
    return results


def markdown(results: dict) -> str:
    meta = results["meta"]
    lines = ["# Boards: the largest default fabric per board, and what a tile costs", "",
             f"git {meta['git']}{' (uncommitted changes)' if meta.get('dirty') else ''}, {meta['date']}; "
             "regenerate with `python -m bench.run --suite boards`.", "",
             "## Largest default fabric that fits each board", "",
             "Default tile mix (rows of `mem mac alu`), default depths, with the UART host bridge and "
             "board top. LUT/FF/BRAM/DSP from the synthesised netlist; Fmax from nextpnr on the "
             "board's pins, against the board's clock.", "",
             "| board | width | grid | tiles | LUT | FF | BRAM | DSP | Fmax | board clock |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for entry in results["boards"]:
        board = BOARDS[entry["board"]]
        placed = entry["placed"]
        if placed is None:
            synthesised = any(tried.get("fits_synthesis") for tried in entry["synthesised"])
            what = "not placed and routed (see below)" if synthesised else "none fits"
            lines.append(f"| {entry['board']} | {entry['width']} | {what} | | | | | | | |")
            continue
        cap = board.capacity
        lines.append(
            f"| {entry['board']} | {entry['width']} | {placed['grid'][0]}x{placed['grid'][1]} | "
            f"{placed['tiles']} | {placed['LUT']} ({100 * placed['LUT'] / cap['LUT']:.0f}%) | "
            f"{placed['FF']} | {placed['BRAM']} | {placed['DSP']} | {placed['fmax_mhz']:.1f} MHz | "
            f"{placed['clock_mhz']:.0f} MHz{'' if placed['meets_timing'] else ' (missed)'} |")
    lines += ["", "Fit search: synthesis in growing order until a grid exceeds the part, then placement "
              "from the largest down:", ""]
    for entry in results["boards"]:
        steps = []
        for tried in entry["synthesised"]:
            grid = f"{tried['grid'][0]}x{tried['grid'][1]}"
            if "error" in tried:
                steps.append(f"{grid} placement: {tried['error']}")
            else:
                too_large = "" if tried["fits_synthesis"] else " (too large)"
                steps.append(f"{grid} {tried['LUT']} LUT{too_large}")
        lines.append(f"- {entry['board']} at {entry['width']} bits: " + "; ".join(steps))
    for note in results["meta"].get("notes", []):
        lines += ["", note]
    if results["tiles"]:
        lines += ["", "## One tile of each kind, 32 bits, synthesised alone", "",
                  "| kind | family | LUT | FF | BRAM | DSP |", "|---|---|---:|---:|---:|---:|"]
        for tile in results["tiles"]:
            lines.append(f"| {tile['kind']} | {tile['family']} | {tile['LUT']} | {tile['FF']} | "
                         f"{tile['BRAM']} | {tile['DSP']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":      # the suite's options (targets, seeds, workers) live in bench.run
    raise SystemExit("run this suite with: python -m bench.run --suite boards")
