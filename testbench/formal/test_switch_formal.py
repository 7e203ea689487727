# amaranth: UnusedElaboratable=no
"""k-induction proof of the RSN switch's counted routes at a small size (also with every output
passing through, rsn/hops.py), and mutants that fail it.

The switch is the smallest one (four inputs, four outputs, no FU ports); the micro-ops use
inputs 0..1 and outputs 0..2 with routes of 1..``MAX_BEATS`` beats, so output 3 and inputs 2..3
must stay idle. The environment keeps the stream rules on every stream, stalls freely, and only
sends race-free programs (docs/rsn-architecture.md, "Race-free programs"): a micro-op may read an
input that an earlier route group still reads only if it names every output of that group, so
that in-order issue makes it wait for the whole group. Outside that rule the specification leaves
the share of tokens each route sees to timing, so there is nothing to prove. Static routes
(``beats == 0``) never end and are left out.

What the bench checks, from the specification alone:

* **counted routes**: output ``j``'s routes, in issue order, carry ``beats`` tokens each, taken
  in order from the route's input starting at the input's first token not yet taken. The bench
  counts the tokens routed to ``j`` (``assigned``), taken by ``j`` (delivered plus the port
  ``held[j]``) and delivered; it follows one arbitrary delivery position per output (the solver
  picks it), works out at issue which input token belongs there, remembers that token's payload
  when its input offers it, and requires the delivery at that position to carry it;
* **multicast**: every output of a micro-op does so on its own, so each token reaches every
  output once; an input token retires only once every output due to get it has taken it;
* **idle outputs**: ``o[j].valid`` only while a token routed to ``j`` is not yet delivered;
  inputs no route names are never taken;
* **in-order issue**: the head micro-op is taken exactly when every output it names has taken
  all the tokens of its earlier routes.

The ``*_invariants`` function relates those counters to the switch's route registers; induction
needs it. The first line turns off Amaranth's UnusedElaboratable warning (see
:func:`testbench.formal.harness.elaborate_open`).
"""

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Cat, Cover, Mux, Signal

from rsn.isa import joined_field
from rsn.switch import Switch
from testbench.rsn.switch_bench import EarlyEndSwitch, GreedyIssueSwitch, RepeatingMulticastSwitch

from .harness import (
    FormalBench,
    assert_proven,
    assert_stream_rules,
    assume_stream_rules,
    drive_free_consumer,
    drive_free_producer,
    elaborate_open,
    find_register,
    find_submodule,
    run_proof,
)

WIDTH = 2
USED_INPUTS = 2
USED_OUTPUTS = 3
MAX_BEATS = 2
COUNT_BITS = 4          # token counters modulo 16: at most MAX_BEATS + 2 tokens owed per output
INDUCTION_DEPTH = 1
COVER_DEPTH = 12
MUTANT_BMC_DEPTH = 10


def transfer(stream):
    return stream.valid & stream.ready


def wrap(value):
    """``value`` modulo ``2**COUNT_BITS`` (differences of the bench's counters)."""
    return value[:COUNT_BITS]


def pick(values, index):
    """``values[index]`` for a small signal ``index`` (0 outside the range)."""
    result = 0
    for k, value in enumerate(values):
        result = Mux(index == k, value, result)
    return result


@dataclass
class OutputModel:
    """The bench's view of one used output, and the delivery position it follows."""

    assigned: Signal        # tokens routed to the output so far
    delivered: Signal       # tokens it delivered
    taken: object           # tokens it took: delivered + held (tokens in its skid buffer)
    source: Signal          # input of its latest route
    position: Signal        # the followed delivery (solver's choice)
    armed: Signal           # that delivery is routed and not made yet
    input_of: Signal        # ... its input
    index: Signal           # ... the input's token number
    retired: Signal         # ... that input token has retired
    seen: Signal            # ... its input has offered it
    payload: Signal         # ... its payload, once offered


