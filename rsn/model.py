"""The fabric's golden model: run a configuration image token by token.

The fabric is modelled as a network of processes, one per switch and per FU, joined by bounded
channels whose capacities are the hardware's buffers (a link's skid buffer, an FU input's token
queue). Each unit's behaviour comes from its own golden model (written from the contract, not
from the RTL); this module only wires them the way the fabric generator wires the hardware and
dispatches the image in order, blocking on full micro-op queues as the control chain does.

The fabric's shared memory (its ``[memory]`` table) is :attr:`FabricModel.memory`, a
:class:`hw.golden.BankedMemoryModel` that units with a memory port can share; the image's global
``mem_address`` / ``mem_data`` packets (rsn.control's Dispenser) preload and read it in image
order, one request at a time, as the dispenser does.

What comes out on the host ports is fixed by the program, not by timing, so the RTL must match it
exactly. So are the shared memory's per-bank access counts (:attr:`ModelResult.bank_accesses`):
every word a firing unit reads or writes there, and every ``mem_data`` request of the control
plane, counted from START like the RTL's bank counters (so a preload before START is not
counted). Stall counts and the banks' conflict cycles depend on timing and are not modelled;
nor, on the RTL, are a spill queue's ring traffic and an ACQUIRE's retries, so the counts are
exact only for programs whose memory traffic is LOADs and STOREs.

A deadlock raises :class:`DeadlockError` with the report of :mod:`rsn.hang_report`, made from
the same diagnostic registers the RTL bench reads after its watchdog fires (here computed from
the channels), so the two reports of one hang can be compared line by line.
"""

from collections import deque
from dataclasses import dataclass, field

from hw.banked_memory import MemoryOp
from hw.golden import BankedMemoryModel

from .channels import Channel
from .fabric_spec import DIRECTIONS, FabricSpec
from .faults import FaultyLink
from .fu_kinds import fu_kind
from .hang_report import STATUS_STALLED, TileSnapshot, diagnostic_addresses, hang_report
from .image import decode_image
from .isa import (
    BANK_COUNTERS,
    BANK_COUNTERS_BASE,
    GLOBAL_REGISTERS,
    REGISTERS,
    FuPortState,
    Opcode,
    SwitchPortState,
    SwitchUop,
    decode,
    encode,
)
from .switch_model import SwitchModel

__all__ = ["FabricModel", "ModelResult", "DeadlockError"]

_OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E"}
_LINK_CAPACITY = 2          # the SkidBuffer on every switch output


class DeadlockError(AssertionError):
    """No unit can move and the program has not finished; the message names the stuck units.

    ``report``: the :class:`rsn.hang_report.HangReport` of the tiles (None if the model gave up
    after ``max_steps`` instead)."""

    def __init__(self, message: str, report=None):
        super().__init__(message)
        self.report = report


@dataclass
class ModelResult:
    outputs: dict[str, list[int]]
    done: bool
    firings: dict[tuple[int, int], int]
    link_beats: dict[tuple[int, int], list[int]]
    reads: list[int] = field(default_factory=list)
    bank_accesses: list[int] | None = None      # per bank, since START (None: no shared memory)
    steps: int = 0      # unit steps that moved something: the run's length, for a livelock budget


class _CountedWords(list):
    """The shared memory's words, noting the bank of every word read or written, so that the
    fabric model counts only the accesses of steps that fire: a unit may read a LOAD's word while
    planning a firing that then waits for room at its output, which the hardware never requests."""

    def __init__(self, words, banks: int):
        super().__init__(words)
        self.banks = banks
        self.touched: list[int] = []

    def __getitem__(self, index):
        if isinstance(index, int):
            self.touched.append(index % self.banks)
        return super().__getitem__(index)

    def __setitem__(self, index, value):
        if isinstance(index, int):
            self.touched.append(index % self.banks)
        super().__setitem__(index, value)

    def count_into(self, accesses: list[int]):
        """Add what was touched since the last call to ``accesses`` (per bank), and forget it."""
        for bank in self.touched:
            accesses[bank] += 1
        self.touched.clear()


