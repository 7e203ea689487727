"""What a kernel's author imports: the ``@kernel`` and ``@inline`` decorators, the ``Array``
annotation and the Ripple markers ``push``, ``atomic``, ``ind`` and ``out``.

A decorated function stays a plain Python function (calling it runs CPython, with unbounded
ints); the 32-bit reference is :func:`ripple_core.lang.reference.run_reference`. The markers do
nothing by themselves: the compiler recognises them by identity, and the reference replaces them
with a worklist, a no-op lock and output lists.
"""

import functools

__all__ = ["Array", "kernel", "inline", "Kernel", "push", "atomic", "ind", "out"]


class Array:
    """Annotation of a memory-array argument (its base address is the argument's value)."""


class Kernel:
    """A function marked for compilation; calling it calls the function itself."""

    def __init__(self, fn, inline: bool = False):
        self.fn, self.inline = fn, inline
        self.__name__ = fn.__name__
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<{'inline' if self.inline else 'kernel'} {self.fn.__qualname__}>"


def kernel(fn) -> Kernel:
    """Mark ``fn`` as a kernel: :func:`ripple_core.lang.compile_kernel` turns it into a graph."""
    return Kernel(fn)


def inline(fn) -> Kernel:
    """Mark ``fn`` as a scalar helper: kernels that call it get its body inlined."""
    return Kernel(fn, inline=True)


def ind(fn=None, *, inflight: int | None = None):
    """Mark an ``async def`` task as pipelined: its invocations may overlap. ``@ind(inflight=k)``
    lets at most k overlap (a task whose work depends on when its invocations run, such as one
    that reads what others accumulate, may do less of it when they wait)."""
    if fn is None:
        return lambda task: task
    return fn


def push(task, *values):
    """Queue an invocation of ``task``; only meaningful inside a compiled kernel or the reference."""
    raise RuntimeError("push() runs only in a compiled kernel or under run_reference()")


def out(name: str, value: int):
    """Send ``value`` to the host output stream ``name``."""
    raise RuntimeError("out() runs only in a compiled kernel or under run_reference()")


class atomic:
    """``with atomic(address):`` holds the address's lock for the block (a no-op in CPython)."""

    def __init__(self, address):
        self.address = address

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
