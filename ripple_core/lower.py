"""From a dataflow graph and one case's arguments to an RSN program on ``pe`` tiles.

The lowering (docs/ripple.md, "On the RTL fabric"):

* **One PE per operator, or per pair of sites** (a *unit*). One ACQUIRE and one RELEASE share
  a LOCK PE (the atomic directory); the LOAD and the STORE of one STOREd array share an LDST PE
  (the array's bank). QUEUE, ARB and TASK are PEs of those operators, one per field of a
  tuple (:mod:`ripple_core.tuples` splits tuples into one stream per field first). A
  task on a push cycle without a spill queue is refused, naming the queue (Ripple's rule).
  Otherwise each operator node becomes a ``pe`` node. Its configuration word
  (operator, ``pred``, STREAM ``cmp``, the slot kinds, the ``drop`` mask) and the constants of its
  ``const``, ``hold`` and ``arg`` slots are the PE's registers 0-3, written before the run. An
  ``arg`` slot is a constant of this case: the scalar's value, or the array's base address. The
  PE's slot k is the operator's slot k and FU input k (both follow :mod:`ripple_core.ops`), and
  its output k the operator's port k, so no renumbering happens anywhere.
* **One stream per output port.** Every consumer slot of a port is a sink of that port's one
  stream, which place & route builds as a multicast tree. A SINK node becomes a host output port
  on the same stream. A port with no stream (no consumer, or no token in this case) is in the
  PE's ``drop`` mask, so its tokens are discarded as the golden model drops them.
* **Counts.** A route carries a counted number of tokens and a PE micro-op grants a counted
  number of firings, but in a dataflow program both depend on the data. They come from the
  golden model (:mod:`ripple_core.interp`) run on the case. In ordered dataflow they do not depend
  on timing, so the fabric (other buffers, other latencies, host back-pressure) must fire each PE
  exactly that often; a fabric that computes a different decider fires differently and does not
  finish. An operator that never fires in the case gets no tile, and a port that emits nothing
  gets no stream: the fabric refuses empty micro-ops and streams. Tasks that write memory fire
  counts that depend on the schedule, so they lower with **open counts** (``counts=``): every PE
  an open micro-op, every PE-to-PE stream a static route, and the run ends at quiescence.
* **Memory.** A PE's bank is private (rsn/pe_kind.py), so an array lives in the bank of the PE
  that accesses it: a copy in each LOAD's bank for an array that is only read, else the one
  STORE's (or LDST's) bank; the fabric's ``[pe] mem_depth`` sizes every bank. The node's
  base slot must be the array's pointer argument, held (the RipTide suite's only shape), and its
  ``origin`` register (5) is the array's flat base, so the node's flat addresses reach bank words
  ``0 .. len - 1``. The array's initial contents are written through the bank window before the
  run (page 0: banks hold at most 2048 words). After the run the program reads each memory PE's
  status register (the fault bit must be clear) and every STOREd array back through the window.
* **Reference.** The expected host outputs are the case's own ``expect`` (one token list per SINK
  name), and the expected read-back words are the case's ``expect`` for the STOREd arrays, never
  the golden model's, so a wrong model cannot hide a wrong fabric. An array no PE on the fabric
  can change (only LOADed, or its STORE never fires in this case) must be expected unchanged;
  :attr:`RippleLowering.array_problems` lists those whose ``expect`` differs.

**On a fabric with a shared memory** (a ``[memory]`` table; docs/shared-memory.md) none of the
private banks' rules apply: every LOAD and STORE node is a PE of its own that reaches any
address, so bases may be computed, any number of LOADs and STOREs may touch an array, and
arrays may fill the memory. The arrays lie at the case's flat addresses (one after another from
0, as the golden model lays them out); their initial words are preloaded into the shared memory
before the START packet, and after the run every array the case expects is read back from it.
Atomics go to the memory's per-bank directory: each ACQUIRE and each RELEASE node is a PE of
its own (ACQUIRE / RELEASE, not a LOCK), so any number of sites may lock any addresses, and
each such PE's status is read back for the fault a stray release sets. A memory without a
directory (``lock_entries`` 0) is refused for atomics. A QUEUE there holds a few words in its
PE and the rest in a ring of the shared memory: the rings lie above the arrays, and each gets
as many words as its queue can ever have spilled in this case (the tokens through it, less what
its PE holds), or, if the memory is too small for that, as many as the golden model's run had
spilled at once; a ring that cannot fit, or that the caller declares smaller than that, is
refused naming the queue. Its base and size are the PE's registers 5 and 12, and a ring that
runs out at run time shows as the queue's fault, which the checker reports by the queue's name.

Not on the fabric: on private banks, more than one ACQUIRE or RELEASE site and the memory
shapes they cannot serve (a STOREd array accessed by more than one LOAD or STORE, a base that is
not the array's held pointer argument, a sync slot on a STORE or on an LDST's LOAD). A graph
that uses one gets a :class:`LoweringError` naming the node. A graph too large for the fabric
gets the placer's or router's error at compile time.
"""

from dataclasses import dataclass, field

from rsn.checks import MAX_BEATS
from rsn.graph import StreamGraph
from rsn.isa import field_width
from rsn.program import SHARED_MEMORY, Program

from . import pe as pe_kind
from .graph import Graph, GraphError, op_ports
from .interp import DeadlockError, Result, RunawayError, layout, run
from .ops import wrap
from .packing import UnitStreams, pack_tiles
from .pe import MEM_WINDOW, N_PORTS, N_SLOTS, PE_OPS, REG_CONFIG, REG_CONST, REG_STATUS, pe_config_word
from .pe.lanes import lane_register
from .tuples import split_tuples

