"""Optional dependencies (the extras of pyproject.toml): import one, or say how to install it.
The base install needs none of them; a command that does stops before it starts work."""

import importlib

__all__ = ["ExtraMissing", "require_extra"]


class ExtraMissing(ImportError):
    """An optional dependency is not installed; the message names the pip command."""


def require_extra(module: str, extra: str, what: str):
    """Import ``module`` of the optional ``extra``, or raise :class:`ExtraMissing` naming the fix."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ExtraMissing(f"{what} needs {module}, which is not installed: run "
                           f"pip install 'rivulet-hw[{extra}]' (make install installs it)") from None
