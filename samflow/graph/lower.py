"""A SAM graph onto a fabric with sparse tiles: one tile per primitive, one route per stream.

The graph is checked and run on the golden models first (:func:`samflow.graph.run.run_graph`):
the sparse kinds are data-dependent, so every route needs its token count, and the model's streams
give them. Then each node becomes an FU node of its kind (docs/sparse.md, "Graphs on the fabric"):

* a scanner is ``sam_dense_scan`` or ``sam_scan_c`` (its tensor level's ``seg`` and ``crd`` in its
  banks), an ``arrayvals`` is ``sam_array`` (the values in its bank), ``repsiggen``, ``repeat``,
  ``add``/``mul``, ``reduce``, ``crddrop`` and ``crdhold`` are their kinds, and ``crddrop`` with
  ``vals=true`` is ``sam_zero_drop``; a root scanner or repeat makes SAM's root reference itself;
* a ``broadcast`` is the fabric's multicast, and ``crdhold`` with ``vals=true`` passes both its
  streams unchanged (one value per coordinate), so both become routes, not tiles;
* a writer is a host output port: the level's stream leaves the fabric, and the host stores it as
  SAM's writer would (:func:`decode_outputs`), so the result needs no bank read-back;
* an output no edge takes is drained by its tile (the micro-op's ``discard`` bit);
* after the run the program reads every tile's sticky fault (samflow.faults), and
  :func:`tile_faults` names the graph node of each that is set.

Joiners (``intersect``, ``union``) and the sparse accumulator have more ports than a tile
(``rsn.fu`` allows 3 inputs and 2 outputs), so their streams travel packed (samflow.pairs): a
joiner takes each side's coordinate and reference in one token and gives both references in one;
the accumulator (``sam_spacc``) gives each inner coordinate with its sum in one token, which the
writers of both take from one host port, each its half.
"""

from dataclasses import dataclass, field

from rsn.checks import MAX_BEATS
from rsn.graph import StreamGraph
from rsn.isa import REGISTERS
from rsn.program import Compiled, Program, compile_program
from samflow.faults import FAULT_REGISTERS, describe
from samflow.kind import ALU_OPS, MAX_BANK_DEPTH, SPACC_COLS, SPARSE_SPECS
from samflow.pairs import empty_half, half_bits, sum_range, unpack_sums
from samflow.tokens import decode, is_data

from .dot import GraphError
from .primitives import PRIMITIVES
from .run import GraphRun, RunContext, bind_tensors, check_graph, decode_written, run_graph

__all__ = ["LoweredGraph", "lower_graph", "compile_lowered", "decode_outputs", "tile_faults"]

JOINERS = {"intersect": "sam_intersect", "union": "sam_union"}
_TAKES_A_HALF = ("sam_scan_c", "sam_dense_scan", "sam_array", "sam_repeat")
_ELIDED = {"broadcast"}         # and crdhold vals=true: both are routes
# A large graph on a fabric with no spare tile of its kinds (SAM's mattransmul: 22 primitives on 22
# tiles of a 5x6 fabric) leaves the annealer few placements whose streams route link-disjoint; a
# placement costs a tenth of a second, so the search is worth many seeds.
PLACEMENT_ATTEMPTS = 64


@dataclass
class LoweredGraph:
    """The program for the fabric, and what the host needs to read its result."""
    program: Program
    graph: object
    writers: dict                   # host port -> the writer node's id
    nodes: dict                     # program node name -> the graph node it runs
    shapes: dict                    # output tensor -> shape
    model_run: GraphRun             # the graph on the golden models (token counts; not the reference)
    value_width: int
    writer_halves: dict = field(default_factory=dict)   # host port -> the half its writer takes


def _fail(graph, node, why: str) -> GraphError:
    return GraphError(f"{graph.source}:{node.line}: {node.where}: {why}")


def _elided(node) -> bool:
    return node.type in _ELIDED or (node.type == "crdhold" and node.flag("vals"))


def _through(node, port: str) -> str:
    """The input port an elided node's output ``port`` copies."""
    if node.type == "broadcast":
        return None
    return {"outer_crd": "in_outer_crd", "inner_crd": "in_inner_crd"}[port]


def _kind_of(graph, node) -> str:
    if node.type in JOINERS:
        return JOINERS[node.type]
    if node.type == "fiberlookup":
        return "sam_scan_c" if node.attrs.get("format") == "compressed" else "sam_dense_scan"
    if node.type == "crddrop":
        return "sam_zero_drop" if node.flag("vals") else "sam_crd_drop"
    return {"repsiggen": "sam_repsig", "repeat": "sam_repeat", "arrayvals": "sam_array", "add": "sam_alu",
            "mul": "sam_alu", "reduce": "sam_reduce", "crdhold": "sam_crd_hold",
            "spaccumulator": "sam_spacc"}[node.type]


