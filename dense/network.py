"""Dense int8 layers, as the fabric computes them.

A layer multiplies its int8 input vector by an int8 weight matrix with 32-bit wrapping sums
(the ``mac`` kind's INT8 dot product), adds an optional int8 bias through a constant input (the
bias is the weight of an extra input that always holds ``bias_input``), then applies the
``alu`` kind's requantisation: optional ReLU, an arithmetic right shift, an optional clip. A
hidden layer's output feeds the next layer's ``mac``, which reads the low 8 bits of every word
as signed int8, so every layer but the last must clip into -128..127; the last layer's words
(the logits) go to the host as they are.

Everything is checked here, before anything is lowered, so that a bad network is refused with
the layer and the value at fault rather than as wrong numbers from the fabric.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["DenseLayer", "DenseNetwork", "NetworkError", "INT8"]

INT8 = (-128, 127)
_SHIFT_LIMIT = 31           # the alu's 5-bit shift field
_CLIP_LIMIT = (-(1 << 15), (1 << 15) - 1)  # the alu's signed 16-bit bounds


class NetworkError(ValueError):
    """A layer or network the fabric cannot compute as written; the message says which and why."""


def _int_matrix(where: str, what: str, values, dimensions: int) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != dimensions:
        raise NetworkError(f"{where}: {what} must have {dimensions} dimensions, not shape {array.shape}")
    if array.size == 0:
        raise NetworkError(f"{where}: {what} is empty (shape {array.shape})")
    if not np.issubdtype(array.dtype, np.integer):
        raise NetworkError(f"{where}: {what} must hold integers (dtype {array.dtype}); quantise them "
                           f"to int8 first (dense.quantise)")
    low, high = int(array.min()), int(array.max())
    if low < INT8[0] or high > INT8[1]:
        raise NetworkError(f"{where}: {what} must be int8 ({INT8[0]}..{INT8[1]}), but they span "
                           f"{low}..{high}; the mac multiplies the low 8 bits of each word as int8")
    return array.astype(np.int64)


@dataclass(frozen=True)
class DenseLayer:
    """``outputs x inputs`` int8 ``weights``; ``bias`` (int8, one per output) or None; then
    ``relu``, ``>> shift`` and ``clip`` (lo, hi) or None. Construct with plain ints or numpy."""
    weights: np.ndarray
    bias: np.ndarray | None = None
    relu: bool = False
    shift: int = 0
    clip: tuple[int, int] | None = None

    def __post_init__(self):
        object.__setattr__(self, "weights", _int_matrix("DenseLayer", "weights", self.weights, 2))
        if self.bias is not None:
            bias = _int_matrix("DenseLayer", "bias", self.bias, 1)
            if len(bias) != self.outputs:
                raise NetworkError(f"DenseLayer: {len(bias)} biases for {self.outputs} outputs (weights "
                                   f"{self.outputs}x{self.inputs}); give one per output row")
            object.__setattr__(self, "bias", bias)
        if isinstance(self.shift, bool) or not isinstance(self.shift, int | np.integer) \
                or not 0 <= self.shift <= _SHIFT_LIMIT:
            raise NetworkError(f"DenseLayer: shift={self.shift!r} must be an integer in 0..{_SHIFT_LIMIT} "
                               f"(the alu's shift field)")
        if self.clip is not None:
            low, high = self.clip
            if not (_CLIP_LIMIT[0] <= low <= high <= _CLIP_LIMIT[1]):
                raise NetworkError(f"DenseLayer: clip={self.clip!r} must be (lo, hi) with "
                                   f"{_CLIP_LIMIT[0]} <= lo <= hi <= {_CLIP_LIMIT[1]}")
            object.__setattr__(self, "clip", (int(low), int(high)))
        object.__setattr__(self, "shift", int(self.shift))
        object.__setattr__(self, "relu", bool(self.relu))

    @property
    def inputs(self) -> int:
        return self.weights.shape[1]

    @property
    def outputs(self) -> int:
        return self.weights.shape[0]

    @property
    def makes_int8(self) -> bool:
        """Its outputs are int8 whatever its inputs: a clip inside -128..127."""
        return self.clip is not None and INT8[0] <= self.clip[0] and self.clip[1] <= INT8[1]


@dataclass(frozen=True)
class DenseNetwork:
    """Layers applied in order; ``bias_input`` is the value of the constant input that carries
    the biases (an int8, 1..127: a larger one gives biases a larger range in steps of itself)."""
    layers: tuple[DenseLayer, ...]
    bias_input: int = 1

    def __post_init__(self):
        layers = tuple(self.layers)
        if not layers:
            raise NetworkError("DenseNetwork: no layers; give at least one DenseLayer")
        for k, layer in enumerate(layers):
            if not isinstance(layer, DenseLayer):
                raise NetworkError(f"DenseNetwork: layer {k} is a {type(layer).__name__}, not a DenseLayer")
        for k, (before, after) in enumerate(zip(layers, layers[1:], strict=False), start=1):
            if after.inputs != before.outputs:
                raise NetworkError(f"DenseNetwork: layer {k} takes {after.inputs} inputs but layer {k - 1} "
                                   f"makes {before.outputs}")
            if not before.makes_int8:
                raise NetworkError(f"DenseNetwork: layer {k - 1} feeds layer {k} but does not clip into "
                                   f"int8 (clip={before.clip}); the next mac reads only the low 8 bits, so "
                                   f"give it clip=(-128, 127) or (0, 127)")
        if isinstance(self.bias_input, bool) or not isinstance(self.bias_input, int | np.integer) \
                or not 1 <= self.bias_input <= INT8[1]:
            raise NetworkError(f"DenseNetwork: bias_input={self.bias_input!r} must be an integer in 1..127")
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "bias_input", int(self.bias_input))

    @property
    def inputs(self) -> int:
        return self.layers[0].inputs

    @property
    def outputs(self) -> int:
        return self.layers[-1].outputs

    def check_inputs(self, inputs) -> np.ndarray:
        """``inputs`` as an images x inputs int64 array, or :class:`NetworkError` naming what is wrong."""
        array = _int_matrix("DenseNetwork inputs", "the input vectors", inputs, 2)
        if array.shape[1] != self.inputs:
            raise NetworkError(f"DenseNetwork inputs: vectors of {array.shape[1]} values for a network of "
                               f"{self.inputs} inputs")
        return array
