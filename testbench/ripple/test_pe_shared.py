"""LOAD and STORE PEs on one shared, banked memory (``RipplePE(shared_words=...)`` with
:class:`hw.banked_memory.BankedMemory`), in Amaranth's simulator.

The expected values come from a plain Python list of words, written here from the operators'
meaning (a LOAD reads ``memory[base + offset]``, a STORE writes it), never from the RTL. Every
stream the bench drives idles or refuses at random under every stall profile, and a protocol
monitor watches every PE stream and every memory port.
"""

import functools
import random
from types import SimpleNamespace

import pytest
from amaranth.hdl import Elaboratable, Module
from amaranth.lib import wiring

from hw.banked_memory import BankedMemory, MemoryOp
from ripple_core.pe import (
    REG_CONFIG,
    REG_CONST,
    REG_FAULT,
    REG_STATUS,
    STATUS_FAULT,
    RipplePE,
    pe_config_word,
)
from rivulet.sim.amaranth_sim import SharedSimulator
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import (
    PROFILES,
    ProtocolMonitor,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
    StreamPort,
)
from testbench.mutants import LateBankZeroMemory

WORDS, BANKS = 64, 4


class SharedPes(Elaboratable):
    """``n`` PEs, each configured by the bench, on one memory whose last port the bench drives
    (preload and read-back). ``links`` wires PE outputs to PE inputs:
    ``(producer, port, consumer, slot)``. Make one with :func:`shared_pes`, which keeps one per
    shape, and run benches on it with :meth:`run`."""

    def __init__(self, n: int, *, links=(), memory_class=BankedMemory, lock_entries: int = 4):
        self.pes = [RipplePE(2, shared_words=WORDS) for _ in range(n)]
        self.memory = memory_class(n + 1, BANKS, WORDS, meta_width=1, lock_entries=lock_entries)
        self.links = list(links)
        self.simulator = SharedSimulator(self)

    def run(self, testbench):
        """``testbench`` from reset, in the one simulator this design keeps."""
        self.simulator.run(testbench)

    def elaborate(self, platform):
        m = Module()
        m.submodules.memory = memory = self.memory
        for k, pe in enumerate(self.pes):
            m.submodules[f"pe{k}"] = pe
            wiring.connect(m, pe.mem_req, memory.req[k])
            wiring.connect(m, memory.resp[k], pe.mem_resp)
        for producer, port, consumer, slot in self.links:
            wiring.connect(m, self.pes[producer].o[port], self.pes[consumer].i[slot])
        return m


@functools.cache
def shared_pes(n: int, *, links=(), memory_class=BankedMemory, lock_entries: int = 4) -> SharedPes:
    """The one :class:`SharedPes` of this shape in this process: the tests of a shape (their
    seeds and stall profiles) share its simulator, whose compile takes seconds, each run from
    reset. ``links`` is a tuple, so that the shape is a key."""
    return SharedPes(n, links=links, memory_class=memory_class, lock_entries=lock_entries)


class _Stream:
    """One stream the bench drives or only watches, with its monitor."""

    def __init__(self, name, stream, *, source=None, sink=None):
        self.stream, self.source, self.sink = stream, source, sink
        self.monitor = ProtocolMonitor(StreamPort(name, source is not None, 32))

    def drive(self, ctx, cycle):
        if self.source:
            values = self.source.drive(cycle)
            ctx.set(self.stream.valid, values[self.source.port.valid])
            ctx.set(self.stream.payload, values[self.source.port.payload])
        if self.sink:
            ctx.set(self.stream.ready, self.sink.drive(cycle)[self.sink.port.ready])

    def observe(self, ctx, cycle):
        payload = ctx.get(self.stream.payload)
        payload = payload.as_bits() if hasattr(payload, "as_bits") else int(payload)
        moved = self.monitor.observe(cycle, ctx.get(self.stream.valid), ctx.get(self.stream.ready), payload)
        for driver in (self.source, self.sink):
            if driver:
                driver.observe(moved)
        return moved