__all__ = ["LoweringError", "RippleLowering", "Unit", "MAX_FIRINGS", "check_lowerable",
           "memory_nodes", "lower_graph", "compile_lowering"]

# The most firings one PE micro-op grants (its joined 24-bit count). A unit that needs more takes
# several micro-ops and a tile of its own: see _grants.
MAX_FIRINGS = (1 << field_width(pe_kind.PeUop, "firings")) - 1
HOLD_ZERO = ("hold", 0)         # a slot that is always present and never taken (no sync)
ABSENT = ("const", None)        # a slot that is never present (an ARB source that does not exist)


class LoweringError(ValueError):
    """A graph or case cannot be lowered onto pe tiles; the message names the node and why."""


@dataclass
class RippleLowering:
    """The program and what the lowering learnt from the golden model's run of the case.

    Keys are *units*, the pe tiles' PEs: one operator node, or two sites served by one PE (an
    ACQUIRE and a RELEASE in a LOCK, a LOAD and a STORE of one array in an LDST), named
    ``first+second``. ``firings``: unit -> firings (the micro-ops' grants, the sum of its nodes'
    firings in the golden model; the RTL's firing counters must equal them). ``tokens``: (node,
    port) -> tokens the port emits. ``outputs``: SINK node -> its host output port. ``model``: the
    golden model's run (its cycles are a reference for timing, not a promise). ``arrays``: memory
    unit -> the array its bank holds. ``shared_arrays``: on a fabric with a shared memory, the
    arrays read back from it after the run, in order, with their (base, length). ``units``:
    unit -> its operator nodes. ``rings``: on a shared memory, QUEUE unit -> its ring's (base,
    words). ``counts``: ``"exact"`` or ``"open"`` (see :func:`lower_graph`); with open counts the
    firings are the golden model's schedule's, which the fabric's need not equal. The program's
    ``reads`` per checked unit are its status register, then (units that store) every word of
    its array; ``expected_reads`` hold the status with the fault bit clear and the case's ``expect``.
    """
    program: Program
    firings: dict[str, int]
    tokens: dict[tuple[str, int], int]
    outputs: dict[str, str]
    model: Result
    array_problems: list[str] = field(default_factory=list)
    arrays: dict[str, str] = field(default_factory=dict)
    units: dict[str, tuple[str, ...]] = field(default_factory=dict)
    shared_arrays: dict[str, tuple[int, int]] = field(default_factory=dict)
    rings: dict[str, tuple[int, int]] = field(default_factory=dict)
    counts: str = "exact"


@dataclass
class Unit:
    """One PE: its operator, the graph nodes it serves, and where their slots and ports land.

    ``slots``: (node, slot) -> PE slot; ``ports``: (node, port) -> PE port; ``fill``: PE slot ->
    (kind, constant) for a PE slot no node input feeds; ``registers``: extra configuration
    registers (a QUEUE's depth, and on a shared memory its ring's base and size)."""
    name: str
    op: str
    nodes: tuple[str, ...]
    slots: dict
    ports: dict
    pred: bool = False
    cmp: str = "SLT"
    fill: dict = field(default_factory=dict)
    registers: dict = field(default_factory=dict)
    array: str | None = None


def _where(graph: Graph, node) -> str:
    return f"{graph.name}: {node}"


def memory_nodes(graph: Graph) -> dict[str, str]:
    """LOAD/STORE node -> the array it accesses; raise :class:`LoweringError` for a shape the
    PEs' private banks cannot serve. The base must be the array's pointer argument, held, so
    every firing addresses the same array. An array only LOADed may be read by any number of
    LOAD nodes (each bank gets a copy). An array that is STOREd has one STORE node and at most
    one LOAD node, which share one PE (LDST); then neither has a sync slot and the LOAD's done
    port feeds nothing, since the LDST PE has three slots and two ports. A STORE alone has no
    sync slot either (an ORDER in front of its value slot orders it instead)."""
    arrays, users = {}, {}
    consumers = graph.consumers()
    for node in graph.nodes.values():
        if node.op not in ("LOAD", "STORE"):
            continue
        base = node.inputs[0]
        if base.kind != "arg" or base.name not in graph.arrays or not base.hold:
            raise LoweringError(f"{_where(graph, node)}: its base is {base.describe()}; on pe tiles a "
                                f"{node.op}'s base must be an array's pointer argument with hold, so "
                                f"that one PE's private bank holds everything it accesses")
        users.setdefault(base.name, []).append(node)
        arrays[node.name] = base.name
    for array, nodes in users.items():
        stores = [node for node in nodes if node.op == "STORE"]
        loads = [node for node in nodes if node.op == "LOAD"]
        if not stores:
            continue
        if len(stores) > 1 or len(loads) > 1:
            first, second = (stores + loads)[1], (stores + loads)[0]
            raise LoweringError(f"{_where(graph, first)} and {second} both access array {array!r}, which is "
                                f"stored to; a pe tile's memory bank is private to its PE, which serves "
                                f"at most one STORE and one LOAD node of an array")
        for node in stores + loads:
            if len(node.inputs) > (3 if node.op == "STORE" else 2):     # a sync slot
                shape = f"with the LOAD {loads[0].name!r} in one PE" if loads else "in a PE"
                raise LoweringError(f"{_where(graph, node)}: a {node.op} with a sync slot does not fit "
                                    f"{shape} (a pe tile has {N_SLOTS} operand slots); order it through "
                                    f"an ORDER in front of its address or value slot instead")
        if loads and consumers.get((loads[0].name, 1)):
            raise LoweringError(f"{_where(graph, loads[0])}: its done token (port 1) is used, but it shares "
                                f"a PE with the STORE {stores[0].name!r} to array {array!r}, whose port 1 "
                                f"is the STORE's done token; use the loaded word (port 0) as the token")
    return arrays


