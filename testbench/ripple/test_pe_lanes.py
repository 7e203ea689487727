# amaranth: UnusedElaboratable=no
"""The two-lane ``pe`` tile (``PeFu(lanes=2)``) against its golden model, :class:`PairModel`.

Each case is a sequence of config bus operations (writes, and reads checked against the model's
``read_word`` at the same point), the tile inputs' tokens and the micro-ops. The RTL runs under a
stall profile (random idle on the inputs and the micro-op port, random back-pressure on the
outputs) with a protocol monitor on every stream; its output tokens, firing counter, ``finished``
and the registers read after the run must be the model's, fed the same tokens. The counters are
also checked cycle by cycle: ``firings`` grows by the firings of both lanes (0..2), ``stalls`` by
one in each busy cycle without a firing or an output transfer.
"""

import functools
import itertools
import random
from collections import deque
from dataclasses import dataclass

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from hw.banked_memory import BankedMemory
from ripple_core.pe import (
    LANE1_BASE,
    MEM_WINDOW,
    PORTS_IDENTITY,
    REG_CONFIG,
    REG_CONST,
    REG_ORIGIN,
    REG_PORTS,
    REG_QUEUE_DEPTH,
    REG_RING_WORDS,
    REG_STATUS,
    STATUS_FAULT,
    PeFu,
    PeUop,
    pe_config_word,
    port_map_word,
)
from ripple_core.pe.lanes import PairModel, lane_register
from rivulet.sim.amaranth_sim import AmaranthDesign, run_each_in_amaranth
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import (
    PROFILES,
    NoProgressError,
    ProtocolMonitor,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
    port_paths,
    stream_ports,
)
from rivulet.sim.wrappers import member_value
from rsn.channels import Channel
from rsn.isa import decode, encode
from testbench.ripple.pe_bench import OPERATORS, drained, memory_phases, random_phase, run_pe_amaranth, value
from testbench.rsn.compute_bench import FlatUop

MASK = 0xFFFF_FFFF
QUIET = 12
BINARY = ("ADD", "SUB", "MUL", "AND", "OR", "XOR", "SHL", "ASHR", "LSHR", "EQ", "SLT", "UGE")


@dataclass
class Case:
    """Config bus operations ``("write", addr, value)`` / ``("read", addr)``, run before the
    micro-ops; the tile inputs' tokens; the micro-ops (dicts of PeUop fields); reads after the run."""
    name: str
    bus: list
    streams: list
    uops: list
    mem_depth: int = 0
    after: tuple = ()
    shared_words: int = 0       # lane 0 on a shared memory of this many words (a BankedMemory)


def uop(firings=0, firings1=0, last=1, open_=0) -> dict:
    return {"firings": firings, "firings1": firings1, "last": last, "open": open_}


def configure_lane(lane: int, op: str, consts=(), **word) -> list:
    """Bus writes configuring lane ``lane`` as ``op``; ``consts``: {slot: constant}."""
    ops = [("write", lane_register(lane, REG_CONFIG), pe_config_word(op, **word))]
    ops += [("write", lane_register(lane, REG_CONST + k), c & MASK) for k, c in dict(consts).items()]
    return ops


STATUS_READS = (REG_STATUS, LANE1_BASE + REG_STATUS, REG_PORTS)


def golden(case: Case) -> dict:
    """Run the model: the reads' values, each output's tokens, the firings, finished, and the
    tokens each input gives up (the RTL is fed exactly those)."""
    model = PairModel(mem_depth=case.mem_depth, shared_words=case.shared_words)
    reads = []
    for op in case.bus:
        if op[0] == "write":
            model.write_word(op[1], op[2])
        else:
            reads.append(model.read_word(op[1]))
    model.load([decode(PeUop, encode(PeUop, u)) for u in case.uops])
    inputs = [Channel(f"i{k}", 10**6) for k in range(3)]
    for k, tokens in enumerate(case.streams):
        for token in tokens:
            inputs[k].push(token & MASK)
    outputs = [Channel(f"o{q}", 1) for q in range(2)]
    emitted = [[], []]
    for _ in range(100_000):
        moved = model.step(inputs, outputs)
        for q, channel in enumerate(outputs):
            while channel.can_pop():
                emitted[q].append(channel.pop())
                moved = True
        if not moved:
            break
    taken = [len(tokens) - len(inputs[k].tokens) for k, tokens in enumerate(case.streams)]
    return {"reads": reads, "outputs": emitted, "firings": model.firings, "finished": model.finished,
            "busy": model.busy, "taken": taken, "after": [model.read_word(a) for a in case.after],
            "lane_firings": [lane.firings for lane in model.lanes]}


