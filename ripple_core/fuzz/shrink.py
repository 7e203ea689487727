"""Shrink a failing fuzzer program: smaller programs one rewrite away, for a greedy search.

:func:`candidates` lists programs that each differ from the given one by one simplification:
a statement removed, an ``if`` replaced by one of its branches, a loop replaced by one pass of
its body, a loop bound or a constant made
smaller, a sub-expression replaced by one of its operands or by 0, an argument or array word
set to 0, an unused array or scalar dropped. Many are not valid programs (a variable read before
it is assigned); :func:`shrink` keeps only those the reference interpreter runs, and of those the
first that still fails, round after round, until no candidate fails.
"""

import copy
import json

from .compile import compile_program
from .source import Program, SourceError, evaluate

__all__ = ["candidates", "shrink", "size", "valid"]


def size(program: Program) -> tuple[int, int]:
    """What the shrinker minimises: operators of the compiled graph, then the source's length."""
    return len(compile_program(program).nodes), len(json.dumps(program.to_json()))


def _paths(stmts, prefix=()):
    """(path, statement) for every statement; a path is a tuple of (list index, sub-list) steps."""
    for index, stmt in enumerate(stmts):
        path = prefix + (index,)
        yield path, stmt
        if stmt[0] == "if":
            yield from _paths(stmt[2], path + (2,))
            yield from _paths(stmt[3], path + (3,))
        elif stmt[0] == "for":
            yield from _paths(stmt[7], path + (7,))


def _container(body, path):
    """The list holding the statement at ``path``, and its index there."""
    target = body
    for step in range(0, len(path) - 1, 2):
        target = target[path[step]][path[step + 1]]
    return target, path[-1]


def _replace(program: Program, path, replacement: list) -> Program:
    """``program`` with the statement at ``path`` replaced by the statements ``replacement``."""
    body = _thaw(program.body)
    stmts, index = _container(body, path)
    stmts[index:index + 1] = _thaw(replacement)
    return Program(dict(program.scalars), copy.deepcopy(program.arrays), _freeze(body), list(program.sinks))


def _thaw(item):
    if isinstance(item, (tuple, list)):
        return [_thaw(x) for x in item]
    return item


def _freeze(stmts):
    """Statements back to tuples (their bodies stay lists)."""
    def stmt(s):
        tag = s[0]
        if tag == "if":
            return ("if", _expr(s[1]), [stmt(x) for x in s[2]], [stmt(x) for x in s[3]])
        if tag == "for":
            return ("for", s[1], _expr(s[2]), _expr(s[3]), s[4], s[5], s[6], [stmt(x) for x in s[7]])
        if tag in ("let", "out"):
            return (tag, s[1], _expr(s[2]))
        return ("store", s[1], _expr(s[2]), _expr(s[3]))
    return [stmt(s) for s in stmts]


def _expr(e):
    return tuple(_expr(x) if isinstance(x, (list, tuple)) else x for x in e)


def _smaller_exprs(expr):
    """Expressions one step simpler than ``expr`` (replacements for it)."""
    tag = expr[0]
    if tag == "const":
        if expr[1] not in (0, 1):
            yield ("const", 0)
            yield ("const", expr[1] // 2)
        return
    if tag == "var":
        yield ("const", 0)
        return
    if tag == "bin":
        yield expr[2]
        yield expr[3]
        yield ("const", 0)
        for k in (2, 3):
            for smaller in _smaller_exprs(expr[k]):
                yield expr[:k] + (smaller,) + expr[k + 1:]
    elif tag == "select":
        yield expr[2]
        yield expr[3]
        for k in (1, 2, 3):
            for smaller in _smaller_exprs(expr[k]):
                yield expr[:k] + (smaller,) + expr[k + 1:]
    elif tag == "load":
        yield ("const", 0)
        for smaller in _smaller_exprs(expr[2]):
            yield expr[:2] + (smaller,)


def _expression_slots(stmt):
    tag = stmt[0]
    if tag in ("let", "out"):
        return (2,)
    if tag == "store":
        return (2, 3)
    if tag == "if":
        return (1,)
    if tag == "for":
        return (2, 3)
    return ()


def candidates(program: Program):
    """Programs one simplification smaller than ``program``, biggest cuts first."""
    paths = list(_paths(program.body))
    for path, stmt in paths:
        yield _replace(program, path, [])
        if stmt[0] == "if":
            yield _replace(program, path, list(stmt[2]))
            yield _replace(program, path, list(stmt[3]))
        if stmt[0] == "for":        # one iteration, without the loop
            yield _replace(program, path, [("let", stmt[1], stmt[2]), *stmt[7]])
            if stmt[2][0] == "const":   # ... with the counter a scalar, so nothing folds away
                once = _replace(program, path, list(stmt[7]))
                once.scalars[stmt[1]] = stmt[2][1]
                yield once
    for path, stmt in paths:
        if stmt[0] == "for" and stmt[3][0] == "const" and stmt[3][1] > 0:
            step = 1 if stmt[4] > 0 else -1
            yield _replace(program, path, [stmt[:3] + (("const", stmt[3][1] - step),) + stmt[4:]])
    for path, stmt in paths:
        for slot in _expression_slots(stmt):
            for smaller in _smaller_exprs(stmt[slot]):
                yield _replace(program, path, [stmt[:slot] + (smaller,) + stmt[slot + 1:]])
    for name, value in program.scalars.items():
        if value:
            yield Program({**program.scalars, name: 0}, copy.deepcopy(program.arrays), program.body,
                          list(program.sinks))
    for name, words in program.arrays.items():
        if any(words):
            yield Program(dict(program.scalars), {**copy.deepcopy(program.arrays), name: [0] * len(words)},
                          program.body, list(program.sinks))


def valid(program: Program) -> bool:
    """Whether the reference interpreter runs ``program`` and the compiler takes it."""
    try:
        evaluate(program)
        compile_program(program)
    except (SourceError, KeyError, ValueError):
        return False
    return True


def shrink(program: Program, fails, *, rounds: int = 200, batch: int = 1):
    """Greedy shrinking: while some valid candidate smaller than the current program still fails,
    take the smallest failing one. ``fails(programs)`` answers for a list of programs at once
    (one simulation can run a whole batch) with one bool per program; ``batch`` candidates are
    asked per call. Returns the smallest failing program found."""
    current, current_size = program, size(program)
    for _ in range(rounds):
        smaller = [c for c in candidates(current) if valid(c)]
        smaller = sorted((size(c), n, c) for n, c in enumerate(smaller))
        smaller = [(s, c) for s, _, c in smaller if s < current_size]
        found = None
        for start in range(0, len(smaller), batch):
            group = smaller[start:start + batch]
            verdicts = fails([c for _, c in group])
            failing = [(s, c) for (s, c), bad in zip(group, verdicts, strict=True) if bad]
            if failing:
                found = failing[0]
                break
        if found is None:
            return current
        current_size, current = found
    return current
