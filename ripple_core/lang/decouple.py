"""Spill queues in front of everything that waits for a lock, when a kernel has two or more
ACQUIRE sites.

Overlapping invocations go through every operator in order, so with one ACQUIRE site the lock's
holder always has its tokens ahead of the invocations that wait. With two sites, a later
invocation may hold the lock an earlier one waits for at the other site. The holder's RELEASE
then needs tokens from producers that also feed operators stalled behind the waiting block (its
body, a MERGE after it waiting for its result, a join of its done token): once a bounded slot of
such an operator is full, the producer stops, the holder never releases, and the waiter never
acquires. The random kernels found this three ways (docs/ripple-language.md).

The rule: an operator is *gated* when it is reachable from an ACQUIRE's grant within one
invocation (not through a TASK, whose outputs start new invocations). Every slot of a gated
operator fed by an operator that is not gated goes through a spill queue, which never
back-pressures, so no ungated producer ever waits for a gated consumer. An ACQUIRE counts as
gated too, so its address is queued as well.
"""

from ripple_core.graph import Graph, Input, op_ports

__all__ = ["decouple_locks"]

_BOUNDARY = ("TASK",)          # a task's dispatch starts new invocations: gating stops there


def _gated(graph: Graph) -> set[str]:
    consumers = graph.consumers()
    gated, stack = set(), [name for name, node in graph.nodes.items() if node.op == "ACQUIRE"]
    while stack:
        name = stack.pop()
        if name in gated:
            continue
        gated.add(name)
        if graph.nodes[name].op in _BOUNDARY:
            continue
        _, outputs = op_ports(graph.nodes[name])
        for port in range(outputs):
            for target, _slot in consumers.get((name, port), []):
                if graph.nodes[target].op not in _BOUNDARY:
                    stack.append(target)
    return gated


def _is_spill_queue(node) -> bool:
    return node.op == "QUEUE" and all(source.spill for source in node.inputs)


def decouple_locks(graph: Graph, depth: int) -> Graph:
    """Insert the spill queues of the module docstring (in place) when ``graph`` has two or more
    ACQUIRE nodes; a graph with fewer is returned unchanged."""
    if sum(node.op == "ACQUIRE" for node in graph.nodes.values()) < 2:
        return graph
    gated = _gated(graph)
    queues = {}
    for name in list(graph.nodes):
        if name not in gated:
            continue
        node = graph.nodes[name]
        for slot, source in enumerate(node.inputs):
            if source.kind != "edge" or source.hold or source.source in gated:
                continue
            if _is_spill_queue(graph.nodes[source.source]):
                continue
            key = (source.source, source.port)
            if key not in queues:
                queue = f"{source.source}.o{source.port}.lockq"
                graph.add(queue, "QUEUE", [Input("edge", source=source.source, port=source.port, depth=depth,
                                                 spill=True)], width=1)
                queues[key] = queue
            node.inputs[slot] = Input("edge", source=queues[key], port=0, depth=source.depth,
                                      spill=source.spill)
    return graph
