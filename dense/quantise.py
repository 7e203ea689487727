"""Float dense layers to int8, by a fixed, documented scheme (docs/dense.md).

* Inputs: one scale for all, ``s_0 = max|x| / 127`` over the calibration vectors, and
  ``x_q = clip(round(x / s_0), -128, 127)``.
* Weights: per layer, ``s_w = max|W| / 127`` and ``W_q = round(W / s_w)``.
* Sums: a layer's int32 sum has scale ``s_in * s_w``. A bias ``b`` is the weight of the
  constant input ``bias_input``: ``b_q = round(b / (s_in * s_w * bias_input))``, clipped to int8;
  ``bias_input`` is the smallest value in 1..127 that keeps every layer's biases in range.
* Hidden layers: ReLU, then ``>> shift`` with the least shift that maps the largest ReLU'd
  calibration sum into 0..127, then clip to 0..127. The next layer's input scale is
  ``s_in * s_w * 2**shift``. The last layer keeps its int32 sums (the logits).

The shifts are chosen on the integer sums themselves, layer by layer, so they are the ones the
fabric computes with. A power-of-two rescale is what the alu does; a finer one would need a
multiplier per output.
"""

from dataclasses import dataclass

import numpy as np

from .network import DenseLayer, DenseNetwork

__all__ = ["Quantised", "quantise"]


@dataclass(frozen=True)
class Quantised:
    network: DenseNetwork
    input_scale: float
    clipped_biases: int         # biases that did not fit int8 at the chosen bias_input

    def inputs(self, vectors) -> np.ndarray:
        """Float input vectors as the network's int8 inputs."""
        return _int8(np.asarray(vectors, dtype=np.float64) / self.input_scale)


def _int8(values) -> np.ndarray:
    return np.clip(np.rint(values), -128, 127).astype(np.int64)


def quantise(layers, calibration, *, percentile: float = 100.0) -> Quantised:
    """``layers``: (weights ``outputs x inputs``, biases or None) float pairs, first to last;
    ``calibration``: float input vectors (vectors x inputs) that choose the scales and shifts."""
    calibration = np.asarray(calibration, dtype=np.float64)
    peak = float(np.abs(calibration).max())
    input_scale = peak / 127 if peak > 0 else 1.0
    weights = [np.asarray(w, dtype=np.float64) for w, _ in layers]
    biases = [None if b is None else np.asarray(b, dtype=np.float64) for _, b in layers]
    weight_scales = [float(np.abs(w).max()) / 127 or 1.0 for w in weights]
    # Input scales follow from the shifts, which follow from the integer sums: one pass to fix the
    # scales with bias_input = 1 is not enough, as bias_input changes the sums; so first find
    # bias_input from float estimates of every layer's input scale, then quantise exactly.
    bias_input = 1
    estimate, x = input_scale, calibration
    for k, (w, b) in enumerate(zip(weights, biases, strict=True)):
        accumulator_scale = estimate * weight_scales[k]
        if b is not None:
            bias_input = max(bias_input, int(np.ceil(float(np.abs(b).max()) / accumulator_scale / 127)))
        x = np.maximum(x @ w.T + (0 if b is None else b), 0)
        peak = float(x.max()) / accumulator_scale
        estimate = accumulator_scale * 2 ** max(0, int(np.ceil(np.log2(max(peak, 1) / 127))))
    bias_input = min(bias_input, 127)

    quantised_layers, clipped = [], 0
    scale, x_q = input_scale, _int8(calibration / input_scale)
    for k, (w, b) in enumerate(zip(weights, biases, strict=True)):
        w_q = _int8(w / weight_scales[k])
        accumulator_scale = scale * weight_scales[k]
        b_q = None
        if b is not None:
            exact = b / (accumulator_scale * bias_input)
            b_q = _int8(exact)
            clipped += int(np.sum(np.abs(np.rint(exact)) > 127))
        sums = x_q @ w_q.T + (0 if b_q is None else b_q * bias_input)
        if k == len(weights) - 1:
            quantised_layers.append(DenseLayer(w_q, b_q))
            break
        peak = int(np.percentile(np.maximum(sums, 0), percentile))
        shift = 0
        while (peak >> shift) > 127:
            shift += 1
        quantised_layers.append(DenseLayer(w_q, b_q, relu=True, shift=shift, clip=(0, 127)))
        x_q = np.clip(np.maximum(sums, 0) >> shift, 0, 127)
        scale = accumulator_scale * 2 ** shift
    return Quantised(DenseNetwork(tuple(quantised_layers), bias_input), input_scale, clipped)
