"""Tuples split into one stream per field, for a fabric whose tokens carry one value.

Ripple's tasks take several arguments, so the graph's QUEUE, ARB and TASK nodes move k-value
tuples in one firing. A ``pe`` tile passes one 32-bit value per token, so before lowering,
:func:`split_tuples` rewrites every such node of width k > 1 into width-1 nodes, one stream per
field (docs/ripple.md, "Tuples on the fabric"):

* **QUEUE** of k fields: k queues, each with its field's slot (depth, spill). A tuple's fields
  enter their queues in the same firing order, so the n-th token of every field queue belongs
  to the n-th tuple.
* **ARB** of n sources: an ARB over field 0 of the sources that also emits the winning
  source's number (``index``). A source's field 0 reaches it through ORDERs that wait for the
  source's other fields (each field's stream also feeds its ORDER), so, as in the tuple ARB,
  only a source whose whole tuple is there can win. Every other field follows that choice:
  for two sources a MERGE decided by the number takes the field from the source that won; for
  three, the number is compared with 2 and the remaining choice between sources 0 and 1 is
  steered to a second MERGE. A source's fields arrive in its own order, so the field a MERGE
  takes from source s is the one of the tuple the ARB took from s.
* **TASK** of k arguments: a TASK over field 0. A pipelined (``ind``) task fires whenever its
  argument is there, so its other fields need no gate: their consumers read the field's own
  stream directly. A task that runs one invocation at a time lets field i through an ORDER
  behind field 0's dispatch, so no field runs ahead of its invocation's dispatch.

An ARB of more than three sources (a pe tile has three slots) first becomes a tree of ARBs of
at most three, of whole tuples, before the fields are split. Every source still waits a bounded
number of grants; the grant order is no longer one round robin over all sources, which Ripple
does not promise.

The result is a graph of the same program: a Kahn network for the fields, with the one
choice (the arbitration) made once and followed by every field. Arbitration may grant in
another order than the tuple ARB would (a whole tuple reaches it a little later, through the
ORDERs), which is a schedule Ripple allows. Node names keep the original name for field 0; the added
nodes are named after it (``visit.q.f1``, ``visit.arb.f1``).
"""

from dataclasses import replace

from .graph import Graph, Input, Node, edge, hold

__all__ = ["split_tuples", "is_split", "ARB_SOURCES"]

WIDE_OPS = ("QUEUE", "ARB", "TASK")
ARB_SOURCES = 3         # a pe tile's operand slots


def is_split(graph: Graph) -> bool:
    """True if no QUEUE, ARB or TASK of the graph carries more than one value per token and no
    ARB has more than :data:`ARB_SOURCES` sources."""
    return all(node.attrs.get("width", 1) == 1 and node.attrs.get("sources", 0) <= ARB_SOURCES
               for node in graph.nodes.values() if node.op in WIDE_OPS)


def split_tuples(graph: Graph) -> Graph:
    """The graph with every ARB of more than three sources made a tree and every tuple of k > 1
    fields split into k streams (the module docstring); ``graph`` itself if it has neither. The
    input graph is not changed."""
    if is_split(graph):
        return graph
    return _Splitter(_arb_trees(graph)).build()


def _arb_trees(graph: Graph) -> Graph:
    """A copy of ``graph`` whose ARBs have at most :data:`ARB_SOURCES` sources each: the sources
    of a wider ARB go, three at a time, through ARBs of their own (``a.g0``, ``a.g1``, ...)."""
    out = Graph(graph.name, {}, list(graph.scalars), dict(graph.arrays))
    for node in graph.nodes.values():
        if node.op != "ARB" or node.attrs["sources"] <= ARB_SOURCES:
            out.add(node.name, node.op, list(node.inputs), node.label, **node.attrs)
            continue
        width = node.attrs["width"]
        level = [node.inputs[s * width:(s + 1) * width] for s in range(node.attrs["sources"])]
        groups = 0
        while len(level) > ARB_SOURCES:
            merged = []
            for start in range(0, len(level), ARB_SOURCES):
                group = level[start:start + ARB_SOURCES]
                if len(group) == 1:
                    merged.append(group[0])
                    continue
                name = f"{node.name}.g{groups}"
                groups += 1
                out.add(name, "ARB", [value for source in group for value in source], node.label,
                        **{**node.attrs, "sources": len(group)})
                merged.append([edge(name, i) for i in range(width)])
            level = merged
        out.add(node.name, "ARB", [value for source in level for value in source], node.label,
                **{**node.attrs, "sources": len(level)})
    return out.validate()


