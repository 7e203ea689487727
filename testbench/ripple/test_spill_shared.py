"""Ripple's QUEUE on a shared memory: a few words in the PE, the overflow in a ring of the
memory (``RipplePE(shared_words=...)`` on :class:`hw.banked_memory.BankedMemory`), in
Amaranth's simulator, and spill queues in whole programs on a shared-memory fabric, on the
fabric's golden model and the generated Verilog.

The order the words must leave in is a Python deque's, fed with what the bench offered; the
programs' results are the cases' own ``expect``, computed in Python, never a model's output.
A LOAD PE beside the queue reads the memory all the time, so the ring's accesses meet bank
conflicts, and every stream idles or refuses at random under every stall profile.
"""

import copy
import random
from collections import deque
from types import SimpleNamespace

import pytest

from hw.banked_memory import MemoryOp
from ripple_core.check import read_problems
from ripple_core.lower import LoweringError, compile_lowering, lower_graph
from ripple_core.pe import (
    REG_CONFIG,
    REG_CONST,
    REG_FAULT,
    REG_ORIGIN,
    REG_QUEUE_DEPTH,
    REG_RING_WORDS,
    REG_SPILL_READS,
    REG_SPILL_WRITES,
    REG_STATUS,
    SHARED_QUEUE_WORDS,
    STATUS_FAULT,
    PeModel,
    pe_config_word,
)
from ripple_core.programs import serial_case, serial_walk, tree_case, tree_walk
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES, ScoreboardError, SinkDriver, SourceDriver, StreamPort
from rsn.channels import Channel
from rsn.readout import register_reads, split_register_reads
from testbench.ripple.test_lower import _check
from testbench.ripple.test_pe_shared import WORDS, _Stream, shared_pes
from testbench.ripple.test_shared_memory import SHARED, SMALL_SHARED, check_on_fabric_model, shared_fabric

RING_BASE = 16          # the ring: words 16.. of the 64-word memory; the LOAD PE reads words 0-15
OPERAND_QUEUE = 2       # RipplePE(2): the token queue in front of slot 0