def _units(graph: Graph, arrays: dict[str, str]) -> dict[str, Unit]:
    """Each operator node's PE, with the fused pairs (LDST, LOCK) as one unit."""
    units = {unit.name: unit for unit in _ldst_units(graph, arrays)}
    lock = _lock_unit(graph)
    if lock is not None:
        units[lock.name] = lock
    fused = {node for unit in units.values() for node in unit.nodes}
    for node in graph.nodes.values():
        if node.op != "SINK" and node.name not in fused:
            units[node.name] = _node_unit(graph, node, arrays.get(node.name))
    return units


def _ldst_units(graph: Graph, arrays: dict[str, str]) -> list[Unit]:
    """An LDST unit for every array that one LOAD and one STORE access."""
    by_array: dict[str, list] = {}
    for name, array in arrays.items():
        by_array.setdefault(array, []).append(graph.nodes[name])
    units = []
    for array, nodes in by_array.items():
        if {node.op for node in nodes} == {"LOAD", "STORE"}:
            load, store = sorted(nodes, key=lambda node: node.op)
            units.append(Unit(f"{load.name}+{store.name}", "LDST", (load.name, store.name),
                              {(load.name, 1): 0, (store.name, 1): 1, (store.name, 2): 2},
                              {(load.name, 0): 0, (store.name, 0): 1}, array=array))
    return units


def _lock_unit(graph: Graph) -> Unit | None:
    """The LOCK unit of the graph's ACQUIRE and RELEASE sites (at most one of each), or None."""
    acquires = [node for node in graph.nodes.values() if node.op == "ACQUIRE"]
    releases = [node for node in graph.nodes.values() if node.op == "RELEASE"]
    if not acquires and not releases:
        return None
    for sites in (acquires, releases):
        if len(sites) > 1:
            raise LoweringError(f"{_where(graph, sites[1])}: a second {sites[1].op} site; the fabric's "
                                f"atomic directory (a LOCK PE) serves one ACQUIRE and one RELEASE site, "
                                f"so merge the sites' addresses through an arb first")
    if acquires and len(acquires[0].inputs) > 1:
        raise LoweringError(f"{_where(graph, acquires[0])}: an ACQUIRE with a sync slot does not fit the "
                            f"LOCK PE; order it through an ORDER in front of its address instead")
    members = tuple(node.name for node in acquires + releases)
    slots, ports = {}, {}
    if acquires:
        slots[acquires[0].name, 0], ports[acquires[0].name, 0] = 0, 0
    if releases:
        release = releases[0]
        slots.update({(release.name, k): 1 + k for k in range(len(release.inputs))})
        ports[release.name, 0] = 1
    # A release without a sync slot reads a hold slot 2 (always present, never taken).
    return Unit("+".join(members), "LOCK", members, slots, ports, fill={2: HOLD_ZERO})


def _node_unit(graph: Graph, node, array: str | None) -> Unit:
    """The PE of one operator node: slot k and port k are the node's own."""
    n_in, n_out = len(node.inputs), op_ports(node)[1]
    unit = Unit(node.name, node.op, (node.name,), {(node.name, k): k for k in range(n_in)},
                {(node.name, p): p for p in range(n_out)}, pred=node.attrs.get("pred", False),
                cmp=node.attrs.get("cmp", "SLT"), array=array)
    if node.op == "QUEUE":
        # depth None is the run's default slot depth: lower_graph puts the fabric's queue_depth
        unit.pred, unit.registers = node.inputs[0].spill, {pe_kind.REG_QUEUE_DEPTH: node.inputs[0].depth}
    elif node.op == "ARB":          # at most N_SLOTS sources once split_tuples has made trees
        unit.fill = {k: ABSENT for k in range(n_in, N_SLOTS)}
    elif node.op == "TASK":
        unit.pred = node.attrs["ind"]
    elif node.op == "LOAD" and n_in == 2:
        unit.fill = {2: HOLD_ZERO}      # no sync: a hold slot is always present, never taken
    elif node.op in pe_kind.SHARED_LOCK_OPS:  # a site of its own on the shared memory's directory
        unit.fill = {k: HOLD_ZERO for k in range(n_in, N_SLOTS)}
    return unit


