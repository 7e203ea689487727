"""Program files: a Python file whose ``program(fabric, **parameters)`` returns what one of the
program front-ends lowers.

``rivulet run FILE.py --fabric F.toml -D NAME=VALUE`` calls ``program(fabric=<F>, NAME=VALUE)``:
``fabric`` is the :class:`~rsn.fabric_spec.FabricSpec` the program will run on (a program that
does not depend on it may leave the parameter out), and each ``-D`` sets one of its keyword
parameters. Without ``--fabric``, the file's ``FABRIC`` (a path, relative to the file) names
its fabric, else ``examples/fabrics/default.toml``. What ``program()`` returns picks the
front-end (:data:`PROGRAM_KINDS`): an ``rsn.program.Program``, a :class:`RippleProgram` or an
:class:`SnnProgram`.

The file is the user's input, so whatever goes wrong in it (a syntax error, an exception while
it loads or inside ``program()``, such as a builder's or a network's validation error, or the
wrong kind of result) is refused as input: ``FILE:LINE: what happened``, the line being the
file's own innermost line in the traceback, not the loader's frames.
"""

import importlib.util
import inspect
import traceback
from pathlib import Path

from rsn.fabric_spec import DEFAULT_FABRIC
from rsn.program import Program

from . import paths, ripple, snn
from .protocol import FrontendError, Options, Workload
from .ripple import RippleProgram
from .snn import SnnProgram

__all__ = ["ProgramFile", "PROGRAM_KINDS", "parse_definitions", "USER_CODE_ERRORS"]

# What program() may return -> the front-end that lowers it: lower(made, spec, path) -> Case.
PROGRAM_KINDS = {Program: paths.lower, RippleProgram: ripple.lower, SnnProgram: snn.lower}
# What the user's code may raise and the command reports as input: sys.exit() (or an argparse
# written for running the file on its own) too, which would otherwise end the command mid-run.
USER_CODE_ERRORS = (Exception, SystemExit)


def parse_definitions(definitions) -> dict:
    """``["NAME=VALUE", ...]`` from ``-D`` as a dict; a value is an int if it reads as one (``12``,
    ``0x1f``), else a float (``0.5``, ``1e-3``), else the string itself."""
    values = {}
    for text in definitions or ():
        name, equals, value = text.partition("=")
        name = name.strip()
        if not equals or not name.isidentifier():
            raise FrontendError(f"-D {text!r}: write -D NAME=VALUE, e.g. -D steps=16")
        if name in values:
            raise FrontendError(f"-D {name} is given twice ({values[name]!r} and {_value(value)!r}); "
                                f"give it once")
        values[name] = _value(value)
    return values


def _value(text: str):
    for parse in (int, lambda t: int(t, 0), float):
        try:
            return parse(text)
        except ValueError:
            pass
    return text


class ProgramFile:
    """The front-end of Python program files (``*.py``)."""

    name = "program file"

    def accepts(self, path: Path) -> bool:
        return path.suffix == ".py"

    def load(self, path: Path, options: Options) -> Workload:
        if options.vectors is not None:
            raise FrontendError(f"--vectors gives the cases of a dataflow graph (.json); {path} is a program "
                                f"file, whose program() makes its own data")
        module = _module(path)
        function = getattr(module, "program", None)
        if not callable(function):
            raise FrontendError(f"{path} defines no program(...) function returning one of: "
                                + ", ".join(kind.__name__ for kind in PROGRAM_KINDS))
        takes_fabric, parameters = _bind(path, function, options.parameters)

        def lower(spec) -> list:
            try:
                made = function(**({"fabric": spec} if takes_fabric else {}), **parameters)
            except USER_CODE_ERRORS as error:
                raise FrontendError(_located(path, error, "in program()")) from error
            for kind, lower_kind in PROGRAM_KINDS.items():
                if isinstance(made, kind):
                    return [lower_kind(made, spec, path)]
            raise FrontendError(f"{path}:{function.__code__.co_firstlineno}: program() returned "
                                f"{_shown_value(made)}; it must return one of: "
                                + ", ".join(kind.__name__ for kind in PROGRAM_KINDS))

        return Workload(name=path.stem, path=path, default_fabric=_default_fabric(path, module),
                        lower=lower)


