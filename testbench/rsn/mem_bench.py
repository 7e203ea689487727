"""Benches for the ``mem`` FU: random affine programs, a cycle-exact scoreboard, config phases.

A scenario runs in three phases on one simulation: the config bus preloads every word of the
bank; a :class:`~rivulet.sim.streams.StreamBench` feeds micro-ops and WRITE words and takes READ
words under a stall profile; the config bus reads the bank back, then ``clear`` is pulsed.
:class:`MemBench` sequences the phases behind StreamBench's own interface, so
``run_in_amaranth`` and cocotb's ``run_bench`` run it unchanged, with the same checks.
Expected values come from :class:`rsn.fu_mem.MemModel`, never from the RTL.
"""

import random
from collections import deque
from dataclasses import dataclass, field

from rivulet.sim.streams import (
    PROFILES,
    NoProgressError,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
    StreamBench,
)
from rsn.channels import Channel
from rsn.fu_mem import CFG_DATA_BITS, STORAGE_WORDS, AffineAddresses, MemFu, MemModel
from rsn.isa import REGISTERS, MemUop, decode, encode

__all__ = ["CFG_PORTS", "CfgStep", "MemChecker", "MemBench", "random_program", "golden_run",
           "make_mem_bench", "max_cycles_for", "OffsetBlindMemFu",
           "OvercommittedMemFu", "MUTANTS"]

CFG_PORTS = ("cfg__addr", "cfg__data", "cfg__write", "cfg__read", "clear")
UOP, WORD_IN, WORD_OUT = "uop", "i__0", "o__0"


def _expect(condition: bool, message: str):
    if not condition:
        raise ScoreboardError(message)


# --- stimulus -------------------------------------------------------------------------------

def _random_step(rng: random.Random, mem_depth: int) -> int:
    """An address step: zero, unit, small, near the bank size, or anything 12-bit signed."""
    kind = rng.random()
    if kind < 0.15:
        return 0
    if kind < 0.4:
        return rng.choice((1, -1))
    if kind < 0.7:
        return rng.choice((1, -1)) * rng.randint(2, 7)
    if kind < 0.8:
        return rng.choice((mem_depth - 1, 1 - mem_depth, mem_depth + 1))
    return rng.randint(-2048, 2047)