def expect(condition, message):
    if not condition:
        raise ScoreboardError(message)


class PairBench:
    """Runs one :class:`Case` on a FlatUop(PeFu(lanes=2)) (the StreamBench interface of
    run_in_amaranth)."""

    def __init__(self, ports, case: Case, profile: str, rng: random.Random):
        self.case, self.rng = case, rng
        self.gold = golden(case)
        stall = PROFILES[profile]
        self.ports = {port.prefix: port for port in ports}
        self.monitors = [ProtocolMonitor(port) for port in ports]
        streams = [[t & MASK for t in tokens[:self.gold["taken"][k]]]
                   for k, tokens in enumerate(case.streams)]
        self.sources = [SourceDriver(self.ports[f"i__{k}"], streams[k], stall.idle,
                                     random.Random(rng.getrandbits(64))) for k in range(3)]
        words = [PeUop.const(u).as_bits() for u in case.uops]
        self.sources.append(SourceDriver(self.ports["uop"], words, stall.idle,
                                         random.Random(rng.getrandbits(64))))
        self.sinks = [SinkDriver(self.ports[f"o__{q}"], stall.backpressure,
                                 random.Random(rng.getrandbits(64))) for q in range(2)]
        self.sampled = [name for port in ports for name in (port.valid, port.ready, port.payload)] + \
            ["cfg__rdata", "firings", "stalls", "busy", "finished"]
        self.ops = deque(case.bus)
        self.expected_reads = deque(self.gold["reads"])
        self.checking = None
        self.step, self.start, self.last_move = "config", None, 0
        self.received = [[], []]
        self.previous = None
        self.cycles = 0
        self.checker = self
        self.done = False
        self.after_values = deque(self.gold["after"])

    # -- the StreamBench interface
    @property
    def driven(self):
        names = [n for k in range(3) for n in (f"i__{k}__valid", f"i__{k}__payload")]
        return names + ["o__0__ready", "o__1__ready", "cfg__addr", "cfg__data", "cfg__write", "cfg__read",
                        "uop__valid", "uop__payload", "clear"]

    def idle_values(self):
        return {name: 0 for name in self.driven}

    @property
    def finished(self):
        return self.done

    def finish(self):
        expect(self.done, f"{self.case.name}: the bench stopped in step {self.step}")

    def no_progress(self, max_cycles):
        sent = [f"{s.sent}/{len(s.tokens)}" for s in self.sources]
        return NoProgressError(f"{self.case.name}: no completion after {max_cycles} cycles in step "
                               f"{self.step}: "
                               f"sent {sent}, outputs {[len(r) for r in self.received]} of "
                               f"{[len(g) for g in self.gold['outputs']]}")

    @property
    def max_cycles(self):
        tokens = sum(len(s) for s in self.case.streams) + sum(len(o) for o in self.gold["outputs"])
        return 60 * tokens + 40 * len(self.case.bus) + 1000

    def drive(self, cycle):
        values = {"cfg__write": 0, "cfg__read": 0, "cfg__addr": self.rng.getrandbits(16),
                  "cfg__data": self.rng.getrandbits(32), "clear": 0}
        running = self.step == "run"
        for source in self.sources:
            if running:
                values.update(source.drive(cycle - self.start))
            else:
                values.update({source.port.valid: 0,
                               source.port.payload: self.rng.getrandbits(source.port.width)})
        for sink in self.sinks:
            values.update(sink.drive(cycle))
        if self.step in ("config", "after") and self.ops:
            op = self.ops[0]
            values.update({f"cfg__{op[0]}": 1, "cfg__addr": op[1]})
            if op[0] == "write":
                values["cfg__data"] = op[2]
        return values

    def _bus(self, sample, expected) -> bool:
        if self.checking is not None:
            want = expected.popleft()
            expect(sample["cfg__rdata"] == want, f"{self.case.name}: register {self.checking:#x} reads "
                                                 f"{sample['cfg__rdata']:#x}, the model's {want:#x}")
            self.checking = None
        if self.ops:
            op = self.ops.popleft()
            self.checking = op[1] if op[0] == "read" else None
        return not self.ops and self.checking is None

    def observe(self, cycle, sample):
        self.cycles = cycle + 1
        transfers = {}
        for monitor in self.monitors:
            port = monitor.port
            if monitor.observe(cycle, sample[port.valid], sample[port.ready], sample[port.payload]):
                transfers[port.prefix] = sample[port.payload]
        for source in self.sources:
            source.observe(source.port.prefix in transfers)
        for q, sink in enumerate(self.sinks):
            sink.observe(sink.port.prefix in transfers)
            if sink.port.prefix in transfers:
                gold, got = self.gold["outputs"][q], self.received[q]
                expect(len(got) < len(gold), f"{self.case.name}: cycle {cycle}: extra token "
                                             f"{transfers[sink.port.prefix]:#x} on o[{q}]")
                expect(transfers[sink.port.prefix] == gold[len(got)],
                       f"{self.case.name}: cycle {cycle}: o[{q}] token #{len(got)} is "
                       f"{transfers[sink.port.prefix]:#x}, the model's {gold[len(got)]:#x}")
                got.append(transfers[sink.port.prefix])
        if self.previous is not None:
            last, last_transfers = self.previous
            fired = sample["firings"] - last["firings"]
            expect(fired in (0, 1, 2), f"{self.case.name}: cycle {cycle}: firings grew by {fired}")
            sent = any(f"o__{q}" in last_transfers for q in range(2))
            stalled = int(bool(last["busy"]) and not fired and not sent)
            expect(sample["stalls"] == last["stalls"] + stalled,
                   f"{self.case.name}: cycle {cycle}: stalls {sample['stalls']}, expected "
                   f"{last['stalls'] + stalled}")
            if fired or transfers:
                self.last_move = cycle
        self.previous = (dict(sample), dict(transfers))
        if self.step == "config":
            if self._bus(sample, self.expected_reads):
                self.step, self.start, self.last_move = "run", cycle + 1, cycle
        elif self.step == "run":
            complete = all(s.done for s in self.sources) and not sample["busy"] and \
                all(len(r) == len(g) for r, g in zip(self.received, self.gold["outputs"], strict=True))
            if complete and cycle - self.last_move >= QUIET:
                expect(sample["firings"] == self.gold["firings"],
                       f"{self.case.name}: {sample['firings']} firings, the model's {self.gold['firings']}")
                expect(sample["finished"] == int(self.gold["finished"]),
                       f"{self.case.name}: finished {sample['finished']}, the model's "
                       f"{self.gold['finished']}")
                self.step = "after"
                self.ops = deque(("read", a) for a in self.case.after)
        elif self.step == "after":
            if self._bus(sample, self.after_values):
                self.done = True


