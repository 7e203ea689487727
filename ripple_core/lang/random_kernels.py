"""Random kernels inside the Ripple language, for differential testing of the compiler.

:func:`generate` turns a seed into a :class:`Program`: the *source text* of a module with an
``@kernel`` (and maybe ``@inline`` helpers and int constants), plus inputs. :func:`check` compiles
it, runs the graph on the golden model (slot depth 2 and unbounded) and the kernel under
:func:`~ripple_core.lang.reference.run_reference`, and compares every array, output and the
return value. A program the compiler refuses counts as a generator bug: everything generated is
meant to lie inside the subset.

What the generator keeps true, so that CPython and the fabric must agree:

* every array index is masked ``& (size - 1)`` (sizes are powers of two) or is a loop variable
  whose constant range lies inside the array; loops are bounded (``for range`` with small
  constant or small-argument bounds, ``while`` loops driven by a counter the body cannot assign);
* a name is read only where it is defined on every path (variables first assigned inside a
  branch or a loop body are forgotten after it), and loop variables are never read after
  their loop;
* in mode "ripple" each array has one role: ``in`` (read by everyone, written by no one),
  ``body`` (the kernel body's own, ordered accesses), ``acc`` (only read-modify-writes with one
  commutative operator per array, each inside ``with atomic(index)``), ``own`` (written by one
  top-level ``async for`` at its own index, each index once) or ``priv`` (commutative
  read-modify-writes by one serial task, whose invocations do not overlap). Then the final
  memory does not depend on the schedule. Every push inside a task is guarded by ``if d > 0``
  and passes ``d - 1`` as the depth (each task's first parameter), so the worklist ends.
"""

from __future__ import annotations

import itertools
import linecache
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from . import source as _source
from .api import Kernel

__all__ = ["Program", "Outcome", "generate", "kernel_from_source", "check", "shrink"]

HEADER = "from ripple_core.lang import Array, atomic, ind, inline, kernel, out, push\n"
KERNEL = "fuzzed"
_BINOPS = ("+", "-", "*", "&", "|", "^", "<<", ">>")
_COMPARES = ("==", "!=", "<", "<=", ">", ">=")
_EDGES = (0, 1, -1, 2, 3, 7, -8, 31, 32, 33, 255, -256, 1000, 0x7FFFFFFF, -0x80000000, 0xFFFFFFFF,
          0x80000000, 0x12345678, -123456789)
_ACC_OPS = ("+", "+", "^", "|", "&", "max", "min")
_files = itertools.count()


def kernel_from_source(text: str, name: str = KERNEL, filename: str | None = None):
    """Execute module source ``text`` and return its ``name`` (a ``@kernel``). The text is
    registered with :mod:`linecache` under ``filename``, so the compiler and the reference can
    read the kernel's source and ``file:line`` in messages points into it."""
    filename = filename or f"<kernel source {next(_files)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"__name__": f"ripple_random_{next(_files)}"}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


def forget(kernel_fn, filename: str):
    """Drop what :func:`kernel_from_source` and the source cache keep for one program."""
    linecache.cache.pop(filename, None)
    for value in kernel_fn.fn.__globals__.values():
        if isinstance(value, Kernel):
            _source._CACHE.pop(value.fn, None)


@dataclass
class Program:
    seed: int
    mode: str                       # "ordered" or "ripple"
    source: str
    args: dict
    memory: dict
    features: Counter = field(default_factory=Counter)

    @property
    def filename(self) -> str:
        return f"<random kernel {self.seed}>"

    def describe(self) -> str:
        return (f"seed {self.seed} (mode {self.mode}), args {self.args}, memory {self.memory}\n"
                + "\n".join(f"{k + 1:3} {line}" for k, line in enumerate(self.source.splitlines())))


# generation -----------------------------------------------------------------------------------

@dataclass
class _Task:
    name: str
    ind: bool
    params: list
    priv: list = field(default_factory=list)
    pushes: int = 0


