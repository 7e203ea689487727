# amaranth: UnusedElaboratable=no
"""k-induction proofs of the Arbiter and the Join, and mutants that must fail them.

Both blocks are combinational from their inputs to their output, so every token leaves in the
cycle it is taken: the benches follow one arbitrary token per input (see
:func:`testbench.formal.harness.track_tokens`) and require none to stay inside. The Arbiter's
bench also counts the output's beats and the grants each waiting input has seen, from the
specification alone (docs/stream-primitives.md): a tuple of ``tuple_beats`` transfers comes from
one input, and an input that requests waits at most N-1 grants. The counters' relation to the
arbiter's round-robin registers is stated as invariants, which induction needs.

The first line turns off Amaranth's UnusedElaboratable warning: the designs are elaborated by
hand (see :func:`testbench.formal.harness.elaborate_open`).
"""

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from amaranth.hdl import Assert, Cover, Module, Mux, Signal

from hw import Arbiter, Join

from .harness import (
    FormalBench,
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

WIDTH = 3
INDUCTION_DEPTH = 3
COVER_DEPTH = 14
MUTANT_BMC_DEPTH = 10


def transfer(stream):
    return stream.valid & stream.ready


def free_inputs(m: Module, sinks):
    histories = []
    for k, sink in enumerate(sinks):
        drive_free_producer(m, sink)
        histories.append(assume_stream_rules(m, sink, f"i{k}"))
    return histories


def cyclic_distance(n: int, start, end):
    """Steps from ``start`` forward to ``end`` in the order 0..n-1, 0..: 1..n (n when equal)."""
    step = end - start
    return Mux(end > start, step, step + n)


# --- Arbiter ---------------------------------------------------------------------------------

def arbiter_bench(arbiter: Arbiter, *, invariants: bool = True, mutate=None) -> FormalBench:
    """Per input: every token taken leaves on ``o`` in the same cycle, in order and intact,
    labelled by ``grant``; no token appears from nowhere. The output keeps the stream rules,
    never interleaves two tuples, and a requesting input waits at most N-1 grants.

    ``mutate(fragment)``, if given, breaks the elaborated arbiter (the mutants below); without
    ``invariants`` the bench is good for bounded model checking only.
    """
    bench = FormalBench()
    m = bench.m
    n, beats = arbiter._n, arbiter._tuple_beats
    fragment = elaborate_open(arbiter)
    if mutate is not None:
        mutate(fragment)
    m.submodules.dut = fragment
    input_history = free_inputs(m, arbiter.i)
    drive_free_consumer(m, arbiter.o)
    output_history = assert_stream_rules(m, arbiter.o, "o")
    moved = transfer(arbiter.o)

    trackers = []
    for k, sink in enumerate(arbiter.i):
        delivered = moved & (arbiter.grant == k)
        tracker = track_tokens(m, f"i{k}", arrive=transfer(sink), arrive_payload=sink.payload,
                               deliver=delivered, deliver_payload=arbiter.o.payload, capacity=1)
        m.d.comb += Assert(tracker.in_flight == 0, f"i{k}: a token stayed in the arbiter")
        trackers.append(tracker)

    # Tuples: the bench's own beat count; mid-tuple, a transfer must come from the owner.
    beat = Signal(range(beats), name="tuple_beat")
    owner = Signal(range(n), name="tuple_owner")
    tuple_ends = moved & (beat == beats - 1)
    with m.If(moved):
        m.d.sync += [beat.eq(Mux(tuple_ends, 0, beat + 1)), owner.eq(arbiter.grant)]
    with m.If(moved & (beat != 0)):
        m.d.comb += Assert(arbiter.grant == owner, "o: a tuple was interleaved with another input")

    # Fairness: grants (whole tuples) to others seen while input k waits.
    waited = [Signal(range(n + 1), name=f"i{k}_waited") for k in range(n)]
    for k, sink in enumerate(arbiter.i):
        with m.If(transfer(sink)):
            m.d.sync += waited[k].eq(0)
        with m.Elif(sink.valid & tuple_ends):
            m.d.sync += waited[k].eq(waited[k] + 1)
        m.d.comb += [
            Assert(waited[k] <= n - 1, f"i{k}: waited more than {n - 1} grants"),
            Cover(waited[k] == n - 1, f"i{k}: waited exactly {n - 1} grants"),
        ]
    m.d.comb += Cover(tuple_ends & (arbiter.grant == n - 1), "a whole tuple from the last input")
    if beats > 1:
        m.d.comb += Cover((beat != 0) & ~moved & arbiter.i[0].valid & (owner != 0),
                          "mid-tuple pause while another input requests")
    if invariants:
        arbiter_invariants(m, arbiter, fragment, input_history, output_history, beat, owner,
                           waited)
    return bench


def arbiter_invariants(m, arbiter, fragment, input_history, output_history, beat, owner, waited):
    """The bench's counters against the arbiter's registers (``last``, ``held``, ``current``,
    ``beat``): how many grants each waiting input can still see."""
    n, beats = arbiter._n, arbiter._tuple_beats
    last = find_register(fragment, "last")
    held = find_register(fragment, "held")
    current = find_register(fragment, "current")
    m.d.comb += Assert((last < n) & (current < n) & (owner < n),
                       "invariant: input numbers in range")
    if beats > 1:
        design_beat = find_register(fragment, "beat")
        m.d.comb += [
            Assert(design_beat == beat, "invariant: the arbiter counts the tuple's beats"),
            Assert((beat == 0) | (held & (current == owner)),
                   "invariant: mid-tuple the owner holds the grant"),
        ]
    stalled_here = Signal(name="o_stalled_input")
    m.d.comb += stalled_here.eq(0)
    with m.Switch(current):
        for k in range(n):
            with m.Case(k):
                m.d.comb += stalled_here.eq(input_history[k].stalled)
    with m.If(output_history.stalled):
        m.d.comb += Assert(held & stalled_here, "invariant: a stalled offer holds its grant")
    for k in range(n):
        waiting = arbiter.i[k].valid
        # Grants others may still get before k: the rest of the current grant's round.
        still = Mux(held, Mux(current == k, 0, cyclic_distance(n, current, k)),
                    cyclic_distance(n, last, k) - 1)
        m.d.comb += Assert((waited[k] == 0) | input_history[k].stalled,
                           f"invariant: i{k} counts grants only while it waits")
        with m.If(waiting):
            m.d.comb += Assert(waited[k] + still <= n - 1,
                               f"invariant: i{k} has at most {n - 1} grants to wait in all")


# --- Join ------------------------------------------------------------------------------------

def join_bench(join: Join) -> FormalBench:
    """Every input's tokens leave in order and intact in their own element of ``o.payload``,
    one output token per set of inputs: all inputs transfer exactly when the output does."""
    bench = FormalBench()
    m = bench.m
    m.submodules.dut = elaborate_open(join)
    free_inputs(m, join.i)
    drive_free_consumer(m, join.o)
    assert_stream_rules(m, join.o, "o")
    moved = transfer(join.o)
    for k, sink in enumerate(join.i):
        tracker = track_tokens(m, f"i{k}", arrive=transfer(sink), arrive_payload=sink.payload,
                               deliver=moved, deliver_payload=join.o.payload[k], capacity=1)
        m.d.comb += Assert(tracker.in_flight == 0,
                           f"i{k}: a token taken without an output token, or an output token "
                           f"without one from i{k}")
    m.d.comb += Cover(join.i[0].valid & ~join.o.valid, "i0 waits for the other inputs")
    return bench


# --- the proofs ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], FormalBench]


CASES = [
    Case("arbiter_2", lambda: arbiter_bench(Arbiter(WIDTH, 2))),
    Case("arbiter_3", lambda: arbiter_bench(Arbiter(WIDTH, 3))),
    Case("arbiter_3_tuple3", lambda: arbiter_bench(Arbiter(WIDTH, 3, tuple_beats=3))),
    Case("join_2", lambda: join_bench(Join(WIDTH, 2))),
    Case("join_3", lambda: join_bench(Join(WIDTH, 3))),
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
    """Traffic flows, inputs wait the full bound, tuples pause: the proofs are not vacuous."""
    assert_proven(run_proof(f"{case.name}_cover", case.build(), mode="cover",
                            depth=COVER_DEPTH))


# --- mutants: the properties must be able to fail --------------------------------------------

def overriding(register: str, value):
    """A mutation that pins the arbiter's ``register`` to ``value`` after every clock edge (an
    assignment added last wins over the design's own)."""
    def mutate(fragment):
        fragment.add_statements("sync", find_register(fragment, register).eq(value))
    return mutate


class LeakyArbiter(Arbiter):
    """Every input sees the output's ready: the inputs not granted lose their tokens."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += [sink.ready.eq(self.o.ready) for sink in self.i]
        return m


class ImpatientJoin(Join):
    """An input is taken whenever the output is ready, even when its siblings are not valid."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.i[0].ready.eq(self.o.ready)
        return m


class CrossedJoin(Join):
    """Pairs input 0's token with input 1's slot and the other way round."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += [self.o.payload[0].eq(self.i[1].payload),
                     self.o.payload[1].eq(self.i[0].payload)]
        return m


@dataclass(frozen=True)
class Mutant:
    name: str
    build: Callable[[], FormalBench]
    broken_property: str


MUTANTS = [
    Mutant("leaky_arbiter", lambda: arbiter_bench(LeakyArbiter(WIDTH, 2), invariants=False),
           "i1: a token stayed in the arbiter"),
    # The round-robin pointer never moves: input 0 always comes first, input 2 starves.
    Mutant("fixed_priority_arbiter",
           lambda: arbiter_bench(Arbiter(WIDTH, 3), invariants=False, mutate=overriding("last", 2)),
           "i2: waited more than 2 grants"),
    # The beat count always says "last beat": every transfer ends the grant.
    Mutant("interleaving_arbiter",
           lambda: arbiter_bench(Arbiter(WIDTH, 2, tuple_beats=2), invariants=False,
                                 mutate=overriding("beat", 1)),
           "o: a tuple was interleaved with another input"),
    Mutant("impatient_join", lambda: join_bench(ImpatientJoin(WIDTH, 2)),
           "i0: a token taken without an output token, or an output token without one from i0"),
    Mutant("crossed_join", lambda: join_bench(CrossedJoin(WIDTH, 2)),
           "i1: token delivered out of order or corrupted"),
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
