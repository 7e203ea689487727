"""SAM primitives as FU kinds of the stream fabric (plug-ins: rsn names none of them).

A sparse tile's streams are the fabric's ``data_width``-bit words, each one token of
:func:`samflow.tokens.token_layout` (``data_width - 2``): a 32-bit fabric carries 30-bit
coordinates and values. One micro-op runs one whole stream, through its ``D``, on every port:
the FU passes each input up to and including its ``D``, and the micro-op ends once every output
has sent its ``D``. Token counts depend on the data, so the kinds are data-dependent
(``tokens=None``) and a program states each stream's count.

A scanner, a dense scanner or a repeat can be a graph's root: with ``root`` set in its micro-op, the
tile feeds the primitive SAM's root reference stream (``0``, ``D``) itself and leaves ``i[0]``
alone. A kind with arrays (``sam_scan_c``, ``sam_array``) keeps them in banks of its own, ``depth``
words each (its ``[kind]`` table), end to end in the tile's storage window: a program's
``memories`` load them through the control plane and its ``reads`` read them back.

Only primitives with at most 3 inputs and 2 outputs fit a tile (``rsn.fu.MAX_FU_INPUTS`` and
``MAX_FU_OUTPUTS``); docs/sparse.md says what the joiners lack.
"""

from dataclasses import dataclass, field

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring

from rsn.channels import Channel, UnitModel
from rsn.fu import FuKind, KindParameters, NoParameters, count_status, fu_signature
from rsn.isa import REGISTERS, padded_uop

from . import rtl
from .faults import FAULT_REGISTERS, FaultCode, StreamRules, describe, sides_fault
from .graph.valued import drop_zero_values
from .models import MODELS, ModelError, graph_accumulator
from .pairs import pack, pack_sums, pick, unpack
from .rtl.pairs import PairedJoiner, pair_word, picked_half
from .rtl.stream_check import StreamCheck
from .tokens import TokenKind, decode, encode

__all__ = ["SparseKindSpec", "SPARSE_KINDS", "SPARSE_SPECS", "ALU_OPS", "BankParameters", "MAX_BANK_DEPTH",
           "kind_named",
           "SPACC_COLS"]

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
    banks: tuple = ()               # (component's bank port, the model's memory name), in storage order
    tied: tuple = ()                # the primitive's inputs a tile leaves idle (the model sees ``D``)
    evaluate: object = None         # (params, memory, inputs) -> (outputs, memory); default MODELS
    coordinates: dict = field(default_factory=dict)     # input -> 1 coordinates, 2 in a pair's high half
    aligned: bool = False           # its two inputs close the same fibers (samflow.faults, sides)

    # What the tile does around the primitive follows from its micro-op's fields:
    @property
    def root(self) -> bool:
        """Input 0 can be SAM's root reference (the micro-op's ``root``)."""
        return "root" in self.fields

    @property
    def half(self) -> bool:
        """Input 0 can take one half of a packed token (``half``, samflow.pairs)."""
        return "half" in self.fields

    @property
    def pairs(self) -> bool:
        """Output 1 can carry (output 0, output 1) pairs packed (``pack``)."""
        return "pack" in self.fields


# The deepest bank a sparse kind may have, in words.
MAX_BANK_DEPTH = 2048


@dataclass(frozen=True)
class BankParameters(KindParameters):
    """The table of a kind with banks (``[sam_scan_c]``, ``[sam_array]``): words per bank."""
    depth: int = 256

    def check(self):
        """Banks lie end to end in the 4,096-word storage window, and an address splits into a bank
        and a word, so the depth is a power of two from 16 to 2,048."""
        if (isinstance(self.depth, bool) or not isinstance(self.depth, int)
                or not 16 <= self.depth <= MAX_BANK_DEPTH or self.depth & (self.depth - 1)):
            raise ValueError(f"depth={self.depth!r} is not allowed; use a power of two from 16 to "
                             f"{MAX_BANK_DEPTH} (words per bank)")


