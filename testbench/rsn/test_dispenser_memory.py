# amaranth: UnusedElaboratable=no
"""The dispenser's path into the shared memory: mem_address and mem_data against a plain list.

A ``Dispenser(memory_words=...)`` drives the last port of a two-port ``BankedMemory``; port 0
belongs to a competitor that reads random addresses (some out of range) at a random rate, so the
dispenser's requests wait for banks now and then. Every stream (ctrl, chain, readback, the
competitor's, and probes of mem_req/mem_resp) has a protocol monitor. The scoreboard follows the
image word by word with a plain Python list as the memory: each mem_data body's word is taken
in exactly the cycle its request is accepted (the right request: op, pointer, value, meta 0),
no ctrl word is taken while a mem_data READ's answer is still in the memory, every write answer
is dropped, and readback carries the values in image order (mem_data words, the pointer, the
cycle counter and ``done`` as sampled). The same image on :class:`rsn.model.FabricModel` gives
the same memory words. Seeds are printed so that a failure replays with ``RIVULET_SEED``.
"""

import dataclasses
import random
from collections import deque

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.banked_memory import BankedMemory, MemoryOp, request_layout, response_layout
from hw.params import ParameterError
from rivulet.sim.amaranth_sim import run_in_amaranth
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import (
    PROFILES,
    ProtocolMonitor,
    Schedule,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
    StreamPort,
    stream_ports,
)
from rsn.assemble import assemble, read_packet, shared_memory_packets, shared_memory_read_packets
from rsn.control import Dispenser
from rsn.fabric_spec import MemorySpec, parse_fabric
from rsn.fu import MEMORY_META_BITS
from rsn.image import ImageError, decode_image, split_packets
from rsn.isa import GLOBAL_REGISTERS, NO_INPUT, SWITCH_OUTPUTS, Opcode, SwitchUop, encode, packet
from rsn.model import FabricModel

from .control_bench import ControlBench, HeldInput

