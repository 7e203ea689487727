# amaranth: UnusedElaboratable=no
"""The PE's Ripple operators against docs/ripple.md, under random idle and back-pressure.

QUEUE keeps FIFO order, holds at most its depth without spill and the whole bank with it, and
counts its spill traffic; ARB grants round robin from the slot after the last grant (checked
grant by grant from the slots that were present); TASK without ``ind`` never has two invocations
out at once, with ``ind`` it passes every argument; LOCK grants in arrival order, never to a held
address, never more than its entries, and faults on a release of an address nobody holds; LDST
loads and stores one array. Every case also runs the PE's golden model (``PeModel``) on the same
streams where the outcome does not depend on timing.
"""

import random

import pytest

from ripple_core.pe import (
    LOCK_ENTRIES,
    MEM_WINDOW,
    REG_CONFIG,
    REG_CONST,
    REG_FAULT,
    REG_LOCKS,
    REG_ORIGIN,
    REG_QUEUE_DEPTH,
    REG_SPILL_READS,
    REG_SPILL_WRITES,
    REG_STATUS,
    STATUS_FAULT,
    RipplePE,
    pe_config_word,
)
from rivulet.sim.seeds import seeds_for

from .ripple_ops_bench import pe_design, run_op_bench

PROFILES = ["no_stall", "random_stall_50", "backpressure_90", "blocked_then_free"]
MEM_DEPTH = 64
SLOT_DEPTHS = [1, 2, 4]     # the PE's operand queues


def _seeds(name: str, count: int = 2) -> list[int]:
    seeds = seeds_for(name, count)
    print(f"{name}: seeds {seeds}")
    return seeds


class Rule:
    """What a bench checks; the bench sets ``self.bench``."""
    bench = None

    def on_cycle(self, cycle, sample, transfers):
        pass

    def complete(self) -> bool:
        return True

    def reads(self) -> list[int]:
        return [REG_STATUS]

    def progress(self) -> str:
        return type(self).__name__

    def finish(self):
        pass


# ---------------------------------------------------------------------------- QUEUE


class QueueRule(Rule):
    """Output equals input, in order; counts the tokens taken while the output is blocked."""

    def __init__(self, tokens):
        self.tokens, self.out, self.taken = [t & 0xFFFF_FFFF for t in tokens], [], 0
        self.taken_before_first_output = None

    def on_cycle(self, cycle, sample, transfers):
        assert "o__1" not in transfers, "QUEUE emitted on port 1"
        if "i__0" in transfers:
            self.taken += 1
        if "o__0" in transfers:
            if self.taken_before_first_output is None:
                self.taken_before_first_output = self.taken
            self.out.append(transfers["o__0"])

    def complete(self):
        return len(self.out) >= len(self.tokens)

    def reads(self):
        return [REG_STATUS, REG_SPILL_WRITES, REG_SPILL_READS]

    def finish(self):
        assert self.out == self.tokens, "the queue changed the order or the values of its tokens"
        assert self.bench.read_values[REG_STATUS] & 1, "the queue is not empty at the end"


def queue_writes(depth: int, spill: bool) -> dict:
    return {REG_CONFIG: pe_config_word("QUEUE", pred=spill, drop=(1,)), REG_QUEUE_DEPTH: depth}


@pytest.mark.parametrize("slot_depth", SLOT_DEPTHS)
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("spill", [False, True])
def test_queue_keeps_fifo_order(profile, spill, slot_depth):
    for seed in _seeds(f"queue:{profile}:{spill}:{slot_depth}"):
        rng = random.Random(seed)
        tokens = [rng.getrandbits(32) for _ in range(40)]
        rule = QueueRule(tokens)
        bench = run_op_bench(pe_design(slot_depth, mem_depth=MEM_DEPTH), queue_writes(3, spill), {0: tokens},
                             rule, profile=profile, seed=seed)
        writes, reads = bench.read_values[REG_SPILL_WRITES], bench.read_values[REG_SPILL_READS]
        assert writes == reads, f"{writes} words spilled but {reads} came back"
        if not spill:
            assert writes == 0
        assert bench.firings == len(tokens), "a QUEUE firing is one dequeue"


