"""Many cases of one workload (a vectors file), one line each: every case on the fabric's golden
model and/or, all in one simulation, on the Verilated fabric, each judged by its own checker.

Case k runs with seed ``seed + k`` under the stall profile ``profile``. A line shows the case's
result, the RTL's cycle counter and image size, and the front-end's own columns; the problems
of a failing case follow it.
"""

from rsn.model import DeadlockError, FabricModel
from rsn.readout import model_register_reads, register_reads, split_register_reads, used_tiles

from .errors import RunMismatch
from .report import RunRecord, run_figures

__all__ = ["run_table"]


def _on_model(case, compiled, spec) -> tuple:
    """The case on the fabric's golden model, judged by its checker: (result or None, problems)."""
    model = FabricModel(spec)
    try:
        result = model.run(compiled.image, case.program.host_inputs)
    except (DeadlockError, *case.model_errors) as error:
        return None, [f"fabric model: {error}"]
    result.register_values = model_register_reads(model, compiled)
    return result, [f"fabric model: {problem}" for problem in
                    case.check(compiled, result.outputs, result.firings, result.register_values)]


def _rtl_results(workload, compiled, *, seed: int, profile: str) -> list:
    from .sim.fabric_run import run_many_on_rtl
    from .sim.verilator import SimulationFailure

    try:
        return run_many_on_rtl(compiled, profiles=[profile] * len(compiled),
                               seeds=[seed + k for k in range(len(compiled))],
                               case=f"rivulet-run-{workload.path.name}-{profile}-{seed}",
                               extra_reads=[register_reads(image) for image in compiled])
    except SimulationFailure as failure:
        raise RunMismatch(f"the RTL simulation failed: {failure}") from None


def _draw_cases(report, cases, compiled, models, results, say):
    from pathlib import Path

    from .pictures import write_run_report
    for k, (case, image, model, rtl) in enumerate(zip(cases, compiled, models, results, strict=True)):
        runs = {name: run for name, run in (("model", model), ("rtl", rtl)) if run is not None}
        if runs:
            write_run_report(Path(report) / f"case-{k}", image, runs, extra=case.pictures)
    say(f"   pictures of the runs: {Path(report) / 'case-K' / 'index.html'} for case K")


def _table(rows: list[list[str]], headers: list[str]):
    """Left-aligned case, origin and result; right-aligned figures; each column as wide as it needs."""
    widths = [max(len(text) for text in column) for column in zip(headers, *rows, strict=True)]
    for line in [headers] + rows:
        cells = [text.ljust(width) if k < 3 else text.rjust(width)
                 for k, (text, width) in enumerate(zip(line, widths, strict=True))]
        yield "   " + " ".join(cells)


def run_table(workload, cases, spec, *, sim: str, seed: int, profile: str, say, record=None,
              report=None) -> dict:
    """Run ``cases`` (lowered for ``spec``); raise :class:`RunMismatch` if any fails. ``record``
    (a :class:`~rivulet.report.RunRecord`) collects each case's results; with ``report`` (a
    directory), case k's run is drawn into ``report/case-k/``."""
    record = record if record is not None else RunRecord()
    compiled = [case.compile(case.program, spec, seed) for case in cases]
    entries = [record.case(case.name, case.origin) for case in cases]
    on_model, on_rtl = sim in ("model", "both"), sim in ("rtl", "both")
    tiles = max(len(image.program.graph.fu_nodes()) for image in compiled)
    say(f"{workload.name} ({workload.path.name}): {len(cases)} cases lowered to a {spec.rows}x{spec.cols} "
        f"fabric ({tiles} FU tiles at most); stall profile {profile}, case k uses seed {seed}+k")
    for note in workload.notes:
        say(f"   {note}")
    problems = [list(case.problems) for case in cases]
    models = [None] * len(cases)
    if on_model:
        for k, (case, image) in enumerate(zip(cases, compiled, strict=True)):
            model, found = _on_model(case, image, spec)
            models[k] = model
            problems[k] += found
            if model is not None:
                entries[k].runs["model"] = run_figures(model, used_tiles(image))
    results = [None] * len(cases)
    if on_rtl:
        say("== RTL (Verilator): one simulation for every case")
        try:
            results = _rtl_results(workload, compiled, seed=seed, profile=profile)
        except RunMismatch as mismatch:
            for entry in entries:
                entry.fail([str(mismatch)])
            raise
    headers, rows, failures = None, [], []
    for k, (case, image, result) in enumerate(zip(cases, compiled, results, strict=True)):
        reads = None
        if result is not None:
            reads = result.register_values = split_register_reads(image, result.extra)
            problems[k] += case.check(image, result.outputs, result.firings, reads)
            entries[k].runs["rtl"] = run_figures(result, used_tiles(image))
        entries[k].judged(problems[k])
        figures = {"RTL cyc": str(result.cycles)} if result is not None else {}
        figures["image"] = str(len(image.image))
        if case.summary is not None:
            figures.update(case.summary(image, reads, problems[k]))
        headers = headers or ["case", "origin", "result", *figures]
        rows.append([str(k), case.origin, "FAIL" if problems[k] else "pass", *figures.values()])
        if problems[k]:
            failures.append(f"case {k}: " + "; ".join(problems[k]))
    if report is not None:
        _draw_cases(report, cases, compiled, models, results, say)
    lines = list(_table(rows, headers))
    say(lines[0])
    for k, line in enumerate(lines[1:]):
        say(line)
        for problem in problems[k]:
            say(f"         {problem}")
    if failures:
        raise RunMismatch(f"{len(failures)} of {len(cases)} cases failed: " + " | ".join(failures))
    where = {(True, True): "the RTL and on the fabric's golden model", (True, False): "the RTL",
             (False, True): "the fabric's golden model"}[on_rtl, on_model]
    say(f"   all {len(cases)} cases pass on {where}")
    return {"rtl" if on_rtl else "model": results}
