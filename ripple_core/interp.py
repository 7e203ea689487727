"""The golden model: a token-level, cycle-counting interpreter of a :class:`~ripple_core.graph.Graph`.

One cycle:

* every operator (PE) fires at most once, judged on the slot fronts and the state it had at the
  start of the cycle; operators are visited in program order, which only matters for who wins
  the atomic directory when two acquires ask for the same address in the same cycle;
* a firing also needs room for every token it emits: a bounded slot of depth D accepts a token
  only if its tokens at the start of the cycle plus tokens already in flight to it are fewer than
  D (a token taken this cycle frees its place from the next cycle on). Spill slots always accept;
* tokens an operator emits in cycle t are visible from cycle t + 1; LOAD and STORE outputs from
  cycle t + ``mem_latency``. A LOAD reads memory as it was at the start of its cycle; stores are
  written at the end of their cycle in program order; a release frees its address at the end of
  its cycle, an acquire takes it at once;
* ``cycles`` is the first cycle from which nothing fires and nothing is in flight. With unbounded
  slots and ``mem_latency`` 1 this is the peer suite's step count.

Counters: cycles, firings (dynamic instructions), static instructions, IPC = firings / cycles,
spill traffic (words written to and read back from spill memory), memory reads and writes.
When nothing can move but some operator's firing rule holds (it waits for output space or for a
lock), the run is a deadlock and :class:`DeadlockError` names those operators and the full
queues. SINK nodes record what reaches them and count neither as instructions nor as firings.
"""

from collections import deque
from dataclasses import dataclass, field

from rsn.words import word_problem

from .graph import Graph, GraphError
from .ops import CONTROL_OPS, LOAD_VALUE, make_operator, wrap

__all__ = ["run", "Result", "DeadlockError", "AtomicError", "RunawayError", "layout", "check_inputs"]


class DeadlockError(RuntimeError):
    """Nothing can fire, yet some operator is ready and waits for space or a lock."""

    def __init__(self, message: str, result: "Result"):
        super().__init__(message)
        self.result = result


class AtomicError(RuntimeError):
    """A release of an address that is not held."""


class RunawayError(RuntimeError):
    """The run passed ``max_cycles``."""


class _Slot:
    __slots__ = ("q", "capacity", "spill", "hold", "reserved", "popped", "owner", "index", "producer",
                 "machine", "peak")

    def __init__(self, machine, owner, index, source, depth):
        self.machine, self.owner, self.index = machine, owner, index
        self.q = deque()
        self.capacity = source.depth if source.depth is not None else depth
        self.spill, self.hold = source.spill, source.hold
        self.reserved = self.popped = self.peak = 0
        self.producer = None

    def room(self) -> bool:
        return (self.spill or self.capacity is None
                or len(self.q) + self.popped + self.reserved < self.capacity)

    def push(self, value):
        if self.spill and self.capacity is not None and len(self.q) >= self.capacity:
            self.machine.spill_writes += 1
        self.q.append(value)
        self.peak = max(self.peak, len(self.q))

    def take(self):
        if self.hold:
            return
        if self.spill and self.capacity is not None and len(self.q) > self.capacity:
            self.machine.spill_reads += 1
        self.q.popleft()
        self.popped += 1


class _View:
    __slots__ = ("slots",)

    def __init__(self, slots):
        self.slots = slots

    def has(self, i) -> bool:
        return bool(self.slots[i].q)

    def peek(self, i):
        return self.slots[i].q[0]