def check_lowerable(graph: Graph, *, shared_memory: bool = False) -> dict[str, Unit]:
    """Raise :class:`LoweringError` for the first node or slot a pe tile cannot run; return the
    graph's units. ``shared_memory``: the fabric has one, so LOAD and STORE have no private
    bank's rules, and each is a unit of its own. A graph with tuples is judged (and its units
    named) as :func:`~ripple_core.tuples.split_tuples` splits it for the fabric."""
    graph = split_tuples(graph)
    if shared_memory:
        units = {node.name: _node_unit(graph, node, None)
                 for node in graph.nodes.values() if node.op != "SINK"}
    else:
        units = _units(graph, memory_nodes(graph))
    cycles = graph.unspilled_task_cycles()
    if cycles:
        queues = []
        for task in cycles[0]:
            source = graph.nodes[task].inputs[0]
            if source.kind == "edge" and graph.nodes[source.source].op == "QUEUE":
                depth = graph.nodes[source.source].inputs[0].depth
                queues.append(f"queue {source.source!r} (depth {depth})")
        raise LoweringError(f"{graph.name}: {', '.join(queues) or 'a task queue'} has no spill, but its task "
                            f"is on a push cycle ({' -> '.join(cycles[0] + cycles[0][:1])}): a bounded queue "
                            f"there deadlocks as soon as more invocations wait than it holds, so Ripple "
                            f"requires a spill queue on every such cycle; give the task spill=True")
    for node in graph.nodes.values():
        if node.op == "SINK":
            if node.inputs[0].kind != "edge":
                raise LoweringError(f"{graph.name}: {node}: a SINK must read an operator's output, not "
                                    f"{node.inputs[0].describe()}")
            continue
        if node.op not in PE_OPS and node.op not in ("ACQUIRE", "RELEASE"):
            raise LoweringError(f"{graph.name}: {node}: operator {node.op} is not one a pe tile can be "
                                f"configured as")
        if len(node.inputs) > N_SLOTS or op_ports(node)[1] > N_PORTS:
            raise LoweringError(f"{graph.name}: {node}: {len(node.inputs)} inputs; a pe tile has "
                                f"{N_SLOTS} operand slots and {N_PORTS} outputs")
        for slot, source in enumerate(node.inputs):
            where = f"{graph.name}: {node}, input {slot} ({source.describe()})"
            if source.kind == "edge" and source.hold:
                raise LoweringError(f"{where}: a held edge slot is not supported by the PE (only "
                                    f"constants and arguments can be held)")
            if source.spill and node.op != "QUEUE":
                raise LoweringError(f"{where}: only a QUEUE's slot may spill on the fabric (its ring "
                                    f"is the PE's bank, or a region of the shared memory)")
    return units


def _emitted(result: Result) -> dict[tuple[str, int], int]:
    """Tokens each (node, port) emitted in the traced run."""
    counts: dict[tuple[str, int], int] = {}
    for _cycle, name, outputs in result.trace:
        for port, _value in outputs:
            counts[name, port] = counts.get((name, port), 0) + 1
    return counts


def _reference_run(graph: Graph, case: dict, depth: int) -> Result:
    try:
        result = run(graph, case.get("args", {}), case.get("mem", {}), depth=depth, trace=True)
    except DeadlockError as error:
        raise LoweringError(f"{graph.name}: the golden model deadlocks on this case at slot depth "
                            f"{depth}, so its token counts are unknown: {error}") from None
    except RunawayError as error:
        raise LoweringError(f"{graph.name}: {error}; the token counts of a run that does not end are "
                            f"unknown") from None
    except GraphError as error:
        raise LoweringError(f"{graph.name}: {error}") from None
    if result.leftovers:
        raise LoweringError(f"{graph.name}: the golden model leaves tokens behind on this case "
                            f"({', '.join(result.leftovers[:4])}); on the fabric those tokens would "
                            f"wait in a tile's queue for ever and the run would never finish")
    return result


def _unit_slots(graph: Graph, case: dict, unit: Unit, placed: dict) -> tuple[list[str], dict[int, int]]:
    """The PE's slot kinds and the constant registers of its const, hold and arg slots; an array
    argument is its base in ``placed`` (the case's layout)."""
    kinds, registers = ["edge"] * N_SLOTS, {}
    for (node, slot), pe_slot in unit.slots.items():
        source = graph.nodes[node].inputs[slot]
        if source.kind == "edge":
            continue
        kinds[pe_slot] = "hold" if source.hold else "const"
        if source.kind == "const":
            value = source.value
        elif source.name in placed:
            value = placed[source.name][0]
        else:
            value = case.get("args", {})[source.name]
        registers[REG_CONST + pe_slot] = wrap(value) & 0xFFFF_FFFF
    fed = set(unit.slots.values())
    for pe_slot, (kind, value) in unit.fill.items():
        if pe_slot in fed:
            continue
        kinds[pe_slot] = kind
        if value is not None:
            registers[REG_CONST + pe_slot] = value
    return kinds, registers


def _expected_status(kinds: list[str]) -> int:
    """Status register after a good run: first state (nothing queued, no lock held), the hold
    slots still armed, no fault."""
    return 1 | sum(1 << (slot + 1) for slot, kind in enumerate(kinds) if kind == "hold")


COUNTS = ("auto", "exact", "open")


def schedule_dependent(graph: Graph) -> bool:
    """Whether the graph's counts may depend on the schedule: tasks (which the fabric runs in an
    order of its own through their arbs and queues) that write memory (so one task may see what
    another wrote, or not yet). Ordered dataflow, and tasks that only read, fire the same counts
    under every timing."""
    ops = {node.op for node in graph.nodes.values()}
    return "TASK" in ops and bool(ops & {"STORE", "ACQUIRE"})


