"""A bench for the RSN control plane: a Dispenser and a chain of TileControls, checked against
the golden image decoder (:func:`rsn.image.decode_image`).

The design under test is :class:`ControlTop`: every tile's micro-op streams leave the top (the
bench's sinks back-pressure them at random); every tile's config bus drives a small register
file inside the top and is also copied to probe outputs, so the scoreboard sees each write, read
and clear as it happens. Both simulator tiers build the same bench with :func:`make_control_bench`.
"""

import random
from collections import deque

from amaranth.hdl import Array, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rivulet.sim.streams import PROFILES, ScoreboardError, SinkDriver, SourceDriver, StreamBench, stream_ports
from rsn.control import Dispenser, Expander, TileControl, connect_control_chain
from rsn.image import decode_image, split_packets
from rsn.isa import GLOBAL_REGISTERS, MEMORY_REGISTERS, Opcode, packet

__all__ = ["ControlTop", "DroppingExpander", "DroppingTile", "random_image", "make_control_bench",
           "register_index", "register_init", "max_cycles_for", "GRID"]

GRID = {"rows": 2, "cols": 3, "max_window": 8}
# The global registers of a dispenser without a shared memory (the one here).
PLAIN_GLOBALS = [address for name, address in GLOBAL_REGISTERS.items() if name not in MEMORY_REGISTERS]
REGISTER_COUNT = 8
MASK32 = 0xFFFF_FFFF

# The config bus as a probe sees it: all outputs.
CfgProbe = wiring.Signature({"addr": Out(16), "data": Out(32), "write": Out(1), "read": Out(1)})


def register_index(address: int) -> int:
    """Which of a tile's registers an address hits: low bits folded with the high nibble."""
    return (address ^ (address >> 12)) % REGISTER_COUNT


def register_init(tile: int, index: int) -> int:
    """Reset contents differ per tile, so a value read from the wrong tile is caught."""
    return (0x9E37_79B9 * (tile * REGISTER_COUNT + index + 1)) & MASK32


