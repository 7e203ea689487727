"""``rivulet run``: read an input with its front-end, lower it for the fabric, run the cases on
the golden model and/or the RTL (or a board), judge each run with the case's checker, compare.

One program gets a report per tile (firings, stalls, link beats); a workload of many cases (a
vectors file) one line per case (:mod:`rivulet.case_table`). Every result also goes into a
:class:`~rivulet.report.RunRecord`, which ``--json`` prints.
"""

import time
from pathlib import Path

from rsn.fabric_spec import load_fabric
from rsn.faults import parse_fault
from rsn.model import FabricModel
from rsn.readout import model_register_reads, register_reads, split_register_reads, used_tiles
from rsn.recovery import part_name, run_with_faults

from .case_table import run_table
from .errors import RunMismatch
from .frontends import FrontendError, Options, frontend_for, parse_definitions
from .frontends.protocol import output_problems, read_problems
from .report import RunRecord, run_figures

__all__ = ["run_file", "run_program", "run_with_recovery", "recover_case"]


def run_file(path, *, fabric=None, sim: str = "model", seed: int = 1, profile: str = "random_stall_50",
             say=print, port: str | None = None, baud: int = 115_200, vectors=None,
             definitions=(), record: RunRecord | None = None, mode: str | None = None,
             kernel: str | None = None, report=None, faults=()) -> dict:
    """Run the input file ``path`` on the fabric described by ``fabric`` (default: the front-end's)
    with ``-D`` ``definitions`` (``NAME=VALUE`` strings) and, for a file of language kernels, its
    ``mode`` and ``kernel``; raise :class:`RunMismatch` if a run's
    results differ from the expected ones or from each other. ``record`` collects the results;
    ``report``: a directory for the pictures of the run (:mod:`rivulet.pictures`); ``faults``:
    run-time faults (:mod:`rsn.faults` spellings) injected into the golden model's run."""
    path = Path(path)
    record = record if record is not None else RunRecord(str(path), sim)
    frontend = frontend_for(path)
    for flag, given in (("--mode", mode), ("--kernel", kernel)):
        if given is not None and not getattr(frontend, "kernel_options", False):
            raise FrontendError(f"{flag} does not apply to {path} (a {frontend.name}): it selects how a "
                                f"file of Ripple-language @kernel functions is compiled")
    workload = frontend.load(path, Options(parse_definitions(definitions), vectors, mode, kernel))
    if sim not in workload.sims:
        raise FrontendError(f"--sim {sim}: {path.name} runs with --sim " + ", --sim ".join(workload.sims))
    if sim == "model" and workload.model is not None:
        if faults:
            raise FrontendError(f"--fault injects faults into the fabric, and {path.name} runs on its own "
                                f"golden model with --sim model; it has no fabric run to inject them into")
        if report is not None:
            raise FrontendError(f"--report draws a run on the fabric, and {path.name} runs on its own "
                                f"golden model with --sim model: use --sim rtl or --sim both")
        return {"model": workload.model(say, record)}
    spec = load_fabric(fabric or workload.default_fabric)
    faults = [parse_fault(text, spec) for text in faults]
    cases = workload.lower(spec)
    if faults and workload.one_line_per_case:
        raise FrontendError(f"--fault runs one program; {path.name} runs a table of cases")
    if faults:
        (case,) = cases
        return run_with_recovery(case, spec, faults, seed=seed, say=say, record=record)
    if workload.one_line_per_case:
        return run_table(workload, cases, spec, sim=sim, seed=seed, profile=profile, say=say, record=record,
                         report=report)
    (case,) = cases
    return run_program(case, spec, sim=sim, seed=seed, profile=profile, say=say, port=port, baud=baud,
                       record=record, report=report)


def _report_units(compiled, firings, link_beats, say, stalls=None):
    """One line per used tile; stalls are timing, known only from the RTL."""
    placement = compiled.routing.placement.tiles
    names = {tile: name for name, tile in placement.items() if not compiled.program.graph.nodes[name].is_host}
    say(f"   {'tile':<8} {'node':<14} {'kind':<5} {'firings':>8} {'stalls':>7}   "
        f"link beats (outputs N E S W, FU inputs)")
    for tile in sorted(set(compiled.routing.switch_uops) | set(compiled.routing.fu_uops)):
        beats = " ".join(str(value) for value in link_beats.get(tile, []))
        stall = "-" if stalls is None else str(stalls.get(tile, 0))
        say(f"   {str(list(tile)):<8} {names.get(tile, '-'):<14} {compiled.spec.kind(tile):<5} "
            f"{firings.get(tile, 0):>8} {stall:>7}   {beats}")


