"""Connected components of an undirected graph (every edge stored both ways) by min-label
propagation: ``label`` starts as each vertex's own number and ends as the smallest number in its
component.

* ``ordered``: sweeps over the vertices, each taking the least label among itself and its
  neighbours (in place, so a sweep sees the labels lowered earlier in it), until a sweep changes
  nothing.
* ``ripple``: ``spread(v, l)`` offers label ``l`` to each neighbour under an atomic on that
  neighbour; a neighbour whose label drops stores it and pushes itself with it. The body starts
  every vertex with its own label. Labels only fall, and each fall is spread, so at the end every
  edge joins two equal labels.

The check compares the partition, not the names: two vertices must share a label exactly when
networkx's ``connected_components`` puts them in one component.
"""

from ripple_core.lang.api import Array, atomic, ind, kernel, push

from . import Workload
from .graphs import random_graph

__all__ = ["WORKLOAD", "ordered", "ripple"]

DEGREE = 2          # per direction: about 4 edge ends per vertex once the reverses are added


@kernel
def ordered(row: Array, col: Array, label: Array, n: int):
    changed = 1
    while changed != 0:
        changed = 0
        for v in range(n):
            own = label[v]
            least = own
            for e in range(row[v], row[v + 1]):
                other = label[col[e]]
                least = other if other < least else least
            if least < own:
                label[v] = least
                changed = 1


@kernel
def ripple(row: Array, col: Array, label: Array, n: int):
    @ind
    async def spread(v, mine):
        for e in range(row[v], row[v + 1]):
            d = col[e]
            with atomic(d):
                if mine < label[d]:
                    label[d] = mine
                    push(spread, d, mine)
    for v in range(n):
        push(spread, v, v)


def case(version: str, size: int, kind: str, seed: int) -> dict:
    graph = random_graph(size, kind, seed, degree=DEGREE, undirected=True)
    return {"args": {"n": size}, "mem": {"row": graph.row, "col": graph.col, "label": list(range(size))}}


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import networkx

    row, col = case["mem"]["row"], case["mem"]["col"]
    vertices = len(row) - 1
    graph = networkx.Graph()
    graph.add_nodes_from(range(vertices))
    graph.add_edges_from((v, col[e]) for v in range(vertices) for e in range(row[v], row[v + 1]))
    label = memory.get("label")
    if label is None:
        return ["no array 'label' in the final memory"]
    if len(label) != vertices:
        return [f"label has {len(label)} words, expected {vertices}"]
    problems = []
    owner = {}                          # label -> the component (its least vertex) that has it
    for component in sorted(networkx.connected_components(graph), key=min):
        first = min(component)
        names = {label[v] for v in component}
        if len(names) > 1:
            odd = next(v for v in sorted(component) if label[v] != label[first])
            problems.append(f"component of vertex {first} ({len(component)} vertices) has {len(names)} "
                            f"labels: label[{first}] = {label[first]}, label[{odd}] = {label[odd]}")
        for name in names:
            if name in owner and owner[name] != first:
                problems.append(f"label {name} is shared by the components of vertices "
                                f"{owner[name]} and {first}")
            owner.setdefault(name, first)
    return problems


WORKLOAD = Workload(name="cc", ordered=ordered, ripple=ripple, case=case, check=check,
                    small=32, sizes=(256, 1024, 4096))