def lower_graph(graph: Graph, case: dict, spec, *, name: str | None = None,
                host_outputs: list[str] | None = None,
                ring_words: dict[str, int] | None = None, counts: str = "auto") -> RippleLowering:
    """Lower ``graph`` with one case's ``args`` (and ``mem``, for array base addresses) to a
    :class:`~rsn.program.Program` for the fabric ``spec``; the reference is ``case["expect"]``.

    ``host_outputs``: host output ports for the SINK nodes, in node order (default: the fabric's
    output ports in description order). ``ring_words``: on a shared memory, QUEUE node -> the
    words of its ring, instead of the size the lowering works out (:func:`_shared_rings`).
    ``counts``: ``"exact"`` grants every PE the golden model's firings and every stream its
    tokens; ``"open"`` gives every PE an open micro-op and every stream between PEs a static
    route, so the run ends when the fabric is quiescent, whatever the schedule (streams to host
    ports keep the golden model's count); ``"auto"`` is open for :func:`schedule_dependent`
    graphs, and for a case with a PE-to-PE stream of more tokens than a switch micro-op counts
    (``rsn.checks.MAX_BEATS``), exact otherwise (docs/ripple.md, "Open counts").
    """
    if counts not in COUNTS:
        raise LoweringError(f"counts={counts!r} is not one of {', '.join(COUNTS)}")
    graph = split_tuples(graph.validate())
    open_counts = counts == "open" or (counts == "auto" and schedule_dependent(graph))
    shared = spec.memory is not None
    units = check_lowerable(graph, shared_memory=shared)
    for unit in units.values():
        if unit.registers.get(pe_kind.REG_QUEUE_DEPTH, 0) is None:
            unit.registers[pe_kind.REG_QUEUE_DEPTH] = spec.queue_depth     # as the golden model runs it
    if "pe" not in {kind for row in spec.tiles for kind in row}:
        raise LoweringError(f"{graph.name}: the fabric has no pe tiles; use a fabric such as "
                            f"examples/fabrics/ripple.toml")
    ripple = [unit for unit in units.values() if unit.op in pe_kind.RIPPLE_OPS]
    if ripple and not spec.parameters("pe").ripple_ops:
        raise LoweringError(f"{graph.name}: {graph.nodes[ripple[0].nodes[0]]} needs a pe tile with Ripple's "
                            f"operators ({ripple[0].op}), but the fabric is built without them "
                            f"([pe] ripple_ops = false); set ripple_ops = true in the fabric "
                            f"description's [pe] table")
    placed = _check_shared_memory(graph, case, spec) if shared else _check_banks(graph, case, spec, units)
    model = _reference_run(graph, case, spec.queue_depth)
    emitted = _emitted(model)
    consumers = graph.consumers()
    if counts == "auto" and not open_counts:
        # A stream longer than one switch micro-op's beats runs open too (it needs no count).
        open_counts = any(tokens > MAX_BEATS for key, tokens in emitted.items() if consumers.get(key)
                          and not any(graph.nodes[t].op == "SINK" for t, _ in consumers[key]))
    sinks = [node for node in graph.nodes.values() if node.op == "SINK"]
    unit_of = {node: unit for unit in units.values() for node in unit.nodes}

    out_ports = list(host_outputs) if host_outputs is not None else \
        [port.name for port in spec.host_ports if port.direction == "out"]
    if len(sinks) > len(out_ports):
        raise LoweringError(f"{graph.name}: {len(sinks)} SINK nodes but only {len(out_ports)} host output "
                            f"ports ({', '.join(out_ports) or 'none'}); use a fabric with more")
    expect = case.get("expect", {})
    unknown = sorted(set(expect) - set(graph.arrays) - {sink.name for sink in sinks})
    if unknown:
        raise LoweringError(f"{graph.name}: the case's expect names {unknown}, which are neither arrays "
                            f"nor SINK nodes of the graph")
    outputs, expected = {}, {}
    stream_graph = StreamGraph()
    for sink, port in zip(sinks, out_ports, strict=False):
        if sink.name not in expect:
            raise LoweringError(f"{graph.name}: the case gives no expected tokens for SINK {sink.name!r}; "
                                f"add \"{sink.name}\": [...] to its expect")
        outputs[sink.name], expected[port] = port, [wrap(v) & 0xFFFF_FFFF for v in expect[sink.name]]
        received = len(model.outputs[sink.name])
        if received:
            stream_graph.add_host_out(sink.name, port, received)

    firings = {unit.name: sum(model.firings_by_node.get(node, 0) for node in unit.nodes)
               for unit in units.values()}
    if open_counts:         # every unit may fire and every port may emit under another schedule
        firings_here = dict.fromkeys(firings, 1)
        emits = {key: None for key in consumers}
    else:
        firings_here, emits = firings, emitted
    rings = _shared_rings(graph, units, firings, model, placed, spec, ring_words or {},
                          open_counts) if shared else {}
    # The streams between units, as they will be routed (a port that emits nothing has none).
    unit_streams = {unit.name: UnitStreams() for unit in units.values() if firings_here[unit.name]}
    streams = []
    for node in graph.nodes.values():
        if node.op == "SINK":
            continue
        unit = unit_of[node.name]
        for port in range(op_ports(node)[1]):
            tokens = emitted.get((node.name, port), 0)
            targets = consumers.get((node.name, port), [])
            if open_counts and not any(graph.nodes[target].op == "SINK" for target, _ in targets):
                tokens = None if targets else 0     # an open stream: a static route
            if (tokens or tokens is None) and targets:
                pe_port = unit.ports[node.name, port]
                sinks_of = [(target, None) if graph.nodes[target].op == "SINK"
                            else (unit_of[target].name, unit_of[target].slots[target, slot])
                            for target, slot in targets]
                streams.append((unit.name, pe_port, sinks_of, tokens))
                unit_streams[unit.name].sinks[pe_port] = [None if slot is None else (sink, slot)
                                                          for sink, slot in sinks_of]
                for sink, slot in sinks_of:
                    if slot is not None:
                        unit_streams[sink].sources[slot] = (unit.name, pe_port)
    lanes = spec.parameters("pe").lanes
    ops = {name: units[name].op for name in unit_streams}
    alone = {name for name in unit_streams if firings[name] > MAX_FIRINGS and not open_counts}
    tiles = pack_tiles(list(unit_streams), ops, unit_streams, lanes, alone=alone)
    tile_of = {unit: tile for tile in tiles for unit in tile.lanes}

    memories, statuses, tile_firings = {}, {}, {}
    for tile in tiles:
        lane_grants = [_grants(firings[unit], open_counts) for unit in tile.lanes]
        if len(lane_grants) == 1:
            grants = lane_grants[0]
        else:           # one grant each: a unit that needs more has a tile of its own (_grants)
            first, second = (grants[0] for grants in lane_grants)
            grants = [{"firings": first["firings"], "firings1": second["firings"], "open": int(open_counts)}]
        stream_graph.add_node(tile.name, "pe", grants)
        tile_firings[tile.name] = sum(firings[unit] for unit in tile.lanes)
        words = {pe_kind.REG_PORTS: tile.port_map()} if lanes > 1 else {}
        for lane, name in enumerate(tile.lanes):
            unit = units[name]
            kinds, registers = _unit_slots(graph, case, unit, placed)
            used = {pe_port for key, pe_port in unit.ports.items() if key in emits and consumers.get(key)
                    and (open_counts or emits[key])}
            drop = [port for port in range(N_PORTS) if port not in used]
            word = pe_config_word(unit.op, pred=unit.pred, cmp=unit.cmp, slots=kinds, drop=drop)
            lane_words = {REG_CONFIG: word, **registers, **unit.registers}
            if unit.array is not None:
                lane_words.update(_bank_preload(case, unit.array, placed[unit.array][0]))
            words.update({lane_register(lane, address): value for address, value in lane_words.items()})
            statuses[name] = _expected_status(kinds)
        memories[tile.name] = words
    if shared:
        initial = {base + word: wrap(value) & 0xFFFF_FFFF for array, (base, _) in placed.items()
                   for word, value in enumerate(case.get("mem", {}).get(array, []))}
        if initial:
            memories[SHARED_MEMORY] = initial
    for name, pe_port, sinks_of, tokens in streams:
        tile = tile_of[name]
        if (tile.lane_of(name), pe_port) in tile.internal:
            continue            # between the tile's two lanes: no stream on the fabric
        tile_sinks = [(sink, 0) if slot is None
                      else (tile_of[sink].name, tile_of[sink].inputs[tile_of[sink].lane_of(sink), slot])
                      for sink, slot in sinks_of]
        stream_graph.connect((tile.name, tile.outputs[tile.lane_of(name), pe_port]), tile_sinks, tokens)

    reads, expected_reads, array_problems = {}, {}, []
    stored = {unit.array: unit.name for unit in units.values()
              if unit.op in ("STORE", "LDST") and firings_here[unit.name]}
    may_change = set(stored)
    if shared:
        stored, may_change = _shared_stores(graph, units, firings_here)
    for array in graph.arrays:
        initial = [wrap(v) & 0xFFFF_FFFF for v in case.get("mem", {}).get(array, [])]
        if array not in expect:
            if array in stored:
                raise LoweringError(f"{graph.name}: the case gives no expected contents for array {array!r}, "
                                    f"which {stored[array]} stores to; add \"{array}\": [...] to its expect")
            continue
        wanted = [wrap(v) & 0xFFFF_FFFF for v in expect[array]]
        if array not in may_change and wanted != initial:
            array_problems.append(f"array {array}: the case expects it to change, but no STORE writes it "
                                  f"in this case, so it keeps its initial contents")
    for unit in units.values():
        memory_unit = unit.array is not None or \
            (shared and unit.op in pe_kind.MEMORY_OPS + pe_kind.SHARED_LOCK_OPS)
        if not firings_here[unit.name] or (not memory_unit and unit.op not in ("LOCK", "QUEUE")):
            continue
        here = tile_of[unit.name].name       # a memory unit is its tile's lane 0: its own addresses
        reads[here], expected_reads[here] = [(REG_STATUS, None)], [statuses[unit.name]]
        if unit.op in ("STORE", "LDST") and not shared:
            reads[here] += [(MEM_WINDOW + word, None) for word in range(placed[unit.array][1])]
            expected_reads[here] += [wrap(v) & 0xFFFF_FFFF for v in expect[unit.array]]
    if shared:
        checked = [array for array in graph.arrays if array in expect and placed[array][1]]
        if checked:
            reads[SHARED_MEMORY] = [(placed[array][0] + word, None) for array in checked
                                    for word in range(placed[array][1])]
            expected_reads[SHARED_MEMORY] = [wrap(v) & 0xFFFF_FFFF
                                             for array in checked for v in expect[array]]
    label = name or graph.name
    description = (f"{graph.name}: {len(stream_graph.fu_nodes())} pe tiles, {len(stream_graph.edges)} "
                   f"streams, {model.firings} firings")
    program = Program(name=label, graph=stream_graph, memories=memories, expected=expected,
                      description=description, reads=reads, expected_reads=expected_reads)
    tokens = {key: count for key, count in emitted.items() if consumers.get(key)}

    def tile_name(unit: str) -> str:
        return tile_of[unit].name if unit in tile_of else unit

    unit_arrays = {tile_name(unit.name): unit.array for unit in units.values() if unit.array is not None}
    shared_arrays = {array: placed[array] for array in graph.arrays
                     if shared and array in expect and placed[array][1]}
    idle = {unit: 0 for unit in units if unit not in tile_of}
    members = {tile.name: tuple(node for unit in tile.lanes for node in units[unit].nodes) for tile in tiles}
    members.update({unit: units[unit].nodes for unit in idle})
    tile_rings = {tile_name(queue): ring for queue, ring in rings.items()}
    return RippleLowering(program, {**tile_firings, **idle}, tokens, outputs, model, array_problems,
                          unit_arrays, members, shared_arrays, tile_rings, "open" if open_counts else "exact")


