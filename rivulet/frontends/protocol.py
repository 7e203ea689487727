"""The front-end protocol: an input file, read, then lowered for one fabric into cases.

``Frontend.load(path, options)`` reads the file and returns a :class:`Workload`, which knows its
default fabric but has lowered nothing yet. ``Workload.lower(spec)`` then lowers it for the
fabric the command line chose, and returns :class:`Case` objects: a program for that fabric,
the results a correct run gives (``program.expected``, ``program.expected_reads``), and the
checker that judges a run. Lowering and placing use the same fabric, always: a program built for
one fabric and placed on another is the mismatch this protocol exists to prevent.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rsn.fabric_spec import FabricSpec
from rsn.program import Compiled, Program, compile_program
from rsn.words import READ_WIDTH, words_problem

__all__ = ["FrontendError", "Options", "Case", "Workload", "Frontend", "SIMS", "reference_problems",
           "output_problems", "read_problems"]

SIMS = ("model", "rtl", "both", "board")


class FrontendError(ValueError):
    """An input a front-end refuses: it names the file and what to change."""


@dataclass(frozen=True)
class Options:
    """What the command line gives a front-end besides the file: ``-D NAME=VALUE`` parameters
    (values already parsed) and, for inputs that carry no data of their own, ``--vectors``;
    for files of language kernels, ``--mode`` and ``--kernel`` (other front-ends refuse them)."""
    parameters: dict = field(default_factory=dict)
    vectors: Path | None = None
    mode: str | None = None
    kernel: str | None = None


# check(compiled, outputs, firings, reads) -> the problems of one run, none when it passed.
# ``outputs``: host port -> tokens; ``firings``: tile -> firings; ``reads``: node -> the words
# the program's ``reads`` returned, or None where the host could not read registers back.
Check = Callable[[Compiled, dict, dict, dict | None], list[str]]
Compile = Callable[[Program, FabricSpec, int], Compiled]


def output_problems(outputs: dict, expected: dict | None, width: int) -> list[str]:
    """Each host port whose ``width``-bit tokens differ from ``expected`` (modulo 2^width, so an
    expected value may be written signed or unsigned), at its first difference."""
    return [problem for port, wanted in (expected or {}).items()
            if (problem := words_problem(f"host port {port}", outputs.get(port, []), wanted, width))]


def read_problems(reads: dict, expected: dict | None) -> list[str]:
    """Each node whose register reads (32-bit words) differ from ``expected``, at its first difference."""
    return [problem for node, wanted in (expected or {}).items()
            if (problem := words_problem(f"register reads of {node}", reads.get(node, []), wanted,
                                         READ_WIDTH, unit="read"))]


def reference_problems(compiled: Compiled, outputs: dict, firings: dict, reads: dict | None) -> list[str]:
    """The default checker: host outputs and register reads against the program's reference."""
    program = compiled.program
    problems = output_problems(outputs, program.expected, compiled.spec.data_width)
    if reads is not None:
        problems += read_problems(reads, program.expected_reads)
    return problems


def _compile(program: Program, spec: FabricSpec, seed: int) -> Compiled:
    return compile_program(program, spec, seed=seed)


@dataclass
class Case:
    """One program lowered for the fabric, with what a correct run gives and who judges it.

    ``compile`` places and routes it (a front-end may retry placements its graphs need);
    ``origin``: where the case comes from (a vectors file's ``origin``); ``problems``: what the
    front-end already found wrong while lowering (its own model against the case), reported with
    the run's; ``summary(compiled, reads, problems)``: the front-end's columns (name -> text) of
    the case's line when a run reports one line per case; ``model_errors``: exceptions of the
    fabric's golden model that mean this case's run failed (e.g. a PE's access outside its bank),
    not that the command broke; ``pictures(compiled, result, directory, where)``: the front-end's
    own figures of a run for ``--report`` (name -> its PNG and SVG paths), beside the common ones;
    ``passed``: what a run that ``check`` passes has been compared with, said after it.
    """
    name: str
    program: Program
    check: Check = reference_problems
    compile: Compile = _compile
    origin: str = "-"
    problems: list[str] = field(default_factory=list)
    summary: Callable | None = None
    model_errors: tuple[type[Exception], ...] = ()
    pictures: Callable | None = None
    passed: str = ""


@dataclass
class Workload:
    """An input file as its front-end read it, before lowering.

    ``default_fabric``: the fabric description used when the command line names none (the
    front-end's documented default). ``lower(spec)``: the cases for fabric ``spec``. ``sims``:
    where its cases can run. ``one_line_per_case``: report a table of cases (a vectors file)
    rather than one program's tiles. ``notes``: lines that explain that table. ``model(say, record)``:
    a golden model of the front-end's own that ``--sim model`` runs instead of the fabric's (RipTide
    graphs run on the Ripple interpreter, whether or not they lower onto a fabric); it adds each
    case's figures to ``record`` (a :class:`rivulet.report.RunRecord`).
    """
    name: str
    path: Path
    default_fabric: Path
    lower: Callable[[FabricSpec], list[Case]]
    sims: tuple[str, ...] = SIMS
    one_line_per_case: bool = False
    notes: tuple[str, ...] = ()
    model: Callable | None = None


class Frontend(Protocol):
    """Reads one kind of input file."""

    name: str

    def accepts(self, path: Path) -> bool:
        """Whether ``path`` is this front-end's kind of file."""

    def load(self, path: Path, options: Options) -> Workload:
        """Read ``path``; raise :class:`FrontendError` for an input it refuses."""