class SharedPair(wiring.Component):
    """A two-lane tile on a shared memory of ``words`` words: the FU's ports but the memory's."""

    def __init__(self, words: int):
        self.fu = FlatUop(PeFu(32, shared_words=words, lanes=2))
        self.memory = BankedMemory(1, 4, words, meta_width=1)
        members = {name: member for name, member in self.fu.signature.members.items()
                   if not name.startswith("mem_")}
        super().__init__(wiring.Signature(members))

    def elaborate(self, platform):
        m = Module()
        m.submodules.fu, m.submodules.memory = self.fu, self.memory
        wiring.connect(m, self.fu.mem_req, self.memory.req[0])
        wiring.connect(m, self.memory.resp[0], self.fu.mem_resp)
        for path, member in port_paths(self.signature):
            outer, inner = member_value(self, path), member_value(self.fu, path)
            m.d.comb += inner.eq(outer) if member.flow == wiring.In else outer.eq(inner)
        return m


def run_cases(runs) -> list[PairBench]:
    """Each ``(case, profile, seed)`` of ``runs`` from reset; the runs of one design (the same
    memory), in this test and the others, share a simulator, so the tile is compiled once."""
    benches = []
    for (shared_words, mem_depth), group in itertools.groupby(
            runs, key=lambda run: (run[0].shared_words, run[0].mem_depth)):
        design = _lane_design(shared_words, mem_depth)
        ports, _ = stream_ports(design.component)
        batch = [PairBench(ports, case, profile, random.Random(seed)) for case, profile, seed in group]
        run_each_in_amaranth(design, [(bench, bench.max_cycles) for bench in batch])
        benches += batch
    return benches


