"""The host's answer to a run-time fault: detect it, re-run, place and route around it.

A run on a faulty fabric (:mod:`rsn.faults`) ends one of three ways: it completes and its
outputs pass the check (the fault was harmless, or never met); it hangs, which the watchdog (the
golden model's deadlock detection, the RTL's idle counter) detects, with a hang report that
names where the tokens stopped, or a step budget if tokens keep moving (:func:`step_budget`); or
it completes with outputs the check refuses, which only a reference can detect (a corrupted
token; the links carry no parity bit).

After a detected fault the host first runs the same image again: a transient fault (a dropped
or corrupted token) does not come back. If the run fails again the part is broken for good, and
the host excludes one suspect at a time, most likely first, compiles the program again for the
fabric without it (``failed_links`` / ``failed_tiles``, so place and route go round it), and
runs that: a link a blocked output waited on with an empty slot at its far end, then the tiles
the hang report's "blocked by" relations name most, then the tiles still waiting, then the
rest of the tiles the program used. Each attempt is a whole run of the program from its image.
"""

import dataclasses
import re
import time
from dataclasses import dataclass, field

from .fabric_spec import DIRECTIONS
from .model import DeadlockError, FabricModel

__all__ = ["Attempt", "Recovery", "run_with_faults", "step_budget", "suspects", "part_name"]

_EMPTY_BLOCKER = re.compile(r"^tile \[(\d+), (\d+)\] .*?output \d+ blocked by tile \[(\d+), (\d+)\] "
                            r"slot \d+ \(empty\)")
_WAITING = re.compile(r"^tile \[(\d+), (\d+)\] \w+: waiting")


@dataclass
class Attempt:
    excluded: tuple             # what this attempt's fabric leaves out: (tile,) or (tile, side) entries
    outcome: str                # "passed", "hung", "wrong outputs", "unit error", "does not fit"
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Recovery:
    """Every attempt, in order, and the last run's result and compiled program (None if none passed)."""
    attempts: list[Attempt] = field(default_factory=list)
    result: object = None
    compiled: object = None

    @property
    def passed(self) -> bool:
        return bool(self.attempts) and self.attempts[-1].outcome == "passed"

    @property
    def detected(self) -> bool:
        """The first run failed (hang or refused outputs): the fault was seen."""
        return bool(self.attempts) and self.attempts[0].outcome != "passed"

    @property
    def how(self) -> str:
        """How the run succeeded: first time, by re-running, or round the excluded part."""
        if not self.passed:
            return "not recovered"
        if len(self.attempts) == 1:
            return "first run"
        last = self.attempts[-1]
        if not last.excluded:
            return "re-run"
        return "re-placed without " + ", ".join(map(part_name, last.excluded))


def _is_link(part) -> bool:
    return len(part) == 2 and isinstance(part[1], str)


def part_name(part) -> str:
    """``link [r, c] SIDE`` or ``tile [r, c]``."""
    return f"link {list(part[0])} {part[1]}" if _is_link(part) else f"tile {list(part)}"


def suspects(report, compiled) -> list:
    """The parts to exclude, most likely first: links (tile, side) and tiles (row, col)."""
    spec, found = compiled.spec, []

    def add(part):
        if part not in found:
            found.append(part)

    lines = report.lines if report is not None else []
    for line in lines:
        match = _EMPTY_BLOCKER.match(line)
        if match:
            here, there = (int(match[1]), int(match[2])), (int(match[3]), int(match[4]))
            for side in DIRECTIONS:
                if spec.neighbour(here, side) == there:
                    add((here, side))
    counts = {}
    for _, blocker in (report.blocked if report is not None else ()):
        if isinstance(blocker, tuple):
            counts[blocker] = counts.get(blocker, 0) + 1
    for tile in sorted(counts, key=lambda tile: (-counts[tile], tile)):
        add(tile)
    for line in lines:
        match = _WAITING.match(line)
        if match:
            add((int(match[1]), int(match[2])))
    routing = compiled.routing
    for tile in sorted(set(routing.switch_uops) | set(routing.fu_uops)):
        add(tile)
    return found


def _without(spec, part):
    if _is_link(part):
        return dataclasses.replace(spec, failed_links=spec.failed_links | {part})
    return dataclasses.replace(spec, failed_tiles=spec.failed_tiles | {part})


def _expected_outputs(compiled, result) -> list[str]:
    expected = compiled.program.expected
    if expected is None:
        return []
    return [f"host output {port!r} differs from the program's reference" for port, tokens in expected.items()
            if result.outputs.get(port) != tokens]


