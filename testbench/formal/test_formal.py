# amaranth: UnusedElaboratable=no
"""k-induction proofs of TokenQueue, SkidBuffer and Fork, and mutants that must fail them.

Every bench drives the design from a free upstream that keeps the stream rules and a free
downstream, asserts the stream rules on the outputs and follows one arbitrary token through the
design (see :func:`testbench.formal.harness.track_tokens`). The ``*_invariants`` functions state
where the design keeps its tokens; induction needs them, since a stalled output can hide a
corrupt register for any number of cycles. Each bench is also run in cover mode, so that
assumptions which forbid all traffic cannot make a proof pass vacuously, and broken variants of
the designs (the mutants at the end) must fail bounded model checking.

The first line turns off Amaranth's UnusedElaboratable warning: the memory queues are
elaborated by hand (see :func:`testbench.formal.harness.elaborate_open`).
"""

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from amaranth.hdl import Assert, Assume, Cover, Module, Mux, Signal

from hw import Fork, SkidBuffer, TokenQueue

from .harness import (
    FormalBench,
    StallHistory,
    TokenTracker,
    assert_proven,
    assert_stream_rules,
    assume_stream_rules,
    drive_free_consumer,
    drive_free_producer,
    elaborate_open,
    find_register,
    run_proof,
    track_tokens,
)

WIDTH = 4
QUEUE_DEPTHS = (1, 2, 3, 4, 5)
INDUCTION_DEPTH = 2   # 1 suffices with the invariants below; 2 leaves a margin
COVER_DEPTH = 12      # enough to fill a depth-5 queue and drain six tokens
MUTANT_BMC_DEPTH = 8


def transfer(stream):
    return stream.valid & stream.ready


def assert_tracked_token_in(m: Module, tracker: TokenTracker, where, slot, name: str):
    """While the tracked token sits at ``where`` (a condition), ``slot`` must hold it."""
    with m.If(tracker.held & where):
        m.d.comb += Assert(slot == tracker.payload, f"invariant: {name} holds the tracked token")


def free_stream_environment(m: Module, sink, source) -> None:
    drive_free_producer(m, sink)
    drive_free_consumer(m, source)
    assume_stream_rules(m, sink, "i")
    assert_stream_rules(m, source, "o")


# --- TokenQueue ------------------------------------------------------------------------------

def queue_bench(queue: TokenQueue, *, invariants: bool = True) -> FormalBench:
    """The TokenQueue contract: order, no loss, ``level`` and ``i.ready == (level < depth)``, in
    every mode; with ``bypass``, a token may leave in the cycle it arrives.

    Without ``invariants`` the bench is good for bounded model checking only.
    """
    bench = FormalBench()
    m = bench.m
    peek = {}
    if invariants and queue.depth >= 3:
        def add_peek_port(module):
            peek["port"] = module.submodules.storage.read_port(domain="comb")
        fragment = elaborate_open(queue, add_peek_port)
    else:
        fragment = elaborate_open(queue)
    m.submodules.dut = fragment
    free_stream_environment(m, queue.i, queue.o)
    tracker = track_tokens(m, "token", arrive=transfer(queue.i), arrive_payload=queue.i.payload,
                           deliver=transfer(queue.o), deliver_payload=queue.o.payload,
                           capacity=queue.depth)
    m.d.comb += [
        Assert(queue.level == tracker.in_flight, "level: not the number of tokens held"),
        Assert(queue.i.ready == (queue.level < queue.depth), "i.ready: not (level < depth)"),
        Cover(queue.level == queue.depth, "queue full"),
    ]
    if queue.mode == "bypass":
        # While empty the output shows the input; held tokens are offered as in fall-through.
        m.d.comb += Assert(queue.o.valid == ((queue.level != 0) | queue.i.valid),
                           "o.valid: not (a token held or arriving)")
    elif queue.mode == "fall_through" or queue.depth <= 2:
        m.d.comb += Assert(queue.o.valid == (queue.level != 0), "o.valid: not (a token held)")
    if not invariants:
        return bench
    source = queue.o
    if queue.mode == "bypass":      # the storage behind the bypass, elaborated in the same module
        source = SimpleNamespace(valid=find_register(fragment, "stored_o__valid"),
                                 payload=find_register(fragment, "stored_o__payload"))
    assert_tracked_token_in(m, tracker, (tracker.position == 0) & source.valid,
                            source.payload, "the output register")
    if queue.depth == 2:
        skid_pair_invariants(m, queue.i, source, find_register(fragment, "skid"), tracker)
    elif queue.depth >= 3 and queue.mode == "registered":
        memory_queue_invariants(m, queue, fragment, peek["port"], tracker)
    elif queue.depth >= 3:
        fall_through_memory_invariants(m, queue, fragment, peek["port"], tracker)
    return bench


