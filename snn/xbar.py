"""The ``xbar`` functional unit: a synaptic crossbar tile (``snn.crossbar.Crossbar``) on the RSN.

Address events (AER) travel as data words on the fabric's streams (:func:`aer_word`):

    bit 0         kind: 0 a spike, 1 the end of a timestep
    bits 1 ..     the id: on an input, the sender's neuron (or host input) id; on the output,
                  this tile's neuron id. An end-of-step word is exactly ``1``.

Semantics (the RTL :class:`XbarFu` and the golden model :class:`XbarModel` both follow them),
per micro-op (:data:`XbarUop`): ``steps`` timesteps, each of them

* for every input ``k`` enabled in ``inputs``, in port order 0, 1, 2: take words from ``i[k]``;
  a spike with id ``n`` is the input event on axon ``base[k] + n``; the end-of-step word ends
  that input's part of the step (it is consumed, not forwarded). So a tile merges up to three
  spike streams in a fixed order, and each input's ``base`` translates its sender's ids into
  this tile's axons;
* then the end of the timestep (leak, compare, reset).

An input ``k`` marked in ``delayed`` is one timestep late, for recurrent connections (a cluster
that hears its own or a later cluster's spikes): it is not read in the micro-op's first
timestep, so step t integrates the sender's step t - 1, and after the last timestep its
remaining step (the sender's last) is read up to its end-of-step word and dropped. The micro-op
therefore consumes every word its senders emit, ``steps`` timesteps per input.

The neuron arithmetic is ``snn.lif_model.LifCrossbarModel``'s with the fabric's parameters. On
``o[0]`` the unit emits the step's spikes in the model's order, then one end-of-step word, per
timestep. An axon ``base[k] + n`` outside the crossbar is a program error (the model raises; the
RTL keeps the axon field's low bits). ``steps == 0`` is refused by the checks (the RTL runs
65536). The next micro-op is accepted once the previous one has emitted its last word.

Timing (``snn.cost``, ``docs/crossbar.md``): the crossbar takes an input spike every
``max(N/B, 3)`` cycles (one pass over its N/B neuron groups; a pass waits for the one ahead to
write a group back, three cycles after reading it), and the end of a timestep is one more pass;
its end-of-step word is offered :data:`LATENCY` = 4 cycles after that pass issued its last group
(three update stages, then the output queue's head). The merge adds a cycle per input's
end-of-step word.

Status: ``firings`` counts words sent on ``o[0]``; ``busy`` is high from accepting a micro-op
until its last end-of-step word has left; ``stalls`` counts busy cycles in which no word moved
on any data port; ``finished`` rises the cycle after the last word of a ``last`` micro-op left.

Control plane (:class:`XbarAddressMap`; register writes and reads are 32 bits): weights and
membranes are written one 32-bit word at a time and committed to the crossbar a neuron group (B
neurons) at a time, so an image writes every word of a group in ascending address order:

* weight words at ``((axon << gbits) | group) << kbits | k``: the group's B weights packed from
  bank 0 at bit 0 (two's complement, ``weight_width`` bits each), cut into ``K`` 32-bit words,
  least significant first; writing word ``K - 1`` commits the group;
* membrane words at ``membrane_base + (group << bbits) + b``: neuron ``group * B + b``'s
  membrane in the low bits; writing ``b = B - 1`` commits the group (and clears its per-step
  input sum);
* a write of ``g`` to ``latch_address`` copies group ``g``'s membranes into the read latch;
  a read of ``membrane_base + (group << bbits) + b`` returns the latch's bank ``b``,
  sign-extended to 32 bits (whatever group was latched last). Other reads return 0.

The crossbar serves configuration only while no pass is in flight, so the control plane may
touch an ``xbar`` tile only while it is idle: before its first micro-op (the image's writes come
first) and after ``done`` (the membrane read-back). A latch takes 4 cycles, less than a READ
packet takes to reach the tile behind the WRITE that asks for it.
"""

import dataclasses
from dataclasses import dataclass
from math import ceil

