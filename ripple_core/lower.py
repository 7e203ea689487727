"""From a dataflow graph and one case's arguments to an RSN program on ``pe`` tiles.

The lowering (docs/ripple.md, "On the RTL fabric"):

* **One PE per operator.** Each operator node becomes a ``pe`` node. Its configuration word
  (operator, ``pred``, STREAM ``cmp``, the slot kinds, the ``drop`` mask) and the constants of its
  ``const``, ``hold`` and ``arg`` slots are the PE's registers 0-3, written before the run. An
  ``arg`` slot is a constant of this case: the scalar's value, or the array's base address. The
  PE's slot k is the operator's slot k and FU input k (both follow :mod:`rsn.dataflow_ops`), and
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
  gets no stream: the fabric refuses empty micro-ops and streams.
* **Memory.** A PE's bank is private (rsn/fu_pe.py), so an array lives in the bank of the one
  LOAD or STORE node that accesses it; the fabric's ``pe_mem_depth`` sizes every bank. The node's
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

Not on the fabric yet: Ripple's own operators (queue, arb, task, acquire, release), and memory
shapes private banks cannot serve (an array accessed by two nodes, a base that is not the array's
held pointer argument, a STORE with a sync slot). A graph that uses one gets a
:class:`LoweringError` naming the node. A graph too large for the fabric gets the placer's or
router's error at compile time.
"""

from dataclasses import dataclass, field

from rsn import fu_pe
from rsn.fu_pe import MEM_WINDOW, N_PORTS, N_SLOTS, PE_OPS, REG_CONFIG, REG_CONST, REG_STATUS, pe_config_word
from rsn.graph import StreamGraph
from rsn.program import Program

from .graph import Graph, GraphError, op_ports
from .interp import DeadlockError, Result, RunawayError, layout, run
from .ops import wrap

__all__ = ["LoweringError", "RippleLowering", "NOT_ON_FABRIC", "MAX_FIRINGS", "check_lowerable",
           "memory_nodes", "lower_graph", "compile_lowering"]

# Operators a pe tile cannot run yet, with the reason a user reads in the error.
NOT_ON_FABRIC = {
    "QUEUE": "a Ripple queue (no spill PE yet)",
    "ARB": "a Ripple arbiter",
    "TASK": "a Ripple task dispatcher",
    "ACQUIRE": "a Ripple atomic (no atomic directory yet)",
    "RELEASE": "a Ripple atomic (no atomic directory yet)",
}
MAX_FIRINGS = 0xFFFF            # the PE micro-op's 16-bit firings field


class LoweringError(ValueError):
    """A graph or case cannot be lowered onto pe tiles; the message names the node and why."""


@dataclass
class RippleLowering:
    """The program and what the lowering learnt from the golden model's run of the case.

    ``firings``: operator node -> firings (the micro-ops' grants; the RTL's firing counters must
    equal them). ``tokens``: (node, port) -> tokens the port emits. ``outputs``: SINK node -> its
    host output port. ``model``: the golden model's run (its cycles are a reference for timing,
    not a promise). ``arrays``: LOAD/STORE node -> the array its bank holds. The program's
    ``reads`` per memory node are its status register, then (STORE nodes) every word of its
    array; ``expected_reads`` hold the status with the fault bit clear and the case's ``expect``.
    """
    program: Program
    firings: dict[str, int]
    tokens: dict[tuple[str, int], int]
    outputs: dict[str, str]
    model: Result
    array_problems: list[str] = field(default_factory=list)
    arrays: dict[str, str] = field(default_factory=dict)


def memory_nodes(graph: Graph) -> dict[str, str]:
    """LOAD/STORE node -> the array it accesses; raise :class:`LoweringError` for a shape private
    banks cannot serve. The base must be the array's pointer argument, held, so every firing
    addresses the same array (a computed base could point anywhere); each array has one such
    node, because only its own PE reaches a bank; a STORE has no sync slot, because the PE has
    three (an ORDER in front of its value slot orders it instead)."""
    arrays, users = {}, {}
    for node in graph.nodes.values():
        if node.op not in ("LOAD", "STORE"):
            continue
        base = node.inputs[0]
        if base.kind != "arg" or base.name not in graph.arrays or not base.hold:
            raise LoweringError(f"{graph.name}: {node}: its base is {base.describe()}; on pe tiles a "
                                f"{node.op}'s base must be an array's pointer argument with hold, so "
                                f"that one PE's private bank holds everything it accesses")
        if node.op == "STORE" and len(node.inputs) > 3:
            raise LoweringError(f"{graph.name}: {node}: a STORE with a sync slot needs 4 operand slots and "
                                f"a pe tile has {N_SLOTS}; order the STORE through an ORDER in front of "
                                f"its value slot instead")
        if base.name in users:
            raise LoweringError(f"{graph.name}: {node} and {graph.nodes[users[base.name]]} both access array "
                                f"{base.name!r}; a pe tile's memory bank is private to its PE, so each "
                                f"array can be accessed by only one LOAD or STORE node on the fabric")
        users[base.name], arrays[node.name] = node.name, base.name
    return arrays