class _Tile:
    def __init__(self, spec: FabricSpec, tile):
        kind = fu_kind(spec.kind(tile))
        self.tile, self.kind = tile, kind
        self.switch = SwitchModel(kind.n_in, kind.n_out)
        shared = {"shared_words": spec.memory.words} if spec.memory is not None and kind.memory_port else {}
        self.fu = kind.model(width=spec.data_width, **spec.parameters(kind.name).rtl_arguments(), **shared)
        self.switch_used = self.fu_used = False
        self.counted = None         # (shared words, per-bank accesses) for a unit that shares them
        capacity = _LINK_CAPACITY + spec.queue_depth
        self.fu_in = [Channel(f"{tile} fu.i[{k}]", capacity) for k in range(kind.n_in)]
        self.fu_out = [Channel(f"{tile} fu.o[{k}]", 1) for k in range(kind.n_out)]
        self.switch_in: list[Channel] = []
        self.switch_out: list[Channel] = []

    def stop_after(self, steps: int):
        """An injected stop fault: the tile does no more than ``steps`` steps of work. Only such a
        tile counts its steps, so a fault-free run's steps stay as they were."""
        step, done = self.step, 0

        def stopping() -> bool:
            nonlocal done
            if done >= steps:
                return False
            moved = step()
            done += moved
            return moved
        self.step = stopping

    @property
    def finished(self) -> bool:
        return (not self.switch_used or self.switch.finished) and (not self.fu_used or self.fu.finished)

    @property
    def busy(self) -> bool:
        """As the RTL tile reports it: a unit is busy, or a link this switch drives holds a token
        (its output buffer; host channels stand for the host, not for a buffer). A FU running an
        open micro-op (``UnitModel.open``) is also busy while its channels hold a token."""
        if self.switch.busy or self.fu.busy:
            return True
        if any(channel.tokens for channel in self.switch_out[:len(DIRECTIONS)]
               if not channel.name.startswith("host ")):
            return True
        return self.fu.open and any(channel.tokens for channel in self.fu_in + self.fu_out)

    def step(self) -> bool:
        moved = self.switch.step(self.switch_in, self.switch_out)
        if self.counted is None:
            return self.fu.step(self.fu_in, self.fu_out) or moved
        words, accesses = self.counted
        words.touched.clear()
        firings = self.fu.firings
        stepped = self.fu.step(self.fu_in, self.fu_out)
        if self.fu.firings != firings:
            words.count_into(accesses)
        words.touched.clear()
        return stepped or moved


