"""The ``pe`` FU kind: the Ripple PE behind the fabric's FU interface, its fabric-description
parameters and its descriptor."""

from dataclasses import dataclass

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring

from hw.params import ParameterError
from rsn.fu import FuKind, KindParameters, count_status, fu_signature
from rsn.isa import joined_field

from .config import (
    LANE1_BASE,
    LANES,
    N_PORTS,
    N_SLOTS,
    PORTS_IDENTITY,
    REG_CONFIG,
    REG_PORTS,
    REG_STATUS,
    STATUS_FAULT,
    WIDTH,
    WINDOW_WORDS,
    PeUop,
    check_mem_depth,
    check_shared_words,
    decode_config,
)
from .lanes import pe_model
from .lanes_rtl import elaborate_lanes, grant_firings
from .rtl import RipplePE

LATENCY = 1         # a firing's results are offered in the next cycle ...
LOAD_LATENCY = 2    # ... except a LOAD's word on o[0], read from the bank in the next cycle


class PeFu(wiring.Component):
    """The ``pe`` FU: a :class:`RipplePE` without queues of its own (the tile's token queues feed
    it), which fires only while a micro-op grants it firings.

    Micro-op (:data:`ripple_core.pe.PeUop`): ``firings`` firings of the configured operator, or
    with ``open`` as many as its inputs bring, for ever (see ``busy`` below). The
    micro-op completes in the first cycle in which all of them have happened and no result is
    held (both output registers empty, no LOAD word on its way); the next micro-op is accepted
    from the cycle after. ``busy`` is high from accepting a micro-op to its completion;
    ``firings`` counts firings; ``stalls`` counts busy cycles in which nothing fired and no
    output token left; ``finished`` rises the cycle after a ``last`` micro-op completes. An open
    micro-op never completes: ``finished`` rises the cycle after it is accepted, and ``busy`` is
    then high only while the PE holds work (a token in a slot's queue, a result not yet taken, an
    answer of the shared memory due, an operator out of its first state), so that the fabric's
    done, every used unit finished and none busy, is the program's quiescence. The
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
    shared_words : int
        The words of the fabric's shared memory, reached through ``mem_req`` / ``mem_resp``
        (see :class:`RipplePE`); 0 without one. The fabric passes it.
    lanes : int
        1: one operator. 2: two (lane 0 with the memory, lane 1 without) behind the port map
        register, and ``firings1`` grants lane 1's firings (:mod:`ripple_core.pe.lanes_rtl`).
    """

    def __init__(self, width: int = WIDTH, mem_depth: int = 0, ripple_ops: bool = True,
                 shared_words: int = 0, lanes: int = 1):
        if isinstance(lanes, bool) or lanes not in LANES:
            raise ParameterError(f"PeFu: lanes={lanes!r} is not allowed; use 1 (one operator per tile) or 2 "
                                 f"(two operators sharing the tile's ports)")
        if width != WIDTH:
            raise ParameterError(f"PeFu: width={width!r} is not allowed; the pe FU computes on "
                                 f"{WIDTH}-bit two's complement values, so data_width must be {WIDTH}")
        self._mem_depth = check_mem_depth("PeFu", mem_depth)
        self._shared_words = check_shared_words("PeFu", shared_words)
        self._ripple_ops = bool(ripple_ops)
        self._lanes = lanes
        super().__init__(fu_signature(PE_KIND, width, shared_words))

    @property
    def mem_depth(self) -> int:
        return self._mem_depth

    @property
    def lanes(self) -> int:
        return self._lanes

    def elaborate(self, platform):
        m = Module()
        if self._lanes == 2:
            count_status(m, self, **elaborate_lanes(self, m, mem_depth=self._mem_depth,
                                                     shared_words=self._shared_words,
                                                     ripple_ops=self._ripple_ops))
            return m
        m.submodules.pe = pe = RipplePE(0, gated=True, mem_depth=self._mem_depth,
                                        shared_words=self._shared_words, ripple_ops=self._ripple_ops)
        if self._shared_words:
            wiring.connect(m, pe.mem_req, wiring.flipped(self.mem_req))
            wiring.connect(m, wiring.flipped(self.mem_resp), pe.mem_resp)
        for k in range(N_SLOTS):
            wiring.connect(m, wiring.flipped(self.i[k]), pe.i[k])
        for p in range(N_PORTS):
            wiring.connect(m, pe.o[p], wiring.flipped(self.o[p]))
        wiring.connect(m, wiring.flipped(self.cfg), pe.cfg)

        active, last, open_ = Signal(name="active"), Signal(name="last"), Signal(name="open")
        accept = self.uop.valid & self.uop.ready
        completes = Signal()
        left, enable = grant_firings(m, pe.fire, name="", open_=open_, accept=accept,
                                     count=joined_field(self.uop.payload, "firings"),
                                     opens=self.uop.payload.open, completes=completes)
        m.d.comb += [pe.enable.eq(enable), completes.eq(active & ~open_ & (left == 0) & ~pe.holding)]
        m.d.comb += self.uop.ready.eq(~active)
        with m.If(completes):
            m.d.sync += active.eq(0)
        with m.If(accept):
            m.d.sync += [active.eq(1), last.eq(self.uop.payload.last), open_.eq(self.uop.payload.open)]
        sent = Cat(*(self.o[p].valid & self.o[p].ready for p in range(N_PORTS))).any()
        # An open micro-op never completes: the unit counts as finished once it has one, and as
        # busy only while it holds work (a token waiting in a slot, a result not yet taken, an
        # answer due, an operator out of its first state), so the fabric's done is quiescence.
        waiting = Cat(*(self.i[k].valid for k in range(N_SLOTS))).any()
        holds_work = waiting | pe.holding | ~pe.idle
        m.d.comb += self.busy.eq(Mux(open_, holds_work, active))
        count_status(m, self, firing=pe.fire, stall=active & ~pe.fire & ~sent & (~open_ | holds_work),
                     completes_last=(completes & last) | (accept & self.uop.payload.open))
        return m