@dataclass
class _Ctx:
    vars: list                                  # readable scalar names
    frozen: set = field(default_factory=set)    # readable but not assignable
    ranges: dict = field(default_factory=dict)  # loop variable -> (lo, hi) when constant
    reads: list = field(default_factory=list)   # arrays a plain load may read
    writes: list = field(default_factory=list)  # arrays a plain store may write
    task: _Task | None = None
    helper: bool = False
    top: bool = False                           # the kernel body's top level
    atomic: bool = False
    mult: int = 1                               # iterations of the enclosing loops, at most
    nest: int = 0
    own: tuple | None = None                    # (array, index variable) inside its writer
    in_async: bool = False

    def child(self, **changes) -> _Ctx:
        fields = dict(self.__dict__, vars=list(self.vars), frozen=set(self.frozen), ranges=dict(self.ranges),
                      top=False, nest=self.nest + 1)
        fields.update(changes)
        return _Ctx(**fields)


class _Gen:
    def __init__(self, seed: int, mode: str, max_lock_sites: int | None = None):
        self.rng = random.Random(seed)
        self.mode = mode
        self.lock_sites_left = max_lock_sites      # None: any number of `with atomic` statements
        self.names = Counter()
        self.left = self.rng.randint(8, 32)     # statements still to generate
        self.features = Counter()
        self.helpers: list[tuple[str, int]] = []
        self.consts: list[str] = []
        self.sizes: dict[str, int] = {}
        self.roles: dict[str, str] = {}
        self.acc_ops: dict[str, str] = {}
        self.acc_size = 1
        self.priv_ops: dict[str, str] = {}
        self.tasks: list[_Task] = []
        self.kernel_async = False

    def fresh(self, prefix: str) -> str:
        self.names[prefix] += 1
        return f"{prefix}{self.names[prefix] - 1}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # expressions ------------------------------------------------------------------------------
    def literal(self) -> str:
        value = self.rng.randint(-9, 9) if self.chance(0.75) else self.rng.choice(_EDGES)
        if value < 0:
            return f"({value})"
        return hex(value) if value > 255 and self.chance(0.5) else str(value)

    def leaf(self, ctx: _Ctx) -> str:
        r = self.rng.random()
        if ctx.vars and r < 0.6:
            return self.rng.choice(ctx.vars)
        if self.consts and r < 0.68:
            return self.rng.choice(self.consts)
        return self.literal()

    def expr(self, ctx: _Ctx, depth: int = 2) -> str:
        rng = self.rng
        if depth <= 0 or self.chance(0.22):
            return self.leaf(ctx)
        kinds = ["bin", "cmp", "un", "ifexp", "bool", "load", "call", "fold", "own"]
        weights = [40, 10, 8, 7, 5, 14 if ctx.reads else 0, 5 if self.helpers else 0, 2,
                   6 if ctx.own else 0]
        kind = rng.choices(kinds, weights)[0]
        self.features["expr-" + kind] += 1
        a = self.expr(ctx, depth - 1)
        if kind == "bin":
            op = rng.choice(_BINOPS)
            self.features["op" + op] += 1
            return f"({a} {op} {self.expr(ctx, depth - 1)})"
        if kind == "cmp":
            return self.compare(ctx, depth, a)
        if kind == "un":
            return f"({rng.choice(['-', '~', 'not '])}{a})"
        if kind == "ifexp":
            return f"({a} if {self.condition(ctx, depth - 1)} else {self.expr(ctx, depth - 1)})"
        if kind == "bool":
            return self.condition(ctx, depth)
        if kind == "load":
            array = rng.choice(ctx.reads)
            return f"{array}[{self.index(ctx, array, depth - 1)}]"
        if kind == "call":
            name, arity = rng.choice(self.helpers)
            return f"{name}({', '.join(self.expr(ctx, depth - 1) for _ in range(arity))})"
        if kind == "own":
            return f"{ctx.own[0]}[{ctx.own[1]}]"
        a, b = rng.randint(-99, 99), rng.choice([-7, -3, -2, 2, 3, 5, 8])
        return f"({a} {rng.choice(['//', '%'])} {b})"

    def compare(self, ctx, depth, left=None) -> str:
        left = left or self.expr(ctx, depth - 1)
        text = f"{left} {self.rng.choice(_COMPARES)} {self.expr(ctx, depth - 1)}"
        if self.chance(0.1):
            self.features["chained-compare"] += 1
            text += f" {self.rng.choice(_COMPARES)} {self.expr(ctx, depth - 1)}"
        return f"({text})"

    def condition(self, ctx, depth) -> str:
        r = self.rng.random()
        if depth <= 0 or r < 0.6:
            return self.compare(ctx, depth)
        if r < 0.75:
            return f"(not {self.condition(ctx, depth - 1)})"
        op = self.rng.choice(["and", "or"])
        return f"({self.condition(ctx, depth - 1)} {op} {self.condition(ctx, depth - 1)})"

    def test(self, ctx) -> str:
        """An if/ifexp test: any int or a condition."""
        return self.condition(ctx, 2) if self.chance(0.6) else self.expr(ctx, 2)

    def index(self, ctx, array, depth=1) -> str:
        size = self.sizes[array]
        inside = [v for v, (lo, hi) in ctx.ranges.items() if 0 <= lo and hi < size]
        if inside and self.chance(0.4):
            return self.rng.choice(inside)
        if size == 1:
            return "0" if self.chance(0.5) else f"({self.expr(ctx, depth)} & 0)"
        return f"({self.expr(ctx, depth)} & {size - 1})"

    # statements -------------------------------------------------------------------------------
    def block(self, ctx: _Ctx, indent: int, most: int = 4) -> list[str]:
        lines = []
        for _ in range(self.rng.randint(1, most)):
            if self.left <= 0 and lines:
                break
            lines += self.stmt(ctx, indent)
        return lines

    def stmt(self, ctx: _Ctx, indent: int) -> list[str]:
        self.left -= 1
        pad = "    " * indent
        assignable = [v for v in ctx.vars if v not in ctx.frozen]
        deep = ctx.nest < 3 and self.left > 0
        ripple = self.mode == "ripple" and not ctx.helper
        kinds = {
            "assign": 10, "aug": 6 if assignable else 0, "store": 7 if ctx.writes else 0,
            "out": 0 if ctx.helper else 3, "if": 7 if deep else 0,
            "for": 6 if deep and ctx.mult <= 8 else 0, "while": 3 if deep and ctx.mult <= 8 else 0,
            "push": 6 if ripple and self.tasks and self._may_push(ctx) else 0,
            "atomic": 5 if ripple and self.acc_ops and not ctx.atomic and self.lock_sites_left != 0 else 0,
            "async_for": 3 if ripple and deep and not ctx.atomic and ctx.mult <= 4 else 0,
            "priv": 6 if ctx.task is not None and ctx.task.priv and not ctx.in_async else 0,
        }
        kind = self.rng.choices(list(kinds), list(kinds.values()))[0]
        self.features[kind] += 1
        return getattr(self, "stmt_" + kind)(ctx, pad, indent)

    def stmt_assign(self, ctx, pad, indent):
        assignable = [v for v in ctx.vars if v not in ctx.frozen]
        value = self.expr(ctx, self.rng.randint(1, 3))
        if assignable and self.chance(0.45):
            target = self.rng.choice(assignable)
        else:
            target = self.fresh(self._prefix(ctx))
            ctx.vars.append(target)
        return [f"{pad}{target} = {value}"]

    def _prefix(self, ctx) -> str:
        if ctx.helper:
            return "hv"
        return f"{ctx.task.name}v" if ctx.task is not None else "v"

    def stmt_aug(self, ctx, pad, indent):
        target = self.rng.choice([v for v in ctx.vars if v not in ctx.frozen])
        return [f"{pad}{target} {self.rng.choice(_BINOPS)}= {self.expr(ctx, 2)}"]

    def stmt_store(self, ctx, pad, indent):
        array = self.rng.choice(ctx.writes)
        index = self.index(ctx, array)
        if self.chance(0.3):
            self.features["store-aug"] += 1
            return [f"{pad}{array}[{index}] {self.rng.choice(_BINOPS)}= {self.expr(ctx, 2)}"]
        return [f"{pad}{array}[{index}] = {self.expr(ctx, self.rng.randint(1, 3))}"]

    def stmt_out(self, ctx, pad, indent):
        return [f'{pad}out("{self.fresh("o")}", {self.expr(ctx, 2)})']

    def stmt_if(self, ctx, pad, indent):
        lines = [f"{pad}if {self.test(ctx)}:"]
        arms = 1 + self.rng.choice([0, 1, 1, 2])
        has_else = arms > 1 and self.chance(0.7) or arms == 1 and self.chance(0.4)
        diamond = has_else and self.chance(0.35)
        fresh = self.fresh(self._prefix(ctx)) if diamond else None
        bodies = arms + has_else
        for k in range(bodies):
            if k:
                lines.append(f"{pad}{'else' if k == bodies - 1 and has_else else 'elif ' + self.test(ctx)}:")
            inner = ctx.child()
            if fresh:
                lines.append(f"{pad}    {fresh} = {self.expr(inner, 2)}")
            lines += self.block(inner, indent + 1, 3)
        if fresh:
            self.features["if-defines-on-all-paths"] += 1
            ctx.vars.append(fresh)
        return lines

    def bound(self, ctx) -> tuple[str, int, int | None]:
        """(text, most, constant value or None) of a small loop bound."""
        small = [v for v in ctx.vars if v.startswith("n") and v[1:].isdigit()]
        r = self.rng.random()
        if r < 0.35 or not small and r < 0.6:
            value = self.rng.randint(0, 5)
            return str(value), value, value
        if r < 0.6 and small:
            return self.rng.choice(small), 5, None
        if r < 0.8:
            return f"({self.expr(ctx, 1)} & 3)", 3, None
        if small:
            return f"({self.rng.choice(small)} - 1)", 4, None
        return f"({self.expr(ctx, 1)} & 1)", 1, None

    def stmt_for(self, ctx, pad, indent, asynchronous=False, own=None):
        var = self.fresh("i")
        form = self.rng.choice(["stop", "start", "inclusive", "down", "step"]) if own is None else "own"
        text, most, value = self.bound(ctx)
        span = None
        if form == "stop":
            head = f"range({text})"
            span = (0, value - 1) if value is not None else None
        elif form == "start":
            start = self.rng.randint(-2, 2)
            head = f"range({start}, {text})"
            most -= start
            span = (start, value - 1) if value is not None else None
        elif form == "inclusive":
            start = self.rng.randint(-1, 2)
            head = f"range({start}, {text} + 1)"
            most += 1 - start
            span = (start, value) if value is not None else None
        elif form == "down":
            stop, step = self.rng.randint(-2, 1), self.rng.choice([1, 1, 2, 3])
            head = f"range({text}, {stop}, {-step})"
            most = (most - stop) // step + 1
            if value is not None and value > stop:
                span = (value - (value - stop - 1) // step * step, value)
        elif form == "step":
            start, step = self.rng.randint(-1, 2), self.rng.choice([2, 3])
            head = f"range({start}, {text}, {step})"
            most = (most - start) // step + 1
            if value is not None and value > start:
                span = (start, start + (value - start - 1) // step * step)
        else:                                   # the writer of an own array: each index once
            size = self.sizes[own]
            count = self.rng.randint(1, size)
            if self.chance(0.5):
                head, span = f"range({count})", (0, count - 1)
            else:
                head, span = f"range({size - 1}, {size - 1 - count}, -1)", (size - count, size - 1)
            most = count
        self.features[f"for-{form}"] += 1
        most = max(most, 1)
        inner = ctx.child(mult=ctx.mult * most)
        inner.vars.append(var)
        inner.frozen.add(var)
        if span is not None and span[0] <= span[1]:
            inner.ranges[var] = span
        lines = [f"{pad}{'async ' if asynchronous else ''}for {var} in {head}:"]
        if asynchronous:
            self._async_body(ctx, inner, own, var)
            if own is not None:
                lines.append(f"{pad}    {own}[{var}] = {self.expr(inner, 2)}")
        lines += self.block(inner, indent + 1, 4)
        if own is not None and self.chance(0.4):
            lines.append(f"{pad}    {own}[{var}] = ({own}[{var}] * 3) + {self.expr(inner, 1)}")
        return lines

    def stmt_while(self, ctx, pad, indent):
        counter = self.fresh(self._prefix(ctx))
        text, most, _ = self.bound(ctx)
        inner = ctx.child(mult=ctx.mult * max(most, 1))
        inner.vars.append(counter)
        inner.frozen.add(counter)
        if self.chance(0.6):
            start = self.rng.randint(-1, 1)
            lines = [f"{pad}{counter} = {start}"]
            test, step = f"{counter} < {text}", f"{pad}    {counter} += 1"
        else:
            lines = [f"{pad}{counter} = {text}"]
            test, step = f"{counter} > {self.rng.randint(-1, 1)}", f"{pad}    {counter} -= 1"
        if self.chance(0.3):
            self.features["while-and"] += 1
            test = f"{test} and {self.condition(inner, 1)}"
        lines.append(f"{pad}while {test}:")
        lines += self.block(inner, indent + 1, 4)
        lines.append(step)
        ctx.vars.append(counter)
        return lines

    # Ripple -----------------------------------------------------------------------------------
    def _may_push(self, ctx) -> bool:
        if ctx.task is None:
            return ctx.mult <= 4
        return ctx.mult <= 2 and ctx.task.pushes < 2 and "d" in ctx.vars

    def stmt_push(self, ctx, pad, indent):
        task = self.rng.choice(self.tasks)
        values = [self.expr(ctx, 2) for _ in task.params[1:]]
        if ctx.task is None:
            depth = str(self.rng.randint(0, 2)) if self.chance(0.7) else f"({self.leaf(ctx)} & 1)"
            return [f"{pad}push({', '.join([task.name, depth, *values])})"]
        ctx.task.pushes += 1
        guard = "d > 0" if self.chance(0.6) else f"d > 0 and {self.condition(ctx, 1)}"
        return [f"{pad}if {guard}:", f"{pad}    push({', '.join([task.name, 'd - 1', *values])})"]

    def stmt_atomic(self, ctx, pad, indent):
        if self.lock_sites_left is not None:
            self.lock_sites_left -= 1
        size, lines = self.acc_size, []
        r = self.rng.random()
        inner = ctx.child(atomic=True, nest=ctx.nest)
        if size == 1:
            address = index = "0"
        elif r < 0.6:
            address = index = self.fresh(self._prefix(ctx))
            lines.append(f"{pad}{address} = {self.expr(ctx, 2)} & {size - 1}")
            ctx.vars.append(address)
            inner.vars.append(address)
        else:
            source = self.rng.choice(ctx.vars) if ctx.vars else "0"
            address = index = f"({source} & {size - 1})"
            inner.frozen.add(source)
        inner.frozen.add(address)
        self.features["atomic-" + ("var" if address.isidentifier() else "expr")] += 1
        lines.append(f"{pad}with atomic({address}):")
        parts = [[self.update(inner, pad + "    ", array, index)]
                 for array in self.rng.sample(sorted(self.acc_ops), self.rng.randint(1, len(self.acc_ops)))]
        if self.chance(0.5):                # other statements, in order, among the updates
            at = sorted(self.rng.randint(0, len(parts)) for _ in range(self.rng.randint(1, 2)))
            for k, place in enumerate(at):
                parts.insert(place + k, self.stmt(inner, indent + 1))
        return lines + [line for part in parts for line in part]

    def update(self, ctx, pad, array, index, op=None) -> str:
        """A commutative read-modify-write of ``array[index]``."""
        op = op or self.acc_ops[array]
        value = self.expr(ctx, 2)
        word = f"{array}[{index}]"
        self.features["rmw" + op] += 1
        if op in ("max", "min"):
            better = ">" if op == "max" else "<"
            return f"{pad}{word} = ({value} if {value} {better} {word} else {word})"
        if op == "+" and self.chance(0.3):
            return f"{pad}{word} -= {value}"
        return self.rng.choice([f"{pad}{word} {op}= {value}", f"{pad}{word} = {word} {op} {value}",
                                f"{pad}{word} = {value} {op} {word}"])

    def stmt_priv(self, ctx, pad, indent):
        array = self.rng.choice(ctx.task.priv)
        return [self.update(ctx, pad, array, self.index(ctx, array), self.priv_ops[array])]

    def stmt_async_for(self, ctx, pad, indent):
        return self.stmt_for(ctx, pad, indent, asynchronous=True)

    def _async_body(self, ctx, inner, own, var):
        """An async for body runs as its own task: it may not assign enclosing variables."""
        self.features["async-for" + ("-own" if own else "")] += 1
        if ctx.task is None:
            self.kernel_async = True
        inner.frozen |= set(ctx.vars)
        inner.writes = []
        inner.reads = [a for a in inner.reads if self.roles.get(a) == "in"]
        inner.own = (own, var) if own else None
        inner.in_async = True

    # the program ------------------------------------------------------------------------------
    def helper(self) -> list[str]:
        name = self.fresh("h")
        arity = self.rng.randint(1, 3)
        params = [f"{name}x{k}" for k in range(arity)]
        ctx = _Ctx(vars=list(params), helper=True, nest=1)
        saved, self.left = self.left, self.rng.randint(1, 4)
        body = self.block(ctx, 1, 3)
        self.left = saved
        shown = ", ".join(p + (": int" if self.chance(0.5) else "") for p in params)
        lines = ["@inline", f"def {name}({shown}):", *body, f"    return {self.expr(ctx, 2)}", "", ""]
        self.helpers.append((name, arity))
        return lines

    def program(self, seed: int) -> Program:
        rng, ripple = self.rng, self.mode == "ripple"
        module = [HEADER, ""]
        for _ in range(rng.choice([0, 0, 1, 2])):
            name = f"K{len(self.consts)}"
            module.append(f"{name} = {rng.choice(_EDGES + tuple(range(-5, 6)))}")
            self.consts.append(name)
        module += ["", ""]
        for _ in range(rng.choice([0, 0, 1, 2])):
            module += self.helper()
        # the signature
        params, args, memory = [], {}, {}
        for k in range(rng.randint(1, 2)):
            params.append((f"n{k}", "int"))
            args[f"n{k}"] = rng.randint(-2, 5) if rng.random() < 0.15 else rng.randint(0, 5)
        for k in range(rng.randint(0, 3)):
            params.append((f"a{k}", "int"))
            args[f"a{k}"] = self.value()
        array_names = [chr(ord("A") + k) for k in range(rng.randint(1, 3))]
        for array in array_names:
            self.sizes[array] = rng.choice([1, 2, 4, 4, 8, 8, 16])
            memory[array] = [self.value() for _ in range(self.sizes[array])]
            params.append((array, "Array"))
        rng.shuffle(params)
        # the roles
        if ripple:
            for array in array_names:
                self.roles[array] = rng.choice(["in", "body", "acc", "acc", "own", "priv"])
            accs = [a for a in array_names if self.roles[a] == "acc"]
            if accs:
                self.acc_size = self.sizes[accs[0]]
                for array in accs:         # one lock address per word: the same size for all
                    self.sizes[array] = self.acc_size
                    memory[array] = memory[array][:1] * self.acc_size if len(memory[array]) < \
                        self.acc_size else memory[array][:self.acc_size]
            self.acc_ops = {a: rng.choice(_ACC_OPS) for a in array_names if self.roles[a] == "acc"}
            self.priv_ops = {a: rng.choice(_ACC_OPS) for a in array_names if self.roles[a] == "priv"}
        scalars = [name for name, kind in params if kind == "int"]
        reads = array_names if not ripple else [a for a in array_names if self.roles[a] in ("in", "body")]
        writes = array_names if not ripple else [a for a in array_names if self.roles[a] == "body"]
        # the body may assign the a* arguments; a task reading one would be refused, so in mode
        # ripple only some are assignable and tasks read only the others
        mutable = {a for a in scalars if a.startswith("a") and (not ripple or self.chance(0.5))}
        tasks = self.make_tasks([a for a in scalars if a not in mutable], array_names) if ripple else []
        body: list[str] = []
        ctx = _Ctx(vars=list(scalars), frozen={n for n in scalars if n not in mutable},
                   reads=list(reads), writes=list(writes), top=True)
        if ripple:
            for array in array_names:
                if self.roles[array] == "own":
                    body += self.stmt_for(ctx, "    ", 1, asynchronous=True, own=array)
        while self.left > 0:
            body += self.stmt(ctx, 1)
        for task in self.tasks:             # every task has a live push site (the graph needs one)
            if not any(line.startswith(f"    push({task.name},") for line in body) or self.chance(0.15):
                values = [self.expr(ctx, 1) for _ in task.params[1:]]
                body.append(f"    push({', '.join([task.name, str(self.rng.randint(1, 2)), *values])})")
        if self.chance(0.5):
            body.append(f"    return {self.expr(ctx, 2)}")
            self.features["return"] += 1
        is_async = self.kernel_async or (ripple and self.chance(0.1))
        signature = ", ".join(f"{name}: {kind}" for name, kind in params)
        module += ["@kernel", f"{'async ' if is_async else ''}def {KERNEL}({signature}):", *tasks, *body, ""]
        return Program(seed, self.mode, "\n".join(module), args, memory, self.features)

    def make_tasks(self, scalars, arrays) -> list[str]:
        privs = [a for a in arrays if self.roles[a] == "priv"]
        count = self.rng.randint(1, 3)
        for k in range(count):
            extra = self.rng.randint(0, 2)
            task = _Task(f"t{k}", self.chance(0.6), ["d"] + [f"t{k}p{j}" for j in range(extra)])
            self.tasks.append(task)
        if privs:
            serial = [t for t in self.tasks if not t.ind]
            if not serial:
                self.tasks[-1].ind = False
                serial = [self.tasks[-1]]
            self.rng.choice(serial).priv = privs
        lines = []
        reads = [a for a in arrays if self.roles[a] == "in"]
        for task in self.tasks:
            ctx = _Ctx(vars=list(scalars) + task.params, frozen=set(scalars) | {"d"}, reads=list(reads),
                       task=task, nest=1)
            saved, self.left = self.left, self.rng.randint(2, 8)
            body = self.block(ctx, 2, 5)
            self.left = saved
            self.features["task-" + ("ind" if task.ind else "serial")] += 1
            if task.ind:
                lines.append("    @ind")
            lines += [f"    async def {task.name}({', '.join(task.params)}):", *body]
        return lines

    def value(self) -> int:
        r = self.rng.random()
        if r < 0.6:
            return self.rng.randint(-20, 20)
        if r < 0.8:
            return self.rng.choice(_EDGES)
        return self.rng.randint(-2**31, 2**31 - 1)


def generate(seed: int, mode: str | None = None, *, max_lock_sites: int | None = None) -> Program:
    """The random program of ``seed``; ``mode`` None picks "ordered" or "ripple" from the seed.
    ``max_lock_sites`` bounds the `with atomic` statements (None: any number; the suite's tests
    use 1, since kernels with several lock sites can still deadlock: docs/ripple-language.md)."""
    if mode is None:
        mode = random.Random(seed ^ 0x5EED).choice(["ordered", "ripple"])
    return _Gen(seed, mode, max_lock_sites).program(seed)


# the differential check -------------------------------------------------------------------------

@dataclass
class Outcome:
    kind: str   # ok refused compiler-crash reference deadlock runaway crash leftovers mismatch
    detail: str = ""
    cycles: int = 0     # golden-model cycles at depth 2

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def check(program: Program, depths=(2, None), max_cycles: int = 200_000, transform=None) -> Outcome:
    """Compile ``program``, run it on the golden model at each slot depth and under the reference,
    and compare. Task outputs (any output of a graph with tasks) are compared as multisets.
    ``transform``: a graph-to-graph pass (such as ``ripple_core.tuples.split_tuples``) applied to
    the compiled graph before it runs, so that the pass is judged by the same reference."""
    from ripple_core.interp import DeadlockError, RunawayError, run

    from .compiler import compile_kernel
    from .errors import LangError
    from .reference import run_reference

    fn = kernel_from_source(program.source, KERNEL, program.filename)
    try:
        try:
            graph = compile_kernel(fn, mode=program.mode)
        except LangError as error:
            return Outcome("refused", str(error))
        except Exception as error:  # noqa: BLE001  (any other exception is a compiler bug)
            return Outcome("compiler-crash", f"{type(error).__name__}: {error}")
        if transform is not None:
            graph = transform(graph)
        try:
            memory, outputs, returned = run_reference(fn, dict(program.args),
                                                      {k: list(v) for k, v in program.memory.items()})
        except Exception as error:  # noqa: BLE001
            return Outcome("reference", f"{type(error).__name__}: {error}")
        exact = not any(node.op == "TASK" for node in graph.nodes.values())
        cycles = 0
        for depth in depths:
            try:
                result = run(graph, dict(program.args), {k: list(v) for k, v in program.memory.items()},
                             depth=depth, max_cycles=max_cycles)
            except DeadlockError as error:
                return Outcome("deadlock", f"depth {depth}: {error}")
            except RunawayError as error:
                return Outcome("runaway", f"depth {depth}: {error}")
            except Exception as error:  # noqa: BLE001
                return Outcome("crash", f"depth {depth}: {type(error).__name__}: {error}")
            if depth == depths[0]:
                cycles = result.cycles
            if not result.drained:
                return Outcome("leftovers", f"depth {depth}: {result.leftovers}")
            wrong = [f"array {name}: got {result.arrays[name]}, want {words}"
                     for name, words in memory.items() if result.arrays[name] != words]
            got = {name: values for name, values in result.outputs.items() if values}
            got_return = got.pop("return", [])
            if got_return != ([] if returned is None else [returned]):
                wrong.append(f"return: got {got_return}, want {returned}")
            want = {name: values for name, values in outputs.items() if values}
            for name in sorted(set(got) | set(want)):
                a, b = got.get(name, []), want.get(name, [])
                if (a != b) if exact else (sorted(a) != sorted(b)):
                    wrong.append(f"output {name}: got {a}, want {b}")
            if wrong:
                return Outcome("mismatch", f"depth {depth}: " + "; ".join(wrong), cycles)
        return Outcome("ok", cycles=cycles)
    finally:
        forget(fn, program.filename)


# shrinking ------------------------------------------------------------------------------------

_STEP = re.compile(r"\w+ [-+]= 1$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _statement_end(lines, start) -> int:
    end, depth = start + 1, _indent(lines[start])
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > depth):
        end += 1
    return end


def _patch_empty_blocks(lines) -> list[str]:
    """Insert ``pass`` where a header lost its whole block."""
    out = []
    for k, line in enumerate(lines):
        out.append(line)
        if line.rstrip().endswith(":") and line.strip() and not line.lstrip().startswith("#"):
            following = next((x for x in lines[k + 1:] if x.strip()), None)
            if following is None or _indent(following) <= _indent(line):
                out.append(" " * (_indent(line) + 4) + "pass")
    return out


def shrink(program: Program, still_fails=None, rounds: int = 20) -> Program:
    """A smaller program that fails the same way: statements (with their blocks) are removed, and
    compound statements replaced by their dedented bodies, while ``still_fails`` holds (by default:
    :func:`check` gives the same outcome kind)."""
    if still_fails is None:
        kind = check(program).kind

        def still_fails(candidate):
            return check(candidate).kind == kind

    def attempt(lines):
        candidate = Program(program.seed, program.mode, "\n".join(_patch_empty_blocks(lines)) + "\n",
                            program.args, program.memory)
        try:
            return candidate if still_fails(candidate) else None
        except Exception:  # noqa: BLE001  (a candidate that does not even run is not a reduction)
            return None

    best = program
    for _ in range(rounds):
        lines = best.source.splitlines()
        improved = False
        for start in reversed(range(len(lines))):
            if start >= len(lines):
                continue
            line = lines[start]
            text = line.strip()
            if _indent(line) < 4 or not text or text.startswith(("def ", "async def ")) or \
                    _STEP.match(text):      # a while loop's counter step: removing it never ends
                continue
            end = _statement_end(lines, start)
            found = attempt(lines[:start] + lines[end:])
            if found is None and text.endswith(":") and end > start + 1 and not text.startswith("if d > 0"):
                inner = [x[4:] if x.startswith("    ") else x for x in lines[start + 1:end]]
                found = attempt(lines[:start] + inner + lines[end:])
            if found is not None:
                best, lines, improved = found, found.source.splitlines(), True
        if not improved:
            break
    return best