@functools.cache
def _lane_design(shared_words: int, mem_depth: int) -> AmaranthDesign:
    if shared_words:
        return AmaranthDesign(SharedPair(shared_words))
    return AmaranthDesign(FlatUop(PeFu(32, mem_depth=mem_depth, lanes=2)))


# ---------------------------------------------------------------------------- cases

def feed_forward(rng: random.Random) -> Case:
    """(a) lane 0 op(in0, in1) -> internal -> lane 1 op(.., hold const) -> tile output 0 (tile
    output 1 shows lane 0's port 1, on which a binary operator never emits)."""
    n = rng.randint(4, 20)
    ops = rng.choice(BINARY), rng.choice(BINARY)
    streams = [[value(rng) for _ in range(n)], [value(rng) for _ in range(n)], []]
    ports = port_map_word({(0, 0): ("in", 0), (0, 1): ("in", 1), (1, 0): ("lane", 0)}, {0: (1, 0)})
    bus = [("write", REG_PORTS, ports)] + configure_lane(0, ops[0]) + \
        configure_lane(1, ops[1], {1: value(rng)}, slots=("edge", "hold"))
    split = rng.randint(1, n)       # two micro-ops, each granting both lanes the same count
    uops = [uop(split, split, last=0)] + ([uop(n - split, n - split)] if split < n else [])
    if split == n:
        uops[0]["last"] = 1
    return Case(f"feed-forward {ops}", bus, streams, uops, after=STATUS_READS)


def loop(rng: random.Random, open_: bool = False) -> Case:
    """(b) a loop inside the tile: lane 0 CARRY (decider in0, initial in1, slot 2 lane 1's port
    0) into lane 1 STEER (decider in2, value lane 0's port 0) back into the CARRY: a value goes
    round while both deciders pass. Nothing leaves the tile; the firings tell."""
    deciders, inits = [], []
    for _ in range(rng.randint(1, 4)):
        laps = rng.choice([0, 1, 2, 3, 6])
        deciders += [1] * laps + [0]
        inits.append(value(rng))
    ports = port_map_word({(0, 0): ("in", 0), (0, 1): ("in", 1), (0, 2): ("lane", 0),
                           (1, 0): ("in", 2), (1, 1): ("lane", 0)}, {0: (1, 0), 1: (0, 0)})
    bus = [("write", REG_PORTS, ports)] + configure_lane(0, "CARRY", pred=True) + \
        configure_lane(1, "STEER", pred=True)
    case = Case("loop", bus, [deciders, inits, deciders], [uop()], after=STATUS_READS)
    if open_:
        case.uops = [uop(open_=1)]
    else:
        lanes = golden(Case("", bus, case.streams, [uop(open_=1)]))["lane_firings"]
        case.uops = [uop(*lanes)]
    case.name += " (open)" if open_ else ""
    return case


