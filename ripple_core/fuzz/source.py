"""The fuzzer's source programs: a tiny structured language (scalars, arrays, assignments, if/else,
counted loops, loads, stores, host outputs) and its reference interpreter.

A generated program is written here first and compiled to a dataflow graph afterwards
(:mod:`ripple_core.fuzz.compile`), the way a C kernel goes through RipTide's compiler. The
interpreter below runs the source directly, statement by statement, so it is the reference that
every machine (the dataflow golden model, the fabric's golden model, the RTL) is checked against,
and it shares no code with any of them.

Programs are plain nested tuples and lists, so that a failing program can be stored as JSON
and shrunk by rewriting the tree:

* expressions: ``("var", name)``, ``("const", value)``, ``("bin", op, a, b)``,
  ``("select", cond, a, b)``, ``("load", array, index)``;
* statements: ``("let", name, expr)``, ``("if", cond, then, else)``,
  ``("for", var, start, bound, step, rel, style, body)``, ``("store", array, index, value)``,
  ``("out", sink, expr)``.

A ``for`` loop runs ``var = start; while rel(var, bound): body; var += step``; ``style`` is
``"carry"`` (a CARRY counter and a compare) or ``"stream"`` (a STREAM). A variable a loop or a
branch assigns that existed before it lives on after it; one first assigned inside is local.
"""

from dataclasses import dataclass, field

__all__ = ["Program", "Outcome", "SourceError", "evaluate", "RELATIONS", "BINARY_OPS", "apply_binary",
           "statements", "expression_nodes"]

_MASK = 0xFFFF_FFFF


def _s32(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value >> 31 else value


def _u32(value: int) -> int:
    return value & _MASK


# Written from the RipTide operator table in docs/ripple.md: 32-bit two's complement, shift
# amounts modulo 32, compares give 0 or 1 (S signed, U unsigned).
RELATIONS = {
    "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b,
    "SLT": lambda a, b: _s32(a) < _s32(b), "SLE": lambda a, b: _s32(a) <= _s32(b),
    "SGT": lambda a, b: _s32(a) > _s32(b), "SGE": lambda a, b: _s32(a) >= _s32(b),
    "ULT": lambda a, b: _u32(a) < _u32(b), "ULE": lambda a, b: _u32(a) <= _u32(b),
    "UGT": lambda a, b: _u32(a) > _u32(b), "UGE": lambda a, b: _u32(a) >= _u32(b),
}
_ARITHMETIC = {
    "ADD": lambda a, b: a + b, "SUB": lambda a, b: a - b, "MUL": lambda a, b: a * b,
    "AND": lambda a, b: a & b, "OR": lambda a, b: a | b, "XOR": lambda a, b: a ^ b,
    "SHL": lambda a, b: a << (b & 31), "ASHR": lambda a, b: _s32(a) >> (b & 31),
    "LSHR": lambda a, b: _u32(a) >> (b & 31), "GEP": lambda a, b: a + b,
}
BINARY_OPS = tuple(_ARITHMETIC) + tuple(RELATIONS)


def apply_binary(op: str, a: int, b: int) -> int:
    """``a op b`` on 32-bit words, as a signed value."""
    if op in RELATIONS:
        return int(RELATIONS[op](a, b))
    return _s32(_ARITHMETIC[op](_s32(a), _s32(b)))


class SourceError(ValueError):
    """A source program that reads an undefined variable, indexes outside an array or runs too long."""


@dataclass
class Program:
    """``scalars``: name -> value (run-time arguments); ``arrays``: name -> initial contents (a
    power-of-two length, so that an index masked with ``len - 1`` is in range); ``body``: the
    statements. ``sinks`` lists the host outputs in the order the graph declares them."""
    scalars: dict[str, int] = field(default_factory=dict)
    arrays: dict[str, list[int]] = field(default_factory=dict)
    body: list = field(default_factory=list)
    sinks: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"scalars": self.scalars, "arrays": self.arrays, "body": self.body, "sinks": self.sinks}

    @classmethod
    def from_json(cls, data: dict) -> "Program":
        def tuples(item):
            if isinstance(item, list) and item and isinstance(item[0], str):
                return tuple(tuples(x) for x in item)
            if isinstance(item, list):
                return [tuples(x) for x in item]
            return item
        return cls(dict(data["scalars"]), {k: list(v) for k, v in data["arrays"].items()},
                   [tuples(s) for s in data["body"]], list(data["sinks"]))


