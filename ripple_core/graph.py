"""The dataflow graph the golden model runs: operator nodes with typed, ordered input slots.

A slot is fed by exactly one source: another node's output port (``edge``), a constant
(``const``: one token, consumed once) or a run-time argument (``arg``: one token with the
argument's value, or an array's base address). ``hold`` makes a slot's front token permanent:
it is read but never taken. ``depth`` overrides the run's default slot depth (Ripple's explicit
``queue`` uses it), and ``spill`` lets the slot overflow into memory instead of back-pressuring.

This is the golden model's form of a program; lowering it to the RSN stream graph
(:mod:`rsn.graph`) is a later step. :meth:`Graph.validate` names the node and slot of every
problem, so the importer and the builder report errors before anything runs.
"""

from dataclasses import dataclass, field

from .ops import BINARY, STREAM_COMPARES

__all__ = ["GraphError", "Input", "Node", "Graph", "edge", "const", "arg", "hold", "op_ports"]


class GraphError(ValueError):
    """A malformed graph; the message names the node and the slot."""


@dataclass(frozen=True)
class Input:
    kind: str                       # "edge", "const" or "arg"
    source: str | None = None       # edge: producing node
    port: int = 0                   # edge: its output port
    value: int | None = None        # const
    name: str | None = None         # arg
    hold: bool = False
    depth: int | None = None        # None: the run's default depth
    spill: bool = False

    def describe(self) -> str:
        text = {"edge": f"{self.source}.o{self.port}", "const": f"const {self.value}",
                "arg": f"arg {self.name}"}[self.kind]
        return text + (" (hold)" if self.hold else "")


def edge(source: str, port: int = 0, **options) -> Input:
    return Input("edge", source=source, port=port, **options)


def const(value: int, **options) -> Input:
    return Input("const", value=value, **options)


def hold(value: int) -> Input:
    return Input("const", value=value, hold=True)


def arg(name: str, **options) -> Input:
    return Input("arg", name=name, **options)


@dataclass
class Node:
    name: str
    op: str
    inputs: list[Input]
    attrs: dict = field(default_factory=dict)
    label: str = ""                 # e.g. the importer's vertex name, for messages

    def __str__(self) -> str:
        return f"node {self.name!r} ({self.op}{', ' + self.label if self.label else ''})"


_FIXED = {"ID": (1, 1), "SELECT": (3, 1), "STEER": (2, 1), "MERGE": (3, 1), "ORDER": (2, 1),
          "CARRY": (3, 1), "INVARIANT": (2, 1), "STREAM": (3, 2), "SINK": (1, 0)}
_RANGED = {"LOAD": ((2, 3), 2), "STORE": ((3, 4), 1), "ACQUIRE": ((1, 2), 1), "RELEASE": ((1, 2), 1)}
_PRED_OPS = ("STEER", "CARRY", "INVARIANT", "STREAM")


