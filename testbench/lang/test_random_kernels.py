"""Random programs inside the language (ripple_core/lang/random_kernels.py), each compiled and run
on the golden model (depth 2 and unbounded) against the 32-bit CPython reference; and the minimal
programs of the compiler bugs they found."""

import pytest

from ripple_core.lang.random_kernels import Program, check, generate, kernel_from_source, shrink
from rivulet.sim.seeds import base_seed, seeds_for

PER_MODE = 100


def _replay(seed, mode) -> str:
    return (f"replay: RIVULET_SEED={base_seed()} pytest {__file__.rsplit('/', 1)[-1]}, or in Python "
            f"check(generate({seed}, {mode!r}))")


@pytest.mark.parametrize("mode", ["ordered", "ripple"])
def test_random_kernels_agree_with_the_reference(mode):
    """Any number of `with atomic` statements per kernel (several lock sites decouple at every
    block boundary: docs/ripple-language.md)."""
    seeds = seeds_for(f"lang-random-kernels-{mode}", PER_MODE)
    print(f"{mode}: seeds {seeds}")
    for seed in seeds:
        program = generate(seed, mode)
        outcome = check(program)
        assert outcome.ok, f"{outcome.kind}: {outcome.detail}\n{program.describe()}\n{_replay(seed, mode)}"


def test_kernel_from_source_locates_messages():
    text = ("from ripple_core.lang import kernel\n\n@kernel\ndef k(a: int):\n    x = a\n"
            "    return x // a\n")
    outcome = check(Program(0, "ordered", text.replace("def k", "def fuzzed"), {"a": 3}, {}))
    assert outcome.kind == "refused" and "<random kernel 0>:6" in outcome.detail
    assert kernel_from_source(text, "k")(6) == 1


def test_shrink_keeps_what_the_predicate_needs():
    program = next(p for p in map(generate, range(1000)) if p.source.count('out("') >= 2)
    small = shrink(program, lambda candidate: 'out("o0"' in candidate.source, rounds=3)
    assert 'out("o0"' in small.source and len(small.source) < len(program.source)
    kernel_from_source(small.source, filename="<shrunk>")       # still a well-formed module


# Minimal programs of the bugs the random programs found ------------------------------------------

HEADER = "from ripple_core.lang import Array, atomic, ind, inline, kernel, out, push\n\n\n"


def regression(body: str, args: dict, memory: dict | None = None, mode="ordered"):
    outcome = check(Program(0, mode, HEADER + body, args, memory or {}))
    assert outcome.ok, f"{outcome.kind}: {outcome.detail}"


def test_while_condition_on_a_held_argument_takes_one_token_per_loop():
    # The INVARIANT of the header's static operand (n0 in n0 - 1) was fed a hold slot: after the
    # exit it re-armed at once and sent an extra token that nothing took.
    regression("@kernel\ndef fuzzed(n0: int):\n    v = 0\n    while v < n0 - 1:\n        out(\"o\", v)\n"
               "        v += 1\n", {"n0": 3})
    regression("@kernel\ndef fuzzed(n0: int):\n    for i in range(2):\n        v = 0\n"
               "        while v < n0 + 0:\n            out(\"o\", v)\n            v += 1\n", {"n0": 3})


def test_an_atomic_block_locks_only_after_the_earlier_accesses_of_its_arrays():
    # Two blocks on one address in sequence, the second's address ready first: its ACQUIRE took
    # the lock, then its accesses waited (tok/acc) for the first block, whose ACQUIRE waited for
    # the lock: a deadlock. At the top level, and in a serial task (every array flows there).
    regression("@kernel\ndef fuzzed(A: Array, n0: int):\n    k = (n0 > 5) & 1\n    with atomic(k):\n"
               "        A[k] += 1\n    with atomic(n0):\n        A[n0] += 2\n    A[1] = 7\n",
               {"n0": 0}, {"A": [0, 0]}, mode="ripple")
    regression("@kernel\ndef fuzzed(A: Array, n0: int):\n    async def t(d):\n        k = (d > 5) & 1\n"
               "        with atomic(k):\n            A[k] += 1\n        with atomic(n0):\n"
               "            A[n0] += 2\n    push(t, 1)\n", {"n0": 0}, {"A": [0, 0]}, mode="ripple")