import numpy as np
from amaranth.hdl import C, Cat, Module, Mux, Signal, signed
from amaranth.lib import data, wiring
from amaranth.utils import ceil_log2

from hw.params import ParameterError, check_int
from rsn.channels import Channel, UnitModel
from rsn.fu import FuKind, KindParameters, count_status, fu_signature
from rsn.isa import REGISTERS, padded_uop

from .crossbar import END_LATENCY, ConfigOp, Crossbar, EventKind
from .lif_model import LifCrossbarModel
from .lif_params import LifParams, loihi, tinyodin

__all__ = ["XbarFu", "XbarModel", "XbarAddressMap", "XbarUop", "XbarParameters", "XBAR_KIND", "LATENCY",
           "END_WORD", "aer_word", "aer_decode", "aer_width", "xbar_params", "PRESETS", "STORAGE_WORDS"]

XbarUop = padded_uop({
    "steps": 16,                # timesteps: per step, each enabled input until its end-of-step word
    "inputs": 3,                # bit k: input i[k] takes part, read in port order 0, 1, 2
    "base": data.ArrayLayout(12, 3),    # axon of id 0 on input k (axon = base[k] + id)
    "delayed": 3,               # bit k: input k is one timestep late (skipped in step 0, drained after)
    "last": 1,
})

LATENCY = END_LATENCY       # an end-of-step leaves 4 cycles after the step's last group issued
END_WORD = 1
PRESETS = ("tinyodin", "loihi")
STORAGE_WORDS = REGISTERS["firings"] - REGISTERS["storage"]     # the FU's register window
_BASE_BITS = 12


def aer_word(ident: int, end: bool = False) -> int:
    """The data word of a spike of ``ident`` (or, with ``end``, the end-of-step word)."""
    return END_WORD if end else ident << 1


def aer_decode(word: int) -> tuple[bool, int]:
    """``(is_end, id)`` of a data word."""
    return bool(word & 1), word >> 1


def aer_width(ids: int) -> int:
    """Data bits needed to carry ids ``0 .. ids - 1`` and the kind bit."""
    return 1 + max(1, ceil_log2(ids))


def xbar_params(preset: str = "tinyodin", weight_width: int | None = None, threshold: int | None = None,
                leak: int = 0) -> LifParams:
    """The ``LifParams`` of a fabric's xbar tiles: a preset, its weight width, threshold and leak.

    ``threshold`` is in the preset's own unit (tinyODIN's membrane units, Loihi's ``vth``) and
    ``leak`` is tinyODIN's ``leak_amount`` or Loihi's ``dv``; None keeps the preset's default.
    Raises ValueError naming the value.
    """
    if preset not in PRESETS:
        raise ValueError(f"xbar preset {preset!r} is not one of {', '.join(PRESETS)}")
    if preset == "tinyodin":
        params = tinyodin(leak_amount=leak) if threshold is None else tinyodin(threshold, leak)
    else:
        params = loihi(dv=leak) if threshold is None else loihi(threshold, leak)
    if weight_width is not None and weight_width != params.weight_width:
        params = LifParams(**{**params.__dict__, "weight_width": weight_width})
    if params.membrane_width > 32:
        raise ValueError(f"xbar: membrane_width={params.membrane_width} is wider than the 32-bit "
                         f"control-plane registers")
    return params


