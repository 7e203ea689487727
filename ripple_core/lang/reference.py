"""The reference semantics: a kernel's own source run by CPython with 32-bit C-like ints.

The source is rewritten so that every arithmetic result wraps to 32-bit two's complement (``//``
truncates toward zero, ``%`` takes the dividend's sign, ``>>`` is arithmetic, shift amounts are
taken mod 32, integer literals wrap), every stored word wraps, arrays are bounds-checked lists,
``async def`` tasks become plain functions and ``async for`` a plain ``for``. ``push`` appends to
a worklist that runs to completion in FIFO order after the kernel body; any order is a legal
Ripple schedule for a correct program (tasks do not order memory against each other, so a
program whose result depends on the order is racy). ``atomic`` is a no-op (one invocation runs
at a time here) and ``out(name, v)`` appends to the output list ``name``. This module shares no
code with the compiler's lowering, so the two check each other.
"""

import ast
import copy
from collections import deque

from .api import Kernel, atomic, ind, out, push
from .source import source_of

__all__ = ["run_reference", "wrap32"]


def wrap32(value) -> int:
    value = int(value) & 0xFFFF_FFFF
    return value - (1 << 32) if value & 0x8000_0000 else value


def _trunc_div(a, b):
    if b == 0:
        raise ZeroDivisionError("division by zero in the kernel")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _binary(op: str, a, b) -> int:
    a, b = int(a), int(b)
    if op == "Add":
        return wrap32(a + b)
    if op == "Sub":
        return wrap32(a - b)
    if op == "Mult":
        return wrap32(a * b)
    if op == "BitAnd":
        return wrap32(a & b)
    if op == "BitOr":
        return wrap32(a | b)
    if op == "BitXor":
        return wrap32(a ^ b)
    if op == "LShift":
        return wrap32(a << (b & 31))
    if op == "RShift":
        return wrap32(wrap32(a) >> (b & 31))
    if op == "FloorDiv":
        return wrap32(_trunc_div(a, b))
    if op == "Mod":
        return wrap32(a - _trunc_div(a, b) * b)
    raise TypeError(f"operator {op} has no 32-bit integer meaning")


def _unary(op: str, a) -> int:
    a = int(a)
    return wrap32(-a) if op == "USub" else wrap32(~a) if op == "Invert" else wrap32(a)


class _Words(list):
    """An array: a list of 32-bit words whose indices must lie inside it."""

    def __init__(self, name, words):
        super().__init__(wrap32(w) for w in words)
        self.name = name

    def _check(self, index):
        index = int(index)
        if not 0 <= index < len(self):
            raise IndexError(f"{self.name}[{index}] is outside the array's {len(self)} words")
        return index

    def __getitem__(self, index):
        return super().__getitem__(self._check(index))

    def __setitem__(self, index, value):
        super().__setitem__(self._check(index), wrap32(value))


class _Rewrite(ast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        call = ast.Call(ast.Name("__rl_bin", ast.Load()),
                        [ast.Constant(type(node.op).__name__), node.left, node.right], [])
        return ast.copy_location(call, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return node
        return ast.copy_location(ast.Call(ast.Name("__rl_un", ast.Load()),
                                          [ast.Constant(type(node.op).__name__), node.operand], []), node)

    def visit_Constant(self, node):
        if isinstance(node.value, int) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Constant(wrap32(node.value)), node)
        return node

    def visit_AugAssign(self, node):
        target = node.target
        load = copy.deepcopy(target)
        for part in ast.walk(load):
            if hasattr(part, "ctx"):
                part.ctx = ast.Load()
        value = ast.BinOp(left=load, op=node.op, right=node.value)
        return self.visit(ast.copy_location(ast.Assign([target], value), node))

    def visit_AsyncFunctionDef(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.FunctionDef(node.name, node.args, node.body, [], node.returns), node)

    def visit_AsyncFor(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.For(node.target, node.iter, node.body, node.orelse), node)


class _Runtime:
    def __init__(self):
        self.work = deque()
        self.outputs = {}

    def push(self, task, *values):
        self.work.append((task, tuple(wrap32(v) for v in values)))

    def out(self, name, value):
        self.outputs.setdefault(name, []).append(wrap32(value))

    def drain(self):
        while self.work:
            task, values = self.work.popleft()
            task(*values)


class _NoLock:
    def __init__(self, address):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _function(target, runtime, cache):
    """The rewritten function of a kernel or helper, run against ``runtime``."""
    fn = target.fn if isinstance(target, Kernel) else target
    if fn in cache:
        return cache[fn]
    src = source_of(fn)
    tree = _Rewrite().visit(copy.deepcopy(src.tree))
    tree.decorator_list = []
    ast.increment_lineno(tree, src.first_line - 1)     # a traceback names the file's own lines
    module = ast.fix_missing_locations(ast.Module([tree], type_ignores=[]))
    namespace = dict(src.names)
    for name, value in src.names.items():
        if value is push:
            namespace[name] = runtime.push
        elif value is out:
            namespace[name] = runtime.out
        elif value is atomic:
            namespace[name] = _NoLock
        elif value is ind:
            namespace[name] = lambda f: f
        elif isinstance(value, Kernel):
            namespace[name] = _Lazy(value, runtime, cache)
        elif isinstance(value, int):        # module and closure constants are 32-bit words too
            namespace[name] = wrap32(value)
    namespace.update(__rl_bin=_binary, __rl_un=_unary)
    exec(compile(module, src.filename, "exec"), namespace)
    cache[fn] = namespace[tree.name]
    return cache[fn]


class _Lazy:
    def __init__(self, target, runtime, cache):
        self.target, self.runtime, self.cache = target, runtime, cache

    def __call__(self, *args):
        result = _function(self.target, self.runtime, self.cache)(*args)
        return None if result is None else wrap32(result)


def run_reference(kernel_fn, args: dict, memory: dict):
    """Run ``kernel_fn`` on scalar ``args`` and array ``memory`` (name -> list of words).
    Returns (final memory: name -> list, outputs: name -> list, return value or None)."""
    runtime = _Runtime()
    fn = _function(kernel_fn, runtime, {})
    tree = source_of(kernel_fn).tree
    arrays = {name: _Words(name, words) for name, words in memory.items()}
    values = []
    for param in tree.args.args:
        if param.arg in arrays:
            values.append(arrays[param.arg])
        else:
            values.append(wrap32(args[param.arg]))
    result = fn(*values)
    runtime.drain()
    return ({name: list(words) for name, words in arrays.items()}, runtime.outputs,
            None if result is None else wrap32(result))
