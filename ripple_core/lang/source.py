"""A decorated function's source as the compiler and the reference see it: its parsed
``FunctionDef``, the file and line offset that locate every refusal, and the module and closure
values its names may refer to (``push`` and friends, helpers, integer constants)."""

import ast
import inspect
import textwrap
from dataclasses import dataclass, field

from .api import Kernel
from .errors import LangError

__all__ = ["FunctionSource", "source_of"]


@dataclass
class FunctionSource:
    fn: object
    tree: ast.FunctionDef | ast.AsyncFunctionDef
    filename: str
    first_line: int
    names: dict = field(default_factory=dict)       # globals, then closure values over them

    def where(self, node) -> str:
        return f"{self.filename}:{self.first_line + getattr(node, 'lineno', 1) - 1}"

    def refuse(self, node, construct: str, message: str, hint: str | None = None):
        raise LangError(self.where(node), construct, message, hint)


_CACHE: dict = {}


def source_of(target) -> FunctionSource:
    """The parsed source of a kernel, an inline helper or a plain function."""
    fn = target.fn if isinstance(target, Kernel) else target
    if fn in _CACHE:
        return _CACHE[fn]
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as error:
        raise LangError(f"{getattr(fn, '__qualname__', fn)!s}", "kernel",
                        f"its source is not available ({error})",
                        "define kernels in a file, not in an interactive prompt") from None
    module = ast.parse(textwrap.dedent("".join(lines)))
    tree = module.body[0]
    if not isinstance(tree, ast.FunctionDef | ast.AsyncFunctionDef):
        raise LangError(f"{filename}:{first}", type(tree).__name__,
                        "a kernel is a def (or an async def, which Python requires for a top-level "
                        "async for)", "write @kernel above a def")
    names = dict(fn.__globals__)
    closure = inspect.getclosurevars(fn).nonlocals
    names.update(closure)
    result = FunctionSource(fn, tree, filename, first, names)
    _CACHE[fn] = result
    return result