@pytest.mark.parametrize("depth", [1, 3, 8])
def test_queue_bounded_without_spill_and_spills_with_it(depth):
    """With the output blocked for 48 cycles, a plain queue takes its depth plus the slot queue
    (2) and the two words port 0 holds; a spill queue takes every token and counts the words
    beyond its depth as spill traffic, all of which comes back."""
    for seed in _seeds(f"queue-bound:{depth}", 1):
        tokens = list(range(100, 140))
        plain = QueueRule(tokens)
        run_op_bench(pe_design(2, mem_depth=MEM_DEPTH), queue_writes(depth, False), {0: tokens}, plain,
                     profile="blocked_then_free", seed=seed)
        assert plain.taken_before_first_output == depth + 2 + 2
        spilled = QueueRule(tokens)
        bench = run_op_bench(pe_design(2, mem_depth=MEM_DEPTH), queue_writes(depth, True), {0: tokens},
                             spilled, profile="blocked_then_free", seed=seed)
        assert spilled.taken_before_first_output == len(tokens)
        # Two words leave the ring for port 0 before it fills; every later one beyond the depth spills.
        assert bench.read_values[REG_SPILL_WRITES] == len(tokens) - 2 - depth
        assert bench.read_values[REG_SPILL_READS] == len(tokens) - 2 - depth


# ---------------------------------------------------------------------------- ARB


class ArbRule(Rule):
    """Each grant (a slot's token taken) must go to the first present slot in round-robin order
    from the slot after the previous grant; the output is the granted tokens in grant order."""

    def __init__(self, streams):
        self.expected_total = sum(len(s) for s in streams.values())
        self.pointer, self.grants, self.out, self.waits = 0, [], [], [0, 0, 0]
        self.max_wait = 0
        self.granted, self.indices = [], []     # the slot of every grant; port 1's tokens

    def on_cycle(self, cycle, sample, transfers):
        taken = [k for k in range(3) if f"i__{k}" in transfers]
        assert len(taken) <= 1, f"cycle {cycle}: ARB took slots {taken} at once"
        present = [k for k in range(3) if sample[f"i__{k}__valid"]]
        if taken:
            (k,) = taken
            expected = next(s for s in ((self.pointer + j) % 3 for j in range(3)) if s in present)
            assert k == expected, (f"cycle {cycle}: ARB granted slot {k}; present {present}, "
                                   f"round robin from {self.pointer} picks {expected}")
            self.pointer = (k + 1) % 3
            self.grants.append(transfers[f"i__{k}"])
            self.granted.append(k)
            for other in present:
                self.waits[other] = 0 if other == k else self.waits[other] + 1
                self.max_wait = max(self.max_wait, self.waits[other])
        if "o__0" in transfers:
            self.out.append(transfers["o__0"])
        if "o__1" in transfers:
            self.indices.append(transfers["o__1"])

    def complete(self):
        return len(self.out) >= self.expected_total

    def finish(self):
        assert self.out == self.grants
        assert self.max_wait <= 2, f"a present source waited {self.max_wait} grants (at most n - 1 = 2)"


@pytest.mark.parametrize("profile", PROFILES)
def test_arb_round_robin_and_fair(profile):
    for seed in _seeds(f"arb:{profile}"):
        rng = random.Random(seed)
        streams = {k: [(k << 16) | n for n in range(rng.randint(5, 25))] for k in range(3)}
        rule = ArbRule(streams)
        # depth 0: the bench drives the slots themselves, so it sees which were present.
        run_op_bench(pe_design(0), {REG_CONFIG: pe_config_word("ARB", drop=(1,))}, streams, rule,
                     profile=profile, seed=seed)
        for k in range(3):
            assert [t for t in rule.out if t >> 16 == k] == streams[k], "ARB reordered one source"


class ArbIndexRule(ArbRule):
    """ArbRule with port 1 kept: the run is complete when both ports have delivered every grant."""

    def complete(self):
        return super().complete() and len(self.indices) >= self.expected_total


@pytest.mark.parametrize("profile", PROFILES)
def test_arb_emits_the_granted_slot_on_port_1(profile):
    """With port 1 kept, every grant also emits the granted slot's number there, in grant order,
    under the same back-pressure as port 0 (a tuple's other fields follow it: ripple_core/tuples.py)."""
    for seed in _seeds(f"arb-index:{profile}"):
        rng = random.Random(seed)
        streams = {k: [(k << 16) | n for n in range(rng.randint(5, 25))] for k in range(3)}
        rule = ArbIndexRule(streams)
        run_op_bench(pe_design(0), {REG_CONFIG: pe_config_word("ARB")}, streams, rule, profile=profile,
                     seed=seed)
        assert rule.indices == rule.granted
        assert rule.indices == [token >> 16 for token in rule.out]