# The graph's port names, where a kind calls its ports otherwise.
_PORTS = {"sam_array": {"val": "load"},
          "sam_spacc": {"in_outer": "in_outer_crdpt", "in_inner": "in_inner_crdpt"},
          "sam_zero_drop": {"in_outer_crd": "in_crd", "in_inner_crd": "in_val", "outer_crd": "crd",
                            "inner_crd": "val"}}


def _port_index(kind: str, port: str, *, output: bool) -> int:
    return _spec_ports(kind, output).index(_PORTS.get(kind, {}).get(port, port))


def _spec_ports(kind: str, output: bool) -> tuple:
    spec = SPARSE_SPECS[kind]
    return spec.outputs if output else spec.inputs


def _joiner_side(graph, plan, joiner, dst_port, producer, model_run, spec):
    """The scanner whose packed (coordinate, reference) tokens feed side ``dst_port`` of
    ``joiner``, and its output port; port None for the coordinate edge, which needs no route."""
    side = dst_port[-1]
    feeding = {plan.dst_port[e][:-1]: e for e in graph.inputs_of(joiner.id)
               if plan.dst_port[e][-1] == side}
    crd_src, crd_port, _ = producer(feeding["in_crd"])
    ref_src, ref_port, _ = producer(feeding["in_ref"])
    scanner = graph.nodes[ref_src]
    if crd_src != ref_src or scanner.type != "fiberlookup" or (crd_port, ref_port) != ("crd", "ref"):
        raise _fail(graph, joiner, f"side {side} takes its coordinates from node {crd_src} and its "
                                   f"references from node {ref_src}; on the fabric a joiner's side is one "
                                   "scanner's coordinates and references, packed in one stream")
    empty = empty_half(spec.data_width - 2)
    for edge in (feeding["in_crd"], feeding["in_ref"]):
        tokens = model_run.streams[producer(edge)[2]]
        large = [t for t in tokens if is_data(t) and not 0 <= t < empty]
        if large:
            raise _fail(graph, scanner, f"gives {edge.kind} {large[0]}, but a joiner's side packs "
                                        f"coordinate and reference in halves of {empty.bit_length()} bits "
                                        f"(0..{empty - 1}); use a wider data_width")
    return (ref_src, "ref") if dst_port.startswith("in_ref") else (ref_src, None)


def _check_value(graph, node, what: str, value, width: int):
    low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    if not low <= value <= high:
        raise _fail(graph, node, f"{what} {value} does not fit a {width}-bit token value ({low}..{high}); "
                                 "use a wider data_width in the fabric")


def _uop(graph, node, kind: str, encoded, discard: int, spec) -> tuple[dict, dict]:
    """The node's one micro-op, and its bank words (address -> word) for a kind with banks."""
    uop, memory = {"discard": discard, "last": 1}, {}
    if kind in ("sam_dense_scan", "sam_scan_c", "sam_repeat"):
        uop["root"] = int(node.flag("root"))
    if node.type in ("add", "mul"):
        uop["op"] = ALU_OPS["mul" if node.type == "mul" else ("sub" if node.flag("sub") else "add")]
    if node.type == "fiberlookup":
        tensor = encoded[node.attrs["tensor"]]
        level = tensor.format.mode_order.index(int(node.attrs["mode"]))
        arrays = tensor.levels[level]
        if kind == "sam_dense_scan":
            if not 1 <= arrays["dim"] < 1 << 16:
                raise _fail(graph, node, f"a dense level of {arrays['dim']} is outside the micro-op's "
                                         "dim field (1..65535)")
            uop["dim"] = arrays["dim"]
        else:
            memory = _banks(graph, node, kind, [arrays["seg"], arrays["crd"]], spec)
    if node.type == "arrayvals":
        memory = _banks(graph, node, kind, [encoded[node.attrs["tensor"]].vals], spec)
    return uop, memory


def _banks(graph, node, kind, arrays, spec) -> dict:
    """The words of ``arrays``, bank after bank (each ``depth`` words, the ``[kind]`` table's)."""
    depth, width = spec.parameters(kind).depth, spec.data_width - 2
    words = {}
    for b, array in enumerate(arrays):
        if len(array) > MAX_BANK_DEPTH:     # no table can help: say so rather than point at one
            raise _fail(graph, node, f"needs {len(array)} words in a bank, more than any bank holds "
                                     f"({MAX_BANK_DEPTH} words at the most); use smaller or sparser tensors")
        if len(array) > depth:
            raise _fail(graph, node, f"needs {len(array)} words in a bank of {depth}; raise depth in the "
                                     f"fabric's [{kind}] table")
        for at, value in enumerate(array):
            _check_value(graph, node, "value", int(value), width)
            words[b * depth + at] = int(value)
    return words


