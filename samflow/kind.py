"""SAM primitives as FU kinds of the stream fabric (plug-ins: rsn names none of them).

A sparse tile's streams are the fabric's ``data_width``-bit words, each one token of
:func:`samflow.tokens.token_layout` (``data_width - 2``): a 32-bit fabric carries 30-bit
coordinates and values. One micro-op runs one whole stream, through its ``D``, on every port:
the FU passes each input up to and including its ``D``, and the micro-op ends once every output
has sent its ``D``. Token counts depend on the data, so the kinds are data-dependent
(``tokens=None``) and a program states each stream's count.

Only primitives with at most 3 inputs and 2 outputs fit a tile (``rsn.fu.MAX_FU_INPUTS`` and
``MAX_FU_OUTPUTS``); docs/sparse.md says what the joiners and the banked primitives lack.
"""

from dataclasses import dataclass, field

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from rsn.channels import Channel, UnitModel
from rsn.fu import FuKind, count_status, fu_signature
from rsn.isa import padded_uop

from . import rtl
from .models import MODELS
from .tokens import TokenKind, decode, encode

__all__ = ["SparseKindSpec", "SPARSE_KINDS", "ALU_OPS", "kind_named"]

ALU_OPS = {"add": 0, "sub": 1, "mul": 2}


@dataclass(frozen=True)
class SparseKindSpec:
    """How one primitive sits in a tile."""
    name: str
    primitive: object               # the golden model's name (samflow.models.MODELS), or uop -> name
    build: object                   # value width -> the primitive's component
    inputs: tuple                   # its input ports, in the tile's i[0], i[1], ... order
    outputs: tuple                  # its output ports, in o[0], o[1] order
    fields: dict = field(default_factory=dict)      # micro-op fields besides ``last``
    runs: object = None             # (component, uop view) -> statements setting its run inputs
    params: object = None           # uop dict -> the golden model's params


def _alu_runs(unit, uop):
    return [unit.neg1.eq(0), unit.neg2.eq(uop.op == ALU_OPS["sub"]),
            unit.multiply.eq(uop.op == ALU_OPS["mul"])]


def _alu_params(uop):
    return {"neg2": uop["op"] == ALU_OPS["sub"]}


def _alu_primitive(uop):
    return "multiply" if uop["op"] == ALU_OPS["mul"] else "add"


SPECS = [
    SparseKindSpec("sam_alu", _alu_primitive, lambda w: rtl.Alu(w, "select"), ("in_val1", "in_val2"),
                   ("val",), {"op": 2}, _alu_runs, _alu_params),
    SparseKindSpec("sam_reduce", "reduce", rtl.Reduce, ("in_val",), ("val",)),
    SparseKindSpec("sam_repeat", "repeat", rtl.Repeat, ("in_ref", "in_repsig"), ("ref",)),
    SparseKindSpec("sam_repsig", "repeat_sig_gen", rtl.RepeatSigGen, ("in_stream",), ("repsig",)),
    SparseKindSpec("sam_stkn_drop", "stkn_drop", rtl.StknDrop, ("in_stream",), ("val",)),
    SparseKindSpec("sam_empty_stkn_drop", "empty_stkn_drop", rtl.EmptyStknDrop, ("in_stream",), ("val",)),
    SparseKindSpec("sam_crd_drop", "crd_drop", rtl.CrdDrop, ("in_outer_crd", "in_inner_crd"),
                   ("outer_crd", "inner_crd")),
    SparseKindSpec("sam_dense_scan", "rd_scan_uncompressed", rtl.LevelScanner, ("in_ref",), ("crd", "ref"),
                   {"dim": 16}, lambda unit, uop: [unit.dim.eq(uop.dim)], lambda uop: {"dim": uop["dim"]}),
]
REPSIG = {"in_repsig", "repsig"}