def identity_only_lane0(rng: random.Random) -> Case:
    """(c) the identity map, lane 1 left alone: a one-lane PE."""
    op = rng.choice(BINARY)
    n = rng.randint(3, 12)
    streams = [[value(rng) for _ in range(n)] for _ in range(2)] + [[]]
    return Case(f"identity {op}", configure_lane(0, op), streams, [uop(n)], after=STATUS_READS)


def crossed_stream(rng: random.Random) -> Case:
    """(d) lane 1 STREAM (start in0, bound in1, step hold) with its flag on tile output 0 and its
    index on tile output 1; lane 0 ID(in2) with its port 0 dropped (shown nowhere)."""
    starts, bounds = [], []
    for _ in range(rng.randint(1, 3)):
        start = rng.randint(-10, 10)
        starts.append(start)
        bounds.append(start + rng.randint(-2, 9))
    n = rng.randint(1, 8)
    ports = port_map_word({(1, 0): ("in", 0), (1, 1): ("in", 1), (0, 0): ("in", 2)}, {0: (1, 1), 1: (1, 0)})
    bus = [("write", REG_PORTS, ports)] + configure_lane(1, "STREAM", {2: 1}, slots=("edge", "edge", "hold"),
                                                         cmp="SLT", pred=rng.random() < 0.5) + \
        configure_lane(0, "ID", drop=(0,))
    streams = [starts, bounds, [value(rng) for _ in range(n)]]
    lanes = golden(Case("", bus, streams, [uop(open_=1)]))["lane_firings"]
    return Case("crossed STREAM", bus, streams, [uop(*lanes)], after=STATUS_READS)


def bank_load(rng: random.Random) -> Case:
    """(e) lane 0 LOAD (base hold origin, offset in0, no sync) from a private 16-word bank
    preloaded through the window, its word into lane 1 op(word, in1) -> tile output 1; LOAD's
    done tokens dropped."""
    origin = rng.choice([0, rng.randint(-1000, 1000)])
    words = [value(rng) & MASK for _ in range(16)]
    offsets = [rng.randrange(16) for _ in range(rng.randint(3, 14))]
    op = rng.choice(BINARY)
    ports = port_map_word({(0, 1): ("in", 0), (1, 0): ("lane", 0), (1, 1): ("in", 1)}, {0: (0, 1), 1: (1, 0)})
    bus = [("write", REG_PORTS, ports), ("write", REG_ORIGIN, origin & MASK)] + \
        [("write", MEM_WINDOW + w, words[w]) for w in range(16)] + \
        configure_lane(0, "LOAD", {0: origin, 2: 0}, slots=("hold", "edge", "hold"), drop=(1,)) + \
        configure_lane(1, op)
    streams = [offsets, [value(rng) for _ in offsets], []]
    after = STATUS_READS + tuple(MEM_WINDOW + w for w in range(16))
    return Case(f"bank LOAD -> {op}", bus, streams, [uop(len(offsets), len(offsets))], mem_depth=16,
                after=after)


def bank_read_modify_write(rng: random.Random) -> Case:
    """(e) a loop through the bank: lane 0 LDST loads words 0-7 (offsets in0) into lane 1
    op(word, hold), whose results come back as LDST's stored values at words 8-15 (offsets
    in1); the store done tokens on tile output 0. The bank is read back through the window."""
    n = rng.randint(2, 12)
    loads = [rng.randrange(8) for _ in range(n)]
    stores = [8 + rng.randrange(8) for _ in range(n)]
    op = rng.choice(("ADD", "XOR", "MUL", "SUB"))
    ports = port_map_word({(0, 0): ("in", 0), (0, 1): ("in", 1), (0, 2): ("lane", 0), (1, 0): ("lane", 0)},
                          {0: (0, 1), 1: (1, 1)})
    bus = [("write", REG_PORTS, ports)] + [("write", MEM_WINDOW + w, value(rng) & MASK) for w in range(16)]
    bus += configure_lane(0, "LDST") + configure_lane(1, op, {1: value(rng)}, slots=("edge", "hold"))
    after = STATUS_READS + tuple(MEM_WINDOW + w for w in range(16))
    return Case(f"bank LDST loop {op}", bus, [loads, stores, []], [uop(2 * n, n)], mem_depth=16, after=after)