def run_queue(*, tokens, spill, depth, ring_words, profile, seed, hold=None, max_cycles=30_000):
    """A QUEUE PE (slot 0 in, ``o[0]`` out) beside a LOAD PE on one memory. The sink takes
    nothing until the source has offered everything (``hold="sent"``) or for ``hold`` cycles
    (an int), then follows the profile. Returns the words out, the queue's registers, how many
    words the PE accepted while the sink was held, and the LOAD PE's words and what it wanted."""
    rng = random.Random(seed)
    stall = PROFILES[profile]
    dut = shared_pes(2)
    queue, loader = dut.pes
    preload = [rng.getrandbits(32) for _ in range(WORDS)]
    offsets = [rng.randrange(RING_BASE) for _ in range(3 * len(tokens))]
    assert RING_BASE + ring_words <= WORDS

    def fork():
        return random.Random(rng.getrandbits(32))

    source = SourceDriver(StreamPort("queue_i0", True, 32), tokens, stall.idle, fork())
    sink = SinkDriver(StreamPort("queue_o0", False, 32), stall.backpressure, fork())
    offset_source = SourceDriver(StreamPort("load_i1", True, 32), offsets, stall.idle, fork())
    word_sink = SinkDriver(StreamPort("load_o0", False, 32), stall.backpressure, fork())
    streams = [_Stream("queue_i0", queue.i[0], source=source),
               _Stream("load_i1", loader.i[1], source=offset_source)]
    queue_out = _Stream("queue_o0", queue.o[0], sink=sink)
    load_out = _Stream("load_o0", loader.o[0], sink=word_sink)
    watched = [_Stream(f"pe{k}_mem_{side}", getattr(pe, f"mem_{side}"))
               for k, pe in enumerate(dut.pes) for side in ("req", "resp")]
    result = SimpleNamespace(words=[], loaded=[], accepted_while_held=None)

    async def write(ctx, pe, addr, value):
        ctx.set(pe.cfg.addr, addr)
        ctx.set(pe.cfg.data, value)
        ctx.set(pe.cfg.write, 1)
        await ctx.tick()
        ctx.set(pe.cfg.write, 0)

    async def read(ctx, pe, addr):
        ctx.set(pe.cfg.addr, addr)
        ctx.set(pe.cfg.read, 1)
        await ctx.tick()
        ctx.set(pe.cfg.read, 0)
        return ctx.get(pe.cfg.rdata)

    async def testbench(ctx):
        for addr, value in [(REG_CONFIG, pe_config_word("QUEUE", pred=spill, drop=(1,))),
                            (REG_QUEUE_DEPTH, depth), (REG_ORIGIN, RING_BASE), (REG_RING_WORDS, ring_words)]:
            await write(ctx, queue, addr, value)
        for addr, value in [(REG_CONFIG, pe_config_word("LOAD", slots=("hold", "edge", "hold"), drop=(1,))),
                            (REG_CONST, 0), (REG_CONST + 2, 0)]:
            await write(ctx, loader, addr, value)
        host_req = dut.memory.req[2]
        ctx.set(dut.memory.resp[2].ready, 1)
        for addr, value in enumerate(preload):          # the LOAD PE's words (and junk in the ring)
            ctx.set(host_req.payload.op, MemoryOp.WRITE)
            ctx.set(host_req.payload.addr, addr)
            ctx.set(host_req.payload.data, value)
            ctx.set(host_req.valid, 1)
            while not ctx.get(host_req.ready):
                await ctx.tick()
            await ctx.tick()
        ctx.set(host_req.valid, 0)
        for cycle in range(max_cycles):
            held = (not source.done) if hold == "sent" else (hold is not None and cycle < hold)
            for stream in streams + [load_out]:
                stream.drive(ctx, cycle)
            if held:
                ctx.set(queue.o[0].ready, 0)
            else:
                queue_out.drive(ctx, cycle)
            for stream in streams + watched:
                stream.observe(ctx, cycle)
            if queue_out.observe(ctx, cycle):
                result.words.append(queue_out.monitor.transfers[-1][1])
            if load_out.observe(ctx, cycle):
                result.loaded.append(load_out.monitor.transfers[-1][1])
            await ctx.tick()
            if isinstance(hold, int) and cycle == hold - 1:
                result.accepted_while_held = source.sent
            if source.done and offset_source.done and len(result.words) >= len(tokens) \
                    and len(result.loaded) >= len(offsets):
                break
        else:
            raise ScoreboardError(f"{profile} seed={seed}: after {max_cycles} cycles {len(result.words)} of "
                                  f"{len(tokens)} words left the queue")
        ctx.set(queue.o[0].ready, 1)
        for _ in range(20):             # a word too many shows up here
            if ctx.get(queue.o[0].valid):
                result.words.append(ctx.get(queue.o[0].payload))
            await ctx.tick()
        result.registers = {addr: await read(ctx, queue, addr)
                            for addr in (REG_STATUS, REG_FAULT, REG_SPILL_WRITES, REG_SPILL_READS)}

    dut.run(testbench)
    result.wanted_loads = [preload[offset] for offset in offsets]
    return result


def fifo_order(tokens) -> list[int]:
    """What a first-in first-out queue gives back: a deque, fed and emptied."""
    fifo = deque()
    for token in tokens:
        fifo.append(token)
    return [fifo.popleft() for _ in range(len(fifo))]


def check_words(label, run, tokens):
    if run.words != fifo_order(tokens):
        padded = run.words + [None] * len(tokens)
        first = next(k for k, (a, b) in enumerate(zip(padded, tokens, strict=False)) if a != b)
        raise ScoreboardError(f"{label}: word {first} out of the queue differs: got "
                              f"{run.words[first:first + 4]}, expected {tokens[first:first + 4]} "
                              f"({len(run.words)} words out, {len(tokens)} in)")
    assert run.loaded == run.wanted_loads, f"{label}: the LOAD PE beside the queue read wrong words"


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_burst_far_above_the_depth_spills_and_comes_back_in_order(profile):
    """The sink takes nothing until the whole burst (10 times the in-PE words) has been offered,
    so all but the words the PE holds must go through the ring: the spill counters say how many
    did, and every word leaves in FIFO order under the profile's stalls."""
    depth = 2
    for seed in seeds_for(f"spill-shared-burst:{profile}", count=2):
        print(f"spill burst profile={profile} seed={seed}")
        rng = random.Random(seed)
        tokens = [rng.getrandbits(32) for _ in range(10 * SHARED_QUEUE_WORDS)]
        run = run_queue(tokens=tokens, spill=True, depth=depth, ring_words=len(tokens), profile=profile,
                        seed=seed, hold="sent")
        label = f"burst {profile} seed={seed}"
        check_words(label, run, tokens)
        registers = run.registers
        assert registers[REG_STATUS] & STATUS_FAULT == 0, f"{label}: fault {registers[REG_FAULT]:#x}"
        assert registers[REG_STATUS] & 1, f"{label}: the queue is not empty after the run"
        # With the sink held, the PE keeps its buffer (depth words) and one word in its output
        # register, and the first overflow word may arrive just before or after that firing.
        spilled = registers[REG_SPILL_WRITES]
        assert len(tokens) - depth - 1 <= spilled <= len(tokens) - depth, f"{label}: {spilled} words spilled"
        assert registers[REG_SPILL_READS] == spilled, f"{label}: {spilled} spilled, " \
                                                      f"{registers[REG_SPILL_READS]} read back"


