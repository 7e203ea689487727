"""Which tasks a kernel has and which queues must spill.

Tasks are the ``async def`` functions at the top level of a kernel body (``@ind``: pipelined,
otherwise one invocation at a time) and one implicit ``ind`` task per ``async for`` (its
arguments: the index, then the enclosing values its body reads). The task dependency graph has
an edge from a scope to every task it pushes (an ``async for`` pushes its implicit task). A push
cycle with bounded queues can fill every queue on it and deadlock, so Ripple's rule is applied:
every task that lies on a cycle gets a spill queue; the others get a plain queue of the default
depth. ``spill=False`` (an explicit compile option) turns the rule off, to show the deadlock.
"""

import ast
from dataclasses import dataclass, field

from .analysis import marker_of, push_targets

__all__ = ["TaskInfo", "plan_tasks", "DEFAULT_DEPTH"]

DEFAULT_DEPTH = 2


@dataclass
class TaskInfo:
    name: str
    node: ast.AST                    # the AsyncFunctionDef or AsyncFor
    ind: bool
    params: list = field(default_factory=list)
    inflight: int | None = None      # @ind(inflight=k): at most k invocations at once
    pushes: set = field(default_factory=set)
    spill: bool = False
    handle: object = None

    @property
    def body(self):
        return self.node.body


def implicit_name(node: ast.AsyncFor) -> str:
    return f"async_for{node.lineno}"


def _inflight(src, call: ast.Call) -> int:
    """k of ``@ind(inflight=k)``: an integer >= 1, literal or a module constant."""
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    value = keywords.get("inflight")
    if isinstance(value, ast.Constant):
        value = value.value
    elif isinstance(value, ast.Name):
        value = src.names.get(value.id)
    if call.args or set(keywords) != {"inflight"} or not isinstance(value, int) or isinstance(value, bool) \
            or value < 1:
        src.refuse(call, "@ind(...)", "@ind takes one argument, inflight=k, an integer >= 1 (the "
                   "invocations that may run at once)", "write @ind or @ind(inflight=4)")
    return value


def plan_tasks(src, body, *, spill: bool = True) -> dict[str, TaskInfo]:
    """name -> TaskInfo for every task of the kernel whose body is ``body``."""
    tasks: dict[str, TaskInfo] = {}
    for stmt in body:
        if isinstance(stmt, ast.AsyncFunctionDef):
            inflight, marks = None, []
            for decorator in stmt.decorator_list:
                call = isinstance(decorator, ast.Call)
                mark = marker_of(src.names, decorator.func if call else decorator)
                if mark != "ind":
                    src.refuse(decorator, "task decorator", "only @ind may decorate an async def task",
                               "remove the decorator")
                if call:
                    inflight = _inflight(src, decorator)
                marks.append(mark)
            if stmt.name in tasks:
                src.refuse(stmt, "async def", f"task {stmt.name!r} is defined twice", "rename one")
            tasks[stmt.name] = TaskInfo(stmt.name, stmt, ind="ind" in marks,
                                        params=[a.arg for a in stmt.args.args], inflight=inflight)
    scopes = [(None, body)] + [(name, info.body) for name, info in tasks.items()]
    while scopes:
        owner, stmts = scopes.pop()
        targets, loops = push_targets(stmts, src.names)
        for loop in loops:
            name = implicit_name(loop)
            tasks[name] = TaskInfo(name, loop, ind=True)
            targets.add(name)
            scopes.append((name, loop.body))
        if owner is not None:
            tasks[owner].pushes |= targets
    if spill:
        for name in tasks:
            if _on_cycle(name, tasks):
                tasks[name].spill = True
    return tasks


def _on_cycle(start: str, tasks) -> bool:
    seen, stack = set(), [start]
    while stack:
        current = stack.pop()
        for target in tasks[current].pushes if current in tasks else ():
            if target == start:
                return True
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return False
