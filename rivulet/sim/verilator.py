"""Build generated Verilog with Verilator once per design, and run cocotb benches on it.

Each (design, parameters) gets its own build directory, a sibling of all the others under
``build/sim/`` (nested Verilator build directories link each other's stale objects). A file
lock makes parallel runs (pytest workers, two ``rivulet run``) share one build instead of
racing; the Verilog text is the cache key, so a changed generator always rebuilds. A build says
its phase and time as it goes (:mod:`.progress`), a cached one that it is cached. Each cocotb run
then has a directory of its own (:mod:`.run_dirs`).
"""

import contextlib
import fcntl
import hashlib
import json
import os
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from rsn.unit_instances import convert_sharing_units

from .progress import Progress, say_on_stderr
from .run_dirs import run_directory, safe_name
from .shared_modules import share_identical_modules
from .toolchain import BUILD_ROOT, shown_path, use_tool_environment
from .waves import say_where_waves_went, trace_args, waves_requested
from .wrappers import Clocked

__all__ = ["VerilatedDesign", "build_design", "run_cocotb", "run_directory", "CocotbFailure",
           "OBSERVED_LAYOUT", "SimulationFailure", "waves_requested"]

SIM_ROOT = BUILD_ROOT / "sim"


class SimulationFailure(AssertionError):
    """A simulation (of either tier) failed; the message says what failed and where its log is."""


class CocotbFailure(SimulationFailure):
    """A cocotb bench reported failing tests; the message carries their failure texts, and
    ``tests`` maps each failing test's name to its own (message and traceback)."""

    def __init__(self, message: str, tests: dict[str, str] | None = None):
        super().__init__(message)
        self.tests = tests or {}


@dataclass(frozen=True)
class VerilatedDesign:
    key: str
    build_dir: Path
    toplevel: str = "top"
    # The top's ``observed`` output, (port, width) from bit 0 (rivulet.sim.wrappers.Clocked): the
    # benches read every output at once through it (rivulet.sim.cocotb_loop.DesignPorts).
    observed: tuple = ()


# The environment variable that hands a cocotb bench the layout of the top's ``observed`` port.
OBSERVED_LAYOUT = "RIVULET_OBSERVED_LAYOUT"


# Above this much Verilog (after identical modules are shared), compiling the model with
# optimisation takes longer than the tests then spend simulating it: a cocotb bench's own cost
# per cycle is far above the model's (bench/results/sim_speed.md), so an unoptimised model
# hardly slows it (the 30-tile ripple fabric: its suite test took 10 min with -Os, 5 min with
# -O0, on two idle cores; the 2x2 board top with its UART bridge, 446 kB: 38 s with -Os, 28 s with
# -O0, the run itself 13 s either way). Every fabric and board top of the suite is above it. A
# bench that clocks a large model for long may ask for optimisation instead (``optimise=True``:
# the primitives side by side; docs/simulation-tiers.md).
LARGE_DESIGN_BYTES = 100_000

# cocotb's runner marks every signal public (``--public-flat-rw``), which keeps Verilator from
# optimising across modules and nearly doubles a fabric's C++ and its compile time. The benches
# touch only the top's ports, so the flag is turned back off and a configuration file makes just
# those public.
PUBLIC_TOP_ONLY = ["--no-public-flat-rw"]
PUBLIC_TOP_CONFIG = '`verilator_config\npublic_flat_rw -module "top" -var "*"\n'


def _optimised(verilog_bytes: int, optimise: bool | None) -> bool:
    """Whether a model is compiled with C++ optimisation: as the caller asks, else only a small
    one (``RIVULET_OPTIMISE_COCOTB=1`` optimises every model: the benchmark's fastest cocotb tier)."""
    if os.environ.get("RIVULET_OPTIMISE_COCOTB", "") not in ("", "0"):
        return True
    return verilog_bytes <= LARGE_DESIGN_BYTES if optimise is None else optimise


@contextlib.contextmanager
def _compiler_optimisation(optimised: bool):
    """An unoptimised model's compile, through make's command-line variables."""
    if optimised:
        yield
        return
    previous = os.environ.get("MAKEFLAGS")      # set when the tests run under `make test`
    assignments = "OPT_FAST=-O0 OPT_GLOBAL=-O0"
    if previous and " -- " not in f" {previous} ":
        assignments = f"-- {assignments}"       # after make's own flags, as make writes them
    os.environ["MAKEFLAGS"] = " ".join(filter(None, [previous, assignments]))
    try:
        yield
    finally:
        if previous is None:
            del os.environ["MAKEFLAGS"]
        else:
            os.environ["MAKEFLAGS"] = previous


def build_design(key: str, component, *, wrap: bool = True, what: str | None = None,
                 optimise: bool | None = None, say=say_on_stderr) -> VerilatedDesign:
    """Convert ``component`` (wrapped to have a clock) and build it with Verilator, once.

    ``wrap=False`` converts the component as it is, for a top with its own clock domain and
    plain pins (a board top). ``what`` names the design in the progress lines ``say`` gets: a
    build takes minutes, so its phase and time are said as it goes, and a cached build says so.
    ``optimise``: compile the model with C++ optimisation (None: only a small one,
    :data:`LARGE_DESIGN_BYTES`), for a bench that runs long enough to repay the compile.
    """
    use_tool_environment()
    waves = waves_requested()
    key = safe_name(key) + ("-waves" if waves else "")
    what = what or f"the Verilated model {key}"
    build_dir = SIM_ROOT / key
    SIM_ROOT.mkdir(parents=True, exist_ok=True)
    top = Clocked(component, observe=True) if wrap else component
    with Progress(f"converting {what} to Verilog", quiet_for=10.0, say=say):
        text = convert_sharing_units(top, name="top", emit_src=False)
        text, _, _ = share_identical_modules(text)
    optimised = _optimised(len(text), optimise)
    digest = hashlib.sha256(f"{text}\n// optimised: {optimised}\n".encode()).hexdigest()
    with open(SIM_ROOT / f"{key}.lock", "w") as lock:
        _lock(lock, what, say)
        stamp = build_dir / "built.sha256"
        if stamp.exists() and stamp.read_text() == digest:
            say(f"using the cached build in {shown_path(build_dir)} ({what})")
        else:
            _build(build_dir, text, what, waves, say, optimised)
            stamp.write_text(digest)
    return VerilatedDesign(key, build_dir, observed=getattr(top, "observed_layout", ()))


