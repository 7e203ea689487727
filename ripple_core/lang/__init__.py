"""The Ripple language: a subset of Python compiled to the ordered-dataflow graph IR
(:mod:`ripple_core.graph`), with Ripple's tasks, pushes and atomics. See docs/ripple-language.md."""

from .api import Array, Kernel, atomic, ind, inline, kernel, out, push
from .compiler import compile_kernel
from .errors import LangError

__all__ = ["kernel", "inline", "Kernel", "Array", "push", "atomic", "ind", "out", "compile_kernel",
           "LangError"]