def test_arb_two_sources_skip_the_absent_slot():
    """An ARB of two sources leaves slot 2 const and unarmed: it is never present."""
    streams = {0: [1, 2, 3, 4], 1: [11, 12, 13, 14]}
    rule = ArbRule(streams)
    word = pe_config_word("ARB", slots=("edge", "edge", "const"), drop=(1,))
    run_op_bench(pe_design(0), {REG_CONFIG: word}, streams, rule, profile="no_stall", seed=1)
    assert rule.out == [1, 11, 2, 12, 3, 13, 4, 14]


# ---------------------------------------------------------------------------- TASK


class TaskRule(Rule):
    """Dispatches (port 0) pass the arguments in order. Without ``ind`` a done token is sent back
    on slot 1 some cycles after each dispatch, and no more than ``credits`` arguments may ever be
    taken beyond the done tokens taken; with done tokens slow enough, that many are."""

    def __init__(self, args, ind, rng, credits=1):
        self.args, self.ind, self.rng = [a & 0xFFFF_FFFF for a in args], ind, rng
        self.credits = credits
        self.out, self.taken, self.returned, self.outstanding_max = [], 0, 0, 0
        self.due = []               # cycles at which a done token is added to slot 1

    def on_cycle(self, cycle, sample, transfers):
        if "i__0" in transfers:
            self.taken += 1
        if "i__1" in transfers:
            self.returned += 1
        self.outstanding_max = max(self.outstanding_max, self.taken - self.returned)
        if "o__0" in transfers:
            self.out.append(transfers["o__0"])
            if not self.ind:
                self.due.append(cycle + self.rng.randint(0, 6) + 12 * (self.credits > 1))
        for when in [w for w in self.due if w <= cycle]:
            self.due.remove(when)
            self.bench.source(1).tokens.append(1)

    def complete(self):
        return len(self.out) >= len(self.args) and (self.ind or self.returned >= len(self.args))

    def finish(self):
        assert self.out == self.args
        if not self.ind:
            assert self.outstanding_max == self.credits, \
                f"{self.outstanding_max} invocations were out at once, with {self.credits} credits"
            assert self.bench.read_values[REG_STATUS] & 1, "the task does not hold its credit at the end"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("ind", [False, True])
def test_task_dispatch(profile, ind):
    for seed in _seeds(f"task:{profile}:{ind}"):
        rng = random.Random(seed)
        args = [rng.getrandbits(32) for _ in range(20)]
        rule = TaskRule(args, ind, rng)
        # depth 0: a transfer on slot 0 or 1 is the PE's own take, so invocations can be counted.
        run_op_bench(pe_design(0), {REG_CONFIG: pe_config_word("TASK", pred=ind, drop=(1,))}, {0: args}, rule,
                     profile=profile, seed=seed)


@pytest.mark.parametrize("profile", PROFILES)
def test_task_with_credits_runs_that_many_invocations_at_once(profile):
    """Slot 2 a hold of 3: three invocations out at once, never four."""
    for seed in _seeds(f"task-credits:{profile}"):
        rng = random.Random(seed)
        args = [rng.getrandbits(32) for _ in range(30)]
        rule = TaskRule(args, False, rng, credits=3)
        word = pe_config_word("TASK", slots=("edge", "edge", "hold"), drop=(1,))
        run_op_bench(pe_design(0), {REG_CONFIG: word, REG_CONST + 2: 3}, {0: args}, rule, profile=profile,
                     seed=seed)


# ---------------------------------------------------------------------------- LOCK


