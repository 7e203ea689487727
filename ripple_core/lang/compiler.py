"""Lowering a kernel's Python AST to an ordered-dataflow graph, region by region.

* **Regions** (:mod:`.values`): each statement list runs once per token of its decider. A value
  enters a region lazily, STEERed on the decider at its first use; constants are ``hold``
  operands, and a constant needed as a token is made the region's way.
* **for range** is a STREAM (compare SLT; a negative constant step counts the negated index up
  and negates it back; ``range(a, b + 1)`` compares SLE against ``b``). Its flag is the decider of
  the body and of the CARRYs of every variable (and memory token) the body assigns that was
  known before the loop; values the body only reads pass through INVARIANTs, made at first use;
  exit values leave through STEERs of the other polarity. A pure subexpression of a body that
  reads only values from outside the loop is computed outside and enters as one INVARIANT.
* **while** is the same with CARRYs whose decider is the loop condition, computed in a header
  region from the CARRYs and INVARIANTs.
* **if** STEERs what each branch reads and MERGEs what either assigns; when both branches only
  assign scalars from pure expressions (no loads, calls, loops or effects), both are computed and
  a SELECT picks each assigned value. ``a if c else b`` is always a SELECT.
* **Memory** follows :mod:`.memory`; **tasks**, ``push``, ``async for`` and ``atomic`` follow
  :mod:`.tasks` and the docstrings below.

Operators whose results reach no effect (store, output, task, lock) are removed at the end.
"""

import ast
import builtins

from ripple_core.builder import Builder, Ref
from ripple_core.graph import Graph, GraphError, Input
from ripple_core.ops import BINARY, wrap

from .analysis import (
    acc,
    assigned_effects,
    assigned_names,
    marker_of,
    memory_sites,
    output_names,
    read_names,
    tok,
    uses_ripple,
)
from .api import Array, Kernel
from .errors import LangError
from .memory import MemoryLowering, MemoryPlan, plan_memory, token_array
from .source import source_of
from .tasks import DEFAULT_DEPTH, implicit_name, plan_tasks
from .values import STATIC, Const, Region, Scalar

__all__ = ["compile_kernel"]

_BINOPS = {ast.Add: "ADD", ast.Sub: "SUB", ast.Mult: "MUL", ast.BitAnd: "AND", ast.BitOr: "OR",
           ast.BitXor: "XOR", ast.LShift: "SHL", ast.RShift: "ASHR"}
