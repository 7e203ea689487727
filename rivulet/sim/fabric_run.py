"""Run a compiled program on the Verilated fabric, as a host would, and collect what it returns.

The fabric is built once per fabric description (Verilator, via rivulet/sim/verilator.py). The run
sends the image, streams the host inputs with the stall profile's random idle, takes the host
outputs with its random back-pressure, waits for ``done``, then reads every used tile's firing
counter and link beat counters and the global cycle counter through the control plane.

A run that fails (the watchdog fires, the bench sees no progress, a token is wrong) raises
:class:`FabricRunFailure`, which names each failing run, the host inputs it took fewer tokens
from than their streams declare (the usual cause of a hang), the bench's error and the log.
When the watchdog fired, the bench has read every used tile's diagnostic registers before
failing, and the message goes on with the hang report of :mod:`rsn.hang_report`: the lines the
golden model gives for the same hang, so a program bug (both agree) and a hardware bug (they
differ) can be told apart.
"""

import dataclasses
import hashlib
import json
import shutil
from dataclasses import astuple

from rsn.fabric import Fabric
from rsn.hang_report import diagnostic_reads, hang_report, snapshots_from_readback
from rsn.link_fault import FAULT_KINDS, fault_links
from rsn.readout import RtlResult, counter_reads, parse_readback, short_host_inputs, used_tiles

from .native.session import native_design, run_native, simulation_tier
from .run_dirs import keep_runs, new_run_directory
from .streams import stream_ports
from .toolchain import shown_path
from .verilator import CocotbFailure, SimulationFailure, build_design, run_cocotb
from .wave_signals import fabric_signals

__all__ = ["RtlResult", "run_on_rtl", "run_many_on_rtl", "run_each_on_rtl", "counter_reads", "cycle_budget",
           "simulation_speed",
           "FabricRunFailure"]


class FabricRunFailure(SimulationFailure):
    """Runs on the Verilated fabric failed; the message says which, and why, per run.

    ``reports``: run index -> the :class:`rsn.hang_report.HangReport` of each run whose watchdog
    fired (its lines are in the message too)."""

    def __init__(self, message: str, reports=None):
        super().__init__(message)
        self.reports = reports or {}


def _hardware(spec):
    """Failed tiles and links change routes, not hardware: such fabrics share one build."""
    return dataclasses.replace(spec, failed_tiles=frozenset(), failed_links=frozenset())


def _fabric_key(spec) -> str:
    return "fabric-" + hashlib.sha256(repr(_hardware(spec)).encode()).hexdigest()[:12]


MIN_CYCLE_BUDGET = 200_000


def cycle_budget(compiled) -> int:
    """The cycles a run of ``compiled`` may take before it counts as hung, when the caller gives
    no bound: 200,000, or eight cycles per word the host moves (image, inputs and outputs), so
    that a long program (a whole data set in phases) is not cut short. A hang with nothing
    moving is caught earlier, by the fabric's watchdog."""
    words = (len(compiled.image) + sum(len(tokens) for tokens in compiled.program.host_inputs.values())
             + sum(compiled.host_outputs.values()))
    return max(MIN_CYCLE_BUDGET, 8 * words)


def _run_config(compiled, profile: str, seed: int, max_cycles: int | None,
                expect_stall: bool = False, extra_reads=None) -> tuple[dict, list]:
    max_cycles = cycle_budget(compiled) if max_cycles is None else max_cycles
    reads, layout = counter_reads(compiled.spec, used_tiles(compiled))
    extra_words, extra_count = extra_reads or ([], 0)
    diagnostics, diagnostic_layout = diagnostic_reads(compiled.spec, used_tiles(compiled))
    config = {
        "name": compiled.program.name, "image": compiled.image, "reads": reads + list(extra_words),
        "readback_words": sum(count for _, count in layout) + extra_count,
        "host_inputs": compiled.program.host_inputs, "host_outputs": compiled.host_outputs,
        "profile": profile, "seed": seed, "max_cycles": max_cycles, "expect_stall": expect_stall,
        "diagnostic_reads": diagnostics,
        "diagnostic_words": sum(len(addresses) for _, addresses in diagnostic_layout),
    }
    return config, layout


