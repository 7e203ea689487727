"""Build a simulation top and its C++ driver into one Verilator executable, once per design.

As for the cocotb tier's builds (:mod:`rivulet.sim.verilator`), each design has a directory of
its own under ``build/sim/``, a file lock lets parallel runs share one build, and the Verilog
text (with the driver's source) is the cache key. The build calls ``verilator --build``
directly: no VPI and no public signals, so the model is what Verilator makes of the design alone.

Build time goes to three phases, each said with its time: converting the design to Verilog
(Amaranth; identical modules are then shared, :mod:`rivulet.sim.shared_modules`), Verilator
itself, and the C++ compile (``make -j``, over the files Verilator splits
the model into), at :data:`OPTIMISATION`.
"""

import hashlib
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rivulet.sim.progress import Progress, say_on_stderr
from rivulet.sim.run_dirs import safe_name
from rivulet.sim.shared_modules import share_identical_modules
from rivulet.sim.toolchain import shown_path, use_tool_environment
from rivulet.sim.verilator import SIM_ROOT, _lock, record_build
from rsn.unit_instances import convert_sharing_units

from .top import SimTop

__all__ = ["NativeDesign", "build_native", "build_bare", "generator_digest", "OPTIMISATION",
           "design_header"]

DRIVER = Path(__file__).with_name("driver.cpp")
BARE = Path(__file__).with_name("bare.cpp")
# The model's C++ optimisation. -O1 against Verilator's default -Os, measured on two idle cores:
# the 3x3 fabric compiles in 13 s instead of 21 s and runs 10% faster (234,000 against 214,000
# cycles/s); the 5x6 pe fabric compiles in 35 s instead of 55 s.
OPTIMISATION = "-O1"
# Verilator's "slow" files hold code that runs once (construction, the initial settle): half the
# C++ of a fabric. Compiled unoptimised, as Verilator's own makefile does by default, they cost the
# run nothing and cut the 5x6 pe fabric's C++ compile by a fifth (measured on two loaded cores).
SLOW_OPTIMISATION = "-O0"

# Amaranth writes every word of a memory's initial contents into the Verilog, zeros included; the
# fabric's banks start at zero in Verilator anyway, so those lines (one C++ function) are dropped.
# The top's host memories are a module of our own without contents (host_memory.py).
_ZERO_INIT = re.compile(r"^  initial begin\n(?:    \\?[\w$.]+ ?\[\d+\] = \d+'d0;\n)+  end\n", re.MULTILINE)


@dataclass(frozen=True)
class NativeDesign:
    """A built native executable, and the top it was built from."""
    key: str
    build_dir: Path
    top: SimTop = field(compare=False)
    times: dict = field(compare=False, default_factory=dict)    # phase -> seconds (a fresh build)

    @property
    def executable(self) -> Path:
        return self.build_dir / "obj" / "driver"


def design_header(top: SimTop) -> str:
    """design.h: the driver's table of the top's config, status and trace ports."""
    lines = ["// Generated from rivulet/sim/native/top.py for one design: the driver's port table.",
             "#pragma once", f"#define CONFIG_COUNT {len(top.config)}",
             f"#define STATUS_COUNT {len(top.status)}",
             f"#define TRACE_WORDS {top.trace_words}", f"#define SINK_COUNT {len(top.sinks)}",
             f"#define CONFIG_MAX_CYCLES {top.config.index('cfg_max_cycles')}",
             "static inline void set_config(Vtop& t, int i, uint64_t v) {", "    switch (i) {"]
    lines += [f"    case {i}: t.{name} = v; break;" for i, name in enumerate(top.config)]
    lines += ["    }", "}", "static inline uint64_t get_status(Vtop& t, int i) {", "    switch (i) {"]
    lines += [f"    case {i}: return t.{name};" for i, name in enumerate(top.status)]
    lines += ["    }", "    return 0;", "}", "static inline uint32_t get_trace(Vtop& t, int w) {",
              "    switch (w) {"]
    lines += [f"    case {w}: return t.trace_{w};" for w in range(top.trace_words)]
    lines += ["    }", "    return 0;", "}"]
    bases = ", ".join(str(top.config.index(f"cfg_snk{sink.number}_base")) for sink in top.sinks)
    counts = ", ".join(str(top.status.index(f"st_snk{sink.number}_count")) for sink in top.sinks)
    lines += [f"static const int SINK_BASE[] = {{{bases}}};",
              f"static const int SINK_COUNT_STATUS[] = {{{counts}}};"]
    return "\n".join(lines) + "\n"