def check_lowerable(graph: Graph):
    """Raise :class:`LoweringError` for the first node or slot a pe tile cannot run."""
    memory_nodes(graph)
    for node in graph.nodes.values():
        if node.op in NOT_ON_FABRIC:
            raise LoweringError(f"{graph.name}: {node}: {node.op} is {NOT_ON_FABRIC[node.op]}; it is not "
                                f"on the RTL fabric yet, so this graph runs only on the golden model "
                                f"(--sim model)")
        if node.op == "SINK":
            if node.inputs[0].kind != "edge":
                raise LoweringError(f"{graph.name}: {node}: a SINK must read an operator's output, not "
                                    f"{node.inputs[0].describe()}")
            continue
        if node.op not in PE_OPS:
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
            if source.spill:
                raise LoweringError(f"{where}: a spill slot needs Ripple's spill PE, which is not on "
                                    f"the RTL fabric yet")


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


def _slot_constants(graph: Graph, case: dict, node) -> tuple[list[str], dict[int, int]]:
    """The PE's slot kinds and the constant registers of a node's const, hold and arg slots."""
    bases = {name: base for name, (base, _) in layout(graph, case.get("mem", {})).items()}
    kinds, registers = [], {}
    for slot, source in enumerate(node.inputs):
        if source.kind == "edge":
            kinds.append("edge")
            continue
        kinds.append("hold" if source.hold else "const")
        if source.kind == "const":
            value = source.value
        elif source.name in bases:
            value = bases[source.name]
        else:
            value = case.get("args", {})[source.name]
        registers[REG_CONST + slot] = wrap(value) & 0xFFFF_FFFF
    if node.op == "LOAD" and len(node.inputs) == 2:
        kinds.append("hold")            # no sync: a hold slot is always present and never taken
        registers[REG_CONST + 2] = 0
    return kinds, registers


def lower_graph(graph: Graph, case: dict, spec, *, name: str | None = None,
                host_outputs: list[str] | None = None) -> RippleLowering:
    """Lower ``graph`` with one case's ``args`` (and ``mem``, for array base addresses) to a
    :class:`~rsn.program.Program` for the fabric ``spec``; the reference is ``case["expect"]``.

    ``host_outputs``: host output ports for the SINK nodes, in node order (default: the fabric's
    output ports in description order).
    """
    graph.validate()
    check_lowerable(graph)
    if "pe" not in {kind for row in spec.tiles for kind in row}:
        raise LoweringError(f"{graph.name}: the fabric has no pe tiles; use a fabric such as "
                            f"examples/fabrics/ripple.toml")
    arrays = memory_nodes(graph)
    placed = _check_banks(graph, case, spec, arrays)
    model = _reference_run(graph, case, spec.queue_depth)
    emitted = _emitted(model)
    consumers = graph.consumers()
    operators = [node for node in graph.nodes.values() if node.op != "SINK"]
    sinks = [node for node in graph.nodes.values() if node.op == "SINK"]

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

    firings = {node.name: model.firings_by_node.get(node.name, 0) for node in operators}
    memories = {}
    for node in operators:
        if not firings[node.name]:
            continue            # never fires in this case: no tile (its inputs carry nothing)
        grants = [min(MAX_FIRINGS, firings[node.name] - start)
                  for start in range(0, firings[node.name], MAX_FIRINGS)]
        stream_graph.add_node(node.name, "pe", [{"firings": grant} for grant in grants])
        kinds, registers = _slot_constants(graph, case, node)
        _, n_out = op_ports(node)
        drop = [port for port in range(N_PORTS) if port >= n_out or not emitted.get((node.name, port))
                or not consumers.get((node.name, port))]
        word = pe_config_word(node.op, pred=node.attrs.get("pred", False), cmp=node.attrs.get("cmp", "SLT"),
                              slots=kinds, drop=drop)
        memories[node.name] = {REG_CONFIG: word, **registers}
        if node.name in arrays:
            memories[node.name].update(_bank_preload(case, arrays[node.name], placed[arrays[node.name]][0]))
    for node in operators:
        for port in range(op_ports(node)[1]):
            tokens = emitted.get((node.name, port), 0)
            targets = consumers.get((node.name, port), [])
            if tokens and targets:
                stream_graph.connect((node.name, port), [(target, 0) if graph.nodes[target].op == "SINK"
                                                         else (target, slot) for target, slot in targets],
                                     tokens)

    reads, expected_reads, array_problems = {}, {}, []
    stored = {array: node for node, array in arrays.items()
              if graph.nodes[node].op == "STORE" and firings[node]}
    for array in graph.arrays:
        initial = [wrap(v) & 0xFFFF_FFFF for v in case.get("mem", {}).get(array, [])]
        if array not in expect:
            if array in stored:
                raise LoweringError(f"{graph.name}: the case gives no expected contents for array {array!r}, "
                                    f"which {stored[array]} stores to; add \"{array}\": [...] to its expect")
            continue
        wanted = [wrap(v) & 0xFFFF_FFFF for v in expect[array]]
        if array not in stored and wanted != initial:
            array_problems.append(f"array {array}: the case expects it to change, but no STORE writes it "
                                  f"in this case, so it keeps its initial contents")
    for node_name in arrays:
        if not firings[node_name]:
            continue
        node, array = graph.nodes[node_name], arrays[node_name]
        kinds, _ = _slot_constants(graph, case, node)
        # first state (LOAD and STORE have no other), the hold slots still armed, no fault
        status = 1 | sum(1 << (slot + 1) for slot, kind in enumerate(kinds) if kind == "hold")
        reads[node_name], expected_reads[node_name] = [(REG_STATUS, None)], [status]
        if node.op == "STORE":
            reads[node_name] += [(MEM_WINDOW + word, None) for word in range(placed[array][1])]
            expected_reads[node_name] += [wrap(v) & 0xFFFF_FFFF for v in expect[array]]
    label = name or graph.name
    description = (f"{graph.name}: {len(stream_graph.fu_nodes())} pe tiles, {len(stream_graph.edges)} "
                   f"streams, {model.firings} firings")
    program = Program(name=label, graph=stream_graph, memories=memories, expected=expected,
                      description=description, reads=reads, expected_reads=expected_reads)
    tokens = {key: count for key, count in emitted.items() if consumers.get(key)}
    return RippleLowering(program, firings, tokens, outputs, model, array_problems, arrays)


