"""Each SAM node type, as ports and a run on the golden models of :mod:`samflow.models`.

A node type says which edge goes to which of its ports (from the edge's stream kind and comment),
which ports it cannot run without, and how it runs: the golden model of its primitive on whole
streams, with the parameters the graph leaves to the tensors (a dense scanner's dimension, a
scanner's segment and coordinate arrays, an array's values). Where SAM's graphs use a form that has
no golden model, it is mapped onto models that do exist, and said so below:

- ``spaccumulator`` (order 1): SAM's takes coordinate streams with stops; the golden ``spacc1``
  takes point streams. The stops are dropped (``stkn_drop``) before it; a third coordinate input
  (SAM's graphs give it the level above, ``inner-k``) is accepted and not needed. Its float sums
  come back as integers.
- ``crddrop`` with ``vals=true`` and ``crdhold`` with ``vals=true`` (SAM's hand-written vector
  compression graphs): their inner stream is a value stream at the same level as the coordinates,
  see :mod:`samflow.graph.valued`.
- a ``fiberwrite`` of a dense level is run as the compressed writer, so that the coordinates it is
  given are kept; where every coordinate comes, that is the dense layout, and otherwise (a sparse
  vector written into a dense one) the decoder places each value at its coordinate.

Errors name the node and say how to fix the graph; the caller adds the file and line.
"""

from samflow.models import MODELS, graph_accumulator

from .dot import GraphError
from .valued import drop_zero_values, hold_values

__all__ = ["PRIMITIVES", "ROOT_REFERENCE"]

ROOT_REFERENCE = [0, "D"]      # the stream a root scanner or root repeat starts from


def _fail(node, why: str):
    return GraphError(f"{node.where}: {why}")


def _kind(node, edge, *kinds):
    if edge.kind not in kinds:
        raise _fail(node, f"{edge.describe()} carries {edge.kind} tokens; this port takes "
                          f"{' or '.join(kinds)}")


def _tensor(node, graph, *, written: bool):
    name = node.attrs.get("tensor")
    if not name:
        raise _fail(node, "has no tensor attribute; say which tensor it reads or writes (tensor=\"B\")")
    if name not in graph.formats:
        raise _fail(node, f"names tensor {name!r}, which the graph comment does not declare "
                          f"(it declares {', '.join(graph.formats)}); add {name}=<format> to the comment")
    if written != (name in graph.written):
        role = "written by a fiberwrite, so it is an output" if name in graph.written else "never written"
        raise _fail(node, f"{'writes' if written else 'reads'} tensor {name}, which is {role}")
    return graph.formats[name]


def _mode(node, fmt):
    text = node.attrs.get("mode", "")
    if not text.isdigit() or int(text) >= fmt.order:
        raise _fail(node, f"mode {text!r} is not a mode of tensor {fmt.name} ({fmt.spelled()!r}, modes "
                          f"0..{fmt.order - 1})")
    level = fmt.level_of(int(text))
    declared = fmt.levels[level]
    if node.attrs.get("format", declared) != declared:
        raise _fail(node, f"reads mode {text} as {node.attrs['format']}, but the graph comment makes it "
                          f"{declared} ({fmt.name}={fmt.spelled()}); make the two agree")
    return int(text), level


def _strip(port: str, *prefixes) -> str:
    for prefix in prefixes:
        if port.startswith(prefix):
            return port[len(prefix):]
    return port


class Primitive:
    """The default: one input port per stream kind, one output port per stream kind."""
    inputs: dict = {}         # port -> kinds it takes
    outputs: dict = {}        # kind -> port

    def check(self, node, graph):
        pass

    def in_port(self, node, edge, graph) -> str:
        for port, kinds in self.inputs.items():
            if edge.kind in kinds:
                return port
        raise _fail(node, f"takes no {edge.kind} input, but {edge.describe()} brings one")

    def out_port(self, node, edge, graph) -> str:
        if edge.kind not in self.outputs:
            raise _fail(node, f"gives no {edge.kind} output, but {edge.describe()} takes one")
        return self.outputs[edge.kind]

    def needs(self, node) -> list:
        return list(self.inputs)


