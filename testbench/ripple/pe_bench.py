"""Bench for the Ripple PE: operator phases against ripple_core.ops, the specification.

A **phase** configures the PE as one operator (configuration word, then the constants of its
``const`` and ``hold`` slots, each through the config bus), feeds its operand streams and
expects, on each output port, exactly the tokens the golden operator emits. The golden side
(:func:`golden`) plays the operator's own state machine from :mod:`ripple_core.ops` over
unbounded slots: in ordered dataflow what a port emits does not depend on timing, so the RTL's
ports must carry exactly those sequences whatever the stalls and queue depths.

A PE with a memory bank also runs LOAD and STORE phases. The golden side then keeps a
reference bank across phases (zeros at reset, as the RTL's): a phase may preload words through
the config window before its run, LOAD reads and STORE writes the reference bank as the
operators of :mod:`ripple_core.ops` ask, and an address outside the bank behaves as the PE
documents (a LOAD gives 0, a STORE writes nothing, the fault bit and address are kept).

After a phase's streams are in and its outputs out, the bench waits for :data:`QUIET` cycles with
neither a transfer nor a firing (an extra token would show, and a phase whose firings move no
token, such as a STREAM with both ports dropped, is not cut short), reads the status register
(operator back in its first state, which constant slots are still armed, the memory fault bit)
and checks the firing count against the golden model; with a bank it also reads the fault
address if there was a fault and reads the bank back through the window. Then the next phase
reconfigures the same PE. A bench with several phases uses *drained* stimulus (every token is
taken, so nothing is left in a queue for the next operator); a single phase may leave tokens
behind, at most the one that stands at each slot's front.
"""

import random
from collections import deque
from dataclasses import dataclass, field

from ripple_core.graph import Node, op_ports
from ripple_core.ops import LOAD_VALUE, MASK, STREAM_COMPARES, make_operator, stream_finished, wrap
from ripple_core.pe import (
    MEM_WINDOW,
    MEMORY_OPS,
    N_PORTS,
    N_SLOTS,
    PE_OPS,
    REG_CONFIG,
    REG_CONST,
    REG_FAULT,
    REG_ORIGIN,
    REG_PAGE,
    REG_STATUS,
    RIPPLE_OPS,
    STATUS_FAULT,
    WINDOW_WORDS,
    PeUop,
    pe_config_word,
)
from rivulet.sim.streams import (
    PROFILES,
    NoProgressError,
    ProtocolMonitor,
    Schedule,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
)

__all__ = ["Phase", "GoldenRun", "golden", "random_phase", "random_memory_phase", "memory_phases", "drained",
           "with_front",
           "PeBench", "OPERATORS", "QUIET", "run_pe_amaranth", "run_pe_amaranth_each", "make_pe_bench"]

QUIET = 12      # cycles without a transfer or a firing that end a phase
OPERATORS = [name for name in PE_OPS if not name.startswith("GEP") and name not in MEMORY_OPS + RIPPLE_OPS]
CFG = ("cfg__addr", "cfg__data", "cfg__write", "cfg__read")


@dataclass
class Phase:
    """One operator configuration and its operand streams (signed values)."""
    op: str
    streams: list                       # per slot: tokens (edge slots only)
    kinds: tuple = ("edge",) * N_SLOTS
    consts: tuple = (0,) * N_SLOTS      # the constant of each const/hold slot
    pred: bool = False
    cmp: str = "SLT"
    drop: tuple = ()
    delays: dict = field(default_factory=dict)      # slot -> cycles its source waits at the start
    grant: int | None = None            # pe FU only: the micro-op's firings (None: all it can make)
    origin: int = 0                     # PE with a bank: the flat address of bank word 0
    preload: tuple = ()                 # PE with a bank: (word, value) written through the window first

    @property
    def attrs(self) -> dict:
        return {"pred": self.pred, "cmp": self.cmp}

    def to_json(self) -> dict:
        return {"op": self.op, "streams": self.streams, "kinds": list(self.kinds),
                "consts": list(self.consts), "pred": self.pred, "cmp": self.cmp, "drop": list(self.drop),
                "delays": {str(k): v for k, v in self.delays.items()}, "grant": self.grant,
                "origin": self.origin, "preload": [list(pair) for pair in self.preload]}

    @classmethod
    def from_json(cls, d) -> "Phase":
        return cls(d["op"], d["streams"], tuple(d["kinds"]), tuple(d["consts"]), d["pred"], d["cmp"],
                   tuple(d["drop"]), {int(k): v for k, v in d["delays"].items()}, d.get("grant"),
                   d.get("origin", 0), tuple(tuple(pair) for pair in d.get("preload", ())))


