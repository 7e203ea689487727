"""RipTide graph importer: ``*.riptide.json`` (and ``.nostream`` variants) into a :class:`Graph`,
and the suite's vectors files (cases of arguments, memory and expected memory).

The formats are those of the RipTide peer suite's README. Vertex ``ID`` k becomes node ``v<k>``
(labelled with the vertex's own name); ``xdata`` sources become argument inputs; pointer
arguments become arrays laid out in argument order. Every error names the file, the vertex and
the field, so a broken graph is fixed at its source.

Rivulet's extensions of the format (docs/graph-json.md), all optional, so a file without them
reads as before: a vertex's ``node`` names its node instead of ``v<ID>``; the operators QUEUE,
ARB, TASK, ACQUIRE, RELEASE and SINK, with the vertex fields ``width``, ``sources`` and ``ind``;
a source's ``depth`` and ``spill``; a pointer argument's ``size``. :mod:`ripple_core.export`
writes the format.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .graph import Graph, GraphError, Input
from .interp import check_inputs, run
from .ops import BINARY, STREAM_COMPARES

__all__ = ["RiptideFormatError", "read_json", "load_graph", "parse_graph", "load_vectors", "case_problem",
           "run_case", "CaseResult", "SUITE_OPS", "RIPPLE_OPS", "TUPLE_FIELDS", "CASE_FIELDS"]

# The operators of the peer suite's format, and Rivulet's additions to it.
SUITE_OPS = frozenset(BINARY) | {"ID", "SELECT", "STEER", "MERGE", "ORDER", "CARRY", "INVARIANT", "STREAM",
                                 "LOAD", "STORE"}
RIPPLE_OPS = frozenset({"QUEUE", "ARB", "TASK", "ACQUIRE", "RELEASE", "SINK"})
# The vertex fields of the tuple operators, each read into the attribute of the same name.
TUPLE_FIELDS = {"QUEUE": ("width",), "ARB": ("width", "sources"), "TASK": ("width", "ind")}
# The fields of a vectors file's case; any other is a misspelling (an "expcet" would check nothing).
CASE_FIELDS = ("args", "mem", "expect", "origin", "reference_steps")
# An argument's type: an integer of at most 32 bits (the dataflow word), or a pointer to such words.
_ARGUMENT_TYPE = re.compile(r"i([1-9][0-9]*)\*?")


class RiptideFormatError(GraphError):
    """A graph or vectors file does not follow the format; the message says where."""


def _fail(where: str, message: str):
    raise RiptideFormatError(f"{where}: {message}")


def _polarity(where: str, vertex: dict) -> bool:
    pred = vertex.get("pred")
    if not isinstance(pred, str) or not pred.endswith(("_TRUE", "_FALSE")):
        _fail(where, f"field 'pred' is {pred!r}; expected a string ending in _TRUE or _FALSE")
    return pred.endswith("_TRUE")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _source(where: str, slot, scalars, arrays, ids: dict) -> Input:
    if not isinstance(slot, list) or not slot or not isinstance(slot[0], dict):
        _fail(where, "is not a non-empty list of sources")
    source = slot[0]
    kind, held = source.get("type"), source.get("hold", False)
    if not isinstance(held, bool):
        _fail(where, f"field 'hold' is {held!r}, not true/false")
    depth, spill = source.get("depth"), source.get("spill", False)
    if depth is not None and (not _is_int(depth) or depth < 1):
        _fail(where, f"field 'depth' {depth!r} is not an integer >= 1")
    if not isinstance(spill, bool):
        _fail(where, f"field 'spill' is {spill!r}, not true/false")
    options = {"hold": held, "depth": depth, "spill": spill}
    if kind == "data":
        vid, port = source.get("ID"), source.get("oport", 0)
        if not _is_int(vid) or vid not in ids:
            _fail(where, f"field 'ID' {vid!r} names no vertex of this graph")
        if not _is_int(port) or port < 0:
            _fail(where, f"field 'oport' {port!r} is not a port number")
        return Input("edge", source=ids[vid], port=port, **options)
    if kind == "xdata":
        name = source.get("name")
        if name not in scalars and name not in arrays:
            _fail(where, f"field 'name' {name!r} is not an argument of the function")
        return Input("arg", name=name, **options)
    if kind == "const":
        value = source.get("value")
        if not _is_int(value):
            _fail(where, f"field 'value' {value!r} is not an integer")
        return Input("const", value=value, **options)
    _fail(where, f"field 'type' {kind!r} is not data, xdata or const")


def parse_graph(document, origin: str = "<graph>") -> Graph:
    """Build and validate the graph of one parsed ``*.riptide.json`` document."""
    if not isinstance(document, dict) or not isinstance(document.get("function"), dict) \
            or not isinstance(document.get("vertices"), list):
        _fail(origin, "expected an object with 'function' and 'vertices'")
    function = document["function"]
    graph = Graph(name=str(function.get("name", Path(origin).name)))
    arguments = function.get("args", [])
    if not isinstance(arguments, list):
        _fail(f"{origin}: function.args", f"is {arguments!r}, not a list of {{\"name\": ..., \"type\": ...}}")
    for k, argument in enumerate(arguments):
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str) \
                or not isinstance(argument.get("type"), str):
            _fail(f"{origin}: function.args[{k}]", "needs string fields 'name' and 'type'")
        if argument["name"] in graph.scalars or argument["name"] in graph.arrays:
            _fail(f"{origin}: function.args[{k}]", f"argument name {argument['name']!r} is used twice")
        bits = _ARGUMENT_TYPE.fullmatch(argument["type"])
        if not bits or int(bits[1]) > 32:
            _fail(f"{origin}: function.args[{k}] ({argument['name']})",
                  f"type {argument['type']!r} is not an integer of at most 32 bits (i32, or i32* for an "
                  f"array); the dataflow word is 32 bits, so a wider or floating-point value would not fit")
        size = argument.get("size")
        if argument["type"].endswith("*"):
            if size is not None and (not _is_int(size) or size < 0):
                _fail(f"{origin}: function.args[{k}] ({argument['name']})",
                      f"field 'size' {size!r} is not an integer >= 0")
            graph.arrays[argument["name"]] = size
        else:
            graph.scalars.append(argument["name"])
    ids: dict[int, str] = {}        # vertex ID -> node name
    for position, vertex in enumerate(document["vertices"]):
        where = f"{origin}: vertices[{position}]"
        vid = vertex.get("ID") if isinstance(vertex, dict) else None
        if not _is_int(vid) or vid in ids:
            _fail(where, f"field 'ID' {vid!r} is missing, not an integer or repeated")
        name = vertex.get("node", f"v{vid}")
        if not isinstance(name, str) or not name:
            _fail(where, f"field 'node' {name!r} is not a non-empty string")
        if name in ids.values():
            _fail(where, f"node name {name!r} is used by two vertices")
        ids[vid] = name
    for vertex in document["vertices"]:
        _vertex(graph, vertex, origin, ids)
    try:
        return graph.validate()
    except RiptideFormatError:
        raise
    except GraphError as error:
        raise RiptideFormatError(f"{origin}: {error}") from None


def _vertex(graph: Graph, vertex: dict, origin: str, ids: dict):
    where = f"{origin}: vertex {vertex['ID']} ({vertex.get('name', '?')})"
    op_field = vertex.get("op")
    if not isinstance(op_field, str) or "_OP_" not in op_field:
        _fail(where, f"field 'op' {op_field!r} is not of the form <UNIT>_CFG_OP_<NAME>")
    op = op_field.split("_OP_", 1)[1]
    if op not in SUITE_OPS and op not in RIPPLE_OPS:
        _fail(where, f"field 'op' {op_field!r}: operator {op} is not supported")
    attrs = {}
    if op in ("STEER", "CARRY", "INVARIANT", "STREAM"):
        attrs["pred"] = _polarity(where, vertex)
    if op == "STREAM":
        cmp = str(vertex.get("cmp", "")).rsplit("_", 1)[-1]
        if cmp not in STREAM_COMPARES:
            _fail(where, f"field 'cmp' {vertex.get('cmp')!r} is not STREAM_CFG_CMP_ + one of "
                         f"{', '.join(STREAM_COMPARES)}")
        if vertex.get("update", "STREAM_CFG_UPDATE_ADD") != "STREAM_CFG_UPDATE_ADD":
            _fail(where, f"field 'update' {vertex.get('update')!r}: only STREAM_CFG_UPDATE_ADD is supported")
        attrs["cmp"] = cmp
    for name in TUPLE_FIELDS.get(op, ()):
        if name in vertex:          # a missing or ill-typed one is named by Graph.validate
            attrs[name] = vertex[name]
    slots = vertex.get("inputs")
    if not isinstance(slots, list):
        _fail(where, "field 'inputs' is not a list")
    inputs = [_source(f"{where}, field 'inputs'[{k}]", slot, graph.scalars, graph.arrays, ids)
              for k, slot in enumerate(slots)]
    try:
        graph.add(ids[vertex["ID"]], op, inputs, label=str(vertex.get("name", "")), **attrs)
    except GraphError as error:
        _fail(where, str(error))


def read_json(path):
    """The parsed JSON of ``path``; a file that cannot be read, is not text or not JSON is refused
    as :class:`RiptideFormatError` naming it."""
    try:
        return json.loads(Path(path).read_text())
    except OSError as error:
        raise RiptideFormatError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise RiptideFormatError(f"{path}: not a text file (byte {error.start} is not UTF-8); "
                                 f"give a JSON file") from None
    except json.JSONDecodeError as error:
        raise RiptideFormatError(f"{path}: not JSON: {error}") from None


def load_graph(path) -> Graph:
    return parse_graph(read_json(path), str(path))


def case_problem(case) -> str | None:
    """Why ``case`` is not a case of the vectors format, or None: an object of :data:`CASE_FIELDS`
    whose args, mem and expect are objects, expect's values lists of integers. Whether the names
    and words fit a graph is :func:`ripple_core.interp.check_inputs`'s question."""
    if not isinstance(case, dict):
        return f"is {case!r}, not an object"
    unknown = sorted(set(case) - set(CASE_FIELDS))
    if unknown:
        return f"unknown field(s) {unknown}; a case has {', '.join(CASE_FIELDS)}"
    for name in ("args", "mem", "expect"):
        if not isinstance(case.get(name, {}), dict):
            return f"field {name!r} is not an object"
    for name, words in case.get("expect", {}).items():
        if not isinstance(words, list) or not all(_is_int(word) for word in words):
            return (f"expect[{name!r}] is {words!r}; give the array's final contents or the SINK's tokens "
                    f"as a list of integers")
    return None


