"""Two operators in one ``pe`` tile (``[pe] lanes = 2``): the golden model.

Most of a compiled graph's operators are control (STEER, CARRY, INVARIANT, ...), and one
operator per tile left ordered BFS needing 30 tiles. A two-lane tile runs two operators: lane 0
is the PE with the tile's memory, lane 1 a PE without memory. Both share the tile's three inputs
and two outputs through the port map (:data:`ripple_core.pe.config.PORT_MAP`): each lane slot
takes a tile input or the other lane's port, each tile output shows one lane port. A stream
between the two lanes never reaches the switch: the producing port fills a bypassing two-token
queue that the other lane's slot reads (docs/ripple.md, "Two operators per tile").

Micro-op: ``firings`` for lane 0, ``firings1`` for lane 1, or ``open`` for both; it completes
once both lanes have completed theirs. The tile's firing counter counts both lanes' firings.
"""

from rsn.channels import Channel, UnitModel
from rsn.isa import IsaError

from .config import (
    INTERNAL_QUEUE_DEPTH,
    LANE1_BASE,
    LANE_REGISTERS,
    N_PORTS,
    N_SLOTS,
    PORTS_IDENTITY,
    REG_PORTS,
    WIDTH,
    decode_port_map,
)
from .model import PeModel

__all__ = ["PairModel", "pe_model", "lane_register"]


def lane_register(lane: int, register: int) -> int:
    """The config address of lane ``lane``'s register ``register`` (0-4) in a two-lane tile."""
    if lane == 0:
        return register
    if not 0 <= register < LANE_REGISTERS:
        raise ValueError(f"lane 1 has registers 0..{LANE_REGISTERS - 1} (configuration, constants, "
                         f"status), not {register}; memory registers are lane 0's")
    return LANE1_BASE + register


class _Nowhere(Channel):
    """A slot nothing feeds: never a token."""

    def __init__(self, name):
        super().__init__(name, 0)