def _result(record: dict, layout) -> RtlResult:
    result = parse_readback(record["outputs"], record["readback"], layout,
                            done_cycle=record["done_cycle"], stalled_cycle=record.get("stalled_cycle"))
    # Words read after the counters (``extra_reads``), e.g. xbar membranes.
    result.extra = record["readback"][sum(count for _, count in layout):]
    result.host_sent = record.get("host_sent")
    # How the simulation went: cycles clocked and seconds spent on this run (either tier), and
    # the per-cycle handshake trace when one was asked for.
    result.sim_cycles, result.sim_seconds = record.get("clocked"), record.get("run_seconds")
    result.trace = record.get("trace")
    result.sim_tier = record.get("tier")
    result.fault_cycle = record.get("fault_cycle")      # a fault-injection run: when the fault acted
    return result


def simulation_speed(result: RtlResult) -> str:
    """How fast the run was simulated, for the command's report: "1,243 cycles at 186,000 cycles/s
    on the native tier"."""
    cycles, seconds = getattr(result, "sim_cycles", None), getattr(result, "sim_seconds", None)
    if not cycles or not seconds:
        return "simulation speed not measured"
    return f"{cycles:,} cycles simulated at {cycles / seconds:,.0f} cycles/s on the {result.sim_tier} tier"


def run_many_on_rtl(compiled_programs, *, profiles, seeds, case: str, max_cycles: int | None = None,
                    expect_stall: bool = False, extra_reads=None, tier: str | None = None,
                    trace: bool = False) -> list[RtlResult]:
    """Run several compiled programs (same fabric) in one simulation, each from reset.

    ``profiles`` and ``seeds`` give each run its stall profile and seed (parallel lists).
    ``max_cycles``: each run's bound (None: its :func:`cycle_budget`).
    ``extra_reads``: per program, (control words, values they read back) sent after the counter
    reads; the values come back as ``result.extra``. Raises :class:`FabricRunFailure` if any run fails.
    """
    compiled_programs = list(compiled_programs)
    records, layouts, failure, directory = _simulate(compiled_programs, profiles, seeds, case, max_cycles,
                                                     expect_stall, extra_reads, tier, trace)
    if failure is not None:
        raise _failure(failure, records, compiled_programs, directory) from None
    return [_result(record, layout) for record, layout in zip(records, layouts, strict=True)]


def run_each_on_rtl(compiled_programs, *, profiles, seeds, case: str, max_cycles: int | None = None,
                    extra_reads=None, tier: str | None = None,
                    host_words: tuple[int, int] | None = None, faults=None) -> list[RtlResult | str]:
    """As :func:`run_many_on_rtl`, but a run that fails does not fail the others: its entry is the
    reason, a string (a differential fuzzer wants every run's verdict from one simulation).
    ``host_words``: the least (input, output) words the native top's host memories hold.
    ``faults``: per program, a link :class:`rsn.faults.Fault` or None, run on a fault-injection
    build of the fabric (native tier; docs/faults.md)."""
    compiled_programs = list(compiled_programs)
    records, layouts, failure, directory = _simulate(compiled_programs, profiles, seeds, case, max_cycles,
                                                     False, extra_reads, tier, host_words=host_words,
                                                     faults=faults)
    by_index = {record["index"]: record for record in records}
    results = []
    for index, layout in enumerate(layouts):
        record = by_index.get(index)
        if record is None:
            results.append(f"the simulation ended before this run reported ({failure}; log: "
                           f"{shown_path(directory / 'sim.log')})")
        elif record.get("error"):
            reason = record["error"]
            if record.get("diagnostics") is not None:
                reason += "\n" + "\n".join(f"  {line}" for line in
                                            _hang_report(compiled_programs[index], record).lines)
            results.append(reason + f"\n(log: {shown_path(directory / 'sim.log')})")
        else:
            results.append(_result(record, layout))
    return results


