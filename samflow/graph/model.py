"""A SAM graph as nodes and typed streams: what a DOT file means, checked before anything runs.

A node is one primitive (its ``type`` attribute) with the attributes SAM's compiler gives it
(``index``, ``tensor``, ``mode``, ``format``, ``root``, ...). An edge is one stream: its ``type``
is the stream kind (``crd``, ``ref``, ``val``, ``repsig``) and its ``comment`` names the port where
a primitive has several (``in-C``, ``out-d``, ``outer-i``). Which ports a node has, and which it
needs, is the business of :mod:`samflow.graph.primitives`; this module keeps the file's facts and
gives every error the node's id and label.
"""

from dataclasses import dataclass
from pathlib import Path

from .dot import DotGraph, GraphError, parse_dot
from .tensors import parse_formats

__all__ = ["Node", "Edge", "Graph", "STREAM_KINDS", "load_graph", "graph_from_text"]

STREAM_KINDS = ("crd", "ref", "val", "repsig")


@dataclass
class Node:
    id: str
    type: str
    attrs: dict
    line: int

    @property
    def label(self) -> str:
        text = self.attrs.get("label") or self.type or "no label"
        return " ".join(text.replace("\\n", "\n").split())

    @property
    def where(self) -> str:
        return f"node {self.id} ({self.label})"

    def flag(self, name: str) -> bool:
        return self.attrs.get(name, "false").lower() in ("true", "1")


@dataclass(eq=False)             # an edge is itself: two alike edges are two streams
class Edge:
    src: str
    dst: str
    kind: str
    port: str            # the edge's comment, '' when it has none
    line: int
    order: int           # its place among the file's edges (an ALU's operands go in this order)

    def describe(self) -> str:
        port = f" {self.port!r}" if self.port else ""
        return f"the {self.kind or 'untyped'}{port} edge {self.src} -> {self.dst} (line {self.line})"


@dataclass
class Graph:
    name: str
    source: str
    formats: dict        # tensor name -> TensorFormat
    nodes: dict          # id -> Node, in file order
    edges: list

    def inputs_of(self, node_id: str) -> list:
        return [e for e in self.edges if e.dst == node_id]

    def outputs_of(self, node_id: str) -> list:
        return [e for e in self.edges if e.src == node_id]

    @property
    def written(self) -> list:
        """Names of the tensors a fiberwrite fills, in file order."""
        names = []
        for node in self.nodes.values():
            tensor = node.attrs.get("tensor")
            if node.type == "fiberwrite" and tensor not in names:
                names.append(tensor)
        return names


def _from_dot(dot: DotGraph, source: str) -> Graph:
    formats = parse_formats(dot.attrs.get("comment"), source)
    nodes = {}
    for dot_node in dot.nodes.values():
        node = Node(dot_node.id, dot_node.attrs.get("type", ""), dot_node.attrs, dot_node.line)
        if not node.type:
            raise GraphError(f"{source}:{node.line}: {node.where} has no type attribute (a node that "
                             "appears only in edges is not declared); give it type=\"...\"")
        nodes[node.id] = node
    edges = []
    for order, dot_edge in enumerate(dot.edges):
        edge = Edge(dot_edge.src, dot_edge.dst, dot_edge.attrs.get("type", ""),
                    dot_edge.attrs.get("comment", ""), dot_edge.line, order)
        if edge.kind not in STREAM_KINDS:
            what = f"stream type {edge.kind!r}" if edge.kind else "no stream type"
            raise GraphError(f"{source}:{edge.line}: {edge.describe()}, from {nodes[edge.src].where} to "
                             f"{nodes[edge.dst].where}, has {what}; give it type=\"crd\", \"ref\", "
                             "\"val\" or \"repsig\"")
        edges.append(edge)
    return Graph(dot.name, source, formats, nodes, edges)


def graph_from_text(text: str, source: str = "<graph>") -> Graph:
    return _from_dot(parse_dot(text, source), source)


def load_graph(path) -> Graph:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise GraphError(f"{path}: cannot read the graph ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise GraphError(f"{path}: not a text file (byte {error.start} is not UTF-8); give a Graphviz "
                         f"(.gv) file") from None
    return graph_from_text(text, str(path))