def skid_pair_invariants(m: Module, sink, source, skid: Signal, tracker: TokenTracker):
    """The skid slot (full exactly when ``sink.ready`` is low) is filled only behind a full
    output register, and holds the second-oldest token."""
    skid_full = ~sink.ready
    m.d.comb += Assert(~skid_full | source.valid, "invariant: skid slot full, output empty")
    assert_tracked_token_in(m, tracker, tracker.position == 1, skid, "the skid slot")


def memory_queue_invariants(m: Module, queue: TokenQueue, fragment, peek, tracker):
    """Tokens behind the output register wait in memory from ``read_at`` on, oldest first."""
    _ring_invariants(m, queue, fragment, peek, tracker, behind_register=True)


def fall_through_memory_invariants(m: Module, queue: TokenQueue, fragment, peek, tracker):
    """Every held token waits in memory from ``read_at`` on, oldest first."""
    _ring_invariants(m, queue, fragment, peek, tracker, behind_register=False)


def _ring_invariants(m: Module, queue: TokenQueue, fragment, peek, tracker, behind_register: bool):
    """The ring buffer's pointers, and the tracked token at its place in memory: behind the output
    register (``registered``: the memory holds depth - 1 tokens) or at the read pointer."""
    slots = queue.depth - 1 if behind_register else queue.depth
    stored = find_register(fragment, "stored")
    write_at = find_register(fragment, "write_at")
    read_at = find_register(fragment, "read_at")

    def wrap(offset):  # offset < 2 * slots
        return Mux(offset >= slots, offset - slots, offset)

    m.d.comb += [
        Assert(stored <= slots, "invariant: stored within memory depth"),
        Assert(read_at < slots, "invariant: read pointer in range"),
        Assert(write_at == wrap(read_at + stored), "invariant: pointers differ by stored"),
    ]
    offset = Signal(range(2 * slots), name="tracked_offset")
    ahead = queue.o.valid if behind_register else 0        # the token in the output register
    m.d.comb += [offset.eq(read_at + tracker.position - ahead), peek.addr.eq(wrap(offset))]
    in_memory = (~queue.o.valid | (tracker.position != 0)) if behind_register else 1
    assert_tracked_token_in(m, tracker, in_memory, peek.data, "the memory")


# --- SkidBuffer ------------------------------------------------------------------------------

def skid_buffer_bench(buffer: SkidBuffer) -> FormalBench:
    """Order, no loss, at most two tokens held, and ``i.ready`` low exactly when both are."""
    bench = FormalBench()
    m = bench.m
    m.submodules.dut = fragment = elaborate_open(buffer)
    free_stream_environment(m, buffer.i, buffer.o)
    tracker = track_tokens(m, "token", arrive=transfer(buffer.i), arrive_payload=buffer.i.payload,
                           deliver=transfer(buffer.o), deliver_payload=buffer.o.payload,
                           capacity=2)
    m.d.comb += [
        Assert(tracker.in_flight == buffer.o.valid + ~buffer.i.ready,
               "occupancy: tokens held differ from output slot plus skid slot"),
        Cover(~buffer.i.ready, "skid slot full"),
    ]
    assert_tracked_token_in(m, tracker, (tracker.position == 0) & buffer.o.valid,
                            buffer.o.payload, "the output register")
    skid_pair_invariants(m, buffer.i, buffer.o, find_register(fragment, "skid"), tracker)
    return bench