@dataclass(frozen=True)
class PeParameters(KindParameters):
    """The ``[pe]`` table of a fabric description."""
    mem_depth: int = 0          # words in every pe tile's memory bank, for LOAD and STORE (0: none)
    ripple_ops: bool = True     # build Ripple's operators (queue, arb, task, atomics)
    lanes: int = 1              # operators per pe tile: 1, or 2 (lane 1 without memory)

    def check(self):
        """A bank is 0 (none) or a power of two from 2 to 2048: a power of two because the config
        window aliases the bank by its low address bits; at most 2048 because the host preloads an
        array through the window in one set of register writes, and a larger bank would need the
        page register switched in between."""
        value = self.mem_depth
        if (isinstance(value, bool) or not isinstance(value, int) or value < 0 or value == 1
                or value > WINDOW_WORDS or value & (value - 1)):
            raise ValueError(f"mem_depth={value!r} is not allowed; use 0 (pe tiles without a memory bank) "
                             f"or a power of two from 2 to {WINDOW_WORDS} (words per pe tile's bank)")
        if self.lanes not in LANES or isinstance(self.lanes, bool):
            raise ValueError(f"lanes={self.lanes!r} is not allowed; use 1 (one operator per pe tile) or 2 "
                             f"(two operators per pe tile, sharing its ports: docs/ripple.md)")
        if not isinstance(self.ripple_ops, bool):
            raise ValueError(f"ripple_ops={self.ripple_ops!r} is not allowed; use true (pe tiles run "
                             f"Ripple's queue, arb, task and atomics) or false (about 900 fewer LUTs "
                             f"per pe tile with a bank)")

    def check_fabric(self, spec):
        """A pe computes on 32-bit two's complement words (RipTide's arithmetic wraps at 32 bits),
        so its streams are exactly 32 bits: narrower ones would truncate values, wider ones would
        carry bits the PE ignores. With a ``[memory]`` table the pe tiles use the shared memory,
        so they have no banks of their own."""
        if spec.data_width != WIDTH:
            raise ValueError(f"data_width={spec.data_width} is not allowed with pe tiles; a pe tile "
                             f"computes on {WIDTH}-bit values, so set data_width = {WIDTH}")
        if spec.memory is not None and self.mem_depth:
            raise ValueError(f"mem_depth={self.mem_depth} is not allowed with a [memory] table; the pe "
                             f"tiles load and store through the shared memory, so drop mem_depth (or "
                             f"the [memory] table, for private banks)")


def describe_config(words) -> str:
    """The operator(s) a pe tile is configured as, from lane 0's configuration word and status,
    the port map and lane 1's (:data:`DESCRIBE_REGISTERS`), for hang reports
    (``rsn.fu.FuKind.describe_config``): ``STEER``, ``CARRY (not in its first state)`` for a loop
    caught mid-way, ``LOAD (memory fault)``; a two-lane tile whose map uses lane 1
    ``lane 0 ADD; lane 1 STEER``. A one-lane tile reads 0 for the port map and lane 1."""
    word, status, ports, word1, status1 = words
    first = _describe_lane(word, status)
    if ports in (0, PORTS_IDENTITY):
        return first
    return f"lane 0 {first}; lane 1 {_describe_lane(word1, status1)}"


def _describe_lane(word: int, status: int) -> str:
    try:
        operator = decode_config(word)["op"]
    except ParameterError:
        return f"(configuration word {word:#x} names no operator)"
    notes = ([] if status & 1 else ["not in its first state"]) + \
        (["memory fault"] if status & STATUS_FAULT else [])
    return operator + (f" ({', '.join(notes)})" if notes else "")


DESCRIBE_REGISTERS = (REG_CONFIG, REG_STATUS, REG_PORTS, LANE1_BASE + REG_CONFIG, LANE1_BASE + REG_STATUS)


def _timing(uop_queue, input_queues):
    from .timing import PeTiming  # the cycle model imports the kinds
    return PeTiming(uop_queue, input_queues)


def _check_uop(uop: dict, parameters):
    """An open micro-op has no count: its firings fields must be 0. Only a two-lane tile has a
    lane 1 to grant firings1 to."""
    if uop.get("open") and (uop.get("firings") or uop.get("firings1")):
        raise ValueError(f"an open micro-op fires without a count, so firings and firings1 must be 0, not "
                         f"{uop.get('firings')} and {uop.get('firings1')}; drop open for counted firings")
    if uop.get("firings1") and getattr(parameters, "lanes", 1) == 1:
        raise ValueError(f"firings1={uop['firings1']} grants firings to lane 1, but the fabric's pe tiles "
                         f"have one lane; set [pe] lanes = 2 or grant firings only")


def _count_fields(uop: dict) -> tuple[str, ...]:
    """The counts 0 is refused in: firings, unless the micro-op is open or lane 1 fires."""
    return () if uop.get("open") or uop.get("firings1") else ("firings",)


PE_KIND = FuKind("pe", N_SLOTS, N_PORTS, PeUop, LATENCY, PeFu, pe_model, parameters=PeParameters,
                 count_fields=_count_fields,
                 check_uop=_check_uop, cyclic=True, timing=_timing,
                 describe_registers=DESCRIBE_REGISTERS, describe_config=describe_config,
                 memory_port=True)
