"""Checking a SAM graph against its tensors, then running it on the golden models, whole streams.

Everything is checked before the first model runs: each node's type and attributes, which port
every edge goes to, that every port a node needs has exactly one edge, that the graph has no cycle
(the evaluator runs each node once, on complete input streams, in a topological order), and that the
tensors fit the graph: every input tensor given and no other, each of the order its format
declares, integer values, and one dimension per index variable across the tensors it indexes.
Then each node runs once; a stream that several edges take is simply read by each (SAM's broadcast
is fan-out). The writers' memory is decoded into the output tensors.
"""

from dataclasses import dataclass, field

from samflow.models import ModelError

from .dot import GraphError
from .primitives import PRIMITIVES
from .tensors import decode_tensor, encode_tensor

__all__ = ["Plan", "GraphRun", "check_graph", "bind_tensors", "run_graph", "decode_written"]


@dataclass
class Plan:
    order: list                      # node ids, producers before consumers
    src_port: dict                   # edge -> output port of its source
    dst_port: dict                   # edge -> input port of its destination


@dataclass
class RunContext:
    """What a node's run reads (formats, encoded inputs) and what the writers store."""
    formats: dict
    tensors: dict                    # input name -> EncodedTensor
    written: dict = field(default_factory=dict)


@dataclass
class GraphRun:
    outputs: dict                    # output tensor name -> numpy array / scipy CSR array
    streams: dict                    # edge -> its tokens
    memory: dict                     # (tensor, level or 'vals') -> what its writer stored
    shapes: dict                     # output tensor name -> shape


def _at(graph, node, error: GraphError) -> GraphError:
    return GraphError(f"{graph.source}:{node.line}: {error}")


def _topological(graph) -> list:
    consumers = {node_id: [] for node_id in graph.nodes}
    waiting = {node_id: 0 for node_id in graph.nodes}
    for edge in graph.edges:
        consumers[edge.src].append(edge.dst)
        waiting[edge.dst] += 1
    ready = [node_id for node_id in graph.nodes if waiting[node_id] == 0]
    order = []
    while ready:
        node_id = ready.pop(0)
        order.append(node_id)
        for consumer in consumers[node_id]:
            waiting[consumer] -= 1
            if waiting[consumer] == 0:
                ready.append(consumer)
    if len(order) < len(graph.nodes):
        stuck = [graph.nodes[n] for n in graph.nodes if waiting[n] > 0]
        # Walk back from a stuck node along stuck producers until a node repeats: that is a cycle.
        path, at = [], stuck[0].id
        while at not in path:
            path.append(at)
            at = next(e.src for e in graph.edges if e.dst == at and waiting[e.src] > 0)
        cycle = path[path.index(at):][::-1]
        names = " -> ".join(graph.nodes[n].where for n in cycle + [cycle[0]])
        raise GraphError(f"{graph.source}: the graph has a cycle ({names}); the evaluator runs every "
                         "node once on whole streams, so it takes acyclic graphs only")
    return order


def check_graph(graph) -> Plan:
    """The run order and every edge's ports, or a GraphError naming the node."""
    for node in graph.nodes.values():
        if node.type not in PRIMITIVES:
            raise _at(graph, node, GraphError(
                f"{node.where}: unknown node type {node.type!r}; the evaluator knows "
                f"{', '.join(sorted(PRIMITIVES))}"))
        try:
            PRIMITIVES[node.type].check(node, graph)
        except GraphError as error:
            raise _at(graph, node, error) from None
    src_port, dst_port = {}, {}
    for edge in graph.edges:
        for node_id, ports, side in ((edge.src, src_port, "out_port"), (edge.dst, dst_port, "in_port")):
            node = graph.nodes[node_id]
            try:
                ports[edge] = getattr(PRIMITIVES[node.type], side)(node, edge, graph)
            except GraphError as error:
                raise _at(graph, node, error) from None
    for node in graph.nodes.values():
        feeding = {}
        for edge in graph.inputs_of(node.id):
            port = dst_port[edge]
            if port in feeding:
                raise _at(graph, node, GraphError(
                    f"{node.where}: two edges feed its port {port}: {feeding[port].describe()} and "
                    f"{edge.describe()}; a port takes one stream"))
            feeding[port] = edge
        for port in PRIMITIVES[node.type].needs(node):
            if port not in feeding:
                raise _at(graph, node, GraphError(
                    f"{node.where}: nothing feeds its input {port}; add the edge that brings it"))
    for name in graph.written:
        fmt = graph.formats.get(name)
        writers = [n for n in graph.nodes.values()
                   if n.type == "fiberwrite" and n.attrs.get("tensor") == name]
        if fmt is None:
            raise _at(graph, writers[0], GraphError(
                f"{writers[0].where}: writes tensor {name!r}, which the graph comment does not declare"))
        levels = sorted(w.attrs.get("mode") for w in writers)
        wanted = sorted([str(m) for m in range(fmt.order)] + ["vals"])
        if levels != wanted:
            raise _at(graph, writers[0], GraphError(
                f"{writers[0].where}: tensor {name} ({fmt.spelled()}) needs one fiberwrite per mode and "
                f"one for its values (modes {', '.join(wanted)}); the graph writes {', '.join(levels)}"))
    order = _topological(graph)
    return Plan(order, src_port, dst_port)