class FiberLookup(Primitive):
    outputs = {"crd": "crd", "ref": "ref"}

    def check(self, node, graph):
        _mode(node, _tensor(node, graph, written=False))
        if not node.attrs.get("index"):
            raise _fail(node, "has no index attribute; say which index variable it scans (index=\"i\")")

    def in_port(self, node, edge, graph):
        _kind(node, edge, "ref")
        if node.flag("root"):
            raise _fail(node, f"is a root scanner (root=true), which starts from SAM's root reference, "
                              f"but {edge.describe()} feeds it; drop the edge or set root=\"false\"")
        return "in_ref"

    def needs(self, node):
        return [] if node.flag("root") else ["in_ref"]

    def run(self, node, streams, context):
        fmt = context.formats[node.attrs["tensor"]]
        _mode_number, level = _mode(node, fmt)
        arrays = context.tensors[fmt.name].levels[level]
        refs = streams.get("in_ref", ROOT_REFERENCE)
        if fmt.levels[level] == "compressed":
            memory = {"seg_arr": arrays["seg"], "crd_arr": arrays["crd"]}
            return MODELS["rd_scan_compressed"]({}, memory, {"in_ref": refs, "in_crd_skip": []})[0]
        return MODELS["rd_scan_uncompressed"]({"dim": arrays["dim"]}, {}, {"in_ref": refs})[0]


class FiberWrite(Primitive):
    def check(self, node, graph):
        fmt = _tensor(node, graph, written=True)
        if node.attrs.get("mode") != "vals":
            _mode(node, fmt)

    def in_port(self, node, edge, graph):
        if node.attrs.get("mode") == "vals":
            _kind(node, edge, "val")
            return "in_val"
        _kind(node, edge, "crd")
        return "in_crd"

    def out_port(self, node, edge, graph):
        raise _fail(node, f"is a writer, a sink, but {edge.describe()} leaves it")

    def needs(self, node):
        return ["in_val" if node.attrs.get("mode") == "vals" else "in_crd"]

    def run(self, node, streams, context):
        fmt = context.formats[node.attrs["tensor"]]
        if node.attrs.get("mode") == "vals":
            tokens = streams["in_val"]
            memory = MODELS["wr_scan_vals"]({"size": len(tokens)}, {}, {"in_val": tokens})[1]
            context.written[fmt.name, "vals"] = memory["arr"]
        else:
            memory = MODELS["wr_scan_compressed"]({}, {}, {"in_crd": streams["in_crd"]})[1]
            level = _mode(node, fmt)[1]
            context.written[fmt.name, level] = {"seg": memory["seg_arr"], "crd": memory["crd_arr"]}
        return {}


class RepSigGen(Primitive):
    inputs = {"in_stream": ("crd", "ref")}
    outputs = {"repsig": "repsig"}

    def run(self, node, streams, context):
        return MODELS["repeat_sig_gen"]({}, {}, streams)[0]


class Repeat(Primitive):
    outputs = {"ref": "ref"}

    def in_port(self, node, edge, graph):
        _kind(node, edge, "ref", "repsig")
        if edge.kind == "ref" and node.flag("root"):
            raise _fail(node, f"is a root repeat (root=true), which repeats SAM's root reference, but "
                              f"{edge.describe()} feeds it; drop the edge or set root=\"false\"")
        return "in_ref" if edge.kind == "ref" else "in_repsig"

    def needs(self, node):
        return ["in_repsig"] if node.flag("root") else ["in_ref", "in_repsig"]

    def run(self, node, streams, context):
        refs = streams.get("in_ref", ROOT_REFERENCE)
        return MODELS["repeat"]({}, {}, {"in_ref": refs, "in_repsig": streams["in_repsig"]})[0]


class ArrayVals(Primitive):
    inputs = {"in_load_addr": ("ref",)}
    outputs = {"val": "val"}

    def check(self, node, graph):
        _tensor(node, graph, written=False)

    def run(self, node, streams, context):
        vals = context.tensors[node.attrs["tensor"]].vals
        inputs = {"in_load_addr": streams["in_load_addr"], "in_store_addr": [], "in_store_val": []}
        return {"val": MODELS["array"]({"size": len(vals)}, {"init_arr": vals}, inputs)[0]["load"]}


