"""Ripple BFS on pe tiles: an ``ind async visit(v)`` task that pushes itself onto a spill queue,
with an atomic test-and-set of ``visited`` (ripple_core/programs.py, docs/ripple.md).

The graph is a random one of 16 vertices, mean out-degree 3. The reference is the set of
vertices reachable from vertex 0, computed in Python. The fabric reads ``visited`` back from
its PE's bank after the run, and ``rivulet run`` checks it against that reference.

Run it: ``rivulet run examples/ripple_bfs.py --fabric examples/fabrics/ripple.toml --sim both``.
"""

from ripple_core.lower import lower_graph
from ripple_core.programs import bfs_case, random_csr, ripple_bfs
from rsn.fabric_spec import load_fabric

FABRIC = __file__.rsplit("/", 1)[0] + "/fabrics/ripple.toml"


def program(vertices=16, degree=3, seed=5, fabric=FABRIC):
    spec = load_fabric(fabric)
    row, col = random_csr(vertices, degree, seed)
    lowering = lower_graph(ripple_bfs(depth=2), bfs_case(row, col, ordered=False), spec,
                           name=f"ripple_bfs_{vertices}")
    return lowering.program