class _Splitter:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.out = Graph(graph.name, {}, list(graph.scalars), dict(graph.arrays))
        # (wide node, port) -> the (node, port) of the split graph that carries that field, or
        # the Input it is read from directly (a pipelined task's field i > 0).
        self.fields: dict[tuple[str, int], tuple[str, int] | Input] = {}
        for node in graph.nodes.values():
            width = node.attrs.get("width", 1)
            if node.op not in WIDE_OPS or width == 1:
                continue
            for i in range(width):
                self.fields[node.name, i] = self._field_name(node, i)

    @staticmethod
    def _field_name(node: Node, i: int) -> tuple[str, int]:
        if i == 0:
            return node.name, 0
        return f"{node.name}.f{i}", 0

    def source(self, source: Input) -> Input:
        """``source`` as read in the split graph: an edge from a wide node's port follows its
        field; a pipelined task's field is its own input, followed in turn."""
        if source.kind != "edge" or (source.source, source.port) not in self.fields:
            return source
        where = self.fields[source.source, source.port]
        if isinstance(where, Input):
            followed = self.source(where)
            return replace(source, kind=followed.kind, source=followed.source, port=followed.port,
                           value=followed.value, name=followed.name, hold=source.hold or followed.hold)
        name, port = where
        return replace(source, source=name, port=port)

    def build(self) -> Graph:
        wide = [node for node in self.graph.nodes.values()
                if node.op in WIDE_OPS and node.attrs.get("width", 1) > 1]
        for node in wide:           # bypasses first, so that every reader can follow them
            if node.op == "TASK" and node.attrs["ind"]:
                for i in range(1, node.attrs["width"]):
                    if node.inputs[i].kind == "edge":
                        self.fields[node.name, i] = node.inputs[i]
        for node in self.graph.nodes.values():
            width = node.attrs.get("width", 1)
            if node.op not in WIDE_OPS or width == 1:
                self.out.add(node.name, node.op, [self.source(s) for s in node.inputs], node.label,
                             **node.attrs)
            elif node.op == "QUEUE":
                self._queue(node, width)
            elif node.op == "ARB":
                self._arb(node, width)
            else:
                self._task(node, width)
        return self.out.validate()

    def _attrs(self, node: Node, **changes) -> dict:
        return {**node.attrs, "width": 1, **changes}

    def _queue(self, node: Node, width: int):
        self.out.add(node.name, "QUEUE", [self.source(node.inputs[0])], node.label, **self._attrs(node))
        for i in range(1, width):
            self.out.add(self._field_name(node, i)[0], "QUEUE", [self.source(node.inputs[i])],
                         node.label, **self._attrs(node))

    def _arb(self, node: Node, width: int):
        sources = node.attrs["sources"]
        slot = [[self.source(node.inputs[s * width + i]) for i in range(width)] for s in range(sources)]
        self.out.add(node.name, "ARB", [self._whole(node, s, slot[s]) for s in range(sources)], node.label,
                     **self._attrs(node, index=True))
        winner = edge(node.name, 1)
        if sources == 2:
            for i in range(1, width):
                # MERGE takes slot 1 on a nonzero decider: source 1's field, else source 0's.
                self.out.add(self._field_name(node, i)[0], "MERGE", [winner, slot[1][i], slot[0][i]],
                             node.label)
            return
        is_two, first_two = f"{node.name}.is2", f"{node.name}.of01"
        self.out.add(is_two, "EQ", [winner, hold(2)], node.label)
        self.out.add(first_two, "STEER", [edge(is_two), winner], node.label, pred=False)
        for i in range(1, width):
            name = self._field_name(node, i)[0]
            self.out.add(f"{name}.01", "MERGE", [edge(first_two), slot[1][i], slot[0][i]], node.label)
            self.out.add(name, "MERGE", [edge(is_two), slot[2][i], edge(f"{name}.01")], node.label)

    def _whole(self, node: Node, s: int, fields: list[Input]) -> Input:
        """Source ``s``'s field 0, let into the ARB only once every other field of its tuple is
        there: each later field a stream also feeds an ORDER in front of field 0 (a constant or an
        argument is there from the start). Without it the ARB could grant a tuple whose other
        fields come only after a loop that waits for the ARB, as a tuple ARB never does."""
        gate = fields[0]
        for i, field in enumerate(fields[1:], 1):
            if field.kind != "edge":
                continue
            name = f"{node.name}.s{s}.has{i}"
            self.out.add(name, "ORDER", [gate, replace(field, depth=None, spill=False)], node.label)
            gate = edge(name)
        return gate

    def _task(self, node: Node, width: int):
        ind = node.attrs["ind"]
        done = [] if ind else [self.source(source) for source in node.inputs[width:]]   # done, credits
        self.out.add(node.name, "TASK", [self.source(node.inputs[0])] + done, node.label,
                     **self._attrs(node))
        for i in range(1, width):
            if isinstance(self.fields[node.name, i], Input):
                continue            # a pipelined task's field: read directly
            # Field i waits for field 0's dispatch: ORDER emits its first slot once both are there.
            self.out.add(self._field_name(node, i)[0], "ORDER",
                         [self.source(node.inputs[i]), edge(node.name)], node.label)
