"""Bit-exact leaky integrate-and-fire neurons: every bit-level choice is a named parameter.

The crossbar tile (one per ``xbar`` FU) must match this model spike for spike and membrane for
membrane, so each rounding, overflow and ordering decision is spelled out here rather than
left to numpy's defaults. ``docs/snn.md`` says where each preset's choices come from.

It lives in ``hw`` beside ``snn.lif_params`` because it is the specification of the crossbar
tile, which ``rsn``'s ``xbar`` golden unit model needs and ``rsn`` may not import ``snn``;
``snn.lif`` re-exports it. It is numpy only and knows nothing of the RTL.
"""

import numpy as np

from .lif_params import LifParams, loihi, tinyodin

__all__ = ["LifParams", "LifCrossbarModel", "tinyodin", "loihi"]


def _overflow(params: LifParams, values):
    """Bring exact sums back into the membrane's range by the population's overflow rule."""
    if params.overflow == "wrap":
        span = 1 << params.membrane_width
        return (values - params.v_min) % span + params.v_min
    return np.clip(values, params.v_min, params.v_max)


def _leak(params: LifParams, v):
    """The end-of-step leak; it never moves ``v`` away from zero, so it needs no overflow rule."""
    if params.leak == "shift":
        return v - (v >> params.leak_amount)
    if params.leak == "step":
        return np.where(v > 0, np.maximum(v - params.leak_amount, 0), np.minimum(v + params.leak_amount, 0))
    if params.leak == "multiply":
        product = v * (4096 - params.leak_amount)
        return np.sign(product) * (np.abs(product) >> 12)
    return v


class LifCrossbarModel:
    """One crossbar: A axons x N neurons, ``weights[axon, neuron]``, one ``LifParams`` for all.

    ``step(axons)`` consumes one timestep's address events (axon ids in arrival order; the end
    of the timestep is implied by the call's end) and returns the neuron ids that spiked, in
    emission order, and a copy of the membrane vector after the timestep. With ``fire="step"``
    the ids are ascending and distinct; with ``fire="event"`` they are grouped per update
    (each input event, then the leak), ascending within a group, and a neuron may repeat.
    """

    def __init__(self, weights, params: LifParams):
        weights = np.asarray(weights)
        if weights.ndim != 2 or 0 in weights.shape:
            raise ValueError(f"LifCrossbarModel: weights must be a non-empty (axons, neurons) matrix, "
                             f"got shape {weights.shape}")
        if not np.issubdtype(weights.dtype, np.integer):
            raise ValueError(f"LifCrossbarModel: weights must be integers, got dtype {weights.dtype}")
        low, high = int(weights.min()), int(weights.max())
        if low < params.w_min or high > params.w_max:
            raise ValueError(f"LifCrossbarModel: weights span {low}..{high}, outside the "
                             f"{params.weight_width}-bit signed range {params.w_min}..{params.w_max}")
        self.params = params
        self.weights = weights.astype(np.int64)
        self.axons, self.neurons = weights.shape
        self.v = np.zeros(self.neurons, dtype=np.int64)
        self._frozen = np.zeros(self.neurons, dtype=bool)     # refractory during this step

    def _fire(self, active, emitted, spiked):
        p = self.params
        hit = active & ((self.v >= p.threshold) if p.compare == ">=" else (self.v > p.threshold))
        if p.spike_requires_nonnegative:
            hit &= self.v >= 0
        ids = np.flatnonzero(hit)
        emitted.extend(int(i) for i in ids)
        spiked[ids] = True
        self.v[ids] = 0 if p.reset == "zero" else self.v[ids] - p.threshold

    def step(self, axons=()):
        p = self.params
        axons = [int(a) for a in axons]
        bad = [a for a in axons if not 0 <= a < self.axons]
        if bad:
            raise ValueError(f"LifCrossbarModel: axon id {bad[0]} outside 0..{self.axons - 1}")
        active = ~self._frozen
        emitted: list[int] = []
        spiked = np.zeros(self.neurons, dtype=bool)
        if p.integrate == "event":
            for axon in axons:
                updated = _overflow(p, self.v + (self.weights[axon] << p.input_shift))
                self.v = np.where(active, updated, self.v)
                if p.fire == "event":
                    self._fire(active, emitted, spiked)
            self.v = np.where(active, _leak(p, self.v), self.v)
        else:
            total = self.weights[axons].sum(axis=0) << p.input_shift if axons else np.zeros_like(self.v)
            if np.abs(total).max() > p.v_max:
                raise ValueError(f"LifCrossbarModel: a timestep's input sum reaches {np.abs(total).max()}, "
                                 f"beyond the {p.membrane_width}-bit input register; the model "
                                 f"does not reproduce its wrap")
            if p.leak_first:
                updated = _overflow(p, _leak(p, self.v) + total)
            else:
                updated = _leak(p, _overflow(p, self.v + total))
            self.v = np.where(active, updated, self.v)
        self._fire(active, emitted, spiked)
        if p.refractory:
            self._frozen = spiked
        return np.array(emitted, dtype=np.int64), self.v.copy()

    def run(self, timesteps):
        """``step`` over a list of per-timestep event lists; returns the list of results."""
        return [self.step(events) for events in timesteps]