def run_shared(dut, configs, inputs, expected_counts, *, preload, profile, seed, max_cycles=20_000):
    """Configure each PE (``configs[k]``: (op, slots, constants)), preload the memory, feed
    ``inputs[(pe, slot)]`` and drain every PE output not wired to another PE until
    ``expected_counts[(pe, port)]`` tokens have left; then read the whole memory back.

    Returns ``outputs`` {(pe, port): [tokens]}, ``memory`` (its words), ``faults`` {pe: (status,
    fault register)} and the memory's per-bank ``accesses`` and ``conflicts``."""
    rng = random.Random(seed)
    stall = PROFILES[profile]
    wired_in = {(consumer, slot) for _, _, consumer, slot in dut.links}
    wired_out = {(producer, port) for producer, port, _, _ in dut.links}
    streams, outputs = [], {}
    for (pe, slot), tokens in inputs.items():
        assert (pe, slot) not in wired_in
        name = f"pe{pe}_i{slot}"
        source = SourceDriver(StreamPort(name, True, 32), tokens, stall.idle,
                              random.Random(rng.getrandbits(32)))
        streams.append(((pe, slot, "in"), _Stream(name, dut.pes[pe].i[slot], source=source)))
    for pe in range(len(dut.pes)):
        for port in range(2):
            if (pe, port) in wired_out or (pe, port) not in expected_counts:
                continue
            name = f"pe{pe}_o{port}"
            sink = SinkDriver(StreamPort(name, False, 32), stall.backpressure,
                              random.Random(rng.getrandbits(32)))
            streams.append(((pe, port, "out"), _Stream(name, dut.pes[pe].o[port], sink=sink)))
            outputs[(pe, port)] = []
    watched = [_Stream(f"pe{k}_mem_req", pe.mem_req) for k, pe in enumerate(dut.pes)]
    watched += [_Stream(f"pe{k}_mem_resp", pe.mem_resp) for k, pe in enumerate(dut.pes)]
    watched += [_Stream(f"pe{a}_o{p}_to_pe{b}_i{s}", dut.pes[a].o[p]) for a, p, b, s in dut.links]
    host_req, host_resp = dut.memory.req[len(dut.pes)], dut.memory.resp[len(dut.pes)]
    result = {}

    async def host_access(ctx, op, addr, data=0):
        ctx.set(host_req.payload.op, op)
        ctx.set(host_req.payload.addr, addr)
        ctx.set(host_req.payload.data, data)
        ctx.set(host_req.valid, 1)
        ctx.set(host_resp.ready, 1)
        while not ctx.get(host_req.ready):
            await ctx.tick()
        await ctx.tick()
        ctx.set(host_req.valid, 0)
        while not ctx.get(host_resp.valid):
            await ctx.tick()
        word = ctx.get(host_resp.payload.data)
        await ctx.tick()
        ctx.set(host_resp.ready, 0)
        return word

    async def testbench(ctx):
        for k, (op, slots, constants) in enumerate(configs):
            pe = dut.pes[k]
            for addr, value in [(REG_CONFIG, pe_config_word(op, slots=slots))] + \
                    [(REG_CONST + slot, value) for slot, value in constants.items()]:
                ctx.set(pe.cfg.addr, addr)
                ctx.set(pe.cfg.data, value)
                ctx.set(pe.cfg.write, 1)
                await ctx.tick()
            ctx.set(pe.cfg.write, 0)
        for addr, value in enumerate(preload):
            await host_access(ctx, MemoryOp.WRITE, addr, value)
        for cycle in range(max_cycles):
            for _, stream in streams:
                stream.drive(ctx, cycle)
            for (pe, port, direction), stream in streams:
                if stream.observe(ctx, cycle) and direction == "out":
                    outputs[(pe, port)].append(stream.monitor.transfers[-1][1])
            for stream in watched:
                stream.observe(ctx, cycle)
            await ctx.tick()
            sources_done = all(s.source.done for _, s in streams if s.source)
            if sources_done and all(len(outputs[key]) >= count for key, count in expected_counts.items()
                                    if key in outputs):
                break
        else:
            counts = {key: len(tokens) for key, tokens in outputs.items()}
            raise ScoreboardError(f"no completion after {max_cycles} cycles: outputs {counts} "
                                  f"of {expected_counts}")
        for _, stream in streams:
            if stream.sink:
                ctx.set(stream.stream.ready, 1)
        for _ in range(20):         # anything more than expected shows up here
            for (pe, port, direction), stream in streams:
                if direction == "out" and ctx.get(stream.stream.valid):
                    outputs[(pe, port)].append(ctx.get(stream.stream.payload))
            await ctx.tick()
        for _, stream in streams:
            if stream.source:
                ctx.set(stream.stream.valid, 0)
        result["memory"] = [await host_access(ctx, MemoryOp.READ, addr) for addr in range(WORDS)]
        result["faults"] = {k: await read_fault_registers(ctx, pe) for k, pe in enumerate(dut.pes)}
        result["accesses"] = [ctx.get(counter) for counter in dut.memory.accesses]
        result["conflicts"] = [ctx.get(counter) for counter in dut.memory.conflicts]

    dut.run(testbench)
    return SimpleNamespace(outputs=outputs, **result)


