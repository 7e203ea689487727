"""Ripple builder programs: a program file's ``program()`` returns a :class:`RippleProgram`, a
dataflow graph (``ripple_core.builder``, ``ripple_core.programs``) with the case to run it on,
and this front-end lowers it onto the fabric's ``pe`` tiles and judges runs with Ripple's
checker (:mod:`ripple_core.check`)."""

from dataclasses import dataclass, field
from pathlib import Path

from ripple_core.check import RippleCheck
from ripple_core.graph import Graph
from ripple_core.lower import LoweringError, RippleLowering, compile_lowering, lower_graph
from ripple_core.pe import PeMemoryError
from ripple_core.riptide import case_problem

from .protocol import Case, FrontendError

__all__ = ["RippleProgram", "ripple_case", "lower"]


@dataclass
class RippleProgram:
    """A Ripple graph and one case in RipTide's vectors format: ``args`` (scalar arguments),
    ``mem`` (array name -> initial words) and ``expect`` (SINK or array name -> the words a
    correct run gives). ``name`` names the program (default: the graph's)."""
    graph: Graph
    case: dict = field(default_factory=dict)
    name: str | None = None

    def __post_init__(self):
        """Checked where program() makes it, so a wrong one is reported at the program file's line."""
        if not isinstance(self.graph, Graph):
            raise TypeError(f"RippleProgram's graph is a {type(self.graph).__name__}; give a "
                            f"ripple_core.graph.Graph (e.g. a GraphBuilder's build())")
        problem = case_problem(self.case)
        if problem:
            raise ValueError(f"RippleProgram's case: {problem}")


def lower(program: RippleProgram, spec, path: Path) -> Case:
    """The case of ``program`` on fabric ``spec``."""
    try:
        lowering = lower_graph(program.graph, program.case, spec, name=program.name)
    except LoweringError as error:
        raise FrontendError(f"{path}: {error}") from None
    return ripple_case(lowering)


def ripple_case(lowering: RippleLowering, *, origin: str = "-", problems=()) -> Case:
    """A lowered graph as a case: Ripple's checker, placement retried the way pe graphs need,
    and the columns of its line in a table of cases."""
    check = RippleCheck(lowering)
    stored = any(len(words) > 1 for words in (lowering.program.reads or {}).values())

    def summary(compiled, reads: dict | None, found: list[str]) -> dict[str, str]:
        arrays = "-" if not stored or reads is None else "= expect" if check.arrays_equal(reads) else "DIFFER"
        return {"model cyc": str(lowering.model.cycles), "firings": str(lowering.model.firings),
                "PE firings": "DIFFER" if any("PE firings" in p for p in found) else "= model",
                "arrays": arrays}

    return Case(lowering.program.name, lowering.program, check=check,
                compile=lambda program, spec, seed: compile_lowering(lowering, spec, seed=seed),
                origin=origin, problems=list(problems), summary=summary,
                model_errors=(PeMemoryError,))