def _simulate(compiled_programs, profiles, seeds, case, max_cycles, expect_stall, extra_reads,
              tier=None, trace=False, host_words=None, faults=None):
    """One simulation of every run: (records, layouts, the simulation's failure or None, its directory).

    ``tier`` is "native" or "cocotb" (None: :func:`simulation_tier`); ``trace`` keeps each run's
    per-cycle handshake trace (``record["trace"]``)."""
    spec = _hardware(compiled_programs[0].spec)
    assert all(_hardware(compiled.spec) == spec for compiled in compiled_programs), \
        "programs in one simulation must target the same fabric hardware"
    runs, layouts = [], []
    extra_reads = extra_reads or [None] * len(compiled_programs)
    for compiled, profile, seed, extra in zip(compiled_programs, profiles, seeds, extra_reads, strict=True):
        config, layout = _run_config(compiled, profile, seed, max_cycles, expect_stall, extra)
        runs.append(config)
        layouts.append(layout)
    tier = simulation_tier(tier)
    for run, fault in zip(runs, faults or [None] * len(runs), strict=True):
        if fault is not None:
            run["fault"] = _fault_config(spec, fault)
            if tier != "native":
                raise ValueError("faults are injected into the native tier's builds only")
    # The directory is kept when any run fails: the messages point at the log inside.
    directory = new_run_directory(case)
    failure = None
    if tier == "native":
        design = native_design(spec, runs, host_words)
        records = run_native(design, runs, directory, trace=trace)
        failed = [record for record in records if record.get("error")]
        if failed:
            failure = SimulationFailure(f"{len(failed)} of {len(records)} native runs failed "
                                        f"(log: {shown_path(directory / 'sim.log')})")
    else:
        fabric = Fabric(spec)
        ports, _ = stream_ports(fabric)
        built = build_design(_fabric_key(spec), fabric, what=f"the Verilated fabric {spec.rows}x{spec.cols}")
        result_path = directory / "result.jsonl"
        # A file, not the variable itself: the images of many runs exceed an environment string's limit.
        config_path = directory / "runs.json"
        config_path.write_text(json.dumps({"ports": [astuple(port) for port in ports], "runs": runs,
                                           "trace": trace}))
        try:
            run_cocotb(built, "rivulet.sim.tb_fabric", directory,
                       {"RIVULET_FABRIC_RUN": str(config_path), "RIVULET_FABRIC_RESULT": str(result_path)},
                       signals=fabric_signals(spec, ports))
        except CocotbFailure as error:
            failure = error
        records = _records(result_path)
    for record in records:
        record["tier"] = tier
    if failure is None and not keep_runs():
        shutil.rmtree(directory, ignore_errors=True)
    return records, layouts, failure, directory


def _fault_config(spec, fault) -> dict:
    """A link fault as the fault-injection build's ``cfg_fault_*`` values."""
    if fault.side is None:
        raise ValueError(f"{fault}: the RTL takes link faults (stuck, drop, corrupt); a stopped tile is "
                         f"the golden model's only")
    return {"link": fault_links(spec).index((fault.tile, fault.side)) + 1, "kind": FAULT_KINDS[fault.kind],
            "at": fault.at, "bit": fault.bit}


def _records(result_path) -> list[dict]:
    lines = result_path.read_text().splitlines() if result_path.exists() else []
    return sorted((json.loads(line) for line in lines), key=lambda record: record["index"])


def _failure(failure: SimulationFailure, records: list[dict], compiled_programs,
             directory) -> SimulationFailure:
    """The failing runs of ``records``, each with the host inputs it was short of; ``failure``
    itself when no run reported an error (the simulation itself broke)."""
    failed = [record for record in records if record.get("error")]
    if not failed:
        return failure
    lines, reports = [], {}
    for record in failed:
        compiled = compiled_programs[record["index"]]
        program = compiled.program
        given = {port: len(tokens) for port, tokens in program.host_inputs.items()}
        causes = short_host_inputs(program, record.get("host_sent") or {}, given=given) + [record["error"]]
        which = program.name if len(compiled_programs) == 1 else f"run {record['index']} ({program.name})"
        lines.append(f"{which}: " + "; ".join(causes))
        if record.get("diagnostics") is not None:
            reports[record["index"]] = report = _hang_report(compiled, record)
            lines += [f"  {line}" for line in report.lines]
    log = directory / "sim.log"
    return FabricRunFailure("\n".join(lines) + f"\n(log: {shown_path(log)})", reports)


def _hang_report(compiled, record: dict):
    """The hang report of a run whose watchdog fired, from the diagnostic values it read back."""
    _, layout = diagnostic_reads(compiled.spec, used_tiles(compiled))
    snapshots = snapshots_from_readback(compiled.spec, layout, record["diagnostics"])
    sent = record.get("host_sent") or {}
    host = {port: (sent.get(port, 0), len(tokens)) for port, tokens in compiled.program.host_inputs.items()}
    return hang_report(compiled.spec, compiled.routing.switch_uops, compiled.routing.fu_uops, snapshots, host)


def run_on_rtl(compiled, *, profile: str = "random_stall_50", seed: int = 1,
               case: str | None = None, max_cycles: int | None = None, extra_reads=None) -> RtlResult:
    """Run ``compiled`` (an rsn.program.Compiled) on the RTL fabric and return what came back."""
    case = case or f"run-{compiled.program.name}-{profile}-{seed}"
    (result,) = run_many_on_rtl([compiled], profiles=[profile], seeds=[seed], case=case,
                                max_cycles=max_cycles, extra_reads=[extra_reads])
    return result
