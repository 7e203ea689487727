"""st: a 2-D 5-point stencil on an n x n row-major grid (32-bit wrapping)::

    out[i][j] = c0 * inp[i][j] + c1 * (inp[i-1][j] + inp[i+1][j] + inp[i][j-1] + inp[i][j+1])

at interior points; border points are copied. ``c0`` and ``c1`` are integer arguments.

ordered: two nested loops, a branch per point (copy or stencil). ripple: ``async for`` over
rows, each row an invocation of an implicit ``ind`` task running the same inner loop, so rows
overlap; within a row the two store sites of ``out`` stay ordered, as in the ordered version."""

import random

from ripple_core.lang.api import Array, kernel

from . import Workload
from ._dense import compare, matrix, wrap32

__all__ = ["WORKLOAD", "st_ordered", "st_ripple"]


@kernel
def st_ordered(inp: Array, out: Array, n: int, c0: int, c1: int):
    for i in range(n):
        for j in range(n):
            k = i * n + j
            if i == 0 or i == n - 1 or j == 0 or j == n - 1:
                out[k] = inp[k]
            else:
                out[k] = c0 * inp[k] + c1 * (inp[k - n] + inp[k + n] + inp[k - 1] + inp[k + 1])


@kernel
async def st_ripple(inp: Array, out: Array, n: int, c0: int, c1: int):
    async for i in range(n):
        for j in range(n):
            k = i * n + j
            if i == 0 or i == n - 1 or j == 0 or j == n - 1:
                out[k] = inp[k]
            else:
                out[k] = c0 * inp[k] + c1 * (inp[k - n] + inp[k + n] + inp[k - 1] + inp[k + 1])


def case(version: str, size: int, kind: str, seed: int) -> dict:
    rng = random.Random(f"st:{size}:{seed}")
    return {"args": {"n": size, "c0": rng.randint(-9, 9), "c1": rng.randint(-9, 9)},
            "mem": {"inp": matrix(rng, size * size), "out": [0] * (size * size)}}


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import numpy as np

    n, c0, c1 = case["args"]["n"], case["args"]["c0"], case["args"]["c1"]
    grid = np.array(case["mem"]["inp"], dtype=np.int64).reshape(n, n)
    expected = grid.copy()
    if n > 2:
        expected[1:-1, 1:-1] = c0 * grid[1:-1, 1:-1] + c1 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                                             + grid[1:-1, :-2] + grid[1:-1, 2:])
    return compare("out", memory.get("out"), wrap32(expected.reshape(-1)), columns=n)


WORKLOAD = Workload(name="st", ordered=st_ordered, ripple=st_ripple, case=case, check=check,
                    small=8, sizes=(16, 64, 128), graph=False)
