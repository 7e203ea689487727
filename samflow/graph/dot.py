"""The part of Graphviz's DOT language that SAM's compiler writes, read without a dependency.

SAM's graphs are one ``digraph`` of node statements (``27 [type="fiberlookup" ...]``), edge
statements (``27 -> 26 [type="crd" comment="in-C"]``) and graph attributes (``comment="x=s0,..."``).
This reader takes that subset and a little more, so that a hand-edited file still reads: ``//``,
``/* */`` and ``#`` comments, ``;`` or ``,`` between items, several attribute lists, edge chains
(``a -> b -> c``), ``graph [...]``, ``node [...]`` and ``edge [...]`` defaults. A node stated twice
keeps the union of its attributes, as Graphviz does. Subgraphs, ports (``a:n``), HTML labels and
``+`` string concatenation are refused with the line they are on.
"""

import re
from dataclasses import dataclass, field

__all__ = ["GraphError", "DotGraph", "DotNode", "DotEdge", "parse_dot"]


class GraphError(ValueError):
    """A graph file, or a graph with its tensors, that cannot be run as it is."""


@dataclass
class DotNode:
    id: str
    attrs: dict
    line: int


@dataclass
class DotEdge:
    src: str
    dst: str
    attrs: dict
    line: int


@dataclass
class DotGraph:
    name: str
    attrs: dict = field(default_factory=dict)
    nodes: dict = field(default_factory=dict)      # id -> DotNode, in order of first appearance
    edges: list = field(default_factory=list)


_TOKEN = re.compile(r"""
    (?P<space>[ \t\r]+) | (?P<newline>\n) | (?P<comment>//[^\n]*|/\*.*?\*/|\#[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<id>[A-Za-z_\x80-\uffff][A-Za-z_0-9\x80-\uffff]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
  | (?P<arrow>->|--) | (?P<punct>[{}\[\]=;,:+])
""", re.VERBOSE | re.DOTALL)


def _tokens(text: str, source: str):
    line, at = 1, 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise GraphError(f"{source}:{line}: unexpected character {text[at]!r}")
        kind, value = match.lastgroup, match.group()
        if kind == "string":
            yield "id", value[1:-1].replace('\\"', '"'), line
        elif kind in ("id", "arrow", "punct"):
            yield kind if kind != "punct" else value, value, line
        line += value.count("\n")
        at = match.end()
    yield "end", "", line


class _Reader:
    def __init__(self, text: str, source: str):
        self.source = source
        self.stream = list(_tokens(text, source))
        self.at = 0

    def peek(self):
        return self.stream[self.at]

    def take(self, kind: str | None = None, what: str = ""):
        token = self.stream[self.at]
        if kind is not None and token[0] != kind:
            raise self.error(f"expected {what or kind}, found {token[1] or 'the end of the file'!r}")
        self.at += 1
        return token

    def error(self, why: str, line: int | None = None) -> GraphError:
        return GraphError(f"{self.source}:{line or self.peek()[2]}: {why}")

    def attr_lists(self) -> dict:
        attrs = {}
        while self.peek()[0] == "[":
            self.take("[")
            while self.peek()[0] != "]":
                key = self.take("id", "an attribute name")[1]
                self.take("=", "'=' after the attribute name")
                attrs[key] = self.take("id", f"a value for attribute {key!r}")[1]
                if self.peek()[0] in (",", ";"):
                    self.take()
            self.take("]")
        return attrs


def parse_dot(text: str, source: str = "<graph>") -> DotGraph:
    """Read one ``digraph``; errors name ``source`` and the line."""
    reader = _Reader(text, source)
    if reader.peek()[0] == "id" and reader.peek()[1].lower() == "strict":
        reader.take()
    keyword = reader.take("id", "'digraph'")
    if keyword[1].lower() != "digraph":
        raise reader.error(f"a SAM graph is a 'digraph', not {keyword[1]!r}", keyword[2])
    name = reader.take()[1] if reader.peek()[0] == "id" else ""
    reader.take("{", "'{'")
    graph = DotGraph(name)
    defaults = {"node": {}, "edge": {}}

    def node(node_id: str, line: int, attrs: dict):
        if node_id not in graph.nodes:
            graph.nodes[node_id] = DotNode(node_id, dict(defaults["node"]), line)
        graph.nodes[node_id].attrs.update(attrs)

    while reader.peek()[0] != "}":
        kind, value, line = reader.take()
        if kind in (";", ","):
            continue
        if kind != "id":
            raise reader.error(f"expected a statement, found {value or 'the end of the file'!r}", line)
        if value.lower() in ("subgraph",) or reader.peek()[0] == "{":
            raise reader.error("subgraphs are not part of SAM's graphs; write the nodes at the top level",
                               line)
        if value.lower() in ("graph", "node", "edge") and reader.peek()[0] == "[":
            attrs = reader.attr_lists()
            (graph.attrs if value.lower() == "graph" else defaults[value.lower()]).update(attrs)
            continue
        if reader.peek()[0] == "=":
            reader.take()
            graph.attrs[value] = reader.take("id", f"a value for graph attribute {value!r}")[1]
            continue
        if reader.peek()[0] in (":", "+"):
            raise reader.error(f"{reader.peek()[1]!r} after {value!r}: ports and string concatenation "
                               "are not part of SAM's graphs")
        chain = [(value, line)]
        while reader.peek()[0] == "arrow":
            arrow = reader.take()
            if arrow[1] != "->":
                raise reader.error("'--' is an undirected edge; a SAM graph's edges are '->'", arrow[2])
            target = reader.take("id", "a node after '->'")
            chain.append((target[1], target[2]))
        attrs = reader.attr_lists()
        if len(chain) == 1:
            node(value, line, attrs)
            continue
        for (src, src_line), (dst, _) in zip(chain, chain[1:], strict=False):
            node(src, src_line, {})
            node(dst, src_line, {})
            graph.edges.append(DotEdge(src, dst, {**defaults["edge"], **attrs}, src_line))
    reader.take("}")
    if reader.peek()[0] != "end":
        raise reader.error("text after the graph's closing '}'")
    return graph
