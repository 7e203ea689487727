"""The pe kind's configuration ISA: operator codes, slot kinds, the configuration word, the
register map and the micro-op; the RTL, the golden model and the lowering all read it."""


from amaranth.hdl import Shape
from amaranth.lib import data, enum

from hw.params import ParameterError, check_int
from ripple_core.ops import STREAM_COMPARES
from rsn.isa import padded_uop

__all__ = ["PeOp", "SlotKind", "StreamCmp", "PE_CONFIG", "PE_OPS", "PeUop", "WIDTH", "N_SLOTS", "N_PORTS",
           "REG_CONFIG", "REG_CONST", "REG_STATUS", "REG_ORIGIN", "REG_FAULT", "REG_PAGE", "MEM_WINDOW",
           "WINDOW_WORDS", "MAX_MEM_DEPTH", "STATUS_FAULT", "MEMORY_OPS", "RIPPLE_OPS", "BANK_OPS",
           "REG_QUEUE_DEPTH", "REG_SPILL_WRITES", "REG_SPILL_READS", "REG_LOCKS", "LOCK_ENTRIES",
           "SPILL_COUNTER_BITS", "SHARED_LOCK_OPS", "REG_RING_WORDS", "SHARED_QUEUE_WORDS", "SHARED_OPS",
           "check_mem_depth", "check_shared_words", "pe_config_word", "decode_config",
           "LANES", "REG_PORTS", "LANE1_BASE", "LANE_REGISTERS", "PORT_MAP", "SOURCE_NONE", "SOURCE_INTERNAL",
           "PORTS_IDENTITY", "port_map_word", "decode_port_map", "INTERNAL_QUEUE_DEPTH"]

WIDTH = 32
N_SLOTS = 3
N_PORTS = 2

REG_CONFIG = 0
REG_CONST = 1           # 1, 2, 3: slot 0, 1, 2
REG_STATUS = 4
REG_ORIGIN = 5          # the flat address of bank word 0 (shared memory: of a QUEUE's ring word 0)
REG_FAULT = 6           # the flat address of the first out-of-range access (a QUEUE's: ring end)
REG_PAGE = 7            # which 2048-word page of the bank the window shows
MEM_WINDOW = 0x0800     # 0x0800-0x0FFF: the bank, through the config bus
WINDOW_WORDS = 0x0800
MAX_MEM_DEPTH = 4096
STATUS_FAULT = 1 << 4   # status bit: a LOAD or STORE address was out of range
MEMORY_OPS = ("LOAD", "STORE")
# ACQUIRE and RELEASE as PEs of their own: one site each, on the shared memory's directory
SHARED_LOCK_OPS = ("ACQUIRE", "RELEASE")
RIPPLE_OPS = ("QUEUE", "ARB", "TASK", "LOCK", "LDST") + SHARED_LOCK_OPS   # Ripple's additions
BANK_OPS = ("LOAD", "STORE", "QUEUE", "LOCK", "LDST")   # only a PE with a bank runs these ...
SHARED_OPS = ("LOAD", "STORE", "QUEUE")                 # ... or these, with the shared memory
REG_QUEUE_DEPTH = 8     # QUEUE: the queue's depth D
REG_SPILL_WRITES = 9    # QUEUE (read only): words enqueued while D or more stay queued after the dequeue
REG_SPILL_READS = 10    # QUEUE (read only): words dequeued while more than D were queued
REG_LOCKS = 11          # LOCK (read only): addresses held now
LOCK_ENTRIES = 4        # the atomic directory's entries
SPILL_COUNTER_BITS = 16  # the spill counters wrap at 2**16
REG_RING_WORDS = 12     # QUEUE on the shared memory: its ring's words (from REG_ORIGIN on)
SHARED_QUEUE_WORDS = 4  # QUEUE on the shared memory: words it holds in the PE at most

# Two operators per tile (``[pe] lanes = 2``; docs/ripple.md, "Two operators per tile"). Lane 0
# is the PE as above, with the tile's memory (bank or shared-memory port); lane 1 is a second
# PE without memory. The tile keeps its 3 inputs and 2 outputs; the port map (REG_PORTS) says
# which tile input or which port of the other lane feeds each lane's slots, and which lane's
# port each tile output shows. A lane port that feeds the other lane goes through a bypassing
# two-token queue (INTERNAL_QUEUE_DEPTH): on offer the cycle it enters, ready a register.
LANES = (1, 2)
REG_PORTS = 13          # lanes = 2: the port map, PORT_MAP (reset: PORTS_IDENTITY)
LANE1_BASE = 0x10       # lanes = 2: lane 1's registers 0-4 (config, constants, status) at 0x10 + r
LANE_REGISTERS = 5      # registers REG_CONFIG .. REG_STATUS, the ones lane 1 has
SOURCE_INTERNAL = 4     # a slot source 4 + p: the other lane's port p
SOURCE_NONE = 7         # a slot source 0-2 is tile input j; 3, 6 and 7 feed nothing
INTERNAL_QUEUE_DEPTH = 2
PORT_MAP = data.StructLayout({
    "slots": data.ArrayLayout(3, 2 * N_SLOTS),      # lane L's slot k at index N_SLOTS * L + k
    "outputs": data.ArrayLayout(2, N_PORTS),        # tile output q shows lane (v >> 1)'s port (v & 1)
})


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
    QUEUE = 29      # Ripple's queue (spill: pred); its ring is the bank, or a shared memory region
    ARB = 30        # Ripple's round-robin arbiter over the present slots
    TASK = 31       # task dispatch (ind: pred)
    LOCK = 32       # the atomic directory: one ACQUIRE and one RELEASE site; only with a bank
    LDST = 33       # a LOAD and a STORE on one array, in one PE; only with a bank
    ACQUIRE = 34    # one ACQUIRE site on the shared memory's directory; only with shared_words
    RELEASE = 35    # one RELEASE site on the shared memory's directory; only with shared_words


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

