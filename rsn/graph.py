"""The stream graph: the one program form every RSN front-end lowers to.

A node is either an operation bound to a functional-unit kind, with the micro-ops that unit runs,
or a host endpoint: a named host port and the number of tokens the host sends or expects. An edge
is a stream from one node output port to one or more node input ports (several = multicast) with
the number of tokens it carries. Edge order is program order: place & route emits each tile's
switch micro-ops in that order. See docs/rsn-architecture.md, "From programs to images".

This module checks only structure (names, kinds, port numbers, one stream per port). Whether the
token counts and micro-ops make sense is for :mod:`rsn.checks`, which needs the fabric.
"""

from dataclasses import dataclass, field

from rsn import fu_kinds

__all__ = ["GraphError", "Node", "Edge", "StreamGraph", "ports", "HOST_KINDS"]

HOST_KINDS = ("host_in", "host_out")
_HOST_PORTS = {"host_in": (0, 1), "host_out": (1, 0)}


def ports(kind: str) -> tuple[int, int] | None:
    """(inputs, outputs) of a node kind: a FU kind's own declaration or a host endpoint's; None
    for a name that is neither."""
    if kind in _HOST_PORTS:
        return _HOST_PORTS[kind]
    descriptor = fu_kinds.find_kind(kind)
    return None if descriptor is None else (descriptor.n_in, descriptor.n_out)


class GraphError(ValueError):
    """A stream graph is malformed; the message names the node and port and says how to fix it."""


@dataclass
class Node:
    """An FU operation (``uops``) or a host endpoint (``port``, ``tokens``).

    ``tile`` pins an FU node to a tile, e.g. a mem node whose bank holds preloaded data.
    """
    name: str
    kind: str
    uops: list = field(default_factory=list)
    port: str | None = None
    tokens: int = 0
    tile: tuple[int, int] | None = None

    @property
    def n_in(self) -> int:
        return ports(self.kind)[0]

    @property
    def n_out(self) -> int:
        return ports(self.kind)[1]

    @property
    def is_host(self) -> bool:
        return self.kind in HOST_KINDS


@dataclass
class Edge:
    """A stream of ``tokens`` tokens from ``source`` to every one of ``sinks``: (node, port) pairs.
    ``tokens`` is None for an open stream, whose count depends on the schedule: its route is
    static (never ends), and both its ends must be units whose counts depend on the data."""
    source: tuple[str, int]
    sinks: list[tuple[str, int]]
    tokens: int | None

    def __str__(self) -> str:
        sinks = ", ".join(f"{name}.i{port}" for name, port in self.sinks)
        return f"{self.source[0]}.o{self.source[1]} -> {sinks}"


def _port_ref(ref, what: str) -> tuple[str, int]:
    """``"name"`` (port 0) or ``("name", port)`` as a (name, port) pair."""
    if isinstance(ref, str):
        return ref, 0
    if (isinstance(ref, tuple) and len(ref) == 2 and isinstance(ref[0], str)
            and isinstance(ref[1], int) and not isinstance(ref[1], bool)):
        return ref
    raise GraphError(f"{what} {ref!r} is not a node name or a (node name, port number) pair")


def _tile_ref(tile, name: str):
    if tile is None:
        return None
    if (not isinstance(tile, tuple | list) or len(tile) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in tile)):
        raise GraphError(f"node {name!r}: tile {tile!r} is not a (row, col) pair")
    return tuple(tile)


