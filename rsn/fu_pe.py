"""The ``pe`` FU kind: the Ripple processing element, one ordered-dataflow operator chosen at run time.

One PE design serves every operator, as a CGRA PE does: the host writes a configuration word
(operator, decider polarity, STREAM compare mode, each operand slot's kind, which output ports
discard) and the constant of each constant or ``hold`` slot over a :data:`rsn.fu.ConfigBus`.
The semantics are those of :mod:`rsn.dataflow_ops` (``ripple_core.ops``), the specification;
docs/ripple.md ("The PE hardware") describes the architecture. :class:`RipplePE` is the PE
itself; :class:`PeFu` puts it behind the FU interface of the fabric (``pe`` tiles), where
micro-ops grant it firings.

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
* **Memory bank** (``mem_depth`` > 0). A PE may own a bank of ``mem_depth`` 32-bit words (an
  :class:`amaranth.lib.memory.Memory` with one write port and one synchronous read port, the
  shape of a block RAM) holding one array: bank word ``w`` is flat address ``origin + w``. Only
  such a PE runs LOAD (slots base, offset, sync; ``o[0]`` the word, ``o[1]`` a done token 1)
  and STORE (slots base, offset, value; ``o[0]`` a done token 1), with the firing rules of
  :mod:`rsn.dataflow_ops`. A LOAD without a sync slot is configured with slot 2 ``hold`` (always
  present, never taken); a STORE has no sync slot (an ORDER in front of its value does that
  job). A firing accesses ``address = base + offset`` (32-bit wrap), bank word
  ``address - origin`` (signed, exact). A PE without a bank configured as LOAD or STORE never
  fires.

  *Latency.* A STORE writes at the clock edge of its firing and offers its done token the cycle
  after, as an ALU result; a LOAD's done token also comes the cycle after its firing, but its
  word is read at that edge and offered on ``o[0]`` two cycles after the firing
  (:data:`LOAD_LATENCY`). Between the read port and ``o[0]`` a catch register holds a word that
  cannot enter the output register, so LOADs fire one per cycle sustained while ``o[0]`` is
  ready; ``o[0]``'s room counts the word being read, the catch register and the output register.
  Anything a LOAD of the same configuration reads was written at least one edge before, so it
  sees every earlier STORE and window write.

  *Out of range.* An address outside ``origin .. origin + mem_depth - 1`` is a program error.
  The PE still fires (so the fabric does not hang): a LOAD offers 0, a STORE writes nothing, and
  the sticky fault bit (status bit 4) is set with the flat address of the first such access in
  the fault register. Writing the configuration word clears the fault bit. The golden model
  raises :class:`PeMemoryError` instead.

  *Config bus.* An access to the window (0x0800-0x0FFF) in a cycle keeps LOAD and STORE from
  firing in that cycle (the bus wins the bank's ports). The window shows bank words
  ``page * 2048 + (addr - 0x0800)`` modulo ``mem_depth``: a bank of 2048 words or fewer is
  aliased through the whole window, and a 4096-word bank needs the page register for its upper
  half. The host preloads an array by writing the window before the run and reads it back after.

* **Ripple's operators** (docs/ripple.md, "Ripple's operators in hardware"). ``ARB``: a
  round-robin merge of the slots that have a token, from the slot after the last grant (a
  ``const`` slot never armed is an absent source). ``TASK``: dispatch of slot 0's arguments on
  ``o[0]``; with ``pred`` (``ind``) whenever there is room, without it one at a time, a token on
  slot 1 returning the one credit (before any dispatch). With a bank only: ``QUEUE`` keeps its
  tokens in the bank as a ring: slot 0's tokens enter while fewer than the depth (register 8)
  are queued, or, with ``pred`` (spill), while the bank has room; a firing dequeues one, as a
  LOAD's word. Words beyond the depth are spill traffic, counted in registers 9 and 10.
  ``LOCK`` is the atomic directory of one ACQUIRE site (slot 0 to ``o[0]``) and one RELEASE
  site (slots 1 and 2, address and sync, to ``o[1]``), with :data:`LOCK_ENTRIES` entries.
  ``LDST`` serves a LOAD site (slot 0, a word offset, to ``o[0]``) and a STORE site (slots 1 and
  2, offset and value, to ``o[1]``) on the one array in the bank. In LOCK and LDST the second
  site goes first when both can fire, since it frees what the first may wait for.

Configuration registers (``cfg.addr``; writes take effect at the clock edge, reads return the
register in the next cycle):

* ``0``: the configuration word, :data:`PE_CONFIG`. Writing it also puts the operator back in its
  first state (INIT / IDLE) and disarms the constant slots.
* ``1 + k`` (k = 0, 1, 2): the constant of slot ``k``; writing it arms the slot (one token for a
  ``CONST`` slot, a permanent one for ``HOLD``).
* ``4`` (read only): bit 0 the operator is in its first state, bits 1-3 the armed constant slots,
  bit 4 a LOAD or STORE address was out of range since the configuration word was written.

With a bank (without one, these read 0 and writes are ignored):

* ``5``: ``origin``, the flat address of bank word 0 (a signed 32-bit word address).
* ``6`` (read only): the flat address of the first out-of-range access (valid while bit 4 is set).
* ``7``: bit 0, the window's page.
* ``8``: QUEUE's depth (a larger value reads back as ``mem_depth``); ``9``, ``10`` (read only):
  its spill writes and reads (16 bits, wrapping); ``11`` (read only): the addresses LOCK holds.
  Writing the configuration word clears 9-11, the ring, the directory and the fault.
* ``0x0800-0x0FFF``: the bank window; a read returns the word in the next cycle, as a register.
"""