def registers(rng: random.Random) -> Case:
    """(f) the port map register (reset value, write, read) and lane 1's registers through the
    config bus; lane 0's registers beside them; an address past lane 1's is lane 0's (reads 0)."""
    ports = port_map_word({(1, 2): ("in", 0), (0, 1): ("lane", 1)}, {0: (1, 1), 1: (1, 1)})
    consts = [value(rng) & MASK for _ in range(3)]
    bus = [("read", REG_PORTS), ("read", LANE1_BASE + REG_STATUS), ("read", LANE1_BASE)]
    bus += [("write", REG_PORTS, ports), ("read", REG_PORTS)]
    bus += configure_lane(1, "SELECT", dict(enumerate(consts)), slots=("const", "hold", "edge"))
    bus += configure_lane(0, "SUB", {0: 7}, slots=("const", "edge"))
    bus += [("read", LANE1_BASE + r) for r in range(5)] + [("read", r) for r in range(5)]
    bus += [("read", LANE1_BASE + 5), ("read", REG_PORTS), ("write", REG_PORTS, PORTS_IDENTITY),
            ("read", REG_PORTS), ("read", LANE1_BASE + REG_CONST + 1)]
    return Case("registers", bus, [[], [], []], [], after=STATUS_READS)


def shown_twice(rng: random.Random) -> Case:
    """Both tile outputs name lane 0's port 0: only output 0 shows it. Lane 1 ID(in2) with its
    port 0 dropped fires beside it."""
    n = rng.randint(2, 12)
    op = rng.choice(BINARY)
    ports = port_map_word({(0, 0): ("in", 0), (0, 1): ("in", 1), (1, 0): ("in", 2)}, {0: (0, 0), 1: (0, 0)})
    bus = [("write", REG_PORTS, ports)] + configure_lane(0, op) + configure_lane(1, "ID", drop=(0,))
    streams = [[value(rng) for _ in range(n)] for _ in range(3)]
    return Case(f"shown twice {op}", bus, streams, [uop(n, n)], after=STATUS_READS)


def shared_queue(rng: random.Random) -> Case:
    """Lane 0 on the shared memory: a spill QUEUE (ring in the memory) fed by lane 1
    op(in0, in1), out on tile output 0; under back-pressure its words go round the ring (the
    spill counters depend on the timing, so they are not compared)."""
    n = rng.randint(4, 24)
    op = rng.choice(BINARY)
    ports = port_map_word({(1, 0): ("in", 0), (1, 1): ("in", 1), (0, 0): ("lane", 0)}, {0: (0, 0), 1: (1, 1)})
    bus = [("write", REG_PORTS, ports), ("write", REG_ORIGIN, 8), ("write", REG_RING_WORDS, 32),
           ("write", REG_QUEUE_DEPTH, rng.randint(1, 3))]
    bus += configure_lane(0, "QUEUE", pred=True) + configure_lane(1, op)
    streams = [[value(rng) for _ in range(n)] for _ in range(2)] + [[]]
    return Case(f"shared QUEUE <- {op}", bus, streams, [uop(n, n)], shared_words=64,
                after=STATUS_READS + (REG_ORIGIN, REG_RING_WORDS))


CASES = {"feed_forward": feed_forward, "loop": loop, "loop_open": lambda rng: loop(rng, open_=True),
         "identity": identity_only_lane0, "crossed_stream": crossed_stream, "bank_load": bank_load,
         "bank_ldst_loop": bank_read_modify_write, "registers": registers,
         "shown_twice": shown_twice, "shared_queue": shared_queue}