def _judge(what: str, case, compiled, result, reads: dict | None, say, entry):
    """The case's checker on one run: raise on any problem, else say what was compared."""
    problems = case.problems + case.check(compiled, result.outputs, result.firings, reads)
    entry.judged([f"{what}: {problem}" for problem in problems])
    if problems:
        raise RunMismatch(f"{what} vs reference: " + "; ".join(problems))
    program = case.program
    if program.expected is not None:
        say("   outputs equal the program's reference")
    if case.passed:
        say(f"   {case.passed}")
    if reads is not None and program.expected_reads:
        say(f"   register reads equal ({sum(map(len, program.expected_reads.values()))} values: "
            f"{', '.join(program.expected_reads)})")


def run_program(case, spec, *, sim: str = "model", seed: int = 1, profile: str = "random_stall_50",
                say=print, port: str | None = None, baud: int = 115_200,
                record: RunRecord | None = None, report=None) -> dict:
    """Compile ``case`` for ``spec``, run it where ``sim`` says, judge and compare the runs;
    with ``report`` (a directory), draw the run there, also when it failed its checks."""
    program = case.program
    entry = (record if record is not None else RunRecord()).case(case.name, case.origin)
    started = time.monotonic()
    compiled = case.compile(program, spec, seed)
    tiles = used_tiles(compiled)
    say(f"{program.name}: {program.description}")
    say(f"   compiled for a {spec.rows}x{spec.cols} fabric in {time.monotonic() - started:.1f} s: "
        f"{len(compiled.image)} image words, {len(compiled.routing.routes)} streams, "
        f"placement {dict(sorted(compiled.routing.placement.tiles.items()))}")
    results = {}
    try:
        return _run_compiled(case, compiled, spec, results, sim=sim, seed=seed, profile=profile, say=say,
                             port=port, baud=baud, entry=entry, tiles=tiles)
    finally:
        if report is not None and results:
            from .pictures import write_run_report
            say(f"   pictures of the run: {write_run_report(report, compiled, results, extra=case.pictures)}")


def _run_compiled(case, compiled, spec, results, *, sim, seed, profile, say, port, baud, entry, tiles):
    program = case.program
    if sim in ("model", "both"):
        fabric_model = FabricModel(spec)
        try:
            model = fabric_model.run(compiled.image, program.host_inputs)
        except case.model_errors as error:
            entry.fail([f"golden model: {error}"])
            raise RunMismatch(f"golden model: {error}") from None
        results["model"] = model
        say(f"== golden model: done={model.done}")
        model.register_values = model_register_reads(fabric_model, compiled)
        entry.runs["model"] = run_figures(model, tiles)
        _judge("golden model", case, compiled, model, model.register_values, say, entry)
        _report_units(compiled, model.firings, model.link_beats, say)
    if sim in ("rtl", "both"):
        from .sim.fabric_run import run_on_rtl, simulation_speed
        from .sim.verilator import SimulationFailure
        say(f"== RTL (Verilator), stall profile {profile}, seed {seed}")
        started = time.monotonic()
        extra = register_reads(compiled) if program.reads else None
        try:
            rtl = run_on_rtl(compiled, profile=profile, seed=seed, extra_reads=extra)
        except SimulationFailure as failure:     # a hang names the host input it waits for
            entry.fail([f"RTL: {failure}"])
            raise RunMismatch(f"RTL: {failure}") from None
        results["rtl"] = rtl
        say(f"   done after {rtl.cycles} fabric cycles ({time.monotonic() - started:.1f} s wall; "
            f"{simulation_speed(rtl)})")
        rtl.register_values = split_register_reads(compiled, getattr(rtl, "extra", []))
        entry.runs["rtl"] = run_figures(rtl, tiles)
        _judge("RTL", case, compiled, rtl, rtl.register_values, say, entry)
        _report_units(compiled, rtl.firings, rtl.link_beats, say, rtl.stalls)
    if sim == "board":
        board = results["rtl"] = _run_on_board(compiled, port, baud, say)
        entry.runs["board"] = run_figures(board, tiles)
        _judge("board", case, compiled, board, None, say, entry)     # a board reads no registers back
        _report_units(compiled, board.firings, board.link_beats, say, board.stalls)
    if "model" in results and "rtl" in results:
        try:
            _compare_runs(results["model"], results["rtl"], spec.data_width, bool(program.expected_reads),
                          say)
        except RunMismatch as mismatch:
            entry.fail([str(mismatch)])
            raise
    return results