def _joined(primitive):
    """A joiner on packed sides: each side (coordinate high, reference low) unpacked, both
    references packed (side 1 low)."""
    def evaluate(params, memory, inputs):
        width, sides = params["value_width"], {}
        for k in (1, 2):
            sides[f"in_ref{k}"], sides[f"in_crd{k}"] = unpack(inputs[f"in_side{k}"], width)
        out, _ = MODELS[primitive]({}, {}, sides)
        return {"crd": out["crd"], "refs": pack(out["ref1"], out["ref2"], width)}, {}
    return evaluate


def _drop_zero_values(params, memory, inputs):
    kept = drop_zero_values(inputs["in_crd"], inputs["in_val"])
    return {"crd": kept["outer_crd"], "val": kept["inner_crd"]}, {}


def _alu_runs(unit, uop):
    return [unit.neg1.eq(0), unit.neg2.eq(uop.op == ALU_OPS["sub"]),
            unit.multiply.eq(uop.op == ALU_OPS["mul"])]


def _alu_params(uop):
    return {"neg2": uop["op"] == ALU_OPS["sub"]}


def _alu_primitive(uop):
    return "multiply" if uop["op"] == ALU_OPS["mul"] else "add"


def _accumulated(params, memory, inputs):
    """SAM's spaccumulator of order 1 as its graphs use it (samflow.models.graph_accumulator), each
    inner coordinate packed with its sum (samflow.pairs.pack_sums: coordinate high, the sum a
    signed low half)."""
    out = graph_accumulator(inputs)
    packed = pack_sums(out["val"], out["inner_crd"], params["value_width"])
    return {"outer_crd": out["outer_crd"], "pairs": packed}, {}


# The accumulator's workspace: inner coordinates 0 .. SPACC_COLS - 1 (a row of a 256-wide matrix).
SPACC_COLS = 256
PACKED_SIDES = {"in_side1": 2, "in_side2": 2}
SPECS = [
    SparseKindSpec("sam_alu", _alu_primitive, lambda w: rtl.Alu(w, "select"), ("in_val1", "in_val2"),
                   ("val",), {"op": 2}, _alu_runs, _alu_params, aligned=True),
    SparseKindSpec("sam_reduce", "reduce", rtl.Reduce, ("in_val",), ("val",)),
    SparseKindSpec("sam_repeat", "repeat", rtl.Repeat, ("in_ref", "in_repsig"), ("ref",),
                   {"root": 1, "half": 2}),
    SparseKindSpec("sam_repsig", "repeat_sig_gen", rtl.RepeatSigGen, ("in_stream",), ("repsig",)),
    SparseKindSpec("sam_stkn_drop", "stkn_drop", rtl.StknDrop, ("in_stream",), ("val",)),
    SparseKindSpec("sam_empty_stkn_drop", "empty_stkn_drop", rtl.EmptyStknDrop, ("in_stream",), ("val",)),
    SparseKindSpec("sam_crd_drop", "crd_drop", rtl.CrdDrop, ("in_outer_crd", "in_inner_crd"),
                   ("outer_crd", "inner_crd"), coordinates={"in_outer_crd": 1, "in_inner_crd": 1}),
    SparseKindSpec("sam_dense_scan", "rd_scan_uncompressed", rtl.LevelScanner, ("in_ref",), ("crd", "ref"),
                   {"dim": 16, "root": 1, "half": 2, "pack": 1}, lambda unit, uop: [unit.dim.eq(uop.dim)],
                   lambda uop: {"dim": uop["dim"]}),
    SparseKindSpec("sam_scan_c", "rd_scan_compressed",
                   lambda w, depth: rtl.LevelScanner(w, compressed=True, depth=depth), ("in_ref",),
                   ("crd", "ref"), {"root": 1, "half": 2, "pack": 1},
                   banks=(("seg_bank", "seg_arr"), ("crd_bank", "crd_arr"))),
    SparseKindSpec("sam_array", "array", lambda w, depth: rtl.Array(w, depth), ("in_load_addr",), ("load",),
                   {"half": 2}, banks=(("arr_bank", "init_arr"),), tied=("in_store_addr", "in_store_val")),
    SparseKindSpec("sam_intersect", "intersect", lambda w: PairedJoiner(w, union=False),
                   ("in_side1", "in_side2"), ("crd", "refs"), evaluate=_joined("intersect"),
                   coordinates=PACKED_SIDES, aligned=True),
    SparseKindSpec("sam_union", "union", lambda w: PairedJoiner(w, union=True),
                   ("in_side1", "in_side2"), ("crd", "refs"), evaluate=_joined("union"),
                   coordinates=PACKED_SIDES, aligned=True),
    SparseKindSpec("sam_crd_hold", "crd_hold", rtl.CrdHold, ("in_outer_crd", "in_inner_crd"),
                   ("outer_crd", "inner_crd")),
    SparseKindSpec("sam_zero_drop", "zero_value_drop", rtl.ZeroValueDrop, ("in_crd", "in_val"),
                   ("crd", "val"), evaluate=_drop_zero_values),
    SparseKindSpec("sam_spacc", "spacc1", lambda w: rtl.PackedAccumulator(w, SPACC_COLS),
                   ("in_outer_crdpt", "in_inner_crdpt", "in_val"), ("outer_crd", "pairs"),
                   evaluate=_accumulated),
]
SPARSE_SPECS = {spec.name: spec for spec in SPECS}
REPSIG = {"in_repsig", "repsig"}