async def write_bus(ctx, fu, bus):
    """Write a case's configuration words into ``fu``, one a cycle, as the control plane does."""
    for _, addr, data in bus:
        ctx.set(fu.cfg.addr, addr)
        ctx.set(fu.cfg.data, data)
        ctx.set(fu.cfg.write, 1)
        await ctx.tick()
    ctx.set(fu.cfg.write, 0)


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("name", list(CASES))
def test_rtl_against_model(name, profile):
    """Each case under each stall profile, two seeds (printed; RIVULET_SEED replays them)."""
    seeds = seeds_for(f"pe-lanes:{name}:{profile}", count=2)
    print(f"pe lanes case={name} profile={profile} seeds={seeds}")
    run_cases([(CASES[name](random.Random(seed)), profile, seed) for seed in seeds])


def test_registers_read_what_the_spec_says():
    """The model the RTL is checked against reads the spec's values (so the bench's register
    comparison is not model against itself only)."""
    gold = golden(registers(random.Random(1)))
    assert gold["reads"][0] == PORTS_IDENTITY
    assert gold["reads"][1] == 1            # lane 1 at reset: ADD, in its first state, nothing armed
    assert gold["reads"][2] == 0


def test_one_lane_tile_is_a_pe():
    """(c) with lane 1 never granted a firing, a two-lane tile under the identity map runs the
    one-lane bench: every operator, and LOADs and STOREs with a bank."""
    (seed,) = seeds_for("pe-lanes-identity", count=1)
    rng = random.Random(seed)
    print(f"pe lanes identity seed={seed}")
    phases = [drained(random_phase(op, rng)) for op in OPERATORS]
    rng.shuffle(phases)
    run_pe_amaranth(PeFu(32, lanes=2), phases, profile="random_stall_50", seed=seed)
    run_pe_amaranth(PeFu(32, mem_depth=32, lanes=2), memory_phases(rng, 32), profile="backpressure_90",
                    seed=seed)


def test_internal_edge_latency():
    """(g) without stalls, a token fired by lane 0 at cycle t is taken by lane 1's firing at t+1:
    feed-forward ADD -> internal -> ADD(.., hold 100) -> tile output 0. The firing counter shows
    lane 0's firing in the cycle after t and lane 1's one cycle later; results leave at t+2, one
    per cycle."""
    n = 6
    ports = port_map_word({(0, 0): ("in", 0), (0, 1): ("in", 1), (1, 0): ("lane", 0)}, {0: (1, 0)})
    bus = [("write", REG_PORTS, ports)] + configure_lane(0, "ADD") + \
        configure_lane(1, "ADD", {1: 100}, slots=("edge", "hold"))
    fu = PeFu(32, lanes=2)
    log = []

    async def bench(ctx):
        await write_bus(ctx, fu, bus)
        ctx.set(fu.uop.payload, PeUop.const(uop(n, n)))
        ctx.set(fu.uop.valid, 1)
        await ctx.tick()
        ctx.set(fu.uop.valid, 0)
        ctx.set(fu.o[0].ready, 1)
        ctx.set(fu.i[2].valid, 1)         # no slot selects tile input 2
        sent = 0
        for cycle in range(n + 10):
            ctx.set(fu.i[0].valid, sent < n)
            ctx.set(fu.i[1].valid, sent < n)
            ctx.set(fu.i[0].payload, sent)
            ctx.set(fu.i[1].payload, 10 * sent)
            taken = ctx.get(fu.i[0].valid) and ctx.get(fu.i[0].ready)
            assert ctx.get(fu.i[1].ready) == ctx.get(fu.i[0].ready) and not ctx.get(fu.i[2].ready)
            assert not ctx.get(fu.o[1].valid)
            out = ctx.get(fu.o[0].payload) if ctx.get(fu.o[0].valid) else None
            log.append((cycle, bool(taken), out, ctx.get(fu.firings)))
            sent += bool(taken)
            await ctx.tick()

    simulator = Simulator(fu)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    taken_at = [cycle for cycle, taken, _, _ in log if taken]
    out_at = [(cycle, out) for cycle, _, out, _ in log if out is not None]
    assert taken_at == list(range(taken_at[0], taken_at[0] + n))           # one per cycle
    assert out_at == [(t + 2, 11 * k + 100) for k, t in enumerate(taken_at)]
    firings = {cycle: count for cycle, _, _, count in log}
    t = taken_at[0]
    assert (firings[t], firings[t + 1], firings[t + 2]) == (0, 1, 3)       # lane 0 at t, both from t+1


