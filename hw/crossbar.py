"""The crossbar tile FU: A axons x N leaky integrate-and-fire neurons over block RAM, B banks.

The neuron arithmetic is specified by ``snn.lif.LifCrossbarModel``; its parameters are
``hw.lif_params.LifParams``. This module implements it bit for bit (see ``docs/crossbar.md``
for the datapath, the exact cycle costs and the one choice it refuses).
"""

from amaranth.hdl import C, Module, Mux, Signal, signed
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .params import ParameterError, check_int

__all__ = ["Crossbar", "EventKind", "ConfigOp", "event_layout", "config_layout"]

_LIF_FIELDS = ("membrane_width", "weight_width", "threshold", "compare", "spike_requires_nonnegative",
               "reset", "overflow", "leak", "leak_amount", "integrate", "fire", "leak_first",
               "input_shift", "refractory")


class EventKind(enum.Enum, shape=1):
    """What an address event means: an input spike on an axon (or an output spike of a neuron),
    or the end of the timestep."""
    SPIKE = 0
    END_OF_STEP = 1


class ConfigOp(enum.Enum, shape=2):
    """Configuration and read-back operations, one neuron group (B neurons) per operation."""
    WRITE_WEIGHTS = 0       # weights[axon, group*B .. group*B+B-1] = data.weights
    WRITE_MEMBRANES = 1     # v[group*B .. group*B+B-1] = data.membranes (and the input sum = 0)
    READ_MEMBRANES = 2      # one readback word: v[group*B .. group*B+B-1]


def event_layout(ids: int, name: str) -> data.StructLayout:
    """``{kind, <name>}``: an address event on ``ids`` axons or neurons."""
    return data.StructLayout({"kind": EventKind, name: range(ids)})


