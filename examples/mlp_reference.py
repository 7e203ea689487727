"""The fused two-layer int8 MLP, computed with numpy alone: the reference the fabric must match.

y = W2 @ requantize(relu(W1 @ x)), per input vector, where requantize(h) = clip(h >> shift,
-128, 127). Products and sums wrap in 32-bit two's complement, as the fabric's MAC units do.
"""

import numpy as np

__all__ = ["random_mlp", "mlp_reference", "wrap32"]


def wrap32(values):
    """Reduce integers to signed 32-bit two's complement."""
    values = np.asarray(values, dtype=np.int64) & 0xFFFF_FFFF
    return np.where(values >= 1 << 31, values - (1 << 32), values).astype(np.int64)


def random_mlp(batch: int, inputs: int, hidden: int, outputs: int, seed: int):
    """Random int8 inputs and weights (as int64 arrays holding int8 values)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, size=(batch, inputs))
    w1 = rng.integers(-128, 128, size=(hidden, inputs))
    w2 = rng.integers(-128, 128, size=(outputs, hidden))
    return x, w1, w2


def mlp_reference(x, w1, w2, shift: int):
    """The expected int32 outputs, one row per input vector."""
    hidden = wrap32(x @ w1.T)
    hidden = np.clip(np.maximum(hidden, 0) >> shift, -128, 127)
    return wrap32(hidden @ w2.T)