def _grants(count: int, open_counts: bool) -> list[dict]:
    """A unit's micro-ops: one open grant, or its firings in grants of at most MAX_FIRINGS.

    Several grants only in a tile of its own: a two-lane tile's micro-op completes once both
    lanes have made their firings, so with split grants a lane that has used up its grant would
    wait for the other's next micro-op while the other waits for its tokens (a hang)."""
    if open_counts:
        return [{"firings": 0, "open": 1}]
    return [{"firings": min(MAX_FIRINGS, count - start)} for start in range(0, count, MAX_FIRINGS)]


def _check_banks(graph: Graph, case: dict, spec, units: dict[str, Unit]) -> dict[str, tuple[int, int]]:
    """The arrays' (base, length) in the case's flat layout; raise :class:`LoweringError` if the
    fabric's banks cannot hold an accessed array or a queue's depth."""
    try:
        placed = layout(graph, case.get("mem", {}))
    except GraphError as error:
        raise LoweringError(f"{graph.name}: {error}") from None
    banked = [unit for unit in units.values() if unit.op in pe_kind.BANK_OPS]
    if banked and not spec.parameters("pe").mem_depth:
        unit = banked[0]
        raise LoweringError(f"{graph.name}: {graph.nodes[unit.nodes[0]]} needs a memory bank, but the "
                            f"fabric's pe tiles have none ([pe] mem_depth = 0); set mem_depth in the "
                            f"fabric description's [pe] table, as examples/fabrics/ripple.toml does")
    for unit in banked:
        if unit.op == "LOCK":
            continue                    # the directory needs a bank's PE, not its words
        if unit.array is not None:
            length, what = placed[unit.array][1], f"array {unit.array!r} has {{}} words in this case"
        else:
            length, what = unit.registers[pe_kind.REG_QUEUE_DEPTH], f"queue {unit.name!r} has depth {{}}"
        if length > spec.parameters("pe").mem_depth:
            raise LoweringError(f"{graph.name}: {what.format(length)}, but a pe tile's bank holds "
                                f"{spec.parameters('pe').mem_depth} ([pe] mem_depth); "
                                f"{graph.nodes[unit.nodes[0]]} needs "
                                f"the whole {'array' if unit.array else 'queue'} in its bank, so raise "
                                f"[pe] mem_depth to at least "
                                f"{1 << max(1, (length - 1).bit_length())}")
    return placed


