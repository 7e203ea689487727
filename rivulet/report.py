"""What ``rivulet run --json`` prints: the run's results, case by case, for scripts.

The command fills a :class:`RunRecord` as it goes, so a run that fails or is refused part way
still reports what it did: each case's results per place it ran (``model``, ``rtl``, ``board``:
host outputs, cycles, per-tile firings, stalls and link beats, register reads), whether it
passed and its problems, then the exit status and the error line.
"""

from dataclasses import dataclass, field

__all__ = ["RunRecord", "CaseRecord", "run_figures"]


def run_figures(result, tiles=None) -> dict:
    """A fabric run's results (an rsn ModelResult or RtlResult) as JSON values; ``tiles``: the
    tiles whose counters to give (default: every tile the result counted)."""
    figures = {"outputs": {port: list(tokens) for port, tokens in result.outputs.items()}}
    for name in ("done", "cycles", "done_cycle", "stalled_cycle", "host_sent"):
        if getattr(result, name, None) is not None:
            figures[name] = getattr(result, name)
    stalls = getattr(result, "stalls", None)
    figures["tiles"] = [
        {"tile": list(tile), "firings": result.firings.get(tile, 0),
         **({"stalls": stalls.get(tile, 0)} if stalls is not None else {}),
         "link_beats": list(result.link_beats.get(tile, []))}
        for tile in sorted(result.firings if tiles is None else tiles)]
    if getattr(result, "register_values", None):
        figures["register_reads"] = result.register_values
    return figures


@dataclass
class CaseRecord:
    """One case: ``runs`` maps where it ran to its figures; ``passed`` is None until judged."""
    name: str
    origin: str = "-"
    runs: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    passed: bool | None = None

    def fail(self, problems: list[str]) -> None:
        self.problems += problems
        self.passed = False

    def judged(self, problems: list[str]) -> None:
        """Record the problems of one judgement; the case passes while there are none."""
        if problems:
            self.fail(problems)
        elif self.passed is None:
            self.passed = True

    def as_json(self) -> dict:
        return {"name": self.name, "origin": self.origin, "passed": self.passed,
                "problems": self.problems, "runs": self.runs}


@dataclass
class RunRecord:
    """A ``rivulet run``: its input, where it ran, and its cases."""
    program: str = ""
    sim: str = ""
    cases: list[CaseRecord] = field(default_factory=list)

    def case(self, name: str, origin: str = "-") -> CaseRecord:
        self.cases.append(CaseRecord(name, origin))
        return self.cases[-1]

    def as_json(self, status: int, error: str | None) -> dict:
        return {"program": self.program, "sim": self.sim, "passed": status == 0, "exit_status": status,
                "error": error, "cases": [case.as_json() for case in self.cases]}