class ControlTop(wiring.Component):
    """Dispenser + ``rows x cols`` TileControls, with register files and probes per tile."""

    def __init__(self, rows: int, cols: int, max_window: int, tile_class=TileControl):
        self.rows, self.cols, self.max_window, self.tile_class = rows, cols, max_window, tile_class
        count = rows * cols
        super().__init__({
            "ctrl": In(stream.Signature(32)),
            "readback": Out(stream.Signature(32)),
            "done": In(1),
            "watchdog": In(32),
            "cycles": Out(32),
            "clear": Out(1),
            "switch_uop": Out(stream.Signature(64)).array(count),
            "fu_uop": Out(stream.Signature(64)).array(count),
            "cfg_probe": Out(CfgProbe).array(count),
            "tile_clear": Out(1).array(count),
            "returned": Out(1),         # a tile's read value reaches the dispenser
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.dispenser = dispenser = Dispenser()
        tiles = [self.tile_class(row, col, self.max_window)
                 for row in range(self.rows) for col in range(self.cols)]
        for index, tile in enumerate(tiles):
            m.submodules[f"tile_{tile.row}_{tile.col}"] = tile
            self._attach_tile(m, index, tile)
        connect_control_chain(m, dispenser, tiles)
        wiring.connect(m, wiring.flipped(self.ctrl), dispenser.ctrl)
        wiring.connect(m, dispenser.readback, wiring.flipped(self.readback))
        m.d.comb += [dispenser.done.eq(self.done), dispenser.watchdog.eq(self.watchdog),
                     self.cycles.eq(dispenser.cycles), self.clear.eq(dispenser.clear),
                     self.returned.eq(dispenser.readback_chain.valid & dispenser.readback_chain.ready)]
        return m

    def _attach_tile(self, m, index: int, tile: TileControl):
        for inner, outer in ((tile.switch_uop, self.switch_uop[index]), (tile.fu_uop, self.fu_uop[index])):
            m.d.comb += [outer.payload.eq(inner.payload), outer.valid.eq(inner.valid),
                         inner.ready.eq(outer.ready)]
        cfg, probe = tile.cfg, self.cfg_probe[index]
        m.d.comb += [probe.addr.eq(cfg.addr), probe.data.eq(cfg.data), probe.write.eq(cfg.write),
                     probe.read.eq(cfg.read), self.tile_clear[index].eq(tile.clear)]

        # Flip-flops, not a memory: reset must restore them between the cocotb tests that share
        # one simulation.
        registers = Array(Signal(32, init=register_init(index, k), name=f"register_{index}_{k}")
                          for k in range(REGISTER_COUNT))
        at = (cfg.addr ^ (cfg.addr >> 12))[:REGISTER_COUNT.bit_length() - 1]
        with m.If(cfg.write):
            m.d.sync += registers[at].eq(cfg.data)
        # rdata is valid only in the cycle after `read`; junk otherwise, so a tile that samples
        # it in another cycle returns a wrong value.
        answering = Signal()
        value = Signal(32)
        junk = Signal(32, init=0x1234_5678 + index)
        m.d.sync += [answering.eq(cfg.read), junk.eq(junk * 1664525 + 1013904223)]
        with m.If(cfg.read):
            m.d.sync += value.eq(registers[at])
        m.d.comb += cfg.rdata.eq(Mux(answering, value, junk))


class DroppingExpander(Expander):
    """Mutant: replays one pass too few (drops the last repetition of every repeated window)."""

    def replays(self, repeat):
        return Mux(repeat > 2, repeat - 2, 0)


class DroppingTile(TileControl):
    def make_expander(self, layout):
        return DroppingExpander(layout, self.max_window)


def _random_mask(rng: random.Random, size: int) -> int:
    """A non-empty random subset of ``size`` lanes; sometimes with lanes beyond the grid."""
    mask = 0
    while not mask & ((1 << size) - 1):
        mask = rng.getrandbits(size)
    if rng.random() < 0.1:
        mask |= rng.getrandbits(16) & ~((1 << size) - 1)
    return mask


def _target(rng, rows, cols) -> dict:
    if rng.random() < 0.25:
        return {"rows": (1 << rows) - 1, "cols": (1 << cols) - 1}
    return {"rows": _random_mask(rng, rows), "cols": _random_mask(rng, cols)}


def _one_tile(rng, rows, cols) -> dict:
    return {"rows": 1 << rng.randrange(rows), "cols": 1 << rng.randrange(cols)}


def random_image(rng: random.Random, rows: int, cols: int, max_window: int, packets: int) -> list[int]:
    """A legal image of ``packets`` random packets, every opcode at least once."""
    addresses = [rng.getrandbits(16) for _ in range(5)] + [0x0000, 0x1000, 0x1002, 0x1013]
    none = {"rows": 0, "cols": 0}

    def uop_packet(opcode):
        bodies = [rng.getrandbits(64) for _ in range(rng.randint(1, max_window))]
        return packet(opcode, _target(rng, rows, cols), bodies, repeat=rng.randint(1, 5))

    def access_bodies(count, choices):
        # The high word of a READ body is unused: random bits check that nobody looks at it.
        return [rng.choice(choices) | rng.getrandbits(32) << 32 for _ in range(count)]

    makers = {
        "switch": lambda: uop_packet(Opcode.SWITCH),
        "fu": lambda: uop_packet(Opcode.FU),
        "write": lambda: packet(Opcode.WRITE, _target(rng, rows, cols),
                                access_bodies(rng.randint(1, max_window + 2), addresses),
                                repeat=rng.randint(1, 5)),
        # Windows longer than the readback chain's buffering, so a tile must pace its reads.
        "read": lambda: packet(Opcode.READ, _one_tile(rng, rows, cols),
                               access_bodies(rng.randint(1, max_window + 2), addresses),
                               repeat=rng.randint(1, 3)),
        "global_read": lambda: packet(Opcode.READ, none,
                                      access_bodies(rng.randint(1, 3), PLAIN_GLOBALS)),
        "all_globals": lambda: packet(Opcode.READ, none, [
            address | rng.getrandbits(32) << 32
            for address in rng.sample(PLAIN_GLOBALS, len(PLAIN_GLOBALS))]),
        "start": lambda: packet(Opcode.START, rng.choice([none, _target(rng, rows, cols)]), []),
        "nop": lambda: packet(Opcode.NOP, _target(rng, rows, cols),
                              [rng.getrandbits(64) for _ in range(rng.randint(0, 2))]),
    }
    weights = {"switch": 6, "fu": 6, "write": 4, "read": 4, "global_read": 1, "start": 1, "nop": 1}
    plan = list(makers) + rng.choices(list(weights), list(weights.values()), k=max(0, packets - len(makers)))
    rng.shuffle(plan)
    return [word for kind in plan for word in makers[kind]()]


def _expected_events(image) -> dict:
    """Per tile: config-bus accesses and clears, in image order."""
    events = {}
    for tile, contents in image.tiles.items():
        ordered = [(access.packet, ("write", access.address, access.value) if access.kind == "write"
                    else ("read", access.address)) for access in contents.accesses]
        ordered += [(index, ("clear",)) for index in image.starts]
        events[tile] = [event for _, event in sorted(ordered, key=lambda pair: pair[0])]
    return events


def _expected_readback(image) -> list[int | None]:
    """Tile read values from a register-file model; None where a global register is read."""
    tile_numbers = {tile: k for k, tile in enumerate(image.tiles)}
    values = {}
    for tile, contents in image.tiles.items():
        registers = [register_init(tile_numbers[tile], k) for k in range(REGISTER_COUNT)]
        values[tile] = deque()
        for access in contents.accesses:
            if access.kind == "write":
                registers[register_index(access.address)] = access.value
            else:
                values[tile].append(registers[register_index(access.address)])
    return [None if slot.tile is None else values[slot.tile].popleft() for slot in image.readback]


def _expect(condition: bool, message: str):
    if not condition:
        raise ScoreboardError(message)


class ControlChecker:
    """Scoreboard: micro-op streams, config-bus events, readback values, clears and cycles."""

    def __init__(self, words, image):
        self.words, self.image = list(words), image
        self.tiles = list(image.tiles)
        self.uops = {}
        for k, tile in enumerate(self.tiles):
            self.uops[f"switch_uop__{k}"] = (image.tiles[tile].switch_bodies, [])
            self.uops[f"fu_uop__{k}"] = (image.tiles[tile].fu_bodies, [])
        self.events = {tile: (expected, []) for tile, expected in _expected_events(image).items()}
        self.readback_expected = _expected_readback(image)
        self.readback = []
        self.global_values = deque()        # sampled when the host's global READ bodies go in
        self.roles, self.tile_reads_before = self._word_roles()
        self.words_in, self.returned = 0, 0
        self.cycles, self.running, self.clear_due, self.clears = 0, False, None, 0

    def _word_roles(self):
        """What the dispenser must do with each ``ctrl`` word, and how many tile read values must
        have come back before each packet's header is taken."""
        roles, tile_reads_before, tile_reads = {}, [], 0
        for found in split_packets(self.words):
            roles[found.offset] = ("header", found.index, found.opcode == Opcode.START)
            tile_reads_before.append(tile_reads)
            if found.opcode == Opcode.READ and found.is_global:
                for k, body in enumerate(found.bodies):
                    roles[found.offset + 3 + 2 * k] = ("global", body & 0xFFFF)
            elif found.opcode == Opcode.READ:
                tile_reads += found.window
        return roles, tile_reads_before

    def on_cycle(self, cycle, sample, transfers):
        self._check_dispenser(cycle, sample, transfers)
        for prefix, (expected, received) in self.uops.items():
            if prefix in transfers:
                at = len(received)
                _expect(at < len(expected), f"cycle {cycle}: {prefix} delivered an extra micro-op "
                                            f"{transfers[prefix]:#018x} after all {len(expected)}")
                _expect(transfers[prefix] == expected[at],
                        f"cycle {cycle}: {prefix} micro-op #{at} is {transfers[prefix]:#018x}, "
                        f"expected {expected[at]:#018x}")
                received.append(transfers[prefix])
        for k, tile in enumerate(self.tiles):
            self._check_events(cycle, k, tile, sample)
        if "readback" in transfers:
            self._check_readback(cycle, transfers["readback"])

    def _check_dispenser(self, cycle, sample, transfers):
        _expect(sample["cycles"] == self.cycles,
                f"cycle {cycle}: cycle counter is {sample['cycles']}, expected {self.cycles}")
        due = cycle == self.clear_due
        _expect(sample["clear"] == int(due), f"cycle {cycle}: dispenser clear is {sample['clear']}, "
                                             f"expected {int(due)} (START header one cycle before)")
        self.clears += due
        self.returned += sample["returned"]
        started = False
        if "ctrl" in transfers:
            role = self.roles.get(self.words_in, ("body",))
            self.words_in += 1
            if role[0] == "header":
                _, index, started = role
                _expect(self.returned == self.tile_reads_before[index],
                        f"cycle {cycle}: the dispenser took packet {index}'s header with "
                        f"{self.tile_reads_before[index] - self.returned} tile read value(s) still out")
            if started:
                self.clear_due, self.running = cycle + 1, True
            elif role[0] == "global":
                registers = {GLOBAL_REGISTERS["cycles"]: sample["cycles"],
                             GLOBAL_REGISTERS["done"]: sample["done"],
                             GLOBAL_REGISTERS["watchdog"]: sample["watchdog"]}
                self.global_values.append(registers[role[1]])
        counting = self.running and not sample["done"]       # the counter stops while done
        self.cycles = 0 if started else (self.cycles + counting) & MASK32

    def _check_events(self, cycle, k, tile, sample):
        expected, seen = self.events[tile]
        happened = []
        if sample[f"cfg_probe__{k}__write"]:
            happened.append(("write", sample[f"cfg_probe__{k}__addr"], sample[f"cfg_probe__{k}__data"]))
        if sample[f"cfg_probe__{k}__read"]:
            happened.append(("read", sample[f"cfg_probe__{k}__addr"]))
        if sample[f"tile_clear__{k}"]:
            happened.append(("clear",))
        for event in happened:
            at = len(seen)
            _expect(at < len(expected), f"cycle {cycle}: tile {tile} made an extra config event {event}")
            _expect(event == expected[at], f"cycle {cycle}: tile {tile} config event #{at} is "
                                           f"{_show(event)}, expected {_show(expected[at])}")
            seen.append(event)

    def _check_readback(self, cycle, value):
        at = len(self.readback)
        _expect(at < len(self.readback_expected), f"cycle {cycle}: extra readback value {value:#x}")
        expected = self.readback_expected[at]
        if expected is None:
            _expect(bool(self.global_values), f"cycle {cycle}: readback #{at} (a global register) "
                                              f"arrived before its READ body was sent")
            expected = self.global_values.popleft()
        slot = self.image.readback[at]
        source = "global" if slot.tile is None else f"tile {slot.tile}"
        _expect(value == expected, f"cycle {cycle}: readback #{at} ({source} register {slot.address:#06x}) "
                                   f"is {value:#x}, expected {expected:#x}")
        self.readback.append(value)

    def complete(self) -> bool:
        return (all(len(received) == len(expected) for expected, received in self.uops.values())
                and all(len(seen) == len(expected) for expected, seen in self.events.values())
                and len(self.readback) == len(self.readback_expected)
                and self.clears == len(self.image.starts))

    def progress(self) -> str:
        parts = [f"{prefix} {len(received)}/{len(expected)}" for prefix, (expected, received)
                 in self.uops.items() if len(received) != len(expected)]
        parts += [f"tile {tile} events {len(seen)}/{len(expected)}" for tile, (expected, seen)
                  in self.events.items() if len(seen) != len(expected)]
        parts.append(f"readback {len(self.readback)}/{len(self.readback_expected)}")
        parts.append(f"ctrl words {self.words_in}/{len(self.words)}")
        return "; ".join(parts)

    def finish(self):
        _expect(self.complete(), f"incomplete at the end: {self.progress()}")


def _show(event) -> str:
    return "(" + ", ".join(str(part) if isinstance(part, str) else f"{part:#x}" for part in event) + ")"


class HeldInput:
    """Drives a plain input with a random value that changes now and then."""

    def __init__(self, name: str, width: int, rng: random.Random, change: float = 0.05):
        self.name, self.width, self.rng, self.change = name, width, rng, change
        self.value = rng.getrandbits(width)

    def drive(self, cycle: int) -> dict[str, int]:
        if self.rng.random() < self.change:
            self.value = self.rng.getrandbits(self.width)
        return {self.name: self.value}


class ControlBench(StreamBench):
    """A StreamBench that also drives the top's plain inputs (``done``, ``watchdog``)."""

    def __init__(self, ports, sources, sinks, checker, extra_signals, held_inputs):
        super().__init__(ports, sources, sinks, checker, extra_signals)
        self.held_inputs = list(held_inputs)

    @property
    def driven(self) -> list[str]:
        return super().driven + [held.name for held in self.held_inputs]

    def drive(self, cycle: int) -> dict[str, int]:
        values = super().drive(cycle)
        for held in self.held_inputs:
            values.update(held.drive(cycle))
        return values


def max_cycles_for(words, image) -> int:
    """Generous: every micro-op and word at 90% back-pressure, one after the other."""
    uops = sum(len(tile.switch_bodies) + len(tile.fu_bodies) for tile in image.tiles.values())
    return 12 * (uops + len(words) + len(image.readback)) + 2000


def make_control_bench(top: ControlTop, profile: str, seed: int, *, packets: int = 30, words=None,
                       trailer=()):
    """The bench for one (profile, seed): an image, drivers, monitors and the scoreboard.

    The image is ``words`` if given, else ``packets`` random packets; ``trailer`` is appended.
    Returns ``(bench, max_cycles)``.
    """
    stall = PROFILES[profile]
    rng = random.Random(seed)
    if words is None:
        words = random_image(rng, top.rows, top.cols, top.max_window, packets)
    words = list(words) + list(trailer)
    image = decode_image(words, top.rows, top.cols, max_window=top.max_window)
    ports, others = stream_ports(top)
    sources = [SourceDriver(port, words, stall.idle, random.Random(rng.getrandbits(64)))
               for port in ports if port.into_design]
    sinks = [SinkDriver(port, stall.backpressure, random.Random(rng.getrandbits(64)))
             for port in ports if not port.into_design]
    held = [HeldInput("done", 1, random.Random(rng.getrandbits(64))),
            HeldInput("watchdog", 32, random.Random(rng.getrandbits(64)))]
    bench = ControlBench(ports, sources, sinks, ControlChecker(words, image), others, held)
    return bench, max_cycles_for(words, image)