def _check_banks(graph: Graph, case: dict, spec, arrays: dict[str, str]) -> dict[str, tuple[int, int]]:
    """The arrays' (base, length) in the case's flat layout; raise :class:`LoweringError` if the
    fabric's banks cannot hold an accessed array."""
    try:
        placed = layout(graph, case.get("mem", {}))
    except GraphError as error:
        raise LoweringError(f"{graph.name}: {error}") from None
    if arrays and not spec.pe_mem_depth:
        node = next(iter(arrays))
        raise LoweringError(f"{graph.name}: {graph.nodes[node]} needs a memory bank, but the fabric's pe "
                            f"tiles have none (pe_mem_depth = 0); set pe_mem_depth in the fabric "
                            f"description, as examples/fabrics/ripple.toml does")
    for node, array in arrays.items():
        length = placed[array][1]
        if length > spec.pe_mem_depth:
            raise LoweringError(f"{graph.name}: array {array!r} has {length} words in this case, but a pe "
                                f"tile's bank holds {spec.pe_mem_depth} (pe_mem_depth); {graph.nodes[node]} "
                                f"needs the whole array in its bank, so raise pe_mem_depth to at least "
                                f"{1 << max(1, (length - 1).bit_length())}")
    return placed


def _bank_preload(case: dict, array: str, base: int) -> dict[int, int]:
    """Registers that put ``array`` in a PE's bank: ``origin`` = its flat base, page 0 (a bank
    holds at most 2048 words, the window's size) and its initial words through the window."""
    contents = case.get("mem", {}).get(array, [])
    return {fu_pe.REG_ORIGIN: base & 0xFFFF_FFFF, fu_pe.REG_PAGE: 0,
            **{MEM_WINDOW + word: wrap(value) & 0xFFFF_FFFF for word, value in enumerate(contents)}}


def compile_lowering(lowering: RippleLowering, spec, *, seed: int = 0, attempts: int = 64):
    """``compile_program`` for a lowering, re-placing until every stream routes.

    The placer minimises wirelength, so a small graph lands in the same compact block whatever
    its seed, and on a small grid that block may not have a free link for every stream (a loop's
    decider multicasts to most of the loop). Each further attempt pins one randomly chosen node
    (two on every fourth attempt; seeded by ``seed``) to a random tile of its kind and lets the
    annealer place the rest around it. On a 2x4 grid of pe tiles (the example fabric's earlier
    size) about one such attempt in five routes for the suite's 7-operator graphs, measured; one
    pin does better than more. Raises the first attempt's RouteError if none of ``attempts`` routes.
    """
    import copy
    import random

    from rsn.program import compile_program
    from rsn.route import RouteError

    rng = random.Random(seed)
    pe_tiles = [tile for tile in spec.all_tiles()
                if spec.kind(tile) == "pe" and tile not in spec.failed_tiles]
    first = None
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
    raise first