from collections import deque
from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Mux, Shape, Signal, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from hw.params import ParameterError, check_int
from hw.token_queue import TokenQueue

from .channels import Channel, UnitModel
from .dataflow_ops import LOAD_VALUE, STREAM_COMPARES, make_operator, wrap
from .fu import ConfigBus, FuKind, fu_signature
from .fu_alu import count_status
from .isa import PeUop

__all__ = ["PeOp", "SlotKind", "StreamCmp", "PE_CONFIG", "PE_OPS", "WIDTH", "N_SLOTS", "N_PORTS",
           "REG_CONFIG", "REG_CONST", "REG_STATUS", "REG_ORIGIN", "REG_FAULT", "REG_PAGE", "MEM_WINDOW",
           "WINDOW_WORDS", "MAX_MEM_DEPTH", "STATUS_FAULT", "MEMORY_OPS", "RIPPLE_OPS", "BANK_OPS",
           "REG_QUEUE_DEPTH", "REG_SPILL_WRITES", "REG_SPILL_READS", "REG_LOCKS", "LOCK_ENTRIES",
           "check_mem_depth",
           "pe_config_word", "decode_config", "RipplePE", "LATENCY", "LOAD_LATENCY", "PeFu", "PeModel",
           "PeMemoryError", "PE_KIND"]

WIDTH = 32
N_SLOTS = 3
N_PORTS = 2

REG_CONFIG = 0
REG_CONST = 1           # 1, 2, 3: slot 0, 1, 2
REG_STATUS = 4
REG_ORIGIN = 5          # the flat address of bank word 0
REG_FAULT = 6           # the flat address of the first out-of-range access
REG_PAGE = 7            # which 2048-word page of the bank the window shows
MEM_WINDOW = 0x0800     # 0x0800-0x0FFF: the bank, through the config bus
WINDOW_WORDS = 0x0800
MAX_MEM_DEPTH = 4096
STATUS_FAULT = 1 << 4   # status bit: a LOAD or STORE address was out of range
MEMORY_OPS = ("LOAD", "STORE")
RIPPLE_OPS = ("QUEUE", "ARB", "TASK", "LOCK", "LDST")   # Ripple's additions and the shared array
BANK_OPS = ("LOAD", "STORE", "QUEUE", "LOCK", "LDST")   # only a PE with a bank runs these
REG_QUEUE_DEPTH = 8     # QUEUE: the queue's depth D
REG_SPILL_WRITES = 9    # QUEUE (read only): words enqueued while D or more stay queued after the dequeue
REG_SPILL_READS = 10    # QUEUE (read only): words dequeued while more than D were queued
REG_LOCKS = 11          # LOCK (read only): addresses held now
LOCK_ENTRIES = 4        # the atomic directory's entries
SPILL_COUNTER_BITS = 16  # the spill counters wrap at 2**16


class PeOp(enum.Enum, shape=6):
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
    LOAD = 27       # only with a memory bank (mem_depth > 0)
    STORE = 28
    QUEUE = 29      # Ripple's queue (spill: pred); its ring is the bank
    ARB = 30        # Ripple's round-robin arbiter over the present slots
    TASK = 31       # task dispatch (ind: pred)
    LOCK = 32       # the atomic directory: one ACQUIRE and one RELEASE site; only with a bank
    LDST = 33       # a LOAD and a STORE on one array, in one PE; only with a bank


class SlotKind(enum.Enum, shape=2):
    EDGE = 0        # fed by i[k] through its token queue
    CONST = 1       # one token, consumed once
    HOLD = 2        # one token, never consumed


class StreamCmp(enum.Enum, shape=3):
    """STREAM's compare modes, in the order of :data:`rsn.dataflow_ops.STREAM_COMPARES`."""
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

# Operator name (as in rsn.dataflow_ops) -> PeOp; GEP variants behave as ADD.
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


def decode_config(word: int) -> dict:
    """The fields of a configuration word: op, pred, cmp (names), slots (kind names), drop (ports)."""
    def field(name):
        offset, width = PE_CONFIG[name].offset, Shape.cast(PE_CONFIG[name].shape).width
        return (word >> offset) & ((1 << width) - 1)
    op = field("op")
    if op not in {code.value for code in PeOp}:
        raise ParameterError(f"RipplePE: configuration word {word:#x} has operator code {op}, which is none")
    slots = [(field("slots") >> (2 * k)) & 3 for k in range(N_SLOTS)]
    if 3 in slots:
        raise ParameterError(f"RipplePE: configuration word {word:#x} gives slot {slots.index(3)} the "
                             f"reserved kind 3; kinds are 0 edge, 1 const, 2 hold")
    return {"op": PeOp(op).name, "pred": bool(field("pred")), "cmp": StreamCmp(field("cmp")).name,
            "slots": tuple(SlotKind(kind).name.lower() for kind in slots),
            "drop": tuple(p for p in range(N_PORTS) if field("drop") >> p & 1)}


def check_mem_depth(component: str, mem_depth) -> int:
    """Return ``mem_depth`` if it is 0 (no bank) or a power of two from 2 to 4096; raise
    :class:`ParameterError`. A power of two makes the window's aliasing the low address bits;
    4096 words are two pages of the config window."""
    check_int(component, "mem_depth", mem_depth, minimum=0, meaning="words in the PE's memory bank")
    if mem_depth == 1 or mem_depth > MAX_MEM_DEPTH or mem_depth & (mem_depth - 1):
        raise ParameterError(f"{component}: mem_depth={mem_depth} is not allowed; mem_depth must be 0 "
                             f"(no memory bank) or a power of two from 2 to {MAX_MEM_DEPTH}")
    return mem_depth


