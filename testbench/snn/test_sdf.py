"""SDF throughput: hand-checked graphs, and the MCM method against self-timed simulation."""

import random
from fractions import Fraction

import pytest

from rivulet.sim.seeds import seeds_for
from snn.sdf import Deadlock, SdfGraph, greedy_binding, throughput_mcm, throughput_selftimed


def both(graph, binding=None):
    mcm, simulated = throughput_mcm(graph, binding), throughput_selftimed(graph, binding)
    assert mcm == simulated
    return mcm


def chain(n=7, time=16):
    """n actors in a line, one token per self-loop (a tile does not overlap its own firings)."""
    g = SdfGraph()
    for i in range(n):
        g.add_actor(f"a{i}", time)
        g.add_edge(f"a{i}", f"a{i}", tokens=1)
    for i in range(n - 1):
        g.add_edge(f"a{i}", f"a{i + 1}")
    return g


def test_chain_unbound_is_one_per_sixteen():
    """Every cycle is a self-loop of 16 time units over 1 token: MCM 16, throughput 1/16."""
    assert both(chain()) == Fraction(1, 16)


def test_chain_on_two_tiles_is_one_per_sixty_four():
    """Bound as {a0..a3} -> tile0 and {a4..a6} -> tile1, each in chain order.

    The static order adds a0 -> a1 -> a2 -> a3 (0 tokens, as the chain already has) and
    a3 -> a0 with 1 token: a cycle of 4 x 16 = 64 time units over 1 token. Tile 1's order cycle
    is 3 x 16 = 48 over 1 token. No path leads from tile 1 back to tile 0, so no cycle crosses
    the tiles. MCM = max(64, 48, 16) = 64 and the throughput is 1/64: tile 0 starts a0 at 0,
    16 x k; a3 ends at 64 and a0 restarts then; tile 1 runs a4..a6 from 64 to 112, idles until
    128, and so on with period 64. (The bound the notes derive for the tutorial's 2-tile binding.)
    """
    binding = {"tile0": ["a0", "a1", "a2", "a3"], "tile1": ["a4", "a5", "a6"]}
    assert both(chain(), binding) == Fraction(1, 64)


def test_chain_on_one_tile_serialises_everything():
    """One tile: 7 x 16 = 112 per iteration."""
    assert both(chain(), {"t": [f"a{i}" for i in range(7)]}) == Fraction(1, 112)


def test_cycle_with_two_tokens():
    """A(3) -> B(5) -> C(2) -> A with 2 tokens on C -> A and no self-loops: one cycle of 10 time
    units over 2 tokens, so MCM 5 (two iterations overlap fully: both As at 0..3, Bs 3..8, Cs 8..10)."""
    g = SdfGraph()
    for name, time in (("A", 3), ("B", 5), ("C", 2)):
        g.add_actor(name, time)
    g.add_edge("A", "B")
    g.add_edge("B", "C")
    g.add_edge("C", "A", tokens=2)
    assert both(g) == Fraction(1, 5)


def multirate(back_tokens):
    """A(2) produces 2 per firing, B(3) consumes 1; B -> A returns 1 per firing, A consumes 2."""
    g = SdfGraph()
    g.add_actor("A", 2)
    g.add_actor("B", 3)
    g.add_edge("A", "A", tokens=1)
    g.add_edge("B", "B", tokens=1)
    g.add_edge("A", "B", produce=2, consume=1)
    g.add_edge("B", "A", produce=1, consume=2, tokens=back_tokens)
    return g


def test_multirate_repetition_vector():
    assert multirate(2).repetition_vector() == {"A": 1, "B": 2}


def test_multirate_throughput():
    """One iteration is A once and B twice.

    With 2 tokens on B -> A, A of iteration n waits for both Bs of iteration n-1: the cycle
    A -> B0 -> B1 -> A holds 1 token and 2 + 3 + 3 = 8 time units, so throughput 1/8.
    With 4 tokens A runs an iteration ahead; that cycle holds 2 tokens (8/2 = 4) and B's own
    serialisation, B0 -> B1 -> B0 with 1 token, is 6: throughput 1/6.
    """
    assert both(multirate(2)) == Fraction(1, 8)
    assert both(multirate(4)) == Fraction(1, 6)