def _index_dims(graph, encoded) -> dict:
    """index variable -> (dimension, where it came from), from the scanners' tensors and modes."""
    dims = {}
    for node in graph.nodes.values():
        if node.type != "fiberlookup":
            continue
        index, tensor, mode = node.attrs["index"], node.attrs["tensor"], int(node.attrs["mode"])
        dim = encoded[tensor].shape[mode]
        if index in dims and dims[index][0] != dim:
            raise GraphError(f"{graph.source}:{node.line}: {node.where}: index {index} is {dim} long here "
                             f"({tensor}'s mode {mode}) but {dims[index][0]} in {dims[index][1]}; the "
                             "tensors' shapes do not agree")
        dims.setdefault(index, (dim, f"{tensor}'s mode {mode}"))
    return dims


def bind_tensors(graph, tensors: dict):
    """The input tensors encoded in the graph's formats, and each output tensor's shape."""
    inputs = [name for name in graph.formats if name not in graph.written]
    missing = [name for name in inputs if name not in tensors]
    extra = [name for name in tensors if name not in inputs]
    if missing:
        raise GraphError(f"{graph.source}: no value given for input tensor(s) {', '.join(missing)} "
                         f"(the graph reads {', '.join(inputs)})")
    if extra:
        role = {name: "an output" if name in graph.written else "not in the graph" for name in extra}
        raise GraphError(f"{graph.source}: tensor(s) given that the graph does not read: "
                         + ", ".join(f"{name} ({role[name]})" for name in extra))
    encoded = {name: encode_tensor(graph.formats[name], tensors[name]) for name in inputs}
    dims = _index_dims(graph, encoded)
    shapes = {}
    for name in graph.written:
        fmt, shape = graph.formats[name], []
        for mode in range(fmt.order):
            writer = next(n for n in graph.nodes.values() if n.type == "fiberwrite"
                          and n.attrs.get("tensor") == name and n.attrs.get("mode") == str(mode))
            index = writer.attrs.get("index")
            if index not in dims:
                raise GraphError(f"{graph.source}:{writer.line}: {writer.where}: its index {index!r} is "
                                 "scanned by no fiberlookup, so the output's size is unknown")
            shape.append(dims[index][0])
        shapes[name] = tuple(shape)
    return encoded, shapes


def decode_written(graph, shapes: dict, written: dict) -> dict:
    """Each output tensor from what its writers stored (``written``: (tensor, level or 'vals') ->
    the writer's arrays)."""
    decoded = {}
    for name in graph.written:
        fmt = graph.formats[name]
        writers = {n.attrs["mode"]: n.where for n in graph.nodes.values()
                   if n.type == "fiberwrite" and n.attrs.get("tensor") == name}
        levels = [written[name, level] for level in range(fmt.order)]
        names = [writers[str(fmt.mode_order[level])] for level in range(fmt.order)] + [writers["vals"]]
        try:
            decoded[name] = decode_tensor(fmt, shapes[name], levels, written[name, "vals"], names)
        except GraphError as error:
            raise GraphError(f"{graph.source}: output {name}: {error}") from None
    return decoded


def run_graph(graph, tensors: dict, plan: Plan | None = None) -> GraphRun:
    """Check, bind and run ``graph`` on ``tensors`` ({name: scipy / numpy / number})."""
    plan = plan or check_graph(graph)
    encoded, shapes = bind_tensors(graph, tensors)
    context = RunContext(graph.formats, encoded)
    produced = {}                    # (node id, output port) -> tokens
    for node_id in plan.order:
        node = graph.nodes[node_id]
        streams = {plan.dst_port[e]: produced[e.src, plan.src_port[e]] for e in graph.inputs_of(node_id)}
        try:
            outputs = PRIMITIVES[node.type].run(node, streams, context)
        except ModelError as error:
            raise GraphError(f"{graph.source}:{node.line}: {node.where} refused its input streams: "
                             f"{error}") from None
        for port, tokens in outputs.items():
            produced[node_id, port] = tokens
    decoded = decode_written(graph, shapes, context.written)
    streams = {edge: produced[edge.src, plan.src_port[edge]] for edge in graph.edges}
    return GraphRun(decoded, streams, dict(context.written), shapes)