class Alu(Primitive):
    """``add`` (``sub=1`` subtracts the second operand) and ``mul``. The operands are the two value
    edges in the order the file states them: for ``x = b - C d`` SAM writes b's edge first."""
    outputs = {"val": "val"}

    def in_port(self, node, edge, graph):
        _kind(node, edge, "val")
        operands = [e for e in graph.inputs_of(node.id) if e.kind == "val"]
        if len(operands) > 2:
            raise _fail(node, f"has {len(operands)} value inputs; SAM's ALUs take two, so chain them")
        return f"in_val{operands.index(edge) + 1}"

    def needs(self, node):
        return ["in_val1", "in_val2"]

    def run(self, node, streams, context):
        if node.type == "mul":
            return MODELS["multiply"]({}, {}, streams)[0]
        return MODELS["add"]({"neg2": node.flag("sub")}, {}, streams)[0]


class Reduce(Primitive):
    inputs = {"in_val": ("val",)}
    outputs = {"val": "val"}

    def run(self, node, streams, context):
        return MODELS["reduce"]({}, {}, streams)[0]


class Joiner(Primitive):
    """``intersect`` and ``union`` of two sides, each side named by its tensor: ``in-B`` on the
    side's coordinate and reference inputs, ``out-B`` on its reference output."""

    def sides(self, node, graph) -> list:
        names = []
        for edge in graph.inputs_of(node.id):
            name = _strip(edge.port, "in-")
            if not edge.port.startswith("in-") or not name:
                raise _fail(node, f"{edge.describe()} does not say which side it is: a {node.type}'s "
                                  "inputs name their tensor, comment=\"in-B\"")
            if name not in names:
                names.append(name)
        if len(names) > 2:
            raise _fail(node, f"joins {len(names)} sides ({', '.join(names)}); SAM's {node.type} takes "
                              "two, so chain two of them")
        return names

    def in_port(self, node, edge, graph):
        _kind(node, edge, "crd", "ref")
        return f"in_{edge.kind}{self.sides(node, graph).index(_strip(edge.port, 'in-')) + 1}"

    def out_port(self, node, edge, graph):
        _kind(node, edge, "crd", "ref")
        if edge.kind == "crd":
            return "crd"
        sides = self.sides(node, graph)
        name = _strip(edge.port, "out-")
        if not edge.port.startswith("out-") or name not in sides:
            raise _fail(node, f"{edge.describe()} does not name one of its sides ({', '.join(sides)}): "
                              "a reference output says whose it is, comment=\"out-B\"")
        return f"ref{sides.index(name) + 1}"

    def needs(self, node):
        return ["in_crd1", "in_ref1", "in_crd2", "in_ref2"]

    def run(self, node, streams, context):
        return MODELS[node.type]({}, {}, streams)[0]


class OuterInner(Primitive):
    """``crddrop`` and ``crdhold``: an outer and an inner stream, named by their index variables
    (``outer=i``, ``inner=k``); inputs ``in-i`` or ``i``, outputs ``outer-i`` and ``inner-k``."""

    def names(self, node):
        outer, inner = node.attrs.get("outer"), node.attrs.get("inner")
        if not outer or not inner:
            raise _fail(node, "needs outer and inner attributes naming its two levels "
                              "(outer=\"i\" inner=\"j\")")
        return outer, inner

    def check(self, node, graph):
        self.names(node)

    def in_port(self, node, edge, graph):
        outer, inner = self.names(node)
        name = _strip(edge.port, "in-", "outer-", "inner-")     # one comment names both ends' ports
        if name == outer:
            _kind(node, edge, "crd")
            return "in_outer_crd"
        if name == inner:
            _kind(node, edge, "val" if node.flag("vals") else "crd")
            return "in_inner_crd"
        raise _fail(node, f"{edge.describe()} names neither its outer level {outer!r} nor its inner "
                          f"level {inner!r}; label the edge comment=\"in-{outer}\" or \"in-{inner}\"")

    def out_port(self, node, edge, graph):
        outer, inner = self.names(node)
        if edge.port == f"outer-{outer}":
            _kind(node, edge, "crd")
            return "outer_crd"
        if edge.port == f"inner-{inner}":
            _kind(node, edge, "val" if node.flag("vals") else "crd")
            return "inner_crd"
        raise _fail(node, f"{edge.describe()} leaves from no output it has; name it "
                          f"comment=\"outer-{outer}\" or \"inner-{inner}\"")

    def needs(self, node):
        return ["in_outer_crd", "in_inner_crd"]

    def run(self, node, streams, context):
        if node.flag("vals"):
            valued = drop_zero_values if node.type == "crddrop" else hold_values
            return valued(streams["in_outer_crd"], streams["in_inner_crd"])
        return MODELS["crd_drop" if node.type == "crddrop" else "crd_hold"]({}, {}, streams)[0]


