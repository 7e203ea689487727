"""Dense matrix-vector product, the RipTide peer suite's ``dmv``, in the Ripple language.

    rivulet run examples/lang/dmv.py --sim both
    rivulet run examples/lang/dmv.py --vectors dmv.vectors.json --sim both   # the suite's cases
    rivulet compile examples/lang/dmv.py -o dmv.json                        # RipTide JSON

The arguments follow the suite's C signature, so its vectors file runs unchanged.
"""

import random

from ripple_core.lang import Array, kernel


@kernel
def dmv(m: int, n: int, A: Array, B: Array, Z: Array):
    for i in range(m):
        s = 0
        for j in range(n):
            s += A[i * n + j] * B[j]
        Z[i] = s


def cases(m: int = 6, n: int = 5, seed: int = 3):
    """Random small matrices; the reference is CPython on dmv itself."""
    rng = random.Random(seed)
    shapes = [(m, n), (1, 1), (3, 0)]
    return [{"args": {"m": rows, "n": cols},
             "mem": {"A": [rng.randrange(-100, 100) for _ in range(rows * cols)],
                     "B": [rng.randrange(-100, 100) for _ in range(cols)], "Z": [0] * rows}}
            for rows, cols in shapes]
