"""``rivulet compile SOURCE -o GRAPH.json``: a program's dataflow graph as RipTide JSON
(:mod:`ripple_core.export`, docs/graph-json.md), which ``rivulet run GRAPH.json --vectors`` runs.

A source kind is one function in :data:`SOURCE_KINDS`: ``read(path, options)`` returns the
:class:`Compiled` graph, or None when the file is not of its kind (the next kind is tried); it
raises :class:`FrontendError` when the file is of its kind but wrong. The kinds, in order:

* ``*.json``: a RipTide graph (:func:`from_riptide`), re-exported in normal form with its
  return type and argument order;
* ``*.py`` of Ripple-language kernels (``ripple_core.lang``: functions decorated ``@kernel``,
  no ``program()``; :func:`from_kernel_file`), compiled by ``compile_kernel(fn, mode=...)``:
  ``--mode ordered|ripple`` (default: inferred) and ``--kernel NAME`` (needed when the file
  defines several); the arguments are written in the kernel's parameter order, and a kernel
  that returns a value has return type ``int``;
* ``*.py`` whose ``program(**parameters)`` returns a :class:`RippleProgram`
  (:func:`from_program_file`); ``-D NAME=VALUE`` sets its parameters as for ``rivulet run``.
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ripple_core.export import dumps, graph_to_riptide
from ripple_core.graph import Graph, GraphError
from ripple_core.riptide import parse_graph, read_json

from .files import path_problem, write_atomically
from .frontends import FrontendError, RippleProgram, parse_definitions
from .frontends.lang import defines_kernels, load_kernel
from .frontends.program_file import USER_CODE_ERRORS, _bind, _located, _module, _shown_value
from .frontends.riptide import RIPPLE_FABRIC

__all__ = ["Compiled", "CompileOptions", "SOURCE_KINDS", "KERNEL_OPTIONS", "compile_source", "compile_file",
           "from_riptide", "from_kernel_file", "from_program_file"]

# The options only a kernel source kind reads (see the module docstring).
KERNEL_OPTIONS = ("mode", "kernel")


@dataclass
class CompileOptions:
    definitions: dict = field(default_factory=dict)     # -D NAME=VALUE, parsed
    mode: str | None = None                             # --mode: for kernel sources
    kernel: str | None = None                           # --kernel: for kernel sources


@dataclass
class Compiled:
    """A source's graph and what the JSON carries beside it. ``used`` names the options the
    source kind read; any other option that was given is refused as not applying."""
    graph: Graph
    kind: str
    return_type: str | None = None
    arg_order: list | None = None
    used: tuple = ()


def from_riptide(path: Path, options: CompileOptions) -> Compiled | None:
    """A RipTide graph JSON file, read by the importer and written again in normal form."""
    if path.suffix != ".json":
        return None
    try:
        document = read_json(path)
        graph = parse_graph(document, str(path))
    except GraphError as error:
        raise FrontendError(str(error)) from None
    function = document["function"]
    return Compiled(graph, "RipTide graph", return_type=function.get("return_type"),
                    arg_order=[argument["name"] for argument in function.get("args", [])])


def from_kernel_file(path: Path, options: CompileOptions) -> Compiled | None:
    """A Python file of ``@kernel`` functions: the chosen kernel's graph (its cases are not
    written; ``rivulet run GRAPH.json --vectors`` takes them)."""
    if not defines_kernels(path):
        return None
    loaded = load_kernel(path, kernel=options.kernel, mode=options.mode)
    returns = any(node.op == "SINK" and node.name == "return" for node in loaded.graph.nodes.values())
    order = [name for name in inspect.signature(loaded.kernel.fn).parameters]
    return Compiled(loaded.graph, f"kernel {loaded.name} (mode {loaded.mode})",
                    return_type="int" if returns else None, arg_order=order, used=KERNEL_OPTIONS)


def from_program_file(path: Path, options: CompileOptions) -> Compiled | None:
    """A Python file whose ``program()`` returns a :class:`RippleProgram` (its case is not
    written: the graph is)."""
    if path.suffix != ".py":
        return None
    module = _module(path)
    function = getattr(module, "program", None)
    if not callable(function):
        raise FrontendError(f"{path} defines no program() returning a RippleProgram and no @kernel "
                            f"function")
    takes_fabric, parameters = _bind(path, function, options.definitions)
    if takes_fabric:
        from rsn.fabric_spec import load_fabric
        parameters = {"fabric": load_fabric(RIPPLE_FABRIC), **parameters}
    try:
        made = function(**parameters)
    except USER_CODE_ERRORS as error:
        raise FrontendError(_located(path, error, "in program()")) from error
    if not isinstance(made, RippleProgram):
        raise FrontendError(f"{path}:{function.__code__.co_firstlineno}: program() returned "
                            f"{_shown_value(made)}; rivulet compile writes a dataflow graph, so it must "
                            f"return a RippleProgram")
    return Compiled(made.graph, "program()", used=("definitions",))


# Source kinds, tried in order (see the module docstring).
SOURCE_KINDS: list[Callable[[Path, CompileOptions], Compiled | None]] = [from_riptide, from_kernel_file,
                                                                         from_program_file]


def compile_source(path, options: CompileOptions | None = None) -> Compiled:
    """The graph of ``path``, read by the first source kind that takes it."""
    path, options = Path(path), options or CompileOptions()
    if not path.exists():
        raise FrontendError(f"source {path} does not exist")
    for read in SOURCE_KINDS:
        compiled = read(path, options)
        if compiled is not None:
            break
    else:
        raise FrontendError(f"{path}: rivulet compile reads a RipTide graph (.json), a Python file of "
                            f"@kernel functions or a Python program file (.py), not a "
                            f"{path.suffix or 'suffix-less'} file")
    for name in ("definitions", *KERNEL_OPTIONS):
        given = getattr(options, name)
        if given and name not in compiled.used:
            flag = {"definitions": "-D", "mode": "--mode", "kernel": "--kernel"}[name]
            raise FrontendError(f"{flag} does not apply to {path} (a {compiled.kind} source)"
                                + (": it selects a kernel of a language file" if name != "definitions"
                                   else ": it sets a program file's program() parameters"))
    return compiled


def compile_file(source, output, *, definitions=(), mode=None, kernel=None) -> tuple[Compiled, Path]:
    """Compile ``source`` and write its RipTide JSON to ``output`` (whole or not at all)."""
    options = CompileOptions(parse_definitions(definitions), mode, kernel)
    compiled = compile_source(source, options)
    try:
        text = dumps(graph_to_riptide(compiled.graph, return_type=compiled.return_type,
                                      arg_order=compiled.arg_order))
    except GraphError as error:
        raise FrontendError(f"{source}: {error}") from None
    output = Path(output)
    try:
        write_atomically(output, text)
    except OSError as error:
        raise FrontendError(f"cannot write {output}: {path_problem(error)}") from None
    return compiled, output