_COMPARES = {ast.Eq: "EQ", ast.NotEq: "NE", ast.Lt: "SLT", ast.LtE: "SLE", ast.Gt: "SGT", ast.GtE: "SGE"}
_SYMBOLS = {ast.FloorDiv: "//", ast.Mod: "%", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@"}
_UNSUPPORTED_OPERATORS = {   # symbol -> (why it is refused, what to write instead)
    "//": ("the fabric has no divider; only constant operands are folded",
           "for a power-of-two divisor of a value known to be >= 0 use >> and &"),
    "%": ("the fabric has no divider; only constant operands are folded",
          "for a power-of-two divisor of a value known to be >= 0 use & (divisor - 1)"),
    "/": ("true division makes a float and values are 32-bit ints",
          "write // for integer division (constant operands only), or >> for a power of two"),
    "**": ("the fabric has no power operator", "write 1 << k for 2 ** k, or multiply out"),
    "@": ("there are no matrices", "write the loops"),
}
_ROOT_OPS = ("STORE", "SINK", "ACQUIRE", "RELEASE", "TASK", "QUEUE", "ARB")
_REFUSED_STATEMENTS = {
    ast.Break: ("break", "loops exit only through their condition", "fold the exit test into the "
                "while condition"),
    ast.Continue: ("continue", "loops run their whole body", "guard the rest of the body with an if"),
    ast.Try: ("try", "there are no exceptions on the fabric", "remove the try"),
    ast.Raise: ("raise", "there are no exceptions on the fabric", "remove it"),
    ast.Assert: ("assert", "there are no exceptions on the fabric", "check it in the test instead"),
    ast.Global: ("global", "kernels cannot write module state", "pass the value as an argument"),
    ast.Nonlocal: ("nonlocal", "kernels cannot write enclosing state", "pass the value as an argument"),
    ast.Import: ("import", "a kernel cannot import", "import at module level"),
    ast.ImportFrom: ("import", "a kernel cannot import", "import at module level"),
    ast.Delete: ("del", "variables cannot be deleted", "stop using the variable"),
    ast.ClassDef: ("class", "classes are not part of the language", "use module-level helpers"),
    ast.FunctionDef: ("nested def", "only async def tasks may be nested in a kernel",
                      "define scalar helpers at module level with @inline"),
    ast.AnnAssign: ("annotated assignment", "local variables take no annotation", "write x = value"),
    ast.AsyncWith: ("async with", "only `with atomic(address):` is supported", "use with atomic(...)"),
    ast.Match: ("match", "pattern matching is not supported", "use if/elif/else"),
}
_REFUSED_EXPRESSIONS = {
    ast.List: ("list", "there are no lists on the fabric", "use an Array argument"),
    ast.Tuple: ("tuple", "tuples are only push arguments", "use separate variables"),
    ast.Dict: ("dict", "there are no dicts on the fabric", "use an Array argument"),
    ast.Set: ("set", "there are no sets on the fabric", "use an Array argument"),
    ast.ListComp: ("comprehension", "comprehensions are not supported", "write a for loop"),
    ast.SetComp: ("comprehension", "comprehensions are not supported", "write a for loop"),
    ast.DictComp: ("comprehension", "comprehensions are not supported", "write a for loop"),
    ast.GeneratorExp: ("generator", "generators are not supported", "write a for loop"),
    ast.Lambda: ("lambda", "functions are not values", "define a module-level @inline helper"),
    ast.Attribute: ("attribute access", "values have no attributes (only 32-bit ints and arrays)",
                    "use plain names"),
    ast.Await: ("await", "tasks do not wait for each other", "push the work as a task"),
    ast.JoinedStr: ("f-string", "there are no strings on the fabric", "send numbers with out()"),
    ast.NamedExpr: ("walrus", "assignment expressions are not supported", "assign on its own line"),
    ast.Starred: ("star", "unpacking is not supported", "pass each value"),
    ast.Slice: ("slice", "arrays are indexed one word at a time", "loop over the indices"),
    ast.Yield: ("yield", "generators are not supported", "write a for loop"),
    ast.YieldFrom: ("yield from", "generators are not supported", "write a for loop"),
}


class _Dead:
    """A for loop's variable after the loop (Python would keep its last value)."""

    def __init__(self, node):
        self.node = node


class _DecouplingBuilder(Builder):
    """A :class:`Builder` that, with ``decouple`` set, routes an operand made before the last
    atomic-block boundary (an ``epoch`` ago) through a spill queue: one queue per value and epoch.

    With two or more ACQUIRE sites, a later invocation may hold the lock an earlier one waits
    for at another site. The holder's RELEASE then needs tokens from producers that also feed
    what waits for the other block (its inputs, the MERGE or loop STEER around it, the values
    used after it). A bounded slot there stops those producers, head-of-line, and the program
    deadlocks. A spill queue never back-pressures its producer, so every token that crosses a
    block boundary, into a block or out of it, crosses through one. Queues only add buffering
    to FIFO streams, so they change no result (docs/ripple-language.md, "Several lock sites")."""

    def __init__(self, name: str, depth: int):
        super().__init__(name)
        self.decouple, self.epoch, self._depth = False, 0, depth
        self._born: dict[str, int] = {}             # node -> the epoch that made it
        self._copies: dict[tuple, Ref] = {}         # (value, epoch) -> its spill queue's output
        self._raw = False

    def op(self, op: str, *inputs, name: str | None = None, **attrs) -> Ref:
        if self.decouple and not self._raw:
            inputs = tuple(self.decoupled(value) for value in inputs)
        ref = super().op(op, *inputs, name=name, **attrs)
        self._born[ref.node] = self.epoch
        return ref

    def born_now(self, ref: Ref):
        """``ref`` (a task's parameter, made outside :meth:`op`) is made in this epoch."""
        self._born[ref.node] = self.epoch

    def decoupled(self, value):
        """``value``, through a spill queue if it was made in an earlier epoch."""
        born = self._born.get(value.node) if isinstance(value, Ref) else None
        if born is None or born == self.epoch or not self.decouple:
            return value
        key = (value, self.epoch)
        if key not in self._copies:
            self._raw = True
            try:
                (self._copies[key],) = self.queue(value, depth=self._depth, spill=True)
            finally:
                self._raw = False
        return self._copies[key]

    def state(self):
        """What a rebuild (:meth:`_Compiler._snapshot`) must put back besides the graph."""
        return dict(self._depths), dict(self._born), dict(self._copies), self.epoch

    def restore(self, state):
        depths, born, copies, self.epoch = state
        for table, saved in ((self._depths, depths), (self._born, born), (self._copies, copies)):
            table.clear()
            table.update(saved)

    def build(self) -> Graph:
        self.decouple = False           # the tasks' arbs and queues take the push sites as they are
        return super().build()


class _Compiler(MemoryLowering):
    def __init__(self, target: Kernel, mode: str | None, spill: bool, queue_depth: int):
        self.src = self.kernel_src = source_of(target)
        self._at = None
        self.regions: list = []         # every Region registers itself (see _snapshot)
        self.caches: list = []          # loop headers' INVARIANT tables
        tree = self.src.tree
        self.b = _DecouplingBuilder(tree.name, queue_depth)
        self.b.reserve("return", *output_names(self.src))
        self._raw, self._indexed = {}, 0
        self.scalars, self.arrays = self._signature(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
                node.target._augmented = True
        body = list(tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]         # the docstring
        self.body = body
        ripple = uses_ripple(body, self.src.names)
        if mode is None:
            mode = "ripple" if ripple is not None else "ordered"
        if mode not in ("ordered", "ripple"):
            raise ValueError(f"mode {mode!r}: use \"ordered\" or \"ripple\"")
        if mode == "ordered" and ripple is not None:
            self.src.refuse(ripple, _describe(ripple), "tasks, push and atomic are Ripple constructs and "
                            "an ordered kernel has none", 'compile it with mode="ripple"')
        self.mode, self.queue_depth = mode, queue_depth
        self.tasks = plan_tasks(self.src, body, spill=spill) if mode == "ripple" else {}
        self.kernel_locals = assigned_names(body, self.src.names)
        self.scope_arrays = set(self.arrays)
        self.plan = MemoryPlan()
        self.sinks: set[str] = set()
        self.inlining: list = []
        self.atomic_name: list = []
        self.atomic_sites = sum(1 for node in ast.walk(tree) if isinstance(node, ast.With) and any(
            isinstance(item.context_expr, ast.Call)
            and marker_of(self.src.names, item.context_expr.func) == "atomic" for item in node.items))
        self.b.decouple = self.atomic_sites > 1
        self._make_tasks()

    # signature, tasks -----------------------------------------------------------------------
    def _signature(self, tree):
        args = tree.args
        for extra, what in ((args.posonlyargs, "positional-only parameters"), (args.kwonlyargs,
                            "keyword-only parameters"), (args.defaults, "default values")):
            if extra:
                self.src.refuse(tree, what, "kernel parameters are plain positional arguments",
                                "list each parameter as name: Array or name: int")
        if args.vararg or args.kwarg:
            self.src.refuse(tree, "*args/**kwargs", "a kernel has a fixed argument list",
                            "list each parameter")
        scalars, arrays = [], []
        for param in args.args:
            kind = _annotation(self.src, param.annotation)
            if kind is Array:
                arrays.append(param.arg)
                self.b.array(param.arg)
            elif kind is int:
                scalars.append(param.arg)
                self.b.scalar(param.arg)
            else:
                self.src.refuse(param, f"parameter {param.arg!r}", "every kernel parameter needs the "
                                "annotation Array (a memory array) or int (a 32-bit scalar)",
                                f"write {param.arg}: Array or {param.arg}: int")
        return scalars, arrays

    def _make_tasks(self):
        whole = {n.id for n in ast.walk(self.src.tree)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        params = {p for info in self.tasks.values() for p in info.params}
        for name, info in self.tasks.items():
            if isinstance(info.node, ast.AsyncFor):
                var = self._for_var(info.node)
                inside = assigned_names(info.node.body, self.src.names) | {
                    n.id for n in ast.walk(ast.Module(body=info.node.body, type_ignores=[]))
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                reads = read_names(info.node.body, self.src.names, nested=True)
                captured = sorted(n for n in reads - inside - {var} if (n not in self.scalars
                                  or n in self.kernel_locals) and n not in self.arrays and n not in self.tasks
                                  and (n in whole or n in params or (n not in self.src.names
                                                                     and not hasattr(builtins, n))))
                info.params = [var, *captured]
            else:
                node = info.node
                if node.args.vararg or node.args.kwarg or node.args.defaults or node.args.kwonlyargs:
                    self.src.refuse(node, f"task {name!r}", "task parameters are plain positional scalars",
                                    "list each parameter")
                if not info.params:
                    self.src.refuse(node, f"task {name!r}", "a task needs at least one parameter (its "
                                    "invocation's first argument triggers the body)", "add a parameter")
            # @ind(inflight=k): an ind body, dispatched by a task of k credits that its finish returns
            info.handle = self.b.task(name, len(info.params), ind=info.ind and info.inflight is None,
                                      depth=self.queue_depth, spill=info.spill, credits=info.inflight or 1)

    # operands -------------------------------------------------------------------------------
    def token(self, region, operand):
        """``operand`` as one token per activation of ``region`` (a Ref, or at the top level a
        slot consumed once)."""
        if isinstance(operand, Ref | Input):
            return operand
        key = operand.key()
        if key not in region.tokens:
            if region.make_token is not None:
                region.tokens[key] = region.make_token(operand)
            elif region.top:
                return operand.once()
            else:
                decider, pred = region.decider
                region.tokens[key] = self.b.steer(decider, operand.slot(), pred=pred)
        return region.tokens[key]

    def initial(self, region, operand):
        if isinstance(operand, STATIC) and region.top and region.make_token is None:
            return operand.once()
        return self.token(region, operand)

    def steer_in(self, region, value):
        if not isinstance(value, Ref):
            return value
        decider, pred = region.decider
        return self.b.steer(decider, value, pred=pred)

    @staticmethod
    def slot(operand):
        return operand.slot() if isinstance(operand, STATIC) else operand

    def binop(self, region, op: str, a, b):
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(BINARY[op](a.value, b.value))
        if isinstance(a, STATIC) and isinstance(b, STATIC):
            a = self.token(region, a)
        return self.b.op(op, self.slot(a), self.slot(b))

    # expressions ----------------------------------------------------------------------------
    def expr(self, region, node):
        self._at = node
        hoisted = self._hoist(region, node)
        if hoisted is not None:
            return hoisted
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            construct, why, hint = _REFUSED_EXPRESSIONS.get(
                type(node), (type(node).__name__, "this expression is not part of the language",
                             "use 32-bit int arithmetic, compares, array indexing and @inline helpers"))
            self.src.refuse(node, construct, why, hint)
        return method(region, node)

    def expr_Constant(self, region, node):
        if isinstance(node.value, bool) or isinstance(node.value, int):
            return self._word(self.src, node, int(node.value), f"constant {node.value}")
        kind = type(node.value).__name__
        self.src.refuse(node, f"{kind} constant", f"values are 32-bit ints, {node.value!r} is a {kind}",
                        "use an int (floats: scale to fixed point)")

    def expr_Name(self, region, node):
        name = node.id
        if name in self.scope_arrays:
            self.src.refuse(node, f"array {name!r}", "an array is not a value", f"index it: {name}[i]")
        if name in self.tasks:
            self.src.refuse(node, f"task {name!r}", "a task is not a value", f"call push({name}, ...)")
        value = region.read(name)
        if isinstance(value, _Dead):
            self.src.refuse(node, f"loop variable {name!r}", "a for loop's variable is not defined after "
                            "the loop", "copy it to another variable inside the loop")
        return value

    def expr_BinOp(self, region, node):
        a, b = self.expr(region, node.left), self.expr(region, node.right)
        return self.arithmetic(region, node, a, b)

    def arithmetic(self, region, node, a, b):
        """``a op b`` for the operator of ``node`` (a BinOp or an AugAssign, which share this so
        that ``x //= 2`` is folded or refused exactly as ``x // 2`` is)."""
        op = _BINOPS.get(type(node.op))
        if op is not None:
            return self.binop(region, op, a, b)
        symbol = _SYMBOLS[type(node.op)]
        constant = isinstance(a, Const) and isinstance(b, Const)
        if symbol in ("//", "%") and constant:
            if b.value == 0:
                self.src.refuse(node, f"operator {symbol}", "the divisor is the constant 0",
                                "divide by a nonzero constant")
            return Const(_c_divide(a.value, b.value, symbol))
        why, hint = _UNSUPPORTED_OPERATORS[symbol]
        self.src.refuse(node, f"operator {symbol}", why, hint)

    def expr_UnaryOp(self, region, node):
        value = self.expr(region, node.operand)
        if isinstance(node.op, ast.UAdd):
            return value
        if isinstance(node.op, ast.USub):
            return self.binop(region, "SUB", Const(0), value)
        if isinstance(node.op, ast.Invert):
            return self.binop(region, "XOR", value, Const(-1))
        return self.binop(region, "EQ", value, Const(0))

    def expr_Compare(self, region, node):
        result, left = None, self.expr(region, node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            code = _COMPARES.get(type(op))
            if code is None:
                self.src.refuse(node, f"compare {type(op).__name__}", "only == != < <= > >= compare ints",
                                "compare with == or !=")
            right = self.expr(region, comparator)
            step = self.binop(region, code, left, right)
            result = step if result is None else self.binop(region, "AND", result, step)
            left = right
        return result

    def expr_BoolOp(self, region, node):
        for operand in node.values:
            if not _is_condition(operand):
                self.src.refuse(operand, "and/or operand", "and/or combine conditions (compares, not, "
                                "and/or), both sides always evaluated", "compare explicitly, e.g. x != 0")
        code = "AND" if isinstance(node.op, ast.And) else "OR"
        result = self.expr(region, node.values[0])
        for operand in node.values[1:]:
            result = self.binop(region, code, result, self.expr(region, operand))
        return result

    def expr_IfExp(self, region, node):
        cond = self.expr(region, node.test)
        t, f = self.expr(region, node.body), self.expr(region, node.orelse)
        return self.select(region, cond, t, f)

    def select(self, region, cond, t, f):
        if isinstance(cond, Const):
            return t if cond.value else f
        if t is f or (isinstance(t, STATIC) and isinstance(f, STATIC) and t.key() == f.key()):
            return t
        return self.b.select(self.token(region, cond), self.slot(t), self.slot(f))

    def expr_Subscript(self, region, node):
        array = self._array_of(node)
        return self.load(region, array, self.expr(region, node.slice))

    def _array_of(self, node) -> str:
        if not isinstance(node.value, ast.Name) or node.value.id not in self.scope_arrays:
            what = node.value.id if isinstance(node.value, ast.Name) else type(node.value).__name__
            self.src.refuse(node, "indexing", f"{what} is not an Array argument of this kernel",
                            "index only Array parameters (helpers take scalars)")
        if isinstance(node.slice, ast.Slice | ast.Tuple):
            self.src.refuse(node, "slice", "arrays are indexed one word at a time", "loop over the indices")
        return node.value.id

    def expr_Call(self, region, node):
        mark = marker_of(self.src.names, node.func)
        if mark is not None:
            self.src.refuse(node, f"{mark}()", "is a statement, not a value",
                            "call it on its own line" if mark != "range" else "use range only in a for loop")
        callee = self.src.names.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if not isinstance(callee, Kernel):
            name = ast.unparse(node.func)
            self.src.refuse(node, f"call of {name}", "only @inline helpers (or other @kernel functions with "
                            "int parameters) can be called; they are inlined", "decorate the helper with "
                            "@inline, or write the computation out")
        return self.inline_call(region, node, callee)

    def _hoist(self, region, node):
        """A pure expression of a loop body that reads only values from outside the loop, computed
        outside and brought in through one INVARIANT."""
        if region.loop is None or not isinstance(node, ast.BinOp | ast.Compare | ast.UnaryOp | ast.IfExp):
            return None
        outer, varying, header = region.loop
        parts = list(ast.walk(node))
        if any(isinstance(p, ast.Subscript | ast.Call | ast.NamedExpr) for p in parts):
            return None
        names = {p.id for p in parts if isinstance(p, ast.Name)}
        if not names or names & varying or names & (self.scope_arrays | set(self.tasks)):
            return None
        key = ("expr", ast.dump(node))
        if key in region.env:
            return region.env[key]
        if not any(outer.knows(n) and isinstance(outer.read(n), Ref) for n in names):
            return None
        value = self.expr(outer, node)
        if not isinstance(value, Ref):
            return value
        inner = region.steer(header(key, value))
        region.env[key] = inner
        return inner

    # statements -----------------------------------------------------------------------------
    def block(self, region, stmts):
        for stmt in stmts:
            self._at = stmt
            method = getattr(self, "stmt_" + type(stmt).__name__, None)
            if method is None:
                construct, why, hint = _REFUSED_STATEMENTS.get(
                    type(stmt), (type(stmt).__name__, "this statement is not part of the language", None))
                self.src.refuse(stmt, construct, why, hint)
            method(region, stmt)

    def stmt_Pass(self, region, node):
        pass

    def stmt_Assign(self, region, node):
        if len(node.targets) != 1:
            self.src.refuse(node, "chained assignment", "assign one target at a time", "write a = v; b = a")
        target = node.targets[0]
        if isinstance(target, ast.Name):
            self._check_assignable(target)
            region.write(target.id, self.expr(region, node.value))
        elif isinstance(target, ast.Subscript):
            array = self._array_of(target)
            index = self.expr(region, target.slice)
            self.store(region, array, index, self.expr(region, node.value))
        elif isinstance(target, ast.Tuple | ast.List):
            self.src.refuse(node, "tuple unpacking", "assign one value at a time", "write a = x; b = y")
        else:
            self.src.refuse(node, f"assignment to {type(target).__name__}", "only variables and array "
                            "words can be assigned", "assign to a name or A[i]")

    def _check_assignable(self, target):
        name = target.id
        if name in self.scope_arrays or name in self.tasks:
            self.src.refuse(target, f"assignment to {name!r}", "arrays and tasks cannot be rebound",
                            "use another name")
        if self.atomic_name and self.atomic_name[-1] == name:
            self.src.refuse(target, f"assignment to {name!r}", "the address of an atomic block cannot "
                            "change inside the block", "assign to another variable")

    def stmt_AugAssign(self, region, node):
        if isinstance(node.target, ast.Name):
            self._check_assignable(node.target)
            current = self.expr_Name(region, ast.Name(node.target.id, ast.Load(), lineno=node.lineno))
            value = self.arithmetic(region, node, current, self.expr(region, node.value))
            region.write(node.target.id, value)
        elif isinstance(node.target, ast.Subscript):
            array = self._array_of(node.target)
            index = self.expr(region, node.target.slice)
            current = self.load(region, array, index)
            value = self.arithmetic(region, node, current, self.expr(region, node.value))
            self.store(region, array, index, value)
        else:
            self.src.refuse(node, "augmented assignment", "only variables and array words can be "
                            "assigned", "assign to a name or A[i]")

    def stmt_Expr(self, region, node):
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return              # a comment-like string
        if isinstance(value, ast.Call):
            mark = marker_of(self.src.names, value.func)
            if mark == "push":
                return self.push(region, value)
            if mark == "out":
                return self.out(region, value)
            if isinstance(value.func, ast.Name) and value.func.id == "print":
                self.src.refuse(value, "print", "the fabric has no console",
                                'send values with out("name", v)')
            self._refuse_unimported(value.func)
        elif type(value) in _REFUSED_EXPRESSIONS:
            self.expr(region, value)            # refuses with the construct's own message
        self.src.refuse(node, "expression statement", "a bare expression has no effect",
                        "assign it, store it, push it or out() it")

    def _refuse_unimported(self, func):
        """``push``/``out``/``atomic`` used without importing them from ripple_core.lang."""
        if isinstance(func, ast.Name) and func.id in ("push", "out", "atomic") and \
                marker_of(self.src.names, func) is None:
            self.src.refuse(func, f"{func.id}()", f"{func.id} is not ripple_core.lang's {func.id} here",
                            f"import it: from ripple_core.lang import {func.id}")

    def stmt_Return(self, region, node):
        self.src.refuse(node, "return", "a kernel returns only from its last statement (and tasks not at "
                        "all)", "assign the result to a variable and return it at the end")

    def stmt_If(self, region, node):
        cond = self.expr(region, node.test)
        if isinstance(cond, Const):
            self.block(region, node.body if cond.value else node.orelse)
            return
        if _pure(node.body) and _pure(node.orelse):
            sides = []
            for stmts in (node.body, node.orelse):
                side = Region(self, region.decider, None, entry=region.read, knows=region.knows,
                              make_token=lambda s: self.token(region, s), top=region.top)
                self.block(side, stmts)
                sides.append(side)
            for name in self._merged(region, sides):
                region.write(name, self.select(region, cond, sides[0].read(name), sides[1].read(name)))
            return
        decider = self.token(region, cond)
        sides = []
        for pred, stmts in ((True, node.body), (False, node.orelse)):
            side = Region(self, (decider, pred), region)
            self.block(side, stmts)
            sides.append(side)
        names = self._merged(region, sides)
        pairs = self.branch_pairs(decider, names, sides)
        merges, merged = {}, {}
        for name in sorted(names, key=lambda n: (n.startswith("@acc:"), n)):
            if token_array(name) in pairs and name.startswith("@acc:"):
                merged[name] = merged[tok(token_array(name))]
                continue
            t, f = (side.read(name) for side in sides)
            if t is f or (isinstance(t, STATIC) and isinstance(f, STATIC) and t.key() == f.key()):
                merged[name] = t
                continue
            key = tuple(v.key() if isinstance(v, STATIC) else v for v in (t, f))
            if key not in merges:
                merges[key] = self.b.merge(decider, self.slot(t), self.slot(f))
            merged[name] = merges[key]
        for name in names:
            region.write(name, merged[name])

    @staticmethod
    def _merged(region, sides):
        both = sides[0].assigned & sides[1].assigned
        either = sides[0].assigned | sides[1].assigned
        return sorted((n for n in either if region.knows(n) or n in both), key=str)

    # loops ----------------------------------------------------------------------------------
    def _for_var(self, node) -> str:
        if not isinstance(node.target, ast.Name):
            self.src.refuse(node, "for target", "a for loop binds one variable", "write for i in range(...)")
        return node.target.id

    def _range(self, region, node):
        """(var, start, bound, step, cmp) of ``for var in range(...)``."""
        var = self._for_var(node)
        call = node.iter
        if not isinstance(call, ast.Call) or marker_of(self.src.names, call.func) != "range" or \
                call.keywords or not 1 <= len(call.args) <= 3:
            self.src.refuse(node, "for loop", "for loops run over range(...) only",
                            "write for i in range(a, b) or use a while loop")
        if node.orelse:
            self.src.refuse(node, "for-else", "loops have no else clause", "put the code after the loop")
        if var in assigned_names(node.body, self.src.names):
            self.src.refuse(node, f"loop variable {var!r}", "the body of a for range loop assigns its "
                            "variable, so it cannot be a STREAM", "use a while loop with an explicit counter")
        args = call.args
        step = Const(1)
        if len(args) == 3:
            step = self.expr(region, args[2])
            if not isinstance(step, Const) or step.value == 0:
                self.src.refuse(args[2], "range step", "the step must be a nonzero constant (its sign "
                                "decides the compare)", "use a while loop for a variable step")
        start = Const(0) if len(args) == 1 else self.expr(region, args[0])
        bound_node = args[-1] if len(args) == 1 else args[1]
        cmp = "SLT"
        if step.value == 1 and isinstance(bound_node, ast.BinOp) and isinstance(bound_node.op, ast.Add) \
                and isinstance(bound_node.right, ast.Constant) and bound_node.right.value == 1:
            bound_node, cmp = bound_node.left, "SLE"
        bound = self.expr(region, bound_node)
        self._check_bound(bound_node, bound, cmp)
        return var, start, bound, step.value, cmp

    def _check_bound(self, node, bound, cmp: str):
        """A constant bound the loop's signed compare would read otherwise than Python does."""
        if not isinstance(bound, Const):
            return
        if cmp == "SLE" and bound.value == (1 << 31) - 1:
            self.src.refuse(node, "range bound", "range(a, b + 1) with b = 2**31 - 1 would never end: the "
                            "loop compares i <= b on signed 32-bit words, which always holds",
                            "loop to a smaller bound")
        if bound.spelled >= 1 << 31:
            self.src.refuse(node, f"range bound {bound.spelled}", f"the loop compares signed 32-bit words, "
                            f"where it reads as {bound.value}, so the loop would not run as in Python",
                            "use a bound below 2**31")

    def _header(self, region, decider, pred, carry_of):
        invariants = {}
        self.caches.append(invariants)

        def header(key, outer=None):
            if key in carry_of:
                return carry_of[key]
            if key not in invariants:
                value = region.read(key) if outer is None else outer
                invariants[key] = self.b.invariant(decider, value, pred=pred) if isinstance(value, Ref) \
                    else value
            return invariants[key]
        return header

    def _carried(self, region, body, var=None):
        effects = assigned_effects(body, self.src.names, self.plan.tokened)
        carried = [n for n in sorted(effects) if n != var and region.knows(n)
                   and not isinstance(region.read(n), _Dead)]
        return carried, effects | ({var} if var else set())

    # A loop may carry an array's tok and acc as one CARRY (memory.loop_pairs). Whether tok still
    # stands for acc at the end of the body is known only once the body is built, so the loop is
    # built with its pairs and, if some pair fails that test, rebuilt without them.
    def _snapshot(self):
        b = self.b
        tasks = [(t, list(t.sites), t.done) for t in b._tasks]
        regions = [(r, r.state()) for r in self.regions]
        caches = [(c, dict(c)) for c in self.caches]
        return dict(b.graph.nodes), len(b._pending), b._count, tasks, set(self.sinks), regions, caches, \
            b.state()

    def _restore(self, snapshot):
        b = self.b
        nodes, pending, count, tasks, sinks, regions, caches, builder = snapshot
        b.restore(builder)
        b.graph.nodes.clear()
        b.graph.nodes.update(nodes)
        del b._pending[pending:]
        b._count = count
        for task, sites, done in tasks:
            task.sites[:] = sites
            task.done = done
        self.sinks = set(sinks)
        for region, state in regions:
            region.restore(state)
        del self.regions[len(regions):]
        for cache, content in caches:
            cache.clear()
            cache.update(content)
        del self.caches[len(caches):]
        self._raw, self._indexed = {}, 0

    def _with_pairs(self, pairs, build):
        """``build(pairs)`` returns the arrays whose pair failed; rebuild without them until none do."""
        while True:
            snapshot = self._snapshot() if pairs else None
            failed = build(pairs)
            if not failed:
                return
            self._restore(snapshot)
            for array in failed:
                del pairs[array]

    def _carries(self, region, decider, pred, label, carried, pairs, carry_of, nexts):
        """A CARRY for each carried name that has none yet; a paired array's tok shares its acc's."""
        for name in carried:
            array = token_array(name)
            if name in carry_of or (array in pairs and name == tok(array)):
                continue
            nexts[name] = self.b.wire(f"{label}.{name}")
            init = pairs[array] if array in pairs else region.read(name)
            carry_of[name] = self.b.carry(decider, self.initial(region, init), nexts[name], pred=pred)
        for array in pairs:
            carry_of[tok(array)] = carry_of[acc(array)]

    def _close_loop(self, region, inner, decider, pred, carried, pairs, carry_of, nexts,
                    leaving=None) -> set:
        """Bind the back edges and steer each carried name out of the loop: its CARRY, or with
        ``leaving`` (a while loop) the value the last test left it (a load in the test joins acc)."""
        failed = {array for array in pairs
                  if not self.same_token(inner.read(tok(array)), inner.read(acc(array)))}
        if failed:
            return failed
        for name, wire in nexts.items():
            array = token_array(name)
            wire.bind(self.token(inner, inner.read(tok(array) if array in pairs else name)))
        exits = {}
        for name in carried:
            value = carry_of[name] if leaving is None else leaving(name)
            key = id(value) if leaving is not None else value
            if key not in exits:
                exits[key] = self.b.steer(decider, value, pred=pred)
            region.write(name, exits[key])
        return set()

    def stream_loop(self, region, node, var, start, bound, step, cmp, body, carried, varying, fill):
        pairs, pending = self.loop_pairs(region, carried, body)
        self._with_pairs(pairs, lambda pairs: self._stream_loop(
            region, var, start, bound, step, cmp, carried, varying, fill, pairs, pending))

    def _stream_loop(self, region, var, start, bound, step, cmp, carried, varying, fill, pairs, pending):
        b = self.b
        negate = step < 0
        if negate:
            start = self.binop(region, "SUB", Const(0), start)
            bound = self.binop(region, "SUB", Const(0), bound)
            step = -step
        index, flag = b.stream(self.initial(region, start), self.slot(bound), b.hold(step), cmp=cmp,
                               pred=False)
        for array in pending:
            if array in pairs and not self.after(flag, pairs[array]):
                del pairs[array]
        carry_of, nexts = {}, {}
        self._carries(region, flag, False, var, carried, pairs, carry_of, nexts)
        header = self._header(region, flag, False, carry_of)
        inner = Region(self, (flag, False), region, knows=region.knows, loop=(region, varying, header))
        inner.entry = lambda name: inner.steer(header(name))
        inner.env[var] = b.op("SUB", b.hold(0), index) if negate else index
        fill(inner)
        return self._close_loop(region, inner, flag, True, carried, pairs, carry_of, nexts)

    def stmt_For(self, region, node):
        var, start, bound, step, cmp = self._range(region, node)
        carried, varying = self._carried(region, node.body, var)
        self.stream_loop(region, node, var, start, bound, step, cmp, node.body, carried, varying,
                         lambda inner: self.block(inner, node.body))
        region.env[var] = _Dead(node)

    def stmt_While(self, region, node):
        if node.orelse:
            self.src.refuse(node, "while-else", "loops have no else clause", "put the code after the loop")
        if isinstance(node.test, ast.Constant):
            if node.test.value:
                self.src.refuse(node, "while True", "a loop exits only through its condition (no break)",
                                "write the exit test as the while condition")
            return
        # The test runs before every pass and once more at the exit, so what it loads is part of
        # the loop's memory effects: its loads join the carried acc, which the body and the code
        # after the loop then wait for.
        carried, varying = self._carried(region, [ast.Expr(node.test), *node.body])
        pairs, pending = self.loop_pairs(region, carried, [node.test, *node.body])
        self._with_pairs(pairs, lambda pairs: self._while_loop(region, node, carried, varying, pairs,
                                                                pending))

    def _while_loop(self, region, node, carried, varying, pairs, pending):
        b = self.b
        cond_wire = b.wire("while")
        carry_of, nexts = {}, {}
        self._carries(region, cond_wire, True, "while", carried, pairs, carry_of, nexts)
        header = self._header(region, cond_wire, True, carry_of)
        head = Region(self, None, None, entry=header, knows=region.knows,
                      make_token=lambda s: b.invariant(cond_wire, self.token(region, s)))
        cond = self.token(head, self.expr(head, node.test))
        cond_wire.bind(cond)
        late = [array for array in pending if array in pairs and not self.after(cond, pairs[array])]
        for array in late:          # the test loads nothing of these, so their tok is not read yet
            del pairs[array], carry_of[tok(array)]
        self._carries(region, cond_wire, True, "while", carried, pairs, carry_of, nexts)
        inner = Region(self, (cond, True), region, knows=region.knows, loop=(region, varying, header))
        inner.entry = lambda name: inner.steer(head.read(name))     # as the test left it
        self.block(inner, node.body)
        return self._close_loop(region, inner, cond, False, carried, pairs, carry_of, nexts,
                                leaving=head.read)

    # calls ----------------------------------------------------------------------------------
    def inline_call(self, region, node, callee: Kernel):
        src = source_of(callee)
        tree = src.tree
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            self.src.refuse(node, "keyword arguments", "helpers take positional arguments only",
                            "pass each argument in order")
        if any(c is callee for c, _ in self.inlining) or callee.fn is self.src.fn:
            self.src.refuse(node, f"recursive call of {tree.name}", "calls are inlined, so recursion "
                            "cannot end", "write a loop, or a task that pushes itself (mode ripple)")
        if isinstance(tree, ast.AsyncFunctionDef):
            src.refuse(tree, f"helper {tree.name}", "an async def helper returns a coroutine in Python, not "
                       "its value", "write the helper as a plain def")
        params = tree.args
        if params.vararg or params.kwarg or params.kwonlyargs or params.defaults or params.posonlyargs:
            src.refuse(tree, f"helper {tree.name}", "helpers take plain positional parameters",
                       "list each parameter")
        for param in params.args:
            kind = int if param.annotation is None else _annotation(src, param.annotation)
            if kind is not int:
                src.refuse(param, f"helper parameter {param.arg!r}", "helpers take int scalars only",
                           "pass array words as values")
        if len(node.args) != len(params.args):
            self.src.refuse(node, f"call of {tree.name}", f"{len(node.args)} arguments for "
                            f"{len(params.args)} parameters", "pass one value per parameter")
        body = list(tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            src.refuse(tree, f"helper {tree.name}", "a helper must end with return <value>",
                       "return the result as the last statement")
        if uses_ripple(body, src.names) is not None:
            src.refuse(uses_ripple(body, src.names), "Ripple construct in a helper", "helpers are "
                       "scalar code", "push and lock in the kernel")
        values = [self.expr(region, arg) for arg in node.args]
        root = Region(self, region.decider, None, make_token=lambda s: self.token(region, s),
                      resolve=lambda name: self._resolve(src, name, None), top=region.top)
        root.env.update({p.arg: v for p, v in zip(params.args, values, strict=True)})
        saved = (self.src, self.scope_arrays, self.plan)
        self.inlining.append((callee, node))
        self.src, self.scope_arrays, self.plan = src, set(), MemoryPlan()
        try:
            self.block(root, body[:-1])
            return self.expr(root, body[-1].value)
        finally:
            self.src, self.scope_arrays, self.plan = saved
            self.inlining.pop()

    @staticmethod
    def _word(src, node, value: int, construct: str) -> Const:
        """A literal or module constant as a word: signed or unsigned spelling (-1 and 0xFFFFFFFF
        are one word), refused beyond that rather than cut to its low 32 bits."""
        if not -(1 << 31) <= value < 1 << 32:
            src.refuse(node, construct, "does not fit a 32-bit word (results of arithmetic wrap, "
                       "constants are not cut)", "use a value from -2**31 to 2**32 - 1")
        return Const(wrap(value), spelled=value)

    def _resolve(self, src, name, task, node=None):
        value = src.names.get(name)
        node = node or self._at
        if isinstance(value, int) and (src is not self.kernel_src or name not in self.kernel_locals):
            return self._word(src, node or src.tree, int(value), f"constant {name} = {value}")
        if task is not None and name in self.kernel_locals:
            raise LangError(src.where(node or src.tree), f"read of {name!r} in task {task!r}",
                            "a task reads only kernel arguments, its parameters and its own variables",
                            f"pass {name} as a push argument")
        if (name in src.names or hasattr(builtins, name)) and not (src is self.kernel_src and
                                                                   name in self.kernel_locals):
            kind = type(value).__name__ if name in src.names else "Python builtin"
            raise LangError(src.where(node or src.tree), f"name {name!r}", f"is a {kind}, and a kernel reads "
                            "only the int constants and @inline helpers of its module", "make it an int "
                            "constant (floats: scale to fixed point), or pass it as an argument")
        raise LangError(src.where(node or src.tree), f"name {name!r}", "is read before it is assigned on "
                        "this path (or is not a kernel argument, an int constant or a helper)",
                        "assign it on every path before reading it")

    def push(self, region, call):
        if not call.args or not isinstance(call.args[0], ast.Name) or call.args[0].id not in self.tasks \
                or isinstance(self.tasks[call.args[0].id].node, ast.AsyncFor):
            self.src.refuse(call, "push", "the first argument must name an async def task of this kernel",
                            "write push(task, value, ...)")
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            self.src.refuse(call, "push", "push takes positional values only", "pass each value")
        info = self.tasks[call.args[0].id]
        values = call.args[1:]
        if len(values) != len(info.params):
            self.src.refuse(call, f"push to {info.name}", f"{len(values)} values for its "
                            f"{len(info.params)} parameters", "pass one value per parameter")
        tokens = [self.token(region, self.expr(region, v)) for v in values]
        self.b.push(info.handle, *tokens)

    def out(self, region, call):
        if len(call.args) != 2 or call.keywords or not isinstance(call.args[0], ast.Constant) or \
                not isinstance(call.args[0].value, str):
            self.src.refuse(call, "out", "out takes a constant name and a value", 'write out("name", v)')
        name = call.args[0].value
        if not name.isidentifier() or name == "return":
            self.src.refuse(call, f"output {name!r}", "an output's name is a Python identifier other than "
                            "'return' (the kernel's return value has that name)", 'write out("name", v)')
        if name in self.arrays:
            self.src.refuse(call, f"output {name!r}", f"{name} is an array of the kernel, and a case's "
                            "expect names arrays and outputs alike", "use another name")
        self._sink_name(call, name)
        value = self.expr(region, call.args[1])
        if isinstance(value, Const) and value.value == 1 and region.done is not None:
            self.b.sink(name, region.done)      # a completion token already made here is a 1
            return
        self.b.sink(name, self.token(region, value))

    def _sink_name(self, node, name):
        if name in self.sinks or name in self.tasks:
            self.src.refuse(node, f"output {name!r}", "each output name has one out() site and must "
                            "differ from task names", "use another name")
        self.sinks.add(name)

    # Ripple ---------------------------------------------------------------------------------
    def stmt_AsyncFunctionDef(self, region, node):
        if region is not self.root:
            self.src.refuse(node, "async def", "tasks are defined at the top level of the kernel body",
                            "move the task to the kernel's top level")
        info = self.tasks[node.name]
        self.task_scope(info, node.body, dict(zip(info.params, info.handle.args, strict=True)))

    def task_scope(self, info, body, params: dict):
        handle = info.handle
        trigger = handle.args[0]
        self.b.born_now(trigger)
        root = Region(self, None, None, make_token=lambda s: self.b.order(s.slot(), trigger),
                      resolve=lambda name: self._resolve(self.src, name, info.name))
        root.env.update({name: Scalar(name) for name in self.scalars if name not in self.kernel_locals})
        root.env.update(params)
        # A task whose finish returns a credit tokens every array, so that its finish is the end
        # of the invocation's memory work (memory.py).
        plan = plan_memory(body, self.src.names, self.arrays, serial_task=not handle.ind)
        for array in plan.flowing:
            root.env[tok(array)] = root.env[acc(array)] = Const(0)
        saved = self.plan, self.root
        self.plan, self.root = plan, None
        try:
            for stmt in body:
                if isinstance(stmt, ast.Return):
                    self.src.refuse(stmt, "return in a task", "a task's results leave by store, push or "
                                    "out()", "store the result or push it")
            self.block(root, body)
            if not info.handle.ind:
                finish = trigger
                for array in sorted(plan.flowing):
                    finish = self.join(root, root.read(acc(array)), finish)
                handle.finish(finish)
        finally:
            self.plan, self.root = saved

    def stmt_AsyncFor(self, region, node):
        info = self.tasks[implicit_name(node)]
        var, start, bound, step, cmp = self._range(region, node)
        for name in sorted(assigned_names(node.body, self.src.names)):
            if region.knows(name):
                self.src.refuse(node, f"assignment to {name!r} in async for", "each index runs as its own "
                                "task, so the body cannot assign the enclosing scope's variables",
                                "store results in an array, or use a plain for loop")
        captured = info.params[1:]

        def fill(inner):
            values = [inner.read(var)] + [self.token(inner, inner.read(n)) for n in captured]
            self.b.push(info.handle, *values)
        self.stream_loop(region, node, var, start, bound, step, cmp, node.body, [], set(), fill)
        self.task_scope(info, node.body, dict(zip(info.params, info.handle.args, strict=True)))

    def stmt_With(self, region, node):
        item = node.items[0] if len(node.items) == 1 else None
        call = item.context_expr if item else None
        if isinstance(call, ast.Call):
            self._refuse_unimported(call.func)
        if item is None or not isinstance(call, ast.Call) or marker_of(self.src.names, call.func) != "atomic":
            self.src.refuse(node, "with", "the only context is atomic(address)", "write with atomic(a):")
        if item.optional_vars is not None or len(call.args) != 1 or call.keywords:
            self.src.refuse(node, "with atomic", "atomic takes one address and binds no name",
                            "write with atomic(address):")
        if self.atomic_name:
            self.src.refuse(node, "nested atomic", "one invocation holds at most one lock at a time (two "
                            "could deadlock)", "end the first block before the second")
        address = self.token(region, self.expr(region, call.args[0]))
        arrays = set(memory_sites(node.body, self.src.names, self.scope_arrays))
        for array in sorted(arrays & self.plan.flowing):   # lock only after the earlier accesses
            address = self.wait(region, address, region.read(acc(array)))
        for used in sorted(read_names(node.body, self.src.names)):  # ... and once the values it reads exist
            value = region.read(used) if region.knows(used) else None
            if isinstance(value, Ref):
                address = self.wait(region, address, value)
        self.b.epoch += 1          # into the block: what it takes from before crosses a spill queue
        grant = self.b.acquire(address)
        self.enter_atomic(region, grant, arrays)
        name = call.args[0].id if isinstance(call.args[0], ast.Name) else None
        saved = region.env.get(name)
        if name is not None:
            region.env[name] = grant       # same value; the block's accesses then follow the grant
        self.atomic_name.append(name)
        try:
            self.block(region, node.body)
        finally:
            self.atomic_name.pop()
        released = self.b.release(grant, sync=self.block_effects(region, grant, arrays))
        region.done = region.done or released
        self.leave_atomic(region, released, arrays)
        self.b.epoch += 1          # out of it: what comes after takes the block's values through queues
        if name is not None:
            region.env[name] = saved

    # the kernel -----------------------------------------------------------------------------
    def compile(self) -> Graph:
        self.plan = plan_memory(self.body, self.src.names, self.arrays)
        root = Region(self, None, None, top=True,
                      resolve=lambda name: self._resolve(self.src, name, None))
        self.root = root
        root.env.update({name: Scalar(name) for name in self.scalars})
        for array in self.plan.flowing:
            root.env[tok(array)] = root.env[acc(array)] = Const(0)
        body = self.body
        result = None
        if body and isinstance(body[-1], ast.Return):
            body, result = body[:-1], body[-1]
        self.block(root, body)
        if result is not None and result.value is not None:
            self._sink_name(result, "return")
            self.b.sink("return", self.token(root, self.expr(root, result.value)))
        self.b._tasks = [t for t in self.b._tasks if t.sites or not isinstance(  # async for in dead code
            self.tasks[t.name].node, ast.AsyncFor)]
        for handle in self.b._tasks:
            if not handle.sites:
                self.src.refuse(self.tasks[handle.name].node, f"task {handle.name!r}", "is never pushed, so "
                                "its body never runs", f"push it with push({handle.name}, ...) from the "
                                "kernel body or another task, or remove it")
        try:
            graph = self.b.build()
        except GraphError as error:
            raise LangError(self.src.where(self.src.tree), "kernel", str(error)) from None
        return _prune(graph).validate()


def _annotation(src, node):
    if not isinstance(node, ast.Name):
        return None
    return src.names.get(node.id, getattr(builtins, node.id, None))


def _c_divide(a: int, b: int, symbol: str) -> int:
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return wrap(quotient if symbol == "//" else a - quotient * b)


def _is_condition(node) -> bool:
    return isinstance(node, ast.Compare | ast.BoolOp) or (isinstance(node, ast.UnaryOp) and
                                                          isinstance(node.op, ast.Not)) or \
        (isinstance(node, ast.Constant) and isinstance(node.value, bool))


def _pure(stmts) -> bool:
    """Branch code that may run unconditionally: scalar assignments of load- and call-free values."""
    for stmt in stmts:
        if isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.If):
            if not (_pure(stmt.body) and _pure(stmt.orelse) and _pure_expr(stmt.test)):
                return False
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = stmt.value
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and \
                type(stmt.op) in _BINOPS:
            value = stmt.value
        else:
            return False
        if not _pure_expr(value):
            return False
    return True


def _pure_expr(node) -> bool:
    parts = list(ast.walk(node))
    return not any(isinstance(n, ast.Subscript | ast.Call | ast.NamedExpr | ast.Await) for n in parts) \
        and all(not isinstance(n, ast.BinOp) or type(n.op) in _BINOPS for n in ast.walk(node))


def _describe(node) -> str:
    if isinstance(node, ast.AsyncFunctionDef):
        return f"async def {node.name}"
    if isinstance(node, ast.AsyncFor):
        return "async for"
    return f"{ast.unparse(node.func)}()" if isinstance(node, ast.Call) else type(node).__name__


def _prune(graph: Graph) -> Graph:
    """Keep only operators some effect (store, output, task, lock) depends on."""
    live, stack = set(), [name for name, node in graph.nodes.items() if node.op in _ROOT_OPS]
    while stack:
        name = stack.pop()
        if name in live:
            continue
        live.add(name)
        stack.extend(i.source for i in graph.nodes[name].inputs if i.kind == "edge")
    for name in [n for n in graph.nodes if n not in live]:
        del graph.nodes[name]
    return graph


def compile_kernel(target, mode: str | None = None, *, spill: bool = True,
                   queue_depth: int = DEFAULT_DEPTH) -> Graph:
    """The validated graph of a ``@kernel`` function. ``mode``: "ordered", "ripple" or None (ripple
    if the kernel uses tasks, push or atomic). ``spill=False`` disables the spill rule for push
    cycles (their queues then back-pressure and may deadlock); ``queue_depth`` sizes task queues."""
    if not isinstance(target, Kernel):
        raise TypeError(f"{target!r} is not a @kernel function")
    return _Compiler(target, mode, spill, queue_depth).compile()