def _module(path: Path):
    if not path.exists():
        raise FrontendError(f"program file {path} does not exist")
    module_spec = importlib.util.spec_from_file_location(f"rivulet_program_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as error:
        if error.filename is None or Path(error.filename).resolve() != path.resolve():
            raise FrontendError(_located(path, error, "while loading the file")) from error
        text = f" in: {error.text.strip()}" if error.text and error.text.strip() else ""
        raise FrontendError(f"{path}:{error.lineno}: syntax error: {error.msg}{text}") from error
    except USER_CODE_ERRORS as error:
        raise FrontendError(_located(path, error, "while loading the file")) from error
    return module


def _shown_value(value) -> str:
    text = repr(value)
    return f"{text if len(text) <= 40 else text[:37] + '...'} (type {type(value).__name__})"


def _located(path: Path, error: Exception, where: str) -> str:
    """``FILE:LINE: where: Error: message``, LINE being the innermost line of ``path`` the
    traceback passes through (where the file called what raised)."""
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
             if Path(frame.filename).resolve() == path.resolve()]
    location = f"{path}:{lines[-1]}" if lines else str(path)
    if isinstance(error, SystemExit):
        return (f"{location}: {where}: the file called sys.exit({error.code!r}); rivulet imports a program "
                f"file and calls it, so it must not end the process (raise an exception to refuse)")
    return f"{location}: {where}: {type(error).__name__}: {error}"


def _default_fabric(path: Path, module) -> Path:
    """The file's ``FABRIC``, relative to the file, or the default fabric."""
    fabric = getattr(module, "FABRIC", None)
    if fabric is None:
        return DEFAULT_FABRIC
    if not isinstance(fabric, str | Path):
        raise FrontendError(f"{path}: FABRIC = {fabric!r}; it must be the path of a fabric description")
    return path.parent / fabric


def _bind(path: Path, function, parameters: dict) -> tuple[bool, dict]:
    """Whether ``program()`` takes the fabric, and ``parameters`` checked against its signature."""
    signature = inspect.signature(function)
    named = {name: parameter for name, parameter in signature.parameters.items()
             if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)}
    open_ended = any(parameter.kind == parameter.VAR_KEYWORD for parameter in signature.parameters.values())
    if "fabric" in parameters:
        raise FrontendError("-D fabric: the fabric is a description file; give it with --fabric FILE.toml")
    settable = [name for name in named if name != "fabric"]
    unknown = [name for name in parameters if name not in settable]
    if unknown and not open_ended:
        listed = ", ".join(_shown(named[name]) for name in settable) or "none"
        raise FrontendError(f"{path}: program() has no parameter {unknown[0]!r}; its parameters: {listed}")
    missing = [name for name in settable if named[name].default is inspect.Parameter.empty
               and name not in parameters]
    if missing:
        raise FrontendError(f"{path}: program() needs {', '.join(missing)}; give "
                            + " ".join(f"-D {name}=VALUE" for name in missing))
    for name, value in parameters.items():
        if name in named:
            _check_against_default(path, named[name], value)
    return "fabric" in named or open_ended, dict(parameters)


def _check_against_default(path: Path, parameter: inspect.Parameter, value):
    """Refuse a ``-D`` value that cannot be what the parameter's default is: text for a number, a
    fraction for a count (else it fails deep inside program(), or, for a flag, ``false`` is true)."""
    default = parameter.default
    if isinstance(default, bool):
        wanted, fits, example = "a flag", isinstance(value, int) and value in (0, 1), "1 or 0"
    elif isinstance(default, int):
        wanted, fits, example = "an integer", isinstance(value, int), default
    elif isinstance(default, float):
        wanted, fits, example = "a number", isinstance(value, int | float), default
    else:
        return
    if not fits:
        raise FrontendError(f"{path}: -D {parameter.name}={value}: program()'s {parameter.name} is {wanted} "
                            f"(its default is {default!r}); give e.g. -D {parameter.name}={example}")


def _shown(parameter: inspect.Parameter) -> str:
    if parameter.default is inspect.Parameter.empty:
        return parameter.name
    return f"{parameter.name}={parameter.default!r}"