def lower_graph(graph, tensors: dict, spec, *, name: str | None = None) -> LoweredGraph:
    """``graph`` on ``tensors`` as a program for the fabric ``spec`` (checked first, nothing placed)."""
    plan = check_graph(graph)
    for node in graph.nodes.values():
        if node.type != "fiberwrite" and not _elided(node):
            _kind_of(graph, node)           # a node no tile takes is refused before anything runs
    model_run = run_graph(graph, tensors, plan)
    encoded, shapes = bind_tensors(graph, tensors)
    outs = [port.name for port in spec.host_ports if port.direction == "out"]
    writers = [n for n in graph.nodes.values() if n.type == "fiberwrite"]
    if len(writers) > len(outs):
        raise GraphError(f"{graph.source}: the graph has {len(writers)} writers, each a host output port, "
                         f"but the fabric has {len(outs)} ({', '.join(outs) or 'none'}); add "
                         "[[host_ports]] with direction = \"out\"")

    def producer(edge):
        """The (node, output port) whose tokens ``edge`` carries, through elided nodes."""
        src, port = graph.nodes[edge.src], plan.src_port[edge]
        while _elided(src):
            wanted = _through(src, port)
            feeding = [e for e in graph.inputs_of(src.id) if wanted is None or plan.dst_port[e] == wanted]
            src, port = graph.nodes[feeding[0].src], plan.src_port[feeding[0]]
            edge = feeding[0]
        return src.id, port, edge

    tokens_of, sinks_of = {}, {}     # (node, output port) -> its stream's tokens, its sinks
    half_of, packed = {}, set()      # consumer of a joiner's reference -> its half; packing scanners
    writer_half = {}                 # a writer of an accumulator's packed output -> its half
    for edge in graph.edges:
        dst = graph.nodes[edge.dst]
        if _elided(dst):
            continue
        src_id, port, first = producer(edge)
        dst_port = plan.dst_port[edge]
        if dst.type == "spaccumulator" and dst_port.startswith("level_above_"):
            continue                # SAM's third coordinate input: the point form needs it not
        if graph.nodes[src_id].type == "spaccumulator" and port in ("inner_crd", "val"):
            _check_accumulated(graph, graph.nodes[src_id], port, model_run.streams[first], spec)
            if dst.type != "fiberwrite":
                raise _fail(graph, graph.nodes[src_id], f"its {port} stream goes to {dst.where}; on the "
                            "fabric it leaves packed with the other, so only writers can take it")
            writer_half[dst.id] = 2 if port == "inner_crd" else 1
            port = "pairs"
        if dst.type in JOINERS:
            src_id, port = _joiner_side(graph, plan, dst, dst_port, producer, model_run, spec)
            if port is None:
                continue                # a side's coordinate travels in its reference's token
            packed.add(src_id)
        if graph.nodes[src_id].type in JOINERS and port != "crd":
            half_of[dst.id] = 1 if port == "ref1" else 2
            port = "refs"
        tokens_of[src_id, port] = max(tokens_of.get((src_id, port), 0), len(model_run.streams[first]))
        sinks_of.setdefault((src_id, port), []).append((dst, dst_port))
    for src_id in packed:
        other = [dst for dst, _ in sinks_of[src_id, "ref"] if dst.type not in JOINERS]
        if other:
            raise _fail(graph, graph.nodes[src_id], f"its references go to a joiner, which takes them packed "
                                                    f"with the coordinates, and to {other[0].where}; give "
                                                    "that node a scanner of its own")
    port_of_writer = {node.id: host for node, host in zip(writers, outs, strict=False)}
    used = {}
    for src_id, port in tokens_of:
        used.setdefault(src_id, set()).add(port)
    program_graph, names, memories = StreamGraph(), {}, {}
    for node_id in plan.order:
        node = graph.nodes[node_id]
        if node.type == "fiberwrite" or _elided(node):
            continue
        kind = _kind_of(graph, node)
        outputs = _spec_ports(kind, True)
        discard = sum(1 << j for j, port in enumerate(outputs)
                      if not any(_PORTS.get(kind, {}).get(p, p) == port for p in used.get(node_id, ())))
        uop, memory = _uop(graph, node, kind, encoded, discard, spec)
        if node_id in half_of:
            uop["half"] = half_of[node_id]
        if node_id in packed:
            uop["pack"] = 1
        names[node_id] = f"n{node_id}_{node.type}"
        program_graph.add_node(names[node_id], kind, [uop])
        if memory:
            memories[names[node_id]] = memory
    host_ports, halves = {}, {}
    for (src_id, port), tokens in tokens_of.items():
        src_node = graph.nodes[src_id]
        source = (names[src_id], _port_index(_kind_of(graph, src_node), port, output=True))
        sinks = []
        for dst, dst_port in sinks_of[src_id, port]:
            if dst.type == "fiberwrite":
                host = port_of_writer[dst.id]
                program_graph.add_host_out(f"to_{host}", host, tokens)
                host_ports[host] = dst.id
                if dst.id in writer_half:
                    halves[host] = writer_half[dst.id]
                sinks.append(f"to_{host}")
            elif dst.type in JOINERS:
                sinks.append((names[dst.id], int(dst_port[-1]) - 1))
            else:
                sinks.append((names[dst.id], _port_index(_kind_of(graph, dst), dst_port, output=False)))
        program_graph.connect(source, sinks, _route_count(graph, src_node, port, sinks, tokens))
    status = REGISTERS["fu_status"]
    reads = {tile: [(status + k, None) for k in range(FAULT_REGISTERS)] for tile in names.values()}
    program = Program(name or graph.name, program_graph, memories=memories, reads=reads)
    nodes = {tile: graph.nodes[node_id] for node_id, tile in names.items()}
    return LoweredGraph(program, graph, host_ports, nodes, shapes, model_run, spec.data_width - 2, halves)