@pytest.mark.parametrize("profile", list(PROFILES))
def test_words_in_and_out_at_random_keep_fifo_order_through_the_ring(profile):
    """No hold: the queue spills and refills whenever the profile's stalls make it; whatever
    went to the memory came back, and a ring smaller than the stream is enough as long as it
    never fills (the burst a ring must absorb is what is queued at once)."""
    for seed in seeds_for(f"spill-shared-random:{profile}", count=2):
        print(f"spill random profile={profile} seed={seed}")
        rng = random.Random(seed)
        tokens = [rng.getrandbits(32) for _ in range(44)]
        depth = rng.choice([1, 2, 3, SHARED_QUEUE_WORDS, 9])
        run = run_queue(tokens=tokens, spill=True, depth=depth, ring_words=len(tokens), profile=profile,
                        seed=seed, hold=rng.choice([None, 20]))
        label = f"random {profile} depth={depth} seed={seed}"
        check_words(label, run, tokens)
        registers = run.registers
        assert registers[REG_STATUS] & STATUS_FAULT == 0, f"{label}: fault {registers[REG_FAULT]:#x}"
        assert registers[REG_SPILL_WRITES] == registers[REG_SPILL_READS] <= len(tokens), label


@pytest.mark.parametrize("profile", ["no_stall", "random_stall_50"])
def test_a_full_ring_sets_the_fault_with_its_end_and_loses_nothing(profile):
    """A ring of 5 words under a 30-word burst with the sink held: the queue sets the sticky
    fault with the address past the ring's end and waits; once the sink takes words, the rest
    enter and all leave in order (the fault stays set)."""
    for seed in seeds_for(f"spill-shared-overflow:{profile}", count=1):
        print(f"spill overflow profile={profile} seed={seed}")
        rng = random.Random(seed)
        tokens = [rng.getrandbits(32) for _ in range(30)]
        ring_words = 5
        run = run_queue(tokens=tokens, spill=True, depth=2, ring_words=ring_words, profile=profile,
                        seed=seed, hold=400)
        label = f"overflow {profile} seed={seed}"
        check_words(label, run, tokens)
        assert run.registers[REG_STATUS] & STATUS_FAULT, f"{label}: no fault"
        assert run.registers[REG_FAULT] == RING_BASE + ring_words
        # Held: the operand queue, the output register, the buffer (depth 2) and the full ring.
        assert run.accepted_while_held == OPERAND_QUEUE + 1 + 2 + ring_words, label


@pytest.mark.parametrize("depth", [3, 9])
def test_a_queue_without_spill_holds_its_depth_using_the_ring_beyond_the_pe(depth):
    """Depth 3 fits in the PE; depth 9 keeps SHARED_QUEUE_WORDS in the PE and the rest in the
    ring. Either holds exactly ``depth`` words while the sink is held (beyond the operand
    queue and the output register), and never faults."""
    (seed,) = seeds_for(f"spill-shared-bounded:{depth}", count=1)
    print(f"bounded queue depth={depth} seed={seed}")
    rng = random.Random(seed)
    tokens = [rng.getrandbits(32) for _ in range(40)]
    run = run_queue(tokens=tokens, spill=False, depth=depth, ring_words=depth, profile="random_stall_50",
                    seed=seed, hold=400)
    check_words(f"bounded depth={depth}", run, tokens)
    assert run.accepted_while_held == OPERAND_QUEUE + 1 + depth
    assert run.registers[REG_STATUS] & STATUS_FAULT == 0
    assert run.registers[REG_SPILL_WRITES] == run.registers[REG_SPILL_READS]
    assert (run.registers[REG_SPILL_WRITES] > 0) == (depth > SHARED_QUEUE_WORDS)