class RipplePE(wiring.Component):
    """One ordered-dataflow operator with per-operand token queues; see the module docstring.

    Parameters
    ----------
    depth : int
        Tokens each operand queue holds (>= 1), or 0 for no queues.
    mem_depth : int
        Words in the PE's memory bank: 0 (the default) for none, else a power of two from 2 to
        4096. Only a PE with a bank runs LOAD and STORE.
    ripple_ops : bool
        Build Ripple's operators (ARB and TASK; with a bank also QUEUE, LDST and LOCK). Without
        them a PE configured as one never fires. Synthesised for ECP5, the ``pe`` FU with a
        64-word bank takes 2671 LUTs and 658 FFs with them and 1794 and 474 without; without a
        bank, 1544 and 1429 LUTs (300 FFs either way).

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
    enable : In(1)
        Only with ``gated=True``: the PE fires only in cycles where it is high.
    fire : Out(1)
        A firing happens in this cycle.
    holding : Out(1)
        A result is in an output register or on its way to one (a LOAD's word being read).
    """

    def __init__(self, depth: int = 2, *, gated: bool = False, mem_depth: int = 0, ripple_ops: bool = True):
        self._depth = check_int("RipplePE", "depth", depth, minimum=0,
                                meaning="tokens each operand queue holds, 0 for none")
        self._mem_depth = check_mem_depth("RipplePE", mem_depth)
        self._gated = bool(gated)
        self._ripple_ops = bool(ripple_ops)
        members = {
            "i": In(stream.Signature(unsigned(WIDTH))).array(N_SLOTS),
            "o": Out(stream.Signature(unsigned(WIDTH))).array(N_PORTS),
            "cfg": In(ConfigBus),
            "firings": Out(32),
            "idle": Out(1),
            "fire": Out(1),
            "holding": Out(1),
        }
        if gated:
            members["enable"] = In(1)
        super().__init__(members)

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def mem_depth(self) -> int:
        return self._mem_depth

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

        cfg = self.cfg
        fire = Signal()
        fault = Signal()                # sticky: a memory address was out of range, or a bad RELEASE
        enabled = self.enable if self._gated else 1
        free = [~self.o[p].valid | self.o[p].ready for p in range(N_PORTS)]
        # LDST and LOCK serve two sites; the second (a STORE, a RELEASE: slots 1 and 2, port 1)
        # goes first whenever it can, since it frees what the first site may wait for.
        second_site = Signal()
        m.d.comb += second_site.eq(h[1] & h[2] & (config.drop[1] | free[1]))
        ripple = self._ripple_ops                       # ARB and TASK
        extras = ripple and bool(self._mem_depth)       # QUEUE, LDST and LOCK: they need the bank
        bank = directory = None
        if self._mem_depth:
            bank = self._elaborate_bank(m, config, v, fire, fault, second_site, fronts[0][0], enabled, extras)
        if extras:
            directory = self._elaborate_directory(m, config, v, fire, fault, second_site, bank.fault_address)

        rule = Signal()                 # the firing rule holds
        take = Signal(N_SLOTS)          # slots the firing takes
        emit = Signal(N_PORTS)          # ports the firing emits on
        out = [Signal(WIDTH, name=f"result{p}") for p in range(N_PORTS)]
        next_loop = Signal()
        next_index = Signal(WIDTH)
        m.d.comb += [next_loop.eq(loop), next_index.eq(index)]

        def grant(m, k):
            """ARB: pass slot k's token and start the next round after it."""
            m.d.comb += [rule.eq(1), take.eq(1 << k), emit.eq(0b01), out[0].eq(v[k]),
                         next_index.eq((k + 1) % N_SLOTS)]

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
            if ripple:
                with m.Case(PeOp.ARB):
                    # Round robin: from the slot after the last grant, the first that has a token.
                    with m.Switch(index[:2]):
                        for start in range(N_SLOTS):
                            order = [(start + j) % N_SLOTS for j in range(N_SLOTS)]
                            with m.Case(start) if start < N_SLOTS - 1 else m.Default():
                                with m.If(h[order[0]]):
                                    grant(m, order[0])
                                with m.Elif(h[order[1]]):
                                    grant(m, order[1])
                                with m.Elif(h[order[2]]):
                                    grant(m, order[2])
                with m.Case(PeOp.TASK):
                    # pred: ind (pipelined). Otherwise one credit (loop = spent); a done token on
                    # slot 1 returns it, and that return goes before a dispatch.
                    m.d.comb += out[0].eq(v[0])
                    with m.If(config.pred):
                        m.d.comb += [rule.eq(h[0]), take.eq(0b001), emit.eq(0b01)]
                    with m.Elif(h[1]):
                        m.d.comb += [rule.eq(1), take.eq(0b010), emit.eq(0), next_loop.eq(0)]
                    with m.Elif(~loop):
                        m.d.comb += [rule.eq(h[0]), take.eq(0b001), emit.eq(0b01), next_loop.eq(1)]
            if extras:
                with m.Case(PeOp.QUEUE):
                    # A firing is a dequeue: the word at the ring's head, read as a LOAD's word.
                    m.d.comb += [rule.eq((bank.count != 0) & ~bank.bus_on_bank), take.eq(0), emit.eq(0b01)]
                with m.Case(PeOp.LDST):
                    with m.If(second_site):
                        m.d.comb += [rule.eq(~bank.bus_on_bank), take.eq(0b110), emit.eq(0b10), out[1].eq(1)]
                    with m.Else():
                        m.d.comb += [rule.eq(h[0] & ~bank.bus_on_bank), take.eq(0b001), emit.eq(0b01)]
                with m.Case(PeOp.LOCK):
                    with m.If(second_site):
                        m.d.comb += [rule.eq(1), take.eq(0b110), emit.eq(0b10), out[1].eq(1)]
                    with m.Else():
                        m.d.comb += [rule.eq(h[0] & ~directory.held & directory.has_free), take.eq(0b001),
                                     emit.eq(0b01), out[0].eq(v[0])]
                # LOAD (base, offset, sync) and STORE (base, offset, value); a LOAD without a
                # sync slot has a hold slot 2. The config bus wins the bank: neither fires while
                # the bus uses the window.
                with m.Case(PeOp.LOAD):
                    m.d.comb += [rule.eq(h[0] & h[1] & h[2] & ~bank.bus_on_bank), take.eq(0b111),
                                 emit.eq(0b11), out[1].eq(1)]
                with m.Case(PeOp.STORE):
                    m.d.comb += [rule.eq(h[0] & h[1] & h[2] & ~bank.bus_on_bank), take.eq(0b111),
                                 emit.eq(0b01), out[0].eq(1)]

        # A firing needs room on every port it emits on: an empty output register, one being
        # emptied, or a port that discards. With a bank, port 0 has room for a LOAD while fewer
        # than two words are queued for it (the one being read, the catch register, the output
        # register), and room for anything else only when nothing is queued, so results stay in order.
        room0 = free[0]
        if self._mem_depth:
            o0 = self.o[0]
            queued0 = bank.reading + bank.caught_valid + o0.valid - (o0.valid & o0.ready)
            room0 = Mux(bank.is_load, queued0 < 2, queued0 == 0)
        room = Cat(config.drop[0] | room0, config.drop[1] | free[1])
        m.d.comb += [fire.eq(enabled & rule & ((emit & ~room) == 0)), self.fire.eq(fire)]

        taken = Signal(N_SLOTS)
        m.d.comb += taken.eq(Mux(fire, take, 0))
        for k, (head, kind, _, _) in enumerate(fronts):
            enqueues = bank.enqueue if k == 0 and bank is not None else 0
            m.d.comb += head.ready.eq((taken[k] & (kind == SlotKind.EDGE)) | enqueues)
        disarm = Cat(*(taken[k] & (config.slots[k] == SlotKind.CONST) for k in range(N_SLOTS)))

        for p in range(N_PORTS):
            if p == 0 and self._mem_depth:
                continue
            with m.If(fire & emit[p] & ~config.drop[p]):
                m.d.sync += [self.o[p].valid.eq(1), self.o[p].payload.eq(out[p])]
            with m.Elif(self.o[p].ready):
                m.d.sync += self.o[p].valid.eq(0)
        with m.If(fire):
            m.d.sync += [loop.eq(next_loop), index.eq(next_index), self.firings.eq(self.firings + 1)]
        holding = Cat(*(self.o[p].valid for p in range(N_PORTS))).any()
        if self._mem_depth:
            self._elaborate_port0(m, bank, fire & emit[0] & ~config.drop[0], out[0])
            holding = holding | bank.reading | bank.caught_valid
        m.d.comb += self.holding.eq(holding)

        # Configuration writes come after the firing's updates, so they win in a shared cycle.
        rearm = Signal(N_SLOTS)
        with m.If(cfg.write):
            with m.Switch(cfg.addr):
                with m.Case(REG_CONFIG):
                    m.d.sync += [config.eq(cfg.data), loop.eq(0), index.eq(0)]
                    if self._mem_depth:
                        m.d.sync += fault.eq(0)
                    if extras:
                        m.d.sync += [bank.head.eq(0), bank.count.eq(0), bank.spill_writes.eq(0),
                                     bank.spill_reads.eq(0), directory.valid.eq(0)]
                for k in range(N_SLOTS):
                    with m.Case(REG_CONST + k):
                        m.d.sync += constant[k].eq(cfg.data)
                        m.d.comb += rearm[k].eq(1)
                if self._mem_depth:
                    with m.Case(REG_ORIGIN):
                        m.d.sync += bank.origin.eq(cfg.data)
                    with m.Case(REG_PAGE):
                        m.d.sync += bank.page.eq(cfg.data[0])
                if extras:
                    with m.Case(REG_QUEUE_DEPTH):
                        m.d.sync += bank.queue_depth.eq(Mux(cfg.data > self._mem_depth, self._mem_depth,
                                                            cfg.data))
        config_write = cfg.write & (cfg.addr == REG_CONFIG)
        m.d.sync += armed.eq(Mux(config_write, 0, (armed & ~disarm) | rearm))

        first_state = ~loop
        if extras:
            first_state = Mux(op == PeOp.QUEUE, bank.count == 0,
                              Mux(op == PeOp.LOCK, ~directory.valid.any(), ~loop))
        m.d.comb += self.idle.eq(first_state)
        registers = Signal(32)          # the register read, due in the cycle after `read`
        with m.If(cfg.read):
            with m.Switch(cfg.addr):
                with m.Case(REG_CONFIG):
                    m.d.sync += registers.eq(config.as_value())
                for k in range(N_SLOTS):
                    with m.Case(REG_CONST + k):
                        m.d.sync += registers.eq(constant[k])
                with m.Case(REG_STATUS):
                    m.d.sync += registers.eq(Cat(first_state, armed, fault))
                readable = {}
                if self._mem_depth:
                    readable = {REG_ORIGIN: bank.origin, REG_FAULT: bank.fault_address, REG_PAGE: bank.page}
                if extras:
                    readable.update({REG_QUEUE_DEPTH: bank.queue_depth, REG_SPILL_WRITES: bank.spill_writes,
                                     REG_SPILL_READS: bank.spill_reads,
                                     REG_LOCKS: sum(directory.valid[e] for e in range(LOCK_ENTRIES))})
                for address, value in readable.items():
                    with m.Case(address):
                        m.d.sync += registers.eq(value)
                with m.Default():
                    m.d.sync += registers.eq(Const(0, 32))
        if self._mem_depth:
            # A word read through the window comes straight from the bank's read port.
            window_read_done = Signal()
            m.d.sync += window_read_done.eq(bank.bus_read)
            m.d.comb += cfg.rdata.eq(Mux(window_read_done, bank.read_port.data, registers))
        else:
            m.d.comb += cfg.rdata.eq(registers)
        return m

    def _elaborate_bank(self, m, config, v, fire, fault, second_site, front0, enabled,
                        extras) -> SimpleNamespace:
        """The memory bank, its two ports and its registers; returns the signals the rest uses.

        A LOAD or STORE firing accesses flat address ``base + offset`` (32-bit wrap), which is
        bank word ``address - origin`` (exact: a 33-bit signed difference) if that lies in
        0..mem_depth-1. An LDST firing gives the bank word itself (its load or store offset; the
        flat address is ``origin + word``). Out of range, a load reads 0, a store writes nothing,
        and the first such address is kept in the fault register.

        A QUEUE keeps its tokens in the bank as a ring (``head``, ``count``): slot 0's token is
        written at the tail whenever the ring is below its limit (``queue_depth``, or the whole
        bank for a spill queue), which is not a firing; a firing reads the head.
        """
        addr_bits = ceil_log2(self._mem_depth)
        m.submodules.bank = bank = Memory(shape=unsigned(WIDTH), depth=self._mem_depth, init=[])
        write_port = bank.write_port()
        read_port = bank.read_port(domain="sync")
        cfg = self.cfg
        origin, fault_address = Signal(WIDTH), Signal(WIDTH)
        page = Signal()
        op = config.op
        is_ldst, is_queue = (op == PeOp.LDST, op == PeOp.QUEUE) if extras else (Const(0), Const(0))
        reads = (op == PeOp.LOAD) | is_queue | (is_ldst & ~second_site)    # port 0 gets a bank word
        stores = (op == PeOp.STORE) | (is_ldst & second_site)

        address = (v[0] + v[1])[:WIDTH]
        site_word = Mux(second_site, v[1], v[0]).as_signed()
        word = Mux(is_ldst, site_word, address.as_signed() - origin.as_signed())
        flat = Mux(is_ldst, (origin + site_word)[:WIDTH], address)
        in_range = (word >= 0) & (word < self._mem_depth)
        on_window = cfg.addr[11:] == MEM_WINDOW >> 11                   # 0x0800-0x0FFF
        window_word = Cat(cfg.addr[:11], page)[:addr_bits]             # modulo mem_depth
        bus_write, bus_read = cfg.write & on_window, cfg.read & on_window
        bus_on_bank = bus_write | bus_read

        # The queue's ring.
        head, count = Signal(addr_bits, name="queue_head"), Signal(addr_bits + 1, name="queue_count")
        queue_depth = Signal(addr_bits + 1, name="queue_depth")    # at most mem_depth (clamped on write)
        spill_writes, spill_reads = Signal(SPILL_COUNTER_BITS), Signal(SPILL_COUNTER_BITS)
        spill = config.pred
        limit = Mux(spill, self._mem_depth, queue_depth)
        enqueue = Signal()
        m.d.comb += enqueue.eq(enabled & is_queue & front0.valid & (count < limit) & ~bus_on_bank)
        dequeue = fire & is_queue
        m.d.sync += count.eq(count + enqueue - dequeue)
        with m.If(dequeue):
            m.d.sync += head.eq(head + 1)
        # A word spills if the hardware part (D words) is full after this cycle's dequeue; a
        # dequeue refills the hardware part from spill while more than D are queued.
        with m.If(enqueue & spill & ((count - dequeue) >= queue_depth)):
            m.d.sync += spill_writes.eq(spill_writes + 1)
        with m.If(dequeue & spill & (count > queue_depth)):
            m.d.sync += spill_reads.eq(spill_reads + 1)

        m.d.comb += [
            write_port.en.eq(bus_write | (fire & stores & in_range) | enqueue),
            write_port.addr.eq(Mux(bus_write, window_word, Mux(is_queue, head + count, word[:addr_bits]))),
            write_port.data.eq(Mux(bus_write, cfg.data, Mux(is_queue, v[0], v[2]))),
            read_port.en.eq(bus_read | (fire & reads)),
            read_port.addr.eq(Mux(bus_read, window_word, Mux(is_queue, head, word[:addr_bits]))),
        ]
        with m.If(fire & (reads | stores) & ~is_queue & ~in_range & ~fault):
            m.d.sync += [fault.eq(1), fault_address.eq(flat)]

        reading = Signal()              # a word read for port 0 is on the read port's data
        read_fault = Signal()           # ... and its address was out of range: the word is 0
        with m.If(fire):
            m.d.sync += read_fault.eq(~in_range & ~is_queue)
        word_read = Mux(read_fault, 0, read_port.data)
        return SimpleNamespace(is_load=reads, bus_read=bus_read, bus_on_bank=bus_on_bank,
                               read_port=read_port, word=word_read, reading=reading,
                               caught=Signal(WIDTH, name="caught"), caught_valid=Signal(name="caught_valid"),
                               origin=origin, page=page, fault_address=fault_address,
                               head=head, count=count, queue_depth=queue_depth, enqueue=enqueue,
                               spill_writes=spill_writes, spill_reads=spill_reads)

    def _elaborate_directory(self, m, config, v, fire, fault, second_site, fault_address) -> SimpleNamespace:
        """LOCK's atomic directory: :data:`LOCK_ENTRIES` held addresses. An acquire (slot 0) may
        fire when no entry holds its address and one is free; it claims the lowest free entry.
        A release (slots 1, 2) frees the entry holding its address; if none does, it is a program
        error: the fault bit is set with the address (the PE still fires, so nothing hangs)."""
        valid = Signal(LOCK_ENTRIES, name="lock_valid")
        held_address = [Signal(WIDTH, name=f"lock{e}") for e in range(LOCK_ENTRIES)]
        held = Cat(*(valid[e] & (held_address[e] == v[0]) for e in range(LOCK_ENTRIES))).any()
        releases = Cat(*(valid[e] & (held_address[e] == v[1]) for e in range(LOCK_ENTRIES)))
        is_lock = config.op == PeOp.LOCK
        with m.If(fire & is_lock & second_site):
            m.d.sync += valid.eq(valid & ~releases)
            with m.If((releases == 0) & ~fault):
                m.d.sync += [fault.eq(1), fault_address.eq(v[1])]
        with m.Elif(fire & is_lock):
            claim = ((valid + 1) & ~valid)[:LOCK_ENTRIES]     # the lowest free entry
            for e in range(LOCK_ENTRIES):
                with m.If(claim[e]):
                    m.d.sync += held_address[e].eq(v[0])
            m.d.sync += valid.eq(valid | claim)
        return SimpleNamespace(valid=valid, held=held, has_free=~valid.all())

    def _elaborate_port0(self, m, bank, emits, result):
        """Port 0 with a bank. A LOAD's word is on the read port's data the cycle after its firing
        (``bank.reading``) and goes to the output register if that is free, else to the catch
        register. A LOAD fires only while fewer than two words are queued for port 0, so a word
        being read and a caught one never wait together, and the caught one leaves first. Other
        results load the output register directly, which the room rule allows only when nothing
        is queued."""
        o0 = self.o[0]
        with m.If(emits & ~bank.is_load):
            m.d.sync += [o0.valid.eq(1), o0.payload.eq(result)]
        with m.Elif(~o0.valid | o0.ready):
            m.d.sync += [o0.valid.eq(bank.caught_valid | bank.reading),
                         o0.payload.eq(Mux(bank.caught_valid, bank.caught, bank.word)),
                         bank.caught_valid.eq(0)]
        with m.Elif(bank.reading):
            m.d.sync += [bank.caught.eq(bank.word), bank.caught_valid.eq(1)]
        m.d.sync += bank.reading.eq(emits & bank.is_load)