def random_accesses(rng, n_loads, n_stores, tokens):
    """Loads of a read-only region (words 0-15) and stores, each PE to a region of its own
    (16 words from 16), with computed bases (random base tokens, offsets that bring the sum
    into the region) and now and then an address out of range."""
    configs, inputs, expected, faults = [], {}, {}, {}
    preload = [rng.getrandbits(32) for _ in range(WORDS)]
    memory = list(preload)
    for k in range(n_loads + n_stores):
        is_load = k < n_loads
        bases, offsets, values, want = [], [], [], []
        region = 0 if is_load else 16 * (1 + (k - n_loads) % 3)
        for _ in range(tokens):
            address = region + rng.randrange(16)
            if rng.random() < 0.05:
                address = WORDS + rng.randrange(1000)           # out of range
            base = rng.randrange(-(2**20), 2**20)
            bases.append(base & 0xFFFF_FFFF)
            offsets.append((address - base) & 0xFFFF_FFFF)
            value = rng.getrandbits(32)
            values.append(value)
            if address >= WORDS:
                faults.setdefault(k, address)
                want.append(0)
            elif is_load:
                want.append(memory[address])
            else:
                memory[address] = value
        if is_load:
            sync = rng.choice(["edge", "hold"])
            configs.append(("LOAD", ("edge", "edge", sync), {2: 0} if sync == "hold" else {}))
            inputs.update({(k, 0): bases, (k, 1): offsets})
            if sync == "edge":
                inputs[(k, 2)] = [rng.getrandbits(32) for _ in range(tokens)]
            expected[(k, 0)] = want
            expected[(k, 1)] = [1] * tokens
        else:
            configs.append(("STORE", ("edge", "edge", "edge"), {}))
            inputs.update({(k, 0): bases, (k, 1): offsets, (k, 2): values})
            expected[(k, 0)] = [1] * tokens
    return configs, inputs, expected, preload, memory, faults


def check_random(dut, rng, profile, seed, n_loads=3, n_stores=2, tokens=24):
    configs, inputs, expected, preload, memory, faults = random_accesses(rng, n_loads, n_stores, tokens)
    run = run_shared(dut, configs, inputs, {key: len(v) for key, v in expected.items()},
                     preload=preload, profile=profile, seed=seed)
    outputs, words, status = run.outputs, run.memory, run.faults
    for key, want in expected.items():
        if outputs[key] != want:
            raise ScoreboardError(f"PE {key[0]} port {key[1]}: {outputs[key]} != {want}")
    if words != memory:
        raise ScoreboardError(f"memory after the run differs at words "
                              f"{[a for a in range(WORDS) if words[a] != memory[a]]}")
    for k in range(len(configs)):
        fault_bit = bool(status[k][0] & STATUS_FAULT)
        if fault_bit != (k in faults) or (k in faults and status[k][1] != faults[k]):
            raise ScoreboardError(f"PE {k}: status {status[k][0]:#x}, fault register {status[k][1]:#x}; "
                                  f"the first out-of-range address was {faults.get(k)}")


@pytest.mark.parametrize("profile", list(PROFILES))
def test_random_accesses_with_computed_bases_match_a_plain_memory(profile):
    """3 LOAD and 2 STORE PEs at once on 4 banks: any base and offset, bank conflicts, every
    stall profile; LOAD words and done tokens, the memory afterwards and the fault registers."""
    for seed in seeds_for(f"pe-shared:{profile}", count=2):
        print(f"shared memory PEs profile={profile} seed={seed}")
        check_random(shared_pes(5), random.Random(seed), profile, seed)


def test_a_memory_that_reorders_answers_is_caught():
    """Bank 0 one cycle late: a PE's answers come back out of order, and the words show it."""
    caught = 0
    dut = shared_pes(5, memory_class=LateBankZeroMemory)
    for seed in seeds_for("pe-shared:mutant", count=3):
        print(f"reordering memory seed={seed}")
        try:
            check_random(dut, random.Random(seed), "no_stall", seed)
        except ScoreboardError as error:
            print(f"caught: {error}")
            caught += 1
    assert caught == 3


