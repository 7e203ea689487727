"""The parameters of a leaky integrate-and-fire neuron: every bit-level choice, named.

They live in ``hw`` because they are the crossbar tile's generation parameters
(``snn/crossbar.py``); ``snn.lif`` re-exports them beside the bit-exact golden model that
defines what each choice means. ``docs/snn.md`` says where each preset's choices come from.
"""

from dataclasses import dataclass

__all__ = ["LifParams", "tinyodin", "loihi"]

_COMPARES = (">=", ">")
_RESETS = ("zero", "subtract")
_OVERFLOWS = ("saturate", "saturate_symmetric", "wrap")
_LEAKS = ("none", "shift", "step", "multiply")
_WHEN = ("event", "step")


@dataclass(frozen=True)
class LifParams:
    """One population's neuron arithmetic.

    - ``membrane_width``: bits of the signed membrane ``v``.
    - ``weight_width``: bits of the signed synaptic weights.
    - ``threshold``: in membrane units, 0 .. 2**(membrane_width-1) - 1.
    - ``compare``: spike when ``v >= threshold`` or ``v > threshold``.
    - ``spike_requires_nonnegative``: spiking also needs ``v >= 0``.
    - ``reset``: after a spike, ``v = 0`` or ``v -= threshold``.
    - ``overflow``: each addition into ``v`` saturates to the two's-complement range, saturates
      to the symmetric range ``+-(2**(w-1) - 1)``, or wraps modulo ``2**w``.
    - ``leak``: at the end of each timestep, ``none``; ``shift`` ``v -= v >> amount`` (arithmetic
      shift, so it rounds toward minus infinity); ``step`` moves ``v`` toward 0 by ``amount``,
      stopping at 0; ``multiply`` ``v = trunc(v * (4096 - amount) / 4096)`` (toward zero).
    - ``integrate``: ``event`` adds each input weight as its event arrives, with ``overflow``
      applied per addition; ``step`` sums the timestep's weights exactly and adds once at its end.
    - ``fire``: ``event`` compares and resets after every update of the neuron (each input event
      and the end-of-step leak), so a neuron may spike more than once per timestep; ``step``
      compares once, at the end of the timestep.
    - ``leak_first``: with ``integrate="step"``, leak the old ``v`` before adding the input sum.
    - ``input_shift``: the input (per event or per step sum) is shifted left by this before it is
      added (Loihi aligns synaptic input to the membrane's high bits).
    - ``refractory``: 0, or 1: a neuron that spiked in timestep t ignores everything in t+1
      (its input is discarded, no leak, no spike).
    """

    membrane_width: int = 12
    weight_width: int = 4
    threshold: int = 64
    compare: str = ">="
    spike_requires_nonnegative: bool = False
    reset: str = "zero"
    overflow: str = "saturate"
    leak: str = "none"
    leak_amount: int = 0
    integrate: str = "event"
    fire: str = "step"
    leak_first: bool = False
    input_shift: int = 0
    refractory: int = 0

    def __post_init__(self):
        def need(condition, message):
            if not condition:
                raise ValueError(f"LifParams: {message}")

        for name, allowed in (("compare", _COMPARES), ("reset", _RESETS), ("overflow", _OVERFLOWS),
                              ("leak", _LEAKS), ("integrate", _WHEN), ("fire", _WHEN)):
            need(getattr(self, name) in allowed,
                 f"{name}={getattr(self, name)!r} is not one of {', '.join(map(repr, allowed))}")
        need(isinstance(self.membrane_width, int) and 2 <= self.membrane_width <= 48,
             f"membrane_width={self.membrane_width} must be an int in 2..48")
        need(isinstance(self.weight_width, int) and 2 <= self.weight_width <= self.membrane_width,
             f"weight_width={self.weight_width} must be an int in 2..membrane_width "
             f"({self.membrane_width})")
        need(0 <= self.threshold <= self.v_max,
             f"threshold={self.threshold} must be in 0..{self.v_max} for a "
             f"{self.membrane_width}-bit membrane")
        need(self.refractory in (0, 1), f"refractory={self.refractory} must be 0 or 1")
        need(0 <= self.input_shift < self.membrane_width - 1,
             f"input_shift={self.input_shift} must be in 0..{self.membrane_width - 2}")
        limits = {"none": (0, 0), "shift": (1, self.membrane_width - 1), "step": (0, self.v_max),
                  "multiply": (0, 4095)}
        low, high = limits[self.leak]
        need(low <= self.leak_amount <= high,
             f"leak_amount={self.leak_amount} must be in {low}..{high} for leak={self.leak!r}")
        need(not (self.integrate == "step" and self.fire == "event"),
             "integrate='step' adds the input once per timestep, so fire must be 'step' too")
        need(not (self.leak_first and self.integrate == "event"),
             "leak_first only applies to integrate='step' (with per-event integration the "
             "inputs always arrive before the end-of-step leak)")

    @property
    def v_max(self) -> int:
        return (1 << (self.membrane_width - 1)) - 1

    @property
    def v_min(self) -> int:
        """The lowest membrane value the overflow rule can produce."""
        return -self.v_max if self.overflow == "saturate_symmetric" else -(1 << (self.membrane_width - 1))

    @property
    def w_max(self) -> int:
        return (1 << (self.weight_width - 1)) - 1

    @property
    def w_min(self) -> int:
        return -(1 << (self.weight_width - 1))