class LockRule(Rule):
    """Acquires (slot 0) are granted in arrival order, never to an address held, never beyond
    LOCK_ENTRIES at once; each grant is released (slots 1 and 2) some cycles later."""

    def __init__(self, addresses, rng):
        self.addresses, self.rng = [a & 0xFFFF_FFFF for a in addresses], rng
        self.granted, self.held, self.max_held, self.released, self.done = [], set(), 0, 0, 0
        self.due = []

    def on_cycle(self, cycle, sample, transfers):
        if "i__1" in transfers:
            address = transfers["i__1"]
            assert address in self.held, f"cycle {cycle}: release of {address} taken, but it is not held"
            self.held.remove(address)
            self.released += 1
        if "o__0" in transfers:
            address = transfers["o__0"]
            assert address not in self.held, f"cycle {cycle}: {address} granted while held"
            self.held.add(address)
            self.max_held = max(self.max_held, len(self.held))
            assert len(self.held) <= LOCK_ENTRIES
            self.granted.append(address)
            self.due.append((cycle + self.rng.randint(0, 12), address))
        if "o__1" in transfers:
            assert transfers["o__1"] == 1
            self.done += 1
        for item in [d for d in self.due if d[0] <= cycle]:
            self.due.remove(item)
            self.bench.source(1).tokens.append(item[1])
            self.bench.source(2).tokens.append(7)      # the release's sync token

    def complete(self):
        return len(self.granted) >= len(self.addresses) and self.done >= len(self.addresses)

    def reads(self):
        return [REG_STATUS, REG_LOCKS]

    def finish(self):
        assert self.granted == self.addresses, "grants left the order of arrival"
        assert not self.held and self.bench.read_values[REG_LOCKS] == 0
        assert self.bench.read_values[REG_STATUS] & (1 | STATUS_FAULT) == 1


@pytest.mark.parametrize("slot_depth", SLOT_DEPTHS)
@pytest.mark.parametrize("profile", PROFILES)
def test_lock_exclusive_under_contention(profile, slot_depth):
    maxima = []
    for seed in _seeds(f"lock:{profile}:{slot_depth}"):
        rng = random.Random(seed)
        addresses = [rng.choice([3, 5, 8, -1, 1 << 20, 9, 10]) for _ in range(40)]
        rule = LockRule(addresses, rng)
        run_op_bench(pe_design(slot_depth, mem_depth=16), {REG_CONFIG: pe_config_word("LOCK")},
                     {0: addresses}, rule, profile=profile, seed=seed)
        maxima.append(rule.max_held)
    if profile != "backpressure_90":
        assert max(maxima) > 1, "distinct addresses were never held at the same time"


def test_release_of_an_unheld_address_faults():
    class Stray(Rule):
        def __init__(self):
            self.done = 0

        def on_cycle(self, cycle, sample, transfers):
            self.done += "o__1" in transfers

        def complete(self):
            return self.done == 1

        def reads(self):
            return [REG_STATUS, REG_FAULT]

    rule = Stray()
    bench = run_op_bench(pe_design(2, mem_depth=16), {REG_CONFIG: pe_config_word("LOCK")}, {1: [42], 2: [0]},
                         rule, profile="no_stall", seed=1)
    assert bench.read_values[REG_STATUS] & STATUS_FAULT
    assert bench.read_values[REG_FAULT] == 42


# ---------------------------------------------------------------------------- LDST


class LdstRule(Rule):
    """Loads of words no store touches return the preloaded words, in order; every store gives
    one done token; the bank read back holds the stored words."""

    def __init__(self, loads, stores, bank):
        self.loads, self.stores, self.bank = loads, stores, bank
        self.words, self.done = [], 0

    def on_cycle(self, cycle, sample, transfers):
        if "o__0" in transfers:
            self.words.append(transfers["o__0"])
        if "o__1" in transfers:
            assert transfers["o__1"] == 1
            self.done += 1

    def complete(self):
        return len(self.words) >= len(self.loads) and self.done >= len(self.stores)

    def reads(self):
        return [REG_STATUS] + [MEM_WINDOW + w for w in range(len(self.bank))]

    def finish(self):
        assert self.words == [self.bank[w] for w in self.loads]
        after = list(self.bank)
        for word, value in self.stores:
            after[word] = value
        assert [self.bench.read_values[MEM_WINDOW + w] for w in range(len(after))] == after
        assert not self.bench.read_values[REG_STATUS] & STATUS_FAULT


@pytest.mark.parametrize("slot_depth", SLOT_DEPTHS)
@pytest.mark.parametrize("profile", PROFILES)
def test_ldst_loads_and_stores_one_array(profile, slot_depth):
    for seed in _seeds(f"ldst:{profile}:{slot_depth}"):
        rng = random.Random(seed)
        bank = [rng.getrandbits(32) for _ in range(16)]
        loads = [rng.randrange(8) for _ in range(20)]              # words 0-7 are only loaded
        stores = [(rng.randrange(8, 16), rng.getrandbits(32)) for _ in range(12)]
        stores = list({word: (word, value) for word, value in stores}.values())   # one store per word
        writes = {REG_CONFIG: pe_config_word("LDST"), REG_ORIGIN: 100,
                  **{MEM_WINDOW + w: v for w, v in enumerate(bank)}}
        rule = LdstRule(loads, stores, bank)
        run_op_bench(pe_design(slot_depth, mem_depth=16), writes,
                     {0: loads, 1: [w for w, _ in stores], 2: [v for _, v in stores]}, rule,
                     profile=profile, seed=seed)