# A fault can leave tokens circling for ever (a dropped token that a loop keeps waiting for
# while others still move), which no deadlock detection sees. A run is therefore given a step
# budget: this many times the steps of the same image without faults, plus a margin for the
# extra work a corrupted value may cause. A run past it is reported as hung.
LIVELOCK_FACTOR = 4
LIVELOCK_MARGIN = 10_000


def step_budget(compiled, spec) -> int | None:
    """The steps a faulty run of ``compiled`` on ``spec`` may take before it counts as hung; None
    (the model's own limit) if the program does not complete without faults either."""
    try:
        steps = FabricModel(spec).run(compiled.image, compiled.program.host_inputs).steps
    except DeadlockError:
        return None
    return LIVELOCK_FACTOR * steps + LIVELOCK_MARGIN


def _attempt(compiled, spec, faults, check, excluded, errors, budget) -> tuple[Attempt, object, object]:
    """One run of ``compiled`` on ``spec`` with ``faults``, stopped after ``budget`` steps
    (:func:`step_budget`; None: the model's own limit)."""
    started = time.monotonic()
    limit = {} if budget is None else {"max_steps": budget}
    model = FabricModel(spec, faults=faults, **limit)
    try:
        result = model.run(compiled.image, compiled.program.host_inputs)
    except DeadlockError as error:
        detail = str(error) if error.report is not None or budget is None else \
            f"livelock: no completion within {budget} steps ({LIVELOCK_FACTOR}x the fault-free run's, " \
            f"+ {LIVELOCK_MARGIN}), while units still move"
        return Attempt(excluded, "hung", detail, time.monotonic() - started), None, error.report
    except Exception as error:
        # A unit's model refuses a word a corrupted or lost token made (an axon id out of range,
        # an access outside a bank): the run failed, as it would on a unit that raises a fault.
        # Without a fault that acted, the same exception is a bug, and goes on up.
        if not isinstance(error, errors) and not any(link.hit for link in model.faulty_links):
            raise
        return Attempt(excluded, "unit error", f"{type(error).__name__}: {error}",
                       time.monotonic() - started), None, None
    problems = check(compiled, result)
    outcome = "wrong outputs" if problems else "passed"
    return Attempt(excluded, outcome, "; ".join(problems), time.monotonic() - started), result, None


def run_with_faults(program, spec, faults, *, compile_for, check=_expected_outputs, errors=(),
                    max_attempts: int = 16) -> Recovery:
    """Run ``program`` on ``spec`` with ``faults`` (:class:`rsn.faults.Fault`) on the golden model,
    recovering as the module says. ``compile_for(program, spec)`` compiles it for a fabric;
    ``check(compiled, result)`` lists what is wrong with a completed run (default: outputs
    against the program's ``expected``); ``errors``: exceptions of a unit's model that end a run
    as failed (a corrupted address a unit refuses), as the front-end's ``model_errors`` say."""
    recovery = Recovery()
    compiled = compile_for(program, spec)
    errors = tuple(errors)
    budget = step_budget(compiled, spec)        # the same image on the same fabric: one budget
    attempt, result, report = _attempt(compiled, spec, faults, check, (), errors, budget)
    recovery.attempts.append(attempt)
    if attempt.outcome != "passed":
        faults = [fault for fault in faults if fault.permanent]     # a transient fault has happened
        attempt, result, report_again = _attempt(compiled, spec, faults, check, (), errors, budget)
        recovery.attempts.append(attempt)
        report = report_again or report
    if attempt.outcome != "passed":
        for part in suspects(report, compiled):
            if len(recovery.attempts) >= max_attempts:
                break
            narrower = _without(spec, part)
            started = time.monotonic()
            try:
                compiled = compile_for(program, narrower)
            except ValueError as error:     # PlaceError, RouteError, ProgramError: it does not fit
                recovery.attempts.append(Attempt((part,), "does not fit", str(error).splitlines()[0],
                                                 time.monotonic() - started))
                continue
            attempt, result, _ = _attempt(compiled, narrower, faults, check, (part,), errors,
                                          step_budget(compiled, narrower))
            attempt.seconds = time.monotonic() - started        # the compile with the run
            recovery.attempts.append(attempt)
            if attempt.outcome == "passed":
                break
    if recovery.passed:
        recovery.result, recovery.compiled = result, compiled
    return recovery
