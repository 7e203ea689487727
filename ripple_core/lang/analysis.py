"""Static questions about a scope's statements, asked before any operator is built: which names
and memory tokens a loop body or a branch may assign (so a loop knows its CARRYs up front), which
names a body reads, which arrays a scope loads and stores, and which tasks it pushes.

A *scope* is a kernel body, a task body or an ``async for`` body; walks never enter a nested
scope (``async def`` bodies, ``async for`` bodies), since those run as tasks of their own.
"""

import ast
import builtins

from .api import Kernel, atomic, ind, out, push
from .source import source_of

__all__ = ["MARKERS", "marker_of", "scope_walk", "assigned_names", "read_names", "tok", "acc",
           "memory_sites", "assigned_effects", "uses_ripple", "output_names", "push_targets"]

MARKERS = {"push": push, "out": out, "atomic": atomic, "ind": ind, "range": builtins.range}


def tok(array: str) -> str:
    """The pseudo-variable an access of ``array`` waits for when it loads (last store's token)."""
    return f"@tok:{array}"


def acc(array: str) -> str:
    """The pseudo-variable a store of ``array`` waits for (tok joined with every load since)."""
    return f"@acc:{array}"


def marker_of(names: dict, node) -> str | None:
    """"push", "out", "atomic", "ind" or "range" if ``node`` is a name bound to that marker."""
    if not isinstance(node, ast.Name):
        return None
    value = names.get(node.id, getattr(builtins, node.id, None))
    for key, marker in MARKERS.items():
        if value is marker:
            return key
    return None


def _atomic_with(names, node) -> bool:
    return isinstance(node, ast.With) and len(node.items) == 1 and \
        isinstance(node.items[0].context_expr, ast.Call) and \
        marker_of(names, node.items[0].context_expr.func) == "atomic"


def scope_walk(stmts, names: dict, in_atomic: bool = False):
    """Every AST node of ``stmts`` in this scope, with whether it lies inside an atomic block."""
    stack = [(node, in_atomic) for node in reversed(stmts)]
    while stack:
        node, inside = stack.pop()
        yield node, inside
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.AsyncFor):
            stack.append((node.iter, inside))
            continue
        child_inside = inside or _atomic_with(names, node)
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child, child_inside))


def assigned_names(stmts, names: dict) -> set[str]:
    found = set()
    for node, _ in scope_walk(stmts, names):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
    return found


def read_names(stmts, names: dict, *, nested: bool = False) -> set[str]:
    """Names read; with ``nested`` also inside nested ``async for`` bodies (their captures)."""
    found = set()
    nodes = ast.walk(ast.Module(body=list(stmts), type_ignores=[])) if nested else \
        (n for n, _ in scope_walk(stmts, names))
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
    return found


def memory_sites(stmts, names: dict, arrays) -> dict:
    """array -> {"loads": n, "stores": n, "inside": n sites in atomic blocks, "outside": n}."""
    sites = {}
    for node, inside in scope_walk(stmts, names):
        target = None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in arrays:
            target = node.value.id
        if target is None:
            continue
        entry = sites.setdefault(target, {"loads": 0, "stores": 0, "inside": 0, "outside": 0})
        kinds = ["stores"] if isinstance(node.ctx, ast.Store) else ["loads"]
        if isinstance(node.ctx, ast.Store) and getattr(node, "_augmented", False):
            kinds.append("loads")
        for kind in kinds:
            entry[kind] += 1
            entry["inside" if inside else "outside"] += 1
    return sites


def assigned_effects(stmts, names: dict, flowing) -> set[str]:
    """Names and memory pseudo-variables that ``stmts`` may assign (a superset is safe: an extra
    CARRY passes its value through; a missing one would lose a write)."""
    found = assigned_names(stmts, names)
    for node, _ in scope_walk(stmts, names):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in flowing:
            array = node.value.id
            found.add(acc(array))
            if isinstance(node.ctx, ast.Store):
                found.add(tok(array))
        if _atomic_with(names, node):
            for array, _entry in memory_sites(node.body, names, flowing).items():
                found.update((tok(array), acc(array)))
    return found


def uses_ripple(stmts, names: dict) -> ast.AST | None:
    """The first construct that needs mode "ripple" (a task, a push, an atomic block), or None."""
    for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, ast.AsyncFunctionDef | ast.AsyncFor):
            return node
        if isinstance(node, ast.Call) and marker_of(names, node.func) in ("push", "atomic"):
            return node
    return None


def output_names(src) -> set[str]:
    """The constant names of the ``out()`` calls of a kernel and of the helpers it calls: the
    builder reserves them before any operator is named, so that none takes an output's name."""
    found, seen, sources = set(), set(), [src]
    while sources:
        current = sources.pop()
        for node in ast.walk(current.tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            callee = current.names.get(node.func.id)
            if marker_of(current.names, node.func) == "out" and node.args and \
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
            elif isinstance(callee, Kernel) and callee.fn not in seen:
                seen.add(callee.fn)
                sources.append(source_of(callee))
    return found


def push_targets(stmts, names: dict) -> tuple[set[str], list]:
    """(task names pushed by this scope, ``async for`` nodes directly in this scope)."""
    targets, loops = set(), []
    for node, _ in scope_walk(stmts, names):
        if isinstance(node, ast.Call) and marker_of(names, node.func) == "push" and node.args \
                and isinstance(node.args[0], ast.Name):
            targets.add(node.args[0].id)
        if isinstance(node, ast.AsyncFor):
            loops.append(node)
    return targets, loops