# ---------------------------------------------------------------------------- the FU kind

LATENCY = 1         # a firing's results are offered in the next cycle ...
LOAD_LATENCY = 2    # ... except a LOAD's word on o[0], read from the bank in the next cycle


class PeFu(wiring.Component):
    """The ``pe`` FU: a :class:`RipplePE` without queues of its own (the tile's token queues feed
    it), which fires only while a micro-op grants it firings.

    Micro-op (:data:`rsn.isa.PeUop`): ``firings`` firings of the configured operator. The
    micro-op completes in the first cycle in which all of them have happened and no result is
    held (both output registers empty, no LOAD word on its way); the next micro-op is accepted
    from the cycle after. ``busy`` is high from accepting a micro-op to its completion;
    ``firings`` counts firings; ``stalls`` counts busy cycles in which nothing fired and no
    output token left; ``finished`` rises the cycle after a ``last`` micro-op completes. The
    operator, the slot kinds, the constants and the bank are the PE's registers on ``cfg`` (see
    the module docstring); ``clear`` leaves them alone.

    Parameters
    ----------
    width : int
        Data width of the tile's streams; the PE computes on 32 bits, so it must be 32.
    mem_depth : int
        Words in the PE's memory bank (see :class:`RipplePE`); 0 for none.
    ripple_ops : bool
        Build Ripple's operators (see :class:`RipplePE`).
    """

    def __init__(self, width: int = WIDTH, mem_depth: int = 0, ripple_ops: bool = True):
        if width != WIDTH:
            raise ParameterError(f"PeFu: width={width!r} is not allowed; the pe FU computes on "
                                 f"{WIDTH}-bit two's complement values, so data_width must be {WIDTH}")
        self._mem_depth = check_mem_depth("PeFu", mem_depth)
        self._ripple_ops = bool(ripple_ops)
        super().__init__(fu_signature(PE_KIND, width))

    @property
    def mem_depth(self) -> int:
        return self._mem_depth

    def elaborate(self, platform):
        m = Module()
        m.submodules.pe = pe = RipplePE(0, gated=True, mem_depth=self._mem_depth, ripple_ops=self._ripple_ops)
        for k in range(N_SLOTS):
            wiring.connect(m, wiring.flipped(self.i[k]), pe.i[k])
        for p in range(N_PORTS):
            wiring.connect(m, pe.o[p], wiring.flipped(self.o[p]))
        wiring.connect(m, wiring.flipped(self.cfg), pe.cfg)

        active, left, last = Signal(), Signal(16), Signal()
        m.d.comb += pe.enable.eq(active & (left != 0))
        completes = active & (left == 0) & ~pe.holding
        m.d.comb += self.uop.ready.eq(~active)
        with m.If(pe.fire):
            m.d.sync += left.eq(left - 1)
        with m.If(completes):
            m.d.sync += active.eq(0)
        with m.If(self.uop.valid & self.uop.ready):
            m.d.sync += [active.eq(1), left.eq(self.uop.payload.firings), last.eq(self.uop.payload.last)]
        sent = Cat(*(self.o[p].valid & self.o[p].ready for p in range(N_PORTS))).any()
        m.d.comb += self.busy.eq(active)
        count_status(m, self, firing=pe.fire, stall=active & ~pe.fire & ~sent,
                     completes_last=completes & last)
        return m