def test_a_reassigned_argument_is_a_kernel_local():
    # An async for body read the argument slot, not the value the body assigned to it; a task
    # read it too (CPython's closure sees the new value): now it is captured, and refused in a task.
    regression("@kernel\nasync def fuzzed(A: Array, a: int):\n    a = a + 1\n    async for i in range(2):\n"
               "        A[i] = a\n", {"a": 4}, {"A": [0, 0]}, mode="ripple")
    outcome = check(Program(0, "ripple", HEADER + "@kernel\ndef fuzzed(A: Array, a: int):\n"
                            "    async def t(d):\n        A[0] = a\n    a = a + 1\n    push(t, 1)\n",
                            {"a": 4}, {"A": [0]}))
    assert outcome.kind == "refused" and "read of 'a' in task 't'" in outcome.detail, outcome


def test_an_async_for_in_code_a_constant_condition_removes_is_dropped():
    # It was planned as a task with no push site, and the build refused the kernel.
    regression("DEBUG = 0\n\n\n@kernel\nasync def fuzzed(A: Array, n: int):\n    A[0] = n\n    if DEBUG:\n"
               "        async for i in range(2):\n            out(\"trace\", i)\n", {"n": 3}, {"A": [0]},
               mode="ripple")


def test_the_reference_wraps_module_constants_like_literals():
    # The compiler reads K as the word -1; the reference compared the unbounded 4294967295.
    regression("K = 4294967295\n\n\n@kernel\ndef fuzzed(a: int):\n    b = K\n"
               "    return (K >= 31) + (a < b) * 2\n", {"a": 5})


def test_a_loop_inside_an_atomic_block_carries_the_block_s_memory_tokens():
    # C is accessed only inside atomic blocks, so its tokens live in the block; a loop there did
    # not carry them, and each iteration's load ran before the previous iteration's store.
    regression("@kernel\ndef fuzzed(C: Array, n: int):\n    with atomic(n):\n        for i in range(3):\n"
               "            out(\"o\", C[0])\n            C[0] = i + 5\n", {"n": 0}, {"C": [2]},
               mode="ripple")


def test_an_atomic_block_locks_only_once_the_values_it_reads_exist():
    # The second block's address was ready at once: it took the lock, then waited for b, which
    # the loop's block (same address) computes under that lock: a deadlock.
    regression("@kernel\ndef fuzzed(A: Array, n0: int, a0: int):\n    b = 0\n    v = n0\n    while v > 0:\n"
               "        k = a0 & 3\n        with atomic(k):\n            b = k\n        v -= 1\n"
               "    with atomic(a0 & 3):\n        A[a0 & 3] = b\n", {"n0": 3, "a0": 1}, {"A": [0] * 4},
               mode="ripple")


def test_two_atomic_blocks_on_one_address_in_a_pipelined_task():
    regression("K0 = 255\n\n\n@kernel\nasync def fuzzed(n0: int, B: Array, a0: int, a2: int, A: Array, "
               "C: Array, a1: int, n1: int):\n    async def t0(d, t0p0, t0p1):\n        pass\n"
               "    async def t1(d):\n"
               "        pass\n    async for i0 in range(15, 7, -1):\n        if (2 > (i0 & n0)):\n"
               "            pass\n"
               "        else:\n            with atomic((n1 & 3)):\n"
               "                C[(n1 & 3)] = ((-i0) if (K0 <= a0) else ((-8) + 1)) + C[(n1 & 3)]\n"
               "            with atomic((a1 & 3)):\n                C[(a1 & 3)] = (~B[i0]) + C[(a1 & 3)]\n"
               "    push(t0, 2, a2, (a0 < 1))\n    push(t1, 1)\n",
               {"n0": 5, "n1": 1, "a0": -1465225323, "a1": -7, "a2": 10},
               {"A": [0, 0], "B": [-19, 10, 2147483647, -1055076607, 7, 4294967295, -14, 32, 17, 2, 0,
                                   915687917, 2120129831, 12, 9, 19], "C": [15, -8, -13, 33]}, mode="ripple")


