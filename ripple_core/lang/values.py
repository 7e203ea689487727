"""Operands and regions: what a name stands for while a scope is lowered.

A value is a :class:`~ripple_core.builder.Ref` (one token per activation of its region), a
:class:`Const` (folded at compile time; a ``hold`` slot where an operator needs it) or a
:class:`Scalar` argument (a held ``arg`` slot). A *region* is a statement list activated once
per token of its decider: the kernel's top level once, a loop body once per iteration, a branch
once per matching condition, a task body once per invocation. A name a region reads but has not
assigned comes from its loop header or, STEERed on the region's decider, from the parent; a
static operand that must be a token becomes one the way the region says (a ``const`` slot at the
top level, a STEER of a hold in a branch or loop, an ORDER on the trigger in a task).
"""

from ripple_core.builder import Ref
from ripple_core.graph import Input, const, hold

__all__ = ["Const", "Scalar", "STATIC", "Region"]


class Const:
    """A word known at compile time (signed, as :func:`ripple_core.ops.wrap` keeps it);
    ``spelled``: the integer a literal or module constant was written as, when it was one."""

    def __init__(self, value: int, spelled: int | None = None):
        self.value = value
        self.spelled = value if spelled is None else spelled

    def slot(self):
        return hold(self.value)

    def once(self):
        return const(self.value)

    def key(self):
        return ("const", self.value)

    def __repr__(self):
        return f"Const({self.value})"


class Scalar:
    def __init__(self, name: str):
        self.name = name

    def slot(self):
        return Input("arg", name=self.name, hold=True)

    def once(self):
        return Input("arg", name=self.name, hold=False)

    def key(self):
        return ("arg", self.name)


STATIC = (Const, Scalar)


class Region:
    """One region's decider ``(ref, pred)`` and variables.

    ``entry(name)`` supplies names a loop body has not assigned (the header's value, steered
    in); ``resolve(name)`` supplies names at a scope's root (arguments, constants) or refuses;
    ``make_token(static)`` overrides how a static operand becomes a token; ``top`` marks the
    kernel's top level, where a token is a ``const``/``arg`` slot consumed once.
    """

    def __init__(self, compiler, decider=None, parent=None, *, entry=None, knows=None, make_token=None,
                 resolve=None, top=False, loop=None):
        self.compiler, self.decider, self.parent = compiler, decider, parent
        self.entry, self._knows, self.make_token, self.resolve = entry, knows, make_token, resolve
        self.top, self.loop = top, loop      # loop: (outer region, varying names, header) of a body
        self.env: dict = {}
        self.assigned: set = set()
        self.tokens: dict = {}
        self.steered: dict = {}     # parent value -> its STEER into this region (one per value)
        self.done = None            # a completion token (value 1) made once per activation here
        registry = getattr(compiler, "regions", None)
        if registry is not None:
            registry.append(self)

    def read(self, name):
        if name in self.env:
            return self.env[name]
        if self.entry is not None:
            value = self.entry(name)
        elif self.parent is not None:
            value = self.steer(self.parent.read(name))
        else:
            value = self.resolve(name)
        self.env[name] = value
        return value

    def steer(self, outer):
        """``outer`` (a value of the parent) inside this region; names bound to one value share
        one STEER."""
        if not isinstance(outer, Ref):
            return outer
        if outer not in self.steered:
            self.steered[outer] = self.compiler.steer_in(self, outer)
        return self.steered[outer]

    def state(self):
        return dict(self.env), set(self.assigned), dict(self.tokens), dict(self.steered), self.done

    def restore(self, state):
        env, assigned, tokens, steered, self.done = state
        self.env, self.assigned, self.tokens, self.steered = dict(env), set(assigned), dict(tokens), \
            dict(steered)

    def knows(self, name) -> bool:
        if name in self.env:
            return True
        if self._knows is not None:
            return self._knows(name)
        if self.parent is not None:
            return self.parent.knows(name)
        return False

    def write(self, name, value):
        self.env[name] = value
        self.assigned.add(name)

    def forget(self, name):
        self.env.pop(name, None)
        self.assigned.discard(name)

    @staticmethod
    def is_ref(value) -> bool:
        return isinstance(value, Ref)
