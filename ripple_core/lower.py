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
* **Reference.** The expected host outputs are the case's own ``expect`` (one token list per SINK
  name), never the golden model's outputs, so a wrong model cannot hide a wrong fabric. Arrays
  cannot change on the fabric (it has no LOAD or STORE yet); :attr:`RippleLowering.array_problems`
  lists the arrays whose ``expect`` differs from their initial contents.

Not on the fabric yet: LOAD and STORE (no memory port on a PE tile) and Ripple's own operators
(queue, arb, task, acquire, release). A graph that uses one gets a :class:`LoweringError` naming
the node. A graph too large for the fabric gets the placer's or router's error at compile time.
"""

from dataclasses import dataclass, field

from rsn.fu_pe import N_PORTS, N_SLOTS, PE_OPS, REG_CONFIG, REG_CONST, pe_config_word
from rsn.graph import StreamGraph
from rsn.program import Program

from .graph import Graph, GraphError, op_ports
from .interp import DeadlockError, Result, RunawayError, layout, run
from .ops import wrap

__all__ = ["LoweringError", "RippleLowering", "NOT_ON_FABRIC", "MAX_FIRINGS", "check_lowerable",
           "lower_graph", "compile_lowering"]

# Operators a pe tile cannot run yet, with the reason a user reads in the error.
NOT_ON_FABRIC = {
    "LOAD": "a memory operation (pe tiles have no memory port yet)",
    "STORE": "a memory operation (pe tiles have no memory port yet)",
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
    not a promise).
    """
    program: Program
    firings: dict[str, int]
    tokens: dict[tuple[str, int], int]
    outputs: dict[str, str]
    model: Result
    array_problems: list[str] = field(default_factory=list)


def check_lowerable(graph: Graph):
    """Raise :class:`LoweringError` for the first node or slot a pe tile cannot run."""
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
    for node in operators:
        for port in range(op_ports(node)[1]):
            tokens = emitted.get((node.name, port), 0)
            targets = consumers.get((node.name, port), [])
            if tokens and targets:
                stream_graph.connect((node.name, port), [(target, 0) if graph.nodes[target].op == "SINK"
                                                         else (target, slot) for target, slot in targets],
                                     tokens)

    array_problems = []
    for array, contents in expect.items():
        if array in graph.arrays and list(contents) != list(case.get("mem", {}).get(array, [])):
            array_problems.append(f"array {array}: the case expects it to change, but no STORE runs on "
                                  f"the fabric, so it keeps its initial contents")
    label = name or graph.name
    description = (f"{graph.name}: {len(stream_graph.fu_nodes())} pe tiles, {len(stream_graph.edges)} "
                   f"streams, {model.firings} firings")
    program = Program(name=label, graph=stream_graph, memories=memories, expected=expected,
                      description=description)
    tokens = {key: count for key, count in emitted.items() if consumers.get(key)}
    return RippleLowering(program, firings, tokens, outputs, model, array_problems)


def compile_lowering(lowering: RippleLowering, spec, *, seed: int = 0, attempts: int = 64):
    """``compile_program`` for a lowering, re-placing until every stream routes.

    The placer minimises wirelength, so a small graph lands in the same compact block whatever
    its seed, and on a small grid that block may not have a free link for every stream (a loop's
    decider multicasts to most of the loop). Each further attempt pins one randomly chosen node
    (two on every fourth attempt; seeded by ``seed``) to a random tile of its kind and lets the
    annealer place the rest around it. On the 2x4 grid of examples/fabrics/ripple.toml about one
    such attempt in five routes for the suite's 7-operator graphs, measured; one pin does better
    than more. Raises the first attempt's RouteError if none of ``attempts`` routes.
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
