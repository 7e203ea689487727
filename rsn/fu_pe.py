"""The Ripple processing element: one ordered-dataflow operator, chosen at run time.

One PE design serves every operator, as a CGRA PE does: the host writes a configuration word
(operator, decider polarity, STREAM compare mode, each operand slot's kind, which output ports
discard) and the constant of each constant or ``hold`` slot over a :data:`rsn.fu.ConfigBus`.
The semantics are those of :mod:`ripple_core.ops`, which is the specification; docs/ripple.md
("The PE hardware") describes the architecture.

Architecture
------------
* **Operand slots.** Up to three. An ``EDGE`` slot is fed by the stream ``i[k]`` through a
  :class:`hw.token_queue.TokenQueue` of ``depth`` tokens (``depth=0``: no queue, the firing
  logic reads ``i[k]`` directly, for a tile that puts its own queues in front). A ``CONST`` slot
  holds one token, armed by writing its constant register and consumed by the first firing that
  takes it. A ``HOLD`` slot holds its constant for ever: firings read it and never take it.
* **Firing logic.** Combinational, from the slot fronts, the operator's state (a LOOP/ACTIVE bit
  and STREAM's index register) and the room in the output registers. A firing happens when the
  operator's firing rule holds and every output port it emits on has room; it takes the slots
  the rule takes, updates the state and loads the output registers, all at one clock edge. At
  most one firing per cycle, one token per cycle sustained.
* **Outputs.** ``o[0]`` and ``o[1]`` (STREAM's index and flag) each have one output register,
  so a result is offered the cycle after its firing and ``o[k].valid`` never depends on
  ``o[k].ready``. A port marked in the ``drop`` mask has no consumer: its tokens are discarded,
  as a port with no consumer drops its tokens in the golden model. ``o[k].ready`` reaches the
  queues' ``o.ready`` combinationally (a queue's ``i.ready`` never depends on it, so no loop).

Configuration registers (``cfg.addr``; writes take effect at the clock edge, reads return the
register in the next cycle):

* ``0``: the configuration word, :data:`PE_CONFIG`. Writing it also puts the operator back in its
  first state (INIT / IDLE) and disarms the constant slots.
* ``1 + k`` (k = 0, 1, 2): the constant of slot ``k``; writing it arms the slot (one token for a
  ``CONST`` slot, a permanent one for ``HOLD``).
* ``4`` (read only): bit 0 the operator is in its first state, bits 1-3 the armed constant slots.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.params import ParameterError, check_int
from hw.token_queue import TokenQueue
from rsn.fu import ConfigBus

from .ops import STREAM_COMPARES

__all__ = ["PeOp", "SlotKind", "StreamCmp", "PE_CONFIG", "PE_OPS", "WIDTH", "N_SLOTS", "N_PORTS",
           "REG_CONFIG", "REG_CONST", "REG_STATUS", "pe_config_word", "RipplePE"]

WIDTH = 32
N_SLOTS = 3
N_PORTS = 2

REG_CONFIG = 0
REG_CONST = 1           # 1, 2, 3: slot 0, 1, 2
REG_STATUS = 4


class PeOp(enum.Enum, shape=5):
    """The operators a PE can be configured as (the GEP variants are configured as ADD)."""
    ADD = 0
    SUB = 1
    MUL = 2
    AND = 3
    OR = 4
    XOR = 5
    SHL = 6
    ASHR = 7
    LSHR = 8
    EQ = 9
    NE = 10
    SLT = 11
    SLE = 12
    SGT = 13
    SGE = 14
    ULT = 15
    ULE = 16
    UGT = 17
    UGE = 18
    ID = 19
    SELECT = 20
    STEER = 21
    MERGE = 22
    ORDER = 23
    CARRY = 24
    INVARIANT = 25
    STREAM = 26


class SlotKind(enum.Enum, shape=2):
    EDGE = 0        # fed by i[k] through its token queue
    CONST = 1       # one token, consumed once
    HOLD = 2        # one token, never consumed


class StreamCmp(enum.Enum, shape=3):
    """STREAM's compare modes, in the order of :data:`ripple_core.ops.STREAM_COMPARES`."""
    SLT = 0
    ULT = 1
    SLE = 2
    ULE = 3
    SGT = 4
    UGT = 5
    SGE = 6
    UGE = 7