class SparseFu(wiring.Component):
    """The tile adapter around one primitive: micro-op handshake, end of stream, counters."""

    SPEC: SparseKindSpec = None
    KIND: FuKind = None

    def __init__(self, width: int):
        self._width = width
        super().__init__(fu_signature(self.KIND, width))

    def elaborate(self, platform):
        m = Module()
        spec = self.SPEC
        unit = m.submodules.primitive = spec.build(self._width - 2)
        active = Signal()
        uop = Signal.like(self.uop.payload)
        m.d.comb += [self.uop.ready.eq(~active), self.cfg.rdata.eq(0)]
        if spec.runs is not None:
            m.d.comb += spec.runs(unit, uop)
        started = self.uop.valid & self.uop.ready
        with m.If(started):
            m.d.sync += [active.eq(1), uop.eq(self.uop.payload)]
        done_kind = TokenKind.DONE.value << (self._width - 2)
        kind_mask = 3 << (self._width - 2)
        ended_inputs, ended_outputs = [], []
        for k, name in enumerate(spec.inputs):
            port, source = getattr(unit, name), self.i[k]
            ended = Signal(name=f"ended_in{k}")
            open_ = active & ~ended
            m.d.comb += [port.valid.eq(source.valid & open_), port.payload.eq(source.payload),
                         source.ready.eq(port.ready & open_)]
            with m.If(source.valid & source.ready & ((source.payload & kind_mask) == done_kind)):
                m.d.sync += ended.eq(1)
            ended_inputs.append(ended)
        sent_done = []
        for j, name in enumerate(spec.outputs):
            port, sink = getattr(unit, name), self.o[j]
            ended = Signal(name=f"ended_out{j}")
            m.d.comb += [sink.valid.eq(port.valid), sink.payload.eq(port.payload), port.ready.eq(sink.ready)]
            leaving = sink.valid & sink.ready & ((sink.payload & kind_mask) == done_kind)
            with m.If(leaving):
                m.d.sync += ended.eq(1)
            ended_outputs.append(ended)
            sent_done.append(ended | leaving)
        finishing = active
        for each in sent_done:
            finishing &= each
        with m.If(finishing):
            m.d.sync += [active.eq(0)] + [e.eq(0) for e in ended_inputs + ended_outputs]
        firing = self.o[0].valid & self.o[0].ready
        moving = firing
        for j in range(1, len(spec.outputs)):
            moving |= self.o[j].valid & self.o[j].ready
        for k in range(len(spec.inputs)):
            moving |= self.i[k].valid & self.i[k].ready
        m.d.comb += self.busy.eq(active)
        count_status(m, self, firing=firing, stall=active & ~moving, completes_last=finishing & uop.last)
        return m


class SparseModel(UnitModel):
    """The golden model of a sparse tile: per micro-op, each input's stream through its ``D``,
    then the primitive's model (samflow.models) gives the outputs, pushed as room allows.

    It takes whole input streams before it answers, so it fits acyclic programs (``cyclic`` is
    False for these kinds); the RTL answers token by token, with the same streams.
    """

    SPEC: SparseKindSpec = None

    def __init__(self, width: int = 32):
        super().__init__()
        self.KIND = self.SPEC.name
        self.value_width = width - 2
        self.gathered, self.pending = None, None

    def _decode(self, port, word):
        return decode(word, self.value_width, repsig=port in REPSIG)

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        spec = self.SPEC
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.gathered = {port: [] for port in spec.inputs}
            self.pending = None
        if self.pending is None:
            moved = False
            for port, channel in zip(spec.inputs, inputs, strict=False):
                tokens = self.gathered[port]
                if (not tokens or tokens[-1] != "D") and channel.can_pop():
                    tokens.append(self._decode(port, channel.pop()))
                    moved = True
            if all(tokens and tokens[-1] == "D" for tokens in self.gathered.values()):
                primitive = spec.primitive(self.current) if callable(spec.primitive) else spec.primitive
                params = spec.params(self.current) if spec.params else {}
                produced, _memory = MODELS[primitive](params, {}, self.gathered)
                self.pending = [[encode(t, self.value_width, repsig=port in REPSIG) for t in produced[port]]
                                for port in spec.outputs]
                moved = True
            return moved
        moved = False
        for j, (tokens, channel) in enumerate(zip(self.pending, outputs, strict=False)):
            if tokens and channel.can_push():
                channel.push(tokens.pop(0))
                self.firings += j == 0
                moved = True
        if not any(self.pending):
            self.finished |= bool(self.current["last"])
            self.current = None
            moved = True
        return moved


def _make_kind(spec: SparseKindSpec) -> FuKind:
    layout = padded_uop({**spec.fields, "last": 1})
    fu = type(f"{spec.name.title().replace('_', '')}Fu", (SparseFu,), {"SPEC": spec})
    model = type(f"{spec.name.title().replace('_', '')}Model", (SparseModel,), {"SPEC": spec})
    kind = FuKind(spec.name, len(spec.inputs), len(spec.outputs), layout, 1, fu, model)
    fu.KIND = kind
    return kind


SPARSE_KINDS = {spec.name: _make_kind(spec) for spec in SPECS}
SAM_ALU_KIND = SPARSE_KINDS["sam_alu"]
SAM_REDUCE_KIND = SPARSE_KINDS["sam_reduce"]
SAM_REPEAT_KIND = SPARSE_KINDS["sam_repeat"]
SAM_REPSIG_KIND = SPARSE_KINDS["sam_repsig"]
SAM_STKN_DROP_KIND = SPARSE_KINDS["sam_stkn_drop"]
SAM_EMPTY_STKN_DROP_KIND = SPARSE_KINDS["sam_empty_stkn_drop"]
SAM_CRD_DROP_KIND = SPARSE_KINDS["sam_crd_drop"]
SAM_DENSE_SCAN_KIND = SPARSE_KINDS["sam_dense_scan"]


def kind_named(name: str) -> FuKind:
    return SPARSE_KINDS[name]