@dataclass
class Result:
    cycles: int = 0
    firings: int = 0
    static_instructions: int = 0
    spill_writes: int = 0
    spill_reads: int = 0
    mem_reads: int = 0
    mem_writes: int = 0
    control_firings: int = 0
    max_locks_held: int = 0
    # Atomics' contention: ACQUIREs that found their address held (or the directory full) with
    # their inputs ready, and the cycles they waited from then until they fired.
    contended_acquires: int = 0
    lock_wait_cycles: int = 0
    queue_peaks: dict = field(default_factory=dict)  # QUEUE node -> most tokens its slot 0 held at once
    firings_by_node: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)       # array name -> final contents
    outputs: dict = field(default_factory=dict)      # SINK name -> tokens received
    leftovers: list = field(default_factory=list)    # non-hold slots still holding tokens
    not_idle: list = field(default_factory=list)     # stateful operators not back in their first state
    trace: list = field(default_factory=list)        # (cycle, node, outputs) when asked for

    @property
    def ipc(self) -> float:
        return self.firings / self.cycles if self.cycles else 0.0

    @property
    def spill_traffic(self) -> int:
        return self.spill_writes + self.spill_reads

    @property
    def drained(self) -> bool:
        return not self.leftovers


def layout(graph: Graph, memory: dict) -> dict[str, tuple[int, int]]:
    """Array name -> (base, size): one after another from address 0, in declaration order.
    A size comes from the initial contents if given, else from the declaration."""
    placed, base = {}, 0
    for name, declared in graph.arrays.items():
        size = len(memory[name]) if name in memory else declared
        if size is None:
            raise GraphError(f"array {name!r} has no declared size and no initial contents")
        if declared is not None and size > declared:
            raise GraphError(f"array {name!r}: {size} initial words do not fit its size {declared}")
        placed[name] = (base, size)
        base += size
    return placed


# The model computes on 32-bit two's complement words, as RipTide's PEs do.
WORD_BITS = 32


def check_inputs(graph: Graph, args: dict, memory: dict):
    """Raise :class:`GraphError` unless ``args`` give exactly the graph's scalar arguments and
    ``memory`` only its arrays, as lists, with every value a 32-bit word (signed or unsigned):
    an extra argument is a misspelt or misplaced one, and a wider value would be truncated."""
    unknown = set(memory) - set(graph.arrays)
    if unknown:
        raise GraphError(f"memory given for {sorted(unknown)}, which are not arrays of {graph.name}")
    missing = [name for name in graph.scalars if name not in args]
    if missing:
        raise GraphError(f"{graph.name}: no value for scalar argument(s) {', '.join(missing)}")
    extra = [name for name in args if name not in graph.scalars]
    if extra:
        raise GraphError(f"argument(s) {', '.join(map(repr, extra))} given, but {graph.name}'s "
                         f"{len(graph.scalars)} scalar parameter(s) are {', '.join(graph.scalars) or 'none'}"
                         f"{' (arrays go in mem)' if set(extra) & set(graph.arrays) else ''}")
    for name, value in args.items():
        problem = word_problem(value, WORD_BITS, "a dataflow word")
        if problem:
            raise GraphError(f"argument {name!r}: {problem}")
    for name, contents in memory.items():
        if not isinstance(contents, list | tuple):
            raise GraphError(f"memory of array {name!r} is a {type(contents).__name__}, not a list of words")
        for index, value in enumerate(contents):
            problem = word_problem(value, WORD_BITS, "a dataflow word")
            if problem:
                raise GraphError(f"array {name!r} word {index}: {problem}")