def test_one_lane_elaborates_as_before():
    """lanes=1 takes the one-lane path: one RipplePE, no port map, no internal queues (its
    netlist was compared with the one of the commit before the two-lane RTL: identical but for
    source locations)."""
    one = rtlil.convert(PeFu(32))
    assert "lane1" not in one and "internal" not in one and "ports_word" not in one
    two = rtlil.convert(PeFu(32, lanes=2))
    assert "lane1" in two and "ports_word" in two
    assert one.count("\n  cell ") < two.count("\n  cell ")


def test_tokens_left_between_lanes_keep_the_micro_op():
    """A micro-op granting lane 1 fewer firings than lane 0's tokens for it never completes: the
    tokens left in the internal queue keep it busy, as in the model."""
    ports = port_map_word({(0, 0): ("in", 0), (0, 1): ("in", 1), (1, 0): ("lane", 0)}, {0: (1, 0)})
    bus = [("write", REG_PORTS, ports)] + configure_lane(0, "ADD") + \
        configure_lane(1, "ID")
    case = Case("left between lanes", bus, [[1, 2, 3], [4, 5, 6], []], [uop(3, 1)])
    gold = golden(case)
    assert gold["outputs"] == [[5], []] and gold["busy"] and not gold["finished"]
    fu = PeFu(32, lanes=2)

    async def bench(ctx):
        await write_bus(ctx, fu, bus)
        ctx.set(fu.uop.payload, PeUop.const(uop(3, 1)))
        ctx.set(fu.uop.valid, 1)
        await ctx.tick()
        ctx.set(fu.uop.valid, 0)
        ctx.set(fu.o[0].ready, 1)
        outputs, sent = [], 0
        for _ in range(40):
            ctx.set(fu.i[0].valid, sent < 3)
            ctx.set(fu.i[1].valid, sent < 3)
            ctx.set(fu.i[0].payload, case.streams[0][min(sent, 2)])
            ctx.set(fu.i[1].payload, case.streams[1][min(sent, 2)])
            sent += bool(ctx.get(fu.i[0].valid) and ctx.get(fu.i[0].ready))
            if ctx.get(fu.o[0].valid):
                outputs.append(ctx.get(fu.o[0].payload))
            await ctx.tick()
        assert sent == 3 and outputs == [5]
        assert ctx.get(fu.busy) and not ctx.get(fu.finished) and not ctx.get(fu.uop.ready)
        assert ctx.get(fu.firings) == 4

    simulator = Simulator(fu)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()


def test_hang_reports_name_both_lanes_of_a_two_lane_tile():
    """describe_config reads the port map and lane 1's registers: a tile whose map uses lane 1
    names both operators; a one-lane tile (the registers read 0) or an identity map names one."""
    from ripple_core.pe import PE_KIND

    carry, steer = pe_config_word("CARRY"), pe_config_word("STEER")
    paired = port_map_word({(0, 0): ("in", 0), (1, 0): ("lane", 0)}, {0: (1, 0)})
    describe = PE_KIND.describe_config
    assert describe((carry, 0, paired, steer, 1)) == "lane 0 CARRY (not in its first state); lane 1 STEER"
    assert describe((carry, 1, 0, 0, 0)) == "CARRY"
    assert describe((carry, 1 | STATUS_FAULT, PORTS_IDENTITY, steer, 1)) == "CARRY (memory fault)"
    model = PairModel()
    for address, word in ((REG_CONFIG, carry), (REG_PORTS, paired), (lane_register(1, REG_CONFIG), steer)):
        model.write_word(address, word)
    words = tuple(model.read_word(address) for address in PE_KIND.describe_registers)
    assert describe(words) == "lane 0 CARRY; lane 1 STEER"