@pytest.mark.parametrize("profile", list(PROFILES))
def test_two_loads_and_two_stores_on_one_array_are_ordered_by_sync_tokens_only(profile):
    """STORE a writes A[j] = x; its done token is LOAD b's sync, so b reads x, not the old
    word; b's word is STORE c's value for A[j + 16]; c's done token is LOAD d's sync, so d reads
    x again. Only the sync and data tokens order them; the memory orders nothing."""
    for seed in seeds_for(f"pe-shared-sync:{profile}", count=2):
        print(f"sync ordering profile={profile} seed={seed}")
        rng = random.Random(seed)
        # Distinct words per iteration: a later iteration's STORE may overtake an earlier
        # iteration's LOAD (nothing orders them), so reusing a word would make the answer racy.
        n = 16
        offsets = rng.sample(range(16), n)
        values = [rng.getrandbits(32) for _ in range(n)]
        preload = [rng.getrandbits(32) for _ in range(WORDS)]
        dut = shared_pes(4, links=((0, 0, 1, 2), (1, 0, 2, 2), (2, 0, 3, 2)))
        configs = [("STORE", ("hold", "edge", "edge"), {0: 0}),
                   ("LOAD", ("hold", "edge", "edge"), {0: 0}),
                   ("STORE", ("hold", "edge", "edge"), {0: 16}),
                   ("LOAD", ("hold", "edge", "edge"), {0: 16})]
        inputs = {(0, 1): offsets, (0, 2): values, (1, 1): offsets, (2, 1): offsets, (3, 1): offsets}
        memory = list(preload)
        loaded_b, loaded_d = [], []
        for offset, value in zip(offsets, values, strict=True):
            memory[offset] = value
            loaded_b.append(memory[offset])
            memory[16 + offset] = loaded_b[-1]
            loaded_d.append(memory[16 + offset])
        expected = {(1, 1): [1] * n, (3, 0): loaded_d, (3, 1): [1] * n}
        run = run_shared(dut, configs, inputs, {key: len(v) for key, v in expected.items()},
                         preload=preload, profile=profile, seed=seed)
        for key, want in expected.items():
            assert run.outputs[key] == want, f"PE {key[0]} port {key[1]}: {run.outputs[key]} != {want}"
        assert run.memory == memory


def test_bank_conflicts_from_many_pes_at_once_are_counted_and_nothing_is_lost():
    """Five PEs all on bank 0 (addresses that are multiples of the bank count), no stalls."""
    (seed,) = seeds_for("pe-shared-conflicts", count=1)
    print(f"bank conflicts seed={seed}")
    rng = random.Random(seed)
    n, tokens = 5, 16
    dut = shared_pes(n)
    configs = [("LOAD", ("hold", "edge", "hold"), {0: 0, 2: 0})] * n
    inputs = {(k, 1): [BANKS * rng.randrange(WORDS // BANKS) for _ in range(tokens)] for k in range(n)}
    preload = [rng.getrandbits(32) for _ in range(WORDS)]
    expected = {(k, 0): [preload[a] for a in inputs[(k, 1)]] for k in range(n)}
    counts = {key: len(v) for key, v in expected.items()} | {(k, 1): tokens for k in range(n)}
    run = run_shared(dut, configs, inputs, counts, preload=preload, profile="no_stall", seed=seed)
    for key, want in expected.items():
        assert run.outputs[key] == want, f"PE {key[0]}: {run.outputs[key]} != {want}"
    # The preload, the n * tokens loads and the read-back of bank 0's rows all go to bank 0.
    assert run.accesses[0] == WORDS // BANKS + n * tokens + WORDS // BANKS
    assert run.conflicts[0] > 0, "five PEs on one bank must wait for each other"
    assert run.conflicts[1:] == [0] * (BANKS - 1)


async def read_fault_registers(ctx, pe) -> tuple[int, int]:
    """A PE's status and fault registers, read through its configuration bus."""
    words = []
    for addr in (REG_STATUS, REG_FAULT):
        ctx.set(pe.cfg.addr, addr)
        ctx.set(pe.cfg.read, 1)
        await ctx.tick()
        ctx.set(pe.cfg.read, 0)
        words.append(ctx.get(pe.cfg.rdata))
    return tuple(words)