def _shared_stores(graph: Graph, units: dict[str, Unit], firings: dict[str, int]) -> tuple[dict, set]:
    """On the shared memory: the arrays a firing STORE names as its base (the case must say what
    they hold afterwards), and the arrays any firing STORE may change: all of them once a STORE
    computes its base, since its address can fall in any array."""
    stored, computed = {}, False
    for unit in units.values():
        if unit.op != "STORE" or not firings[unit.name]:
            continue
        base = graph.nodes[unit.nodes[0]].inputs[0]
        if base.kind == "arg" and base.name in graph.arrays:
            stored[base.name] = unit.name
        else:
            computed = True
    return stored, set(graph.arrays) if computed else set(stored)


def _check_shared_memory(graph: Graph, case: dict, spec) -> dict[str, tuple[int, int]]:
    """The arrays' (base, length) in the case's flat layout, which is the shared memory's; raise
    :class:`LoweringError` if they do not fit it."""
    try:
        placed = layout(graph, case.get("mem", {}))
    except GraphError as error:
        raise LoweringError(f"{graph.name}: {error}") from None
    for array, (base, length) in placed.items():
        if base + length > spec.memory.words:
            total = max(start + size for start, size in placed.values())
            raise LoweringError(f"{graph.name}: array {array!r} occupies addresses {base}.."
                                f"{base + length - 1} in this case, but the fabric's shared memory holds "
                                f"{spec.memory.words} words; "
                                f"the case's arrays need {total}, so raise [memory] words to at least "
                                f"{1 << max(1, (total - 1).bit_length())}")
    atomics = [node for node in graph.nodes.values() if node.op in pe_kind.SHARED_LOCK_OPS]
    if atomics and not spec.memory.lock_entries:
        raise LoweringError(f"{_where(graph, atomics[0])}: an {atomics[0].op} on a shared memory without an "
                            f"atomic directory ([memory] lock_entries = 0) would wait for ever; give "
                            f"[memory] lock_entries of at least 1 in the fabric description")
    return placed