@dataclass
class StreamGraph:
    """Nodes by name (in insertion order) and edges in program order."""
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def add_node(self, name: str, kind: str, uops=(), *, port: str | None = None, tokens: int = 0,
                 tile=None) -> Node:
        """Add an FU node (``uops``, optional ``tile`` pin) or a host node (``port``, ``tokens``)."""
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise GraphError(f"node name {name!r} must be a non-empty string without spaces")
        if name in self.nodes:
            raise GraphError(f"node {name!r} is added twice; give each operation its own name")
        if ports(kind) is None:
            kinds = fu_kinds.kind_names() + HOST_KINDS
            raise GraphError(f"node {name!r}: unknown kind {kind!r}; kinds are {', '.join(kinds)}")
        uops = list(uops)
        if not all(isinstance(uop, dict) for uop in uops):
            raise GraphError(f"node {name!r}: micro-ops must be dicts of {kind} fields")
        tile = _tile_ref(tile, name)
        if kind in HOST_KINDS:
            if not isinstance(port, str):
                raise GraphError(f"node {name!r}: a {kind} node needs port=<host port name>")
            if uops or tile is not None:
                raise GraphError(f"node {name!r}: a {kind} node has no micro-ops and no tile pin; "
                                 f"its tile is its host port's")
            if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
                raise GraphError(f"node {name!r}: tokens={tokens!r}; say how many tokens the host "
                                 f"{'sends' if kind == 'host_in' else 'expects'} (an integer >= 1)")
        elif port is not None or tokens:
            raise GraphError(f"node {name!r}: port= and tokens= are for host nodes; a {kind} node's "
                             f"token counts follow from its micro-ops")
        node = Node(name, kind, uops, port, tokens, tile)
        self.nodes[name] = node
        return node

    def add_host_in(self, name: str, port: str, tokens: int) -> Node:
        return self.add_node(name, "host_in", port=port, tokens=tokens)

    def add_host_out(self, name: str, port: str, tokens: int) -> Node:
        return self.add_node(name, "host_out", port=port, tokens=tokens)

    def node(self, name: str) -> Node:
        try:
            return self.nodes[name]
        except KeyError:
            known = ", ".join(self.nodes) or "none"
            raise GraphError(f"no node named {name!r} (nodes: {known}); add it with add_node first") \
                from None

    def connect(self, source, sinks, tokens: int | None) -> Edge:
        """Add a stream of ``tokens`` tokens from ``source`` to ``sinks`` (one ref or a list);
        ``tokens=None`` makes an open stream (see :class:`Edge`).

        A ref is a node name (port 0) or a (name, port) pair. Each output port drives one stream
        (fan out with several sinks instead) and each input port reads one stream.
        """
        source = _port_ref(source, "source")
        sinks = [_port_ref(sink, "sink") for sink in
                 ([sinks] if isinstance(sinks, str | tuple) else list(sinks))]
        if not sinks:
            raise GraphError(f"stream from {source[0]}.o{source[1]} has no sinks")
        self._check_port(source, output=True)
        for sink in sinks:
            self._check_port(sink, output=False)
        if len(set(sinks)) != len(sinks):
            raise GraphError(f"stream from {source[0]}.o{source[1]} lists a sink twice: {sinks}")
        if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1):
            raise GraphError(f"stream from {source[0]}.o{source[1]}: tokens={tokens!r} must be an "
                             f"integer >= 1, or None for an open stream")
        taken = self.edge_from(*source)
        if taken is not None:
            raise GraphError(f"output {source[0]}.o{source[1]} already drives {taken}; add the new "
                             f"sinks to that stream (multicast) instead of a second stream")
        for sink in sinks:
            feeder = self.edge_into(*sink)
            if feeder is not None:
                raise GraphError(f"input {sink[0]}.i{sink[1]} is already fed by {feeder}; an input "
                                 f"port reads exactly one stream")
        edge = Edge(source, sinks, tokens)
        self.edges.append(edge)
        return edge

    def _check_port(self, ref: tuple[str, int], output: bool):
        name, port = ref
        node = self.node(name)
        count = node.n_out if output else node.n_in
        what = "output" if output else "input"
        if not 0 <= port < count:
            allowed = f"{what}s 0..{count - 1}" if count else f"no {what}s"
            raise GraphError(f"node {name!r} ({node.kind}) has no {what} port {port}; it has {allowed}")

    def edge_from(self, name: str, port: int = 0) -> Edge | None:
        """The stream that output ``port`` of ``name`` drives, if any."""
        return next((edge for edge in self.edges if edge.source == (name, port)), None)

    def edge_into(self, name: str, port: int = 0) -> Edge | None:
        """The stream that input ``port`` of ``name`` reads, if any."""
        return next((edge for edge in self.edges if (name, port) in edge.sinks), None)

    def fu_nodes(self) -> list[Node]:
        return [node for node in self.nodes.values() if not node.is_host]

    def host_nodes(self) -> list[Node]:
        return [node for node in self.nodes.values() if node.is_host]