MASK32 = 0xFFFF_FFFF
REQUEST = request_layout(32, MEMORY_META_BITS)
RESPONSE = response_layout(32, MEMORY_META_BITS)
GLOBAL = {"rows": 0, "cols": 0}
CYCLES, DONE = GLOBAL_REGISTERS["cycles"], GLOBAL_REGISTERS["done"]
MEM_ADDRESS, MEM_DATA = GLOBAL_REGISTERS["mem_address"], GLOBAL_REGISTERS["mem_data"]
# A 1x1 fabric whose switch copies in0 to out0: the golden model needs a program to finish.
FABRIC = {"rows": 1, "cols": 1, "tiles": ["alu"], "host_ports": [
    {"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
    {"name": "out0", "tile": [0, 0], "side": "E", "direction": "out"}]}
PASS_BEATS = 3


def pack(layout, **fields) -> int:
    value = 0
    for name, field in layout:
        part = fields.get(name, 0)
        value |= (int(part) & ((1 << field.width) - 1)) << field.offset
    return value


def unpack(layout, value: int) -> dict:
    return {name: (value >> field.offset) & ((1 << field.width) - 1) for name, field in layout}


def _expect(condition: bool, message: str):
    if not condition:
        raise ScoreboardError(message)


class DispenserMemoryTop(wiring.Component):
    """A Dispenser on the last port of a 2-port BankedMemory; port 0 is the bench's, and the
    dispenser's memory streams are copied to probe outputs."""

    def __init__(self, words: int, banks: int):
        self.words, self.banks = words, banks
        super().__init__({
            "ctrl": In(stream.Signature(32)),
            "chain": Out(stream.Signature(32)),
            "readback_chain": In(stream.Signature(32)),
            "readback": Out(stream.Signature(32)),
            "done": In(1),
            "watchdog": In(32),
            "cycles": Out(32),
            "clear": Out(1),
            "other_req": In(stream.Signature(REQUEST)),
            "other_resp": Out(stream.Signature(RESPONSE)),
            "mem_req_valid": Out(1), "mem_req_ready": Out(1), "mem_req_payload": Out(REQUEST.size),
            "mem_resp_valid": Out(1), "mem_resp_ready": Out(1), "mem_resp_payload": Out(RESPONSE.size),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.dispenser = dispenser = Dispenser(memory_words=self.words)
        m.submodules.memory = memory = BankedMemory(2, self.banks, self.words, meta_width=MEMORY_META_BITS)
        for name in ("ctrl", "readback_chain"):
            wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(dispenser, name))
        for name in ("chain", "readback"):
            wiring.connect(m, getattr(dispenser, name), wiring.flipped(getattr(self, name)))
        wiring.connect(m, wiring.flipped(self.other_req), memory.req[0])
        wiring.connect(m, memory.resp[0], wiring.flipped(self.other_resp))
        wiring.connect(m, dispenser.mem_req, memory.req[1])
        wiring.connect(m, memory.resp[1], dispenser.mem_resp)
        m.d.comb += [
            dispenser.done.eq(self.done), dispenser.watchdog.eq(self.watchdog),
            self.cycles.eq(dispenser.cycles), self.clear.eq(dispenser.clear),
            self.mem_req_valid.eq(dispenser.mem_req.valid), self.mem_req_ready.eq(dispenser.mem_req.ready),
            self.mem_req_payload.eq(dispenser.mem_req.payload.as_value()),
            self.mem_resp_valid.eq(dispenser.mem_resp.valid),
            self.mem_resp_ready.eq(dispenser.mem_resp.ready),
            self.mem_resp_payload.eq(dispenser.mem_resp.payload.as_value()),
        ]
        return m


class DispenserMemoryChecker:
    """The scoreboard (see the module docstring); ``memory`` is the plain list it keeps."""

    def __init__(self, words, memory_words: int):
        self.words = list(words)
        self.memory = [0] * memory_words
        self.pointer = 0
        self.roles = {}             # ctrl word index -> (opcode, register) of a global body's 2nd word
        self.starts = set()         # ctrl word indices of START headers
        self.expected_readback = 0
        for found in split_packets(self.words):
            if found.opcode == Opcode.START:
                self.starts.add(found.offset)
            if found.is_global and found.opcode in (Opcode.WRITE, Opcode.READ):
                for k, body in enumerate(found.bodies):
                    self.roles[found.offset + 3 + 2 * k] = (found.opcode, body & 0xFFFF, body >> 32)
                self.expected_readback += found.window if found.opcode == Opcode.READ else 0
        self.req_monitor = ProtocolMonitor(StreamPort("mem_req", False, REQUEST.size))
        self.resp_monitor = ProtocolMonitor(StreamPort("mem_resp", True, RESPONSE.size))
        self.words_in = self.chained = 0
        self.readback_queue = deque()       # values due on readback, in order
        self.readback = []                  # (register, value) as they came
        self.answers = deque()              # expected mem_resp payloads, in request order
        self.read_in_memory = 0             # mem_data READ answers not yet out of the memory
        self.cycles, self.running, self.clear_due = 0, False, None

    def on_cycle(self, cycle, sample, transfers):
        request = self.req_monitor.observe(cycle, sample["mem_req_valid"], sample["mem_req_ready"],
                                           sample["mem_req_payload"])
        response = self.resp_monitor.observe(cycle, sample["mem_resp_valid"], sample["mem_resp_ready"],
                                             sample["mem_resp_payload"])
        _expect(sample["cycles"] == self.cycles,
                f"cycle {cycle}: cycle counter is {sample['cycles']}, expected {self.cycles}")
        _expect(sample["clear"] == int(cycle == self.clear_due), f"cycle {cycle}: clear is {sample['clear']}")
        if response:
            self._check_response(cycle, sample["mem_resp_payload"])
        started, role = False, None
        if "ctrl" in transfers:
            _expect(self.read_in_memory == 0, f"cycle {cycle}: ctrl word {self.words_in} was taken while a "
                                              f"mem_data READ's answer was still in the memory")
            started = self.words_in in self.starts
            role = self.roles.get(self.words_in)
            self.words_in += 1
        accessing = role is not None and role[1] == MEM_DATA
        _expect(request == accessing, f"cycle {cycle}: mem_req transfer={request} but the ctrl word "
                                      f"taken is{'' if accessing else ' not'} a mem_data body's second word")
        if role is not None:
            self._apply(cycle, sample, role, sample["mem_req_payload"])
        if "chain" in transfers:
            _expect(self.chained < self.words_in and transfers["chain"] == self.words[self.chained],
                    f"cycle {cycle}: chain word {self.chained} is {transfers['chain']:#x}")
            self.chained += 1
        if "readback" in transfers:
            value = transfers["readback"]
            _expect(bool(self.readback_queue), f"cycle {cycle}: readback value {value:#x} before its READ")
            register, expected = self.readback_queue.popleft()
            _expect(value == expected, f"cycle {cycle}: readback #{len(self.readback)} (global register "
                                       f"{register:#x}) is {value:#x}, expected {expected:#x}")
            self.readback.append((register, value))
        if started:
            self.clear_due, self.running = cycle + 1, True
        counting = self.running and not sample["done"]
        self.cycles = 0 if started else (self.cycles + counting) & MASK32

    def _apply(self, cycle, sample, role, payload):
        opcode, register, value = role
        if opcode == Opcode.READ and register != MEM_DATA:
            values = {CYCLES: sample["cycles"], DONE: sample["done"], MEM_ADDRESS: self.pointer}
            self.readback_queue.append((register, values[register]))
        elif opcode == Opcode.WRITE and register == MEM_ADDRESS:
            self.pointer = value
        elif register == MEM_DATA:
            got = unpack(REQUEST, payload)
            write = opcode == Opcode.WRITE
            wanted = {"op": (MemoryOp.WRITE if write else MemoryOp.READ).value, "addr": self.pointer,
                      "data": value if write else got["data"], "meta": 0}
            _expect(got == wanted, f"cycle {cycle}: mem_req is {got}, expected {wanted}")
            if write:
                self.memory[self.pointer] = value
                self.answers.append((pack(RESPONSE), False))
            else:
                self.answers.append((pack(RESPONSE, data=self.memory[self.pointer]), True))
                self.readback_queue.append((MEM_DATA, self.memory[self.pointer]))
                self.read_in_memory += 1
            self.pointer += 1

    def _check_response(self, cycle, payload):
        _expect(bool(self.answers),
                f"cycle {cycle}: mem_resp {unpack(RESPONSE, payload)} with no request out")
        expected, read = self.answers.popleft()
        _expect(payload == expected, f"cycle {cycle}: mem_resp is {unpack(RESPONSE, payload)}, expected "
                                     f"{unpack(RESPONSE, expected)}")
        self.read_in_memory -= read

    def complete(self) -> bool:
        return (self.words_in == len(self.words) and self.chained == len(self.words)
                and len(self.readback) == self.expected_readback and not self.answers)

    def progress(self) -> str:
        return (f"ctrl {self.words_in}/{len(self.words)}, chain {self.chained}, readback "
                f"{len(self.readback)}/{self.expected_readback}, memory answers due {len(self.answers)}")

    def finish(self):
        _expect(self.complete(), f"incomplete at the end: {self.progress()}")


def run_bench(words, memory_words: int, banks: int, profile: str, seed: int, *, competitor: float = 0.0,
              requests: int = 0):
    """Run ``words`` through a DispenserMemoryTop; the competitor sends ``requests`` random READs,
    idling with probability ``competitor``. Returns (bench, checker)."""
    stall = PROFILES[profile]
    rng = random.Random(seed)
    top = DispenserMemoryTop(memory_words, banks)
    ports, others = stream_ports(top)
    other_requests = [pack(REQUEST, op=MemoryOp.READ.value, addr=rng.randrange(2 * memory_words),
                           meta=rng.getrandbits(1)) for _ in range(requests)]
    tokens = {"ctrl": words, "readback_chain": [], "other_req": other_requests}
    idle = {"ctrl": stall.idle, "readback_chain": Schedule(0.0), "other_req": Schedule(competitor)}
    sources = [SourceDriver(port, tokens[port.prefix], idle[port.prefix], random.Random(rng.getrandbits(64)))
               for port in ports if port.into_design]
    sinks = [SinkDriver(port, stall.backpressure, random.Random(rng.getrandbits(64)))
             for port in ports if not port.into_design]
    held = [HeldInput("done", 1, random.Random(rng.getrandbits(64))),
            HeldInput("watchdog", 32, random.Random(rng.getrandbits(64)))]
    checker = DispenserMemoryChecker(words, memory_words)
    bench = ControlBench(ports, sources, sinks, checker, others, held)
    run_in_amaranth(top, bench, max_cycles=40 * len(words) + 30 * requests + 3000)
    return bench, checker


def _pass_through() -> int:
    """The switch micro-op that copies side W (in0) to side E (out0) for PASS_BEATS tokens."""
    select = [NO_INPUT] * SWITCH_OUTPUTS
    select[1] = 3
    return encode(SwitchUop, {"beats": PASS_BEATS, "enable": 1 << 1, "select": select, "last": 1})


def random_image(rng: random.Random, memory_words: int):
    """A preload of a random array at a random start (plus scattered words elsewhere), START and
    a tiny program, then the array read back in packets mixed with reads of cycles, done and
    mem_address. Returns (words, start, array)."""
    count = rng.randint(4, min(40, memory_words))
    start = rng.randrange(memory_words - count + 1)
    array = [rng.getrandbits(32) for _ in range(count)]
    scattered = {address: rng.getrandbits(32) for address in rng.sample(range(memory_words), 6)
                 if not start <= address < start + count}
    words = read_packet(None, [MEM_ADDRESS])
    words += shared_memory_packets(scattered, rng.randint(1, 31))
    words += assemble([], shared_memory={start + k: value for k, value in enumerate(array)},
                      queue_depth=4, max_window=rng.randint(1, 31))
    words += packet(Opcode.SWITCH, {"rows": 1, "cols": 1}, [_pass_through()])
    half = rng.randint(0, count)
    bodies = [MEM_ADDRESS]
    for _ in range(half):
        bodies += [MEM_DATA] + rng.choices([CYCLES, DONE, MEM_ADDRESS], k=rng.choice([0, 0, 1, 2]))
    words += packet(Opcode.WRITE, GLOBAL, [MEM_ADDRESS | start << 32])
    while bodies:
        size = rng.randint(1, 31)
        words += read_packet(None, bodies[:size])
        bodies = bodies[size:]
    words += read_packet(None, [CYCLES])
    words += shared_memory_read_packets(start + half, count - half, rng.randint(1, 31))
    words += read_packet(None, [DONE, MEM_ADDRESS])
    return words, start, array


def _memory_values(readback) -> list[int]:
    return [value for register, value in readback if register == MEM_DATA]


@pytest.mark.parametrize("profile", list(PROFILES))
def test_preload_and_read_back(profile):
    for seed in seeds_for(f"dispenser-memory:{profile}"):
        rng = random.Random(seed)
        memory_words, banks = rng.choice([32, 64, 128]), rng.choice([1, 2, 4])
        competitor = rng.choice([1.0, 0.5, 0.0])        # idle, half busy, always asking
        words, start, array = random_image(rng, memory_words)
        print(f"dispenser memory profile={profile} seed={seed} words={memory_words} banks={banks} "
              f"start={start} count={len(array)} competitor idle={competitor}")
        _, checker = run_bench(words, memory_words, banks, profile, seed, competitor=competitor,
                               requests=0 if competitor == 1.0 else len(words) // 2)
        assert _memory_values(checker.readback) == array
        assert checker.memory[start:start + len(array)] == array

        spec = dataclasses.replace(parse_fabric(FABRIC), memory=MemorySpec(words=memory_words, banks=banks))
        model = FabricModel(spec)
        result = model.run(words, {"in0": list(range(PASS_BEATS))})
        image = decode_image(words, 1, 1, memory_words=memory_words)
        at_memory = [k for k, slot in enumerate(image.readback) if slot.address in (MEM_DATA, MEM_ADDRESS)]
        assert [result.reads[k] for k in at_memory] == [checker.readback[k][1] for k in at_memory]
        assert model.memory.data == checker.memory
        assert result.outputs["out0"] == list(range(PASS_BEATS))


def _ctrl_cycles(bench) -> list[int]:
    return [cycle for cycle, _ in bench.transfers("ctrl")]


def test_cycles_per_preloaded_and_read_word():
    """With no stalls and no competitor: one preloaded word per 2 ctrl cycles (its two body
    words, back to back, each request accepted at once); one read word per 4 cycles (request
    with the body's second word at cycle t, answer taken from the memory at t+2 and on readback
    at t+3, when the next body's first word is taken); a packet adds its two header words."""
    count = 30
    preload = shared_memory_packets(list(range(100, 100 + count)), 31)    # pointer + 30 words: 1 packet
    bench, checker = run_bench(preload, 64, 4, "no_stall", 0)
    ctrl = _ctrl_cycles(bench)
    assert ctrl == list(range(ctrl[0], ctrl[0] + len(preload)))         # 2 cycles a word, no wait
    assert checker.memory[:count] == list(range(100, 100 + count))

    reads = shared_memory_read_packets(0, count, 31)
    words = preload + reads
    bench, checker = run_bench(words, 64, 4, "no_stall", 0)
    ctrl, returned = _ctrl_cycles(bench), [cycle for cycle, _ in bench.transfers("readback")]
    seconds = [ctrl[len(preload) + 4 + 3 + 2 * k] for k in range(count)]   # READ bodies' 2nd words
    assert [b - a for a, b in zip(seconds, seconds[1:], strict=False)] == [4] * (count - 1)
    assert [r - s for s, r in zip(seconds, returned, strict=True)] == [3] * count
    assert _memory_values(checker.readback) == list(range(100, 100 + count))


# --- refused images ------------------------------------------------------------------------------

def test_memory_registers_need_a_memory():
    for words, name in ((shared_memory_packets([1, 2], 8), "mem_address"),
                        (packet(Opcode.WRITE, GLOBAL, [MEM_DATA | 5 << 32]), "mem_data"),
                        (read_packet(None, [MEM_DATA]), "mem_data")):
        with pytest.raises(ImageError, match=rf"{name} .*no shared memory; add a \[memory\] table"):
            decode_image(words, 1, 1)
    with pytest.raises(ImageError, match="no shared memory"):
        FabricModel(parse_fabric(FABRIC)).run(read_packet(None, [MEM_ADDRESS]))


@pytest.mark.parametrize("words, message", [
    (shared_memory_packets({62: 1, 63: 2, 64: 3}, 8), "writes .*mem_data .* at word 64, past the end of the "
                                                      r"shared memory of 64 words \(0..63\)"),
    (shared_memory_read_packets(60, 5, 8), "reads .*mem_data .* at word 64, past the end"),
    (packet(Opcode.WRITE, GLOBAL, [MEM_ADDRESS | 1000 << 32]) + read_packet(None, [MEM_DATA]), "word 1000"),
])
def test_pointer_past_the_end_is_refused(words, message):
    with pytest.raises(ImageError, match=message):
        decode_image(words, 1, 1, memory_words=64)


def test_pointer_at_the_end_without_access_is_fine():
    image = decode_image(shared_memory_packets({63: 9}, 8) + read_packet(None, [MEM_ADDRESS]), 1, 1,
                         memory_words=64)
    assert image.pointer == 64 and [(a.kind, a.address, a.value) for a in image.memory] == [("write", 63, 9)]


def test_other_global_writes_are_still_refused():
    with pytest.raises(ImageError, match="writes global register 0x0; all-zero target masks reach no tile"):
        decode_image(packet(Opcode.WRITE, GLOBAL, [CYCLES]), 1, 1, memory_words=64)


def test_helpers_group_runs_and_windows():
    words = shared_memory_packets({5: 1, 6: 2, 7: 3, 9: 4}, 3)
    found = split_packets(words)
    assert [len(p.bodies) for p in found] == [3, 3]                      # 6 bodies, windows of 3
    bodies = [b for p in found for b in p.bodies]
    assert [(b & 0xFFFF, b >> 32) for b in bodies] == [
        (MEM_ADDRESS, 5), (MEM_DATA, 1), (MEM_DATA, 2), (MEM_DATA, 3), (MEM_ADDRESS, 9), (MEM_DATA, 4)]
    reads = split_packets(shared_memory_read_packets(8, 5, 2))
    assert [(p.opcode, p.window) for p in reads] == [(Opcode.WRITE, 1), (Opcode.READ, 2), (Opcode.READ, 2),
                                                     (Opcode.READ, 1)]
    image = assemble([], queue_depth=4, shared_memory=[7, 8])
    assert split_packets(image)[-1].opcode == Opcode.START             # the preload comes first
    with pytest.raises(ValueError, match="max_window=32"):
        shared_memory_packets([1], 32)


# --- the dispenser without a memory ---------------------------------------------------------------

STREAM_PARTS = ("valid", "ready", "payload")
PLAIN_PORTS = {"clk", "rst", "done", "watchdog", "cycles", "clear"} | {
    f"{name}__{part}" for name in ("ctrl", "chain", "readback_chain", "readback") for part in STREAM_PARTS}
MEMORY_PORTS = {f"mem_{name}__{part}" for name in ("req", "resp") for part in STREAM_PARTS}


def _top_ports(text: str) -> set[str]:
    top = text[text.index("module dispenser("):]
    top = top[:top.index("endmodule")]
    return {line.split()[-1].rstrip(";") for line in top.splitlines()
            if line.strip().startswith(("input", "output"))}


def test_dispenser_without_memory_keeps_its_ports():
    plain = verilog.convert(Dispenser(), name="dispenser")
    assert _top_ports(plain) == PLAIN_PORTS
    assert "mem_" not in plain and "pointer" not in plain
    with_memory = verilog.convert(Dispenser(memory_words=64), name="dispenser")
    assert _top_ports(with_memory) == PLAIN_PORTS | MEMORY_PORTS
    with pytest.raises(ParameterError, match="memory_words=-1"):
        Dispenser(memory_words=-1)


def test_dispenser_shows_the_bank_counters_as_global_registers():
    """A global READ of the bank counter block returns, bank by bank, the counters the dispenser
    is given (random values, seed printed), in body order, like any global register."""
    from amaranth.sim import Simulator

    from rsn.isa import BANK_COUNTERS, bank_counter

    (seed,) = seeds_for("dispenser-bank-counters", count=1)
    print(f"dispenser bank counters seed={seed}")
    rng = random.Random(seed)
    banks = 4
    order = [(bank, name) for bank in range(banks) for name in BANK_COUNTERS]
    rng.shuffle(order)
    values = {key: rng.getrandbits(32) for key in order}
    words = read_packet(None, [bank_counter(bank, name) for bank, name in order])
    dut = Dispenser(memory_words=64, memory_banks=banks)
    got = []

    async def bench(ctx):
        for (bank, name), value in values.items():
            ctx.set(getattr(dut, f"bank_{name}")[bank], value)
        ctx.set(dut.chain.ready, 1)
        ctx.set(dut.readback.ready, 1)
        sent = 0
        for _ in range(10 * len(words)):
            ctx.set(dut.ctrl.valid, sent < len(words))
            ctx.set(dut.ctrl.payload, words[sent] if sent < len(words) else 0)
            if ctx.get(dut.readback.valid):
                got.append(ctx.get(dut.readback.payload))
            taken = sent < len(words) and ctx.get(dut.ctrl.ready)
            await ctx.tick()
            sent += bool(taken)

    simulator = Simulator(dut)
    simulator.add_clock(1e-6)
    simulator.add_testbench(bench)
    simulator.run()
    assert got == [values[key] for key in order]
    with pytest.raises(ParameterError, match="memory_banks=2"):
        Dispenser(memory_banks=2)
