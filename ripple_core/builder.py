"""A small Python API for writing dataflow programs: operators, constants, holds, queues, tasks
and memory arrays, built into a validated :class:`~ripple_core.graph.Graph`.

Operator methods return :class:`Ref` (an output port; ``ref.at(1)`` is port 1 of the same node).
Loops need a value before it exists: ``w = b.wire()`` stands for it and ``w.bind(ref)`` closes
the back edge. A task is an ``async`` function: ``b.task(...)`` gives its argument refs, ``b.push``
adds a call site; at :meth:`Builder.build` its push sites become an ``arb`` (if more than one),
then its ``queue``, then its dispatcher.
"""

from dataclasses import dataclass, field

from .graph import Graph, GraphError, Input, edge

__all__ = ["Builder", "Ref", "Wire", "TaskHandle"]


@dataclass(frozen=True)
class Ref:
    node: str
    port: int = 0

    def at(self, port: int) -> "Ref":
        return Ref(self.node, port)


@dataclass(eq=False)
class Wire:
    """A value used before it is made (a loop's back edge); bind it once."""
    label: str
    ref: Ref | None = None

    def bind(self, ref: Ref):
        if self.ref is not None:
            raise GraphError(f"wire {self.label!r} is bound twice")
        if not isinstance(ref, Ref):
            raise GraphError(f"wire {self.label!r} must be bound to an operator output, not {ref!r}")
        self.ref = ref


@dataclass(eq=False)
class TaskHandle:
    name: str
    params: int
    ind: bool
    depth: int
    spill: bool
    sites: list = field(default_factory=list)
    done: object = None
    credits: int = 1                # not ind: invocations that may run at once

    @property
    def args(self) -> tuple[Ref, ...]:
        """The invocation's arguments, one ref per parameter."""
        return tuple(Ref(self.name, k) for k in range(self.params))

    def finish(self, token):
        """For a non-``ind`` task: a token that marks the end of an invocation (returns the credit)."""
        if self.ind:
            raise GraphError(f"task {self.name!r} is ind async: its invocations overlap, it has no finish")
        if self.done is not None:
            raise GraphError(f"task {self.name!r}: finish is given twice")
        self.done = token


