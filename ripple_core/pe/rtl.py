"""The Ripple PE in hardware: one ordered-dataflow operator with per-operand token queues
(the package docstring describes the architecture)."""

from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from hw.banked_memory import MemoryOp, request_layout, response_layout
from hw.params import ParameterError, check_int
from hw.token_queue import TokenQueue
from ripple_core.ops import STREAM_COMPARES
from rsn.fu import ConfigBus

from .config import (
    LOCK_ENTRIES,
    MEM_WINDOW,
    N_PORTS,
    N_SLOTS,
    PE_CONFIG,
    REG_CONFIG,
    REG_CONST,
    REG_FAULT,
    REG_LOCKS,
    REG_ORIGIN,
    REG_PAGE,
    REG_QUEUE_DEPTH,
    REG_RING_WORDS,
    REG_SPILL_READS,
    REG_SPILL_WRITES,
    REG_STATUS,
    SHARED_QUEUE_WORDS,
    SPILL_COUNTER_BITS,
    WIDTH,
    PeOp,
    SlotKind,
    StreamCmp,
    check_mem_depth,
    check_shared_words,
    decode_config,
)

_RESET = decode_config(0)       # the configuration a PE comes out of reset with
# The comparator's relations: (less, equal, invert) in ``invert ^ (less & lt | equal & eq)``.
_RELATIONS = {"LT": (1, 0, 0), "LE": (1, 1, 0), "GT": (1, 1, 1), "GE": (1, 0, 1),
              "EQ": (0, 1, 0), "NE": (0, 1, 1)}
COMPARE_OPS = ("EQ", "NE") + tuple(sign + rel for sign in "SU" for rel in ("LT", "LE", "GT", "GE"))


def _relation(name: str, stream: bool) -> dict:
    """The comparator's flags for compare operator ``name``, or for STREAM's compare mode
    ``name`` (``stream``): STREAM's end test is its relation for the "greater" modes and the
    relation's failure for the "less" modes."""
    less, equal, invert = _RELATIONS[name[-2:]]
    if stream:
        invert ^= name[1] == "L"
    return {"signed": name[0] == "S", "less": less, "equal": equal, "invert": invert}


class _Decode:
    """The configuration word's decode, held in registers.

    Every flag the firing logic, the result mux and the memory logic need is a register loaded
    from the word on the config bus when it is written to register 0, at the same clock edge as
    the word itself; at reset the flags are those of the reset word (0: ADD, all slots edges).
    So the flags never lag the word (no cycle sees a new word with an old decode), and no path
    of the firing logic starts at the word through a decoder. The word itself stays for the
    read-back; ``pred`` and ``drop`` are its own bits.

    ``is_op(*codes)``: the operator is one of ``codes`` (one register per set asked for).
    ``edge``/``const``: a bit per slot of that kind; ``mul_edge`` the same for slots 0 and 1,
    but only while the operator is MUL. ``cmp_signed``, ``cmp_less``,
    ``cmp_equal``, ``cmp_invert``: the comparator's relation (:func:`_relation`) for a compare
    operator or STREAM's mode. ``updates`` are the loads, for the configuration write; a flag
    asked for after them is an error. ``matches(config)``: every register holds the decode of
    the configuration register, as it does in every reachable state (the PE's
    ``decode_matches``, which formal proofs state as an invariant; unused, it costs nothing).
    """

    def __init__(self, config, cfg):
        self._word = PE_CONFIG(cfg.data[:PE_CONFIG.size])
        self._loads, self._flags, self._closed = [], {}, False
        self.pred, self.drop = config.pred, config.drop

        def kinds(word, kind, slots=range(N_SLOTS)):
            return Cat(*(word.slots[k] == kind for k in slots))

        def reset_kinds(kind, slots=range(N_SLOTS)):
            return sum(1 << k for k in slots if _RESET["slots"][k] == kind.name.lower())

        self.edge = self._register("slot_edge", lambda word: kinds(word, SlotKind.EDGE),
                                   reset_kinds(SlotKind.EDGE), N_SLOTS)
        self.const = self._register("slot_const", lambda word: kinds(word, SlotKind.CONST),
                                    reset_kinds(SlotKind.CONST), N_SLOTS)
        # The multiplier's own copy of slots 0 and 1's kinds (all clear unless the operator is
        # MUL), so its operand muxes are its own, placed by the multipliers.
        def mul_edges(word):
            return kinds(word, SlotKind.EDGE, range(2)) & (word.op.as_value() == PeOp.MUL.value).replicate(2)

        mul_reset = reset_kinds(SlotKind.EDGE, range(2)) if _RESET["op"] == "MUL" else 0
        self.mul_edge = self._register("mul_slot_edge", mul_edges, mul_reset, 2)
        for flag in ("signed", "less", "equal", "invert"):
            ops = tuple(PeOp[name] for name in COMPARE_OPS if _relation(name, False)[flag])
            modes = tuple(StreamCmp[name] for name in STREAM_COMPARES if _relation(name, True)[flag])
            setattr(self, f"cmp_{flag}", self._flag(f"cmp_{flag}", ops, modes))

    def _register(self, name, decode, init, width=1) -> Signal:
        """A register holding ``decode(word)`` of the configuration word (a PE_CONFIG view)."""
        assert not self._closed, "a decode flag asked for after the configuration write's loads"
        register = Signal(width, name=name, init=init)
        self._loads.append((register, decode))
        return register

    def _flag(self, name, ops, modes=()) -> Signal:
        """A register: the operator is one of ``ops``, or it is STREAM with a mode in ``modes``."""
        def decode(word):
            op, cmp = word.op.as_value(), word.cmp.as_value()
            value = Cat(*(op == code.value for code in ops)).any() if ops else Const(0)
            if modes:
                value |= (op == PeOp.STREAM.value) & Cat(*(cmp == mode.value for mode in modes)).any()
            return value
        reset_op, reset_cmp = PeOp[_RESET["op"]], StreamCmp[_RESET["cmp"]]
        init = reset_op in ops or (reset_op == PeOp.STREAM and reset_cmp in modes)
        return self._register(name, decode, init)

    def is_op(self, *ops) -> Signal:
        key = frozenset(ops)
        if key not in self._flags:
            names = sorted(code.name.lower() for code in key)
            name = "is_" + ("_".join(names) if len(names) <= 3 else f"{names[0]}_and_{len(names) - 1}_more")
            # (In code order: a set's order follows string hashing, which changes from run to run.)
            self._flags[key] = self._flag(name, tuple(sorted(key, key=lambda code: code.value)))
        return self._flags[key]

    @property
    def updates(self) -> list:
        """The loads from the word being written."""
        self._closed = True
        return [register.eq(decode(self._word)) for register, decode in self._loads]

    def matches(self, config) -> Value:
        """Every register holds the decode of ``config`` (the configuration register)."""
        return Cat(*(register == decode(config) for register, decode in self._loads)).all()


