"""Random source programs shaped like the kernels a dataflow compiler sees: loop nests (counters
and STREAMs, triangular bounds, up and down), accumulators carried across iterations, if/else
regions and selects, loads with data-dependent indices, a store, a read-modify-write array, host
outputs, and every arithmetic and compare operator.

Every program terminates and stays in its arrays by construction: loop bounds are small
constants, small scalars or enclosing loop counters, and an array index is masked with the
array's length minus one (lengths are powers of two).
"""

import random

from .compile import compile_program
from .source import BINARY_OPS, Program, SourceError, evaluate

__all__ = ["random_program", "GeneratorLimits"]

_UP = ("SLT", "SLE", "ULT", "ULE")
_SINKS = ("y0", "y1")


class GeneratorLimits:
    """Size limits: operators of the compiled graph and loop iterations of the reference run."""

    def __init__(self, min_ops: int = 10, max_ops: int = 60, max_iterations: int = 60,
                 max_depth: int = 2):
        self.min_ops, self.max_ops = min_ops, max_ops
        self.max_iterations, self.max_depth = max_iterations, max_depth


class _Writer:
    def __init__(self, rng: random.Random, limits: GeneratorLimits):
        self.rng, self.limits = rng, limits
        self.names = 0
        self.scalars: dict[str, int] = {}
        self.bounds: dict[str, int] = {}        # small scalars a loop may run to
        self.arrays: dict[str, list[int]] = {}
        self.read_only: list[str] = []
        self.store_only: list[str] = []         # one store statement each
        self.rmw: list[str] = []                # one load and one store each
        self.unused_stores: set[str] = set()
        self.unused_rmw: set[str] = set()
        self.sinks: list[str] = []

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def value(self) -> int:
        rng = self.rng
        kind = rng.random()
        if kind < 0.5:
            return rng.randint(-20, 20)
        if kind < 0.8:
            return rng.randint(-2**31, 2**31 - 1)
        return rng.choice([0, 1, -1, 31, 32, 2**31 - 1, -2**31])

    # expressions --------------------------------------------------------------------------
    def expr(self, scope: list[str], depth: int = 2):
        rng = self.rng
        if depth <= 0 or rng.random() < 0.3:
            if scope and rng.random() < 0.85:
                return ("var", rng.choice(scope))
            return ("const", self.value())
        pick = rng.random()
        if pick < 0.12 and self.read_only:
            return self.load(rng.choice(self.read_only), scope, depth)
        if pick < 0.2:
            return ("select", *(self.expr(scope, depth - 1) for _ in range(3)))
        op = rng.choice(BINARY_OPS)
        return ("bin", op, self.expr(scope, depth - 1), self.expr(scope, depth - 1))

    def load(self, array: str, scope, depth):
        return ("load", array, self.index(array, scope, depth))

    def index(self, array: str, scope, depth=1):
        mask = len(self.arrays[array]) - 1
        inner = self.expr(scope, depth - 1) if scope else ("const", self.rng.randrange(mask + 1))
        return ("bin", "AND", inner, ("const", mask))

    def cond(self, scope):
        rng = self.rng
        if rng.random() < 0.75:
            rel = rng.choice(("EQ", "NE", "SLT", "SLE", "SGT", "SGE", "ULT", "ULE", "UGT", "UGE"))
            return ("bin", rel, self.expr(scope, 1), self.expr(scope, 1))
        return self.expr(scope, 1)

    # statements ---------------------------------------------------------------------------
    def block(self, scope: list[str], counters: list[str], depth: int, length: int) -> list:
        """Statements for a region whose variables are ``scope`` (``counters``: loop counters)."""
        rng = self.rng
        stmts, scope = [], list(scope)
        for _ in range(length):
            pick = rng.random()
            if pick < 0.25 and depth < self.limits.max_depth:
                stmts += self.loop(scope, counters, depth)
            elif pick < 0.4:
                stmts += self.branch(scope, counters, depth)
            elif pick < 0.5 and self.unused_stores:
                array = self.unused_stores.pop()
                stmts.append(("store", array, self.index(array, scope, 2), self.expr(scope)))
            elif pick < 0.6 and self.unused_rmw and scope:
                stmts += self.read_modify_write(self.unused_rmw.pop(), scope)
            elif pick < 0.7 and len(self.sinks) < len(_SINKS):
                sink = _SINKS[len(self.sinks)]
                self.sinks.append(sink)
                stmts.append(("out", sink, self.expr(scope)))
            elif pick < 0.85 and [v for v in scope if v not in counters and v not in self.scalars]:
                target = rng.choice([v for v in scope if v not in counters and v not in self.scalars])
                update = ("bin", rng.choice(BINARY_OPS), ("var", target), self.expr(scope, 1))
                stmts.append(("let", target, update))
            else:
                name = self.fresh("v")
                stmts.append(("let", name, self.expr(scope)))
                scope.append(name)
        return stmts

    def read_modify_write(self, array: str, scope):
        """``x = R[k]; R[k'] = f(x)``: one load and one store of the same array."""
        word = self.fresh("m")
        value = ("bin", self.rng.choice(BINARY_OPS), ("var", word), self.expr(scope, 1))
        same = self.rng.random() < 0.6
        index = self.index(array, scope, 2)
        return [("let", word, ("load", array, index)),
                ("store", array, index if same else self.index(array, scope, 2), value)]

    def branch(self, scope, counters, depth):
        rng = self.rng
        targets = [v for v in scope if v not in counters and v not in self.scalars]
        stmts = []
        if not targets or rng.random() < 0.3:
            name = self.fresh("t")
            stmts.append(("let", name, self.expr(scope, 1)))
            scope.append(name)
            targets.append(name)
        chosen = rng.sample(targets, min(len(targets), rng.randint(1, 2)))
        sides = []
        for _ in range(2):
            side = []
            for target in chosen:
                if rng.random() < 0.8:
                    side.append(("let", target, self.expr(scope, 2)))
            if rng.random() < 0.25:
                side += self.block(scope, counters, depth + 1, 1)
            sides.append(side)
        stmts.append(("if", self.cond(scope), sides[0], sides[1]))
        return stmts

    def small(self, names, low, high, constant_share):
        """A loop bound: a constant in ``low..high``, or one of the small ``names``."""
        if not names or self.rng.random() < constant_share:
            return ("const", self.rng.randint(low, high))
        return ("var", self.rng.choice(names))

    def loop(self, scope, counters, depth):
        rng = self.rng
        var = self.fresh("i")
        style = rng.choice(("carry", "carry~", "stream", "stream~", "stream^", "stream~^"))
        small = [c for c in counters] + list(self.bounds)
        if style.startswith("stream") or rng.random() < 0.7:
            rel = rng.choice(_UP)
            step = rng.choice((1, 1, 2))
            start = self.small(small, 0, 2, 0.6)
            bound = self.small(small, 0, 5, 0.4)
        else:
            rel, step = rng.choice((("SGT", -1), ("SGE", -1), ("SGT", -2), ("UGT", -1)))
            start = self.small(small, 2, 5, 0.5)
            bound = ("const", rng.randint(0, 2))
        stmts = []
        accumulators = [v for v in scope if v not in counters and v not in self.scalars]
        if not accumulators or rng.random() < 0.5:
            name = self.fresh("s")
            stmts.append(("let", name, self.expr(scope, 1)))
            scope.append(name)
        body = self.block(scope + [var], counters + [var], depth + 1, rng.randint(1, 4))
        stmts.append(("for", var, start, bound, step, rel, style, body))
        return stmts

    def program(self) -> Program:
        rng = self.rng
        for _ in range(rng.randint(1, 3)):
            name = self.fresh("n")
            if rng.random() < 0.5:
                self.scalars[name] = self.bounds[name] = rng.randint(0, 5)
            else:
                self.scalars[name] = self.value()
        for _ in range(rng.randint(0, 3)):
            name = self.fresh("A")
            self.arrays[name] = [self.value() for _ in range(rng.choice((4, 8, 16)))]
            self.read_only.append(name)
        if rng.random() < 0.6:
            name = self.fresh("W")
            self.arrays[name] = [self.value() for _ in range(rng.choice((4, 8)))]
            self.store_only.append(name)
            self.unused_stores.add(name)
        if rng.random() < 0.5:
            name = self.fresh("R")
            self.arrays[name] = [self.value() for _ in range(rng.choice((4, 8)))]
            self.rmw.append(name)
            self.unused_rmw.add(name)
        body = self.block(list(self.scalars), [], 0, rng.randint(2, 5))
        if not self.sinks:
            self.sinks.append(_SINKS[0])
            scope = [s for s in (stmt[1] for stmt in body if stmt[0] == "let")] or list(self.scalars)
            body.append(("out", _SINKS[0], ("var", rng.choice(scope)) if scope else ("const", 1)))
        return Program(self.scalars, self.arrays, body, list(self.sinks))


def random_program(rng: random.Random, limits: GeneratorLimits | None = None, *, tries: int = 200) -> Program:
    """A program whose graph has ``limits.min_ops`` to ``limits.max_ops`` operators and whose
    reference run takes at most ``limits.max_iterations`` loop iterations."""
    limits = limits or GeneratorLimits()
    for _ in range(tries):
        program = _Writer(rng, limits).program()
        try:
            outcome = evaluate(program, max_iterations=limits.max_iterations)
        except SourceError:
            continue
        if outcome.iterations == 0 and rng.random() < 0.7:
            continue
        size = len(compile_program(program).nodes)
        if limits.min_ops <= size <= limits.max_ops:
            return program
    raise RuntimeError(f"no program of {limits.min_ops} to {limits.max_ops} operators in {tries} tries")