class PairModel(UnitModel):
    """Golden model of a two-lane ``pe`` tile: two :class:`PeModel` lanes behind the port map.

    ``lanes[0]`` has the memory (``mem_depth`` or ``shared_words``), ``lanes[1]`` none. Registers:
    lane 0's at their own addresses, lane 1's 0-4 at ``LANE1_BASE + r``, the port map at
    :data:`REG_PORTS`. ``internal[L][p]`` is the queue from lane L's port p to the other lane."""

    KIND, COUNT_FIELD = "pe", None

    def __init__(self, width: int = WIDTH, mem_depth: int = 0, ripple_ops: bool = True, *,
                 shared_words: int = 0, name: str = "pe"):
        super().__init__()
        self.name = name
        self.lanes = (PeModel(width, mem_depth, ripple_ops, shared_words=shared_words, name=f"{name} lane 0"),
                      PeModel(width, 0, ripple_ops, name=f"{name} lane 1"))
        # The producing lane's output register and the queue: INTERNAL_QUEUE_DEPTH + 1 tokens.
        self.internal = [[Channel(f"{name} lane {lane} o[{port}] -> lane {1 - lane}",
                                  INTERNAL_QUEUE_DEPTH + 1) for port in range(N_PORTS)] for lane in (0, 1)]
        self._wired = None          # (tile inputs, tile outputs, each lane's (inputs, outputs))
        self.ports_word = PORTS_IDENTITY
        self.ports = decode_port_map(PORTS_IDENTITY)

    # Registers

    def write_word(self, addr: int, value: int):
        if addr == REG_PORTS:
            self.ports_word = value & 0xFFFF_FFFF
            self.ports = decode_port_map(self.ports_word)
            self._wired = None
        elif LANE1_BASE <= addr < LANE1_BASE + LANE_REGISTERS:
            self.lanes[1].write_word(addr - LANE1_BASE, value)
        else:
            self.lanes[0].write_word(addr, value)

    def read_word(self, addr: int) -> int:
        if addr == REG_PORTS:
            return self.ports_word
        if LANE1_BASE <= addr < LANE1_BASE + LANE_REGISTERS:
            return self.lanes[1].read_word(addr - LANE1_BASE)
        return self.lanes[0].read_word(addr)

    def share_memory(self, memory, directory=None):
        self.lanes[0].share_memory(memory, directory)

    @property
    def memory(self):
        return self.lanes[0].memory

    # Micro-ops

    def check_uop(self, uop: dict):
        if uop.get("open"):
            if uop["firings"] or uop.get("firings1"):
                raise IsaError(f"{self.name}: an open micro-op has no count, so firings and firings1 must be "
                               f"0, not {uop['firings']} and {uop.get('firings1')}")
        elif uop["firings"] + uop.get("firings1", 0) < 1:
            raise IsaError(f"{self.name}: a micro-op granting no firing in either lane is not allowed")

    def load(self, uops):
        uops = list(uops)
        super().load(uops)
        queued = list(self.uops)
        for index, uop in enumerate(queued[:-1]):
            if uop.get("open"):
                raise IsaError(f"{self.name}: open micro-op #{index} never completes, so it must be the "
                               f"unit's last; {len(queued) - index - 1} more follow it")

    # Wiring

    def lane_inputs(self, lane: int, inputs: list[Channel]) -> list[Channel]:
        """The channels lane ``lane``'s slots read: a tile input, the other lane's queue, or
        nowhere (an empty channel)."""
        wired = [_Nowhere(f"{self.name} lane {lane} i[{slot}]") for slot in range(N_SLOTS)]
        for (owner, slot), (what, index) in self.ports["slots"].items():
            if owner == lane:
                wired[slot] = inputs[index] if what == "in" else self.internal[1 - lane][index]
        return wired

    def lane_outputs(self, lane: int, outputs: list[Channel]) -> list[Channel]:
        """The channels lane ``lane``'s ports fill: the other lane's queue if a slot of it reads the
        port, else the first tile output that shows the port, else nowhere."""
        wired = []
        for port in range(N_PORTS):
            if any(owner == 1 - lane and source == ("lane", port)
                   for (owner, _), source in self.ports["slots"].items()):
                wired.append(self.internal[lane][port])
                continue
            shown = [q for q, source in sorted(self.ports["outputs"].items()) if source == (lane, port)]
            # Shown nowhere: as the RTL, the port's output register takes one token and keeps it.
            wired.append(outputs[shown[0]] if shown else Channel(f"{self.name} lane {lane} o[{port}]", 1))
        return wired

    # Running

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.open = bool(self.current.get("open"))
            for lane, field in zip(self.lanes, ("firings", "firings1"), strict=True):
                if self.open or self.current.get(field, 0):
                    lane.load([{"firings": self.current.get(field, 0), "last": self.current["last"],
                                "open": int(self.open)}])
            if self.open:
                self.finished = True
        if self._wired is None or self._wired[0] is not inputs or self._wired[1] is not outputs:
            self._wired = (inputs, outputs, [(self.lane_inputs(lane, inputs),
                                              self.lane_outputs(lane, outputs)) for lane in (0, 1)])
        moved = False
        for index, lane in enumerate(self.lanes):
            before = lane.firings
            moved |= lane.step(*self._wired[2][index])
            self.firings += lane.firings - before
        if not self.open and all(lane.current is None and not lane.uops for lane in self.lanes):
            self.finished |= bool(self.current["last"])
            self.current = None
            moved = True
        return moved

    @property
    def busy(self) -> bool:
        """Counted: a micro-op waits or runs. Open: a lane is out of its first state or a token
        waits between the lanes (the fabric model adds the tile's own channels)."""
        if self.open:
            return any(lane.busy for lane in self.lanes) or \
                any(queue.tokens for queues in self.internal for queue in queues)
        return super().busy


def pe_model(width: int = WIDTH, mem_depth: int = 0, ripple_ops: bool = True, lanes: int = 1, *,
             shared_words: int = 0, name: str = "pe"):
    """The golden model of a ``pe`` tile with ``lanes`` operators (the kind's ``model``)."""
    model = PeModel if lanes == 1 else PairModel
    return model(width, mem_depth, ripple_ops, shared_words=shared_words, name=name)
