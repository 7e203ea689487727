"""Each lowering rule on a small kernel, checked against the reference on random inputs."""

import random

from ripple_core.lang import Array, compile_kernel, inline, kernel, out
from rivulet.sim.seeds import seeds_for

from .check import agree


def words(rng, n, lo=-50, hi=50):
    return [rng.randint(lo, hi) for _ in range(n)]


@kernel
def arithmetic(a: int, b: int):
    x = (a + b) * (a - b)
    y = (a & 255) | (b ^ 7)
    z = (a << 3) >> 2
    w = -a + ~b
    c = (a < b) + (a <= b) + (a > b) + (a >= b) + (a == b) + (a != b)
    d = (a < b and b < 100) + (a > b or not (b > 0))
    out("v", x + y + z + w + c * 100 + d * 1000 + (3 * 4 + 1))
    return x ^ 0x7FFFFFFF * 3


def test_arithmetic_wraps_like_c():
    for seed in seeds_for("lang-arith"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        for a, b in [(rng.randint(-2**31, 2**31 - 1), rng.randint(-2**31, 2**31 - 1)), (5, 5), (-3, 7)]:
            agree(arithmetic, {"a": a, "b": b}, {})


def test_constant_subexpressions_fold():
    graph = compile_kernel(arithmetic)
    assert not any(node.op == "MUL" and all(i.kind == "const" for i in node.inputs)
                   for node in graph.nodes.values())


@kernel
def loops(A: Array, n: int, k: int):
    s = 0
    for i in range(n):
        s += A[i]
    t = 0
    for i in range(n - 1, -1, -1):
        t = t * 3 + A[i]
    u = 0
    for i in range(2, n + 1, 3):
        u += i * k
    count = 0
    x = n * 7 + 1
    while x > 1:
        x = x >> 1
        count += 1
    out("r", s)
    out("r2", t)
    out("r3", u)
    return count


def test_for_and_while_loops():
    for seed in seeds_for("lang-loops"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(0, 9)
        agree(loops, {"n": n, "k": rng.randint(-9, 9)}, {"A": words(rng, max(n, 1))})


@kernel
def branches(A: Array, B: Array, n: int):
    for i in range(n):
        v = A[i]
        if v < 0:
            v = -v
        elif v > 20:
            v = 20
        else:
            v += 1
        w = v * 2 if v & 1 else v
        if w > 10:
            B[i] = w
        else:
            B[i] = A[i] - 1
            out("low", i)


def test_branches():
    for seed in seeds_for("lang-branches"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(1, 12)
        agree(branches, {"n": n}, {"A": words(rng, n), "B": [0] * n})


@kernel
def nested(A: Array, m: int, n: int):
    total = 0
    for i in range(m):
        row = 0
        j = 0
        while j < n:
            row += A[i * n + j] * (i + 1)
            j += 1
        total += row
        A[i * n] = row
    return total


def test_nested_loops_and_outer_values():
    for seed in seeds_for("lang-nested"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        m, n = rng.randint(1, 5), rng.randint(1, 5)
        agree(nested, {"m": m, "n": n}, {"A": words(rng, m * n)})


@kernel
def memory_order(A: Array, B: Array, n: int):
    for i in range(n):
        A[i] = A[i] + A[i] * 2
        A[0] = A[0] + 1
        B[i] = A[i]
    A[n - 1] = 5
    A[n - 1] = A[n - 1] + B[0]


def test_memory_ordering_on_one_array():
    for seed in seeds_for("lang-memory"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(1, 8)
        agree(memory_order, {"n": n}, {"A": words(rng, n), "B": [0] * n})


@kernel
def in_place(A: Array, n: int):
    i = 1
    while i < n:
        A[i] = A[i] + A[i - 1]
        i += 1


def test_prefix_sum_reads_its_own_stores():
    for seed in seeds_for("lang-prefix"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(1, 10)
        agree(in_place, {"n": n}, {"A": words(rng, n)})


@inline
def clamp(v: int, lo: int, hi: int):
    r = v
    if v < lo:
        r = lo
    if v > hi:
        r = hi
    return r


@inline
def tri(n: int):
    s = 0
    for i in range(n):
        s += i
    return s


@kernel
def calls(A: Array, n: int):
    for i in range(n):
        A[i] = clamp(A[i], -10, 10) + tri(i)


def test_inline_helpers():
    for seed in seeds_for("lang-inline"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(0, 7)
        agree(calls, {"n": n}, {"A": words(rng, max(n, 1))})
