"""Ordered-dataflow operators and Ripple's additions, as small state machines.

This is the specification of what a ``pe`` FU computes: the Ripple golden model
(``ripple_core.interp``) and the ``pe`` kind's unit model (``ripple_core.pe.model``) both run it.

Each operator looks at the fronts of its input slots (``view.has(i)``, ``view.peek(i)``) and its
own state, and either declines (``plan`` returns None: its firing rule does not hold) or returns
a :class:`Fire`: which slots to take, which values to emit on which output ports, and its next
state. Planning never changes anything, so the interpreter can refuse a firing for lack of
output space and ask again next cycle. The rules are those of the RipTide peer suite's README
("Execution model and operator semantics", cited below as [suite]) and of the Ripple notes in
docs/ripple.md ([ripple]).
"""

from dataclasses import dataclass

__all__ = ["MASK", "wrap", "unsigned", "BINARY", "COMPARES", "STREAM_COMPARES", "stream_finished",
           "Fire", "Operator", "make_operator", "OPERATORS", "CONTROL_OPS"]

MASK = 0xFFFF_FFFF


def wrap(value: int) -> int:
    """32-bit two's complement: every value in the model is kept in [-2^31, 2^31)."""
    value &= MASK
    return value - (1 << 32) if value & 0x8000_0000 else value


def unsigned(value: int) -> int:
    """The unsigned 32-bit reading of a value, for the U* compares and LSHR."""
    return value & MASK


# [suite] arithmetic: a op b wrapped to 32 bits; shift amounts use the low 5 bits, as hardware does.
BINARY = {
    "ADD": lambda a, b: wrap(a + b),
    "SUB": lambda a, b: wrap(a - b),
    "MUL": lambda a, b: wrap(a * b),
    "AND": lambda a, b: wrap(a & b),
    "OR": lambda a, b: wrap(a | b),
    "XOR": lambda a, b: wrap(a ^ b),
    "SHL": lambda a, b: wrap(a << (b & 31)),
    "ASHR": lambda a, b: wrap(a >> (b & 31)),
    "LSHR": lambda a, b: wrap(unsigned(a) >> (b & 31)),
}
for _alias in ("GEP", "GEP2", "GEP4"):      # [suite]: GEP variants behave as ADD (word addressing)
    BINARY[_alias] = BINARY["ADD"]

# [suite] compares give 1 or 0; S* signed, U* on the unsigned reinterpretation.
_RELATIONS = {"EQ": lambda a, b: a == b, "NE": lambda a, b: a != b,
              "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b,
              "LT": lambda a, b: a < b, "LE": lambda a, b: a <= b}
COMPARES = {"EQ": _RELATIONS["EQ"], "NE": _RELATIONS["NE"]}
for _rel in ("GT", "GE", "LT", "LE"):
    COMPARES["S" + _rel] = _RELATIONS[_rel]
    COMPARES["U" + _rel] = (lambda rel: lambda a, b: rel(unsigned(a), unsigned(b)))(_RELATIONS[_rel])
for _name, _rel in list(COMPARES.items()):
    BINARY[_name] = (lambda rel: lambda a, b: int(rel(a, b)))(_rel)

STREAM_COMPARES = ("SLT", "ULT", "SLE", "ULE", "SGT", "UGT", "SGE", "UGE")


def stream_finished(cmp: str, index: int, bound: int) -> bool:
    """[suite] STREAM: for the "less" compares the stream ends when NOT (i cmp bound); for the
    "greater" compares it ends when (i cmp bound) holds."""
    holds = COMPARES[cmp](index, bound)
    return not holds if cmp[1] == "L" else holds


@dataclass
class Fire:
    """One planned firing: slots to take (hold slots stay), (port, value) outputs, next state.

    ``store``/``load``/``acquire``/``release`` ask the interpreter for a side effect.
    ``latency`` is decided by the interpreter for memory operations.
    """
    take: tuple = ()
    out: tuple = ()
    state: object = None
    store: tuple | None = None      # (address, value)
    load: int | None = None         # address whose value replaces the LOAD_VALUE placeholder
    acquire: int | None = None
    release: int | None = None
    memory: bool = False


class Operator:
    """Base: ``state`` is the operator's register contents; ``plan`` never mutates it."""
    control = False

    def __init__(self, node):
        self.node = node
        self.state = self.initial_state()

    def initial_state(self):
        return None

    def plan(self, view, ctx) -> Fire | None:
        raise NotImplementedError

    def commit(self, fire: Fire):
        if fire.state is not None:
            self.state = fire.state

    def idle(self) -> bool:
        """True in the state the operator starts in (the end-of-run observation of [suite])."""
        return self.state == self.initial_state()


def _all(view, slots) -> bool:
    return all(view.has(i) for i in slots)