# --- Fork ------------------------------------------------------------------------------------

def assume_ready_held(m: Module, stream, name: str):
    """The consumer of ``stream`` never lowers ready without a transfer (lockstep's condition)."""
    waiting = Signal(name=f"{name}_ready_waiting")
    m.d.sync += waiting.eq(stream.ready & ~stream.valid)
    with m.If(waiting):
        m.d.comb += Assume(stream.ready, f"{name}: ready fell without a transfer")


def fork_bench(fork: Fork, *, invariants: bool = True) -> FormalBench:
    """Every output delivers every input token once, in order, before the input retires it;
    in lockstep mode all outputs and the input transfer in the same cycle.

    A token arrives in the first cycle it is offered on the input, so an output may deliver it
    before the input transfer retires it. Without ``invariants`` the bench is good for bounded
    model checking only.
    """
    bench = FormalBench()
    m = bench.m
    m.submodules.dut = fragment = elaborate_open(fork)
    drive_free_producer(m, fork.i)
    pending = assume_stream_rules(m, fork.i, "i")
    arrive = fork.i.valid & ~pending.stalled
    trackers = []
    for k, output in enumerate(fork.o):
        name = f"o{k}"
        drive_free_consumer(m, output)
        if fork.mode == "lockstep":
            assume_ready_held(m, output, name)
            m.d.comb += Assert(transfer(output) == transfer(fork.i),
                               f"{name}: did not transfer in lockstep with the input")
        assert_stream_rules(m, output, name)
        tracker = track_tokens(m, name, arrive=arrive, arrive_payload=fork.i.payload,
                               deliver=transfer(output), deliver_payload=output.payload,
                               capacity=1)
        with m.If(transfer(fork.i)):
            m.d.comb += Assert(tracker.in_flight + arrive - transfer(output) == 0,
                               f"{name}: input retired before this output took the token")
        trackers.append(tracker)
    if fork.mode == "eager":
        m.d.comb += Cover(transfer(fork.o[0]) & ~transfer(fork.i),
                          "o0 takes a token before the input retires it")
    if invariants:
        fork_invariants(m, fork, fragment, pending, trackers)
    return bench


def fork_invariants(m: Module, fork: Fork, fragment, pending: StallHistory, trackers):
    """Output k owes the token pending on the input unless its ``delivered`` flag is set (eager
    mode); the flags are clear while no token is pending."""
    if fork.mode == "eager":
        delivered = find_register(fragment, "delivered")
        m.d.comb += Assert(pending.stalled | (delivered == 0),
                           "invariant: delivered flags clear between tokens")
        owed = [pending.stalled & ~delivered[k] for k in range(len(trackers))]
    else:
        owed = [pending.stalled] * len(trackers)
    for k, tracker in enumerate(trackers):
        m.d.comb += Assert(tracker.in_flight == owed[k],
                           f"invariant: o{k} owes exactly the pending undelivered token")
        assert_tracked_token_in(m, tracker, 1, pending.payload, f"o{k}: the input")


# --- the proofs ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], FormalBench]


CASES = [
    *(Case(f"token_queue_depth{depth}",
           lambda depth=depth: queue_bench(TokenQueue(WIDTH, depth))) for depth in QUEUE_DEPTHS),
    *(Case(f"token_queue_fall_through_depth{depth}",
           lambda depth=depth: queue_bench(TokenQueue(WIDTH, depth, mode="fall_through")))
      for depth in QUEUE_DEPTHS if depth >= 3),
    *(Case(f"token_queue_bypass_depth{depth}",
           lambda depth=depth: queue_bench(TokenQueue(WIDTH, depth, mode="bypass")))
      for depth in QUEUE_DEPTHS),
    Case("skid_buffer", lambda: skid_buffer_bench(SkidBuffer(WIDTH))),
    Case("fork_eager_2", lambda: fork_bench(Fork(WIDTH, 2, mode="eager"))),
    Case("fork_eager_3", lambda: fork_bench(Fork(WIDTH, 3, mode="eager"))),
    Case("fork_lockstep_2", lambda: fork_bench(Fork(WIDTH, 2, mode="lockstep"))),
]
CASE_IDS = [case.name for case in CASES]