def generator_digest(top: SimTop, threads: int = 1) -> str:
    """A digest of everything the top's Verilog follows from, without generating it: the fabric
    description, the memories' depths, Amaranth's version and the source of every package that
    generates the hardware (rsn, hw, the packages of the FU kinds the fabric uses, this one).
    Equal digests mean equal Verilog, so a cached build is used without converting the design
    (which takes seconds to minutes); a different digest converts, and rebuilds only if the
    Verilog itself changed."""
    import amaranth

    from rsn.fu_kinds import fu_kind

    spec = top.spec
    kinds = {spec.kind(tile) for tile in spec.all_tiles()}
    packages = {"rsn", "hw"} | {fu_kind(kind).rtl.__module__.split(".")[0] for kind in kinds}
    directories = [Path(sys.modules[package].__file__).parent for package in sorted(packages)]
    # A fabric component other than the generated one (a test's) is generated by its own module.
    fabric_module = sys.modules[type(top.fabric).__module__]
    digest = hashlib.sha256(repr((amaranth.__version__, spec, top.in_depth, top.out_depth, threads,
                                  type(top.fabric).__qualname__)).encode())
    digest.update(Path(fabric_module.__file__).read_bytes())
    digest.update(Path(share_identical_modules.__code__.co_filename).read_bytes())
    for directory in [*directories, Path(__file__).parent]:
        for path in sorted(directory.rglob("*")):
            if path.suffix in (".py", ".cpp") and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(directory)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def build_native(key: str, top: SimTop, *, what: str | None = None, threads: int = 1,
                 say=say_on_stderr) -> NativeDesign:
    """Convert ``top`` and build it with the driver, unless the same build exists already."""
    use_tool_environment()
    key = safe_name(key) + (f"-threads{threads}" if threads > 1 else "")
    what = what or f"the native model {key}"
    build_dir = SIM_ROOT / key
    SIM_ROOT.mkdir(parents=True, exist_ok=True)
    times = {}
    sources = generator_digest(top, threads)
    with open(SIM_ROOT / f"{key}.lock", "w") as lock:
        _lock(lock, what, say)
        executable = build_dir / "obj" / "driver"
        source_stamp, stamp = build_dir / "sources.sha256", build_dir / "built.sha256"
        if _reads(source_stamp) == sources and executable.exists():
            say(f"using the cached build in {shown_path(build_dir)} ({what})")
            return NativeDesign(key, build_dir, top, times)
        started = time.monotonic()
        with Progress(f"converting {what} to Verilog", quiet_for=10.0, say=say):
            text = _ZERO_INIT.sub("", convert_sharing_units(top, name="top", emit_src=False))
            text, modules, shared = share_identical_modules(text)
            text += top.memory_verilog      # the host memories' modules (host_memory.py)
        times["verilog"] = time.monotonic() - started
        times["modules"], times["modules_shared"] = modules, shared
        header = design_header(top)
        digest = hashlib.sha256("\0".join([text, header, DRIVER.read_text(), str(threads)]).encode())
        digest = digest.hexdigest()
        if _reads(stamp) == digest and executable.exists():
            say(f"using the cached build in {shown_path(build_dir)} ({what}: the same Verilog)")
        else:
            source_stamp.unlink(missing_ok=True)
            times |= _build(build_dir, text, header, threads, what, say)
            stamp.write_text(digest)
        source_stamp.write_text(sources)
    return NativeDesign(key, build_dir, top, times)


def build_bare(key: str, component, *, what: str, say=say_on_stderr) -> tuple[Path, dict]:
    """The fabric alone (its inputs and reset held in registers, as the native top holds them)
    with ``bare.cpp``: (its executable, phase times). For the benchmark's ceiling only; always a
    fresh build."""
    from rivulet.sim.wrappers import Held

    use_tool_environment()
    build_dir = SIM_ROOT / safe_name(key)
    started = time.monotonic()
    text = convert_sharing_units(Held(component), name="top", emit_src=False)
    text, _, _ = share_identical_modules(text)
    times = {"verilog": time.monotonic() - started}
    times |= _build(build_dir, text, None, 1, what, say, driver=BARE)
    return build_dir / "obj" / "driver", times


def _reads(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


def _build(build_dir: Path, text: str, header: str | None, threads: int, what: str, say,
           driver: Path = DRIVER) -> dict:
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / "top.v").write_text(text)
    if header is not None:
        (build_dir / "design.h").write_text(header)
    (build_dir / "driver.cpp").write_text(driver.read_text())
    optimisation = OPTIMISATION
    jobs = str(max(1, os.cpu_count() or 1))
    command = [
        "verilator", "--cc", "--exe", "--build", "-j", jobs, "-Wno-fatal", "--top-module", "top",
        "--Mdir", "obj", "-o", "driver", "-CFLAGS", f"-I{build_dir}",
        *(["--threads", str(threads)] if threads > 1 else []),
        "top.v", "driver.cpp",
    ]
    # Make variables reach the model's makefile through MAKEFLAGS (Verilator's --build runs make).
    environment = dict(os.environ)
    environment["MAKEFLAGS"] = " ".join(filter(None, [environment.get("MAKEFLAGS", ""),
                                                      f"OPT_FAST={optimisation} OPT_SLOW={SLOW_OPTIMISATION} "
                                                      f"OPT_GLOBAL={optimisation}"]))
    log = build_dir / "build.log"
    times = {}
    started = time.time()       # compared with file times below

    def phase() -> str:
        makefile = build_dir / "obj" / "Vtop.mk"
        return ("compiling the C++ model" if makefile.exists() and makefile.stat().st_mtime >= started
                else "verilator")

    with (Progress(f"building {what}", phase=phase, done=f"built {what} ({shown_path(build_dir)})", say=say),
          open(log, "w") as output):
        process = subprocess.run(command, cwd=build_dir, stdout=output, stderr=subprocess.STDOUT,
                                 env=environment)
    makefile = build_dir / "obj" / "Vtop.mk"
    if makefile.exists():
        times["verilator"] = makefile.stat().st_mtime - started
        times["c++"] = time.time() - makefile.stat().st_mtime
    if process.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise RuntimeError(f"the native build of {what} failed (log: {shown_path(log)}):\n{tail}")
    record_build(build_dir, what, time.time() - started, **times)
    return times
