"""The conformance runner: every case of every vector file, on the golden model and/or the RTL.

``rivulet conform DIR [--sim model|rtl|both]`` calls :func:`main`. A case passes when every output
stream equals the recorded one token for token (and ``memory_out`` where the case has it);
a case of a primitive without a model or RTL here, or one that needs SAM's own cycle timing,
is *unsupported*, with the reason.
"""

import math
from collections import Counter
from dataclasses import dataclass

from .models import MODELS, ModelError
from .skip import HINTS, HintedScan, arrivals_from_schedule, scan_with_hints
from .suite import Case, SuiteError, VectorFile, load_directory
from .tokens import is_data, is_stop

__all__ = ["Outcome", "SIMS", "run_model", "has_hints", "hinted_scan",
           "model_outcome", "conform", "format_table", "main", "SuiteError"]


@dataclass
class Outcome:
    file: str
    primitive: str
    case: str
    sim: str
    status: str          # passed / failed / unsupported
    detail: str = ""
    cycles: int = 0      # RTL: cycles until the last expected token, summed over the runs


def _same(recorded, produced) -> bool:
    if len(recorded) != len(produced):
        return False
    for a, b in zip(recorded, produced, strict=True):
        if isinstance(a, float) or isinstance(b, float):
            if not (isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b)):
                return False
        elif a != b or type(a) is not type(b):
            return False
    return True


def timing_reason(primitive: str, case: Case) -> str | None:
    """Why a schedule-dependent case cannot run on a timing-free model, or None if it can."""
    if not case.schedule_dependent:
        return None
    if has_hints(primitive, case):
        return None     # modelled in SAM's timing on the recorded schedule (samflow.skip)
    if primitive == "repeat":
        cycles = {port: next((c for c, ports in enumerate(case.schedule) if port in ports), None)
                  for port in ("in_ref", "in_repsig")}
        if cycles["in_repsig"] is not None and (cycles["in_ref"] is None
                                                or cycles["in_ref"] > cycles["in_repsig"]):
            return "the schedule gives a repeat signal before the first reference (SAM falls out of step)"
        return None     # references lead: the output does not depend on the schedule (README)
    if primitive in ("crd_hold", "flatten"):
        return _outer_leads(case, primitive)
    return "schedule-dependent in SAM's timing; not modelled"


def _outer_leads(case: Case, primitive: str) -> str | None:
    """SAM's CrdHold and Flatten need the outer coordinate of each inner fiber queued by the time
    the fiber's first inner token arrives; a schedule that keeps to this gives the timing-free
    output (a sufficient condition: SAM takes a token no earlier than it arrives)."""
    arrivals = {port: [c for c, ports in enumerate(case.schedule) for p in ports if p == port]
                for port in ("in_outer_crd", "in_inner_crd")}
    outer_tokens, inner_tokens = case.inputs["in_outer_crd"], case.inputs["in_inner_crd"]
    outer_crds = [arrivals["in_outer_crd"][k] for k, t in enumerate(outer_tokens) if is_data(t)]
    fiber_starts, starting = [], True
    for k, token in enumerate(inner_tokens):
        if token == "D":
            break
        if starting:
            fiber_starts.append(arrivals["in_inner_crd"][k])
        starting = is_stop(token)
    if primitive == "flatten":
        late = [n for n, (crd, start) in enumerate(zip(outer_crds, fiber_starts, strict=False))
                if crd > start]
    else:
        late = [0] if outer_crds and fiber_starts and outer_crds[0] > fiber_starts[0] else []
    if late:
        return (f"the schedule gives the outer coordinate of inner fiber {late[0]} after the fiber's first "
                f"token (SAM loses inner tokens then)")
    return None


def _memory_setup(case: Case) -> dict:
    memory = dict(case.memory)
    for method, arguments, _keywords in case.setup:
        if method == "resize":
            memory["init_arr"] = [0] * arguments[0]
        else:
            raise SuiteError(f"{case.where()}: set-up call {method!r} is not known; only 'resize' is")
    return memory


def has_hints(primitive: str, case: Case) -> bool:
    """A compressed scanner's case that feeds its skip input."""
    return primitive == "rd_scan_compressed" and bool(case.inputs.get(HINTS))


def hinted_scan(case: Case) -> HintedScan:
    """A hinted scan in SAM's timing: on the case's recorded schedule, or fed as the suite feeds
    a case without one (a token per port per cycle)."""
    arrivals = None
    if case.schedule:
        arrivals = {port: arrivals_from_schedule(case.schedule, port) for port in ("in_ref", HINTS)}
    return scan_with_hints(case.memory, case.inputs, arrivals)