assert tuple(mode.name for mode in StreamCmp) == STREAM_COMPARES

PE_CONFIG = data.StructLayout({
    "op": PeOp,
    "pred": 1,                                  # decider polarity: 1 = continue / pass on true
    "cmp": StreamCmp,                           # STREAM only
    "slots": data.ArrayLayout(SlotKind, N_SLOTS),
    "drop": N_PORTS,                            # bit k: port k has no consumer, discard its tokens
})

# Operator name (as in ripple_core.ops) -> PeOp; GEP variants behave as ADD.
PE_OPS = {op.name: op for op in PeOp}
PE_OPS.update({"GEP": PeOp.ADD, "GEP2": PeOp.ADD, "GEP4": PeOp.ADD})
_PORTS_USED = {"STREAM": 2}


def pe_config_word(op: str, *, pred: bool = False, cmp: str = "SLT", slots=("edge",) * N_SLOTS,
                   drop=()) -> int:
    """The configuration word for operator ``op`` (a ripple_core.ops name).

    ``slots``: each slot's kind, "edge", "const" or "hold" (missing slots are edges); ``drop``:
    the output ports whose tokens are discarded.
    """
    if op not in PE_OPS:
        raise ParameterError(f"RipplePE: operator {op!r} is not one a PE can be configured as; "
                             f"choose one of {', '.join(PE_OPS)}")
    if cmp not in STREAM_COMPARES:
        raise ParameterError(f"RipplePE: cmp={cmp!r}; choose one of {', '.join(STREAM_COMPARES)}")
    kinds = list(slots) + ["edge"] * (N_SLOTS - len(slots))
    if len(kinds) > N_SLOTS or any(kind not in ("edge", "const", "hold") for kind in kinds):
        raise ParameterError(f"RipplePE: slots={tuple(slots)!r}; give up to {N_SLOTS} of "
                             f"'edge', 'const', 'hold'")
    if any(port not in range(N_PORTS) for port in drop):
        raise ParameterError(f"RipplePE: drop={tuple(drop)!r}; ports are 0..{N_PORTS - 1}")
    value = PE_CONFIG.const({
        "op": PE_OPS[op], "pred": int(bool(pred)), "cmp": StreamCmp[cmp],
        "slots": [SlotKind[kind.upper()] for kind in kinds],
        "drop": sum(1 << port for port in set(drop)),
    })
    return value.as_bits()


