"""The BFS benchmark's two programs on small random graphs: both reach exactly the reference set;
Ripple's self-push needs its spill queue."""

import pytest

from ripple_core.interp import DeadlockError, run
from ripple_core.programs import ordered_bfs, random_csr, reachable, ripple_bfs
from rivulet.sim.seeds import seeds_for


def test_both_bfs_programs_mark_exactly_the_reachable_vertices():
    for seed in seeds_for("ripple-bfs"):
        print(f"seed {seed}")
        row, col = random_csr(48, 4, seed)
        visited = [1] + [0] * 47
        expected = reachable(row, col)
        ordered = run(ordered_bfs(), memory={"row": row, "col": col, "visited": visited, "queue": [0] * 49})
        ripple = run(ripple_bfs(), memory={"row": row, "col": col, "visited": visited})
        assert ordered.arrays["visited"] == expected and ordered.drained
        assert ripple.arrays["visited"] == expected and ripple.drained
        assert ripple.static_instructions < ordered.static_instructions


def test_ripple_bfs_without_spill_deadlocks_on_its_queue():
    row, col = random_csr(256, 8, 7)
    with pytest.raises(DeadlockError, match="queue 'visit.q' \\(depth 2\\) full"):
        run(ripple_bfs(spill=False, depth=2), memory={"row": row, "col": col, "visited": [1] + [0] * 255})
