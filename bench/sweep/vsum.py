"""A Ripple-language kernel small enough for the sweep's 3x3 and 4x4 grids of pe tiles: the sum
of an array, ordered dataflow. Its reference is CPython running the kernel's own source."""

import random

from ripple_core.lang import Array, kernel


@kernel
def vsum(n: int, A: Array):
    s = 0
    for i in range(n):
        s += A[i]
    return s


def cases(n: int = 24, seed: int = 7):
    rng = random.Random(seed)
    return [{"args": {"n": n}, "mem": {"A": [rng.randrange(-1000, 1000) for _ in range(n)]}}]