PeUop = padded_uop({
    "firings": 16,              # firings the operator may make; 0 is refused unless open
    "last": 1,
    # Open: firings without a count, for programs whose counts depend on the schedule (Ripple's
    # tasks and atomics); firings must be 0, and it is the unit's last micro-op (docs/ripple.md).
    "open": 1,
    # lanes = 2: lane 1's firings (``firings`` are lane 0's); the micro-op completes once both
    # lanes have made theirs. Open: both lanes fire without a count, and this must be 0.
    "firings1": 16,
    # The counts' high bits (rsn.isa's ``_high`` continuations; the RTL joins them): 24-bit
    # counts, so the hot operators of a run at thousands of vertices take one micro-op. Split
    # grants would be unsafe in a two-lane tile: its micro-op completes only once both lanes have
    # made theirs, so each lane would wait on the other's next grant (ripple_core.lower).
    "firings_high": 8,
    "firings1_high": 8,
})
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


def check_shared_words(component: str, shared_words) -> int:
    """Return ``shared_words`` if it is 0 (no port to a shared memory) or a power of two up to
    2**31 (a LOAD's flat address is a non-negative 32-bit word address); raise ParameterError."""
    check_int(component, "shared_words", shared_words, minimum=0, meaning="words of the shared memory")
    if shared_words & (shared_words - 1) or shared_words > 2**31:
        raise ParameterError(f"{component}: shared_words={shared_words} is not allowed; use 0 (no shared "
                             f"memory) or a power of two up to 2**31, the shared memory's words")
    return shared_words


def port_map_word(slots=None, outputs=None) -> int:
    """The port map word. ``slots``: {(lane, slot): source}, a source being ``("in", j)`` (tile
    input j) or ``("lane", p)`` (the other lane's port p); slots not named are fed by nothing.
    ``outputs``: {tile output q: (lane, port)}; outputs not named show lane 0's port q.
    With neither, the identity map of a one-operator tile: lane 0's slot k is tile input k and
    tile output q its port q (the register's reset value, PORTS_IDENTITY)."""
    if slots is None:
        slots = {(0, k): ("in", k) for k in range(N_SLOTS)}
    codes = [SOURCE_NONE] * (2 * N_SLOTS)
    for (lane, slot), (what, index) in slots.items():
        if lane not in (0, 1) or slot not in range(N_SLOTS):
            raise ParameterError(f"RipplePE port map: lane {lane} slot {slot} does not exist; lanes are 0 "
                                 f"and 1, slots 0..{N_SLOTS - 1}")
        if what == "in" and index in range(N_SLOTS):
            codes[N_SLOTS * lane + slot] = index
        elif what == "lane" and index in range(N_PORTS):
            codes[N_SLOTS * lane + slot] = SOURCE_INTERNAL + index
        else:
            raise ParameterError(f"RipplePE port map: lane {lane} slot {slot} source {(what, index)!r}; "
                                 f"use ('in', 0..{N_SLOTS - 1}) or ('lane', 0..{N_PORTS - 1})")
    fed = [code for code in codes if code < N_SLOTS]
    if len(fed) != len(set(fed)):
        raise ParameterError("RipplePE port map: a tile input feeds two slots; a tile input feeds at "
                             "most one slot (a fork is the switch's multicast)")
    shown = {q: (0, q) for q in range(N_PORTS)}
    shown.update(outputs or {})
    out_codes = []
    for q, (lane, port) in sorted(shown.items()):
        if q not in range(N_PORTS) or lane not in (0, 1) or port not in range(N_PORTS):
            raise ParameterError(f"RipplePE port map: tile output {q} shows lane {lane} port {port}; "
                                 f"outputs 0..{N_PORTS - 1} show lane 0 or 1, port 0..{N_PORTS - 1}")
        out_codes.append(2 * lane + port)
    for lane in (0, 1):
        taken = [code - SOURCE_INTERNAL for code in codes[N_SLOTS * (1 - lane):N_SLOTS * (2 - lane)]
                 if SOURCE_INTERNAL <= code < SOURCE_INTERNAL + N_PORTS]
        if len(taken) != len(set(taken)):
            raise ParameterError(f"RipplePE port map: lane {lane}'s port {taken[0]} feeds two slots of lane "
                                 f"{1 - lane}; a port feeds one slot (a fork is the switch's multicast)")
    return PORT_MAP.const({"slots": codes, "outputs": out_codes}).as_bits()


def decode_port_map(word: int) -> dict:
    """A port map word's fields: ``slots`` {(lane, slot): ("in", j) | ("lane", p)} for the slots
    something feeds, ``outputs`` {q: (lane, port)}."""
    slots = {}
    for index in range(2 * N_SLOTS):
        code = (word >> (3 * index)) & 7
        if code < N_SLOTS:
            slots[divmod(index, N_SLOTS)] = ("in", code)
        elif SOURCE_INTERNAL <= code < SOURCE_INTERNAL + N_PORTS:
            slots[divmod(index, N_SLOTS)] = ("lane", code - SOURCE_INTERNAL)
    base = 3 * 2 * N_SLOTS
    outputs = {q: divmod((word >> (base + 2 * q)) & 3, 2) for q in range(N_PORTS)}
    return {"slots": slots, "outputs": outputs}


PORTS_IDENTITY = port_map_word()