def _shared_rings(graph: Graph, units: dict[str, Unit], firings: dict[str, int], model: Result,
                  placed: dict[str, tuple[int, int]], spec,
                  declared: dict[str, int], open_counts: bool = False) -> dict[str, tuple[int, int]]:
    """Each firing QUEUE's ring in the shared memory, one after another above the arrays, as
    (base, words); its registers (origin, ring words) go into the unit. Raise
    :class:`LoweringError` for a ring known to be too small, or rings the memory cannot hold.

    A QUEUE holds ``L`` = min(max(depth, 1), SHARED_QUEUE_WORDS) words in its PE. A spill queue's
    first ``L`` words always stay there, so its ring never holds more than the case's tokens
    through it minus ``L``, whatever the fabric's timing: that is its size. If the memory cannot
    hold that, the ring shrinks to the most the golden model's run had queued at once, minus
    ``L`` (enough unless the fabric's timing queues more, which then faults naming the queue). A
    queue without spill needs a ring of its depth only when the depth exceeds what the PE holds.
    A declared size (``declared``) below what the golden model had in the ring is refused.
    With open counts the tokens through a queue are not known, so the spill rings share the
    free memory evenly (each at least its golden-model peak)."""
    rings, wanted = [], {}
    for unit in units.values():
        if unit.op != "QUEUE" or not (firings[unit.name] or open_counts):
            continue
        depth = unit.registers[pe_kind.REG_QUEUE_DEPTH]
        in_pe = min(max(depth, 1), pe_kind.SHARED_QUEUE_WORDS)
        through = depth if open_counts else firings[unit.name]      # open: as many as its depth
        if unit.pred:
            least = max(0, model.queue_peaks.get(unit.nodes[0], 0) - in_pe)
            safe = max(0, firings[unit.name] - in_pe)
        else:
            least = safe = min(depth, through) if depth > pe_kind.SHARED_QUEUE_WORDS else 0
        if unit.name in declared:
            if declared[unit.name] < least:
                raise LoweringError(f"{graph.name}: queue {unit.name!r} is given a spill ring of "
                                    f"{declared[unit.name]} words, but in this case it holds {least} words "
                                    f"beyond the {in_pe} its PE keeps (in the golden model's run, or by "
                                    f"its depth {depth}); declare at least {least} words, or leave the "
                                    f"ring's size to the lowering")
            least = safe = declared[unit.name]
        rings.append((unit, least))
        wanted[unit.name] = safe
    top = max((base + length for base, length in placed.values()), default=0)
    free = spec.memory.words - top
    spill = [unit for unit, _ in rings if unit.pred and unit.name not in declared]
    if open_counts and spill:
        wanted = {unit.name: least for unit, least in rings}
        spare = free - sum(wanted.values())
        for unit in spill:
            wanted[unit.name] += max(0, spare) // len(spill)
    if sum(wanted.values()) > free:
        wanted = {unit.name: least for unit, least in rings}       # the golden model's peaks
    if sum(wanted.values()) > free:
        unit, least = next((unit, least) for unit, least in rings if least)
        raise LoweringError(f"{graph.name}: the spill rings need {sum(wanted.values())} words of the shared "
                            f"memory (queue {unit.name!r}: {least}) above the arrays, which end at address "
                            f"{top}, but the memory holds {spec.memory.words} words; raise [memory] words "
                            f"to at least {1 << max(1, (top + sum(wanted.values()) - 1).bit_length())}")
    placed_rings = {}
    for unit, _ in rings:
        placed_rings[unit.name] = (top, wanted[unit.name])
        unit.registers.update({pe_kind.REG_ORIGIN: top, pe_kind.REG_RING_WORDS: wanted[unit.name]})
        top += wanted[unit.name]
    return placed_rings


def _bank_preload(case: dict, array: str, base: int) -> dict[int, int]:
    """Registers that put ``array`` in a PE's bank: ``origin`` = its flat base, page 0 (a bank
    holds at most 2048 words, the window's size) and its initial words through the window."""
    contents = case.get("mem", {}).get(array, [])
    return {pe_kind.REG_ORIGIN: base & 0xFFFF_FFFF, pe_kind.REG_PAGE: 0,
            **{MEM_WINDOW + word: wrap(value) & 0xFFFF_FFFF for word, value in enumerate(contents)}}


# A pinned node moves one operator, which frees a few links at most: once the first
# HOPELESS_AFTER attempts have all left more than HOPELESS_LINKS links shared, the graph wants a
# larger fabric, not another pin (Ripple's kc on a 12x12 grid: 24 to 105 shared links each try,
# half a minute a try).
HOPELESS_AFTER, HOPELESS_LINKS = 4, 8


def compile_lowering(lowering: RippleLowering, spec, *, seed: int = 0, attempts: int = 64):
    """``compile_program`` for a lowering, re-placing until every stream routes.

    The placer minimises wirelength, so a small graph lands in the same compact block whatever
    its seed, and on a small grid that block may not have a free link for every stream (a loop's
    decider multicasts to most of the loop). Each further attempt pins one randomly chosen node
    (two on every fourth attempt; seeded by ``seed``) to a random tile of its kind and lets the
    annealer place the rest around it. On a 2x4 grid of pe tiles (the example fabric's earlier
    size) about one such attempt in five routes for the suite's 7-operator graphs, measured; one
    pin does better than more. Raises the first attempt's RouteError if none of ``attempts``
    routes, or as soon as the first ``HOPELESS_AFTER`` have each left more than
    ``HOPELESS_LINKS`` links shared.
    """
    import copy
    import random

    from rsn.program import compile_program
    from rsn.route import RouteError

    rng = random.Random(seed)
    pe_tiles = [tile for tile in spec.all_tiles()
                if spec.kind(tile) == "pe" and tile not in spec.failed_tiles]
    first, fewest = None, None
    for attempt in range(attempts):
        program = lowering.program
        if attempt:
            program = copy.deepcopy(program)
            nodes = program.graph.fu_nodes()
            pins = min(len(nodes), len(pe_tiles), 2 if attempt % 4 == 0 else 1)
            for node, tile in zip(rng.sample(nodes, pins), rng.sample(pe_tiles, pins), strict=True):
                node.tile = tile
        try:
            return compile_program(program, spec, seed=seed + attempt, attempts=1)
        except RouteError as error:
            first = first or error
            fewest = len(error.links) if fewest is None else min(fewest, len(error.links))
            if attempt + 1 >= HOPELESS_AFTER and fewest > HOPELESS_LINKS:
                break
    raise first