@dataclass
class GoldenRun:
    outputs: list           # per port: emitted tokens (signed)
    taken: list             # per slot: tokens taken
    left: list              # per slot: tokens still there (const/hold slots included)
    firings: int
    idle: bool
    bank: list | None = None        # the reference bank after the phase
    fault: int | None = None        # the first out-of-range address
    touched: set = field(default_factory=set)   # bank words preloaded or accessed


def n_slots(op: str) -> int:
    """The operator's slots on a PE: LOAD always has its sync slot (``hold`` when unused)."""
    return N_SLOTS if op in MEMORY_OPS else op_ports(Node("pe", op, []))[0][0]


def golden(phase: Phase, limit: int = 20_000, bank: list | None = None) -> GoldenRun:
    """Fire the ops.py operator while its rule holds, over unbounded slots.

    ``bank``: the PE's bank before the phase (not changed; the run's copy is returned), or None
    when only the firings matter: LOADs then read 0 and nothing is out of range.
    """
    count = n_slots(phase.op)
    bank = None if bank is None else list(bank)
    for word, word_value in phase.preload:
        bank[word] = wrap(word_value)
    fault, touched = None, {word for word, _ in phase.preload}

    def bank_word(address):
        """The bank word of a flat address; None (and a fault) outside the bank."""
        nonlocal fault
        word = address - phase.origin
        if bank is None or 0 <= word < len(bank):
            touched.add(word)
            return word
        fault = address if fault is None else fault
        return None
    operator = make_operator(Node("pe", phase.op, [None] * count, phase.attrs))
    slots = []
    for k in range(count):
        kind = phase.kinds[k]
        tokens = phase.streams[k] if kind == "edge" else [phase.consts[k]]
        slots.append(deque(wrap(t) for t in tokens))

    class View:
        def has(self, i):
            return bool(slots[i])

        def peek(self, i):
            return slots[i][0]

    view, outputs, taken, firings = View(), [[] for _ in range(N_PORTS)], [0] * count, 0
    while (phase.grant is None or firings < phase.grant) and (fire := operator.plan(view, None)) is not None:
        for i in fire.take:
            if phase.kinds[i] != "hold":
                slots[i].popleft()
                taken[i] += 1
        out = fire.out
        if fire.load is not None:
            word = bank_word(fire.load)
            loaded = 0 if word is None or bank is None else bank[word]
            out = tuple((port, loaded if v is LOAD_VALUE else v) for port, v in out)
        if fire.store is not None and (word := bank_word(fire.store[0])) is not None and bank is not None:
            bank[word] = fire.store[1]
        for port, value in out:
            outputs[port].append(value)
        operator.commit(fire)
        firings += 1
        if firings > limit:
            raise AssertionError(f"{phase.op} keeps firing: the stimulus never ends")
    outputs = [[] if port in phase.drop else tokens for port, tokens in enumerate(outputs)]
    return GoldenRun(outputs, taken, [len(slot) for slot in slots], firings, operator.idle(), bank, fault,
                     touched)