def tinyodin(threshold: int = 64, leak_amount: int = 0) -> LifParams:
    """tinyODIN's 12-bit LIF neuron (``lif_neuron.v``), per event as the hardware does it.

    - 12-bit signed membrane, 4-bit signed weights sign-extended: "256 12-bit LIF neurons and
      64k 4-bit signed synapses".
    - ``v = sat12(v + sext(w))`` on [-2048, 2047] at every synaptic event: saturate, per event.
    - The leak event moves ``v`` toward 0 by the 7-bit ``leak_str``, stopping at 0: leak
      ``step``, 0..127.
    - "spike when v_next >= thr and v_next >= 0, then v = 0", where ``v_next`` is the result of
      every update (synaptic or leak event): fire ``event``, ``>=``, non-negative, reset to zero.
    - No refractory period, no input scaling.

    Thresholds above 2047 never fire in tinyODIN (its 12-bit compare is unsigned); they are
    rejected here instead.
    """
    if not 0 <= leak_amount <= 127:
        raise ValueError(f"tinyodin: leak_amount={leak_amount} must fit the 7-bit leak_str (0..127)")
    return LifParams(membrane_width=12, weight_width=4, threshold=threshold, compare=">=",
                     spike_requires_nonnegative=True, reset="zero", overflow="saturate",
                     leak="step", leak_amount=leak_amount, integrate="event", fire="event")


def loihi(vth: int = 100, dv: int = 0, weight_width: int = 8) -> LifParams:
    """The bit-accurate Loihi LIF (Lava ``PyLifModelBitAcc``) reduced to one state per neuron.

    - 24-bit membrane: "u and v 24 b".
    - The tile keeps only ``v``, so the current decay is fixed at ``du = 4095``: then
      ``u = (a_in << 6)``, this step's summed input alone (``4096 - du - 1 = 0`` clears the old
      ``u``). The input sum is exact: the crossbar validates that it cannot reach the 24-bit
      wrap. Bias is 0.
    - ``v = clip(decay(v) + u, +-(2**23 - 1))``: leak first, ``multiply`` with the 12-bit ``dv``
      and truncation toward zero ("the shift truncates toward zero"), one symmetric saturation
      per step.
    - "spike if v > (vth << 6), then v = 0": ``>``, threshold ``vth << 6`` with a 17-bit ``vth``,
      reset to zero, compared once per step. "There is no refractory period."

    The weight width is ours (the notes give none for Loihi): 8 bits by default.
    """
    if not 0 <= vth < 1 << 17:
        raise ValueError(f"loihi: vth={vth} must fit 17 bits (0..{(1 << 17) - 1})")
    if not 0 <= dv <= 4095:
        raise ValueError(f"loihi: dv={dv} must fit 12 bits (0..4095)")
    return LifParams(membrane_width=24, weight_width=weight_width, threshold=vth << 6, compare=">",
                     spike_requires_nonnegative=False, reset="zero", overflow="saturate_symmetric",
                     leak="multiply", leak_amount=dv, integrate="step", fire="step",
                     leak_first=True, input_shift=6)