class SparseFu(wiring.Component):
    """The tile adapter around one primitive: micro-op handshake, end of stream, counters."""

    SPEC: SparseKindSpec = None
    KIND: FuKind = None

    def __init__(self, width: int, depth: int = 0):
        self._width, self._depth = width, depth
        super().__init__(fu_signature(self.KIND, width))

    def _elaborate_registers(self, m, unit, fault_words):
        """The control plane: bank ``b`` at ``b * depth`` of the storage window, the fault's words
        at ``REGISTERS["fu_status"]``; a read answers in the next cycle, as the tile expects."""
        answers = 0
        if self.SPEC.banks:
            depth, bits = self._depth, self._depth.bit_length() - 1
            bank_of = self.cfg.addr[bits:12]
            in_storage = self.cfg.addr < REGISTERS["firings"]
            assert len(self.SPEC.banks) * depth <= REGISTERS["firings"]
            for b, (member, _) in enumerate(self.SPEC.banks):
                host = getattr(unit, member)
                m.d.comb += [host.we.eq(self.cfg.write & in_storage & (bank_of == b)),
                             host.waddr.eq(self.cfg.addr[:bits]), host.wdata.eq(self.cfg.data),
                             host.raddr.eq(self.cfg.addr[:bits])]
                answers = Mux(bank_of == b, host.rdata, answers)
        status = REGISTERS["fu_status"]
        for offset, word in enumerate(fault_words):
            answers = Mux(self.cfg.addr == status + offset, word, answers)
        read_data = Signal(32)
        with m.If(self.cfg.read):
            m.d.sync += read_data.eq(answers)
        m.d.comb += self.cfg.rdata.eq(read_data)

    def _elaborate_fault(self, m, unit, started):
        """The sticky fault (samflow.faults): each input's stream rules, and for an aligned pair of
        inputs the sides rule; the first break of a run is kept until START."""
        spec, w = self.SPEC, self._width - 2
        found = []                       # (condition, code, input, index, kind, value, previous)
        ports = [getattr(unit, name) for name in spec.inputs]
        for k, (name, port) in enumerate(zip(spec.inputs, ports, strict=True)):
            check = m.submodules[f"check_in{k}"] = StreamCheck(
                w, spec.coordinates.get(name, 0), nesting=name not in REPSIG)
            m.d.comb += [check.taken.eq(port.valid & port.ready), check.token.eq(port.payload.as_value()),
                         check.restart.eq(started)]
            found.append((check.fault, check.code, k, check.index, check.kind, check.value, check.previous))
        if spec.aligned:
            (a, b), checks = ports, [m.submodules.check_in0, m.submodules.check_in1]
            control = [(p.payload.kind == TokenKind.STOP) | (p.payload.kind == TokenKind.DONE)
                       for p in (a, b)]
            done = [p.payload.kind == TokenKind.DONE for p in (a, b)]
            apart = (control[0] & control[1] & (a.payload.as_value() != b.payload.as_value())) \
                | (~control[0] & done[1]) | (~control[1] & done[0])
            found.append((a.valid & b.valid & apart, FaultCode.SIDES, 1, checks[1].index, b.payload.kind,
                          b.payload.value, a.payload.kind.as_value() * 16 + a.payload.value[:4]))
        head, value, previous = Signal(32), Signal(32), Signal(32)
        with m.If(self.clear):
            m.d.sync += [head.eq(0), value.eq(0), previous.eq(0)]
        with m.Elif(head[:2] == FaultCode.NONE):
            for condition, code, k, index, kind, token_value, before in reversed(found):
                with m.If(condition):   # the last assignment wins: the lowest input first
                    m.d.sync += [head.eq(Cat(code, Const(k, 2), kind, Const(0, 10), index)),
                                 value.eq(token_value.as_signed()), previous.eq(before)]
        return head, value, previous

    def _root_input(self, m, port, source, incoming, open_, use_root, ended):
        """Input 0 of a root: SAM's root reference (``0``, then ``D``) instead of ``i[0]``."""
        done_word = TokenKind.DONE.value << (self._width - 2)
        sent_reference = Signal(name="root_sent_reference")
        m.d.comb += [
            port.valid.eq(Mux(use_root, open_, source.valid & open_)),
            port.payload.eq(Mux(use_root, Mux(sent_reference, done_word, 0), incoming)),
            source.ready.eq(port.ready & open_ & ~use_root),
        ]
        with m.If(use_root & port.valid & port.ready):
            m.d.sync += sent_reference.eq(1)
            with m.If(sent_reference):
                m.d.sync += [ended.eq(1), sent_reference.eq(0)]

    def elaborate(self, platform):
        m = Module()
        spec = self.SPEC
        unit = m.submodules.primitive = spec.build(self._width - 2, self._depth) if spec.banks \
            else spec.build(self._width - 2)
        active = Signal()
        uop = Signal.like(self.uop.payload)
        m.d.comb += self.uop.ready.eq(~active)
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
            incoming = picked_half(source.payload, uop.half, self._width - 2) if k == 0 and spec.half \
                else source.payload
            if k == 0 and spec.root:
                self._root_input(m, port, source, incoming, open_, uop.root, ended)
            else:
                m.d.comb += [port.valid.eq(source.valid & open_), port.payload.eq(incoming),
                             source.ready.eq(port.ready & open_)]
            with m.If(source.valid & source.ready & ((source.payload & kind_mask) == done_kind)):
                m.d.sync += ended.eq(1)
            ended_inputs.append(ended)
        sent_done = []
        for j, name in enumerate(spec.outputs):
            port, sink = getattr(unit, name), self.o[j]
            ended = Signal(name=f"ended_out{j}")
            discard = uop.discard[j]        # an output no stream takes: the tile drains it
            payload = port.payload.as_value()
            if j == 1 and spec.pairs:       # (output 0, output 1) packed: a joiner's side
                first = getattr(unit, spec.outputs[0]).payload
                packed = pair_word(first.value, port.payload.value, self._width - 2)
                payload = Mux(uop.pack & (port.payload.kind == TokenKind.DATA), packed, payload)
            m.d.comb += [sink.valid.eq(port.valid & ~discard), sink.payload.eq(payload),
                         port.ready.eq(sink.ready | discard)]
            leaving = port.valid & port.ready & (port.payload.kind == TokenKind.DONE)
            with m.If(leaving):
                m.d.sync += ended.eq(1)
            ended_outputs.append(ended)
            sent_done.append(ended | leaving)
        finishing = active
        for each in sent_done:
            finishing &= each
        with m.If(finishing):
            m.d.sync += [active.eq(0)] + [e.eq(0) for e in ended_inputs + ended_outputs]
        self._elaborate_registers(m, unit, self._elaborate_fault(m, unit, started))
        first = getattr(unit, spec.outputs[0])         # a drained output's tokens count too
        firing = first.valid & first.ready
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

    def __init__(self, width: int = 32, depth: int = 0):
        super().__init__()
        self.KIND = self.SPEC.name
        self.value_width = width - 2
        self.depth = depth
        self.banks = [[0] * depth for _ in self.SPEC.banks]
        self.gathered, self.pending, self.rules = None, None, None
        self.fault = None               # the run's first samflow.faults.Fault
        self.stuck = False              # a break of the sides rule: the primitive waits for good

    def _bank_word(self, addr: int) -> tuple[list, int]:
        if not 0 <= addr < len(self.banks) * self.depth:
            raise ValueError(f"register {addr:#06x} is not in the {self.KIND} banks' window "
                             f"0x0000-{len(self.banks) * self.depth - 1:#06x}")
        return self.banks[addr // self.depth], addr % self.depth

    def write_word(self, addr: int, value: int):
        """Control-plane write: the word's low ``value_width`` bits, a signed value as in the RTL."""
        bank, at = self._bank_word(addr)
        word = value & ((1 << self.value_width) - 1)
        bank[at] = word - (1 << self.value_width) if word >> (self.value_width - 1) else word

    def read_word(self, addr: int) -> int:
        status = addr - REGISTERS["fu_status"]
        if 0 <= status < FAULT_REGISTERS:
            return 0 if self.fault is None else self.fault.words()[status]
        bank, at = self._bank_word(addr)
        return bank[at] & ((1 << self.value_width) - 1)

    def _evaluate(self, inputs: dict) -> dict:
        spec = self.SPEC
        primitive = spec.primitive(self.current) if callable(spec.primitive) else spec.primitive
        params = spec.params(self.current) if spec.params else {}
        memory = {name: list(bank) for (_, name), bank in zip(spec.banks, self.banks, strict=True)}
        if spec.banks:
            params = {**params, "size": self.depth}
        inputs = {**inputs, **{port: ["D"] for port in spec.tied}}
        if spec.half:
            inputs[spec.inputs[0]] = pick(inputs[spec.inputs[0]], self.current["half"], self.value_width)
        if spec.evaluate:
            produced, _memory = spec.evaluate({**params, "value_width": self.value_width}, memory, inputs)
        else:
            produced, _memory = MODELS[primitive](params, memory, inputs)
        if spec.pairs and self.current["pack"]:
            first, second = spec.outputs[:2]
            produced = {**produced, second: pack(produced[second], produced[first], self.value_width)}
        return produced

    def _decode(self, port, word):
        return decode(word, self.value_width, repsig=port in REPSIG)

    def _take(self, k: int, token):
        """The rules over input ``k``'s token as the primitive sees it (its half picked)."""
        if self.SPEC.half and k == 0:
            token = pick([token], self.current["half"], self.value_width)[0]
        fault = self.rules[k].take(token)
        if self.fault is None:
            self.fault = fault

    def _sides_apart(self) -> bool:
        """An aligned pair of inputs that close different fibers (the RTL waits there for good)."""
        first, second = (self.gathered[port] for port in self.SPEC.inputs)
        if self.SPEC.half:
            first = pick(first, self.current["half"], self.value_width)
        fault = sides_fault(first, second, self._advance)
        if fault is not None and self.fault is None:
            self.fault = fault
        return fault is not None

    def _advance(self, a, b) -> int:
        """Which of two elements the primitive takes: the ALU both, a joiner the lower coordinate."""
        if not self.SPEC.coordinates:
            return 3
        (_, high_a), (_, high_b) = unpack([a], self.value_width), unpack([b], self.value_width)
        ca, cb = high_a[0], high_b[0]
        if ca == "N" or cb == "N" or ca == cb:
            return 3
        return 1 if ca < cb else 2

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        spec = self.SPEC
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.gathered = {port: [] for port in spec.inputs}
            self.rules = [StreamRules(k, spec.coordinates.get(port, 0), self.value_width,
                                      nesting=port not in REPSIG) for k, port in enumerate(spec.inputs)]
            if spec.root and self.current["root"]:
                self.gathered[spec.inputs[0]] = [0, "D"]
            self.pending = None
        if self.stuck:
            return False
        if self.pending is None:
            moved = False
            for k, (port, channel) in enumerate(zip(spec.inputs, inputs, strict=False)):
                tokens = self.gathered[port]
                if (not tokens or tokens[-1] != "D") and channel.can_pop():
                    tokens.append(self._decode(port, channel.pop()))
                    self._take(k, tokens[-1])
                    moved = True
            if all(tokens and tokens[-1] == "D" for tokens in self.gathered.values()):
                if spec.aligned and self._sides_apart():
                    self.stuck = True
                    return moved
                try:
                    produced = self._evaluate(self.gathered)
                except ModelError:
                    if self.fault is None:
                        raise
                    self.stuck = True       # the primitive's model refuses what the fault names
                    return moved
                self.pending = [[encode(t, self.value_width, repsig=port in REPSIG) for t in produced[port]]
                                for port in spec.outputs]
                moved = True
            return moved
        moved = False
        for j, (tokens, channel) in enumerate(zip(self.pending, outputs, strict=False)):
            if tokens and self.current["discard"] >> j & 1:
                self.firings += len(tokens) if j == 0 else 0
                tokens.clear()
                moved = True
            elif tokens and channel.can_push():
                channel.push(tokens.pop(0))
                self.firings += j == 0
                moved = True
        if not any(self.pending):
            self.finished |= bool(self.current["last"])
            self.current = None
            moved = True
        return moved


def _make_kind(spec: SparseKindSpec) -> FuKind:
    layout = padded_uop({**spec.fields, "discard": len(spec.outputs), "last": 1})
    fu = type(f"{spec.name.title().replace('_', '')}Fu", (SparseFu,), {"SPEC": spec})
    model = type(f"{spec.name.title().replace('_', '')}Model", (SparseModel,), {"SPEC": spec})
    banked = {"parameters": BankParameters,
              "storage_words": lambda parameters: len(spec.banks) * parameters.depth} if spec.banks \
        else {"parameters": NoParameters}
    status = REGISTERS["fu_status"]

    def described(words):
        text = describe(words, spec.inputs)
        return None if text is None else f"fault at {text}"
    kind = FuKind(spec.name, len(spec.inputs), len(spec.outputs), layout, 1, fu, model, **banked,
                  status_registers=FAULT_REGISTERS,
                  describe_registers=tuple(range(status, status + FAULT_REGISTERS)),
                  describe_config=described)
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
SAM_SCAN_C_KIND = SPARSE_KINDS["sam_scan_c"]
SAM_ARRAY_KIND = SPARSE_KINDS["sam_array"]
SAM_CRD_HOLD_KIND = SPARSE_KINDS["sam_crd_hold"]
SAM_ZERO_DROP_KIND = SPARSE_KINDS["sam_zero_drop"]
SAM_INTERSECT_KIND = SPARSE_KINDS["sam_intersect"]
SAM_UNION_KIND = SPARSE_KINDS["sam_union"]
SAM_SPACC_KIND = SPARSE_KINDS["sam_spacc"]


def kind_named(name: str) -> FuKind:
    return SPARSE_KINDS[name]
