"""Ripple BFS on pe tiles: an ``ind async visit(v)`` task that pushes itself onto a spill queue,
with an atomic test-and-set of ``visited`` (ripple_core/programs.py, docs/ripple.md).

The graph is a random one of 16 vertices, mean out-degree 3. The reference is the set of
vertices reachable from vertex 0, computed in Python. ``rivulet run`` lowers the program onto the
fabric's pe tiles; the fabric reads ``visited`` back from its PE's bank after the run, and Ripple's
checker (``ripple_core/check.py``) checks it against that reference.

Run it: ``rivulet run examples/ripple_bfs.py --fabric examples/fabrics/ripple.toml --sim both``
(``FABRIC`` below is the default, so ``--fabric`` may be left out); ``-D vertices=24`` draws a
larger graph.
"""

from ripple_core.programs import bfs_case, random_csr, ripple_bfs
from rivulet.frontends.ripple import RippleProgram

FABRIC = "fabrics/ripple.toml"  # relative to this file: the fabric when --fabric names none


def program(vertices=16, degree=3, seed=5) -> RippleProgram:
    """Ripple's BFS on a random graph of ``vertices`` vertices and mean out-degree ``degree``.
    It needs nothing of the fabric: the front-end lowers it onto the one the run uses."""
    row, col = random_csr(vertices, degree, seed)
    return RippleProgram(ripple_bfs(depth=2), bfs_case(row, col, ordered=False),
                         name=f"ripple_bfs_{vertices}")