class FabricModel:
    """The golden model of the fabric described by ``spec``.

    ``memory``: the shared memory (None without a ``[memory]`` table), which the image's global
    ``mem_data`` packets write and read at the pointer ``memory_pointer`` (``mem_address``).
    """

    def __init__(self, spec: FabricSpec, *, max_steps: int = 10_000_000, faults=()):
        self.spec, self.max_steps = spec, max_steps
        self.faults = tuple(faults)     # rsn.faults.Fault: broken parts, for fault-injection runs
        memory = spec.memory
        self.memory = None if memory is None else \
            BankedMemoryModel(memory.words, memory.banks, memory.lock_entries)
        self.memory_pointer = 0
        self.bank_accesses = None if memory is None else [0] * memory.banks
        if memory is not None:
            self.memory.data = _CountedWords(self.memory.data, memory.banks)
        self.tiles = {tile: _Tile(spec, tile) for tile in spec.all_tiles()}
        for tile in spec.memory_tiles():         # their LOADs, STOREs and atomics reach the one memory
            self.tiles[tile].fu.share_memory(self.memory.data, directory=self.memory)
            self.tiles[tile].counted = (self.memory.data, self.bank_accesses)
        self.host_in: dict[str, Channel] = {}
        self.host_out: dict[str, Channel] = {}
        self._wire()

    def _wire(self):
        spec = self.spec
        links = {(tile, side): Channel(f"{tile}->{side}", _LINK_CAPACITY)
                 for tile in spec.all_tiles() for side in DIRECTIONS if spec.neighbour(tile, side)}
        self.faulty_links = []
        for fault in self.faults:
            if fault.side is not None:
                links[fault.tile, fault.side] = FaultyLink(links[fault.tile, fault.side], fault)
                self.faulty_links.append(links[fault.tile, fault.side])
            else:
                self.tiles[fault.tile].stop_after(fault.at)
        host_at = {(port.tile, port.side): port for port in spec.host_ports}
        for tile, unit in self.tiles.items():
            for side in DIRECTIONS:
                neighbour = spec.neighbour(tile, side)
                port = host_at.get((tile, side))
                if neighbour is not None:
                    unit.switch_in.append(links[neighbour, _OPPOSITE[side]])
                    unit.switch_out.append(links[tile, side])
                    continue
                incoming = Channel(f"{tile} {side} (no host port)", 0)
                outgoing = Channel(f"{tile} {side} (no host port)", 0)
                if port is not None and port.direction == "in":
                    incoming = self.host_in[port.name] = Channel(f"host {port.name}", 1 << 62)
                if port is not None and port.direction == "out":
                    outgoing = self.host_out[port.name] = Channel(f"host {port.name}", 1 << 62)
                unit.switch_in.append(incoming)
                unit.switch_out.append(outgoing)
            unit.switch_in += unit.fu_out
            unit.switch_out += unit.fu_in

    def _register(self, tile, address: int) -> int:
        if tile is None:
            if address == GLOBAL_REGISTERS["done"]:
                return int(self._done())
            bank, counter = divmod(address - BANK_COUNTERS_BASE, len(BANK_COUNTERS))
            if self.bank_accesses is not None and 0 <= bank < len(self.bank_accesses) \
                    and BANK_COUNTERS[counter] == "accesses":
                return self.bank_accesses[bank] & 0xFFFF_FFFF
            return 0        # cycles, watchdog and conflict cycles are timing: not modelled
        unit = self.tiles[tile]
        if address < REGISTERS["firings"] or unit.kind.is_status_register(address):
            return unit.fu.read_word(address) if hasattr(unit.fu, "read_word") else 0
        if address == REGISTERS["firings"]:
            return unit.fu.firings
        if address == REGISTERS["status"]:
            return int(unit.switch.finished) | (int(unit.fu.finished) << 1)
        if address == REGISTERS["fu_ports"]:
            return self._fu_ports(tile, unit)
        if address == REGISTERS["switch_ports"]:
            return self._switch_ports(unit)
        base = REGISTERS["link_beats"]
        if base <= address < base + len(unit.switch_out):
            return unit.switch.beats[address - base]
        return 0

    # The diagnostic registers, from the channels. The model has no cycles: a token that a
    # channel holds is one that waits (valid and not ready, in the RTL's terms), which is what
    # the RTL shows too once nothing has moved for the watchdog's limit. An FU input channel is
    # the switch output's skid buffer and the token queue behind it; the queue fills first.

    def _fu_ports(self, tile, unit) -> int:
        depth = self.spec.queue_depth
        queued = [min(len(channel.tokens), depth) for channel in unit.fu_in]
        expander = getattr(self, "_expanders", {}).get((tile, "fu"))
        return encode(FuPortState, {
            "queued": queued + [0] * (FuPortState["queued"].shape.length - len(queued)),
            "waiting": sum(1 << k for k, channel in enumerate(unit.fu_in) if channel.tokens),
            "blocked": sum(1 << k for k, channel in enumerate(unit.fu_out) if channel.tokens),
            "busy": int(unit.fu.busy or bool(expander)),
        })

    def _switch_ports(self, unit) -> int:
        depth, slots = self.spec.queue_depth, SwitchPortState["held"].shape.length
        held = [len(channel.tokens) if channel.capacity == _LINK_CAPACITY else 0
                for channel in unit.switch_out[:len(DIRECTIONS)]]
        held += [max(0, len(channel.tokens) - depth) for channel in unit.fu_in]
        return encode(SwitchPortState, {
            "held": held + [0] * (slots - len(held)),
            "blocked": sum(1 << j for j, count in enumerate(held) if count),
            "waiting": sum(1 << k for k, channel in enumerate(unit.switch_in) if channel.tokens),
        })

    def _snapshot(self, tile) -> TileSnapshot:
        """The diagnostic registers of ``tile`` as the RTL bench reads them after a stall: the
        status register's stalled bit is set on a busy tile, as the watchdog would."""
        unit = self.tiles[tile]
        values = {address: self._register(tile, address)
                  for address in diagnostic_addresses(self.spec, tile)}
        busy = unit.switch.busy or unit.fu.busy or any(self._expanders[tile, which]
                                                        for which in ("switch", "fu"))
        values[REGISTERS["status"]] |= STATUS_STALLED if busy else 0
        return TileSnapshot(self.spec, tile, values)

    def _done(self) -> bool:
        used = [unit for unit in self.tiles.values() if unit.switch_used or unit.fu_used]
        return bool(used) and all(unit.finished for unit in used) and not any(unit.busy for unit in used)

    def run(self, image: list[int], host_inputs: dict[str, list[int]] | None = None) -> ModelResult:
        """Execute ``image`` with ``host_inputs`` queued on the host ports; raise on deadlock.

        A host port is ``data_width`` wires, so each token is taken modulo 2^data_width, as the
        wire would (:func:`rsn.program.compile_program` refuses tokens that do not fit).
        """
        mask = (1 << self.spec.data_width) - 1
        given = dict.fromkeys(self.host_in, 0)
        for name, tokens in (host_inputs or {}).items():
            channel = self.host_in.get(name)
            if channel is None:
                known = ", ".join(self.host_in) or "none"
                raise ValueError(f"no host input port {name!r}; input ports: {known}")
            for token in tokens:
                channel.push(token & mask)
            given[name] = len(tokens)
        decoded = decode_image(image, self.spec.rows, self.spec.cols,
                               memory_words=None if self.memory is None else self.memory.words)
        packets = decoded.packets
        # Each unit's expander holds what is left of the last packet it took (see _dispatch).
        self._expanders = {(tile, unit): deque() for tile in self.tiles for unit in ("switch", "fu")}
        reads, position, delivered, steps = [], 0, 0, 0
        while True:
            moved = False
            while position < len(packets):
                delivered, complete = self._dispatch(packets[position], delivered, reads)
                moved |= delivered > 0 or complete
                if not complete:
                    break
                position, delivered = position + 1, 0
            moved |= self._drain_expanders()
            for unit in self.tiles.values():
                while unit.step():
                    moved = True
                    steps += 1
            if steps > self.max_steps:
                raise DeadlockError(f"no completion after {self.max_steps} steps: units still move, "
                                    f"so this is a livelock or a longer run than max_steps allows")
            if not moved:
                break
        if position < len(packets) or not self._done():
            report = self._report(decoded, given)
            raise DeadlockError(self._stuck(packets[position] if position < len(packets) else None,
                                            self._short_host_inputs(decoded, given), report), report)
        return ModelResult(
            outputs={name: list(channel.tokens) for name, channel in self.host_out.items()},
            done=self._done(),
            firings={tile: unit.fu.firings for tile, unit in self.tiles.items()},
            link_beats={tile: list(unit.switch.beats) for tile, unit in self.tiles.items()},
            reads=reads, bank_accesses=None if self.bank_accesses is None else list(self.bank_accesses),
            steps=steps)

    def _dispatch(self, packet, delivered: int, reads) -> tuple[int, bool]:
        """Hand ``packet`` to its target tiles in chain order, from target ``delivered`` on.

        A SWITCH or FU packet waits at a tile whose expander still holds an earlier packet: the
        control chain is blocked there, as in the hardware. Returns (targets served, complete).
        """
        chain = self.spec.chain_order()
        targets = sorted(packet.tiles(self.spec.rows, self.spec.cols), key=chain.index)
        opcode = packet.opcode
        while delivered < len(targets):
            tile = targets[delivered]
            unit = self.tiles[tile]
            if opcode in (Opcode.SWITCH, Opcode.FU):
                which = "switch" if opcode == Opcode.SWITCH else "fu"
                expander = self._expanders[tile, which]
                if expander:
                    return delivered, False
                layout = SwitchUop if which == "switch" else unit.kind.uop_layout
                expander.extend(decode(layout, body) for body in packet.bodies * packet.repeat)
                if which == "switch":
                    unit.switch_used = True
                else:
                    unit.fu_used = True
            elif opcode == Opcode.WRITE:
                for body in packet.bodies:
                    address, value = body & 0xFFFF, body >> 32
                    if address < REGISTERS["firings"]:
                        unit.fu.write_word(address, value)
            elif opcode == Opcode.READ:
                reads += [self._register(tile, body & 0xFFFF) for body in packet.bodies]
            delivered += 1
        if opcode == Opcode.READ and packet.is_global:
            reads += [self._global_read(body & 0xFFFF) for body in packet.bodies]
        elif opcode == Opcode.WRITE and packet.is_global:
            for body in packet.bodies:
                self._global_write(body & 0xFFFF, body >> 32)
        elif opcode == Opcode.START and self.bank_accesses is not None:
            self.bank_accesses[:] = [0] * len(self.bank_accesses)    # as the dispenser's clear does
        return delivered, True

    def _global_read(self, address: int) -> int:
        if address == GLOBAL_REGISTERS["mem_address"]:
            return self.memory_pointer
        if address == GLOBAL_REGISTERS["mem_data"]:
            self.memory.data.touched.clear()
            value, _fault = self.memory.request(MemoryOp.READ, self.memory_pointer)
            self.memory.data.count_into(self.bank_accesses)
            self.memory_pointer += 1
            return value
        return self._register(None, address)

    def _global_write(self, address: int, value: int):
        """A global WRITE body: decode_image has refused all but the memory registers."""
        if address == GLOBAL_REGISTERS["mem_address"]:
            self.memory_pointer = value
        elif address == GLOBAL_REGISTERS["mem_data"]:
            self.memory.data.touched.clear()
            self.memory.request(MemoryOp.WRITE, self.memory_pointer, value & 0xFFFF_FFFF)
            self.memory.data.count_into(self.bank_accesses)
            self.memory_pointer += 1

    def _drain_expanders(self) -> bool:
        """Expanders feed their units' micro-op queues as space frees up."""
        moved = False
        for (tile, which), expander in self._expanders.items():
            unit = self.tiles[tile].switch if which == "switch" else self.tiles[tile].fu
            while expander and len(unit.uops) < self.spec.uop_queue_depth:
                unit.load([expander.popleft()])
                moved = True
        return moved

    def _short_host_inputs(self, decoded, given: dict[str, int]) -> list[str]:
        """A line for each host input the host gave fewer tokens than its streams declare: the
        beats of the micro-ops of its tile's switch that read the port's side."""
        lines = []
        for port in self.spec.host_ports:
            if port.direction != "in":
                continue
            side = DIRECTIONS.index(port.side)
            declared = sum(uop["beats"] for uop in decoded.tile(*port.tile).switch_uops
                           if any(uop["enable"] >> output & 1 and selected == side
                                  for output, selected in enumerate(uop["select"])))
            if given[port.name] < declared:
                lines.append(f"  host input {port.name!r} is short: the host gave {given[port.name]} "
                             f"tokens, but the streams from it declare {declared} (the switch of tile "
                             f"{list(port.tile)} waits on side {port.side} for the other "
                             f"{declared - given[port.name]}); give the host input {declared} tokens")
        return lines

    def _report(self, decoded, given: dict[str, int]):
        """The hang report of the deadlocked state: every tile the image gives micro-ops to, the
        circuits its switch micro-ops make, and what each host input has left."""
        switch_uops, fu_uops = {}, {}
        for tile, unit in self.tiles.items():
            received = decoded.tile(*tile)
            if received.switch_bodies:
                switch_uops[tile] = received.switch_uops
            if received.fu_bodies:
                fu_uops[tile] = [decode(unit.kind.uop_layout, body) for body in received.fu_bodies]
        snapshots = {tile: self._snapshot(tile) for tile in set(switch_uops) | set(fu_uops)}
        host = {name: (given[name] - len(channel.tokens), given[name])
                for name, channel in self.host_in.items()}
        return hang_report(self.spec, switch_uops, fu_uops, snapshots, host)

    def _stuck(self, blocked_packet, causes=(), report=None) -> str:
        lines = ["the program deadlocked:", *causes]
        if blocked_packet is not None:
            lines.append(f"  dispatch blocked at {blocked_packet.describe()}: a target's expander "
                         f"still holds an earlier packet, its micro-op queue being full")
        lines += [f"  {line}" for line in (report.lines if report else [])]
        return "\n".join(lines)
