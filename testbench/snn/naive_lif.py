"""A deliberately plain, one-neuron-at-a-time LIF reference, written apart from ``snn.lif``.

It follows the ``LifParams`` docstring statement by statement with Python integers and
explicit branches, so the vectorised model and this one can only agree by both being right.
"""


def _fit(p, value):
    width = p.membrane_width
    top = 2 ** (width - 1) - 1
    if p.overflow == "wrap":
        value &= 2 ** width - 1
        if value & 2 ** (width - 1):
            value -= 2 ** width
        return value
    bottom = -top if p.overflow == "saturate_symmetric" else -top - 1
    if value > top:
        return top
    if value < bottom:
        return bottom
    return value


def _leak(p, v):
    if p.leak == "shift":
        return v - v // 2 ** p.leak_amount          # floor division is the arithmetic shift
    if p.leak == "step":
        if v > 0:
            return max(0, v - p.leak_amount)
        if v < 0:
            return min(0, v + p.leak_amount)
        return 0
    if p.leak == "multiply":
        magnitude = abs(v) * (4096 - p.leak_amount) // 4096
        return magnitude if v >= 0 else -magnitude
    return v


def _spikes(p, v):
    if p.compare == ">=":
        over = v >= p.threshold
    else:
        over = v > p.threshold
    if p.spike_requires_nonnegative and v < 0:
        return False
    return over


def _after_spike(p, v):
    return 0 if p.reset == "zero" else v - p.threshold


def run_neuron(p, column, timesteps):
    """One neuron's (spike count per step, membrane per step) for per-step axon event lists."""
    v = 0
    resting = False
    counts, trace = [], []
    for events in timesteps:
        count = 0
        if resting:
            resting = False
            counts.append(0)
            trace.append(v)
            continue
        if p.integrate == "event":
            for axon in events:
                v = _fit(p, v + column[axon] * 2 ** p.input_shift)
                if p.fire == "event" and _spikes(p, v):
                    count += 1
                    v = _after_spike(p, v)
            v = _leak(p, v)
        else:
            total = 0
            for axon in events:
                total += column[axon]
            total *= 2 ** p.input_shift
            if p.leak_first:
                v = _fit(p, _leak(p, v) + total)
            else:
                v = _leak(p, _fit(p, v + total))
        if _spikes(p, v):
            count += 1
            v = _after_spike(p, v)
        if count and p.refractory:
            resting = True
        counts.append(count)
        trace.append(v)
    return counts, trace