def test_ldst_out_of_range_faults_with_the_flat_address():
    class One(Rule):
        def __init__(self):
            self.words = []

        def on_cycle(self, cycle, sample, transfers):
            if "o__0" in transfers:
                self.words.append(transfers["o__0"])

        def complete(self):
            return len(self.words) == 1

        def reads(self):
            return [REG_STATUS, REG_FAULT]

    rule = One()
    bench = run_op_bench(pe_design(2, mem_depth=16), {REG_CONFIG: pe_config_word("LDST"), REG_ORIGIN: 100},
                         {0: [16]}, rule, profile="no_stall", seed=1)
    assert rule.words == [0]
    assert bench.read_values[REG_STATUS] & STATUS_FAULT and bench.read_values[REG_FAULT] == 116


def test_model_runs_the_same_operators():
    """PeModel (the fabric's golden model) on the timing-independent cases: QUEUE passes its tokens
    in order, LDST loads and stores, LOCK refuses a stray release, a bank op on a bank-less PE is
    refused at configuration."""
    from ripple_core.pe import PeMemoryError, PeModel
    from rsn.channels import Channel

    def run(model, streams, grant):
        inputs = [Channel(f"i{k}", 4) for k in range(3)]
        outputs = [Channel(f"o{p}", 4) for p in range(2)]
        model.uops.append({"firings": grant, "last": 1})
        pending = {k: list(v) for k, v in streams.items()}
        got = [[], []]
        for _ in range(2000):
            for k, tokens in pending.items():
                while tokens and inputs[k].can_push():
                    inputs[k].push(tokens.pop(0) & 0xFFFF_FFFF)
            model.step(inputs, outputs)
            for p in range(2):
                while outputs[p].can_pop():
                    got[p].append(outputs[p].pop())
            if model.finished:
                return got
        raise AssertionError("the model did not finish")

    queue = PeModel(mem_depth=16)
    for addr, value in queue_writes(2, True).items():
        queue.write_word(addr, value)
    assert run(queue, {0: list(range(30))}, 30)[0] == list(range(30))

    ldst = PeModel(mem_depth=16)
    for addr, value in {REG_CONFIG: pe_config_word("LDST"), MEM_WINDOW + 3: 33}.items():
        ldst.write_word(addr, value)
    got = run(ldst, {0: [3], 1: [5], 2: [55]}, 2)
    assert got == [[33], [1]] and ldst.read_word(MEM_WINDOW + 5) == 55

    lock = PeModel(mem_depth=16)
    lock.write_word(REG_CONFIG, pe_config_word("LOCK"))
    with pytest.raises(PeMemoryError, match="RELEASE of address 9"):
        run(lock, {1: [9], 2: [0]}, 1)
    with pytest.raises(PeMemoryError, match="no memory bank"):
        PeModel().write_word(REG_CONFIG, pe_config_word("QUEUE"))


def test_without_ripple_ops_the_pe_never_fires_them():
    """``ripple_ops=False`` leaves Ripple's operators out of the hardware: configured as ARB the PE
    takes nothing, and the model refuses the configuration."""
    from amaranth.sim import Simulator

    from ripple_core.pe import PeMemoryError, PeModel

    pe = RipplePE(0, mem_depth=16, ripple_ops=False)

    async def bench(ctx):
        ctx.set(pe.cfg.addr, REG_CONFIG)
        ctx.set(pe.cfg.data, pe_config_word("ARB", drop=(1,)))
        ctx.set(pe.cfg.write, 1)
        await ctx.tick()
        ctx.set(pe.cfg.write, 0)
        ctx.set(pe.i[0].valid, 1)
        ctx.set(pe.o[0].ready, 1)
        for _ in range(8):
            assert not ctx.get(pe.i[0].ready) and not ctx.get(pe.fire)
            await ctx.tick()

    simulator = Simulator(pe)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    with pytest.raises(PeMemoryError, match=r"without Ripple's operators \(ripple_ops=False"):
        PeModel(mem_depth=16, ripple_ops=False).write_word(REG_CONFIG, pe_config_word("LOCK"))