def switch_bench(switch: Switch, *, invariants: bool = True,
                 used_outputs: int = USED_OUTPUTS) -> FormalBench:
    """Drive ``switch`` from the environment above, using outputs ``0..used_outputs - 1``; without
    ``invariants`` the bench is good for bounded model checking only."""
    bench = FormalBench()
    m = bench.m
    fragment = elaborate_open(switch)
    m.submodules.dut = fragment
    head = switch.uop.payload
    beats = joined_field(head, "beats")     # the whole count: its high bits are held to 0 too

    input_history = []
    for k, sink in enumerate(switch.i):
        drive_free_producer(m, sink)
        input_history.append(assume_stream_rules(m, sink, f"i{k}"))
    output_history = []
    for j, source in enumerate(switch.o):
        drive_free_consumer(m, source)
        output_history.append(assert_stream_rules(m, source, f"o{j}"))
    drive_free_producer(m, switch.uop)
    assume_stream_rules(m, switch.uop, "uop")
    m.d.comb += switch.clear.eq(AnySeq(1))
    issue = transfer(switch.uop)

    # Per used input: tokens retired, and the route group on it (its outputs, tokens still due).
    retired = [Signal(COUNT_BITS, name=f"i{k}_retired") for k in range(USED_INPUTS)]
    group = [Signal(used_outputs, name=f"i{k}_group") for k in range(USED_INPUTS)]
    due = [Signal(range(MAX_BEATS + 1), name=f"i{k}_due") for k in range(USED_INPUTS)]

    # The environment: counted, race-free micro-ops over the used ports. Enable bits beyond
    # the switch's outputs are left free: the switch must ignore them.
    names = [[Signal(name=f"uop_names_i{k}_o{j}") for j in range(used_outputs)]
             for k in range(USED_INPUTS)]
    for k in range(USED_INPUTS):
        for j in range(used_outputs):
            m.d.comb += names[k][j].eq(head.enable[j] & (head.select[j] == k))
    with m.If(switch.uop.valid):
        m.d.comb += Assume((beats >= 1) & (beats <= MAX_BEATS))
        for j in range(used_outputs, switch.n_outputs):
            m.d.comb += Assume(~head.enable[j])
        for j in range(used_outputs):
            with m.If(head.enable[j]):
                m.d.comb += Assume(head.select[j] < USED_INPUTS)
                for k in range(USED_INPUTS):
                    if not switch.selectable(j, k):     # a pass-through output's U-turn
                        m.d.comb += Assume(head.select[j] != k)
        for k in range(USED_INPUTS):
            # Race-free: a micro-op that reads an input still due to an earlier group names
            # (and so waits for) every output of that group.
            with m.If(Cat(names[k]).any() & (due[k] != 0)):
                m.d.comb += Assume((group[k] & ~head.enable[:used_outputs]) == 0)

    # Inputs: a retirement must be due to the input's route group.
    for k, sink in enumerate(switch.i):
        if k >= USED_INPUTS:
            m.d.comb += Assert(~sink.ready, f"i{k}: ready though no route names it")
            continue
        with m.If(transfer(sink)):
            m.d.comb += Assert(due[k] != 0, f"i{k}: taken with no token due to a route")
            m.d.sync += [retired[k].eq(retired[k] + 1), due[k].eq(due[k] - 1)]
        with m.If(issue & Cat(names[k]).any()):
            m.d.comb += Assert(due[k] == 0, f"uop: issued while i{k}'s earlier route is due tokens")
            m.d.sync += [group[k].eq(Cat(names[k])), due[k].eq(beats)]

    outputs = []
    for j, source in enumerate(switch.o):
        if j >= used_outputs:
            m.d.comb += Assert(~source.valid, f"o{j}: an idle output asserts valid")
            continue
        model = OutputModel(
            assigned=Signal(COUNT_BITS, name=f"o{j}_assigned"),
            delivered=Signal(COUNT_BITS, name=f"o{j}_delivered"),
            taken=None,
            source=Signal(range(USED_INPUTS), name=f"o{j}_source"),
            position=Signal(COUNT_BITS, name=f"o{j}_position"),
            armed=Signal(name=f"o{j}_armed"),
            input_of=Signal(range(USED_INPUTS), name=f"o{j}_input_of"),
            index=Signal(COUNT_BITS, name=f"o{j}_index"),
            retired=Signal(name=f"o{j}_retired"),
            seen=Signal(name=f"o{j}_seen"),
            payload=Signal(switch.width, name=f"o{j}_payload"),
        )
        model.taken = wrap(model.delivered + switch.held[j])
        outputs.append(model)
        owed = wrap(model.assigned - model.delivered)
        due_takes = wrap(model.assigned - model.taken)
        m.d.comb += [
            model.position.eq(AnyConst(COUNT_BITS)),
            Assert(due_takes <= MAX_BEATS, f"o{j}: took more tokens than its routes carry"),
        ]
        with m.If(source.valid):
            m.d.comb += Assert(owed != 0, f"o{j}: valid with no token routed to it")
        # In-order issue into idle outputs, and no later than that.
        with m.If(switch.uop.valid & head.enable[j]):
            with m.If(due_takes != 0):
                m.d.comb += Assert(~switch.uop.ready, f"uop: issued into busy output o{j}")

        # Issue: the route's tokens follow the earlier ones; find the followed position's.
        select = head.select[j]
        offset = wrap(model.position - model.assigned)
        with m.If(issue & head.enable[j]):
            m.d.sync += [model.assigned.eq(model.assigned + beats), model.source.eq(select)]
            with m.If(offset < beats):
                m.d.sync += [model.armed.eq(1), model.input_of.eq(select), model.retired.eq(0),
                             model.index.eq(pick(retired, select) + offset)]
                # If the token is on offer already, this is its payload (held while stalled).
                m.d.sync += [
                    model.seen.eq((offset == 0) & pick([port.valid for port in switch.i], select)),
                    model.payload.eq(pick([port.payload for port in switch.i], select)),
                ]
        # The followed token's payload, while its input offers it, and its retirement.
        offered = model.armed & ~model.retired & (pick(retired, model.input_of) == model.index)
        in_valid = pick([switch.i[k].valid for k in range(USED_INPUTS)], model.input_of)
        in_payload = pick([switch.i[k].payload for k in range(USED_INPUTS)], model.input_of)
        in_ready = pick([switch.i[k].ready for k in range(USED_INPUTS)], model.input_of)
        with m.If(offered & in_valid):
            m.d.sync += [model.payload.eq(in_payload), model.seen.eq(1)]
            with m.If(in_ready):
                m.d.sync += model.retired.eq(1)
                # Taken already (in the buffer), or taken now: the take into the buffer is the
                # one internal signal a property looks at.
                ahead = wrap(model.position - model.delivered)
                taking = find_register(fragment, "take")[j]
                m.d.comb += Assert((ahead < switch.held[j]) | ((ahead == switch.held[j]) & taking),
                                   f"o{j}: its token retired from the input before it took it")
        # Delivery.
        with m.If(transfer(source)):
            m.d.sync += model.delivered.eq(model.delivered + 1)
            with m.If(model.armed & (model.delivered == model.position)):
                m.d.sync += model.armed.eq(0)
                # A pass-through output may deliver the token in the cycle its input offers it.
                passing = offered & in_valid & (source.payload == in_payload)
                m.d.comb += Assert((model.seen & (source.payload == model.payload)) | passing,
                                   f"o{j}: token out of order, from the wrong input or corrupted")

    all_idle = Cat(~head.enable[j] | (wrap(outputs[j].assigned - outputs[j].taken) == 0)
                   for j in range(used_outputs)).all()
    with m.If(switch.uop.valid & all_idle & ~head.fence):
        m.d.comb += Assert(switch.uop.ready, "uop: held back though its outputs are idle")
    # A fenced head may wait for counted routes it does not name; that it waits no longer is tested
    # in simulation (testbench/rsn/test_switch.py, with a mutant), not proven here.

    multicast = Cat(names[0]).all() & (beats == MAX_BEATS)
    first, last, last_j = outputs[0], outputs[-1], used_outputs - 1
    m.d.comb += [
        Cover(issue & multicast, "a multicast micro-op to every used output issues"),
        Cover(switch.uop.valid & ~switch.uop.ready, "a micro-op waits for a busy output"),
        Cover(switch.uop.valid & ~switch.uop.ready & names[0][0] & (due[0] != 0) &
              (group[0] == 0b11) & ~names[0][1],
              "a micro-op reading i0 waits for i0's multicast group to end"),
        Cover(transfer(switch.o[0]) & first.armed & (first.delivered == first.position)
              & (first.input_of == 1) & (first.position >= MAX_BEATS),
              "o0 delivers input 1's token after an earlier route"),
        Cover(transfer(switch.o[last_j]) & last.armed & (last.delivered == last.position)
              & (last.index == 1) & ~transfer(switch.o[0]) & switch.o[0].valid,
              "the last used output delivers a multicast token while o0 stalls"),
    ]
    if invariants:
        switch_invariants(m, switch, fragment, outputs, retired, group, due, input_history,
                          used_outputs)
        group_invariants(m, fragment, outputs, group, due, used_outputs)
    return bench


