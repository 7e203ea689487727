"""Which switch outputs are registers: the fabric's ``register_every`` (docs/rsn-architecture.md).

Every token on a route crosses one switch per tile. With ``register_every = 1`` (the default)
every switch output is a two-slot skid buffer, so a hop costs one cycle and every path between
tiles starts and ends at a flip-flop. With ``register_every = K`` >= 2 most outputs *pass
through* instead: a two-slot queue whose output offers the token in the cycle it arrives while
the queue is empty (:class:`hw.token_queue.TokenQueue` in ``bypass`` mode), so a token crosses
several tiles in one cycle. Its ``ready`` is still a register, so only valid and payload run
combinationally, and only forwards.

Which outputs stay registers is fixed by the grid position alone, so that static timing sees
exactly the paths the hardware has, and so that no loop of pass-through outputs exists in the
netlist whatever the routes:

* every westward and every northward output is a register, so a combinational path only moves
  east and south: it can never close a loop, and it is no longer than a shortest route;
* the grid is cut into K x K blocks; an output that leaves a block (east into a column that is a
  multiple of K, south into a row that is) is a register. A combinational path therefore stays
  inside one block: at most 2 (K - 1) hops, whatever the routes. (The first rule let northward
  outputs pass through inside a block too; a path could then snake down, east, up, east, down
  through all K * K tiles, 8 hops at K = 3, which static timing must assume although no route
  takes one: docs/ripple.md, "Pass-through switch outputs");
* outputs to host ports are registers (the host side is driven from flip-flops as before), and
  outputs into the tile's FU pass through: the FU input queue behind them holds the token.

The price of a pass-through hop is the combinational path it adds: from the last register a
token left (an FU output or a registered switch output) through the pass-through switches on its
way east and south within the block to the next register, which is the FU input queue, or with
``queue_mode = "bypass"`` the FU's own output register. ``bench/results/register_every.md``
measures both sides.
"""

from .fabric_spec import DIRECTIONS
from .switch import Switch

__all__ = ["output_registered", "pass_through_outputs", "output_latency", "link_weight",
           "PASS_THROUGH_LATENCY", "REGISTERED_LATENCY"]

REGISTERED_LATENCY = Switch.LATENCY         # a skid buffer: taken in cycle c, on offer in c + 1
PASS_THROUGH_LATENCY = Switch.PASS_LATENCY  # a bypassing queue: on offer in the cycle it arrives


def output_registered(spec, tile, output: int) -> bool:
    """Is ``tile``'s switch output ``output`` (0-3 the sides N, E, S, W; 4 on the FU's inputs)
    a register under the fabric's ``register_every``?"""
    every = spec.register_every
    if every == 1:
        return True
    if output >= len(DIRECTIONS):
        return False
    side = DIRECTIONS[output]
    if spec.neighbour(tile, side) is None:
        return True
    row, col = tile
    if side in ("W", "N"):
        return True
    if side == "E":
        return (col + 1) % every == 0
    return (row + 1) % every == 0   # S


def pass_through_outputs(spec, tile, n_outputs: int) -> frozenset:
    """The outputs of ``tile``'s switch that pass through (all others are registers)."""
    return frozenset(j for j in range(n_outputs) if not output_registered(spec, tile, j))


def output_latency(spec, tile, output: int) -> int:
    """Cycles from a token taken by the output to its offer, while the output holds nothing."""
    return REGISTERED_LATENCY if output_registered(spec, tile, output) else PASS_THROUGH_LATENCY


def link_weight(spec, tile, side: int) -> int:
    """What the placer and the router count for one link: 1, plus 1 for a register on a fabric
    where links also pass through, so that among paths of a length they prefer the one with fewer
    cycles (a loop-carried token pays each register on every iteration). Every link weighs 1 with
    ``register_every = 1``, which leaves placements and routes as they were."""
    return 1 + (spec.register_every > 1 and output_registered(spec, tile, side))