def _random_counts(rng: random.Random, budget: int) -> tuple[int, int]:
    """(count_i, count_j) of at most ``budget`` words: single words, short and long runs."""
    kind = rng.random()
    if kind < 0.15:
        return 1, 1
    if kind < 0.25:
        return min(budget, rng.randint(60, 160)), 1                         # a long run
    count_i = rng.choice((1, rng.randint(2, 8), rng.randint(9, 24)))
    count_j = rng.choice((1, 1, rng.randint(2, 4), rng.randint(5, 8)))
    count_i = min(count_i, budget)
    return count_i, max(1, min(count_j, budget // count_i))


def random_program(rng: random.Random, mem_depth: int, words: int) -> list[dict]:
    """Micro-op fields moving about ``words`` words in all; the final micro-op is ``last``.

    Every program also has a READ of 24 words or more over rows that start at different
    addresses, so a wrong row step, or a word lost under back-pressure, shows in the READ words.
    """
    uops, moved = [], 0
    while moved < words:
        count_i, count_j = _random_counts(rng, max(1, words - moved))
        uops.append({
            "write": int(rng.random() < 0.4),
            "start": rng.randrange(STORAGE_WORDS),      # beyond mem_depth too: it wraps
            "stride": _random_step(rng, mem_depth),
            "offset": _random_step(rng, mem_depth),
            "count_i": count_i,
            "count_j": count_j,
            "last": int(rng.random() < 0.1),
        })
        moved += count_i * count_j
    uops.insert(rng.randrange(len(uops) + 1), {
        "write": 0, "start": rng.randrange(STORAGE_WORDS), "stride": _random_step(rng, mem_depth),
        "offset": rng.choice((1, -1)) * rng.randint(1, mem_depth // 2), "count_i": rng.randint(8, 16),
        "count_j": rng.randint(3, 5), "last": 0})
    uops[-1]["last"] = 1
    return uops


def _words(fields: dict) -> int:
    return fields["count_i"] * fields["count_j"]


@dataclass
class GoldenRun:
    outputs: list[int]      # READ words, in order
    model: MemModel         # its memory is the expected final contents


def golden_run(width: int, mem_depth: int, preload, uops, write_words) -> GoldenRun:
    """Run the golden model over the whole scenario; micro-ops go through encode/decode."""
    model = MemModel(width=width, mem_depth=mem_depth)
    for addr, value in preload:
        if addr < STORAGE_WORDS:
            model.write_word(addr, value)
    model.load([decode(MemUop, encode(MemUop, fields)) for fields in uops])
    unbounded = len(write_words) + sum(_words(fields) for fields in uops) + 1
    inputs, outputs = [Channel("i0", unbounded)], [Channel("o0", unbounded)]
    for word in write_words:
        inputs[0].push(word)
    while model.step(inputs, outputs):
        pass
    assert not model.busy and not inputs[0].can_pop(), "the scenario's WRITE words do not match"
    return GoldenRun(list(outputs[0].tokens), model)


# --- the stream-phase scoreboard ------------------------------------------------------------

class MemChecker:
    """Checks every cycle: READ words against the model, and the counters and flags exactly.

    Expected flags follow the spec: ``busy`` while accepted micro-ops have words not yet moved,
    ``firings`` = words moved, ``stalls`` = busy cycles with no word moved, ``finished`` after the
    last word of a ``last`` micro-op moved. READ words are matched on ``o[0]`` and WRITE words
    on ``i[0]``, each with the oldest accepted micro-op of its direction that still owes words.
    """

    def __init__(self, uops, expected_outputs):
        self.total = sum(_words(fields) for fields in uops)
        self.expected = list(expected_outputs)
        self.received = []
        self.owed = {WORD_OUT: deque(), WORD_IN: deque()}      # [words left, last] per micro-op
        self.accepted = self.due = self.moved = self.stalls = 0
        self.finished = False

    def on_cycle(self, cycle, sample, transfers):
        busy = self.moved < self.due
        self._check_flags(cycle, sample, busy)
        if UOP in transfers:
            fields = decode(MemUop, transfers[UOP])
            self.owed[WORD_IN if fields["write"] else WORD_OUT].append([_words(fields), fields["last"]])
            self.accepted += 1
            self.due += _words(fields)
        moved = [stream for stream in (WORD_OUT, WORD_IN) if stream in transfers]
        for stream in moved:
            self._account(cycle, stream, transfers[stream])
        if busy and not moved:
            self.stalls += 1

    def _check_flags(self, cycle, sample, busy):
        expected = {"busy": int(busy), "firings": self.moved, "stalls": self.stalls,
                    "finished": int(self.finished)}
        for name, value in expected.items():
            _expect(sample[name] == value,
                    f"cycle {cycle}: {name} is {sample[name]}, expected {value} "
                    f"({self.progress()})")

    def _account(self, cycle, stream, payload):
        owed = self.owed[stream]
        direction = "READ" if stream == WORD_OUT else "WRITE"
        _expect(bool(owed), f"cycle {cycle}: {stream} moved {payload:#x} with no {direction} "
                            f"micro-op owing a word")
        if stream == WORD_OUT:
            index = len(self.received)
            _expect(index < len(self.expected) and payload == self.expected[index],
                    f"cycle {cycle}: READ word #{index} is {payload:#x}, the model expects "
                    + (f"{self.expected[index]:#x}" if index < len(self.expected) else "none"))
            self.received.append(payload)
        owed[0][0] -= 1
        if owed[0][0] == 0:
            _words_left, last = owed.popleft()
            self.finished = self.finished or bool(last)
        self.moved += 1

    def complete(self):
        return self.moved >= self.total

    def progress(self):
        return (f"moved {self.moved}/{self.total} words, READ words {len(self.received)}/"
                f"{len(self.expected)}, {self.accepted} micro-ops accepted")

    def finish(self):
        _expect(self.received == self.expected, "the READ word sequence differs from the model's")


# --- the config-bus phases ------------------------------------------------------------------

@dataclass
class CfgStep:
    """One cycle of config-bus (and ``clear``) driving, with the values it implies."""
    drive: dict = field(default_factory=dict)
    expect_now: dict = field(default_factory=dict)      # sampled in this cycle
    expect_next: dict = field(default_factory=dict)     # sampled in the next cycle
    what: str = "idle"


def _preload_steps(preload) -> list[CfgStep]:
    return [CfgStep({"cfg__write": 1, "cfg__addr": addr, "cfg__data": value},
                    what=f"cfg write [{addr:#06x}] = {value:#x}") for addr, value in preload]


def _readback_steps(model: MemModel, rng: random.Random, total_words: int,
                    finished: bool) -> list[CfgStep]:
    """Counters still hold the run's totals; every word reads back (at a random alias); the
    non-storage register reads 0; then ``clear`` zeroes counters and ``finished``."""
    steps = [CfgStep(expect_now={"firings": total_words, "finished": int(finished)},
                     what="after the run")]
    for word in range(model.mem_depth):
        addr = _alias(rng, word, model.mem_depth)
        steps.append(CfgStep({"cfg__read": 1, "cfg__addr": addr},
                             expect_next={"cfg__rdata": model.read_word(addr)},
                             what=f"cfg read [{addr:#06x}] (storage word {word})"))
    steps.append(CfgStep({"cfg__read": 1, "cfg__addr": REGISTERS["firings"]},
                         expect_next={"cfg__rdata": 0}, what="cfg read of a register not the FU's"))
    steps.append(CfgStep({"clear": 1}, expect_next={"firings": 0, "stalls": 0, "finished": 0},
                         what="clear"))
    return steps


def _alias(rng: random.Random, word: int, mem_depth: int) -> int:
    """``word`` itself, or now and then one of its aliases in the 0x0000-0x0FFF window."""
    if rng.random() < 0.25:
        return word + mem_depth * rng.randrange(STORAGE_WORDS // mem_depth)
    return word


class MemBench:
    """Config phase, stream phase, config phase: one scenario, StreamBench's interface."""

    def __init__(self, inner: StreamBench, before: list[CfgStep], after: list[CfgStep]):
        self.inner = inner
        self.phases = [("preload", before + [CfgStep()]), ("stream", None),
                       ("readback", after + [CfgStep()])]
        self.phase = 0
        self.step = 0               # index into a config phase
        self.stream_start = 0       # first cycle of the stream phase
        self._pending = None        # (step, expectations) to check in this cycle
        self.sampled = list(dict.fromkeys(inner.sampled + ["cfg__rdata", *CFG_PORTS]))
        self.cycles = 0

    @property
    def checker(self):
        return self

    @property
    def driven(self) -> list[str]:
        return self.inner.driven + list(CFG_PORTS)

    def idle_values(self) -> dict[str, int]:
        return {name: 0 for name in self.driven}

    @property
    def finished(self) -> bool:
        return self.phase == len(self.phases)

    def drive(self, cycle: int) -> dict[str, int]:
        values = self.idle_values()
        steps = self.phases[self.phase][1]
        if steps is None:
            values.update(self.inner.drive(cycle - self.stream_start))
        else:
            values.update(steps[self.step].drive)
        return values

    def observe(self, cycle: int, sample: dict[str, int]):
        name, steps = self.phases[self.phase]
        self.cycles = cycle + 1
        if steps is None:
            self.inner.observe(cycle - self.stream_start, sample)
            if self.inner.finished:
                self.inner.checker.finish()
                self._next_phase()
            return
        step = steps[self.step]
        if self._pending is not None:
            self._check(cycle, sample, *self._pending)
        self._check(cycle, sample, step, step.expect_now)
        for flag in ("busy", "o__0__valid"):
            _expect(sample[flag] == 0, f"cycle {cycle} ({name}: {step.what}): {flag} is high "
                                       f"with no micro-op given")
        self._pending = (step, step.expect_next)
        self.step += 1
        if self.step == len(steps):
            self._next_phase()
            self.stream_start = cycle + 1

    def _next_phase(self):
        self.phase += 1
        self.step = 0
        self._pending = None

    def _check(self, cycle, sample, step, expectations):
        for name, value in expectations.items():
            _expect(sample[name] == value,
                    f"cycle {cycle}: {name} is {sample[name]:#x}, expected {value:#x} "
                    f"(after {step.what})")

    def progress(self) -> str:
        name = self.phases[min(self.phase, len(self.phases) - 1)][0]
        return f"phase {name}, step {self.step}; stream phase: {self.inner.checker.progress()}"

    def no_progress(self, max_cycles: int) -> NoProgressError:
        if self.phases[min(self.phase, len(self.phases) - 1)][1] is None:
            return self.inner.no_progress(max_cycles)
        return NoProgressError(f"no completion after {max_cycles} cycles: {self.progress()}")

    def finish(self):
        _expect(self.finished, f"the scenario stopped early: {self.progress()}")


# --- building a scenario ----------------------------------------------------------------------

def _preload(rng: random.Random, mem_depth: int) -> list[tuple[int, int]]:
    """Every word once, in random order, sometimes through an alias; and one write to a
    register that is not the FU's, which must change nothing."""
    words = list(range(mem_depth))
    rng.shuffle(words)
    writes = [(_alias(rng, word, mem_depth), rng.getrandbits(CFG_DATA_BITS)) for word in words]
    writes.insert(rng.randrange(len(writes) + 1),
                  (REGISTERS["firings"] + rng.randrange(16), rng.getrandbits(CFG_DATA_BITS)))
    return writes


def max_cycles_for(mem_depth: int, words: int) -> int:
    """Generous: 90% back-pressure on every READ word, plus both config phases."""
    return 2 * mem_depth + 40 * words + 1000


def make_mem_bench(ports, extra, width: int, mem_depth: int, profile: str, seed: int, *,
                   words: int = 200, uops=None) -> MemBench:
    """A scenario: random (or the given) micro-ops, random contents. Choices derive from ``seed``."""
    stall = PROFILES[profile]
    rng = random.Random(seed)
    preload = _preload(rng, mem_depth)
    uops = [dict(fields) for fields in uops] if uops is not None \
        else random_program(rng, mem_depth, words)
    write_words = [rng.getrandbits(width) for fields in uops if fields["write"]
                   for _ in range(_words(fields))]
    golden = golden_run(width, mem_depth, preload, uops, write_words)

    by_prefix = {port.prefix: port for port in ports}
    sources = [SourceDriver(by_prefix[UOP], [encode(MemUop, fields) for fields in uops],
                            stall.idle, random.Random(rng.getrandbits(64))),
               SourceDriver(by_prefix[WORD_IN], write_words, stall.idle,
                            random.Random(rng.getrandbits(64)))]
    sinks = [SinkDriver(by_prefix[WORD_OUT], stall.backpressure, random.Random(rng.getrandbits(64)))]
    checker = MemChecker(uops, golden.outputs)
    inner = StreamBench(ports, sources, sinks, checker, extra_signals=extra)
    after = _readback_steps(golden.model, rng, sum(_words(fields) for fields in uops),
                            golden.model.finished)
    return MemBench(inner, _preload_steps(preload), after)


# --- a broken memory the scoreboard must catch -------------------------------------------------

class _OffsetBlindAddresses(AffineAddresses):
    def next_row(self, row, offset):
        return row


class OffsetBlindMemFu(MemFu):
    """A mutant: its address generator ignores ``offset`` (every row restarts at ``start``)."""

    def address_generator(self, addr_bits: int) -> AffineAddresses:
        return _OffsetBlindAddresses(addr_bits)


class OvercommittedMemFu(MemFu):
    """A mutant: issues a fourth READ word into three slots, so back-pressure loses words."""

    output_credits = 4


MUTANTS = {"offset_blind": OffsetBlindMemFu, "overcommitted": OvercommittedMemFu}