def test_two_blocks_on_one_address_the_second_in_a_branch():
    # bench.lang_fuzz seed 2211607149: the MERGE after the second block waited for the block on a bounded slot
    # that the lock holder's producers also feed; now every operand from an earlier epoch (before a block
    # boundary) arrives through a spill queue (docs/ripple-language.md, several ACQUIRE sites).
    regression(
               '@inline\n'
               'def h0(h0x0, h0x1: int, h0x2):\n'
               '    return h0x2\n'
               '\n'
               '\n'
               '@kernel\n'
               'async def fuzzed(n0: int, a0: int, A: Array, n1: int, B: Array):\n'
               '    @ind\n'
               '    async def t0(d):\n'
               '        if d > 0:\n'
               '            push(t0, d - 1)\n'
               '        with atomic(0):\n'
               '            A[0] = A[0] + (-h0((-3), 0, n1))\n'
               '        if (((-256) != d) or ((8 < n0) or (n1 == n1))):\n'
               '            with atomic(0):\n'
               '                A[0] = (((-9) << n1) << (-44 // 5)) + A[0]\n'
               '    async for i1 in range(1, -2, -1):\n'
               '        push(t0, 0)\n'
               '        push(t0, 1)\n',
        {'n0': 4, 'n1': 0, 'a0': -1171538395},
        {'A': [-322884001], 'B': [2]}, mode="ripple")


def test_two_blocks_in_a_loop_in_overlapping_invocations():
    # bench.lang_fuzz seed 1813842886: the loop's STEERs and MERGE waited for the block on a bounded slot
    # that the lock holder's producers also feed (fixed as above).
    regression(
               'K0 = 32\n'
               '\n'
               '\n'
               '@kernel\n'
               'async def fuzzed(n0: int, A: Array, B: Array):\n'
               '    async def t0(d, t0p0, t0p1):\n'
               '        pass\n'
               '    async for i1 in range(2, n0 + 1):\n'
               '        v0 = (n0 - 1)\n'
               '        while v0 > 0:\n'
               '            with atomic(0):\n'
               '                A[0] = A[0] ^ (((-8) if (255 >= (-8)) else v0) * (v0 < n0))\n'
               '            if (n0 == (v0 if (K0 != n0) else (-6))):\n'
               '                pass\n'
               '            elif (i1 * n0):\n'
               '                with atomic(0):\n'
               '                    A[0] = (((-1) + v0) <= i1) ^ A[0]\n'
               '            v0 -= 1\n'
               '        push(t0, (n0 & 1), n0, (-(not v0)))\n',
        {'n0': 5},
        {'A': [-11], 'B': [-16, 33, -3, -498726437]}, mode="ripple")


def test_a_store_after_a_while_loop_waits_for_the_loads_of_its_test():
    # The test's loads joined acc only in the region that built the test, so neither the body nor
    # the code after the loop waited for them: the later store overtook the last tests' loads, and
    # the loop ran on the value stored after it (seed 2990283570, mode ripple).
    body = ("@kernel\nASYNC def fuzzed(a1: int, A: Array):\n    LOOP i in range(7, 0, -1):\n"
            "        A[i] = 0\n        v = 1\n        while v < (A[i] & 3):\n"
            "            out(\"o\", v)\n            v += 1\n        A[i] = a1\n")
    memory = {"A": [5, 6, 7, 1, 2, 3, 4, 5]}
    regression(body.replace("ASYNC ", "").replace("LOOP", "for"), {"a1": 11}, memory)
    regression(body.replace("ASYNC", "async").replace("LOOP", "async for"), {"a1": 11}, memory, mode="ripple")
    # ... and a store in the body waits for them too.
    regression("@kernel\ndef fuzzed(A: Array):\n    v = 0\n    while v < A[0]:\n        A[0] = v\n"
               "        v += 1\n", {}, {"A": [3]})
