"""Which switch outputs are registers under ``register_every`` (rsn/hops.py), and the structural
promises that make pass-through outputs safe: no loop of them anywhere in a fabric's netlist,
whatever the routes, and no combinational chain leaving a K x K block or longer than a shortest
route across one."""

import dataclasses
import itertools

import pytest

from rsn.fabric_spec import DIRECTIONS, parse_fabric
from rsn.hops import link_weight, output_latency, output_registered, pass_through_outputs
from rsn.place import tile_distances

N, E, S, W = range(4)
FU = 4


def grid(rows: int, cols: int, every: int, host_ports=()):
    return parse_fabric({"rows": rows, "cols": cols, "tiles": [" ".join(["alu"] * cols)] * rows,
                         "register_every": every, "host_ports": list(host_ports)}, "test")


def test_every_output_is_a_register_by_default():
    spec = grid(3, 3, 1)
    assert all(output_registered(spec, tile, j) for tile in spec.all_tiles() for j in range(5))
    assert all(link_weight(spec, tile, side) == 1 for tile in spec.all_tiles() for side in range(4))


def test_the_rule_on_a_four_by_four_grid_in_blocks_of_two():
    """Worked out by hand from the rule: westward, northward and boundary outputs, and outputs
    entering a block (east into column 2, south into row 2), are registers."""
    spec = grid(4, 4, 2)
    assert pass_through_outputs(spec, (0, 0), 5) == {E, S, FU}
    assert pass_through_outputs(spec, (0, 1), 5) == {S, FU}           # E enters column 2
    assert pass_through_outputs(spec, (1, 1), 5) == {FU}              # E, S enter column / row 2
    assert pass_through_outputs(spec, (2, 2), 5) == {E, S, FU}
    assert pass_through_outputs(spec, (3, 2), 5) == {E, FU}           # S is a boundary, N northward
    assert pass_through_outputs(spec, (3, 3), 5) == {FU}
    assert (output_latency(spec, (0, 0), E), output_latency(spec, (0, 1), E)) == (0, 1)
    assert (link_weight(spec, (0, 0), E), link_weight(spec, (0, 1), E)) == (1, 2)


def _pass_through_graph(spec):
    """(tile, output) -> the pass-through outputs a token leaving through it can take next
    within the same cycle: the neighbour's pass-through outputs other than the U-turn."""
    graph = {}
    for tile in spec.all_tiles():
        for j in pass_through_outputs(spec, tile, 4):
            neighbour = spec.neighbour(tile, DIRECTIONS[j])
            arriving = (j + 2) % 4      # the neighbour's input on the side facing ``tile``
            graph[tile, j] = [(neighbour, k) for k in pass_through_outputs(spec, neighbour, 4)
                              if k != arriving]
    return graph


def _longest_chain(graph) -> int:
    """Outputs on the longest chain of the pass-through graph; raises on a cycle."""
    depth, visiting = {}, set()

    def walk(node):
        if node in depth:
            return depth[node]
        assert node not in visiting, f"a loop of pass-through outputs through {node}"
        visiting.add(node)
        depth[node] = 1 + max((walk(after) for after in graph[node]), default=0)
        visiting.discard(node)
        return depth[node]
    return max((walk(node) for node in graph), default=0)


@pytest.mark.parametrize("rows,cols,every", [(3, 3, 2), (4, 4, 2), (5, 6, 2), (5, 6, 3), (6, 6, 4),
                                              (5, 6, 16), (8, 8, 3)])
def test_no_loop_and_chains_stay_in_a_block(rows, cols, every):
    """The longest chain is a shortest route across a whole block, corner to corner: static
    timing sees no path longer than one a route can take."""
    spec = grid(rows, cols, every)
    graph = _pass_through_graph(spec)
    longest = _longest_chain(graph)
    assert longest == (min(every, rows) - 1) + (min(every, cols) - 1)
    for (tile, j), after in graph.items():
        for neighbour, _ in after + [(spec.neighbour(tile, DIRECTIONS[j]), None)]:
            assert (tile[0] // every, tile[1] // every) == (neighbour[0] // every, neighbour[1] // every)


def test_host_port_outputs_stay_registers():
    spec = grid(2, 2, 4, [{"name": "out0", "tile": [1, 1], "side": "E", "direction": "out"}])
    assert output_registered(spec, (1, 1), E) and output_registered(spec, (1, 1), S)


def test_placement_distance_counts_registers_twice():
    spec = grid(4, 4, 2)
    distances = tile_distances(spec)
    assert distances[(0, 0), (0, 1)] == 1            # east, inside the block
    assert distances[(0, 1), (0, 0)] == 2            # west: a register
    assert distances[(0, 0), (1, 1)] == 2
    assert distances[(0, 0), (3, 3)] == 8            # two block crossings each way
    assert distances[(3, 3), (0, 0)] == 12           # west and north: a register every hop
    plain = tile_distances(dataclasses.replace(spec, register_every=1))
    assert all(plain[a, b] == abs(a[0] - b[0]) + abs(a[1] - b[1])
               for a, b in itertools.product(spec.all_tiles(), repeat=2))


@pytest.mark.parametrize("size,every", [(2, 2), (3, 3)])
def test_fabric_netlist_has_no_combinational_cycle(size, every):
    """Amaranth's netlist builder refuses a combinational cycle: a whole fabric whose every
    neighbour link could pass through converts (with a U-turn input left in a pass-through
    output's mux, it did not)."""
    from amaranth.back import rtlil

    from rsn.fabric import Fabric
    rtlil.convert(Fabric(grid(size, size, every)), name="top")