def with_front(phase: Phase) -> Phase:
    """Cut each edge stream after its taken tokens and the one at its front (later ones never matter)."""
    run = golden(phase)
    streams = [list(tokens) for tokens in phase.streams]
    for k in range(len(run.taken)):
        if phase.kinds[k] == "edge":
            streams[k] = streams[k][:run.taken[k] + min(run.left[k], 1)]
    return Phase(**{**phase.__dict__, "streams": streams})


def drained(phase: Phase) -> Phase:
    """Cut each edge stream to the tokens the operator takes, until nothing is left over."""
    while True:
        run = golden(phase)
        streams = [list(t[:run.taken[k]]) if k < len(run.taken) and phase.kinds[k] == "edge" else []
                   for k, t in enumerate(phase.streams)]
        if streams == [list(t) for t in phase.streams]:
            return phase
        phase = Phase(**{**phase.__dict__, "streams": streams})


# ---------------------------------------------------------------------------- stimulus

EDGES = [0, 1, -1, 2, -2, 31, 32, 33, -(1 << 31), (1 << 31) - 1, -(1 << 31) + 1, (1 << 31) - 2]


def value(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.35:
        return rng.choice(EDGES)
    if r < 0.6:
        return rng.randint(-40, 40)
    return wrap(rng.getrandbits(32))


def decider(rng: random.Random, truth: bool | None = None) -> int:
    """A decider token; nonzero is true, and not every true one is 1."""
    if truth is None:
        truth = rng.random() < 0.5
    if not truth:
        return 0
    return 1 if rng.random() < 0.7 else rng.choice([v for v in EDGES if v] + [rng.randint(2, 99)])


def _kinds(rng, count, edges) -> tuple:
    kinds = [("edge" if k in edges else rng.choices(["edge", "const", "hold"], [6, 2, 2])[0])
             for k in range(count)]
    return tuple(kinds + ["edge"] * (N_SLOTS - count))


def _around(rng, n) -> int:
    return max(0, n + rng.randint(-2, 2))


def _stream_tuple(rng, cmp, fixed) -> tuple:
    """(start, bound, step) with at most 24 indices; ``fixed`` pins const/hold slots."""
    for _ in range(400):
        start = rng.choice([rng.randint(-20, 20), value(rng)])
        bound = wrap(rng.choice([start + rng.randint(-6, 24), rng.randint(-20, 20), value(rng)]))
        step = rng.choice([1, 1, 2, 3, -1, -2, -3, 0, 7])
        start, bound, step = (fixed.get(k, x) for k, x in enumerate((start, bound, step)))
        index, count = start, 0
        while count <= 24 and not stream_finished(cmp, index, bound):
            index, count = wrap(index + step), count + 1
        if count <= 24:
            return start, bound, step
    return None


def _stream_tuples(rng, cmp, kinds, consts, count) -> list:
    """``count`` finite (start, bound, step) tuples; const/hold slots keep the first tuple's value."""
    fixed, tuples = {}, []
    for _ in range(count):
        found = _stream_tuple(rng, cmp, fixed)
        # (0, 0, 1) ends in at most one index in every mode; a later tuple may repeat the first.
        found = found or (tuples[0] if tuples else (0, 0, 1))
        tuples.append(found)
        fixed = {k: found[k] for k in (1, 2) if kinds[k] != "edge"}
    return tuples


def random_phase(op: str, rng: random.Random) -> Phase:
    """Random operand streams for ``op``, with random const/hold slots and dropped ports."""
    count, n = n_slots(op), rng.randint(3, 16)
    pred, cmp = rng.random() < 0.5, rng.choice(STREAM_COMPARES)
    drop = tuple(p for p in range(N_PORTS) if rng.random() < 0.15)
    streams = [[] for _ in range(N_SLOTS)]
    consts = tuple(value(rng) for _ in range(N_SLOTS))
    if op in ("SELECT", "STEER", "MERGE"):
        kinds = _kinds(rng, count, {0})
        streams[0] = [decider(rng) for _ in range(n)]
        truths = sum(bool(d) for d in streams[0])
        lengths = {"SELECT": (n, n), "STEER": (n, 0), "MERGE": (truths, n - truths)}[op]
        for k in range(1, count):
            streams[k] = [value(rng) for _ in range(_around(rng, lengths[k - 1]))]
    elif op in ("CARRY", "INVARIANT"):
        kinds = _kinds(rng, count, {0})
        for _ in range(rng.randint(1, 4)):
            laps = rng.choice([0, 0, 1, 2, 3, 5])
            streams[0] += [decider(rng, pred) for _ in range(laps)] + [decider(rng, not pred)]
            streams[1].append(value(rng))
            streams[2] += [value(rng) for _ in range(laps)]
        if rng.random() < 0.3:
            streams[0].append(decider(rng))
    elif op == "STREAM":
        kinds = _kinds(rng, count, {0})
        tuples = _stream_tuples(rng, cmp, kinds, consts, rng.randint(1, 3))
        streams[:3] = [list(column) for column in zip(*tuples, strict=True)]
        consts = tuple(tuples[0][k] if kinds[k] != "edge" else consts[k] for k in range(N_SLOTS))
    else:       # binary operators, ORDER, ID
        kinds = _kinds(rng, count, {rng.randrange(count)})
        for k in range(count):
            streams[k] = [value(rng) for _ in range(_around(rng, n))]
    streams = [tokens if k < count else [] for k, tokens in enumerate(streams)]
    return Phase(op, streams, kinds, consts, pred, cmp, drop)


def random_memory_phase(op: str, rng: random.Random, mem_depth: int, hot=()) -> Phase:
    """A LOAD or STORE phase with in-range addresses ``base + offset = origin + word``.

    Half the words come from ``hot`` (if given), so the stores and loads of a run meet at the
    same addresses. Base and offset are each an edge, a hold or a const slot; a LOAD's sync slot
    is an edge (sometimes late) or a hold (no sync); a STORE's value usually an edge.
    """
    assert op in MEMORY_OPS
    n = rng.randint(3, 16)
    origin = rng.choice([0, rng.randint(0, 5000), rng.randint(-(1 << 31), (1 << 31) - mem_depth)])
    words = [rng.choice(hot) if hot and rng.random() < 0.5 else rng.randrange(mem_depth) for _ in range(n)]
    kinds = [rng.choices(["edge", "hold", "const"], [4, 5, 1])[0] for _ in range(2)]
    if op == "LOAD":
        kinds.append(rng.choices(["edge", "hold", "const"], [5, 5, 1])[0])
    else:
        kinds.append(rng.choices(["edge", "hold", "const"], [8, 1, 1])[0])
    if "edge" not in kinds:
        kinds[rng.randrange(N_SLOTS)] = "edge"
    consts = [value(rng), value(rng), value(rng)]
    addresses = [origin + word for word in words]
    streams = [[] for _ in range(N_SLOTS)]
    if kinds[1] == "edge":          # offset follows the base, whatever that is
        bases = [value(rng) for _ in range(n)] if kinds[0] == "edge" else [consts[0]] * n
        streams[0] = bases if kinds[0] == "edge" else []
        streams[1] = [wrap(a - b) for a, b in zip(addresses, bases, strict=True)]
    elif kinds[0] == "edge":        # the base follows a fixed offset
        streams[0] = [wrap(a - consts[1]) for a in addresses]
    else:                           # one address for every firing
        consts[0] = wrap(addresses[0] - consts[1])
    if kinds[2] == "edge":
        streams[2] = [value(rng) for _ in range(n)]
    if op == "LOAD":
        drop = tuple(p for p, chance in ((0, 0.1), (1, 0.5)) if rng.random() < chance)
        delays = {2: rng.randint(5, 30)} if kinds[2] == "edge" and rng.random() < 0.3 else {}
    else:
        drop, delays = ((0,) if rng.random() < 0.3 else ()), {}
    return Phase(op, streams, tuple(kinds), tuple(consts), drop=drop, delays=delays, origin=origin)


def memory_phases(rng: random.Random, mem_depth: int, count: int = 6) -> list[Phase]:
    """A drained run for a PE with a bank: a random array preloaded through the window, then
    ``count`` LOAD and STORE phases in random order on a few hot words (each STORE is followed
    by at least one LOAD), with a non-memory operator or two in between."""
    hot = rng.sample(range(mem_depth), min(3, mem_depth))
    ops = [name for op in rng.choices(MEMORY_OPS, k=count)
           for name in ((op, "LOAD") if op == "STORE" else (op,))]
    phases = [drained(random_memory_phase(op, rng, mem_depth, hot)) for op in ops]
    for _ in range(2):
        phases.insert(rng.randrange(1, len(phases)), drained(random_phase(rng.choice(OPERATORS), rng)))
    phases[0].preload = tuple((word, value(rng)) for word in range(mem_depth))
    return phases


# ---------------------------------------------------------------------------- bench

def _expect(condition: bool, message: str):
    if not condition:
        raise ScoreboardError(message)


class PeBench:
    """Runs phases one after another on one PE; the interface of :class:`StreamBench`.

    Per phase: config writes (one per cycle), a read-back of the configuration word, the
    operand streams, then :data:`QUIET` idle cycles and the reads that check the phase's end
    (status; with a bank, the fault address and the bank's words). ``mem_depth`` is the PE's.
    """

    def __init__(self, ports, phases, profile: str, rng: random.Random, mem_depth: int = 0):
        self.ports = {port.prefix: port for port in ports}
        self.phases = list(phases)
        self.mem_depth = mem_depth
        self.goldens, bank = [], [0] * mem_depth if mem_depth else None
        for phase in self.phases:
            assert bank is not None or (phase.op not in MEMORY_OPS and not phase.preload), \
                f"{phase.op}: this PE has no memory bank"
            self.goldens.append(golden(phase, bank=bank))
            bank = self.goldens[-1].bank
        self.page = 0               # the window page the bench last wrote
        self.stall = PROFILES[profile]
        self.rng = rng
        self.monitors = [ProtocolMonitor(port) for port in ports]
        self.sinks = [SinkDriver(self.ports[f"o__{p}"], self.stall.backpressure,
                                 random.Random(rng.getrandbits(64))) for p in range(N_PORTS)]
        self.fu = "uop" in self.ports      # the pe FU: micro-ops grant firings
        self.sampled = [name for port in ports for name in (port.valid, port.ready, port.payload)] \
            + ["cfg__rdata", "firings"] + (["busy", "finished", "stalls"] if self.fu else ["idle"])
        self.cycles = 0
        self.checker = self
        self.index = -1
        self.firings_before = 0
        self.firings_seen = 0       # the firing count last sampled: a change is activity too
        self._next_phase(0)

    # -- StreamBench interface
    @property
    def driven(self) -> list[str]:
        names = [name for k in range(N_SLOTS) for name in (f"i__{k}__valid", f"i__{k}__payload")]
        names += [f"o__{p}__ready" for p in range(N_PORTS)] + list(CFG)
        return names + (["uop__valid", "uop__payload", "clear"] if self.fu else [])

    def idle_values(self) -> dict:
        return {name: 0 for name in self.driven}

    @property
    def finished(self) -> bool:
        return self.index >= len(self.phases)

    def complete(self) -> bool:
        return self.finished

    def finish(self):
        _expect(self.finished, f"the bench stopped in phase {self.index}")

    def progress(self) -> str:
        if self.finished:
            return "all phases done"
        phase = self.phases[self.index]
        got = [len(r) for r in self.received]
        want = [len(t) for t in self.goldens[self.index].outputs]
        sent = [f"{s.sent}/{len(s.tokens)}" for s in self.sources]
        return f"phase {self.index} ({phase.op}, {self.step}): inputs sent {sent}, outputs {got} of {want}"

    def no_progress(self, max_cycles: int) -> NoProgressError:
        return NoProgressError(f"no completion after {max_cycles} cycles: {self.progress()}")

    # -- phases
    def _next_phase(self, cycle):
        self.index += 1
        if self.finished:
            return
        phase = self.phases[self.index]
        self.config_word = pe_config_word(phase.op, pred=phase.pred, cmp=phase.cmp, slots=phase.kinds,
                                          drop=phase.drop)
        ops = [("write", REG_CONFIG, self.config_word)]
        ops += [("write", REG_CONST + k, phase.consts[k] & MASK) for k in range(n_slots(phase.op))
                if phase.kinds[k] != "edge"]
        if self.mem_depth:
            ops.append(("write", REG_ORIGIN, phase.origin & MASK))
            for word, word_value in phase.preload:
                ops += self._window("write", word, word_value & MASK)
        ops.append(("read", REG_CONFIG, self.config_word, "the configuration word"))
        self.ops = deque(ops)
        self.checking = None        # the read issued in the last cycle, checked in this one
        self.step = "config"
        self.start = None
        self.received = [[] for _ in range(N_PORTS)]
        self.sources = []
        for k in range(N_SLOTS):
            tokens = [t & MASK for t in phase.streams[k]] if phase.kinds[k] == "edge" else []
            delay = phase.delays.get(k, 0)
            idle = self.stall.idle if not delay else Schedule((delay, 1.0), (None, self.stall.idle.at(10**9)))
            self.sources.append(SourceDriver(self.ports[f"i__{k}"], tokens, idle,
                                             random.Random(self.rng.getrandbits(64))))
        assert self.fu or phase.grant is None, "only the pe FU takes micro-ops that grant firings"
        assert phase.grant is None or self.index == len(self.phases) - 1, "a granted phase comes last"
        if self.fu:
            firings = self.goldens[self.index].firings if phase.grant is None else phase.grant
            uops = [PeUop.const({"firings": firings, "last": 1}).as_bits()] if firings else []
            self.sources.append(SourceDriver(self.ports["uop"], uops, self.stall.idle,
                                             random.Random(self.rng.getrandbits(64))))

    def _window(self, access: str, word: int, data) -> list:
        """Bus operations that reach bank ``word`` through the window: a page write if needed."""
        ops, page = [], word // WINDOW_WORDS
        if page != self.page:
            ops.append(("write", REG_PAGE, page))
            self.page = page
        address = MEM_WINDOW + word % WINDOW_WORDS
        ops.append(("write", address, data) if access == "write"
                   else ("read", address, data, f"bank word {word}"))
        return ops

    def _after_phase(self) -> list:
        """The reads that end a phase: status, then with a bank the fault address and the bank."""
        phase, gold = self.phases[self.index], self.goldens[self.index]
        armed = sum(1 << k for k in range(len(gold.left)) if phase.kinds[k] != "edge" and gold.left[k])
        status = int(gold.idle) | armed << 1 | (STATUS_FAULT if gold.fault is not None else 0)
        ops = [("read", REG_STATUS, status, "status (bit 0 first state, bits 1-3 armed constant slots, "
                                            "bit 4 memory fault)")]
        if gold.fault is not None:
            ops.append(("read", REG_FAULT, gold.fault & MASK, "the fault address"))
        if self.mem_depth and (phase.op in MEMORY_OPS or phase.preload):
            words = range(self.mem_depth) if self.mem_depth <= 64 else sorted(gold.touched)
            for word in words:
                ops += self._window("read", word, gold.bank[word] & MASK)
        return ops

    def drive(self, cycle: int) -> dict:
        values = {"cfg__write": 0, "cfg__read": 0, "cfg__addr": self.rng.getrandbits(16),
                  "cfg__data": self.rng.getrandbits(32)}
        if self.fu:
            values["clear"] = 0
        running = self.step in ("run", "after")
        for source in self.sources:
            if running:
                values.update(source.drive(cycle - self.start))
            else:
                values.update({source.port.valid: 0,
                               source.port.payload: self.rng.getrandbits(source.port.width)})
        for sink in self.sinks:
            values.update(sink.drive(cycle))
        if self.step in ("config", "after") and self.ops:
            access, address, data, *_ = self.ops[0]
            values.update({f"cfg__{access}": 1, "cfg__addr": address})
            if access == "write":
                values["cfg__data"] = data
        return values

    def observe(self, cycle: int, sample: dict):
        self.cycles = cycle + 1
        if self.finished:
            return
        transfers = {}
        for monitor in self.monitors:
            port = monitor.port
            if monitor.observe(cycle, sample[port.valid], sample[port.ready], sample[port.payload]):
                transfers[port.prefix] = sample[port.payload]
        for source in self.sources:
            source.observe(source.port.prefix in transfers)
        for p, sink in enumerate(self.sinks):
            sink.observe(sink.port.prefix in transfers)
            if sink.port.prefix in transfers:
                self._output(cycle, p, transfers[sink.port.prefix])
        # A firing is activity even when it moves no token: a STREAM whose ports are both
        # dropped fires N + 1 times with its edge tokens already queued, and nothing transfers.
        fired = sample["firings"] != self.firings_seen
        self.firings_seen = sample["firings"]
        if transfers or fired:
            self.last_move = cycle
        if self.fu:
            self._check_fu_status(cycle, sample, transfers)
        self._advance(cycle, sample)

    def _check_fu_status(self, cycle, sample, transfers):
        """The FU contract, cycle by cycle: ``stalls`` grows in each busy cycle in which nothing
        fired (``firings`` did not grow) and no output token left; ``busy`` rises after a micro-op
        is accepted. ``clear`` is never pulsed here, so the counters only grow."""
        previous = getattr(self, "_previous", None)
        if previous is not None:
            last_sample, last_transfers = previous
            fired = sample["firings"] - last_sample["firings"]
            _expect(fired in (0, 1), f"cycle {cycle}: firings grew by {fired}")
            sent = any(f"o__{p}" in last_transfers for p in range(N_PORTS))
            stalled = last_sample["busy"] and not fired and not sent
            _expect(sample["stalls"] == last_sample["stalls"] + stalled,
                    f"cycle {cycle}: stalls is {sample['stalls']}, expected "
                    f"{last_sample['stalls'] + stalled}")
            if "uop" in last_transfers:
                _expect(sample["busy"] == 1, f"cycle {cycle}: busy is 0 after a micro-op was accepted")
        self._previous = (dict(sample), dict(transfers))

    def _output(self, cycle, port, payload):
        gold = self.goldens[self.index].outputs[port]
        got = self.received[port]
        phase = self.phases[self.index]
        _expect(len(got) < len(gold), f"cycle {cycle}: phase {self.index} ({phase.op}): extra token "
                                      f"{payload:#x} on o[{port}] after {len(gold)} expected ones")
        _expect(payload == gold[len(got)] & MASK,
                f"cycle {cycle}: phase {self.index} ({phase.op}): o[{port}] token #{len(got)} is "
                f"{payload:#x}, expected {gold[len(got)] & MASK:#x}")
        got.append(payload)

    def _bus(self, sample) -> bool:
        """Check the read issued in the last cycle, pass the operation issued in this one; say
        whether all of the step's operations are done."""
        phase = self.phases[self.index]
        if self.checking is not None:
            _, address, expected, what = self.checking
            _expect(sample["cfg__rdata"] == expected,
                    f"phase {self.index} ({phase.op}): {what} (register {address:#06x}) reads "
                    f"{sample['cfg__rdata']:#x}, expected {expected:#x}")
            self.checking = None
        if self.ops:
            op = self.ops.popleft()
            self.checking = op if op[0] == "read" else None
        return not self.ops and self.checking is None

    def _advance(self, cycle, sample):
        phase, gold = self.phases[self.index], self.goldens[self.index]
        if self.step == "config":
            if self._bus(sample):
                self.step, self.start, self.last_move = "run", cycle + 1, cycle
        elif self.step == "run":
            # A micro-op that grants fewer firings than the operands allow leaves tokens on offer:
            # the FU (which has no queues of its own) never takes them.
            feeding = self.sources[-1:] if phase.grant is not None else self.sources
            done = all(s.done for s in feeding) \
                and all(len(r) == len(g) for r, g in zip(self.received, gold.outputs, strict=True))
            done = done and not (self.fu and sample["busy"])
            if done and cycle - self.last_move >= QUIET:
                self.step, self.ops = "after", deque(self._after_phase())
        elif self.step == "after" and self._bus(sample):
            if self.fu:
                uop_sent = bool(self.sources[-1].tokens)
                _expect(not sample["busy"] and sample["finished"] >= int(uop_sent),
                        f"phase {self.index} ({phase.op}): busy {sample['busy']}, finished "
                        f"{sample['finished']} after its micro-op completed")
            else:
                _expect(sample["idle"] == int(gold.idle),
                        f"phase {self.index} ({phase.op}): idle is {sample['idle']}, the golden "
                        f"operator's {gold.idle}")
            firings = sample["firings"] - self.firings_before
            _expect(firings == gold.firings, f"phase {self.index} ({phase.op}): {firings} firings, the "
                                             f"golden operator's {gold.firings}")
            self.firings_before = sample["firings"]
            self._next_phase(cycle)

    @property
    def max_cycles(self) -> int:
        tokens = sum(len(s) for p in self.phases for s in p.streams) + \
            sum(len(t) for g in self.goldens for t in g.outputs)
        bus = sum(2 * len(p.preload) + 2 * (min(self.mem_depth, 64) + len(g.touched))
                  for p, g in zip(self.phases, self.goldens, strict=True))
        return 60 * tokens + 200 * len(self.phases) + bus + 500


def make_pe_bench(ports, phases, profile: str, seed: int, mem_depth: int = 0) -> PeBench:
    return PeBench(ports, phases, profile, random.Random(seed), mem_depth)


def run_pe_amaranth(pe, phases, *, profile: str, seed: int) -> PeBench:
    """Run ``phases`` on ``pe`` (a RipplePE, or the pe FU) in Amaranth's simulator; returns the bench."""
    return run_pe_amaranth_each(pe, [(phases, profile, seed)])[0]


def run_pe_amaranth_each(pe, runs) -> list[PeBench]:
    """Each ``(phases, profile, seed)`` of ``runs`` on ``pe`` from reset, in one simulator (the PE
    is compiled for it once, or once per worker for a design from
    :func:`testbench.ripple.ripple_ops_bench.pe_design` or ``fu_design``); returns the benches."""
    from rivulet.sim.amaranth_sim import AmaranthDesign, component_of, run_each_in_amaranth
    from rivulet.sim.streams import stream_ports
    from testbench.rsn.compute_bench import FlatUop

    if not isinstance(pe, AmaranthDesign) and hasattr(pe, "uop"):
        pe = FlatUop(pe)        # integers on the micro-op port (a kept pe FU design has it already)
    component = component_of(pe)
    mem_depth = getattr(component, "component", component).mem_depth      # the PE inside a FlatUop
    ports, _ = stream_ports(component)
    benches = [make_pe_bench(ports, phases, profile, seed, mem_depth) for phases, profile, seed in runs]
    run_each_in_amaranth(pe, [(bench, bench.max_cycles) for bench in benches])
    return benches
