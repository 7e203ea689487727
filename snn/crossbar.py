"""The crossbar tile FU: A axons x N leaky integrate-and-fire neurons over block RAM, B banks.

The neuron arithmetic is specified by ``snn.lif_model.LifCrossbarModel``; its parameters are
``snn.lif_params.LifParams``. This module implements it bit for bit (see ``docs/crossbar.md``
for the datapath, the exact cycle costs and the one choice it refuses).
"""

from amaranth.hdl import C, Module, Mux, Signal, signed
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.params import ParameterError, check_int

__all__ = ["Crossbar", "EventKind", "ConfigOp", "event_layout", "config_layout", "WRITE_DISTANCE",
           "END_LATENCY", "OUTPUT_SLOTS"]

# A group issued (its words addressed) in cycle t is in the memories' read registers in t + 1,
# in the `integrate` and `fire` registers in t + 2 and t + 3, and written back at the end of
# t + 3: a pass may read a group again no sooner than WRITE_DISTANCE cycles after the pass
# before it did, which caps a pass at one per WRITE_DISTANCE cycles when N/B is smaller.
WRITE_DISTANCE = 3
# An END_OF_STEP is offered this many cycles after its pass issued its last group: the three
# update stages, then the output queue's head register.
END_LATENCY = WRITE_DISTANCE + 1
# Output queue entries (one group's spike mask each): one per group the three update stages can
# hold, which a pass reserves when it issues the group, and three more so that a pass goes on
# while earlier groups' spikes leave.
OUTPUT_SLOTS = 6

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
                             f"{', '.join(missing)}); pass snn.lif_params.tinyodin(), loihi() or a "
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

    The update is pipelined so that no cycle holds more than one carry chain or the multiply
    (the tile's Fmax had been set by doing all of it in one): ``read`` (the memories' read
    registers: the input add, or the leak's multiply), ``integrate`` (the rest of the leak, the
    step's input sum) and ``fire`` (overflow, compare, reset, the write back). A group is
    written :data:`WRITE_DISTANCE` cycles after it was read, so with fewer groups than that a
    pass waits for the pass ahead of it.

    Spikes leave in the model's order: per update (each input event with ``fire="event"``, then
    the end of the step), ascending neuron ids.

    Stream rules (``lib.stream``): a transfer happens in a cycle with ``valid`` and ``ready``
    high; ``valid`` and the payload hold until then. ``o`` may be back-pressured without limit:
    spikes wait in a queue of :data:`OUTPUT_SLOTS` groups, and a group is read only while the
    queue holds a slot for it and for every group ahead of it in the pipeline, so the pass
    waits (nothing is lost) without ``o.ready`` reaching the memories or the update.

    Configuration (``config``/``readback``) is served only while no pass is in flight, and takes
    priority over ``i`` then. Weights and membranes live in ``lib.memory`` memories, which reset
    does not clear: write every weight and membrane before the first event.

    Parameters
    ----------
    params : snn.lif_params.LifParams
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
        return Mux(value > p.v_max, p.v_max, Mux(value < p.v_min, p.v_min, value))

    def _leak_begin(self, v):
        """The part of the leak that gets a stage of its own: the multiply (for the others, ``v``)."""
        p = self.params
        if p.leak == "multiply":
            return v * C(4096 - p.leak_amount, signed(14))
        return v

    def _leak_end(self, begun):
        """The rest of the leak, from :meth:`_leak_begin`'s result."""
        p = self.params
        amount = p.leak_amount
        if p.leak == "shift":
            return begun - (begun >> amount)
        if p.leak == "step":
            return Mux(begun > 0, Mux(begun > amount, begun - amount, 0),
                       Mux(begun < -amount, begun + amount, 0))
        if p.leak == "multiply":
            # Truncation toward zero: a negative product rounds up, i.e. (p + 4095) >> 12.
            return Mux(begun < 0, (begun + 4095) >> 12, begun >> 12)
        return begun

    def _hit(self, v):
        """Whether ``v`` spikes (a Value, or a Python int for a constant)."""
        p = self.params
        hit = (v >= p.threshold) if p.compare == ">=" else (v > p.threshold)
        if p.spike_requires_nonnegative:
            hit = hit & (v >= 0)
        return hit

    def _overflow_and_fire(self, m, raw, name):
        """``(spiked, v, v after reset)`` from an integrated value before the overflow rule:
        ``v`` is the value after the rule, ``spiked`` its compare.

        With a saturating rule the compare looks at ``raw`` itself, beside the saturation
        rather than after it: the threshold lies inside the range, so a value beyond one end
        compares as that end does. The two carry chains then run side by side.
        """
        p = self.params
        v = Signal(signed(p.membrane_width), name=name)
        m.d.comb += v.eq(self._overflow(raw))
        if p.overflow == "wrap":
            hit = self._hit(v)
        else:
            hit = Mux(raw > p.v_max, int(self._hit(p.v_max)),
                      Mux(raw < p.v_min, int(self._hit(p.v_min)), self._hit(raw)))
        after = C(0, signed(p.membrane_width)) if p.reset == "zero" else v - p.threshold
        return hit, v, Mux(hit, after, v)

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
        # With G <= WRITE_DISTANCE groups a pass may read a group in the very cycle the previous
        # pass writes it (see the hazard below); the transparent port then returns the new word.
        state_read = state.read_port(domain="sync",
                                     transparent_for=(state_write,) if G <= WRITE_DISTANCE else ())

        # Issue stage: the pass in progress, one group read per cycle.
        active = Signal()
        kind = Signal(EventKind)
        axon = Signal(range(self.axons))
        group = Signal(range(G))
        # The group in each update stage: its words in the memories' read registers (`read`),
        # then in the two pipeline registers (`integrate`, `fire`).
        stage = data.StructLayout({"valid": 1, "kind": EventKind, "group": range(G), "last": 1})
        read_stage, integrate_stage, fire_stage = (Signal(stage, name=f"{name}_stage")
                                                   for name in ("read", "integrate", "fire"))
        reading = Signal()          # a READ_MEMBRANES was issued last cycle

        # --- update, stage 1 (read): the input add, or the leak's multiply -----------------
        # Each stage's results are registered; a value that reaches `fire` is the membrane
        # before the overflow rule, which `fire` applies (on a value already in range it is
        # the identity).
        raw_width = max(mw, p.weight_width + p.input_shift) + 1
        begun_width = len(self._leak_begin(C(0, signed(mw))))
        integrate_layout = data.StructLayout({
            # v + input, v (a per-step spike pass), or _leak_begin(v) (an end-of-step pass)
            "value": signed(max(raw_width, begun_width)),
            # a spike pass: the new input sum; an end-of-step pass: the step's sum
            **({"sum": signed(self.sum_width)} if per_step else {}),
        })
        fire_layout = data.StructLayout({"raw": signed(raw_width),
                                         **({"sum": signed(self.sum_width)} if per_step else {})})
        integrating = Signal(data.ArrayLayout(integrate_layout, B))
        firing = Signal(data.ArrayLayout(fire_layout, B))
        for b in range(B):
            old, weight, into = state_read.data[b], weight_read.data[b], integrating[b]
            with m.If(read_stage.kind == EventKind.SPIKE):
                if per_step:
                    m.d.sync += [into.value.eq(old.v), into.sum.eq(old.sum + weight)]   # wraps
                else:
                    m.d.sync += into.value.eq(old.v + (weight << p.input_shift))
            with m.Else():
                if per_step:
                    m.d.sync += into.sum.eq(old.sum)
                if per_step and not p.leak_first:
                    m.d.sync += into.value.eq(old.v + (old.sum << p.input_shift))
                else:
                    m.d.sync += into.value.eq(self._leak_begin(old.v))

        # --- update, stage 2 (integrate): the rest of the leak, the step's input -------------
        for b in range(B):
            held, into = integrating[b], firing[b]
            with m.If(integrate_stage.kind == EventKind.SPIKE):
                m.d.sync += into.raw.eq(held.value)
                if per_step:
                    m.d.sync += into.sum.eq(held.sum)
            with m.Else():
                if per_step and p.leak_first:
                    m.d.sync += into.raw.eq(self._leak_end(held.value) + (held.sum << p.input_shift))
                elif per_step:
                    m.d.sync += into.raw.eq(self._leak_end(self._leak_begin(self._overflow(held.value))))
                else:
                    m.d.sync += into.raw.eq(self._leak_end(held.value))
                if per_step:
                    m.d.sync += into.sum.eq(0)

        # --- update, stage 3 (fire): overflow, compare and reset, the state write ------------
        spikes = Signal(B)
        fires = fire_stage.kind == EventKind.END_OF_STEP
        if p.fire == "event" and not per_step:
            fires = C(1)
        for b in range(B):
            held, new = firing[b], state_write.data[b]
            hit, v, after = self._overflow_and_fire(m, held.raw, f"updated{b}")
            if per_step:
                m.d.comb += new.sum.eq(held.sum)
            m.d.comb += [spikes[b].eq(fires & hit), new.v.eq(Mux(fires, after, v))]
        with m.If(fire_stage.valid):
            m.d.comb += [state_write.en.eq(1), state_write.addr.eq(fire_stage.group)]

        m.d.sync += [integrate_stage.eq(read_stage), fire_stage.eq(integrate_stage)]

        # --- output: a queue of groups' spike masks, one neuron id per cycle from its head ----
        # A ring of OUTPUT_SLOTS entries. `fire` writes every group into the slot after the
        # last, and keeps it (moves `write_at` on) only if it has spikes or ends the step, so
        # that the compare reaches just the pointer and the count, not the slots' enables.
        entry = data.StructLayout({"mask": B, "group": range(G), "end": 1})
        slots = Signal(data.ArrayLayout(entry, OUTPUT_SLOTS))
        write_at = Signal(range(OUTPUT_SLOTS))
        read_at = Signal(range(OUTPUT_SLOTS))
        count = Signal(range(OUTPUT_SLOTS + 1))
        sent = Signal(B)                        # the head's ids already sent
        head = slots[read_at]
        left = Signal(B)                        # the head's ids still to send
        m.d.comb += left.eq(head.mask & ~sent)
        lowest = Signal(range(max(B, 2)))
        for b in reversed(range(B)):
            with m.If(left[b]):
                m.d.comb += lowest.eq(b)
        has_spikes = left.any()
        rest = left & (left - 1)                # `left` without its lowest id
        m.d.comb += [
            self.o.valid.eq(count != 0),
            self.o.payload.kind.eq(Mux(has_spikes, EventKind.SPIKE.value, EventKind.END_OF_STEP.value)),
            self.o.payload.neuron.eq(head.group * B + lowest),
        ]
        beat = self.o.valid & self.o.ready
        pop = beat & (~has_spikes | ((rest == 0) & ~head.end))     # the head's last beat
        with m.If(pop):
            m.d.sync += [sent.eq(0), read_at.eq(Mux(read_at == OUTPUT_SLOTS - 1, 0, read_at + 1))]
        with m.Elif(beat):
            m.d.sync += sent.eq(head.mask & ~rest)
        ends_step = (fire_stage.kind == EventKind.END_OF_STEP) & fire_stage.last
        push = fire_stage.valid & (spikes.any() | ends_step)
        for index in range(OUTPUT_SLOTS):
            with m.If(fire_stage.valid & (write_at == index)):
                m.d.sync += [slots[index].mask.eq(spikes), slots[index].group.eq(fire_stage.group),
                             slots[index].end.eq(ends_step)]
        with m.If(push):
            m.d.sync += write_at.eq(Mux(write_at == OUTPUT_SLOTS - 1, 0, write_at + 1))
        m.d.sync += count.eq(count + push - pop)

        # --- issue stage ---------------------------------------------------------------------
        # Credits: every group in flight may still need a slot (its spikes are not known until
        # `fire`), so a group issues only if the queue holds a slot for it and for them. The
        # issue therefore never waits on `o.ready` combinationally, and the update stages never
        # stall. `room` is registered, so the issue (and `i.ready`) waits on no adder: it is
        # computed a cycle early, as if that cycle issued a group and nothing left the queue.
        in_flight = read_stage.valid + integrate_stage.valid + fire_stage.valid
        room = Signal(init=1)
        m.d.sync += room.eq(count + in_flight + 1 < OUTPUT_SLOTS)
        # Read after write: the previous pass writes a group WRITE_DISTANCE cycles after it read
        # it. With fewer groups than that the next pass comes back to a group still in
        # `read` or `integrate`, and waits; one in `fire` is being written, which the
        # transparent read port forwards.
        hazard = C(0)
        if G < WRITE_DISTANCE:
            hazard = ((read_stage.valid & (read_stage.group == group))
                      | (integrate_stage.valid & (integrate_stage.group == group)))
        issue = active & room & ~hazard
        m.d.comb += [
            weight_read.addr.eq(axon * G + group),
            state_read.addr.eq(group),
        ]
        m.d.sync += [read_stage.valid.eq(issue), read_stage.kind.eq(kind), read_stage.group.eq(group),
                     read_stage.last.eq(group == G - 1)]
        with m.If(issue):
            m.d.sync += group.eq(Mux(group == G - 1, 0, group + 1))
            with m.If(group == G - 1):
                m.d.sync += active.eq(0)

        # --- configuration and read-back, while no pass is in flight -------------------------
        idle = ~active & ~read_stage.valid & ~integrate_stage.valid & ~fire_stage.valid & ~reading
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