@pytest.mark.formal
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_proof(case):
    """k-induction: the properties hold in every reachable state."""
    assert_proven(run_proof(case.name, case.build(), depth=INDUCTION_DEPTH))


@pytest.mark.formal
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_covers_reached(case):
    """The assumptions leave room for traffic: a proof under contradictory assumptions would
    pass vacuously."""
    assert_proven(run_proof(f"{case.name}_cover", case.build(), mode="cover",
                            depth=COVER_DEPTH))


# --- mutants: the properties must be able to fail --------------------------------------------

DROPPED = 0b1111


class SwallowingQueue(TokenQueue):
    """Depth 1: accepts a token with payload ``DROPPED`` but never offers it."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(transfer(self.i) & (self.i.payload == DROPPED)):
            m.d.sync += self.o.valid.eq(0)
        return m


class ForgetfulQueue(TokenQueue):
    """Depth >= 3: skips the memory write of a token with payload ``DROPPED`` yet counts it, so
    a stale slot is delivered in its place."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.i.payload == DROPPED):
            m.d.comb += m.submodules.storage.write_ports[0].en.eq(0)
        return m


class ImpatientQueue(TokenQueue):
    """Depth 2: withdraws its output token when the output stalls while the skid slot is full."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(~self.i.ready & ~self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        return m


class OvertakingQueue(TokenQueue):
    """Bypass: offers an arriving token's payload even while older tokens wait."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.i.valid):
            m.d.comb += self.o.payload.eq(self.i.payload)
        return m


class HastyFork(Fork):
    """Eager: retires the input token as soon as output 0 has it, whatever the others did."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.i.ready.eq(self.o[0].ready)
        return m


@dataclass(frozen=True)
class Mutant:
    name: str
    build: Callable[[], FormalBench]
    broken_property: str


# Bounded model checking from the initial state needs no invariants, so these benches leave
# them out: the contract properties alone must catch each bug.
MUTANTS = [
    Mutant("swallowing_queue", lambda: queue_bench(SwallowingQueue(WIDTH, 1), invariants=False),
           "level: not the number of tokens held"),
    Mutant("forgetful_queue", lambda: queue_bench(ForgetfulQueue(WIDTH, 3), invariants=False),
           "token: token delivered out of order or corrupted"),
    Mutant("impatient_queue", lambda: queue_bench(ImpatientQueue(WIDTH, 2), invariants=False),
           "o: valid fell without a transfer"),
    Mutant("overtaking_queue",
           lambda: queue_bench(OvertakingQueue(WIDTH, 3, mode="bypass"), invariants=False),
           "o: payload changed while stalled"),
    Mutant("hasty_fork", lambda: fork_bench(HastyFork(WIDTH, 2), invariants=False),
           "o1: input retired before this output took the token"),
]


@pytest.mark.formal
@pytest.mark.parametrize("mutant", MUTANTS, ids=[mutant.name for mutant in MUTANTS])
def test_mutant_fails(mutant):
    result = run_proof(f"mutant_{mutant.name}", mutant.build(), mode="bmc",
                       depth=MUTANT_BMC_DEPTH)
    assert result.status == "FAIL", result.log_tail()
    assert result.counterexample, "expected a counterexample trace from the initial state"
    failed = [failure.description for failure in result.failures]
    assert mutant.broken_property in failed, f"{mutant.broken_property!r} not among {failed}"
