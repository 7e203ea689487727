"""rsn path programs: a program file's ``program()`` returns an :class:`rsn.program.Program`, a
stream graph of FU micro-ops with its data and reference, which is placed on the fabric as it
is. Such a program names no fabric parameter, so it may size itself from the ``fabric`` its
``program()`` receives; the default checker compares outputs and register reads with its
reference."""

from pathlib import Path

from rsn.program import Program

from .protocol import Case

__all__ = ["lower"]


def lower(program: Program, spec, path: Path) -> Case:
    """The case of ``program``: placement and routing check it against ``spec``."""
    return Case(program.name, program)