def switch_invariants(m, switch, fragment, outputs, retired, group, due, input_history,
                      used_outputs):
    """The bench's counters against the route registers (``active``, ``select<j>``,
    ``remaining<j>``, ``delivered<k>``) and the output skid buffers."""
    active = find_register(fragment, "active")
    for j, source in enumerate(switch.o):
        select = find_register(fragment, f"select{j}")
        buffer = find_submodule(fragment, f"out{j}")
        skid = find_register(buffer, "skid")
        skid_full = find_register(buffer, "skid_valid")
        # A pass-through output's slots are a queue's storage behind its bypass.
        front = find_register(buffer, "stored_o__valid") if j in switch.pass_through else source.valid
        m.d.comb += Assert(~skid_full | front,
                           f"invariant: o{j} skid slot full behind an empty output")
        if j >= used_outputs:
            m.d.comb += Assert(~active[j] & (select == 0) & (switch.held[j] == 0),
                               f"invariant: o{j} unused")
            continue
        model = outputs[j]
        remaining = find_register(fragment, f"remaining{j}")
        due_takes = wrap(model.assigned - model.taken)
        m.d.comb += [
            Assert(model.source < USED_INPUTS, f"invariant: o{j} source in range"),
            Assert(active[j] == (due_takes != 0), f"invariant: o{j} active while it owes takes"),
            Assert(~active[j] | (remaining == due_takes), f"invariant: o{j} remaining count"),
            Assert(select == Mux(active[j], Cat(model.source == k for k in range(switch.n_inputs)), 0),
                   f"invariant: o{j} select"),
        ]
        if not switch.selectable(j, j):
            m.d.comb += Assert(~active[j] | (model.source != j), f"invariant: o{j} takes no U-turn")
        for k in range(USED_INPUTS):
            delivered = find_register(fragment, f"delivered{k}")
            on_route = active[j] & (model.source == k)
            member = group[k][j]
            with m.If(on_route):
                m.d.comb += [
                    Assert(member, f"invariant: o{j} routed from i{k} is in its group"),
                    Assert((due[k] == remaining) | (due[k] == remaining + 1),
                           f"invariant: o{j} at most one token ahead of i{k}"),
                    Assert(delivered[j] == (due[k] == remaining + 1),
                           f"invariant: o{j} took i{k}'s current token"),
                ]
            with m.Elif(member):
                m.d.comb += [
                    Assert(due[k] <= 1, f"invariant: o{j} done with i{k}'s group"),
                    Assert(delivered[j] == (due[k] == 1), f"invariant: o{j} took i{k}'s last"),
                ]
            with m.Else():
                m.d.comb += Assert(~delivered[j], f"invariant: o{j} took nothing of i{k}")
        # The followed token.
        ahead = wrap(model.position - model.delivered)
        owed = wrap(model.assigned - model.delivered)
        taken = ahead < switch.held[j]
        cursor = pick(retired, model.input_of)
        took_current = pick([find_register(fragment, f"delivered{k}")[j]
                             for k in range(USED_INPUTS)], model.input_of)
        in_history = pick([h.stalled for h in input_history[:USED_INPUTS]], model.input_of)
        held_payload = pick([h.payload for h in input_history[:USED_INPUTS]], model.input_of)
        with m.If(model.armed):
            m.d.comb += [
                Assert(model.input_of < USED_INPUTS, f"invariant: o{j} followed input in range"),
                Assert(ahead < owed, f"invariant: o{j} followed token still owed"),
            ]
            m.d.comb += Assert(~(taken | model.retired) | model.seen,
                               f"invariant: o{j} token taken or retired after its offer")
            with m.If(taken):
                with m.If(ahead == 0):
                    m.d.comb += Assert(source.payload == model.payload,
                                       f"invariant: o{j} output register holds the token")
                with m.Else():
                    m.d.comb += Assert(skid == model.payload,
                                       f"invariant: o{j} skid slot holds the token")
                with m.If(~model.retired):
                    m.d.comb += Assert((cursor == model.index) & took_current & in_history &
                                       (held_payload == model.payload),
                                       f"invariant: o{j} took the token, its input holds it")
            with m.Else():
                m.d.comb += [
                    Assert(~model.retired, f"invariant: o{j} token retired before its take"),
                    Assert(active[j] & (model.source == model.input_of),
                           f"invariant: o{j} still routed from the token's input"),
                    Assert(wrap(model.position - model.taken) ==
                           wrap(model.index - cursor - took_current),
                           f"invariant: o{j} token's place in its route"),
                ]
            with m.If(~model.retired & in_history & (cursor == model.index)):
                m.d.comb += Assert(model.seen & (model.payload == held_payload),
                                   f"invariant: o{j} remembers the offered token")


