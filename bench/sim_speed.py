"""Simulation speed of the fabric: the cocotb tier, the native tier and the bare model, side by side.

``python -m bench.sim_speed [--quick] [--only FABRIC]`` measures, in one run, for 2x2, 3x3, 4x4 and
8x8 fabrics of mem/mac/alu tiles and the 5x6 and 7x8 ``pe`` fabrics (8x8: no cocotb tier, whose
build and runs alone would take most of the benchmark's time):

* build times: the native build cold (Verilog, Verilator, C++), warm (cached: nothing converted)
  and the cocotb build cold (optimised, -Os, as the cocotb tier at its fastest);
* cycles per second of the same runs on the cocotb tier and the native tier (the MLP and random
  path programs on the mem/mac/alu fabrics; Ripple BFS and random Ripple programs on ``pe``),
  per run (simulation loop only) and end to end (the whole batch, process start included);
* the bare model: the Verilated fabric alone in a C++ loop (bare.cpp), the ceiling;
* on the 7x8 fabric, the native tier with Verilator's ``--threads 2``.

Both tiers run the same programs, profiles and seeds; their outputs and counters are compared
as the tests do. The ratios (native / bare >= 0.5, native / cocotb >= 100) are computed from
figures of this run only. Writes bench/results/sim_speed.json and sim_speed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import time
import zlib

from .common import QUICK_RESULTS, REPO, RESULTS, git_stamp, now, write_results

__all__ = ["main"]

SEED = 2026
SMALL = {
    "2x2": {"rows": 2, "cols": 2, "tiles": ["mem mac", "mem alu"],
            "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                           {"name": "in1", "tile": [1, 0], "side": "W", "direction": "in"},
                           {"name": "out0", "tile": [0, 1], "side": "E", "direction": "out"},
                           {"name": "out1", "tile": [1, 1], "side": "E", "direction": "out"}]},
    "4x4": {"rows": 4, "cols": 4, "tiles": ["mem mac alu mem", "mem mac alu alu", "mem mac alu mac",
                                            "mem mac alu alu"],
            "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                           {"name": "in1", "tile": [1, 0], "side": "W", "direction": "in"},
                           {"name": "out0", "tile": [0, 3], "side": "E", "direction": "out"},
                           {"name": "out1", "tile": [1, 3], "side": "E", "direction": "out"}]},
}
# The largest grid of the build-time figures: built, run on the native tier and as the
# bare model; its cocotb build alone would take most of the benchmark's time.
LARGE = {"rows": 8, "cols": 8, "tiles": ["mem mac alu alu mem mac alu alu"] * 8,
         "host_ports": SMALL["4x4"]["host_ports"][:2]
         + [{"name": "out0", "tile": [0, 7], "side": "E", "direction": "out"},
            {"name": "out1", "tile": [1, 7], "side": "E", "direction": "out"}]}
PE_FABRICS = {"5x6 pe": "examples/fabrics/ripple.toml", "7x8 pe": "examples/fabrics/ripple_bfs.toml"}


def _rsn_workload(spec, name: str, count: int):
    """The MLP (on the 3x3 default fabric) and random path programs that route on ``spec``."""
    from rsn.program import compile_program, load_program
    from rsn.random_programs import random_program

    rng = random.Random(SEED)
    programs = []
    if name == "3x3":
        programs.append(("mlp", compile_program(load_program(REPO / "examples" / "mlp.py"), spec)))
    while len(programs) < count:
        program = random_program(rng.getrandbits(32))
        try:
            programs.append(("random", compile_program(program, spec)))
        except ValueError:
            continue        # does not place or route on this grid
    return programs


def _pe_workload(spec, count: int):
    """Ripple BFS (ordered and Ripple, 64 vertices) and random Ripple programs."""
    from ripple_core.fuzz.differential import NotRunnable, prepare
    from ripple_core.fuzz.generate import GeneratorLimits, random_program
    from ripple_core.lower import compile_lowering, lower_graph
    from ripple_core.programs import bfs_case, ordered_bfs, random_csr, ripple_bfs

    programs = []
    row, col = random_csr(64, 4, SEED)
    if len(col) <= spec.parameters("pe").mem_depth:
        for name, graph in (("bfs-ordered", ordered_bfs()), ("bfs-ripple", ripple_bfs(depth=8))):
            lowering = lower_graph(graph, bfs_case(row, col, ordered=name == "bfs-ordered"), spec,
                                   name=f"speed-{name}")
            programs.append((name, compile_lowering(lowering, spec, seed=SEED)))
    rng = random.Random(SEED)
    while len(programs) < count:
        seed = rng.getrandbits(32)
        try:
            prepared = prepare(random_program(random.Random(seed), GeneratorLimits(10, 28)), spec,
                               name=f"speed_{seed}", seed=seed)
        except NotRunnable:
            continue
        programs.append(("random-ripple", prepared.compiled))
    return programs


# The native tier's figures come from at least this many cycles (the workload repeated with
# other seeds), so that microsecond timers and start-up do not dominate them.
MIN_NATIVE_CYCLES = 300_000


def _tier(programs, tier: str, case: str) -> dict:
    from rivulet.sim.fabric_run import run_many_on_rtl
    from rsn.readout import register_reads

    compiled = [each for _, each in programs]

    def run(repeat):
        batch = compiled * repeat
        started = time.monotonic()
        results = run_many_on_rtl(batch, profiles=["random_stall_50"] * len(batch),
                                  seeds=list(range(1, len(batch) + 1)), case=case, tier=tier,
                                  max_cycles=2_000_000, extra_reads=[register_reads(each) for each in batch])
        return results, time.monotonic() - started

    results, wall = run(1)
    first_pass = sum(result.sim_cycles for result in results)
    if tier == "native" and first_pass < MIN_NATIVE_CYCLES:
        # The first programs of the repeated batch run with the first pass's seeds.
        results, wall = run(-(-MIN_NATIVE_CYCLES // first_pass))
    cycles = sum(result.sim_cycles for result in results)
    seconds = sum(result.sim_seconds for result in results)
    return {"runs": len(results), "cycles": cycles, "loop_seconds": round(seconds, 3),
            "wall_seconds": round(wall, 2), "cycles_per_s": round(cycles / seconds),
            "end_to_end_cycles_per_s": round(cycles / wall),
            "answers": [(result.outputs, result.firings, result.link_beats, result.extra)
                        for result in results]}


def _clean(key: str):
    from rivulet.sim.verilator import SIM_ROOT
    shutil.rmtree(SIM_ROOT / key, ignore_errors=True)


def _native_builds(spec, threads: int = 1) -> dict:
    """Cold and warm native builds of ``spec`` (the usual memories), phase by phase."""
    from rivulet.sim.native.build import build_native
    from rivulet.sim.native.session import IN_DEPTH, OUT_DEPTH, native_key
    from rivulet.sim.native.top import SimTop

    key = native_key(spec) + (f"-threads{threads}" if threads > 1 else "")
    _clean(key)
    started = time.monotonic()
    def top():
        return SimTop(spec, in_depth=IN_DEPTH, out_depth=OUT_DEPTH)

    cold = build_native(native_key(spec), top(), threads=threads)
    cold_seconds = time.monotonic() - started
    started = time.monotonic()
    build_native(native_key(spec), top(), threads=threads)
    warm_seconds = time.monotonic() - started
    verilog = (cold.build_dir / "top.v").stat().st_size
    times = dict(cold.times)
    modules = (times.pop("modules", None), times.pop("modules_shared", None))
    return {"cold_seconds": round(cold_seconds, 1), "warm_seconds": round(warm_seconds, 2),
            "phases": {phase: round(seconds, 1) for phase, seconds in times.items()},
            "verilog_bytes": verilog, "modules": modules[0], "modules_after_sharing": modules[1]}


def _cocotb_build(spec) -> dict:
    from rivulet.sim.fabric_run import _fabric_key
    from rivulet.sim.verilator import build_design
    from rsn.fabric import Fabric

    _clean(_fabric_key(spec))
    started = time.monotonic()
    # The peer at its fastest: an optimised model (the suite builds fabrics unoptimised, for
    # build time), so that the ratio is against the best the cocotb tier does.
    os.environ["RIVULET_OPTIMISE_COCOTB"] = "1"
    try:
        build_design(_fabric_key(spec), Fabric(spec), what=f"the cocotb build {spec.rows}x{spec.cols}")
    finally:
        del os.environ["RIVULET_OPTIMISE_COCOTB"]
    return {"cold_seconds": round(time.monotonic() - started, 1)}


def _bare(spec, cycles: int) -> dict:
    from rivulet.sim.native.build import build_bare
    from rsn.fabric import Fabric

    started = time.monotonic()
    key = f"bare-{spec.rows}x{spec.cols}-{zlib.crc32(repr(spec).encode()):08x}"
    _clean(key)
    executable, times = build_bare(key, Fabric(spec), what=f"the bare model {spec.rows}x{spec.cols}")
    build = time.monotonic() - started
    done = subprocess.run([str(executable), str(cycles)], capture_output=True, text=True, check=True)
    clocked, microseconds = map(int, done.stdout.split())
    return {"cycles": clocked, "seconds": microseconds / 1e6,
            "cycles_per_s": round(clocked / (microseconds / 1e6)),
            "build_seconds": round(build, 1), "phases": {k: round(v, 1) for k, v in times.items()}}


def measure_fabric(name: str, spec, programs, *, cocotb: bool = True, threads: bool = False) -> dict:
    entry = {"fabric": name, "rows": spec.rows, "cols": spec.cols,
             "workload": sorted({kind for kind, _ in programs})}
    entry["native_build"] = _native_builds(spec)
    entry["native"] = _tier(programs, "native", f"speed-{name}-native")
    answers = entry["native"].pop("answers")
    if cocotb:
        entry["cocotb_build"] = _cocotb_build(spec)
        # The cocotb tier runs at most a few programs on large fabrics: it takes minutes per run.
        subset = programs if spec.rows * spec.cols <= 16 else programs[:2]
        entry["cocotb"] = _tier(subset, "cocotb", f"speed-{name}-cocotb")
        entry["tiers_agree"] = entry["cocotb"].pop("answers") == answers[:len(subset)]
    entry["bare"] = _bare(spec, max(MIN_NATIVE_CYCLES, entry["native"]["cycles"]))
    entry["native_over_bare"] = round(entry["native"]["cycles_per_s"] / entry["bare"]["cycles_per_s"], 2)
    if cocotb:
        entry["native_over_cocotb"] = round(
            entry["native"]["cycles_per_s"] / entry["cocotb"]["cycles_per_s"], 1)
        entry["native_over_cocotb_end_to_end"] = round(
            entry["native"]["end_to_end_cycles_per_s"] / entry["cocotb"]["end_to_end_cycles_per_s"], 1)
    if threads:
        from rivulet.sim.native import session
        entry["threads2_build"] = _native_builds(spec, threads=2)
        session.THREADS = 2
        try:
            entry["threads2"] = _tier(programs, "native", f"speed-{name}-threads2")
            entry["threads2"].pop("answers")
        finally:
            session.THREADS = 1
    return entry


FABRICS = ("2x2", "3x3", "4x4", "5x6 pe", "7x8 pe", "8x8")


def measure(names=FABRICS, quick: bool = False) -> dict:
    from rsn.fabric_spec import default_fabric, load_fabric, parse_fabric

    fabrics = []
    for name in names:
        if name in PE_FABRICS:
            spec = load_fabric(REPO / PE_FABRICS[name])
            entry = measure_fabric(name, spec, _pe_workload(spec, 6), threads=name == "7x8 pe")
        else:
            spec = (default_fabric() if name == "3x3" else
                    parse_fabric(LARGE if name == "8x8" else SMALL[name], name))
            entry = measure_fabric(name, spec, _rsn_workload(spec, name, 4 if quick else 12),
                                   cocotb=name != "8x8")
        fabrics.append(entry)
        print(_line(entry), flush=True)
    return {"measured": now(), **git_stamp(), "seed": SEED, "profile": "random_stall_50", "fabrics": fabrics}


def _line(entry: dict) -> str:
    cocotb = entry.get("cocotb", {}).get("cycles_per_s", "-")
    return (f"{entry['fabric']}: native {entry['native']['cycles_per_s']:,} cycles/s, "
            f"cocotb {cocotb} cycles/s, bare {entry['bare']['cycles_per_s']:,} cycles/s")


def _without(partial_runs: list[dict], fabrics: list[str]) -> list[dict]:
    """Earlier ``--only`` runs' stamps, less the fabrics measured again (a run left with none goes)."""
    kept = [{**run, "fabrics": [name for name in run["fabrics"] if name not in fabrics]}
            for run in partial_runs]
    return [run for run in kept if run["fabrics"]]


