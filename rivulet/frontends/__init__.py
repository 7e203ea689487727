"""Front-ends: each turns an input file plus the fabric description into cases (a program for
that fabric, its expected results, a checker); ``rivulet run`` runs the cases. The protocol is
in :mod:`rivulet.frontends.protocol` and docs/frontends.md.

File kinds (:data:`FRONTENDS`, the first that accepts a file reads it): RipTide graph JSON
with ``--vectors`` (:mod:`.riptide`), SAM graphs (:mod:`.sam`), Python files of Ripple-language
``@kernel`` functions (:mod:`.lang`), and Python program files (:mod:`.program_file`), whose
``program()`` returns an rsn path program (:mod:`.paths`), a Ripple graph with its case
(:mod:`.ripple`) or an SNN network with its input spikes (:mod:`.snn`). A new front-end is one
module here and one entry in :data:`FRONTENDS` or :data:`~.program_file.PROGRAM_KINDS`.
"""

from pathlib import Path

from .lang import KernelFile
from .program_file import ProgramFile, parse_definitions
from .protocol import Case, Frontend, FrontendError, Options, Workload
from .ripple import RippleProgram
from .riptide import RiptideGraph
from .sam import SamGraph
from .snn import SnnProgram

__all__ = ["FRONTENDS", "frontend_for", "parse_definitions", "Case", "Frontend", "FrontendError",
           "Options", "Workload", "RippleProgram", "SnnProgram"]

FRONTENDS: tuple[Frontend, ...] = (RiptideGraph(), SamGraph(), KernelFile(), ProgramFile())


def frontend_for(path: Path) -> Frontend:
    """The front-end that reads ``path``, by its kind of file."""
    for frontend in FRONTENDS:
        if frontend.accepts(Path(path)):
            return frontend
    kinds = ", ".join(frontend.name for frontend in FRONTENDS)
    raise FrontendError(f"{path}: rivulet run reads a program file (.py), a dataflow graph (.json) or a "
                        f"SAM graph (.gv); "
                        f"front-ends: {kinds}")