class SparseAccumulator(Primitive):
    """SAM's ``spaccumulator`` of order 1 (``in0`` the inner index, ``in1`` the outer one), on the
    golden ``spacc1`` after dropping the stops of its three streams."""

    def names(self, node):
        if node.attrs.get("order", "1") != "1":
            raise _fail(node, f"order {node.attrs['order']} is not mapped onto the golden models (only "
                              "order 1, SAM's SparseAccumulator1)")
        inner, outer = node.attrs.get("in0"), node.attrs.get("in1")
        if not inner or not outer:
            raise _fail(node, "needs in0 (the inner index) and in1 (the outer index) attributes")
        return inner, outer

    def check(self, node, graph):
        self.names(node)

    def in_port(self, node, edge, graph):
        _kind(node, edge, "crd", "val")
        if edge.kind == "val":
            return "in_val"
        inner, outer = self.names(node)
        name = _strip(edge.port, "outer-", "inner-", "in-")
        if name in (outer, inner):
            return "in_outer" if name == outer else "in_inner"
        if edge.port.startswith("inner-") and name:
            return f"level_above_{name}"         # SAM's third input, which the point form needs not
        raise _fail(node, f"{edge.describe()} does not say which coordinates it brings; name it "
                          f"comment=\"outer-{outer}\" or \"inner-{inner}\"")

    def out_port(self, node, edge, graph):
        inner, outer = self.names(node)
        if edge.kind == "val":
            return "val"
        ports = {f"out-{inner}": "inner_crd", f"out-{outer}": "outer_crd"}
        if edge.kind != "crd" or edge.port not in ports:
            raise _fail(node, f"{edge.describe()} leaves from no output it has; name it "
                              f"comment=\"out-{outer}\" or \"out-{inner}\", or make it a val edge")
        return ports[edge.port]

    def needs(self, node):
        return ["in_outer", "in_inner", "in_val"]

    def run(self, node, streams, context):
        return graph_accumulator({"in_outer_crdpt": streams["in_outer"],
                                  "in_inner_crdpt": streams["in_inner"], "in_val": streams["in_val"]})


class Broadcast(Primitive):
    """A fan-out point: its one input goes, unchanged, to every edge that leaves it."""

    def in_port(self, node, edge, graph):
        if len(graph.inputs_of(node.id)) > 1:
            raise _fail(node, "is a broadcast with more than one input; it fans out one stream")
        return "in"

    def out_port(self, node, edge, graph):
        feeding = graph.inputs_of(node.id)
        if feeding and feeding[0].kind != edge.kind:
            raise _fail(node, f"fans out a {feeding[0].kind} stream, but {edge.describe()} is {edge.kind}")
        return "out"

    def needs(self, node):
        return ["in"]

    def run(self, node, streams, context):
        return {"out": list(streams["in"])}


PRIMITIVES = {
    "fiberlookup": FiberLookup(), "fiberwrite": FiberWrite(), "repsiggen": RepSigGen(),
    "repeat": Repeat(), "arrayvals": ArrayVals(), "add": Alu(), "mul": Alu(), "reduce": Reduce(),
    "intersect": Joiner(), "union": Joiner(), "crddrop": OuterInner(), "crdhold": OuterInner(),
    "spaccumulator": SparseAccumulator(), "broadcast": Broadcast(),
}