def load_vectors(path, graph: Graph | None = None) -> list[dict]:
    """The cases of a ``*.vectors.json`` file, checked for the fields a run needs: at least one
    case, and with ``graph`` each case's arguments and memory against its parameters
    (:func:`ripple_core.interp.check_inputs`: none missing, none extra, every value a 32-bit word).
    Without ``graph`` those are checked when each case runs."""
    path = Path(path)
    cases = read_json(path)
    if not isinstance(cases, list):
        _fail(str(path), "expected a JSON array of cases")
    for k, case in enumerate(cases):
        problem = case_problem(case)
        if problem:
            _fail(f"{path}: case {k}", problem)
        if graph is not None:
            try:
                check_inputs(graph, case.get("args", {}), case.get("mem", {}))
            except GraphError as error:
                _fail(f"{path}: case {k}", str(error))
    if not cases:
        _fail(str(path), "has no cases; a vectors file lists at least one case "
                         "({\"args\": {...}, \"mem\": {...}, \"expect\": {...}})")
    return cases


@dataclass
class CaseResult:
    passed: bool
    cycles: int
    firings: int
    ipc: float
    reference_steps: int | None
    problems: list = field(default_factory=list)


def run_case(graph: Graph, case: dict, *, variant: str | None = None, **options) -> CaseResult:
    """Run one case: each array and SINK that ``expect`` names must hold what it says, and no
    non-hold slot may keep a token. A name that is neither is a GraphError."""
    expect = case.get("expect", {})
    sinks = {node.name for node in graph.nodes.values() if node.op == "SINK"}
    unknown = sorted(set(expect) - set(graph.arrays) - sinks)
    if unknown:
        raise GraphError(f"the case's expect names {unknown}, which are neither arrays nor SINK nodes of "
                         f"{graph.name} (arrays: {', '.join(graph.arrays) or 'none'}; SINKs: "
                         f"{', '.join(sorted(sinks)) or 'none'})")
    result = run(graph, case.get("args", {}), case.get("mem", {}), **options)
    problems = []
    for name, expected in expect.items():
        what, got = ("SINK", result.outputs[name]) if name in sinks else ("array", result.arrays.get(name))
        if got != expected:
            first = next((i for i, (a, b) in enumerate(zip(got or [], expected, strict=False)) if a != b),
                         min(len(got or []), len(expected)))
            problems.append(f"{what} {name} differs at word {first}: got {(got or [])[first:first + 4]}, "
                            f"expected {expected[first:first + 4]}")
    if result.leftovers:
        problems.append("tokens left over: " + ", ".join(result.leftovers[:4]))
    steps = case.get("reference_steps", {}).get(variant) if variant else None
    return CaseResult(not problems, result.cycles, result.firings, result.ipc, steps, problems)