def config_layout(axons: int, neurons: int, banks: int, membrane_width: int,
                  weight_width: int) -> data.StructLayout:
    """``{op, axon, group, data}``: ``data`` holds B weights or B membranes of one group."""
    return data.StructLayout({
        "op": ConfigOp,
        "axon": range(axons),
        "group": range(neurons // banks),
        "data": data.UnionLayout({
            "weights": data.ArrayLayout(signed(weight_width), banks),
            "membranes": data.ArrayLayout(signed(membrane_width), banks),
        }),
    })


def _check_params(params):
    missing = [name for name in _LIF_FIELDS if not hasattr(params, name)]
    if missing:
        raise ParameterError(f"Crossbar: params={params!r} is not a LifParams (it lacks "
                             f"{', '.join(missing)}); pass hw.lif_params.tinyodin(), loihi() or a "
                             f"LifParams")
    if params.refractory != 0:
        raise ParameterError(f"Crossbar: refractory={params.refractory} is not supported by the RTL "
                             f"(neither preset uses a refractory period); use refractory=0")
    return params


class Crossbar(wiring.Component):
    """A synaptic crossbar tile: ``axons`` x ``neurons`` signed weights and LIF neurons.

    The neurons are split over ``banks`` banks: neuron ``n`` lives in bank ``n % banks``, group
    ``n // banks``. Every input event is one *pass* over the ``neurons // banks`` groups, one
    group (``banks`` neurons) per cycle: read the group's weights of the event's axon and its
    membranes, update them, write the membranes back, and hand the group's spikes to the output.
    The end-of-timestep event is one more pass (leak, the step's input sum if the integration is
    per step, compare, reset); after its spikes the tile emits ``END_OF_STEP``.

    Spikes leave in the model's order: per update (each input event with ``fire="event"``, then
    the end of the step), ascending neuron ids.

    Stream rules (``lib.stream``): a transfer happens in a cycle with ``valid`` and ``ready``
    high; ``valid`` and the payload hold until then. ``o`` may be back-pressured without limit:
    the pass waits (nothing is lost) whenever a group with spikes finds the output still busy.

    Configuration (``config``/``readback``) is served only while no pass is in flight, and takes
    priority over ``i`` then. Weights and membranes live in ``lib.memory`` memories, which reset
    does not clear: write every weight and membrane before the first event.

    Parameters
    ----------
    params : hw.lif_params.LifParams
        The neuron arithmetic (generation-time: threshold, leak and widths are constants).
        ``refractory=1`` is refused.
    axons, neurons, banks : int
        Crossbar size; ``banks`` must divide ``neurons``.

    Members
    -------
    i : In(stream.Signature(event_layout(axons, "axon")))
        Input address events.
    o : Out(stream.Signature(event_layout(neurons, "neuron")))
        Output spikes (neuron ids), then ``END_OF_STEP`` once per input ``END_OF_STEP``.
    config : In(stream.Signature(config_layout(...)))
        Weight and membrane writes, membrane read requests.
    readback : Out(stream.Signature(data.ArrayLayout(signed(membrane_width), banks)))
        One word per ``READ_MEMBRANES``, in request order.
    """

    def __init__(self, params, *, axons: int, neurons: int, banks: int = 1):
        self.params = _check_params(params)
        self.axons = check_int("Crossbar", "axons", axons, minimum=1, meaning="number of input axons")
        self.neurons = check_int("Crossbar", "neurons", neurons, minimum=1, meaning="number of neurons")
        self.banks = check_int("Crossbar", "banks", banks, minimum=1,
                               meaning="neurons updated in parallel per cycle")
        if neurons % banks:
            raise ParameterError(f"Crossbar: banks={banks} does not divide neurons={neurons}; "
                                 f"choose banks among the divisors of {neurons}")
        self.groups = neurons // banks
        mw, ww = params.membrane_width, params.weight_width
        super().__init__({
            "i": In(stream.Signature(event_layout(axons, "axon"))),
            "o": Out(stream.Signature(event_layout(neurons, "neuron"))),
            "config": In(stream.Signature(config_layout(axons, neurons, banks, mw, ww))),
            "readback": Out(stream.Signature(data.ArrayLayout(signed(mw), banks))),
        })

    @property
    def sum_width(self) -> int:
        """Bits of the per-step input sum (``integrate="step"``): the model refuses steps whose
        sum, shifted by ``input_shift``, leaves the membrane range, so this width holds every
        accepted sum exactly and partial sums may wrap."""
        return self.params.membrane_width - self.params.input_shift

    def describe(self) -> dict:
        return {"axons": self.axons, "neurons": self.neurons, "banks": self.banks,
                **{name: getattr(self.params, name) for name in _LIF_FIELDS}}

    # --- the neuron arithmetic, one bank ------------------------------------------------------

    def _overflow(self, value):
        p = self.params
        if p.overflow == "wrap":
            return value.as_signed()[:p.membrane_width].as_signed()
        v_max = (1 << (p.membrane_width - 1)) - 1
        v_min = -v_max if p.overflow == "saturate_symmetric" else -v_max - 1
        return Mux(value > v_max, v_max, Mux(value < v_min, v_min, value))

    def _leak(self, m, v):
        p = self.params
        amount = p.leak_amount
        if p.leak == "shift":
            return v - (v >> amount)
        if p.leak == "step":
            return Mux(v > 0, Mux(v > amount, v - amount, 0), Mux(v < -amount, v + amount, 0))
        if p.leak == "multiply":
            product = Signal(signed(p.membrane_width + 14))
            m.d.comb += product.eq(v * C(4096 - amount, signed(14)))
            # Truncation toward zero: a negative product rounds up, i.e. (p + 4095) >> 12.
            return Mux(product < 0, (product + 4095) >> 12, product >> 12)
        return v

    def _fire(self, v):
        """``(spiked, v after reset)`` for a membrane value in range."""
        p = self.params
        threshold = C(p.threshold, signed(p.membrane_width + 1))
        hit = (v >= threshold) if p.compare == ">=" else (v > threshold)
        if p.spike_requires_nonnegative:
            hit = hit & (v >= 0)
        after = C(0, signed(p.membrane_width)) if p.reset == "zero" else v - threshold
        return hit, Mux(hit, after, v)

    # --- the tile -----------------------------------------------------------------------------

    def elaborate(self, platform):
        m = Module()
        p, B, G = self.params, self.banks, self.groups
        mw = p.membrane_width
        per_step = p.integrate == "step"
        neuron_state = data.StructLayout({"v": signed(mw), **({"sum": signed(self.sum_width)}
                                                              if per_step else {})})

        m.submodules.weights = weights = Memory(
            shape=data.ArrayLayout(signed(p.weight_width), B), depth=self.axons * G, init=[])
        m.submodules.state = state = Memory(shape=data.ArrayLayout(neuron_state, B), depth=G, init=[])
        weight_write = weights.write_port()
        weight_read = weights.read_port(domain="sync")
        state_write = state.write_port()
        # With one group a pass reads the word the previous pass writes in the same cycle.
        state_read = state.read_port(domain="sync", transparent_for=(state_write,) if G == 1 else ())

        # Issue stage: the pass in progress, one group read per cycle.
        active = Signal()
        kind = Signal(EventKind)
        axon = Signal(range(self.axons))
        group = Signal(range(G))
        # Update stage: the group whose words the memories' read ports now show.
        loaded = Signal()
        loaded_kind = Signal(EventKind)
        loaded_group = Signal(range(G))
        loaded_last = Signal()
        # Output: the spikes of one group, lowest first, then END_OF_STEP if ``emit_end``.
        emit_mask = Signal(B)
        emit_group = Signal(range(G))
        emit_end = Signal()
        reading = Signal()          # a READ_MEMBRANES was issued last cycle

        # --- update stage: B neurons per cycle, combinational from the read ports ------------
        spikes = Signal(B)
        for b in range(B):
            old = state_read.data[b]
            new = state_write.data[b]
            weight = weight_read.data[b]
            with m.If(loaded_kind == EventKind.SPIKE):
                if per_step:
                    m.d.comb += [new.v.eq(old.v), new.sum.eq(old.sum + weight)]     # wraps
                else:
                    v = Signal(signed(mw), name=f"integrated{b}")
                    m.d.comb += v.eq(self._overflow(old.v + (weight << p.input_shift)))
                    if p.fire == "event":
                        hit, after = self._fire(v)
                        m.d.comb += [spikes[b].eq(hit), new.v.eq(after)]
                    else:
                        m.d.comb += new.v.eq(v)
            with m.Else():
                v = Signal(signed(mw), name=f"ended{b}")
                if per_step:
                    total = old.sum << p.input_shift
                    leaked = Signal(signed(mw), name=f"leaked{b}")
                    if p.leak_first:
                        m.d.comb += [leaked.eq(self._leak(m, old.v)), v.eq(self._overflow(leaked + total))]
                    else:
                        m.d.comb += [leaked.eq(self._overflow(old.v + total)), v.eq(self._leak(m, leaked))]
                    m.d.comb += new.sum.eq(0)
                else:
                    m.d.comb += v.eq(self._leak(m, old.v))
                hit, after = self._fire(v)
                m.d.comb += [spikes[b].eq(hit), new.v.eq(after)]

        # --- output: one neuron id per cycle from the emit register --------------------------
        lowest = Signal(range(max(B, 2)))
        for b in reversed(range(B)):
            with m.If(emit_mask[b]):
                m.d.comb += lowest.eq(b)
        has_spikes = emit_mask.any()
        single = (emit_mask & (emit_mask - 1)) == 0
        m.d.comb += [
            self.o.valid.eq(has_spikes | emit_end),
            self.o.payload.kind.eq(Mux(has_spikes, EventKind.SPIKE.value, EventKind.END_OF_STEP.value)),
            self.o.payload.neuron.eq(emit_group * B + lowest),
        ]
        last_beat = self.o.ready & Mux(has_spikes, single & ~emit_end, emit_end)
        emit_free = ~self.o.valid | last_beat
        with m.If(self.o.valid & self.o.ready):
            with m.If(has_spikes):
                m.d.sync += emit_mask.eq(emit_mask & (emit_mask - 1))
            with m.Else():
                m.d.sync += emit_end.eq(0)

        # A group with something to emit waits (memories hold their read words) until the
        # emit register is free; everything behind it waits too.
        ends_step = (loaded_kind == EventKind.END_OF_STEP) & loaded_last
        stall = loaded & (spikes.any() | ends_step) & ~emit_free
        advance = ~stall
        with m.If(loaded & advance):
            m.d.comb += [state_write.en.eq(1), state_write.addr.eq(loaded_group)]
            with m.If(spikes.any() | ends_step):
                m.d.sync += [emit_mask.eq(spikes), emit_group.eq(loaded_group), emit_end.eq(ends_step)]

        # --- issue stage ---------------------------------------------------------------------
        issue = active & advance
        m.d.comb += [
            weight_read.en.eq(advance), weight_read.addr.eq(axon * G + group),
            state_read.en.eq(advance), state_read.addr.eq(group),
        ]
        with m.If(advance):
            m.d.sync += [loaded.eq(issue), loaded_kind.eq(kind), loaded_group.eq(group),
                         loaded_last.eq(group == G - 1)]
        with m.If(issue):
            m.d.sync += group.eq(Mux(group == G - 1, 0, group + 1))
            with m.If(group == G - 1):
                m.d.sync += active.eq(0)

        # --- configuration and read-back, while no pass is in flight -------------------------
        idle = ~active & ~loaded & ~reading
        request = self.config.payload
        # A read waits while the previous read-back word is still on offer.
        read_blocked = self.readback.valid & (request.op == ConfigOp.READ_MEMBRANES)
        m.d.comb += self.config.ready.eq(idle & ~read_blocked)
        configuring = self.config.valid & self.config.ready
        with m.If(configuring):
            with m.Switch(request.op):
                with m.Case(ConfigOp.WRITE_WEIGHTS):
                    m.d.comb += [weight_write.en.eq(1),
                                 weight_write.addr.eq(request.axon * G + request.group),
                                 weight_write.data.eq(request.data.weights)]
                with m.Case(ConfigOp.WRITE_MEMBRANES):
                    m.d.comb += [state_write.en.eq(1), state_write.addr.eq(request.group)]
                    for b in range(B):
                        m.d.comb += state_write.data[b].v.eq(request.data.membranes[b])
                        if per_step:
                            m.d.comb += state_write.data[b].sum.eq(0)
                with m.Case(ConfigOp.READ_MEMBRANES):
                    m.d.comb += state_read.addr.eq(request.group)
                    m.d.sync += reading.eq(1)
        with m.If(reading):
            m.d.sync += [reading.eq(0), self.readback.valid.eq(1)]
            for b in range(B):
                m.d.sync += self.readback.payload[b].eq(state_read.data[b].v)
        with m.Elif(self.readback.ready):
            m.d.sync += self.readback.valid.eq(0)

        # --- accept an input event: when idle, or as the current pass issues its last group ---
        m.d.comb += self.i.ready.eq(~configuring & ~self.config.valid & ~reading
                                    & (~active | (issue & (group == G - 1))))
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [active.eq(1), kind.eq(self.i.payload.kind), axon.eq(self.i.payload.axon),
                         group.eq(0)]
        return m