class _Cases:
    """The operators' firing logic side by side: each case gives, for the operators its select
    flag stands for, some of ``rule``, ``take``, ``emit``, ``out0``, ``out1``, ``next_loop`` and
    ``next_index``; a field is the OR of the cases' values, each gated by its flag. The decode's
    flags are exclusive (one operator at a time), so this is a one-hot mux, with no priority
    between cases and no decoder in front.

    A case may name its ``predicate``: the one bit of its tokens' values its firing depends on
    (a decider's test, a comparator's relation), which comes late, after a carry chain or a wide
    OR. Its fields may then be functions of that bit; ``any(name, assume=b)`` builds them for
    the bit's value ``b``, so the firing logic is built twice and the predicate
    (:meth:`predicate`) picks one at the end."""

    def __init__(self):
        self._terms = {}
        self._predicates = []

    def add(self, select, predicate=None, **fields):
        if predicate is not None:
            self._predicates.append((select, predicate))
        for name, value in fields.items():
            self._terms.setdefault(name, []).append((select, value, predicate))

    def predicate(self) -> Value:
        """The selected case's predicate (0 for a case without one)."""
        return Cat(*(select & predicate for select, predicate in self._predicates)).any()

    def any(self, name, default=None, assume=None) -> Value:
        terms = self._terms.get(name, [])
        value = Const(0)
        for select, term, predicate in terms:
            if callable(term):
                term = term(predicate if assume is None else Const(assume))
            value = value | Mux(select, Value.cast(term), 0)
        if default is None:
            return value
        return Mux(Cat(*(select for select, _, _ in terms)).any(), value, default)


def _partial_products(a, b) -> tuple:
    """The terms of ``a * b mod 2**32`` for MUL, shaped for 18x18 hardware multipliers: the low
    halves' 32-bit product and the two cross products cut to the 16 bits they contribute (the high
    halves' product only reaches past bit 32). The PE keeps them in registers at the firing;
    :func:`_product_of` adds them after."""
    half = WIDTH // 2
    return a[:half] * b[:half], (a[half:] * b[:half])[:half], (a[:half] * b[half:])[:half]


def _product_of(low, cross0, cross1) -> Value:
    """The product from its terms: the three terms of the upper half added as a carry-save sum,
    so one 16-bit carry chain follows the registers."""
    half = WIDTH // 2
    terms = (low[half:], cross0, cross1)
    sums = terms[0] ^ terms[1] ^ terms[2]
    carries = (terms[0] & terms[1]) | (terms[0] & terms[2]) | (terms[1] & terms[2])
    return Cat(low[:half], (sums + (carries << 1))[:half])


def _one_of(onehot, values) -> Value:
    """``values[k]`` for the one bit ``k`` set in ``onehot`` (0 if none)."""
    result = Const(0)
    for k, value in enumerate(values):
        result = result | Mux(onehot[k], value, 0)
    return result