@dataclass
class Outcome:
    outputs: dict[str, list[int]]
    arrays: dict[str, list[int]]
    iterations: int


def evaluate(program: Program, *, max_iterations: int = 100_000) -> Outcome:
    """Run ``program`` statement by statement: the reference outputs and final arrays."""
    arrays = {name: [_s32(v) for v in contents] for name, contents in program.arrays.items()}
    outputs = {name: [] for name in program.sinks}
    budget = [max_iterations]

    def value(expr, env):
        tag = expr[0]
        if tag == "var":
            if expr[1] not in env:
                raise SourceError(f"variable {expr[1]!r} is read before it is assigned")
            return env[expr[1]]
        if tag == "const":
            return _s32(expr[1])
        if tag == "bin":
            return apply_binary(expr[1], value(expr[2], env), value(expr[3], env))
        if tag == "select":
            return value(expr[2], env) if value(expr[1], env) else value(expr[3], env)
        if tag == "load":
            contents, index = arrays[expr[1]], value(expr[2], env)
            if not 0 <= index < len(contents):
                raise SourceError(f"load {expr[1]}[{index}] is outside the array (length {len(contents)})")
            return contents[index]
        raise SourceError(f"unknown expression {expr!r}")

    def run(stmts, env):
        for stmt in stmts:
            tag = stmt[0]
            if tag == "let":
                env[stmt[1]] = value(stmt[2], env)
            elif tag == "out":
                outputs[stmt[1]].append(value(stmt[2], env))
            elif tag == "store":
                contents, index = arrays[stmt[1]], value(stmt[2], env)
                if not 0 <= index < len(contents):
                    raise SourceError(f"store {stmt[1]}[{index}] is outside the array "
                                      f"(length {len(contents)})")
                contents[index] = value(stmt[3], env)
            elif tag == "if":
                branch = stmt[2] if value(stmt[1], env) else stmt[3]
                inner = dict(env)
                run(branch, inner)
                env.update({name: inner[name] for name in env})
            elif tag == "for":
                _, var, start, bound, step, rel, _style, body = stmt
                outer = set(env)
                index = value(start, env)
                while RELATIONS[rel](index, value(bound, env)):
                    budget[0] -= 1
                    if budget[0] < 0:
                        raise SourceError(f"more than {max_iterations} loop iterations")
                    inner = dict(env)
                    inner[var] = index
                    run(body, inner)
                    env.update({name: inner[name] for name in outer})
                    index = _s32(index + step)
            else:
                raise SourceError(f"unknown statement {stmt!r}")

    env = dict(program.scalars)
    run(program.body, env)
    return Outcome(outputs, arrays, max_iterations - budget[0])


def statements(stmts):
    """Every statement of ``stmts``, nested ones too, outermost first."""
    for stmt in stmts:
        yield stmt
        if stmt[0] == "if":
            yield from statements(stmt[2])
            yield from statements(stmt[3])
        elif stmt[0] == "for":
            yield from statements(stmt[7])


def expression_nodes(expr):
    """Every sub-expression of ``expr``, itself first."""
    yield expr
    if expr[0] == "bin":
        yield from expression_nodes(expr[2])
        yield from expression_nodes(expr[3])
    elif expr[0] == "select":
        for part in expr[1:]:
            yield from expression_nodes(part)
    elif expr[0] == "load":
        yield from expression_nodes(expr[2])