class RipplePE(wiring.Component):
    """One ordered-dataflow operator with per-operand token queues; see the module docstring.

    Parameters
    ----------
    depth : int
        Tokens each operand queue holds (>= 1), or 0 for no queues.

    Members
    -------
    i : In(stream.Signature(32)).array(3)
        Operand streams (slot order of the operator).
    o : Out(stream.Signature(32)).array(2)
        Result ports (port 1: STREAM's flag).
    cfg : In(ConfigBus)
        Configuration registers.
    firings : Out(32)
        Firings since reset.
    idle : Out(1)
        The operator is in its first state (INIT, IDLE).
    """

    def __init__(self, depth: int = 2):
        self._depth = check_int("RipplePE", "depth", depth, minimum=0,
                                meaning="tokens each operand queue holds, 0 for none")
        super().__init__({
            "i": In(stream.Signature(unsigned(WIDTH))).array(N_SLOTS),
            "o": Out(stream.Signature(unsigned(WIDTH))).array(N_PORTS),
            "cfg": In(ConfigBus),
            "firings": Out(32),
            "idle": Out(1),
        })

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform):
        m = Module()
        config = Signal(PE_CONFIG)
        constant = [Signal(WIDTH, name=f"const{k}") for k in range(N_SLOTS)]
        armed = Signal(N_SLOTS)
        loop = Signal()                 # CARRY/INVARIANT: LOOP; STREAM: ACTIVE
        index = Signal(WIDTH)           # STREAM's index while ACTIVE

        # Slot fronts: present, value; and the take strobe each slot gets on a firing.
        fronts = []
        for k in range(N_SLOTS):
            if self._depth:
                queue = TokenQueue(unsigned(WIDTH), self._depth)
                m.submodules[f"queue{k}"] = queue
                wiring.connect(m, wiring.flipped(self.i[k]), queue.i)
                head = queue.o
            else:
                head = self.i[k]
            kind = config.slots[k]
            present = Mux(kind == SlotKind.EDGE, head.valid, armed[k])
            value = Mux(kind == SlotKind.EDGE, head.payload, constant[k])
            fronts.append((head, kind, present, value))
        h = [Signal(name=f"has{k}") for k in range(N_SLOTS)]
        v = [Signal(WIDTH, name=f"front{k}") for k in range(N_SLOTS)]
        for k, (_, _, present, value) in enumerate(fronts):
            m.d.comb += [h[k].eq(present), v[k].eq(value)]

        rule = Signal()                 # the firing rule holds
        take = Signal(N_SLOTS)          # slots the firing takes
        emit = Signal(N_PORTS)          # ports the firing emits on
        out = [Signal(WIDTH, name=f"result{p}") for p in range(N_PORTS)]
        next_loop = Signal()
        next_index = Signal(WIDTH)
        m.d.comb += [next_loop.eq(loop), next_index.eq(index)]

        # One comparator, shared by the compare operators (a, b) and STREAM (index, bound).
        op = config.op
        decider = v[0] != 0
        passes = decider == config.pred
        current = Mux(loop, index, v[0])                    # STREAM's index this firing
        is_stream = op == PeOp.STREAM
        cmp_a = Mux(is_stream, current, v[0])
        cmp_b = v[1]
        equal = cmp_a == cmp_b
        less_signed = cmp_a.as_signed() < cmp_b.as_signed()
        less_unsigned = cmp_a < cmp_b

        def relation(signed_, rel):
            less = less_signed if signed_ else less_unsigned
            return {"LT": less, "LE": less | equal, "GT": ~(less | equal), "GE": ~less}[rel]

        amount = v[1][:5]
        binary = {
            PeOp.ADD: v[0] + v[1],
            PeOp.SUB: v[0] - v[1],
            PeOp.MUL: v[0] * v[1],
            PeOp.AND: v[0] & v[1],
            PeOp.OR: v[0] | v[1],
            PeOp.XOR: v[0] ^ v[1],
            PeOp.SHL: v[0] << amount,
            PeOp.ASHR: v[0].as_signed() >> amount,
            PeOp.LSHR: v[0] >> amount,
            PeOp.EQ: equal,
            PeOp.NE: ~equal,
        }
        for signed_ in (True, False):
            for rel in ("LT", "LE", "GT", "GE"):
                binary[PeOp[("S" if signed_ else "U") + rel]] = relation(signed_, rel)

        with m.Switch(op):
            for code, result in binary.items():
                with m.Case(code):
                    m.d.comb += [rule.eq(h[0] & h[1]), take.eq(0b011), emit.eq(0b01),
                                 out[0].eq(result[:WIDTH])]
            with m.Case(PeOp.ID):
                m.d.comb += [rule.eq(h[0]), take.eq(0b001), emit.eq(0b01), out[0].eq(v[0])]
            with m.Case(PeOp.SELECT):
                m.d.comb += [rule.eq(h[0] & h[1] & h[2]), take.eq(0b111), emit.eq(0b01),
                             out[0].eq(Mux(decider, v[1], v[2]))]
            with m.Case(PeOp.STEER):
                m.d.comb += [rule.eq(h[0] & h[1]), take.eq(0b011), emit.eq(passes), out[0].eq(v[1])]
            with m.Case(PeOp.MERGE):
                m.d.comb += [rule.eq(h[0] & Mux(decider, h[1], h[2])),
                             take.eq(Mux(decider, 0b011, 0b101)), emit.eq(0b01),
                             out[0].eq(Mux(decider, v[1], v[2]))]
            with m.Case(PeOp.ORDER):
                m.d.comb += [rule.eq(h[0] & h[1]), take.eq(0b011), emit.eq(0b01), out[0].eq(v[0])]
            with m.Case(PeOp.CARRY):
                with m.If(~loop):
                    m.d.comb += [rule.eq(h[1]), take.eq(0b010), emit.eq(0b01), out[0].eq(v[1]),
                                 next_loop.eq(1)]
                with m.Elif(passes):
                    m.d.comb += [rule.eq(h[0] & h[2]), take.eq(0b101), emit.eq(0b01), out[0].eq(v[2])]
                with m.Else():
                    m.d.comb += [rule.eq(h[0]), take.eq(0b001), emit.eq(0), next_loop.eq(0)]
            with m.Case(PeOp.INVARIANT):
                m.d.comb += out[0].eq(v[1])
                with m.If(~loop):
                    m.d.comb += [rule.eq(h[1]), take.eq(0), emit.eq(0b01), next_loop.eq(1)]
                with m.Elif(passes):
                    m.d.comb += [rule.eq(h[0] & h[1]), take.eq(0b001), emit.eq(0b01)]
                with m.Else():
                    m.d.comb += [rule.eq(h[0] & h[1]), take.eq(0b011), emit.eq(0), next_loop.eq(0)]
            with m.Case(PeOp.STREAM):
                cmp = config.cmp
                holds = Signal()
                with m.Switch(cmp):
                    for name in STREAM_COMPARES:
                        with m.Case(StreamCmp[name]):
                            m.d.comb += holds.eq(relation(name[0] == "S", name[1:]))
                # "Less" modes end when the relation fails, "greater" modes when it holds.
                less_mode = Cat(*(cmp == StreamCmp[name] for name in STREAM_COMPARES if name[1] == "L")).any()
                finished = holds ^ less_mode
                m.d.comb += [rule.eq(loop | (h[0] & h[1] & h[2])), out[0].eq(current),
                             out[1].eq(finished ^ config.pred)]
                with m.If(finished):
                    m.d.comb += [take.eq(0b111), emit.eq(0b10), next_loop.eq(0)]
                with m.Else():
                    m.d.comb += [take.eq(0), emit.eq(0b11), next_loop.eq(1),
                                 next_index.eq(current + v[2])]

        # A firing needs room on every port it emits on: an empty output register, one being
        # emptied, or a port that discards.
        room = Cat(*(config.drop[p] | ~self.o[p].valid | self.o[p].ready for p in range(N_PORTS)))
        fire = Signal()
        m.d.comb += fire.eq(rule & ((emit & ~room) == 0))

        taken = Signal(N_SLOTS)
        m.d.comb += taken.eq(Mux(fire, take, 0))
        for k, (head, kind, _, _) in enumerate(fronts):
            m.d.comb += head.ready.eq(taken[k] & (kind == SlotKind.EDGE))
        disarm = Cat(*(taken[k] & (config.slots[k] == SlotKind.CONST) for k in range(N_SLOTS)))

        for p in range(N_PORTS):
            with m.If(fire & emit[p] & ~config.drop[p]):
                m.d.sync += [self.o[p].valid.eq(1), self.o[p].payload.eq(out[p])]
            with m.Elif(self.o[p].ready):
                m.d.sync += self.o[p].valid.eq(0)
        with m.If(fire):
            m.d.sync += [loop.eq(next_loop), index.eq(next_index), self.firings.eq(self.firings + 1)]

        # Configuration writes come after the firing's updates, so they win in a shared cycle.
        rearm = Signal(N_SLOTS)
        cfg = self.cfg
        with m.If(cfg.write):
            with m.Switch(cfg.addr):
                with m.Case(REG_CONFIG):
                    m.d.sync += [config.eq(cfg.data), loop.eq(0)]
                for k in range(N_SLOTS):
                    with m.Case(REG_CONST + k):
                        m.d.sync += constant[k].eq(cfg.data)
                        m.d.comb += rearm[k].eq(1)
        config_write = cfg.write & (cfg.addr == REG_CONFIG)
        m.d.sync += armed.eq(Mux(config_write, 0, (armed & ~disarm) | rearm))

        m.d.comb += self.idle.eq(~loop)
        with m.If(cfg.read):
            with m.Switch(cfg.addr):
                with m.Case(REG_CONFIG):
                    m.d.sync += cfg.rdata.eq(config.as_value())
                for k in range(N_SLOTS):
                    with m.Case(REG_CONST + k):
                        m.d.sync += cfg.rdata.eq(constant[k])
                with m.Case(REG_STATUS):
                    m.d.sync += cfg.rdata.eq(Cat(~loop, armed))
                with m.Default():
                    m.d.sync += cfg.rdata.eq(Const(0, 32))
        return m
