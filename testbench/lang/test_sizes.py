"""How small the compiled graphs are: one memory token where tok and acc provably coincide, a
completion token reused as a constant output, and the examples within bounds of programs.py's
hand-built graphs. Every shape here is also run against the reference."""

import random

from ripple_core import programs
from ripple_core.lang import Array, compile_kernel, examples, ind, kernel, out, push
from rivulet.sim.seeds import seeds_for

from .check import agree


def size(graph):
    return len([node for node in graph.nodes.values() if node.op != "SINK"])


def count(graph, op):
    return len([node for node in graph.nodes.values() if node.op == op])


# Static sizes (operators other than SINKs): compiled bound, and the hand-built graph's size.
BOUNDS = {"ordered_bfs": (42, programs.ordered_bfs()), "ripple_bfs": (16, programs.ripple_bfs()),
          "dmv_ordered": (15, programs.dmv(ripple=False)), "dmv_ripple": (17, programs.dmv(ripple=True)),
          "tree_walk": (11, programs.tree_walk(7)), "serial_walk": (7, programs.serial_walk(7)),
          "histogram": (7, programs.histogram())}


def test_examples_stay_within_their_size_bounds():
    for name, (bound, hand) in BOUNDS.items():
        graph = compile_kernel(getattr(examples, name))
        assert size(graph) <= bound, (name, size(graph))
        assert size(graph) <= size(hand) + 10, name      # only ordered BFS is not at the hand size
    for name in ("tree_walk", "serial_walk", "histogram", "ripple_bfs"):
        assert size(compile_kernel(getattr(examples, name))) == size(BOUNDS[name][1]), name


def test_ordered_bfs_threads_one_token_per_array():
    graph = compile_kernel(examples.ordered_bfs)
    # outer loop: head, tail and one token each for visited and queue; inner loop: tail and the two
    # tokens; no more, since tok and acc coincide at every loop boundary of this kernel
    assert count(graph, "CARRY") == 4 + 3
    assert count(graph, "MERGE") == 3          # tail and one token per array after the inner if


@kernel
def loads_only(A: Array, n: int):
    A[0] = n
    s = 0
    for i in range(n):
        s += A[i]
    return s


@kernel
def stores_after_load(A: Array, n: int):
    k = A[0]
    for i in range(k, n):
        A[i] = i
    return A[n - 1]


@kernel
def stores_in_while(A: Array, n: int):
    k = A[0]
    i = 1
    while i < k:
        A[i] = i + n
        i += 1
    return A[1]


@kernel
def mark_new(A: Array, B: Array, n: int):
    c = 0
    for i in range(n):
        k = B[i]
        if A[k] == 0:
            A[k] = 1
            c += 1
    return c


@kernel
def store_then_load(A: Array, n: int):
    s = 0
    for i in range(n):
        A[i + 1] = i
        s += A[i]
        out("partial", s)
    t = A[0]            # after the loop a load needs tok and a store acc, so both stay live
    A[n + 1] = n
    return s + t


@kernel
def pushes_in_a_rebuilt_loop(A: Array, n: int):
    @ind
    async def note(v):
        out("noted", v)
    s = 0
    for i in range(n):
        A[i + 1] = i
        s += A[i]
        push(note, s)
    t = A[0]
    A[n + 1] = n
    out("sum", s + t)


@kernel
def marks_then_reports(seen: Array, n: int):
    for i in range(n):
        seen[i] = 1
        out("done", 1)
        seen[i + n] = 2


def test_a_loop_that_only_loads_carries_no_token():
    graph = compile_kernel(loads_only)
    assert count(graph, "CARRY") == 1          # the sum only


def test_a_loop_that_only_stores_carries_one_token():
    assert count(compile_kernel(stores_after_load), "CARRY") == 1
    assert count(compile_kernel(stores_in_while), "CARRY") == 2       # i and the token


def test_a_load_then_guarded_store_carries_one_token():
    graph = compile_kernel(mark_new)
    assert count(graph, "CARRY") == 2 and count(graph, "MERGE") == 2  # c and A's token


def test_a_loop_ending_in_a_load_keeps_tok_and_acc_apart():
    # the body's last access loads, so tok (the store) and acc (also that load) differ on the
    # back edge: the loop is rebuilt with both, plus the sum
    assert count(compile_kernel(store_then_load), "CARRY") == 3
    graph = compile_kernel(pushes_in_a_rebuilt_loop)
    assert count(graph, "CARRY") == 3 and count(graph, "ARB") == 0    # one push site, not two


def test_constant_one_output_after_a_store_is_its_completion_token():
    graph = compile_kernel(marks_then_reports)
    sink = graph.nodes["done"]
    assert graph.nodes[sink.inputs[0].source].op == "STORE"


def test_the_small_shapes_agree_with_the_reference():
    for seed in seeds_for("lang-sizes"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(1, 8)
        agree(loads_only, {"n": n}, {"A": [rng.randint(-9, 9) for _ in range(n + 1)]})
        agree(stores_after_load, {"n": n}, {"A": [rng.randint(0, n)] + [7] * n})
        agree(stores_in_while, {"n": n}, {"A": [rng.randint(0, n)] + [7] * n})
        agree(mark_new, {"n": n}, {"A": [rng.randint(0, 1) for _ in range(4)],
                                   "B": [rng.randrange(4) for _ in range(n)]})
        agree(store_then_load, {"n": n}, {"A": [rng.randint(-9, 9) for _ in range(n + 2)]})
        agree(pushes_in_a_rebuilt_loop, {"n": n}, {"A": [rng.randint(-9, 9) for _ in range(n + 2)]})
        agree(marks_then_reports, {"n": n}, {"seen": [0] * (2 * n)})