class XbarAddressMap:
    """Where an xbar tile's weights, membranes and read latch sit in its register window."""

    def __init__(self, params: LifParams, axons: int, neurons: int, banks: int):
        self.axons, self.neurons, self.banks = axons, neurons, banks
        self.groups = neurons // banks
        self.weight_width, self.membrane_width = params.weight_width, params.membrane_width
        self.words_per_group = ceil(banks * params.weight_width / 32)              # K
        self.kbits = ceil_log2(self.words_per_group)
        self.gbits = ceil_log2(self.groups)
        self.bbits = ceil_log2(banks)
        self.membrane_base = axons << (self.gbits + self.kbits)
        self.latch_address = self.membrane_base + (self.groups << self.bbits)
        if self.latch_address >= STORAGE_WORDS:
            raise ValueError(f"xbar {axons}x{neurons} with {banks} banks needs "
                             f"{self.latch_address + 1} register words, more than the "
                             f"{STORAGE_WORDS} of a tile's storage window; use fewer axons or neurons")

    def weight_address(self, axon: int, group: int, k: int) -> int:
        return (((axon << self.gbits) | group) << self.kbits) | k

    def membrane_address(self, neuron: int) -> int:
        return self.membrane_base + ((neuron // self.banks) << self.bbits) + neuron % self.banks

    def weight_words(self, weights) -> dict[int, int]:
        """Register writes for a whole (axons, neurons) weight matrix, address -> 32-bit word."""
        weights = np.asarray(weights)
        assert weights.shape == (self.axons, self.neurons)
        mask = (1 << self.weight_width) - 1
        words = {}
        for axon in range(self.axons):
            for group in range(self.groups):
                bits = 0
                for b in range(self.banks):
                    bits |= (int(weights[axon, group * self.banks + b]) & mask) << (b * self.weight_width)
                for k in range(self.words_per_group):
                    words[self.weight_address(axon, group, k)] = (bits >> (32 * k)) & 0xFFFF_FFFF
        return words

    def membrane_words(self, membranes) -> dict[int, int]:
        """Register writes for a membrane vector, address -> 32-bit word."""
        return {self.membrane_address(n): int(v) & 0xFFFF_FFFF for n, v in enumerate(membranes)}


def _sign_extend(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


class XbarFu(wiring.Component):
    """The ``xbar`` FU: a :class:`snn.crossbar.Crossbar` behind AER words and the config bus.

    Parameters
    ----------
    width : int
        Data width of the tile's streams; it must carry the kind bit and every id.
    params : LifParams
        The neuron arithmetic (:func:`xbar_params`).
    axons, neurons, banks : int
        Crossbar size, as for ``Crossbar``.
    """

    def __init__(self, width: int = 32, *, params: LifParams | None = None, axons: int = 16,
                 neurons: int = 16, banks: int = 4):
        self._width = check_int("XbarFu", "width", width, minimum=1, meaning="data width in bits")
        self.params = params or xbar_params()
        self.axons, self.neurons, self.banks = axons, neurons, banks
        needed = aer_width(max(axons, neurons))
        if width < needed:
            raise ParameterError(f"XbarFu: width={width} cannot carry an address event of "
                                 f"{axons} axons / {neurons} neurons (kind bit + id = {needed} bits); "
                                 f"use data_width >= {needed}")
        try:
            self.map = XbarAddressMap(self.params, axons, neurons, banks)
        except ValueError as error:
            raise ParameterError(f"XbarFu: {error}") from None
        super().__init__(fu_signature(XBAR_KIND, width))

    def elaborate(self, platform):
        m = Module()
        p, amap, B = self.params, self.map, self.banks
        m.submodules.crossbar = xb = Crossbar(p, axons=self.axons, neurons=self.neurons, banks=B)

        # --- micro-ops and the input merge ---------------------------------------------------
        active = Signal()                   # timesteps still to feed, or delayed inputs to drain
        steps_left = Signal(16)
        inputs = Signal(3)
        delayed = Signal(3)
        base = Signal(data.ArrayLayout(_BASE_BITS, 3))
        last = Signal()
        first = Signal()                    # in the micro-op's first timestep: delayed inputs wait
        draining = Signal()                 # after the last timestep: discard the delayed inputs' step
        port = Signal(range(4))             # the input being read; 3: feed the end of step
        owed = Signal(17)                   # end-of-step events fed, not yet sent on o[0]

        m.d.comb += self.uop.ready.eq(~active & (owed == 0))
        with m.If(self.uop.valid & self.uop.ready):
            m.d.sync += [active.eq(1), steps_left.eq(self.uop.payload.steps),
                         inputs.eq(self.uop.payload.inputs), delayed.eq(self.uop.payload.delayed),
                         base.eq(self.uop.payload.base), last.eq(self.uop.payload.last), port.eq(0),
                         first.eq(1), draining.eq(0)]

        # Input k takes part in this step unless it is off, or delayed and this is the first step;
        # while draining only the delayed inputs do, and their spikes are read and dropped.
        reads = Mux(draining, inputs & delayed, inputs & ~(delayed & first.replicate(3)))
        taken = Signal()
        fed_end = Signal()
        drain_done = Signal()
        with m.If(active):
            with m.Switch(port):
                for k in range(3):
                    with m.Case(k):
                        word = self.i[k].payload
                        with m.If(~reads[k]):
                            m.d.sync += port.eq(k + 1)
                        with m.Elif(word[0] | draining):    # end of this input's part, or dropped
                            m.d.comb += [self.i[k].ready.eq(1), taken.eq(self.i[k].valid)]
                            with m.If(self.i[k].valid & word[0]):
                                m.d.sync += port.eq(k + 1)
                        with m.Else():
                            m.d.comb += [
                                xb.i.valid.eq(self.i[k].valid),
                                xb.i.payload.kind.eq(EventKind.SPIKE),
                                xb.i.payload.axon.eq(base[k] + word[1:]),
                                self.i[k].ready.eq(xb.i.ready),
                                taken.eq(self.i[k].valid & xb.i.ready),
                            ]
                with m.Case(3):
                    with m.If(draining):
                        m.d.comb += drain_done.eq(1)
                        m.d.sync += [active.eq(0), draining.eq(0)]
                    with m.Else():
                        m.d.comb += [xb.i.valid.eq(1), xb.i.payload.kind.eq(EventKind.END_OF_STEP),
                                     fed_end.eq(xb.i.ready)]
                        with m.If(xb.i.ready):
                            m.d.sync += [port.eq(0), steps_left.eq(steps_left - 1), first.eq(0)]
                            with m.If(steps_left == 1):
                                with m.If((inputs & delayed).any()):
                                    m.d.sync += draining.eq(1)
                                with m.Else():
                                    m.d.sync += active.eq(0)

        # --- output: AER words ----------------------------------------------------------------
        out = self.o[0]
        is_end = xb.o.payload.kind == EventKind.END_OF_STEP
        m.d.comb += [
            out.valid.eq(xb.o.valid),
            out.payload.eq(Mux(is_end, END_WORD, Cat(C(0, 1), xb.o.payload.neuron))),
            xb.o.ready.eq(out.ready),
        ]
        sent = out.valid & out.ready
        sent_end = sent & is_end
        m.d.sync += owed.eq(owed + fed_end - sent_end)
        # The micro-op completes when its last end-of-step word has left and nothing is left to
        # read: whichever of the two happens later.
        owed_after = Signal.like(owed)
        m.d.comb += owed_after.eq(owed - sent_end)
        completes = (sent_end & (owed == 1) & ~active) | (drain_done & (owed_after == 0))

        busy = active | (owed != 0)
        m.d.comb += self.busy.eq(busy)
        count_status(m, self, firing=sent, stall=busy & ~taken & ~sent, completes_last=completes & last)

        self._elaborate_config(m, xb, amap)
        return m

    def _elaborate_config(self, m, xb, amap):
        p, B, K = self.params, self.banks, amap.words_per_group
        cfg = self.cfg
        addr = cfg.addr
        in_weights = addr < amap.membrane_base
        in_membranes = (addr >= amap.membrane_base) & (addr < amap.latch_address)
        is_latch = addr == amap.latch_address
        offset = Signal(16)
        m.d.comb += offset.eq(addr - amap.membrane_base)
        k = addr[:amap.kbits]
        group_w = addr[amap.kbits:amap.kbits + amap.gbits]
        axon = addr[amap.kbits + amap.gbits:]
        bank = offset[:amap.bbits]
        group_m = offset[amap.bbits:]

        stage_w = Signal(32 * max(K - 1, 1))
        stage_m = Signal(data.ArrayLayout(signed(p.membrane_width), B))
        request = Signal(xb.config.payload.shape())
        request_valid = Signal()
        m.d.comb += [xb.config.valid.eq(request_valid), xb.config.payload.eq(request)]
        with m.If(xb.config.ready):
            m.d.sync += request_valid.eq(0)

        with m.If(cfg.write & in_weights):
            with m.If(k == K - 1):
                bits = Cat(stage_w[:32 * (K - 1)], cfg.data) if K > 1 else cfg.data
                m.d.sync += [request_valid.eq(1), request.op.eq(ConfigOp.WRITE_WEIGHTS),
                             request.axon.eq(axon), request.group.eq(group_w),
                             request.data.as_value()[:B * p.weight_width].eq(bits[:B * p.weight_width])]
            for index in range(K - 1):
                with m.If(k == index):
                    m.d.sync += stage_w[32 * index:32 * (index + 1)].eq(cfg.data)
        with m.If(cfg.write & in_membranes):
            with m.If(bank == B - 1):
                m.d.sync += [request_valid.eq(1), request.op.eq(ConfigOp.WRITE_MEMBRANES),
                             request.group.eq(group_m)]
                for b in range(B - 1):
                    m.d.sync += request.data.membranes[b].eq(stage_m[b])
                m.d.sync += request.data.membranes[B - 1].eq(cfg.data[:p.membrane_width])
            for b in range(B - 1):
                with m.If(bank == b):
                    m.d.sync += stage_m[b].eq(cfg.data[:p.membrane_width])
        with m.If(cfg.write & is_latch):
            m.d.sync += [request_valid.eq(1), request.op.eq(ConfigOp.READ_MEMBRANES),
                         request.group.eq(cfg.data)]

        latch = Signal(data.ArrayLayout(signed(p.membrane_width), B))
        m.d.comb += xb.readback.ready.eq(1)
        with m.If(xb.readback.valid):
            m.d.sync += latch.eq(xb.readback.payload)
        read_done = Signal()
        read_bank = Signal(range(B + 1))
        m.d.sync += [read_done.eq(cfg.read & in_membranes), read_bank.eq(Mux(bank < B, bank, B))]
        with m.If(read_done):
            with m.Switch(read_bank):
                for b in range(B):
                    with m.Case(b):
                        m.d.comb += cfg.rdata.eq(latch[b])      # sign-extends to 32 bits


class XbarModel(UnitModel):
    """Golden model of the ``xbar`` FU, from the module docstring, on ``LifCrossbarModel``.

    One :meth:`step` moves one word: it sends the next queued output word if it can, otherwise
    takes the next input word of the current timestep; when a timestep's inputs are complete it
    runs the timestep on the crossbar model and queues its spikes and end-of-step word.
    """

    KIND, COUNT_FIELD = "xbar", "steps"

    def __init__(self, width: int = 32, *, params: LifParams | None = None, axons: int = 16,
                 neurons: int = 16, banks: int = 4):
        super().__init__()
        self.width = width
        self.params = params or xbar_params()
        self.map = XbarAddressMap(self.params, axons, neurons, banks)
        self.crossbar = LifCrossbarModel(np.zeros((axons, neurons), dtype=np.int64), self.params)
        self.steps_left = 0
        self.port = 0
        self.events: list[int] = []
        self.pending: list[int] = []        # output words of the last timestep, not yet sent
        self.first = self.draining = False
        self.latch = [0] * banks
        self._stage_w = [0] * self.map.words_per_group
        self._stage_m = [0] * banks

    @property
    def busy(self) -> bool:
        return self.current is not None or bool(self.uops) or bool(self.pending)

    def clear(self):
        self.firings = 0
        self.finished = False

    # --- control plane ------------------------------------------------------------------------

    def write_word(self, addr: int, value: int):
        amap, value = self.map, value & 0xFFFF_FFFF
        if addr < amap.membrane_base:
            k = addr & ((1 << amap.kbits) - 1)
            group = (addr >> amap.kbits) & ((1 << amap.gbits) - 1)
            axon = addr >> (amap.kbits + amap.gbits)
            self._stage_w[k] = value
            if k == amap.words_per_group - 1 and axon < amap.axons and group < amap.groups:
                bits = sum(word << (32 * index) for index, word in enumerate(self._stage_w))
                for b in range(amap.banks):
                    self.crossbar.weights[axon, group * amap.banks + b] = _sign_extend(
                        bits >> (b * amap.weight_width), amap.weight_width)
        elif addr < amap.latch_address:
            offset = addr - amap.membrane_base
            group, bank = offset >> amap.bbits, offset & ((1 << amap.bbits) - 1)
            if bank >= amap.banks:
                return
            self._stage_m[bank] = _sign_extend(value, amap.membrane_width)
            if bank == amap.banks - 1 and group < amap.groups:
                self.crossbar.v[group * amap.banks:(group + 1) * amap.banks] = self._stage_m
        elif addr == amap.latch_address:
            group = value % (1 << amap.gbits) if amap.gbits else 0
            if group < amap.groups:
                self.latch = [int(v) for v in self.crossbar.v[group * amap.banks:(group + 1) * amap.banks]]

    def read_word(self, addr: int) -> int:
        amap = self.map
        if amap.membrane_base <= addr < amap.latch_address:
            bank = (addr - amap.membrane_base) & ((1 << amap.bbits) - 1)
            if bank < amap.banks:
                return self.latch[bank] & 0xFFFF_FFFF
        return 0

    def membranes(self) -> list[int]:
        return [int(v) for v in self.crossbar.v]

    # --- data plane ---------------------------------------------------------------------------

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        if self.pending:
            if not outputs[0].can_push():
                return False
            outputs[0].push(self.pending.pop(0))
            self.firings += 1
            if not self.pending and self.current is None and self._closing:
                self.finished = True
            return True
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.steps_left, self.port, self.events = self.current["steps"], 0, []
            self.first, self.draining = True, False
        uop = self.current
        while self.port < 3 and not self._reads(uop, self.port):
            self.port += 1
        if self.port < 3:
            channel = inputs[self.port]
            if not channel.can_pop():
                return False
            is_end, ident = aer_decode(channel.pop())
            if is_end:
                self.port += 1
            elif not self.draining:
                self.events.append(uop["base"][self.port] + ident)
            if self.port < 3:
                return True
        if self.draining:                       # the delayed inputs' last step is read and dropped
            self._end_uop(uop)
            return True
        spikes, _ = self.crossbar.step(self.events)
        self.pending = [aer_word(int(n)) for n in spikes] + [END_WORD]
        self.port, self.events, self.first = 0, [], False
        self.steps_left -= 1
        if self.steps_left == 0:
            if uop["inputs"] & uop["delayed"]:
                self.draining = True
            else:
                self._end_uop(uop)
        return True

    def _reads(self, uop, k: int) -> bool:
        """Input ``k`` takes part now: enabled, and delayed ones not in the first step; while
        draining, only the delayed ones."""
        enabled, delayed = uop["inputs"] >> k & 1, uop["delayed"] >> k & 1
        if self.draining:
            return bool(enabled and delayed)
        return bool(enabled and not (delayed and self.first))

    def _end_uop(self, uop):
        self._closing = bool(uop["last"])
        self.current, self.draining = None, False
        if not self.pending and self._closing:
            self.finished = True

    _closing = False


def _int_in(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}={value!r} is not allowed; use an integer {low}..{high}")
    return value


@dataclass(frozen=True)
class XbarParameters(KindParameters):
    """The ``[xbar]`` table of a fabric description: crossbar size and neuron arithmetic, the same
    for every xbar tile."""
    axons: int = 16
    neurons: int = 16
    banks: int = 4                      # neurons updated per cycle; divides neurons
    preset: str = "tinyodin"            # tinyodin (12-bit membrane, 4-bit weights) or loihi
    weight_width: int | None = None     # None: the preset's
    threshold: int | None = None        # None: the preset's (tinyODIN membrane units, Loihi vth)
    leak: int = 0                       # tinyODIN leak_amount or Loihi dv

    @property
    def lif_params(self) -> LifParams:
        """The ``LifParams`` of this fabric's xbar tiles."""
        return xbar_params(self.preset, self.weight_width, self.threshold, self.leak)

    def check(self):
        if self.preset not in PRESETS:
            raise ValueError(f"preset={self.preset!r} is not allowed; use one of {', '.join(PRESETS)}")
        _int_in("axons", self.axons, 1, 4096)
        _int_in("neurons", self.neurons, 1, 4096)
        _int_in("banks", self.banks, 1, self.neurons)
        if self.neurons % self.banks:
            raise ValueError(f"banks={self.banks} does not divide neurons={self.neurons}; choose a "
                             f"divisor of {self.neurons}")
        if self.weight_width is not None:
            _int_in("weight_width", self.weight_width, 2, 32)
        if self.threshold is not None:
            _int_in("threshold", self.threshold, 0, (1 << 17) - 1)
        _int_in("leak", self.leak, 0, 4095)
        XbarAddressMap(self.lif_params, self.axons, self.neurons, self.banks)

    def check_fabric(self, spec):
        ids = max(self.axons, self.neurons)
        if spec.data_width < aer_width(ids):
            raise ValueError(f"data_width={spec.data_width} cannot carry an xbar address event (kind "
                             f"bit + id of {ids} axons/neurons = {aer_width(ids)} bits); raise "
                             f"data_width or shrink the crossbar")

    def rtl_arguments(self):
        return {"params": self.lif_params, "axons": self.axons, "neurons": self.neurons,
                "banks": self.banks}


def _late_inputs(uops) -> frozenset:
    """An input marked ``delayed`` is not read in the first timestep, so its sender's tokens are
    not waited for at the start: a cycle through it is a recurrence."""
    delayed = uops[0].get("delayed", 0) if uops else 0
    return frozenset(port for port in range(3) if delayed >> port & 1)


# `rivulet generate xbar` limits, keeping elaboration within seconds (1024 x 1024 took 10 s and
# 560 MB): axons and neurons as a fabric's [xbar] table allows, at most 2^20 synapses together.
MAX_IDS = 4096
MAX_SYNAPSES = 1 << 20
MAX_BANKS = 64


def _generator():
    from hw.catalog import Budget, Generator, Parameter
    return Generator(
        "xbar", "SNN crossbar tile: axons x neurons signed weights and LIF neurons in block RAM",
        (Parameter("axons", int, 128, f"number of input axons, 1..{MAX_IDS}", minimum=1, maximum=MAX_IDS),
         Parameter("neurons", int, 128, f"number of LIF neurons, 1..{MAX_IDS} (and axons x neurons "
                   f"<= {MAX_SYNAPSES})", minimum=1, maximum=MAX_IDS),
         Parameter("banks", int, 8, f"neurons updated per cycle, 1..{MAX_BANKS}; must divide neurons",
                   minimum=1, maximum=MAX_BANKS),
         Parameter("preset", str, "tinyodin", "neuron arithmetic: tinyodin or loihi", PRESETS),
         Parameter("weight_width", int, 4, "signed weight width in bits (4 or 8 typical), 2..32",
                   minimum=2, maximum=32)),
        _crossbar,
        (Budget(("axons", "neurons"), MAX_SYNAPSES, "synapses", "the weight memory"),))


def _crossbar(axons: int, neurons: int, banks: int, preset: str, weight_width: int) -> Crossbar:
    """A crossbar tile with a preset's neuron arithmetic at its default threshold and leak: the
    presets the golden model, the tile's specification, is tested with."""
    params = tinyodin() if preset == "tinyodin" else loihi()
    if weight_width > params.membrane_width:
        raise ParameterError(f"xbar: weight_width={weight_width} is wider than the {preset} "
                             f"membrane ({params.membrane_width} bits)")
    return Crossbar(dataclasses.replace(params, weight_width=weight_width), axons=axons,
                    neurons=neurons, banks=banks)


# Spikes depend on the data, so the program states every stream's count (tokens=None).
XBAR_KIND = FuKind("xbar", 3, 1, XbarUop, LATENCY, XbarFu, XbarModel, parameters=XbarParameters,
                   count_fields=lambda uop: ("steps",), late_inputs=_late_inputs, generator=_generator())