def run_model(primitive: str, case: Case):
    """The golden model's (outputs, memory_out) for one case."""
    if has_hints(primitive, case):
        return hinted_scan(case).outputs, {}
    return MODELS[primitive](case.params, _memory_setup(case), case.inputs)


def compare(case: Case, outputs: dict, memory_out: dict) -> str:
    """'' when ``outputs``/``memory_out`` match the case, else what differs first."""
    for port, recorded in case.outputs.items():
        produced = outputs.get(port)
        if produced is None:
            return f"no output on {port}"
        if not _same(recorded, produced):
            at = next((k for k, (a, b) in enumerate(zip(recorded, produced, strict=False)) if a != b),
                      min(len(recorded), len(produced)))
            return (f"{port} differs at token {at}: recorded {recorded[at:at + 4]}, "
                    f"produced {produced[at:at + 4]} ({len(recorded)} vs {len(produced)} tokens)")
    for name, recorded in case.memory_out.items():
        if not _same(recorded, memory_out.get(name, [])):
            produced = memory_out.get(name, [])
            return f"memory {name} differs: recorded {recorded[:8]}..., produced {produced[:8]}..."
    return ""


def model_outcome(vectors: VectorFile, case: Case) -> Outcome:
    def outcome(status, detail=""):
        return Outcome(vectors.path.name, vectors.primitive, case.name, "model", status, detail)
    if vectors.primitive not in MODELS:
        return outcome("unsupported", "no golden model for this primitive")
    reason = timing_reason(vectors.primitive, case)
    if reason:
        return outcome("unsupported", reason)
    try:
        outputs, memory_out = run_model(vectors.primitive, case)
    except ModelError as error:
        return outcome("failed", f"the model refused an input: {error}")
    difference = compare(case, outputs, memory_out)
    return outcome("failed" if difference else "passed", difference)


SIMS = ("model", "rtl", "both")


def conform(directory, sim: str = "model", *, rtl=None) -> list[Outcome]:
    """Run every case of every file in ``directory``; bad files are refused before anything runs.

    ``rtl(files)`` gives the RTL outcomes; the simulation back-end sits above this package, so
    the caller (``rivulet conform``) passes it in.
    """
    if sim not in SIMS:
        raise SuiteError(f"--sim {sim!r} is not known; use one of {', '.join(SIMS)}")
    if sim != "model" and rtl is None:
        raise SuiteError("the RTL runs need the simulation back-end: run them with `rivulet conform`")
    files = load_directory(directory, checked_primitives=set(MODELS))
    outcomes = []
    if sim in ("model", "both"):
        for vectors in files:
            outcomes += [model_outcome(vectors, case) for case in vectors.cases]
    if sim in ("rtl", "both"):
        outcomes += rtl(files)
    return outcomes


def format_table(outcomes: list[Outcome]) -> str:
    counts = Counter((o.file, o.primitive, o.sim, o.status) for o in outcomes)
    rows = sorted({(o.file, o.primitive, o.sim) for o in outcomes})
    lines = [f"{'file':<26} {'primitive':<22} {'sim':<6} {'passed':>6} {'failed':>6} {'unsupported':>11}"]
    for file, primitive, sim in rows:
        passed, failed, unsupported = (counts[file, primitive, sim, status]
                                       for status in ("passed", "failed", "unsupported"))
        lines.append(f"{file:<26} {primitive:<22} {sim:<6} {passed:>6} {failed:>6} {unsupported:>11}")
    total = Counter((o.sim, o.status) for o in outcomes)
    for sim in sorted({o.sim for o in outcomes}):
        lines.append(f"{'total':<26} {'':<22} {sim:<6} {total[sim, 'passed']:>6} {total[sim, 'failed']:>6} "
                     f"{total[sim, 'unsupported']:>11}")
    return "\n".join(lines)


def main(directory, sim: str, *, rtl=None, verbose: bool = False, say=print) -> int:
    """The ``rivulet conform`` command: prints the table; 0 if nothing failed, 1 otherwise."""
    outcomes = conform(directory, sim, rtl=rtl)
    say(format_table(outcomes))
    for outcome in outcomes:
        if outcome.status == "failed" or (verbose and outcome.detail):
            say(f"{outcome.status}: {outcome.file} {outcome.case} [{outcome.sim}]: {outcome.detail}")
    return 1 if any(o.status == "failed" for o in outcomes) else 0
