"""ma: matrix add ``C = A + B`` of two n x n row-major matrices (32-bit wrapping).

ordered: two nested loops. ripple: ``async for`` over rows, each row an invocation of an
implicit ``ind`` task that adds its n words; rows do not wait for each other (C has one store
site, so no memory token orders them in either version)."""

import random

from ripple_core.lang.api import Array, kernel

from . import Workload
from ._dense import compare, matrix, wrap32

__all__ = ["WORKLOAD", "ma_ordered", "ma_ripple"]


@kernel
def ma_ordered(A: Array, B: Array, C: Array, n: int):
    for i in range(n):
        for j in range(n):
            C[i * n + j] = A[i * n + j] + B[i * n + j]


@kernel
async def ma_ripple(A: Array, B: Array, C: Array, n: int):
    async for i in range(n):
        for j in range(n):
            C[i * n + j] = A[i * n + j] + B[i * n + j]


def case(version: str, size: int, kind: str, seed: int) -> dict:
    rng = random.Random(f"ma:{size}:{seed}")
    words = size * size
    return {"args": {"n": size},
            "mem": {"A": matrix(rng, words), "B": matrix(rng, words), "C": [0] * words}}


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import numpy as np

    n = case["args"]["n"]
    a = np.array(case["mem"]["A"], dtype=np.int64).reshape(n, n)
    b = np.array(case["mem"]["B"], dtype=np.int64).reshape(n, n)
    expected = wrap32((a + b).reshape(-1))
    return compare("C", memory.get("C"), expected, columns=n)


WORKLOAD = Workload(name="ma", ordered=ma_ordered, ripple=ma_ripple, case=case, check=check,
                    small=8, sizes=(16, 64, 128), graph=False)