def _compare_runs(model, rtl, width: int, with_reads: bool, say):
    """The RTL against the golden model: outputs, register reads, and every tile's counters."""
    problems = (output_problems(rtl.outputs, model.outputs, width)
                + read_problems(rtl.register_values, model.register_values))
    if problems:
        raise RunMismatch("RTL vs golden model: " + "; ".join(problems))
    for tile in rtl.firings:
        if rtl.firings[tile] != model.firings[tile] or rtl.link_beats[tile] != model.link_beats[tile]:
            raise RunMismatch(f"tile {list(tile)}: RTL counters (firings {rtl.firings[tile]}, links "
                              f"{rtl.link_beats[tile]}) differ from the golden model's "
                              f"({model.firings[tile]}, {model.link_beats[tile]})")
    reads = ", register reads" if with_reads else ""
    say(f"== RTL and golden model agree: outputs, firings, link beats{reads}")


def _run_on_board(compiled, port: str, baud: int, say):
    """The same program through the UART host link of a board built by ``rivulet build``."""
    import asyncio

    from board.host import HostLink, SerialTransport

    say(f"== board on {port} at {baud} baud")
    started = time.monotonic()

    async def run():
        with SerialTransport(port, baud) as transport:
            return await HostLink(transport, compiled.spec).run_program(compiled)

    result = asyncio.run(run())
    say(f"   done after {result.cycles} fabric cycles ({time.monotonic() - started:.1f} s wall)")
    return result


def recover_case(case, spec, faults, *, seed: int = 1):
    """:func:`rsn.recovery.run_with_faults` for a front-end's case: its own compile, its own
    check (without register reads) and the model errors that end its run."""
    def check(compiled, result):
        return case.problems + case.check(compiled, result.outputs, result.firings, None)

    return run_with_faults(case.program, spec, faults, check=check, errors=case.model_errors,
                           compile_for=lambda program, fabric: case.compile(program, fabric, seed))


def run_with_recovery(case, spec, faults, *, seed: int = 1, say=print,
                      record: RunRecord | None = None) -> dict:
    """Run ``case`` on the golden model of a fabric with run-time ``faults``, recovering as
    :mod:`rsn.recovery` does, and say each attempt; raise :class:`RunMismatch` if no attempt passed."""
    entry = (record if record is not None else RunRecord()).case(case.name, case.origin)
    say(f"{case.program.name}: {case.program.description}")
    for fault in faults:
        say(f"   fault: {fault.describe()} ({'permanent' if fault.permanent else 'transient'})")

    recovery = recover_case(case, spec, faults, seed=seed)
    for number, attempt in enumerate(recovery.attempts, 1):
        where = ("the same placement" if not attempt.excluded else
                 "a placement without " + ", ".join(part_name(part) for part in attempt.excluded))
        detail = attempt.detail.splitlines()[0] if attempt.detail else ""
        say(f"   attempt {number} on {where}: {attempt.outcome}" + (f" ({detail})" if detail and
                                                                    attempt.outcome != "hung" else ""))
    if not recovery.passed:
        entry.fail([f"not recovered after {len(recovery.attempts)} attempts"])
        raise RunMismatch(f"golden model with faults: not recovered after {len(recovery.attempts)} attempts "
                          f"(no fabric without one suspect part held and ran the program)")
    say(f"== golden model with faults: passed ({recovery.how}; "
        f"{'detected' if recovery.detected else 'not met or harmless'})")
    entry.runs["model"] = run_figures(recovery.result, used_tiles(recovery.compiled))
    _judge("golden model", case, recovery.compiled, recovery.result, None, say, entry)
    return {"model": recovery.result, "recovery": recovery}