def _lock(lock, what: str, say):
    """Take the build's lock; say so when another process holds it (it is building the same)."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        with Progress(f"waiting for another process's build of {what}", say=say):
            fcntl.flock(lock, fcntl.LOCK_EX)


def record_build(build_dir: Path, what: str, seconds: float, **phases: float):
    """Leave ``build.json`` beside a fresh build: what it is and how long it took, so that where
    the time of a suite's builds goes can be read from its build directories afterwards."""
    record = {"what": what, "seconds": round(seconds, 1), **{k: round(v, 1) for k, v in phases.items()},
              "verilog_bytes": (build_dir / "top.v").stat().st_size}
    (build_dir / "build.json").write_text(json.dumps(record, indent=1) + "\n")


def _build(build_dir: Path, text: str, what: str, waves: bool, say, optimised: bool):
    """Verilator, then the C++ compile of its model, with a progress line for each phase."""
    from cocotb_tools.runner import get_runner

    build_dir.mkdir(parents=True, exist_ok=True)
    source = build_dir / "top.v"
    source.write_text(text)
    started = os.stat(source).st_mtime
    public = build_dir / "public_top.vlt"
    public.write_text(PUBLIC_TOP_CONFIG)

    def phase() -> str:
        makefile = build_dir / "Vtop.mk"      # what verilator writes last, before make starts
        return ("compiling the C++ model" if makefile.exists() and makefile.stat().st_mtime >= started
                else "verilator")

    with (_compiler_optimisation(optimised),
          Progress(f"building {what}", phase=phase, done=f"built {what} ({shown_path(build_dir)})", say=say)):
        get_runner("verilator").build(
            sources=[source], hdl_toplevel="top", build_dir=build_dir, always=True,
            build_args=["-Wno-fatal", *PUBLIC_TOP_ONLY, str(public), *(trace_args(say) if waves else [])],
            waves=waves, log_file=build_dir / "build.log")
    record_build(build_dir, what, time.time() - started)


def run_cocotb(design: VerilatedDesign, test_module: str, test_dir: Path,
               extra_env: dict[str, str], signals=None) -> Path:
    """Run cocotb module ``test_module`` on ``design``; raise :class:`CocotbFailure` on failure.

    ``test_dir`` is the run's own directory (results, log, waves), from :func:`run_directory`,
    which no other run shares. ``signals``: the groups of the waves' saved signal list
    (:func:`rivulet.sim.wave_signals.fabric_signals`), when waves are asked for.
    """
    from cocotb_tools.runner import get_runner

    if not isinstance(test_dir, Path):
        raise TypeError(f"run_cocotb takes the run's directory (from run_directory), not {test_dir!r}")
    use_tool_environment()
    results = test_dir / "results.xml"
    if design.observed:
        extra_env = {**extra_env, OBSERVED_LAYOUT: json.dumps(design.observed)}
    try:
        get_runner("verilator").test(
            test_module=test_module, hdl_toplevel=design.toplevel, hdl_toplevel_lang="verilog",
            build_dir=design.build_dir, test_dir=test_dir, extra_env=extra_env,
            waves=waves_requested(), results_xml=str(results), log_file=test_dir / "sim.log")
    except SystemExit:
        pass    # under pytest the runner exits on failing tests; results.xml says which
    if waves_requested():
        say_where_waves_went(test_dir, signals=signals)  # of a failed run too: that is when they are wanted
    if not results.exists():
        raise CocotbFailure(f"the simulation produced no results; end of {test_dir / 'sim.log'}:\n"
                            + _tail(test_dir / "sim.log"))
    tests = _failures(results)
    if tests:
        # One line per failing test; the first keeps its traceback.
        lines = [f"{name}: {text if k == 0 else text.splitlines()[0]}"
                 for k, (name, text) in enumerate(tests.items())]
        raise CocotbFailure(f"{len(tests)} cocotb test(s) failed (log: {test_dir / 'sim.log'}):\n"
                            + "\n".join(lines), tests)
    return results


def _failures(results_xml: Path) -> dict[str, str]:
    """Each failing cocotb test's name -> its failure message, then its traceback."""
    cases = list(ElementTree.parse(results_xml).iter("testcase"))
    if not cases:
        return {"(none)": f"no test ran (see {results_xml})"}
    failures = {}
    for case in cases:
        for failure in list(case.iter("failure")) + list(case.iter("error")):
            detail = (failure.text or "").strip()
            message = failure.get("message") or (detail.splitlines()[-1] if detail else "failed")
            text = message + (f"\n{detail}" if detail else "")
            name = case.get("name")
            failures[name] = f"{failures[name]}\n{text}" if name in failures else text
    return failures


def _tail(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