class RipplePE(wiring.Component):
    """One ordered-dataflow operator with per-operand token queues; see the module docstring.

    Parameters
    ----------
    depth : int
        Tokens each operand queue holds (>= 1), or 0 for no queues.
    mem_depth : int
        Words in the PE's memory bank: 0 (the default) for none, else a power of two from 2 to
        4096. Only a PE with a bank runs LOAD and STORE.
    shared_words : int
        0 (the default), or the words of a shared memory (:class:`hw.banked_memory.BankedMemory`)
        that the PE reaches through ``mem_req`` / ``mem_resp`` instead of a bank of its own: then
        LOAD and STORE take any flat address ``base + offset`` below ``shared_words``. Not with
        ``mem_depth``.
    ripple_ops : bool
        Build Ripple's operators (ARB and TASK; with a bank also QUEUE, LDST and LOCK; with
        ``shared_words`` also ACQUIRE and RELEASE). Without them a PE configured as one never
        fires. Synthesised for ECP5, the ``pe`` FU with a 64-word bank takes 2671 LUTs and 658
        FFs with them and 1794 and 474 without; without a bank, 1544 and 1429 LUTs (300 FFs
        either way).

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
        A result is in an output register or on its way to one (a LOAD's word being read, a
        request to the shared memory not yet answered).
    mem_req : Out(stream.Signature(request_layout(32, 1)))
        Only with ``shared_words``: a LOAD's (READ), STORE's (WRITE), ACQUIRE's or RELEASE's
        request; ``meta`` is 1 for an answer that is only a done token (STORE, RELEASE).
    mem_resp : In(stream.Signature(response_layout(32, 1)))
        Only with ``shared_words``: the answers, in request order.
    """

    def __init__(self, depth: int = 2, *, gated: bool = False, mem_depth: int = 0, shared_words: int = 0,
                 ripple_ops: bool = True):
        self._depth = check_int("RipplePE", "depth", depth, minimum=0,
                                meaning="tokens each operand queue holds, 0 for none")
        self._mem_depth = check_mem_depth("RipplePE", mem_depth)
        self._shared_words = check_shared_words("RipplePE", shared_words)
        if shared_words and mem_depth:
            raise ParameterError(f"RipplePE: mem_depth={mem_depth} and shared_words={shared_words}; a PE "
                                 f"has either a bank of its own or a port to the shared memory, not both")
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
        if shared_words:
            members["mem_req"] = Out(stream.Signature(request_layout(WIDTH, 1)))
            members["mem_resp"] = In(stream.Signature(response_layout(WIDTH, 1)))
        super().__init__(members)

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def mem_depth(self) -> int:
        return self._mem_depth

    @property
    def shared_words(self) -> int:
        return self._shared_words

    def elaborate(self, platform):
        m = Module()
        config = Signal(PE_CONFIG)
        constant = [Signal(WIDTH, name=f"const{k}") for k in range(N_SLOTS)]
        armed = Signal(N_SLOTS)
        loop = Signal()                 # CARRY/INVARIANT: LOOP; STREAM: ACTIVE
        index = Signal(WIDTH)           # STREAM's index while ACTIVE
        cfg = self.cfg
        dec = _Decode(config, cfg)

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
            edge = dec.edge[k]
            present = Mux(edge, head.valid, armed[k])
            value = Mux(edge, head.payload, constant[k])
            fronts.append((head, edge, present, value))
        h = [Signal(name=f"has{k}") for k in range(N_SLOTS)]
        v = [Signal(WIDTH, name=f"front{k}") for k in range(N_SLOTS)]
        for k, (_, _, present, value) in enumerate(fronts):
            m.d.comb += [h[k].eq(present), v[k].eq(value)]

        fire = Signal()
        fault = Signal()                # sticky: a memory address was out of range, or a bad RELEASE
        enabled = self.enable if self._gated else 1
        free = [~self.o[p].valid | self.o[p].ready for p in range(N_PORTS)]
        # LDST and LOCK serve two sites; the second (a STORE, a RELEASE: slots 1 and 2, port 1)
        # goes first whenever it can, since it frees what the first site may wait for.
        second_site = Signal()
        m.d.comb += second_site.eq(h[1] & h[2] & (dec.drop[1] | free[1]))
        ripple = self._ripple_ops                       # ARB and TASK
        extras = ripple and bool(self._mem_depth)       # QUEUE, LDST and LOCK: they need the bank
        bank = directory = shared = queue = None
        if self._shared_words:
            shared = self._elaborate_shared_request(m, dec, v, fire, fault)
        locks = self._elaborate_shared_locks(m, dec, h, v, fire, fault, enabled, shared) \
            if ripple and self._shared_words else None
        if self._shared_words and ripple:
            queue = self._elaborate_shared_queue(m, dec, fire, fault, fronts[0][0], enabled, shared)
        if self._mem_depth:
            bank = self._elaborate_bank(m, dec, v, fire, fault, second_site, fronts[0][0], enabled, extras)
        if extras:
            directory = self._elaborate_directory(m, dec, v, fire, fault, second_site, bank.fault_address)

        emit = Signal(N_PORTS)          # ports the firing emits on
        out = [Signal(WIDTH, name=f"result{p}") for p in range(N_PORTS)]
        next_loop = Signal()
        next_index = Signal(WIDTH)
        cases = _Cases()                # each operator's rule, take, emit, results and next state

        # One comparator, shared by the compare operators (a, b) and STREAM (index, bound). The
        # decode says which relation: ``invert ^ (less & lt | equal & eq)``, signed or not; for
        # STREAM it is the end test (its relation, inverted for the "less" modes, which end when
        # the relation fails).
        # (The decider's test on slot 0's token and on its constant, before the slot's mux.)
        decider = Mux(dec.edge[0], fronts[0][0].payload != 0, constant[0] != 0)

        def passes(test):
            """The decider passes: its test (a bit) equals ``pred``."""
            return test == dec.pred
        current = Mux(loop, index, v[0])                    # STREAM's index this firing
        cmp_a = Mux(dec.is_op(PeOp.STREAM) & loop, index, v[0])       # one mux: its select is registers
        cmp_b = v[1]
        equal = cmp_a == cmp_b
        # Signed or not on one carry chain: a signed compare is the unsigned one with the sign bits flipped.
        flip = Cat(Const(0, WIDTH - 1), dec.cmp_signed)
        less = (cmp_a ^ flip) < (cmp_b ^ flip)
        relation = dec.cmp_invert ^ ((dec.cmp_less & less) | (dec.cmp_equal & equal))

        # The binary operators' results: one adder for ADD and SUB, one logic unit, one right
        # shifter for ASHR and LSHR; MUL's product is port 0's own (below).
        amount = v[1][:5]
        negate = dec.is_op(PeOp.SUB)
        logic = Mux(dec.is_op(PeOp.XOR), v[0] ^ v[1], Mux(dec.is_op(PeOp.OR), v[0] | v[1], v[0] & v[1]))
        fill = dec.is_op(PeOp.ASHR) & v[0][WIDTH - 1]
        binary = {
            (PeOp.ADD, PeOp.SUB): (v[0] + (v[1] ^ negate.replicate(WIDTH)) + negate)[:WIDTH],
            (PeOp.AND, PeOp.OR, PeOp.XOR): logic,
            (PeOp.SHL,): (v[0] << amount)[:WIDTH],
            (PeOp.ASHR, PeOp.LSHR): (Cat(v[0], fill.replicate(WIDTH)) >> amount)[:WIDTH],
            tuple(PeOp[name] for name in COMPARE_OPS): relation,
        }
        two = (PeOp.MUL, PeOp.ORDER) + tuple(code for codes in binary for code in codes)
        cases.add(dec.is_op(*two), rule=h[0] & h[1], take=0b011, emit=0b01)
        for codes, result in binary.items():
            cases.add(dec.is_op(*codes), out0=result)
        cases.add(dec.is_op(PeOp.ID), rule=h[0], take=0b001, emit=0b01, out0=v[0])
        cases.add(dec.is_op(PeOp.ORDER), out0=v[0])
        cases.add(dec.is_op(PeOp.SELECT), rule=h[0] & h[1] & h[2], take=0b111, emit=0b01,
                  out0=Mux(decider, v[1], v[2]))
        cases.add(dec.is_op(PeOp.STEER), predicate=decider, rule=h[0] & h[1], take=0b011, emit=passes,
                  out0=v[1])
        cases.add(dec.is_op(PeOp.MERGE), predicate=decider, rule=lambda d: h[0] & Mux(d, h[1], h[2]),
                  take=lambda d: Mux(d, 0b011, 0b101), emit=0b01, out0=Mux(decider, v[1], v[2]))
        # CARRY: INIT takes the initial value (slot 1); LOOP passes slot 2 while the decider
        # passes, else takes the decider alone and returns to INIT.
        cases.add(dec.is_op(PeOp.CARRY), predicate=decider,
                  rule=lambda d: Mux(~loop, h[1], Mux(passes(d), h[0] & h[2], h[0])),
                  take=lambda d: Mux(~loop, 0b010, Mux(passes(d), 0b101, 0b001)),
                  emit=lambda d: Mux(~loop | passes(d), 0b01, 0), out0=Mux(loop, v[2], v[1]),
                  next_loop=~loop | passes(decider))
        # INVARIANT: INIT emits slot 1 without taking it; LOOP re-emits it while the decider
        # passes, else takes it and returns to INIT.
        cases.add(dec.is_op(PeOp.INVARIANT), predicate=decider, rule=Mux(~loop, h[1], h[0] & h[1]),
                  take=lambda d: Mux(~loop, 0, Mux(passes(d), 0b001, 0b011)),
                  emit=lambda d: Mux(~loop | passes(d), 0b01, 0), out0=v[1],
                  next_loop=~loop | passes(decider))
        # STREAM: the end test's firing takes the three slots and emits the flag alone.
        finished = relation
        cases.add(dec.is_op(PeOp.STREAM), predicate=finished, rule=loop | (h[0] & h[1] & h[2]),
                  take=lambda f: Mux(f, 0b111, 0), emit=lambda f: Mux(f, 0b10, 0b11), out0=current,
                  out1=finished ^ dec.pred, next_loop=~finished,
                  next_index=Mux(finished, index, (current + v[2])[:WIDTH]))
        if ripple:
            # ARB, round robin: from the slot after the last grant, the first that has a token;
            # it passes that token, and the slot's number on port 1 (for the other fields of a
            # tuple: ripple_core/tuples.py), and the next round starts after it.
            granted = Signal(N_SLOTS, name="arb_grant")
            with m.Switch(index[:2]):
                for start in range(N_SLOTS):
                    order = [(start + j) % N_SLOTS for j in range(N_SLOTS)]
                    with m.Case(start) if start < N_SLOTS - 1 else m.Default():
                        with m.If(h[order[0]]):
                            m.d.comb += granted.eq(1 << order[0])
                        with m.Elif(h[order[1]]):
                            m.d.comb += granted.eq(1 << order[1])
                        with m.Elif(h[order[2]]):
                            m.d.comb += granted.eq(1 << order[2])
            cases.add(dec.is_op(PeOp.ARB), rule=granted.any(), take=granted, emit=0b11,
                      out0=_one_of(granted, v), out1=_one_of(granted, [Const(k, 2) for k in range(N_SLOTS)]),
                      next_index=_one_of(granted, [Const((k + 1) % N_SLOTS, 2) for k in range(N_SLOTS)]))
            # TASK: pred: ind (pipelined). Otherwise credits, one unless slot 2 (a hold) gives
            # their number; index counts those spent. A done token on slot 1 returns one, and
            # that return goes before a dispatch.
            below = Mux(h[2], index < v[2], index == 0)     # index < the credits (slot 2's, or 1)
            returns = ~dec.pred & h[1]
            cases.add(dec.is_op(PeOp.TASK), predicate=below,
                      rule=lambda b: Mux(dec.pred, h[0], h[1] | (b & h[0])),
                      take=Mux(returns, 0b010, 0b001), emit=Mux(returns, 0, 0b01), out0=v[0],
                      next_index=Mux(dec.pred, index, Mux(h[1], index - 1, index + 1))[:WIDTH])
        if extras:
            # QUEUE: a firing is a dequeue, the word at the ring's head, read as a LOAD's word.
            cases.add(dec.is_op(PeOp.QUEUE), rule=(bank.count != 0) & ~bank.bus_on_bank, emit=0b01)
            cases.add(dec.is_op(PeOp.LDST), rule=Mux(second_site, 1, h[0]) & ~bank.bus_on_bank,
                      take=Mux(second_site, 0b110, 0b001), emit=Mux(second_site, 0b10, 0b01), out1=1)
            cases.add(dec.is_op(PeOp.LOCK), predicate=directory.held,
                      rule=lambda held: Mux(second_site, 1, h[0] & ~held & directory.has_free),
                      take=Mux(second_site, 0b110, 0b001), emit=Mux(second_site, 0b10, 0b01), out0=v[0],
                      out1=1)
        if queue is not None:
            # QUEUE: a firing is a dequeue, the oldest word, which is always in the PE's buffer.
            cases.add(dec.is_op(PeOp.QUEUE), rule=queue.buffer.o.valid, emit=0b01,
                      out0=queue.buffer.o.payload)
        if self._shared_words:
            # A firing puts the request in the request register; the answers fill the output
            # registers in order (_elaborate_shared).
            cases.add(dec.is_op(PeOp.LOAD, PeOp.STORE), rule=h[0] & h[1] & h[2] & shared.request_free,
                      take=0b111)
            if locks is not None:
                # ACQUIRE fires on a "granted" answer (its tokens waited in their slots);
                # RELEASE fires as it issues, its done token follows the answer.
                cases.add(dec.is_op(PeOp.ACQUIRE), rule=locks.granted, take=0b111, emit=0b01, out0=v[0])
                cases.add(dec.is_op(PeOp.RELEASE), rule=h[0] & h[1] & h[2] & ~locks.waiting, take=0b111)
        if self._mem_depth:
            # LOAD (base, offset, sync) and STORE (base, offset, value); a LOAD without a sync
            # slot has a hold slot 2. The config bus wins the bank: neither fires while the bus
            # uses the window.
            cases.add(dec.is_op(PeOp.LOAD, PeOp.STORE), rule=h[0] & h[1] & h[2] & ~bank.bus_on_bank,
                      take=0b111)
            cases.add(dec.is_op(PeOp.LOAD), emit=0b11, out1=1)
            cases.add(dec.is_op(PeOp.STORE), emit=0b01, out0=1)
        m.d.comb += [out[0].eq(cases.any("out0")),
                     out[1].eq(cases.any("out1")),
                     next_loop.eq(cases.any("next_loop", default=loop)),
                     next_index.eq(cases.any("next_index", default=index))]

        # A firing needs room on every port it emits on: an empty output register, one being
        # emptied, or a port that discards. With a bank, port 0 has room for a LOAD while fewer
        # than two words are queued for it (the one being read, the catch register, the output
        # register), and room for anything else only when nothing is queued, so results stay in order.
        room0 = free[0]
        if self._mem_depth:
            o0 = self.o[0]
            # (The words queued, as logic rather than a sum: the firing waits on it.)
            queued = [bank.reading, bank.caught_valid, o0.valid & ~o0.ready]
            at_most_one = ~((queued[0] & queued[1]) | (queued[0] & queued[2]) | (queued[1] & queued[2]))
            room0 = Mux(bank.is_load, at_most_one, ~Cat(*queued).any())
        room = Cat(dec.drop[0] | room0, dec.drop[1] | free[1])

        # The firing, built for both values of the operator's predicate, which picks one last.
        def firing(assume):
            rule, take, emits = (cases.any(name, assume=assume) for name in ("rule", "take", "emit"))
            fires = enabled & rule & ((emits & ~room) == 0)
            return fires, Mux(fires, take, 0), emits

        taken = Signal(N_SLOTS)
        predicate = Signal(name="firing_predicate")
        (fire1, taken1, emit1), (fire0, taken0, emit0) = firing(1), firing(0)
        m.d.comb += [predicate.eq(cases.predicate()), fire.eq(Mux(predicate, fire1, fire0)),
                     taken.eq(Mux(predicate, taken1, taken0)), emit.eq(Mux(predicate, emit1, emit0)),
                     self.fire.eq(fire)]
        for k, (head, edge, _, _) in enumerate(fronts):
            enqueues = bank.enqueue if k == 0 and bank is not None else 0
            if k == 0 and queue is not None:
                enqueues = queue.enqueue
            m.d.comb += head.ready.eq((taken[k] & edge) | enqueues)
        disarm = taken & dec.const

        answers = self._elaborate_shared_answers(m, dec, room) if shared is not None else None
        if locks is not None:
            self._elaborate_shared_lock_answers(m, dec, fire, locks, answers)
        if queue is not None:
            # A QUEUE's answers are its own (refills into its buffer, which has room reserved).
            answers.writes = [write & ~queue.active for write in answers.writes]
            with m.If(queue.active):
                m.d.comb += self.mem_resp.ready.eq(1)
        # MUL: the multipliers' terms go to registers at the firing, and port 0 shows their sum
        # while its register holds a MUL's result; so the multipliers end in registers and the
        # adder after them is on port 0's path, and the product is on offer in the next cycle as
        # any result is.
        operands = (Mux(dec.mul_edge[k], fronts[k][0].payload, constant[k]) for k in range(2))
        terms = _partial_products(*operands)
        held_terms = [Signal(len(term), name=f"mul_term{j}") for j, term in enumerate(terms)]
        with m.If(fire & dec.is_op(PeOp.MUL)):
            m.d.sync += [held.eq(term) for held, term in zip(held_terms, terms, strict=True)]
        port0 = SimpleNamespace(payload=Signal(WIDTH, name="o0_payload"),
                                shows_product=Signal(name="o0_shows_product"))
        m.d.comb += self.o[0].payload.eq(Mux(port0.shows_product, _product_of(*held_terms), port0.payload))
        payloads = [port0.payload] + [self.o[p].payload for p in range(1, N_PORTS)]
        for p in range(N_PORTS):
            if p == 0 and self._mem_depth:
                continue
            loads = [] if p else [port0.shows_product.eq(dec.is_op(PeOp.MUL))]
            with m.If(fire & emit[p] & ~dec.drop[p]):
                m.d.sync += [self.o[p].valid.eq(1), payloads[p].eq(out[p]), *loads]
            if answers is not None:
                with m.Elif(answers.writes[p]):
                    m.d.sync += [self.o[p].valid.eq(1), payloads[p].eq(answers.values[p]), *loads]
            with m.Elif(self.o[p].ready):
                m.d.sync += self.o[p].valid.eq(0)
        with m.If(fire):
            m.d.sync += [loop.eq(next_loop), index.eq(next_index), self.firings.eq(self.firings + 1)]
        holding = Cat(*(self.o[p].valid for p in range(N_PORTS))).any()
        if self._mem_depth:
            self._elaborate_port0(m, bank, fire & emit[0] & ~dec.drop[0], out[0], port0,
                                  dec.is_op(PeOp.MUL))
            holding = holding | bank.reading | bank.caught_valid
        if shared is not None:
            outstanding = Signal(range(16), name="outstanding")     # bounded by the memory's credits + 1
            issued = ((fire & shared.is_access) | (locks.issue if locks is not None else 0)
                      | (queue.issue if queue is not None else 0))
            m.d.sync += outstanding.eq(outstanding + issued - answers.taken)
            holding = holding | (outstanding != 0) | issued
        m.d.comb += self.holding.eq(holding)

        # Configuration writes come after the firing's updates, so they win in a shared cycle.
        rearm = Signal(N_SLOTS)
        with m.If(cfg.write):
            with m.Switch(cfg.addr):
                with m.Case(REG_CONFIG):
                    m.d.sync += [config.eq(cfg.data), loop.eq(0), index.eq(0)]
                    if self._mem_depth or self._shared_words:
                        m.d.sync += fault.eq(0)
                    if extras:
                        m.d.sync += [bank.head.eq(0), bank.count.eq(0), bank.spill_writes.eq(0),
                                     bank.spill_reads.eq(0), directory.valid.eq(0)]
                    if queue is not None:
                        m.d.sync += [queue.ring_head.eq(0), queue.ring_tail.eq(0), queue.ring_count.eq(0),
                                     queue.spill_writes.eq(0), queue.spill_reads.eq(0)]
                for k in range(N_SLOTS):
                    with m.Case(REG_CONST + k):
                        m.d.sync += constant[k].eq(cfg.data)
                        m.d.comb += rearm[k].eq(1)
                if self._mem_depth:
                    with m.Case(REG_ORIGIN):
                        m.d.sync += [bank.origin.eq(cfg.data), *bank.origin_updates]
                    with m.Case(REG_PAGE):
                        m.d.sync += bank.page.eq(cfg.data[0])
                if extras:
                    with m.Case(REG_QUEUE_DEPTH):
                        m.d.sync += bank.queue_depth.eq(Mux(cfg.data > self._mem_depth, self._mem_depth,
                                                            cfg.data))
                if queue is not None:
                    ring_registers = {REG_ORIGIN: queue.ring_base, REG_QUEUE_DEPTH: queue.queue_depth,
                                      REG_RING_WORDS: queue.ring_words}
                    for address, register in ring_registers.items():
                        with m.Case(address):
                            m.d.sync += register.eq(cfg.data)
        config_write = cfg.write & (cfg.addr == REG_CONFIG)
        m.d.sync += armed.eq(Mux(config_write, 0, (armed & ~disarm) | rearm))

        # The operator's first state: LOOP/ACTIVE clear; a TASK with no credit spent.
        operator_idle = Mux(dec.is_op(PeOp.TASK), index == 0, ~loop) if ripple else ~loop
        first_state = operator_idle
        if extras:
            first_state = Mux(dec.is_op(PeOp.QUEUE), bank.count == 0,
                              Mux(dec.is_op(PeOp.LOCK), ~directory.valid.any(), operator_idle))
        if queue is not None:
            first_state = Mux(queue.active, queue.empty, operator_idle)
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
                readable = {REG_FAULT: shared.fault_address} if shared is not None else {}
                if queue is not None:
                    readable.update({REG_ORIGIN: queue.ring_base, REG_RING_WORDS: queue.ring_words,
                                     REG_QUEUE_DEPTH: queue.queue_depth, REG_SPILL_WRITES: queue.spill_writes,
                                     REG_SPILL_READS: queue.spill_reads})
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
        # The decode is loaded with the word (every flag has been asked for by now).
        with m.If(config_write):
            m.d.sync += dec.updates
        decode_matches = Signal(name="decode_matches")
        m.d.comb += decode_matches.eq(dec.matches(config))
        return m

    def _elaborate_bank(self, m, dec, v, fire, fault, second_site, front0, enabled,
                        extras) -> SimpleNamespace:
        """The memory bank, its two ports and its registers; returns the signals the rest uses.

        A LOAD or STORE firing accesses flat address ``base + offset`` (32-bit wrap), which is
        bank word ``address - origin`` (exact: a 33-bit signed difference) if that lies in
        0..mem_depth-1. An LDST firing gives the bank word itself (its load or store offset; the
        flat address is ``origin + word``). Out of range, a load reads 0, a store writes nothing,
        and the first such address is kept in the fault register.

        The range test takes one adder, not two in a row: ``d = (base + offset - origin) mod
        2**32`` is a carry-save sum of ``base``, ``offset`` and ``-origin`` (a register loaded
        with ``origin``), and the address is in range exactly when ``d < limit``, where ``limit =
        min(mem_depth, 2**31 - origin)`` (signed ``origin``; also loaded with it) rules out the
        differences that only wrap into range.

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
        is_ldst, is_queue = (dec.is_op(PeOp.LDST), dec.is_op(PeOp.QUEUE)) if extras else (Const(0), Const(0))
        reads = dec.is_op(PeOp.LOAD) | is_queue | (is_ldst & ~second_site)    # port 0 gets a bank word
        stores = dec.is_op(PeOp.STORE) | (is_ldst & second_site)

        address = (v[0] + v[1])[:WIDTH]
        site_word = Mux(second_site, v[1], v[0])
        neg_origin = Signal(WIDTH, name="neg_origin")                  # -origin
        limit = Signal(range(self._mem_depth + 1), name="origin_limit", init=self._mem_depth)
        room = 2**31 - cfg.data.as_signed()                             # words from origin to 2**31
        origin_updates = [neg_origin.eq(-cfg.data),
                          limit.eq(Mux(room < self._mem_depth, room, self._mem_depth))]
        sums = v[0] ^ v[1] ^ neg_origin                                 # carry-save: base + offset - origin
        carries = (v[0] & v[1]) | (v[0] & neg_origin) | (v[1] & neg_origin)
        offset = (sums + (carries << 1))[:WIDTH]
        word = Mux(is_ldst, site_word, offset)
        flat = Mux(is_ldst, (origin + site_word)[:WIDTH], address)
        in_range = Mux(is_ldst, site_word[addr_bits:] == 0,
                       (offset[addr_bits + 1:] == 0) & (offset[:addr_bits + 1] < limit))
        on_window = cfg.addr[11:] == MEM_WINDOW >> 11                   # 0x0800-0x0FFF
        window_word = Cat(cfg.addr[:11], page)[:addr_bits]             # modulo mem_depth
        bus_write, bus_read = cfg.write & on_window, cfg.read & on_window
        bus_on_bank = bus_write | bus_read

        # The queue's ring.
        head, count = Signal(addr_bits, name="queue_head"), Signal(addr_bits + 1, name="queue_count")
        queue_depth = Signal(addr_bits + 1, name="queue_depth")    # at most mem_depth (clamped on write)
        spill_writes, spill_reads = Signal(SPILL_COUNTER_BITS), Signal(SPILL_COUNTER_BITS)
        spill = dec.pred
        limit = Mux(spill, self._mem_depth, queue_depth)
        enqueue = Signal()
        m.d.comb += enqueue.eq(enabled & is_queue & front0.valid & (count < limit) & ~bus_on_bank)
        dequeue = fire & is_queue
        m.d.sync += count.eq(count + enqueue - dequeue)
        with m.If(dequeue):
            m.d.sync += head.eq(head + 1)
        # A word spills if the hardware part (D words) is full after this cycle's dequeue; a
        # dequeue refills the hardware part from spill while more than D are queued.
        # (A dequeue fires only while count != 0; the two compares run beside the firing logic.)
        with m.If(enqueue & spill & Mux(dequeue, count > queue_depth, count >= queue_depth)):
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
                               origin=origin, origin_updates=origin_updates, page=page,
                               fault_address=fault_address,
                               head=head, count=count, queue_depth=queue_depth, enqueue=enqueue,
                               spill_writes=spill_writes, spill_reads=spill_reads)

    def _elaborate_shared_request(self, m, dec, v, fire, fault) -> SimpleNamespace:
        """The request register to the shared memory. A LOAD or STORE firing loads it with the
        flat address ``base + offset`` (32-bit wrap); it empties when the memory takes it, and a
        firing may refill it in the same cycle. An address at or above ``shared_words`` is a
        program error: the request still goes (the memory answers a LOAD with 0 and writes
        nothing), and the first such address is kept in the fault register."""
        request = self.mem_req
        is_store = dec.is_op(PeOp.STORE)
        is_access = dec.is_op(PeOp.LOAD, PeOp.STORE)
        address = (v[0] + v[1])[:WIDTH]
        fault_address = Signal(WIDTH, name="fault_address")
        with m.If(fire & is_access):
            m.d.sync += [request.valid.eq(1), request.payload.addr.eq(address),
                         request.payload.op.eq(Mux(is_store, MemoryOp.WRITE, MemoryOp.READ)),
                         request.payload.data.eq(v[2]), request.payload.meta.eq(is_store)]
            with m.If((address >= self._shared_words) & ~fault):
                m.d.sync += [fault.eq(1), fault_address.eq(address)]
        with m.Elif(request.ready):
            m.d.sync += request.valid.eq(0)
        return SimpleNamespace(request_free=~request.valid | request.ready, is_access=is_access,
                               fault_address=fault_address)

    def _elaborate_shared_queue(self, m, dec, fire, fault, front0, enabled, shared) -> SimpleNamespace:
        """QUEUE on the shared memory: a buffer of up to ``L`` = min(max(depth, 1),
        :data:`SHARED_QUEUE_WORDS`) words in the PE and a ring of ``ring_words`` words in the
        memory from ``ring_base`` (registers 8, 12 and 5).

        A word goes straight to the buffer only while nothing is in the ring or on its way back
        from it; otherwise it is written at the ring's tail. Whenever the buffer and the refills
        in flight leave room, the ring's head is read back into the buffer (refills go first, so
        the buffer never starves behind a stream of writes). So the buffer always holds the
        oldest words, and a firing dequeues its head. A spill queue (``pred``) takes words while
        the ring has room; one that finds it full sets the sticky fault with the address past
        the ring's end (``ring_base + ring_words``) and waits. A queue without spill takes words
        while it holds fewer than ``depth``. A read's answer always finds room in the buffer: it
        was reserved when the read was issued."""
        request, answer = self.mem_req, self.mem_resp
        active = dec.is_op(PeOp.QUEUE)
        spill = dec.pred
        m.submodules.queue_buffer = buffer = TokenQueue(unsigned(WIDTH), SHARED_QUEUE_WORDS)
        ring_base, ring_words = Signal(WIDTH, name="ring_base"), Signal(WIDTH, name="ring_words")
        queue_depth = Signal(WIDTH, name="queue_depth")
        ring_head, ring_tail = Signal(WIDTH, name="ring_head"), Signal(WIDTH, name="ring_tail")
        ring_count = Signal(WIDTH, name="ring_count")       # words in the ring, not yet read back
        refilling = Signal(range(SHARED_QUEUE_WORDS + 1), name="refilling")     # reads in flight
        spill_writes, spill_reads = Signal(SPILL_COUNTER_BITS), Signal(SPILL_COUNTER_BITS)
        held = Signal(range(SHARED_QUEUE_WORDS + 1))        # buffer words and the reads for it
        limit = Signal(range(SHARED_QUEUE_WORDS + 1))       # L
        m.d.comb += [held.eq(buffer.level + refilling),
                     limit.eq(Mux(queue_depth >= SHARED_QUEUE_WORDS, SHARED_QUEUE_WORDS,
                                  Mux(queue_depth == 0, 1, queue_depth)))]

        word_in = active & enabled & front0.valid
        ring_idle = (ring_count == 0) & (refilling == 0)
        queued = (held + ring_count)[:WIDTH + 1]
        has_room = spill | (queued < queue_depth)
        direct = Signal()
        to_ring = Signal()
        refill = Signal()
        spill_write = Signal()
        m.d.comb += [
            direct.eq(word_in & has_room & ring_idle & (buffer.level < limit)),
            to_ring.eq(word_in & has_room & ~(ring_idle & (buffer.level < limit))),
            refill.eq(active & (ring_count != 0) & (held < limit) & shared.request_free),
            spill_write.eq(to_ring & (ring_count < ring_words) & shared.request_free & ~refill),
        ]
        with m.If(to_ring & (ring_count >= ring_words) & ~fault):
            m.d.sync += [fault.eq(1), shared.fault_address.eq(ring_base + ring_words)]

        def advance(pointer):
            return Mux(pointer + 1 == ring_words, 0, pointer + 1)[:WIDTH]

        with m.If(refill | spill_write):
            m.d.sync += [request.valid.eq(1),
                         request.payload.addr.eq(ring_base + Mux(refill, ring_head, ring_tail)),
                         request.payload.op.eq(Mux(refill, MemoryOp.READ, MemoryOp.WRITE)),
                         request.payload.data.eq(front0.payload), request.payload.meta.eq(spill_write)]
        with m.If(refill):
            m.d.sync += [ring_head.eq(advance(ring_head)), spill_reads.eq(spill_reads + 1)]
        with m.If(spill_write):
            m.d.sync += [ring_tail.eq(advance(ring_tail)), spill_writes.eq(spill_writes + 1)]
        m.d.sync += ring_count.eq(ring_count + spill_write - refill)

        refilled = active & answer.valid & ~answer.payload.meta     # a read's word (always taken)
        m.d.sync += refilling.eq(refilling + refill - refilled)
        m.d.comb += [buffer.i.valid.eq(direct | refilled),
                     buffer.i.payload.eq(Mux(refilled, answer.payload.data, front0.payload)),
                     buffer.o.ready.eq(fire & active)]
        return SimpleNamespace(buffer=buffer, active=active, enqueue=direct | spill_write,
                               issue=refill | spill_write, empty=ring_idle & (buffer.level == 0),
                               ring_base=ring_base, ring_words=ring_words, queue_depth=queue_depth,
                               ring_head=ring_head, ring_tail=ring_tail, ring_count=ring_count,
                               spill_writes=spill_writes, spill_reads=spill_reads)

    def _elaborate_shared_answers(self, m, dec, room) -> SimpleNamespace:
        """The shared memory's answers, in request order, into the output registers: a LOAD's
        word on ``o[0]`` with its done token 1 on ``o[1]``, a STORE's done token 1 on ``o[0]``,
        once the write has happened. An answer is taken only when every port it fills has room
        (a dropped port always has), so it waits in the memory, never here."""
        answer = self.mem_resp
        is_store = answer.payload.meta
        needs = Mux(is_store, 0b01, 0b11)
        taken = Signal(name="answer_taken")
        m.d.comb += [answer.ready.eq((needs & ~room) == 0), taken.eq(answer.valid & answer.ready)]
        writes = [taken & ~dec.drop[0], taken & ~is_store & ~dec.drop[1]]
        values = [Mux(is_store, 1, answer.payload.data), 1]
        return SimpleNamespace(taken=taken, writes=writes, values=values)

    def _elaborate_shared_locks(self, m, dec, h, v, fire, fault, enabled, shared) -> SimpleNamespace:
        """ACQUIRE and RELEASE on the shared memory's directory, one site per PE.

        The answer carries no address, so a PE has one lock request in flight at a time
        (``waiting``) and keeps its address. ACQUIRE asks while its tokens sit in their slots and
        fires only on "granted"; on "busy" it asks again, so nothing waits inside the memory. An
        address outside the memory faults and fires, so a program error never hangs. RELEASE
        fires as it asks; the memory answering "not held" is a program error: the fault register
        gets the address. A later request block than the LOAD/STORE one, so it wins the register
        (a PE is one operator, so the two never load it in one cycle).
        """
        request, answer = self.mem_req, self.mem_resp
        is_acquire, is_release = dec.is_op(PeOp.ACQUIRE), dec.is_op(PeOp.RELEASE)
        waiting = Signal(name="lock_waiting")
        address = Signal(WIDTH, name="lock_address")
        issue = Signal(name="lock_issue")
        acquire_issue = is_acquire & enabled & h[0] & h[1] & h[2] & ~waiting
        m.d.comb += issue.eq(acquire_issue | (fire & is_release))
        with m.If(issue):
            m.d.sync += [request.valid.eq(1), request.payload.addr.eq(v[0]),
                         request.payload.op.eq(Mux(is_release, MemoryOp.RELEASE, MemoryOp.ACQUIRE)),
                         request.payload.data.eq(0), request.payload.meta.eq(is_release),
                         waiting.eq(1), address.eq(v[0])]
            with m.If((v[0] >= self._shared_words) & ~fault):
                m.d.sync += [fault.eq(1), shared.fault_address.eq(v[0])]
        answered = answer.valid & answer.ready & waiting & (is_acquire | is_release)
        with m.If(answered):
            m.d.sync += waiting.eq(0)
            with m.If(is_release & ~answer.payload.data[0] & ~answer.payload.fault & ~fault):
                m.d.sync += [fault.eq(1), shared.fault_address.eq(address)]
        granted = Signal(name="lock_granted")
        m.d.comb += granted.eq(is_acquire & waiting & answer.valid
                               & (answer.payload.data[0] | answer.payload.fault))
        return SimpleNamespace(issue=issue, waiting=waiting, granted=granted, is_acquire=is_acquire)

    def _elaborate_shared_lock_answers(self, m, dec, fire, locks, answers):
        """An ACQUIRE's answer fills no output register: "busy" is taken at once (the PE asks
        again), "granted" in the cycle the ACQUIRE fires. A RELEASE's answer is a STORE's."""
        with m.If(locks.is_acquire):
            m.d.comb += self.mem_resp.ready.eq(~locks.granted | fire)
        answers.writes = [write & ~locks.is_acquire for write in answers.writes]

    def _elaborate_directory(self, m, dec, v, fire, fault, second_site, fault_address) -> SimpleNamespace:
        """LOCK's atomic directory: :data:`LOCK_ENTRIES` held addresses. An acquire (slot 0) may
        fire when no entry holds its address and one is free; it claims the lowest free entry.
        A release (slots 1, 2) frees the entry holding its address; if none does, it is a program
        error: the fault bit is set with the address (the PE still fires, so nothing hangs)."""
        valid = Signal(LOCK_ENTRIES, name="lock_valid")
        held_address = [Signal(WIDTH, name=f"lock{e}") for e in range(LOCK_ENTRIES)]
        held = Cat(*(valid[e] & (held_address[e] == v[0]) for e in range(LOCK_ENTRIES))).any()
        releases = Cat(*(valid[e] & (held_address[e] == v[1]) for e in range(LOCK_ENTRIES)))
        is_lock = dec.is_op(PeOp.LOCK)
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

    def _elaborate_port0(self, m, bank, emits, result, port0, is_mul):
        """Port 0 with a bank. A LOAD's word is on the read port's data the cycle after its firing
        (``bank.reading``) and goes to the output register if that is free, else to the catch
        register. A LOAD fires only while fewer than two words are queued for port 0, so a word
        being read and a caught one never wait together, and the caught one leaves first. Other
        results load the output register directly, which the room rule allows only when nothing
        is queued. (``port0``: the register behind the port's payload, and whether the port shows
        a MUL's product instead.)"""
        o0 = self.o[0]
        with m.If(emits & ~bank.is_load):
            m.d.sync += [o0.valid.eq(1), port0.payload.eq(result), port0.shows_product.eq(is_mul)]
        with m.Elif(~o0.valid | o0.ready):
            m.d.sync += [o0.valid.eq(bank.caught_valid | bank.reading),
                         port0.payload.eq(Mux(bank.caught_valid, bank.caught, bank.word)),
                         port0.shows_product.eq(0), bank.caught_valid.eq(0)]
        with m.Elif(bank.reading):
            m.d.sync += [bank.caught.eq(bank.word), bank.caught_valid.eq(1)]
        m.d.sync += bank.reading.eq(emits & bank.is_load)