def group_invariants(m, fragment, outputs, group, due, used_outputs):
    """Tokens are due to an input's group only while one of its outputs is still routed from it
    (the last take of a group retires the token)."""
    active = find_register(fragment, "active")
    for k in range(USED_INPUTS):
        routing = Cat(group[k][j] & active[j] & (outputs[j].source == k) for j in range(used_outputs))
        m.d.comb += Assert((due[k] == 0) | routing.any(),
                           f"invariant: i{k} owes tokens only to a group still routing")




# --- the proof, its covers and the mutants ---------------------------------------------------

@pytest.mark.formal
def test_switch_proof():
    """k-induction: counted routes, multicast, idle outputs and in-order issue, in every
    reachable state."""
    assert_proven(run_proof("switch", switch_bench(Switch(WIDTH, 0, 0)), depth=INDUCTION_DEPTH))


@pytest.mark.formal
def test_switch_proof_with_pass_through_outputs():
    """The same proof for a switch whose outputs all pass through (rsn/hops.py): a bypassing
    queue in place of each skid buffer changes when a token leaves, not which tokens do."""
    switch = Switch(WIDTH, 0, 0, pass_through=range(4))
    assert_proven(run_proof("switch_pass_through", switch_bench(switch), depth=INDUCTION_DEPTH))