class Binary(Operator):
    """[suite] arithmetic, compare, MUL: both slots hold a token; take both, emit f(a, b)."""

    def __init__(self, node):
        super().__init__(node)
        self.fn = BINARY[node.op]

    def plan(self, view, ctx):
        if not _all(view, (0, 1)):
            return None
        return Fire((0, 1), ((0, self.fn(view.peek(0), view.peek(1))),))


class Ident(Operator):
    """ID: take a, emit a."""

    def plan(self, view, ctx):
        if not view.has(0):
            return None
        return Fire((0,), ((0, view.peek(0)),))


class Select(Operator):
    """[suite] SELECT: all three present; take all three, emit t if d is nonzero, else f."""
    control = True

    def plan(self, view, ctx):
        if not _all(view, (0, 1, 2)):
            return None
        return Fire((0, 1, 2), ((0, view.peek(1) if view.peek(0) else view.peek(2)),))


class Steer(Operator):
    """[suite] STEER: take d and x; emit x only if bool(d) equals the polarity, else drop x."""
    control = True

    def plan(self, view, ctx):
        if not _all(view, (0, 1)):
            return None
        keep = bool(view.peek(0)) == self.node.attrs["pred"]
        return Fire((0, 1), ((0, view.peek(1)),) if keep else ())


class Merge(Operator):
    """[suite] MERGE: wait for d and the slot it selects only; take those two, never the other."""
    control = True

    def plan(self, view, ctx):
        if not view.has(0):
            return None
        side = 1 if view.peek(0) else 2
        if not view.has(side):
            return None
        return Fire((0, side), ((0, view.peek(side)),))


class Order(Operator):
    """[suite] ORDER: take x and y, emit x; y only sequences."""
    control = True

    def plan(self, view, ctx):
        if not _all(view, (0, 1)):
            return None
        return Fire((0, 1), ((0, view.peek(0)),))


class Carry(Operator):
    """[suite] CARRY (d, init, next). INIT: take init, emit it, go to LOOP. LOOP: if d == p take
    d and next and emit next; otherwise take d, emit nothing and re-arm (back to INIT)."""
    control = True

    def initial_state(self):
        return "INIT"

    def plan(self, view, ctx):
        if self.state == "INIT":
            if not view.has(1):
                return None
            return Fire((1,), ((0, view.peek(1)),), "LOOP")
        if not view.has(0):
            return None
        if bool(view.peek(0)) == self.node.attrs["pred"]:
            if not view.has(2):
                return None
            return Fire((0, 2), ((0, view.peek(2)),), "LOOP")
        return Fire((0,), (), "INIT")


class Invariant(Operator):
    """[suite] INVARIANT (d, v). INIT: peek v, emit it, go to LOOP. LOOP: take d; on d == p emit
    v again (still peeked); otherwise take v, emit nothing and re-arm (back to INIT)."""
    control = True

    def initial_state(self):
        return "INIT"

    def plan(self, view, ctx):
        if not view.has(1):
            return None
        if self.state == "INIT":
            return Fire((), ((0, view.peek(1)),), "LOOP")
        if not view.has(0):
            return None
        if bool(view.peek(0)) == self.node.attrs["pred"]:
            return Fire((0,), ((0, view.peek(1)),), "LOOP")
        return Fire((0, 1), (), "INIT")


class Stream(Operator):
    """[suite] STREAM (start, bound, step) -> (index, flag). Idle: needs all three, loads
    i = start. Every firing: finished per :func:`stream_finished`; if not finished emit i on port 0
    and add step (peeked); always emit flag = finished XOR p on port 1; when finished take all
    three and go idle. N indices take N + 1 firings."""
    control = True

    def initial_state(self):
        return ("IDLE", 0)

    def plan(self, view, ctx):
        mode, index = self.state
        if mode == "IDLE":
            if not _all(view, (0, 1, 2)):
                return None
            index = view.peek(0)
        finished = stream_finished(self.node.attrs["cmp"], index, view.peek(1))
        flag = int(finished != self.node.attrs["pred"])
        if finished:
            return Fire((0, 1, 2), ((1, flag),), ("IDLE", 0))
        return Fire((), ((0, index), (1, flag)), ("ACTIVE", wrap(index + view.peek(2))))


LOAD_VALUE = object()       # placeholder for the word the interpreter reads


class Load(Operator):
    """[suite] LOAD (base, offset[, sync]): all present; take them, emit mem[base + offset] on
    port 0 and a completion token 1 on port 1. The sync slot only orders (RAW/WAR chains)."""

    def plan(self, view, ctx):
        slots = range(len(self.node.inputs))
        if not _all(view, slots):
            return None
        address = wrap(view.peek(0) + view.peek(1))
        return Fire(tuple(slots), ((0, LOAD_VALUE), (1, 1)), load=address, memory=True)