def op_ports(node: Node) -> tuple[tuple[int, ...], int]:
    """(allowed input counts, output count) of a node's operator."""
    op, attrs = node.op, node.attrs
    if op in BINARY:
        return (2,), 1
    if op in _FIXED:
        n_in, n_out = _FIXED[op]
        return (n_in,), n_out
    if op in _RANGED:
        counts, n_out = _RANGED[op]
        return counts, n_out
    width = attrs.get("width", 1)
    if op == "QUEUE":
        return (width,), width
    if op == "ARB":
        return (width * attrs.get("sources", 0),), width + bool(attrs.get("index"))
    if op == "TASK":       # not ind: the done slot, then optionally the credits (a hold)
        return ((width,) if attrs.get("ind") else (width + 1, width + 2)), width
    raise GraphError(f"{node}: unknown operator {op!r}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class Graph:
    """Nodes by name in program order; scalar arguments and memory arrays in argument order.

    ``arrays``: name -> declared size (None: sized by the run's initial contents). Arrays are laid
    out one after another from address 0 in this order, so a pointer argument's base address is
    the total size of the arrays before it (the peer suite's rule).
    """
    name: str = "graph"
    nodes: dict[str, Node] = field(default_factory=dict)
    scalars: list[str] = field(default_factory=list)
    arrays: dict[str, int | None] = field(default_factory=dict)

    def add(self, name: str, op: str, inputs, label: str = "", **attrs) -> Node:
        if name in self.nodes:
            raise GraphError(f"node {name!r} is added twice; give each operator its own name")
        node = Node(name, op, list(inputs), attrs, label)
        self.nodes[name] = node
        return node

    def consumers(self) -> dict[tuple[str, int], list[tuple[str, int]]]:
        """(node, output port) -> the (node, slot) pairs it feeds, in program order."""
        table: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for node in self.nodes.values():
            for slot, source in enumerate(node.inputs):
                if source.kind == "edge":
                    table.setdefault((source.source, source.port), []).append((node.name, slot))
        return table

    def validate(self) -> "Graph":
        """Check every node and slot; raise :class:`GraphError` naming the first problem."""
        for name in self.scalars:
            if name in self.arrays:
                raise GraphError(f"{name!r} is declared both as a scalar argument and as an array")
        for array, size in self.arrays.items():
            if size is not None and (not _is_int(size) or size < 0):
                raise GraphError(f"array {array!r}: size {size!r} must be an integer >= 0")
        for node in self.nodes.values():
            self._validate_node(node)
        return self

    def _validate_node(self, node: Node):
        counts, _ = op_ports(node)
        attrs = node.attrs
        if node.op in _PRED_OPS and not isinstance(attrs.get("pred"), bool):
            raise GraphError(f"{node}: needs pred=True or pred=False (the decider polarity)")
        if node.op == "STREAM" and attrs.get("cmp") not in STREAM_COMPARES:
            raise GraphError(f"{node}: cmp {attrs.get('cmp')!r} is not one of {', '.join(STREAM_COMPARES)}")
        if node.op in ("QUEUE", "ARB", "TASK") and (not _is_int(attrs.get("width")) or attrs["width"] < 1):
            raise GraphError(f"{node}: width {attrs.get('width')!r} must be an integer >= 1 (the tuple size)")
        if node.op == "ARB" and (not _is_int(attrs.get("sources")) or attrs["sources"] < 2):
            raise GraphError(f"{node}: sources {attrs.get('sources')!r} must be an integer >= 2")
        if node.op == "ARB" and not isinstance(attrs.get("index", False), bool):
            raise GraphError(f"{node}: index {attrs['index']!r} must be True (emit the winning source on "
                             f"port {attrs['width']}) or False")
        if node.op == "TASK" and not isinstance(attrs.get("ind"), bool):
            raise GraphError(f"{node}: needs ind=True (pipelined) or ind=False (one at a time)")
        if node.op == "TASK" and len(node.inputs) == attrs.get("width", 1) + 2:
            credits = node.inputs[-1]
            if credits.kind != "const" or not credits.hold or not _is_int(credits.value) or credits.value < 1:
                raise GraphError(f"{node}: its last input gives the invocations that may run at once: it "
                                 f"must be hold(k) with k >= 1, not {credits.describe()}")
        if len(node.inputs) not in counts:
            want = " or ".join(str(c) for c in counts)
            raise GraphError(f"{node}: has {len(node.inputs)} inputs, {node.op} takes {want}")
        for slot, source in enumerate(node.inputs):
            self._validate_input(node, slot, source)

    def _validate_input(self, node: Node, slot: int, source: Input):
        where = f"{node}, input {slot}"
        if not isinstance(source, Input):
            raise GraphError(f"{where}: {source!r} is not an edge, const or arg input")
        if source.depth is not None and (not _is_int(source.depth) or source.depth < 1):
            raise GraphError(f"{where}: depth {source.depth!r} must be an integer >= 1")
        if source.kind == "edge":
            producer = self.nodes.get(source.source)
            if producer is None:
                raise GraphError(f"{where}: source node {source.source!r} does not exist")
            _, n_out = op_ports(producer)
            if not _is_int(source.port) or not 0 <= source.port < n_out:
                raise GraphError(f"{where}: {producer} has no output port {source.port!r} "
                                 f"(it has 0..{n_out - 1})")
        elif source.kind == "const":
            if not _is_int(source.value):
                raise GraphError(f"{where}: constant {source.value!r} is not an integer")
        elif source.kind == "arg":
            if source.name not in self.scalars and source.name not in self.arrays:
                raise GraphError(f"{where}: argument {source.name!r} is neither a scalar nor an array "
                                 f"of {self.name}")
        else:
            raise GraphError(f"{where}: unknown input kind {source.kind!r}")

    def static_instructions(self) -> int:
        """Program size: one instruction per operator node (constants and holds are operands)."""
        return len(self.nodes)

    def unspilled_task_cycles(self) -> list[list[str]]:
        """Cycles of the task dependency graph (task -> tasks its body pushes to) in which no
        task's queue spills: Ripple's rule is that each such cycle needs a spill queue."""
        tasks = [node for node in self.nodes.values() if node.op == "TASK"]
        consumers = self.consumers()

        def spills(task: Node) -> bool:
            return any(src.kind == "edge" and self.nodes[src.source].op == "QUEUE"
                       and any(i.spill for i in self.nodes[src.source].inputs) for src in task.inputs)

        reach: dict[str, set[str]] = {}
        for task in tasks:
            seen, stack, found = {task.name}, [task.name], set()
            while stack:
                current = stack.pop()
                _, n_out = op_ports(self.nodes[current])
                for port in range(n_out):
                    for target, _slot in consumers.get((current, port), []):
                        if self.nodes[target].op == "TASK":
                            found.add(target)
                        elif target not in seen:
                            seen.add(target)
                            stack.append(target)
            reach[task.name] = found
        cycles, by_name = [], {task.name: task for task in tasks}
        for start in by_name:
            path = self._cycle_from(start, reach)
            if path and not any(spills(by_name[name]) for name in path) and sorted(path) not in \
                    [sorted(c) for c in cycles]:
                cycles.append(path)
        return cycles

    @staticmethod
    def _cycle_from(start: str, reach: dict[str, set[str]]) -> list[str] | None:
        """A shortest task cycle through ``start``, or None."""
        frontier, parents = [start], {start: None}
        while frontier:
            nxt = []
            for current in frontier:
                for target in sorted(reach[current]):
                    if target == start:
                        path = [current]
                        while parents[path[-1]] is not None:
                            path.append(parents[path[-1]])
                        return path[::-1]
                    if target not in parents:
                        parents[target] = current
                        nxt.append(target)
            frontier = nxt
        return None