@pytest.mark.formal
def test_switch_covers_reached():
    """Multicast issues, a micro-op waits, routes follow one another on an output, a multicast
    output runs ahead of a stalled one: the proof is not vacuous."""
    assert_proven(run_proof("switch_cover", switch_bench(Switch(WIDTH, 0, 0)), mode="cover",
                            depth=COVER_DEPTH))


class HastyMulticastSwitch(Switch):
    """Retires a multicast token once any of its outputs can take it, not all of them."""

    def _elaborate_inputs(self, m, routes, buffers):
        super()._elaborate_inputs(m, routes, buffers)
        for k, port in enumerate(self.i):
            users = Cat(routes.select[j][k] for j in range(self.n_outputs))
            room = Cat(users[j] & buffer.i.ready for j, buffer in enumerate(buffers))
            m.d.comb += port.ready.eq(room.any())


@dataclass(frozen=True)
class Mutant:
    name: str
    build: Callable[[], Switch]
    broken_properties: tuple[str, ...]


# The simulation suite's broken switches (testbench/rsn/switch_bench.py), on two outputs: enough
# for multicast, and bounded model checking stays quick.
MUTANT_OUTPUTS = 2
MUTANTS = [
    Mutant("early_end", lambda: EarlyEndSwitch(WIDTH, 0, 0),
           tuple(f"o{j}: token out of order, from the wrong input or corrupted"
                 for j in range(MUTANT_OUTPUTS)) +
           tuple(f"uop: issued into busy output o{j}" for j in range(MUTANT_OUTPUTS))),
    Mutant("repeating_multicast", lambda: RepeatingMulticastSwitch(1, 0, 0),
           tuple(f"o{j}: took more tokens than its routes carry" for j in range(MUTANT_OUTPUTS)) +
           tuple(f"o{j}: token out of order, from the wrong input or corrupted"
                 for j in range(MUTANT_OUTPUTS))),
    Mutant("hasty_multicast", lambda: HastyMulticastSwitch(WIDTH, 0, 0),
           tuple(f"o{j}: its token retired from the input before it took it"
                 for j in range(MUTANT_OUTPUTS))),
    Mutant("greedy_issue", lambda: GreedyIssueSwitch(WIDTH, 0, 0),
           tuple(f"uop: issued into busy output o{j}" for j in range(MUTANT_OUTPUTS))),
]


@pytest.mark.formal
@pytest.mark.parametrize("mutant", MUTANTS, ids=[mutant.name for mutant in MUTANTS])
def test_switch_mutant_fails(mutant):
    result = run_proof(f"mutant_switch_{mutant.name}",
                       switch_bench(mutant.build(), invariants=False,
                                    used_outputs=MUTANT_OUTPUTS), mode="bmc",
                       depth=MUTANT_BMC_DEPTH)
    assert result.status == "FAIL", result.log_tail()
    assert result.counterexample, "expected a counterexample trace from the initial state"
    failed = [failure.description for failure in result.failures]
    assert set(failed) & set(mutant.broken_properties), \
        f"none of {mutant.broken_properties} among {failed}"
