"""dmv: dense matrix-vector product ``y = A x`` (A is n x n, row-major; 32-bit wrapping).

The two kernels are those of ``ripple_core/lang/examples.py``: ordered, a row loop around a dot
product; ripple, the same with ``async for`` over rows, so each row's dot product is an
invocation of its own and rows overlap."""

import random

from ripple_core.lang.examples import dmv_ordered, dmv_ripple

from . import Workload
from ._dense import compare, matrix, wrap32

__all__ = ["WORKLOAD"]


def case(version: str, size: int, kind: str, seed: int) -> dict:
    rng = random.Random(f"dmv:{size}:{seed}")
    return {"args": {"m": size, "n": size},
            "mem": {"A": matrix(rng, size * size), "x": matrix(rng, size), "y": [0] * size}}


def check(version: str, case: dict, memory: dict, outputs: dict) -> list[str]:
    import numpy as np

    m, n = case["args"]["m"], case["args"]["n"]
    a = np.array(case["mem"]["A"], dtype=np.int64).reshape(m, n)
    x = np.array(case["mem"]["x"], dtype=np.int64)
    # int64 products and sums wrap modulo 2**64, which keeps them right modulo 2**32.
    with np.errstate(over="ignore"):
        expected = wrap32(a @ x)
    return compare("y", memory.get("y"), expected)


WORKLOAD = Workload(name="dmv", ordered=dmv_ordered, ripple=dmv_ripple, case=case, check=check,
                    small=8, sizes=(16, 64, 128), graph=False)