class Builder:
    def __init__(self, name: str = "program"):
        self.graph = Graph(name=name)
        self._pending = []          # (node name, raw inputs) converted at build time
        self._tasks: list[TaskHandle] = []
        self._count = 0
        self._depths = {}           # QUEUE node -> (depth, spill) of its slots
        self._reserved: set[str] = set()    # names given later (outputs, tasks): no operator takes one

    # operands -------------------------------------------------------------------------------
    def scalar(self, name: str, *, hold: bool = True) -> Input:
        """A run-time scalar argument (held by default: loop-invariant, read by every iteration)."""
        if name not in self.graph.scalars:
            self.graph.scalars.append(name)
        return Input("arg", name=name, hold=hold)

    def array(self, name: str, size: int | None = None, *, hold: bool = True) -> Input:
        """A memory array; the operand is its base address (held by default)."""
        if name not in self.graph.arrays:
            self.graph.arrays[name] = size
        return Input("arg", name=name, hold=hold)

    def const(self, value: int) -> Input:
        """A constant consumed once."""
        return Input("const", value=value)

    def hold(self, value: int) -> Input:
        """A constant that is never consumed."""
        return Input("const", value=value, hold=True)

    def wire(self, label: str = "wire") -> Wire:
        return Wire(label)

    # operators ------------------------------------------------------------------------------
    def reserve(self, *names: str):
        """Keep ``names`` from the automatic names of operators: a node named later (a host output,
        a task) would otherwise clash with an operator that happened to get the same name."""
        self._reserved.update(names)

    def op(self, op: str, *inputs, name: str | None = None, **attrs) -> Ref:
        self._count += 1
        while not name and f"{op.lower()}{self._count}" in self._reserved:
            self._count += 1
        name = name or f"{op.lower()}{self._count}"
        self.graph.add(name, op, [], **attrs)
        self._pending.append((name, list(inputs)))
        return Ref(name, 0)

    def __getattr__(self, op_name: str):
        """``b.add(x, y)``, ``b.slt(x, y)``, ... for every binary operator of :mod:`ripple_core.ops`."""
        from .ops import BINARY
        op = op_name.rstrip("_").upper()        # and_, or_: Python keywords
        if op in BINARY and not op_name.startswith("_"):
            return lambda a, b, name=None: self.op(op, a, b, name=name)
        raise AttributeError(op_name)

    def ident(self, a, name=None) -> Ref:
        return self.op("ID", a, name=name)

    def select(self, d, t, f, name=None) -> Ref:
        return self.op("SELECT", d, t, f, name=name)

    def steer(self, d, v, pred: bool = True, name=None) -> Ref:
        return self.op("STEER", d, v, name=name, pred=pred)

    def merge(self, d, t, f, name=None) -> Ref:
        return self.op("MERGE", d, t, f, name=name)

    def order(self, a, b, name=None) -> Ref:
        return self.op("ORDER", a, b, name=name)

    def carry(self, d, init, nxt, pred: bool = True, name=None) -> Ref:
        return self.op("CARRY", d, init, nxt, name=name, pred=pred)

    def invariant(self, d, v, pred: bool = True, name=None) -> Ref:
        return self.op("INVARIANT", d, v, name=name, pred=pred)

    def stream(self, start, bound, step, cmp: str = "SLT", pred: bool = False, name=None) -> tuple[Ref, Ref]:
        """(index, flag): flag is ``finished XOR pred`` (pred False: 0 per index, 1 at the end)."""
        ref = self.op("STREAM", start, bound, step, name=name, cmp=cmp, pred=pred)
        return ref, ref.at(1)

    def load(self, base, index, sync=None, name=None) -> Ref:
        """mem[base + index]; ``.at(1)`` is its completion token."""
        return self.op("LOAD", base, index, *([sync] if sync is not None else []), name=name)

    def store(self, base, index, value, sync=None, name=None) -> Ref:
        """Writes mem[base + index]; the result is its completion token."""
        return self.op("STORE", base, index, value, *([sync] if sync is not None else []), name=name)

    def acquire(self, address, sync=None, name=None) -> Ref:
        """Emits ``address`` once this site holds it exclusively."""
        return self.op("ACQUIRE", address, *([sync] if sync is not None else []), name=name)

    def release(self, address, sync=None, name=None) -> Ref:
        return self.op("RELEASE", address, *([sync] if sync is not None else []), name=name)

    def sink(self, name: str, value) -> None:
        """A host output named ``name``: the run's ``outputs[name]`` lists what reaches it."""
        self.op("SINK", value, name=name)

    def queue(self, *values, depth: int, spill: bool = False, name=None) -> tuple[Ref, ...]:
        """An explicit token queue of ``depth`` tuples of ``len(values)`` values."""
        ref = self.op("QUEUE", *values, name=name, width=len(values))
        self._depths[ref.node] = (depth, spill)
        return tuple(ref.at(k) for k in range(len(values)))

    def arb(self, *tuples, name=None) -> tuple[Ref, ...]:
        """Fair round-robin merge of whole tuples from several sources."""
        width = len(tuples[0]) if tuples else 0
        if any(len(t) != width for t in tuples):
            raise GraphError(f"arb {name or ''}: every source must give a tuple of {width} values")
        ref = self.op("ARB", *[v for t in tuples for v in t], name=name, width=width, sources=len(tuples))
        return tuple(ref.at(k) for k in range(width))

    # tasks ----------------------------------------------------------------------------------
    def task(self, name: str, params: int = 1, *, ind: bool = True, depth: int = 4,
             spill: bool = False, credits: int = 1) -> TaskHandle:
        """An ``async`` task (``ind``: invocations pipelined) with a ``depth``-tuple input queue.
        Not ``ind``: at most ``credits`` invocations run at once, each ended by its finish token."""
        if name in self.graph.nodes or any(t.name == name for t in self._tasks):
            raise GraphError(f"task {name!r}: the name is taken")
        if not isinstance(credits, int) or isinstance(credits, bool) or credits < 1 or (ind and credits != 1):
            raise GraphError(f"task {name!r}: credits={credits!r}; give an integer >= 1, and only to a task "
                             f"that is not ind (an ind task's invocations are not counted)")
        handle = TaskHandle(name, params, ind, depth, spill, credits=credits)
        self.reserve(name)
        self._tasks.append(handle)
        return handle

    def push(self, task: TaskHandle, *values):
        """A call site: send the tuple ``values`` to ``task``'s queue."""
        if len(values) != task.params:
            raise GraphError(f"push to task {task.name!r}: {len(values)} values for {task.params} parameters")
        task.sites.append(values)

    # building -------------------------------------------------------------------------------
    def _input(self, node: str, slot: int, value) -> Input:
        if isinstance(value, Wire):
            if value.ref is None:
                raise GraphError(f"node {node!r}, input {slot}: wire {value.label!r} was never bound")
            value = value.ref
        if isinstance(value, Ref):
            result = edge(value.node, value.port)
        elif isinstance(value, Input):
            result = value
        else:
            raise GraphError(f"node {node!r}, input {slot}: {value!r} is not an operand; use b.const(v), "
                             f"b.hold(v), b.scalar(name), b.array(name) or an operator's output")
        if node in self._depths:
            depth, spill = self._depths[node]
            result = Input(result.kind, result.source, result.port, result.value, result.name,
                           result.hold, depth, spill)
        return result

    def _lower_tasks(self):
        for task in self._tasks:
            if not task.sites:
                raise GraphError(f"task {task.name!r} is never pushed")
            if not task.ind and task.done is None:
                raise GraphError(f"task {task.name!r} runs one invocation at a time: give the token that "
                                 f"ends an invocation with task.finish(token)")
            values = task.sites[0]
            if len(task.sites) > 1:
                values = self.arb(*task.sites, name=f"{task.name}.arb")
            queued = self.queue(*values, depth=task.depth, spill=task.spill, name=f"{task.name}.q")
            done = [] if task.ind else [task.done] + ([self.hold(task.credits)] if task.credits > 1 else [])
            self.graph.add(task.name, "TASK", [], width=task.params, ind=task.ind)
            self._pending.append((task.name, [*queued, *done]))

    def build(self) -> Graph:
        self._lower_tasks()
        for name, raw in self._pending:
            self.graph.nodes[name].inputs = [self._input(name, k, v) for k, v in enumerate(raw)]
        self._pending, self._tasks = [], []
        return self.graph.validate()
