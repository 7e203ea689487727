"""What the dense workloads (ma, st, dmv) share: seeded 32-bit matrices and the comparison of a
run's final array with a numpy reference, both taken to 32-bit two's complement."""

import random

__all__ = ["matrix", "wrap32", "compare"]


def matrix(rng: random.Random, count: int) -> list[int]:
    """``count`` words: mostly small values, with some full-range ones so that sums and products
    wrap around 32 bits."""
    return [rng.randint(-2**31, 2**31 - 1) if rng.random() < 0.25 else rng.randint(-999, 999)
            for _ in range(count)]


def wrap32(values):
    """numpy int64 values (or a list of ints) as signed 32-bit words, in a numpy int64 array."""
    import numpy as np

    words = np.asarray(values, dtype=np.int64) & 0xFFFFFFFF
    return np.where(words >= 2**31, words - 2**32, words)


def compare(name: str, got, expected, columns: int | None = None) -> list[str]:
    """Problems of array ``name`` (a run's final words) against ``expected`` (numpy int64 words,
    already wrapped): a wrong length, or the first differing word and how many differ. With
    ``columns``, indices are also shown as (row, column)."""
    import numpy as np

    if got is None:
        return [f"{name}: the run has no array {name!r}"]
    if len(got) != len(expected):
        return [f"{name}: {len(got)} words, expected {len(expected)}"]
    have = wrap32(list(got))
    wrong = np.flatnonzero(have != expected)
    if not len(wrong):
        return []
    first = int(wrong[0])
    where = f"[{first}]"
    if columns is not None:
        where += f" (row {first // columns}, column {first % columns})"
    return [f"{name}{where} = {int(have[first])}, expected {int(expected[first])} "
            f"({len(wrong)} of {len(expected)} words differ)"]