class Store(Operator):
    """[suite] STORE (base, offset, value[, sync]): take all, write mem[base + offset] = value,
    emit a completion token 1 on port 0."""

    def plan(self, view, ctx):
        slots = range(len(self.node.inputs))
        if not _all(view, slots):
            return None
        address = wrap(view.peek(0) + view.peek(1))
        return Fire(tuple(slots), ((0, 1),), store=(address, view.peek(2)), memory=True)


class Queue(Operator):
    """[ripple] ``queue``: a k-wide tuple queue whose input slots have the configured depth (spill:
    overflow goes to memory, in order). Passes one whole tuple per firing, so a tuple never splits."""

    def plan(self, view, ctx):
        slots = range(len(self.node.inputs))
        if not _all(view, slots):
            return None
        return Fire(tuple(slots), tuple((k, view.peek(k)) for k in slots))


class Arb(Operator):
    """[ripple] ``arb``: n sources of k-tuples. Round-robin from the source after the last one
    granted; only a source whose whole tuple is present may win, and the tuple leaves in one
    firing. A source that stays ready waits at most n - 1 grants. With ``index`` the arb also
    emits the winning source's number on port k, so that other fields can follow the same choice
    (a pe tile's arb always does, on its port 1: ripple_core/tuples.py)."""

    def initial_state(self):
        return 0

    def plan(self, view, ctx):
        width, sources = self.node.attrs["width"], self.node.attrs["sources"]
        for step in range(sources):
            source = (self.state + step) % sources
            slots = range(source * width, (source + 1) * width)
            if _all(view, slots):
                outputs = tuple((k, view.peek(s)) for k, s in enumerate(slots))
                if self.node.attrs.get("index"):
                    outputs += ((width, source),)
                return Fire(tuple(slots), outputs, (source + 1) % sources)
        return None

    def idle(self) -> bool:
        return True


class Task(Operator):
    """[ripple] task dispatch: takes one k-tuple of arguments and emits it on ports 0..k-1.
    ``ind`` tasks dispatch whenever a tuple and output space are there (pipelined). Other tasks
    hold credits, one unless a ``hold`` slot after the ``done`` slot (index k + 1) gives their
    number: a dispatch spends one and a token on the ``done`` slot (index k) returns one, so at
    most that many invocations run at once. A returning credit takes priority over a dispatch.
    The state is the number of credits spent."""

    def initial_state(self):
        return 0

    def plan(self, view, ctx):
        width = self.node.attrs["width"]
        if not self.node.attrs["ind"]:
            if view.has(width):
                return Fire((width,), (), self.state - 1)
            limit = view.peek(width + 1) if len(self.node.inputs) > width + 1 and view.has(width + 1) else 1
            if self.state >= limit:
                return None
        slots = range(width)
        if not _all(view, slots):
            return None
        return Fire(tuple(slots), tuple((k, view.peek(k)) for k in slots),
                    None if self.node.attrs["ind"] else self.state + 1)


class Acquire(Operator):
    """[ripple] ``acquire`` (address[, sync]): when the atomic directory grants the address
    (nobody holds it, an entry is free), take the inputs, lock it and emit the address."""

    def plan(self, view, ctx):
        slots = range(len(self.node.inputs))
        if not _all(view, slots):
            return None
        address = view.peek(0)
        if not ctx.can_acquire(address):
            ctx.refused(self.node.name)
            return None
        return Fire(tuple(slots), ((0, address),), acquire=address)


class Release(Operator):
    """[ripple] ``release`` (address[, sync]): free the address and emit a completion token 1.
    Releasing an address that is not held is a program error."""

    def plan(self, view, ctx):
        slots = range(len(self.node.inputs))
        if not _all(view, slots):
            return None
        return Fire(tuple(slots), ((0, 1),), release=view.peek(0))


class Sink(Operator):
    """A host output: records each token it takes. The interpreter moves its tokens itself, so a
    sink is never an instruction and never counts as a firing."""

    def plan(self, view, ctx):
        return None


OPERATORS = {name: Binary for name in BINARY}
OPERATORS.update({"ID": Ident, "SELECT": Select, "STEER": Steer, "MERGE": Merge, "ORDER": Order,
                  "CARRY": Carry, "INVARIANT": Invariant, "STREAM": Stream, "LOAD": Load,
                  "STORE": Store, "QUEUE": Queue, "ARB": Arb, "TASK": Task, "ACQUIRE": Acquire,
                  "RELEASE": Release, "SINK": Sink})
CONTROL_OPS = frozenset(name for name, cls in OPERATORS.items() if cls.control)


def make_operator(node) -> Operator:
    return OPERATORS[node.op](node)