def test_deadlocks_are_reported_by_both_methods():
    g = SdfGraph()
    g.add_actor("A", 1)
    g.add_actor("B", 1)
    g.add_edge("A", "B")
    g.add_edge("B", "A")
    with pytest.raises(Deadlock):
        throughput_mcm(g)
    with pytest.raises(Deadlock):
        throughput_selftimed(g)
    # A static order against a token-free dependency deadlocks too.
    for method in (throughput_mcm, throughput_selftimed):
        with pytest.raises(Deadlock):
            method(chain(3), {"t": ["a1", "a0", "a2"]})


def test_bad_graphs_and_bindings_are_named():
    g = SdfGraph()
    g.add_actor("A", 1)
    g.add_actor("B", 1)
    g.add_edge("A", "B", produce=2, consume=1)
    g.add_edge("B", "A", produce=1, consume=1, tokens=1)
    with pytest.raises(ValueError, match="inconsistent rates on edge 'B' -> 'A'"):
        g.repetition_vector()
    with pytest.raises(ValueError, match="execution time 0"):
        SdfGraph().add_actor("Z", 0)
    with pytest.raises(ValueError, match="fires 'a0' 2 times"):
        throughput_mcm(chain(2), {"t": ["a0", "a0", "a1"]})
    with pytest.raises(ValueError, match="bound to tiles"):
        throughput_mcm(chain(2), {"t": ["a0"], "u": ["a0", "a1"]})


def random_graph(rng):
    n = rng.randint(1, 5)
    q = [rng.randint(1, 3) for _ in range(n)]
    g = SdfGraph()
    for i in range(n):
        g.add_actor(f"x{i}", rng.randint(1, 9))

    def connect(u, v):
        k = rng.randint(1, 2)
        step = __import__("math").gcd(q[u], q[v])
        produce, consume = q[v] // step * k, q[u] // step * k
        g.add_edge(f"x{u}", f"x{v}", produce, consume, rng.randint(0, produce * q[u]))

    order = list(range(n))
    rng.shuffle(order)
    for u, v in zip(order, order[1:] + order[:1], strict=True):       # strongly connected
        connect(u, v)
    for _ in range(rng.randint(0, n)):
        connect(rng.randrange(n), rng.randrange(n))
    return g


def random_binding(rng, g):
    q = g.repetition_vector()
    actors = [a for a in g.times if rng.random() < 0.6]
    binding = {}
    for a in actors:
        binding.setdefault(f"t{rng.randint(0, 1)}", []).extend([a] * q[a])
    for order in binding.values():
        rng.shuffle(order)
    return binding


@pytest.mark.parametrize("seed", seeds_for("snn-sdf-random", 4))
def test_mcm_equals_selftimed_on_random_graphs(seed):
    print(f"seed {seed}")
    rng = random.Random(seed)
    live = drawn = 0
    # Draw until 10 graphs are live (a seed may draw many deadlocked ones); every deadlocked one
    # must deadlock under both analyses too.
    while live < 10:
        drawn += 1
        assert drawn <= 400, f"only {live} live graphs in {drawn} draws: the generator is broken"
        g = random_graph(rng)
        binding = random_binding(rng, g) if rng.random() < 0.5 else None
        try:
            mcm = throughput_mcm(g, binding)
        except Deadlock:
            with pytest.raises(Deadlock):
                throughput_selftimed(g, binding)
            continue
        assert throughput_selftimed(g, binding) == mcm, (g, binding)
        live += 1


def test_greedy_binding_is_valid_and_balanced():
    g = chain()
    binding = greedy_binding(g, 2)
    assert sorted(a for order in binding.values() for a in order) == sorted(g.times)
    assert sorted(len(order) for order in binding.values()) == [3, 4]
    assert both(g, binding) == Fraction(1, 64)