class _Machine:
    def __init__(self, graph, args, memory, depth, mem_latency, atomic_entries, trace):
        graph.validate()
        check_inputs(graph, args, memory)
        self.graph, self.mem_latency, self.atomic_entries, self.tracing = graph, mem_latency, \
            atomic_entries, trace
        self.placed = layout(graph, memory)
        self.memory = {}
        for name, contents in memory.items():
            base = self.placed[name][0]
            for k, value in enumerate(contents):
                self.memory[base + k] = wrap(value)
        values = {name: wrap(args[name]) for name in graph.scalars}
        values.update({name: base for name, (base, _) in self.placed.items()})
        self.names = list(graph.nodes)
        index = {name: k for k, name in enumerate(self.names)}
        self.nodes = [graph.nodes[name] for name in self.names]
        self.ops = [make_operator(node) for node in self.nodes]
        self.slots = []
        for k, node in enumerate(self.nodes):
            row = []
            for i, source in enumerate(node.inputs):
                slot = _Slot(self, k, i, source, depth)
                if source.kind == "edge":
                    slot.producer = index[source.source]
                elif source.kind == "const":
                    slot.q.append(wrap(source.value))
                else:
                    slot.q.append(values[source.name])
                row.append(slot)
            self.slots.append(row)
        self.views = [_View(row) for row in self.slots]
        self.out = [[] for _ in self.nodes]             # per node, per port: consumer slots
        for k, node in enumerate(self.nodes):
            for slot in self.slots[k]:
                source = node.inputs[slot.index]
                if source.kind == "edge":
                    ports = self.out[slot.producer]
                    while len(ports) <= source.port:
                        ports.append([])
                    ports[source.port].append(slot)
        self.acquirers = [k for k, node in enumerate(self.nodes) if node.op == "ACQUIRE"]
        self.sinks = {k for k, node in enumerate(self.nodes) if node.op == "SINK"}
        self.directory: dict[int, str] = {}
        self.cycle, self.lock_waits = 0, {}         # ACQUIRE name -> cycle it was first refused
        self.spill_writes = self.spill_reads = 0
        self.result = Result(static_instructions=len(self.nodes) - len(self.sinks))
        self.result.outputs = {self.nodes[k].name: [] for k in self.sinks}

    def can_acquire(self, address) -> bool:
        return address not in self.directory and (
            self.atomic_entries is None or len(self.directory) < self.atomic_entries)

    def refused(self, name: str):
        """ACQUIRE ``name`` is ready but its address is taken: it waits from this cycle on."""
        self.lock_waits.setdefault(name, self.cycle)

    def _ports(self, k, port):
        ports = self.out[k]
        return ports[port] if port < len(ports) else ()

    def run(self, max_cycles) -> Result:
        pending = {}
        firings = [0] * len(self.nodes)
        candidates, cycle, end = set(range(len(self.nodes))), 0, 0
        while candidates or pending:
            if cycle >= max_cycles:
                raise RunawayError(f"{self.graph.name}: still running after {max_cycles} cycles")
            wake, stores, releases, popped = set(), [], [], []
            self.cycle = cycle
            for k in sorted(candidates):
                if k in self.sinks:
                    self._sink(k, wake, popped)
                    continue
                fire = self.ops[k].plan(self.views[k], self)
                if fire is None:
                    continue
                if not all(slot.room() for port, _ in fire.out for slot in self._ports(k, port)):
                    continue
                self._commit(k, fire, cycle, pending, wake, stores, releases, popped)
                firings[k] += 1
                end = max(end, cycle + (self.mem_latency if fire.memory else 1))
            for address, value in stores:
                self.memory[address] = value
            for name, address in releases:
                if address not in self.directory:
                    raise AtomicError(f"node {name!r} releases address {address}, which no acquire holds")
                del self.directory[address]
            if releases:
                wake.update(self.acquirers)
            for slot in popped:
                slot.popped = 0
            for slot, value in pending.pop(cycle + 1, ()):
                slot.reserved -= 1
                slot.push(value)
                wake.add(slot.owner)
            candidates = wake
            cycle += 1
        return self._finish(firings, end)

    def _sink(self, k, wake, popped):
        slot = self.slots[k][0]
        if slot.q:
            self.result.outputs[self.nodes[k].name].append(slot.q[0])
            slot.take()
            popped.append(slot)
            wake.add(k)
            if slot.producer is not None:
                wake.add(slot.producer)

    def _commit(self, k, fire, cycle, pending, wake, stores, releases, popped):
        slots = self.slots[k]
        for i in fire.take:
            slot = slots[i]
            slot.take()
            popped.append(slot)
            if slot.producer is not None:
                wake.add(slot.producer)
        loaded = None
        if fire.load is not None:
            loaded = self.memory.get(fire.load, 0)
            self.result.mem_reads += 1
        if fire.store is not None:
            stores.append(fire.store)
            self.result.mem_writes += 1
        if fire.acquire is not None:
            self.directory[fire.acquire] = self.nodes[k].name
            since = self.lock_waits.pop(self.nodes[k].name, None)
            if since is not None:
                self.result.contended_acquires += 1
                self.result.lock_wait_cycles += cycle - since
            self.result.max_locks_held = max(self.result.max_locks_held, len(self.directory))
        if fire.release is not None:
            releases.append((self.nodes[k].name, fire.release))
        due = cycle + (self.mem_latency if fire.memory else 1)
        arrivals = pending.setdefault(due, [])
        for port, value in fire.out:
            if value is LOAD_VALUE:
                value = loaded
            for slot in self._ports(k, port):
                slot.reserved += 1
                arrivals.append((slot, value))
        if self.tracing:
            self.result.trace.append((cycle, self.nodes[k].name,
                                      tuple((p, loaded if v is LOAD_VALUE else v) for p, v in fire.out)))
        self.ops[k].commit(fire)
        wake.add(k)

    def _finish(self, firings, end) -> Result:
        result = self.result
        result.cycles = end
        result.firings_by_node = {self.names[k]: n for k, n in enumerate(firings) if k not in self.sinks}
        result.firings = sum(result.firings_by_node.values())
        result.control_firings = sum(n for k, n in enumerate(firings) if self.nodes[k].op in CONTROL_OPS)
        result.spill_writes, result.spill_reads = self.spill_writes, self.spill_reads
        result.queue_peaks = {node.name: self.slots[k][0].peak for k, node in enumerate(self.nodes)
                              if node.op == "QUEUE"}
        result.arrays = {name: [self.memory.get(base + i, 0) for i in range(size)]
                         for name, (base, size) in self.placed.items()}
        for k, node in enumerate(self.nodes):
            for slot in self.slots[k]:
                if slot.q and not slot.hold:
                    result.leftovers.append(f"{node.name}.i{slot.index} holds {len(slot.q)} token(s)")
            if not self.ops[k].idle():
                result.not_idle.append(node.name)
        blocked = self._blocked()
        if blocked:
            raise DeadlockError(f"{self.graph.name}: deadlock after {result.cycles} cycles: "
                                + "; ".join(blocked), result)
        return result

    def _blocked(self) -> list[str]:
        """Why each operator whose firing rule holds cannot fire: full queues or held locks."""
        reasons = []
        for k, node in enumerate(self.nodes):
            if k in self.sinks:
                continue
            fire = self.ops[k].plan(self.views[k], self)
            if fire is None:
                if node.op == "ACQUIRE" and all(self.views[k].has(i) for i in range(len(node.inputs))):
                    address = self.views[k].peek(0)
                    holder = self.directory.get(address)
                    reasons.append(f"{node} waits for address {address}, held by {holder!r}"
                                   if holder else f"{node} waits for a free atomic directory entry")
                continue
            full = {self._slot_name(slot) for port, _ in fire.out for slot in self._ports(k, port)
                    if not slot.room()}
            reasons.append(f"{node} cannot emit: {', '.join(sorted(full))} full")
        return reasons

    def _slot_name(self, slot) -> str:
        node = self.nodes[slot.owner]
        depth = "spill" if slot.spill else slot.capacity
        if node.op == "QUEUE":
            return f"queue {node.name!r} (depth {depth})"
        return f"slot {node.name}.i{slot.index} (depth {depth})"


def run(graph: Graph, args: dict | None = None, memory: dict | None = None, *, depth: int | None = 2,
        mem_latency: int = 1, atomic_entries: int | None = None, max_cycles: int = 10_000_000,
        trace: bool = False) -> Result:
    """Run ``graph`` to quiescence. ``depth`` is every slot's depth unless the graph sets one
    (None: unbounded); ``memory`` gives arrays' initial contents; ``atomic_entries`` bounds the
    atomic directory (None: unbounded)."""
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise GraphError(f"depth {depth!r} must be an integer >= 1 or None (unbounded)")
    if isinstance(mem_latency, bool) or not isinstance(mem_latency, int) or mem_latency < 1:
        raise GraphError(f"mem_latency {mem_latency!r} must be an integer >= 1")
    machine = _Machine(graph, dict(args or {}), dict(memory or {}), depth, mem_latency, atomic_entries,
                       trace)
    return machine.run(max_cycles)
