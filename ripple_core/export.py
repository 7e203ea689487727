"""RipTide graph JSON exporter: a :class:`Graph` as the document :mod:`ripple_core.riptide` reads.

``parse_graph(graph_to_riptide(g))`` equals ``g``: the same nodes in the same order, with the same
names, operators, attributes, labels and inputs, and the same scalars and arrays. Vertex ``ID`` is
the node's position; a node whose name is not ``v<ID>`` (every builder graph's) gets the vertex
field ``node``, and a node's label is the vertex ``name``. A graph of the peer suite's operators
and slot options writes a file of the suite's format; Ripple's operators and slot options use
the format's extensions (docs/graph-json.md). What the format cannot say (an operator or an
attribute it has no field for) is refused with a :class:`GraphError` that names the node.
"""

import json
from pathlib import Path

from .graph import Graph, GraphError, Input, Node
from .ops import BINARY
from .riptide import RIPPLE_OPS, SUITE_OPS, TUPLE_FIELDS

__all__ = ["graph_to_riptide", "write_graph", "dumps", "unit_of"]

_CONTROL = ("SELECT", "STEER", "MERGE", "ORDER", "CARRY", "INVARIANT")
_PRED_OPS = ("STEER", "CARRY", "INVARIANT", "STREAM")
_ATTRS = {"STEER": ("pred",), "CARRY": ("pred",), "INVARIANT": ("pred",), "STREAM": ("pred", "cmp"),
          **TUPLE_FIELDS}


def unit_of(op: str) -> str:
    """The functional-unit class that prefixes the operator in the ``op`` field
    (``ARITH_CFG_OP_ADD``): the peer suite's for its operators, ``MEM`` for the atomics,
    ``RIPPLE`` for queues, arbiters and tasks, ``IO`` for host outputs."""
    if op == "MUL":
        return "MUL"
    if op in BINARY or op == "ID":
        return "ARITH"
    if op in _CONTROL:
        return "CF"
    if op in ("LOAD", "STORE", "ACQUIRE", "RELEASE"):
        return "MEM"
    if op == "STREAM":
        return "STREAM"
    if op == "SINK":
        return "IO"
    return "RIPPLE"


def graph_to_riptide(graph: Graph, *, return_type: str | None = None, arg_order=None) -> dict:
    """The RipTide JSON document of ``graph`` (validated first).

    ``return_type`` is the function's (default ``"void"``); the graph does not keep it. The
    arguments are written scalars first, then arrays in layout order, unless ``arg_order`` lists
    every argument name in the order wanted (e.g. the C order of an imported file): only the
    arrays' order matters to a run, and either way it is kept.
    """
    graph.validate()
    if not isinstance(graph.name, str):
        raise GraphError(f"graph name {graph.name!r} is not a string")
    positions = {name: k for k, name in enumerate(graph.nodes)}
    function = {"name": graph.name, "return_type": "void" if return_type is None else str(return_type),
                "args": _arguments(graph, arg_order), "loops": []}
    vertices = [_vertex(graph, node, positions) for node in graph.nodes.values()]
    return {"function": function, "vertices": vertices}


def _arguments(graph: Graph, order) -> list[dict]:
    names = [*graph.scalars, *graph.arrays]
    if order is not None:
        order = list(order)
        if sorted(order) != sorted(names):
            raise GraphError(f"argument order {order} must list each argument of {graph.name} once: "
                             f"{', '.join(names)}")
        if [name for name in order if name in graph.arrays] != list(graph.arrays):
            raise GraphError(f"argument order {order} changes the order of the arrays, which sets the "
                             f"memory layout ({', '.join(graph.arrays)})")
        names = order
    arguments = []
    for name in names:
        if name in graph.arrays:
            argument = {"name": name, "type": "i32*", "noalias": False}
            if graph.arrays[name] is not None:
                argument["size"] = graph.arrays[name]
        else:
            argument = {"name": name, "type": "i32", "noalias": False}
        arguments.append(argument)
    return arguments


def _vertex(graph: Graph, node: Node, positions: dict) -> dict:
    op = node.op
    if op not in SUITE_OPS and op not in RIPPLE_OPS:
        raise GraphError(f"{node}: operator {op} has no RipTide JSON form")
    extra = sorted(set(node.attrs) - set(_ATTRS.get(op, ())))
    if extra:
        raise GraphError(f"{node}: attribute {extra[0]!r} of {op} has no field in the RipTide JSON format")
    if not isinstance(node.label, str):
        raise GraphError(f"{node}: label {node.label!r} is not a string")
    unit, vid = unit_of(op), positions[node.name]
    vertex: dict = {"ID": vid}
    if node.name != f"v{vid}":
        vertex["node"] = node.name
    if node.label:
        vertex["name"] = node.label
    vertex["op"] = f"{unit}_CFG_OP_{op}"
    vertex["type"] = f"{unit}_FU_CFG_T"
    if op in _PRED_OPS:
        vertex["pred"] = f"{unit}_CFG_PRED_{'TRUE' if node.attrs['pred'] else 'FALSE'}"
    if op == "STREAM":
        vertex["cmp"] = f"STREAM_CFG_CMP_{node.attrs['cmp']}"
        vertex["update"] = "STREAM_CFG_UPDATE_ADD"
    for name in TUPLE_FIELDS.get(op, ()):
        vertex[name] = node.attrs[name]
    vertex["inputs"] = [[_source(graph, node, slot, source, positions)]
                        for slot, source in enumerate(node.inputs)]
    return vertex


def _source(graph: Graph, node: Node, slot: int, source: Input, positions: dict) -> dict:
    options = {"hold": source.hold, "depth": source.depth, "spill": source.spill}
    if source.kind == "edge":
        written = {"type": "data", "ID": positions[source.source], "oport": source.port,
                   "name": graph.nodes[source.source].label or source.source}
        canonical = Input("edge", source=source.source, port=source.port, **options)
    elif source.kind == "const":
        written = {"type": "const", "value": source.value, "name": str(source.value)}
        canonical = Input("const", value=source.value, **options)
    else:
        written = {"type": "xdata", "name": source.name}
        canonical = Input("arg", name=source.name, **options)
    if source != canonical:
        raise GraphError(f"{node}, input {slot}: {source!r} sets fields its kind {source.kind!r} "
                         f"does not use; the RipTide JSON format cannot keep them")
    written["hold"] = source.hold
    if source.depth is not None:
        written["depth"] = source.depth
    if source.spill:
        written["spill"] = True
    return written


def dumps(document: dict) -> str:
    """The text of a document: one vertex per line, so a diff shows which one changed."""
    function = json.dumps(document["function"], sort_keys=True)
    vertices = ",\n  ".join(json.dumps(vertex) for vertex in document["vertices"])
    return f'{{"function": {function},\n "vertices": [\n  {vertices}\n ]}}\n'


def write_graph(graph: Graph, path, **options) -> Path:
    """Write ``graph`` as RipTide JSON to ``path`` (options as :func:`graph_to_riptide`)."""
    path = Path(path)
    path.write_text(dumps(graph_to_riptide(graph, **options)))
    return path