class PeMemoryError(ValueError):
    """A LOAD or STORE outside the PE's memory bank, or on a PE without one: a program error.
    The message names the PE, the operator and the address."""


class _Node:
    """What an ops.py operator reads of its node."""

    def __init__(self, name: str, op: str, config: dict):
        self.name, self.op, self.inputs = name, op, [None] * N_SLOTS
        # ARB: one-token tuples from the three slots (an empty slot is an absent source); TASK:
        # one argument, ``ind`` is pred.
        self.attrs = {"pred": config["pred"], "cmp": config["cmp"], "width": 1, "sources": N_SLOTS,
                      "ind": config["pred"]}


class PeModel(UnitModel):
    """Golden model of the ``pe`` FU: the configured operator of :mod:`rsn.dataflow_ops`, fired
    while micro-ops grant firings. One :meth:`step` is at most one firing (or one completion).

    Registers are those of the module docstring: ``write_word`` / ``read_word``. With a bank
    (``mem_depth`` words), LOAD reads and STORE writes ``memory[base + offset - origin]``; an
    address outside the bank raises :class:`PeMemoryError` (the RTL's fault bit never shows
    here, so status bit 4 and the fault register read 0). ``name`` names the PE in errors.
    """

    KIND, COUNT_FIELD = "pe", "firings"

    def __init__(self, width: int = WIDTH, mem_depth: int = 0, ripple_ops: bool = True, *, name: str = "pe"):
        super().__init__()
        self.ripple_ops = bool(ripple_ops)
        if width != WIDTH:
            raise ParameterError(f"PeModel: width={width!r}; the pe FU computes on {WIDTH} bits")
        self.mem_depth = check_mem_depth("PeModel", mem_depth)
        self.name = name
        self.memory = [0] * mem_depth
        self.origin, self.page, self.queue_depth = 0, 0, 0
        self.word, self.constants, self.armed = 0, [0] * N_SLOTS, [False] * N_SLOTS
        self.left = 0
        self._configure(0)

    def _configure(self, word: int):
        self.word, self.config = word, decode_config(word)
        op = self.config["op"]
        if op in RIPPLE_OPS and not self.ripple_ops:
            raise PeMemoryError(f"{self.name}: configured as {op}, but this PE was built without Ripple's "
                                f"operators (ripple_ops=False; the fabric's pe_ripple_ops)")
        if op in BANK_OPS and not self.mem_depth:
            raise PeMemoryError(f"{self.name}: configured as {op}, but this PE has no memory bank "
                                f"(mem_depth=0)")
        self.armed = [False] * N_SLOTS
        self.ring, self.spill_writes, self.spill_reads = deque(), 0, 0
        self.locks: set[int] = set()
        self.operator = None if op in ("QUEUE", "LOCK", "LDST") else \
            make_operator(_Node(self.name, op, self.config))

    def _first_state(self) -> bool:
        op = self.config["op"]
        if op == "QUEUE":
            return not self.ring
        if op == "LOCK":
            return not self.locks
        return self.operator is None or self.operator.idle()

    def _window_word(self, addr: int) -> int | None:
        """The bank word a config address reaches, or None if it is not in the window."""
        if not self.mem_depth or not MEM_WINDOW <= addr < MEM_WINDOW + WINDOW_WORDS:
            return None
        return (self.page * WINDOW_WORDS + addr - MEM_WINDOW) % self.mem_depth

    def write_word(self, addr: int, value: int):
        value &= 0xFFFF_FFFF
        if addr == REG_CONFIG:
            self._configure(value)
        elif REG_CONST <= addr < REG_CONST + N_SLOTS:
            self.constants[addr - REG_CONST] = value
            self.armed[addr - REG_CONST] = True
        elif self.mem_depth and addr == REG_ORIGIN:
            self.origin = wrap(value)
        elif self.mem_depth and addr == REG_PAGE:
            self.page = value & 1
        elif self.mem_depth and addr == REG_QUEUE_DEPTH:
            self.queue_depth = min(value, self.mem_depth)
        elif (word := self._window_word(addr)) is not None:
            self.memory[word] = value

    def read_word(self, addr: int) -> int:
        if addr == REG_CONFIG:
            return self.word
        if REG_CONST <= addr < REG_CONST + N_SLOTS:
            return self.constants[addr - REG_CONST]
        if addr == REG_STATUS:
            return int(self._first_state()) | sum(int(a) << (k + 1) for k, a in enumerate(self.armed))
        if self.mem_depth and addr == REG_ORIGIN:
            return self.origin & 0xFFFF_FFFF
        if self.mem_depth and addr == REG_PAGE:
            return self.page
        if self.mem_depth:
            wrap16 = (1 << SPILL_COUNTER_BITS) - 1
            counters = {REG_QUEUE_DEPTH: self.queue_depth, REG_SPILL_WRITES: self.spill_writes & wrap16,
                        REG_SPILL_READS: self.spill_reads & wrap16, REG_LOCKS: len(self.locks)}
            if addr in counters:
                return counters[addr]
        if (word := self._window_word(addr)) is not None:
            return self.memory[word]
        return 0

    def _bank_word(self, address: int) -> int:
        """The bank word holding flat ``address``; raise :class:`PeMemoryError` if none does."""
        word = address - self.origin
        if not 0 <= word < self.mem_depth:
            last = self.origin + self.mem_depth - 1
            raise PeMemoryError(f"{self.name}: {self.config['op']} of address {address}, outside the "
                                f"memory bank (flat addresses {self.origin}..{last}: origin "
                                f"{self.origin}, mem_depth {self.mem_depth})")
        return word

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.left = self.current["firings"]
        if self.left == 0:
            if any(channel.can_pop() for channel in outputs):
                return False    # the RTL completes once its output registers are empty
            self.finished |= bool(self.current["last"])
            self.current = None
            return True
        op = self.config["op"]
        if op in ("QUEUE", "LOCK", "LDST"):
            return getattr(self, f"_step_{op.lower()}")(inputs, outputs)
        model = self

        class View:
            def has(self, i):
                return model._has(inputs, i)

            def peek(self, i):
                return model._peek(inputs, i)

        fire = self.operator.plan(View(), None)
        if fire is None:
            return False
        out = fire.out
        if fire.load is not None:
            loaded = self.memory[self._bank_word(fire.load)]
            out = tuple((port, loaded if value is LOAD_VALUE else value) for port, value in out)
        emitted = [(port, value) for port, value in out if port not in self.config["drop"]]
        if not all(outputs[port].can_push() for port, _ in emitted):
            return False
        if fire.store is not None:
            address, value = fire.store
            self.memory[self._bank_word(address)] = value & 0xFFFF_FFFF
        self._take(inputs, fire.take)
        for port, value in emitted:
            outputs[port].push(value & 0xFFFF_FFFF)
        self.operator.commit(fire)
        return self._fired()

    # Slot access shared by every operator; then Ripple's queue, the atomic directory and the
    # shared array, as this module's docstring says.

    def _has(self, inputs, slot) -> bool:
        kind = self.config["slots"][slot]
        return inputs[slot].can_pop() if kind == "edge" else self.armed[slot]

    def _peek(self, inputs, slot) -> int:
        kind = self.config["slots"][slot]
        return wrap(inputs[slot].peek() if kind == "edge" else self.constants[slot])

    def _take(self, inputs, slots):
        for slot in slots:
            kind = self.config["slots"][slot]
            if kind == "edge":
                inputs[slot].pop()
            elif kind == "const":
                self.armed[slot] = False

    def _emit(self, outputs, port, value) -> bool:
        """Push ``value`` on ``port`` (dropped if the port discards); False if there is no room."""
        if port in self.config["drop"]:
            return True
        if not outputs[port].can_push():
            return False
        outputs[port].push(value & 0xFFFF_FFFF)
        return True

    def _fired(self) -> bool:
        self.firings += 1
        self.left -= 1
        return True

    def _second_site_ready(self, inputs, outputs) -> bool:
        return self._has(inputs, 1) and self._has(inputs, 2) and \
            (1 in self.config["drop"] or outputs[1].can_push())

    def _step_queue(self, inputs, outputs) -> bool:
        spill = self.config["pred"]
        limit = self.mem_depth if spill else self.queue_depth
        moved = False
        if self.ring and (0 in self.config["drop"] or outputs[0].can_push()):
            if spill and len(self.ring) > self.queue_depth:
                self.spill_reads += 1
            self._emit(outputs, 0, self.ring.popleft())
            moved = self._fired()
        if self._has(inputs, 0) and len(self.ring) < limit:
            if spill and len(self.ring) >= self.queue_depth:
                self.spill_writes += 1
            self.ring.append(self._peek(inputs, 0))
            self._take(inputs, [0])
            moved = True
        return moved

    def _step_lock(self, inputs, outputs) -> bool:
        if self._second_site_ready(inputs, outputs):
            address = self._peek(inputs, 1)
            if address not in self.locks:
                raise PeMemoryError(f"{self.name}: RELEASE of address {address}, which no ACQUIRE holds")
            self.locks.discard(address)
            self._take(inputs, [1, 2])
            self._emit(outputs, 1, 1)
            return self._fired()
        if not self._has(inputs, 0):
            return False
        address = self._peek(inputs, 0)
        if address in self.locks or len(self.locks) >= LOCK_ENTRIES:
            return False
        if not self._emit(outputs, 0, address):
            return False
        self.locks.add(address)
        self._take(inputs, [0])
        return self._fired()

    def _step_ldst(self, inputs, outputs) -> bool:
        if self._second_site_ready(inputs, outputs):
            word = self._ldst_word(self._peek(inputs, 1), "STORE")
            self.memory[word] = self._peek(inputs, 2) & 0xFFFF_FFFF
            self._take(inputs, [1, 2])
            self._emit(outputs, 1, 1)
            return self._fired()
        if not self._has(inputs, 0):
            return False
        word = self._ldst_word(self._peek(inputs, 0), "LOAD")
        if not self._emit(outputs, 0, self.memory[word]):
            return False
        self._take(inputs, [0])
        return self._fired()

    def _ldst_word(self, offset: int, site: str) -> int:
        if not 0 <= offset < self.mem_depth:
            raise PeMemoryError(f"{self.name}: LDST's {site} of word {offset}, outside the memory bank "
                                f"(words 0..{self.mem_depth - 1}; flat address {self.origin + offset})")
        return offset


PE_KIND = FuKind("pe", N_SLOTS, N_PORTS, PeUop, LATENCY, PeFu, PeModel)