def _check_accumulated(graph, node, port: str, tokens, spec):
    """The accumulator's workspace holds SPACC_COLS inner coordinates, and its inner coordinates
    and sums leave packed in halves of a token (samflow.pairs)."""
    sums = sum_range(spec.data_width - 2)
    for token in tokens:
        if port == "inner_crd" and is_data(token) and not 0 <= token < SPACC_COLS:
            raise _fail(graph, node, f"sums at inner coordinate {token}, but a sam_spacc tile's workspace "
                                     f"holds coordinates 0..{SPACC_COLS - 1}")
        if port == "val" and is_data(token) and token not in sums:
            raise _fail(graph, node, f"gives the sum {token}, but a sum leaves packed with its coordinate in "
                                     f"a signed half of {half_bits(spec.data_width - 2)} bits "
                                     f"({sums.start}..{sums.stop - 1}); use smaller values")


def _route_count(graph, node, port: str, sinks: list, tokens: int) -> int | None:
    """A stream's count for its route: the model's tokens, or none (a static route) for a stream
    between tiles longer than one switch micro-op counts (``MAX_BEATS``, 2**24 - 1). The sparse
    kinds end a micro-op at the stream's ``D``, not at a count, so a static route costs them
    nothing; a host port needs a count, so a writer's stream above the limit is refused."""
    if tokens <= MAX_BEATS:
        return tokens
    if any(isinstance(sink, str) for sink in sinks):
        raise _fail(graph, node, f"its {port} stream carries {tokens} tokens to a writer, a host output "
                                 f"port, which counts at most {MAX_BEATS} (one switch micro-op's beats); "
                                 f"run smaller or sparser tensors")
    return None


def compile_lowered(lowered: LoweredGraph, spec, *, seed: int = 0,
                    attempts: int = PLACEMENT_ATTEMPTS) -> Compiled:
    """Place, route and assemble a lowered graph, trying placement seeds ``seed ..`` up to
    ``attempts`` of them; the first RouteError is raised if none routes."""
    return compile_program(lowered.program, spec, seed=seed, attempts=attempts)


def tile_faults(lowered: LoweredGraph, reads: dict) -> list[str]:
    """One line per tile whose sticky fault is set after a run (``reads``: the program's reads, per
    program node), naming the graph node, the input and the token."""
    lines = []
    for tile, node in lowered.nodes.items():
        words = reads.get(tile, [])[:FAULT_REGISTERS]
        text = describe(words, SPARSE_SPECS[tile_kind(lowered, tile)].inputs) if len(words) == 3 else None
        if text is not None:
            lines.append(f"{lowered.graph.source}:{node.line}: {node.where} (tile {tile}): a malformed "
                         f"stream at run time: {text}")
    return lines


def tile_kind(lowered: LoweredGraph, tile: str) -> str:
    return lowered.program.graph.nodes[tile].kind


def decode_outputs(lowered: LoweredGraph, outputs: dict) -> dict:
    """The output tensors from the words each writer's host port received, stored as SAM's writers
    store them, then decoded in the output's format."""
    graph = lowered.graph
    context = RunContext(graph.formats, {})
    for host, node_id in lowered.writers.items():
        node = graph.nodes[node_id]
        port = "in_val" if node.attrs.get("mode") == "vals" else "in_crd"
        tokens = [decode(word, lowered.value_width) for word in outputs[host]]
        if host in lowered.writer_halves:       # an accumulator's packed sums (1) or coordinates (2)
            tokens = unpack_sums(tokens, lowered.value_width)[lowered.writer_halves[host] - 1]
        PRIMITIVES["fiberwrite"].run(node, {port: tokens}, context)
    return decode_written(graph, lowered.shapes, context.written)