# Whole programs: Ripple's task queues spill through the shared memory of a fabric.

def spill_programs():
    """Ripple's spill-queue programs with their cases (expected results computed in Python by
    the programs module, never by a model). ripple_bfs needs ACQUIRE and RELEASE, which the
    shared memory does not serve from a PE yet, so it is not here."""
    return [("tree_walk 40", tree_walk(40), tree_case(40)),
            ("tree_walk 63 depth 1", tree_walk(63, depth=1), tree_case(63)),
            ("serial_walk 30", serial_walk(30), serial_case(30))]


def test_spill_programs_on_the_shared_memory_golden_model():
    """Each program lowers onto a shared memory (rings above the arrays), and the fabric's
    golden model gives the case's outputs, firings, arrays and a clear status for every queue."""
    (seed,) = seeds_for("spill-shared-model", count=1)
    print(f"spill programs on the shared memory's fabric model, seed={seed}")
    for spec in (SHARED, SMALL_SHARED):
        for label, graph, case in spill_programs():
            lowering = lower_graph(graph, case, spec, name=label.replace(" ", "_"))
            top = max(base + length for base, length in lowering.shared_arrays.values())
            assert lowering.rings and min(base for base, _ in lowering.rings.values()) >= top, label
            check_on_fabric_model(label, lowering, spec, seed)


def test_a_ring_known_too_small_is_refused_before_generation():
    """A declared ring below what the golden model's run holds in it, and rings the memory cannot
    hold above the arrays, are refused naming the queue and the size needed."""
    graph, case = tree_walk(63, depth=1), tree_case(63)
    peak = lower_graph(graph, case, SHARED).model.queue_peaks["walk.q"]
    with pytest.raises(LoweringError, match=r"queue 'walk.q' is given a spill ring of 3 words, but in this "
                                            rf"case it holds {peak - 1} words beyond the 1 its PE keeps"):
        lower_graph(graph, case, SHARED, ring_words={"walk.q": 3})
    small = shared_fabric(5, 6, words=64)
    too_many = (r"the spill rings need \d+ words of the shared memory \(queue 'walk.q': \d+\) above the "
                r"arrays, which end at address 63, but the memory holds 64 words; raise \[memory\] words to "
                r"at least 128")
    with pytest.raises(LoweringError, match=too_many):
        lower_graph(graph, case, small)
    lowering = lower_graph(graph, case, SHARED, ring_words={"walk.q": peak - 1})
    assert lowering.rings["walk.q"] == (63, peak - 1)


def test_a_queue_fault_is_reported_naming_the_queue_and_its_ring():
    graph, case = tree_walk(40), tree_case(40)
    lowering = lower_graph(graph, case, SHARED)
    reads = {name: list(words) for name, words in lowering.program.expected_reads.items()}
    reads["walk.q"][0] |= STATUS_FAULT
    base, words = lowering.rings["walk.q"]
    assert read_problems(lowering, reads) == [
        f"queue walk.q: fault (status bit 4): its spill ring in the shared memory (addresses {base}.."
        f"{base + words - 1}, {words} words) ran out, so it held words back; give it a larger ring "
        f"(lower_graph's ring_words)"]


@pytest.mark.verilator
def test_spill_programs_on_the_rtl_under_every_stall_profile():
    """The programs on the tier tests' 3x4 fabric with a 512-word shared memory (the same build
    as the other shared-memory RTL tests), each under every stall profile, in one native
    simulation; the queues' spill counters are read back too: whatever went to the memory came
    back, and host back-pressure makes the tree walk's queue spill."""
    from rivulet.sim.fabric_run import run_many_on_rtl

    (seed,) = seeds_for("spill-shared-rtl", count=1)
    rng = random.Random(seed)
    runs = []
    for label, graph, case in spill_programs()[::2]:
        lowering = lower_graph(graph, case, SMALL_SHARED, name=label.replace(" ", "_"))
        for profile in PROFILES:
            run_seed = rng.randrange(2**31)
            compiled = compile_lowering(lowering, SMALL_SHARED, seed=run_seed)
            counted = copy.deepcopy(compiled)           # the same reads, and the spill counters
            for queue in lowering.rings:
                counted.program.reads[queue] = counted.program.reads[queue] + \
                    [(REG_SPILL_WRITES, None), (REG_SPILL_READS, None)]
            label_run = f"{label} {profile} seed={run_seed}"
            runs.append((label_run, lowering, compiled, counted, profile, run_seed))
    print(f"spill programs on the RTL, base seed {seed}: {[run[0] for run in runs]}")
    results = run_many_on_rtl([run[2] for run in runs], profiles=[run[4] for run in runs],
                              seeds=[run[5] for run in runs], case="spill-shared-rtl",
                              extra_reads=[register_reads(run[3]) for run in runs])
    spilled = {}
    for (label, lowering, compiled, counted, _, _), result in zip(runs, results, strict=True):
        reads = split_register_reads(counted, result.extra)
        for queue in lowering.rings:
            *reads[queue], writes, refills = reads[queue]
            assert writes == refills, f"{label}: {queue} spilled {writes} words, {refills} came back"
            spilled[label] = writes
        _check(label, lowering, compiled, result.outputs, result.firings, reads)
    print(f"words spilled: {spilled}")
    assert any(words for label, words in spilled.items() if label.startswith("tree_walk")), \
        "no tree walk run spilled: the ring was never used"