def markdown(results: dict) -> str:
    lines = [
        "# Simulation speed: cocotb tier, native tier, bare model",
        "",
        f"Measured {results['measured']} at {results['git_revision']} (`python -m bench.sim_speed`), "
        f"stall profile {results['profile']}, one run of every figure below, 2 cores.",
        "",
        "cycles/s per run count the simulation loop only (for the native tier: from reset to the end "
        "of the run in the C++ driver; for the cocotb tier: the bench's loop); end to end counts "
        "the whole batch, process start and loading included. The bare model is the Verilated fabric "
        "alone in a C++ loop, inputs at zero.",
        "",
        *[f"Rows of {', '.join(run['fabrics'])}: measured {run['measured']} at {run['git_revision']} "
          f"(`--only`).\n" for run in results.get("partial_runs", [])],
        *(["Rows measured at different times may come from different machines: compare the tiers "
           "within a row.\n"] if results.get("partial_runs") else []),
        "| fabric | workload | runs | cycles | cocotb cycles/s | native cycles/s | bare cycles/s "
        "| native / bare | native / cocotb | end to end: cocotb / native cycles/s | tiers agree |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for entry in results["fabrics"]:
        cocotb = entry.get("cocotb")
        loop = f"{cocotb['cycles_per_s']:,} ({cocotb['runs']} runs)" if cocotb else "not run"
        end_to_end = f"{cocotb['end_to_end_cycles_per_s']:,}" if cocotb else "-"
        agree = ("yes" if entry["tiers_agree"] else "NO") if cocotb else "-"
        lines.append(
            f"| {entry['fabric']} | {', '.join(entry['workload'])} | {entry['native']['runs']} "
            f"| {entry['native']['cycles']:,} | {loop} "
            f"| {entry['native']['cycles_per_s']:,} | {entry['bare']['cycles_per_s']:,} "
            f"| {entry['native_over_bare']} | {entry.get('native_over_cocotb', '-')} "
            f"| {end_to_end} / {entry['native']['end_to_end_cycles_per_s']:,} | {agree} |")
    lines += ["", "## Build times (seconds, cold unless said)", "",
              "| fabric | Verilog bytes | modules (shared) | native: Verilog / Verilator / C++ | native cold "
              "| native warm | cocotb cold | bare cold |",
              "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for entry in results["fabrics"]:
        build, phases = entry["native_build"], entry["native_build"]["phases"]
        lines.append(
            f"| {entry['fabric']} | {build['verilog_bytes']:,} | {build['modules']} "
            f"({build['modules_after_sharing']}) | {phases.get('verilog', '-')} / "
            f"{phases.get('verilator', '-'):.1f} / {phases.get('c++', '-'):.1f} | {build['cold_seconds']} "
            f"| {build['warm_seconds']} | {entry.get('cocotb_build', {}).get('cold_seconds', '-')} "
            f"| {entry['bare']['build_seconds']} |")
    threaded = [entry for entry in results["fabrics"] if "threads2" in entry]
    if threaded:
        lines += ["", "## Verilator threads", ""]
        for entry in threaded:
            lines.append(f"- {entry['fabric']}: `--threads 2` runs at {entry['threads2']['cycles_per_s']:,} "
                         f"cycles/s against {entry['native']['cycles_per_s']:,} single-threaded "
                         f"(build {entry['threads2_build']['cold_seconds']} s cold).")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the 2x2 fabric only, into build/bench/quick/")
    parser.add_argument("--only", action="append", choices=FABRICS, metavar="FABRIC",
                        help="measure only this fabric (repeatable) and replace its rows in the recorded "
                             f"results; one of: {', '.join(FABRICS)}")
    arguments = parser.parse_args(argv)
    if arguments.quick:
        results = measure(["2x2"], quick=True)
    elif arguments.only:
        results = json.loads((RESULTS / "sim_speed.json").read_text())
        fresh = measure(arguments.only)
        kept = [entry for entry in results["fabrics"] if entry["fabric"] not in arguments.only]
        order = {name: index for index, name in enumerate(FABRICS)}
        results["fabrics"] = sorted(kept + fresh["fabrics"], key=lambda entry: order[entry["fabric"]])
        results["partial_runs"] = _without(results.get("partial_runs", []), arguments.only) + [
            {k: fresh[k] for k in ("measured", "git_revision")} | {"fabrics": arguments.only}]
    else:
        results = measure()
    directory = QUICK_RESULTS if arguments.quick else RESULTS
    figures, table = write_results(directory, "sim_speed", results, markdown(results))
    print(f"wrote {figures} and {table}")


if __name__ == "__main__":
    main()