def run_queue_model(tokens, *, spill, depth, ring_words, hold_steps, rng):
    """The golden model's QUEUE (PeModel with shared_words) fed ``tokens`` one step at a time,
    its output taken by a sink that refuses for ``hold_steps`` steps and then at random."""
    model = PeModel(shared_words=WORDS, name="walk.q")
    for addr, value in [(REG_CONFIG, pe_config_word("QUEUE", pred=spill, drop=(1,))),
                        (REG_QUEUE_DEPTH, depth), (REG_ORIGIN, RING_BASE), (REG_RING_WORDS, ring_words)]:
        model.write_word(addr, value)
    model.load([{"firings": len(tokens), "last": 1}])
    inputs = [Channel(f"i{k}", 1) for k in range(3)]
    outputs = [Channel(f"o{k}", 1) for k in range(2)]
    words, pending, accepted_while_held = [], deque(tokens), None
    for step in range(100 * len(tokens)):
        if pending and inputs[0].can_push():
            inputs[0].push(pending.popleft())
        model.step(inputs, outputs)
        if step == hold_steps:
            accepted_while_held = len(tokens) - len(pending) - inputs[0].can_pop()
        if step > hold_steps and outputs[0].can_pop() and rng.random() < 0.5:
            words.append(outputs[0].pop())
        if len(words) == len(tokens):
            break
    return SimpleNamespace(words=words, accepted_while_held=accepted_while_held,
                           registers={addr: model.read_word(addr)
                                      for addr in (REG_STATUS, REG_FAULT, REG_SPILL_WRITES, REG_SPILL_READS)})


@pytest.mark.parametrize("spill, depth, ring_words",
                         [(True, 2, 40), (True, 2, 5), (False, 9, 9), (False, 3, 3)])
def test_the_golden_model_queue_keeps_the_same_buffer_and_ring(spill, depth, ring_words):
    """PeModel with shared_words, alone: FIFO order through its ring, the words it holds while
    its output is refused (its buffer and its ring, as the RTL's), the spill counters and the
    ring-full fault with the address past the ring."""
    (seed,) = seeds_for(f"spill-shared-model-queue:{spill}:{depth}:{ring_words}", count=1)
    print(f"golden model queue spill={spill} depth={depth} ring={ring_words} seed={seed}")
    rng = random.Random(seed)
    tokens = [rng.getrandbits(32) for _ in range(30)]
    run = run_queue_model(tokens, spill=spill, depth=depth, ring_words=ring_words, hold_steps=200, rng=rng)
    assert run.words == fifo_order(tokens)
    in_pe = min(depth, SHARED_QUEUE_WORDS)
    registers = run.registers
    if spill and ring_words < len(tokens):
        assert run.accepted_while_held == 1 + in_pe + ring_words     # the output channel, buffer, ring
        assert registers[REG_STATUS] & STATUS_FAULT and registers[REG_FAULT] == RING_BASE + ring_words
    else:
        assert registers[REG_STATUS] & STATUS_FAULT == 0
        assert run.accepted_while_held == (len(tokens) if spill else 1 + depth)
    assert registers[REG_SPILL_WRITES] == registers[REG_SPILL_READS]
    assert registers[REG_SPILL_WRITES] > 0 if spill or depth > SHARED_QUEUE_WORDS else \
        registers[REG_SPILL_WRITES] == 0
