"""The ``pe`` FU in the cycle model (rsn/cycle_model.py): the PE's golden model decides what
fires, this skeleton says when.

A PE's timing depends on the values it sees (a STREAM's bound, a STEER's decider, an ARB's
round), so the skeleton carries every token's value and runs the unit's golden model
(:class:`PeModel`) once per cycle on what is on offer at that cycle: at most one firing per
cycle, as the RTL fires. Around it, this module keeps the PE's registers as
ripple_core/pe/rtl.py and ripple_core/pe/fu.py build them, and the shared memory's as
hw/banked_memory.py builds it. Every decision of a cycle is taken from the registers at its
start; the only combinational ready, an output register that the switch empties in the cycle
a firing refills it, is honoured because the switches step first.

* **Results**: a firing's results are on offer the next cycle (``LATENCY``), in a one-token
  output register per port. Room on a port: the register is empty or being emptied.
* **A private bank** (``mem_depth``): a LOAD's word, an LDST's loaded word and a QUEUE's
  dequeued word are read from the bank in the cycle after the firing and reach port 0's output
  register one cycle later (``LOAD_LATENCY``, 2), or a catch register if the output register
  is still full. Such a firing needs fewer than two words queued for port 0 (being read,
  caught, in the output register and not leaving); any other firing that emits on port 0
  needs none. A LOAD's done token on port 1 comes a cycle earlier, as any result. A QUEUE
  writes slot 0's token into its ring whenever the ring held fewer than its limit at the start
  of the cycle (not a firing; the dequeue is one). LDST and LOCK serve their second site first.
* **The shared memory** (a ``[memory]`` table): a LOAD, STORE or RELEASE fires into the PE's
  request register when that is empty or being taken (no output room needed); the memory takes
  a request when its port holds a credit (:data:`MEMORY_CREDITS` answers in flight or waiting)
  and its bank grants it: one request per bank per cycle, round robin over the ports from the
  one after the bank's last grant (port k is the k-th pe tile in chain order). The answer is on
  offer :data:`hw.banked_memory.LATENCY` cycles after the take, and the PE takes it, in request
  order, when every port it fills has room: a LOAD's word on port 0 and its done token on
  port 1, a STORE's and a RELEASE's done token on port 0. Without contention a LOAD's word is
  on offer in the fourth cycle after its firing (:data:`SHARED_ACCESS_LATENCY`). An ACQUIRE
  asks while its three tokens wait in their slots (one lock request in flight at a time): the
  bank's directory answers at the take, and on "granted" the ACQUIRE fires (and emits the
  address) when port 0 has room; on "busy" the answer is dropped and the PE asks again the
  cycle after. A QUEUE keeps up to :data:`SHARED_QUEUE_WORDS` words in a registered token
  queue in the PE (2 cycles from entry to offer) and the rest in its ring in the memory,
  written and read back through the same request register (reads first).
* **Micro-ops** (PeFu): taken while idle, firing from the next cycle; a counted one completes
  in the first cycle with all its firings done and nothing held (no output register full at
  the cycle's start, no bank word on its way, no request or answer of the shared memory
  outstanding), and ``finished`` rises the next cycle. An open micro-op finishes the cycle
  after it is taken, and the unit is then busy only while it holds work: a token at one of
  its inputs, a result held, or its operator out of its first state.
* **Two lanes** (``[pe] lanes = 2``, ripple_core/pe/lanes_rtl.py): each lane is the PE above
  (:class:`LaneTiming`; lane 0 with the tile's memory) with its own grant. The port map wires a
  lane's slots to the tile's input queues or to internal queues, and its ports to the tile's
  outputs or to output registers of its own; an internal port's output register empties into
  its bypassing two-token queue at the start of the cycle (the queue's ready is a register),
  so a token fired at cycle t can be taken by the other lane's firing at t+1. A counted
  micro-op completes once both grants are spent, neither lane holds anything and every
  internal queue is empty; open, the tile is busy also while an internal queue holds a token.

Not modelled: configuration writes and read-back through the window during a run (they never
overlap micro-ops in an assembled image), and a LOAD that reads a word another PE writes
between its firing and its grant (the golden model reads at the firing).
"""

import weakref
from collections import deque

from hw.banked_memory import LATENCY as MEMORY_LATENCY
from hw.banked_memory import MemoryOp
from hw.golden import BankedMemoryModel
from rsn.cycle_model import FU_FINISH_DELAY, FuTiming, TimedFifo, queue_latency
from rsn.isa import REGISTERS

from .config import (
    INTERNAL_QUEUE_DEPTH,
    LANE1_BASE,
    LANE_REGISTERS,
    N_PORTS,
    N_SLOTS,
    PORTS_IDENTITY,
    REG_PORTS,
    SHARED_QUEUE_WORDS,
    decode_port_map,
)
from .model import PeModel

__all__ = ["PeTiming", "LaneTiming", "SHARED_ACCESS_LATENCY", "PRIVATE_LOAD_LATENCY", "MEMORY_CREDITS"]

# Cycles from a firing to its results on offer.
PRIVATE_LOAD_LATENCY = 2                      # ripple_core.pe.fu.LOAD_LATENCY: read port, output register
SHARED_ACCESS_LATENCY = 1 + MEMORY_LATENCY + 1  # request register, memory, output register
MEMORY_CREDITS = 3                            # BankedMemory's default depth, as the fabric builds it
BANK_READS = ("LOAD", "QUEUE", "LDST")        # private bank: port 0's word comes from the bank
SHARED_ACCESSES = ("LOAD", "STORE", "RELEASE")  # shared memory: fire into the request register
_SHARED_MEMORIES = weakref.WeakValueDictionary()


class _Request:
    """One request to the shared memory and the answer the PE will take for it."""

    def __init__(self, op: MemoryOp, address: int, values: dict | None = None, refill=None):
        self.op, self.address = op, address
        self.values = {} if values is None else values   # port -> value the answer fills
        self.refill = refill        # a QUEUE's read of its ring: the word it brings back
        self.granted = 0            # ACQUIRE: the directory's answer


class _MemoryPort:
    """Port k of the shared memory as the memory sees it: the PE's request register, the
    credits' count and the answers in request order (cycle on offer, request)."""

    def __init__(self):
        self.request = None
        self.outstanding = 0
        self.answers = deque()

    def answer(self, cycle: int):
        """The answer on offer in ``cycle``, or None."""
        if self.answers and self.answers[0][0] <= cycle:
            return self.answers[0][1]
        return None

    def take(self) -> _Request:
        self.outstanding -= 1
        return self.answers.popleft()[1]


class _SharedMemory:
    """hw.banked_memory.BankedMemory's arbitration, credits and directory, for one fabric."""

    def __init__(self, spec, words: list[int]):
        self.preloaded = words      # keeps the key of _SHARED_MEMORIES alive with this object
        self.source = _TracedWords(words)
        self.banks, self.words = spec.memory.banks, spec.memory.words
        tiles = spec.memory_tiles()
        self.ports = {tile: _MemoryPort() for tile in tiles}
        self.order = [self.ports[tile] for tile in tiles]
        self.n_ports = len(tiles) + 1                   # the control plane's is the last
        self.last = [self.n_ports - 1] * self.banks     # port 0 first before any grant
        self.directory = BankedMemoryModel(self.words, self.banks, spec.memory.lock_entries)
        self.conflicts = [0] * self.banks
        self.cycle = None

    def arbitrate(self, cycle: int):
        """Which requests the memory takes in ``cycle``: from the registers at its start, so once
        per cycle, before any PE fires."""
        if self.cycle == cycle:
            return
        self.cycle = cycle
        wanting = {}
        for k, port in enumerate(self.order):
            request = port.request
            if request is None or port.outstanding >= MEMORY_CREDITS:
                continue
            if not 0 <= request.address < self.words:
                self._take(port, cycle)                 # out of range: answered with a fault
            else:
                wanting.setdefault(request.address % self.banks, []).append(k)
        for bank, ports in wanting.items():
            last = self.last[bank]
            chosen = min(ports, key=lambda k: (k - last - 1) % self.n_ports)
            self.last[bank] = chosen
            self.conflicts[bank] += len(ports) > 1
            self._take(self.order[chosen], cycle)

    def _take(self, port: _MemoryPort, cycle: int):
        request, port.request = port.request, None
        port.outstanding += 1
        if request.op in (MemoryOp.ACQUIRE, MemoryOp.RELEASE):
            answer, fault = self.directory.request(request.op, request.address)
            request.granted = answer or fault
        port.answers.append((cycle + MEMORY_LATENCY, request))


class _TracedWords(list):
    """The shared words, noting the address the golden model touched last (the request's)."""

    def __init__(self, words):
        super().__init__(words)
        self.touched = None

    def __getitem__(self, index):
        self.touched = index
        return super().__getitem__(index)

    def __setitem__(self, index, value):
        self.touched = index
        super().__setitem__(index, value)


class _Directory:
    """The golden model's view of the atomic directory, which the timed memory keeps: an ACQUIRE
    steps only with a "granted" answer on offer, and a RELEASE's answer comes later."""

    def request(self, op, address: int) -> tuple[int, int]:
        return 1, 0


class _TimedPeModel(PeModel):
    """The golden model with the RTL's gates: a slot counts as holding a token only while the
    timing lets the PE fire (a memory access needs its request register), and a QUEUE on the
    shared memory dequeues from the timing's buffer."""

    def __init__(self, timing: "LaneTiming", **arguments):
        super().__init__(**arguments)
        self.timing = timing

    def _has(self, inputs, slot) -> bool:
        return self.timing.gate(slot) and super()._has(inputs, slot)

    def _step_shared_queue(self, inputs, outputs) -> bool:
        return self.timing.dequeue(outputs)


class _Input:
    """A timed input queue seen as the golden model's channel, at the current cycle."""

    def __init__(self, fifo: TimedFifo):
        self.fifo, self.cycle = fifo, 0

    def can_pop(self) -> bool:
        return self.fifo.valid(self.cycle)

    def peek(self) -> int:
        return self.fifo.head()

    def pop(self) -> int:
        return self.fifo.pop(self.cycle)


class _Output:
    """An output port seen as the golden model's channel: the output register, the bank's read
    path to port 0, or the answer of the request a firing makes."""

    def __init__(self, timing: "LaneTiming", port: int):
        self.timing, self.port = timing, port

    def can_push(self) -> bool:
        return self.timing.room(self.port)

    def push(self, value: int):
        self.timing.emit(self.port, value)

    def can_pop(self) -> bool:
        """Results still to leave: the golden model completes a micro-op only when none are."""
        return self.timing.holding_now


class LaneTiming:
    """One PE's registers around its golden model: the whole of a one-lane tile but its
    micro-op queue, or one lane of a two-lane tile. ``slots``: the queues its slots read (the
    tile's inputs, the other lane's internal queues, or ones that never offer); ``outputs``: its
    ports' one-token output registers (the tile's outputs, or a lane's own)."""

    def __init__(self, slots, outputs):
        self.inputs, self.outputs = slots, outputs
        assert len(self.outputs) == N_PORTS
        self.model = None
        self.cycle = 0
        self.memory = self.port = None      # the shared memory and this PE's port to it
        self.directory = _Directory()
        self.reading = self.caught = None   # private bank: port 0's word being read, caught
        self.read_word = self.direct = None  # this cycle's firing: port 0's bank word / result
        self.queued0 = 0
        self.request = None                 # the request this cycle's firing makes
        self.outstanding = 0                # requests issued whose answers the PE has not taken
        self.waiting = False                # a lock request (ACQUIRE, RELEASE) in flight
        self.waiting_start = False          # ... at the start of the cycle
        self.lock_address = None            # a RELEASE's address, read as it fires
        self.holding_now = False
        self.open_gate = True
        self.queue_full = False
        # A QUEUE on the shared memory: the buffer in the PE, the ring's words and pointers.
        self.buffer = TimedFifo(SHARED_QUEUE_WORDS, queue_latency(SHARED_QUEUE_WORDS))
        self.ring, self.ring_head, self.ring_tail, self.refilling = deque(), 0, 0, 0
        self._inputs = [_Input(fifo) for fifo in slots]
        self._outputs = [_Output(self, port) for port in range(N_PORTS)]

    def build(self, spec, tile, arguments: dict, shared_words, name: str):
        """The lane's golden model; with ``shared_words`` (the preloaded shared memory, or None)
        it is the tile's port to that memory."""
        shared = {"shared_words": len(shared_words)} if shared_words is not None else {}
        self.model = _TimedPeModel(self, width=spec.data_width, **arguments, **shared, name=name)
        if shared:
            key = id(shared_words)
            memory = _SHARED_MEMORIES.get(key)
            if memory is None:
                memory = _SHARED_MEMORIES[key] = _SharedMemory(spec, shared_words)
            self.memory, self.port = memory, memory.ports[tile]
            self.model.share_memory(memory.source, self.directory)

    # ----------------------------------------------------------------------------------------
    # What the tile asks

    def _open(self) -> bool:
        model = self.model
        if model.current is None:
            return bool(model.uops) and bool(model.uops[0].get("open"))
        return model.open

    def _holding(self, cycle: int) -> bool:
        """The RTL's ``holding`` from the registers at the start of ``cycle``."""
        return (any(output.level(cycle) for output in self.outputs) or self.reading is not None
                or self.caught is not None or self.outstanding > 0)

    def _first_state(self, cycle: int) -> bool:
        if self.memory is not None and self.model.config["op"] == "QUEUE":
            return not self.ring and not self.refilling and not self.buffer.level(cycle)
        return self.model._first_state()

    def holds_work(self, cycle: int) -> bool:
        """A result held (or on its way) or the operator out of its first state."""
        return self._holding(cycle) or not self._first_state(cycle)

    def granted_all(self) -> bool:
        """The lane's micro-op grant is used up (or it had none): the RTL's ``left == 0``, from
        the start of the cycle."""
        model = self.model
        if model.current is None:
            return not model.uops
        return model.left == 0

    # ----------------------------------------------------------------------------------------
    # What the golden model asks, through its channels

    def gate(self, slot: int) -> bool:
        if slot == 0 and self.queue_full:
            return False
        return self.open_gate

    def room(self, port: int) -> bool:
        op = self.model.config["op"]
        if self.memory is not None and op in SHARED_ACCESSES:
            return True                     # the answer waits for room, not the firing
        if port == 0 and self.model.mem_depth:
            return self.queued0 < 2 if op in BANK_READS else self.queued0 == 0
        return self.outputs[port].can_push(self.cycle)

    def emit(self, port: int, value: int):
        op = self.model.config["op"]
        if self.memory is not None and op in SHARED_ACCESSES:
            self.request.values[port] = value
        elif port == 0 and self.model.mem_depth and op in BANK_READS:
            self.read_word = value
        elif port == 0 and self.model.mem_depth:
            self.direct = value
        else:
            self.outputs[port].push(self.cycle, value)

    def dequeue(self, outputs) -> bool:
        """A QUEUE on the shared memory fires: the buffer's head leaves on port 0."""
        if not self.buffer.valid(self.cycle):
            return False
        if 0 not in self.model.config["drop"] and not self.outputs[0].can_push(self.cycle):
            return False
        value = self.buffer.pop(self.cycle)
        if 0 not in self.model.config["drop"]:
            self.outputs[0].push(self.cycle, value & 0xFFFF_FFFF)
        return self.model._fired()

    # ----------------------------------------------------------------------------------------
    # One cycle

    def _enabled(self) -> bool:
        """PeFu's enable at the start of the cycle: a micro-op taken, with firings left or open."""
        model = self.model
        if model.current is None:
            return bool(model.uops)
        return model.open or model.left > 0

    def step(self, cycle: int, take=None):
        """One cycle; ``take(cycle)`` is called where an idle one-lane PE takes its micro-op."""
        model = self.model
        self.cycle = cycle
        for channel in self._inputs:
            channel.cycle = cycle
        op = model.config["op"]
        self.holding_now = self._holding(cycle)
        self.waiting_start = self.waiting
        enabled = self._enabled()
        staying = self.outputs[0].items         # after the switch's take: valid and not leaving
        self.queued0 = (self.reading is not None) + (self.caught is not None) + len(staying)
        self.queue_full = op == "QUEUE" and bool(model.mem_depth) and \
            len(model.ring) >= (model.mem_depth if model.config["pred"] else model.queue_depth)
        queue = None
        if self.memory is not None:
            self.memory.arbitrate(cycle)
            if op == "QUEUE":
                queue = self._queue_plan(cycle, enabled)
            else:
                self._take_answer(cycle, op)
        self.open_gate = self._may_fire(cycle, op)
        self.request, self.read_word, self.direct = None, None, None
        if model.current is None and not model.uops:
            # PeFu takes a micro-op only while idle, and fires from the next cycle on; a micro-op's
            # completion (a model step without a firing) is such a cycle of its own.
            if take is not None:
                take(cycle)
        else:
            if op in SHARED_ACCESSES and self.memory is not None:
                self.request = _Request(MemoryOp.READ, 0)
                model.memory.touched = None
                self.lock_address = self._slot(0)
            firings = model.firings
            model.step(self._inputs, self._outputs)
            if model.firings != firings:
                self._fired(op)
        if self.model.mem_depth:
            self._port0()
        if queue is not None:
            self._queue_update(cycle, queue)
        elif op == "ACQUIRE" and self.memory is not None:
            self._acquire_issue(enabled)

    def _may_fire(self, cycle: int, op: str) -> bool:
        """The firing rule's memory terms: the request register is free (LOAD, STORE), no lock
        request in flight (RELEASE), a "granted" answer on offer (ACQUIRE)."""
        if self.memory is None:
            return True
        if op in ("LOAD", "STORE"):
            return self.port.request is None
        if op == "RELEASE":
            return not self.waiting_start
        if op == "ACQUIRE":
            answer = self.port.answer(cycle)
            return answer is not None and bool(answer.granted)
        return True

    def _fired(self, op: str):
        if self.memory is None:
            return
        if op in SHARED_ACCESSES:
            model, request = self.model, self.request
            if op == "RELEASE":
                request.op, request.address = MemoryOp.RELEASE, self.lock_address
                self.waiting = True
            else:
                request.op = MemoryOp.WRITE if op == "STORE" else MemoryOp.READ
                request.address = model.memory.touched
            self.port.request = request
            self.outstanding += 1
        elif op == "ACQUIRE":
            self.port.take()                # the granted answer, taken as the ACQUIRE fires
            self.outstanding -= 1
            self.waiting = False

    def _take_answer(self, cycle: int, op: str):
        """The answer on offer, into the output registers when every port it fills has room (an
        ACQUIRE's "busy" at once; its "granted" when it fires)."""
        answer = self.port.answer(cycle)
        if answer is None:
            return
        if op == "ACQUIRE":
            if not answer.granted:
                self.port.take()
                self.outstanding -= 1
                self.waiting = False
            return
        drop = self.model.config["drop"]
        needs = (0,) if answer.op in (MemoryOp.WRITE, MemoryOp.RELEASE) else (0, 1)
        if not all(port in drop or self.outputs[port].can_push(cycle) for port in needs):
            return
        self.port.take()
        self.outstanding -= 1
        if answer.op == MemoryOp.RELEASE:
            self.waiting = False
        for port, value in answer.values.items():
            self.outputs[port].push(cycle, value)

    def _slot(self, slot: int):
        """Slot ``slot``'s front at the start of the cycle (None if it holds no token)."""
        model = self.model
        if not PeModel._has(model, self._inputs, slot):
            return None
        return model._peek(self._inputs, slot)

    def _acquire_issue(self, enabled: bool):
        """ACQUIRE asks while its tokens wait in their slots and no lock request is in flight."""
        if self.waiting_start or not enabled:
            return
        if any(self._slot(slot) is None for slot in range(N_SLOTS)):
            return
        self.port.request = _Request(MemoryOp.ACQUIRE, self._slot(0))
        self.outstanding += 1
        self.waiting = True

    def _port0(self):
        """Port 0 with a private bank: a firing's direct result, else the caught word, else the
        word read this cycle, into the output register if it is free; else the read word is
        caught. A word read by this cycle's firing is on the read port next cycle."""
        out, cycle = self.outputs[0], self.cycle
        if self.direct is not None:
            out.push(cycle, self.direct)
        elif not out.items:
            if self.caught is not None:
                out.push(cycle, self.caught)
                self.caught = None
            elif self.reading is not None:
                out.push(cycle, self.reading)
        elif self.reading is not None:
            self.caught = self.reading
        self.reading = self.read_word

    def _queue_plan(self, cycle: int, enabled: bool):
        """A QUEUE on the shared memory, from the registers at the cycle's start: whether slot 0's
        word goes to the buffer or to the ring, whether the ring's head is read back; the
        memory's answer on offer is always taken (a read's word into the buffer)."""
        model, port = self.model, self.port
        limit = min(max(model.queue_depth, 1), SHARED_QUEUE_WORDS)
        level = self.buffer.level(cycle)
        held = level + self.refilling
        ring_idle = not self.ring and not self.refilling
        word_in = enabled and self._slot(0) is not None
        has_room = model.config["pred"] or held + len(self.ring) < model.queue_depth
        request_free = port.request is None
        straight = ring_idle and level < limit
        direct = word_in and has_room and straight
        refill = bool(self.ring) and held < limit and request_free
        spill_write = (word_in and has_room and not straight and len(self.ring) < model.ring_words
                       and request_free and not refill)
        answer = port.answer(cycle)
        if answer is not None:
            port.take()
            self.outstanding -= 1
            if answer.refill is not None:
                self.buffer.push(cycle, answer.refill)
                self.refilling -= 1
        return direct, refill, spill_write

    def _queue_update(self, cycle: int, plan):
        direct, refill, spill_write = plan
        model, port = self.model, self.port
        if direct:
            self.buffer.push(cycle, self._take_word())
        if refill:
            port.request = _Request(MemoryOp.READ, model.origin + self.ring_head, refill=self.ring.popleft())
            self.ring_head = (self.ring_head + 1) % model.ring_words
            self.refilling += 1
            self.outstanding += 1
        if spill_write:
            self.ring.append(self._take_word())
            port.request = _Request(MemoryOp.WRITE, model.origin + self.ring_tail)
            self.ring_tail = (self.ring_tail + 1) % model.ring_words
            self.outstanding += 1

    def _take_word(self) -> int:
        value = self._slot(0)
        PeModel._take(self.model, self._inputs, [0])
        return value


_NEVER = TimedFifo(0, 0)    # a slot nothing feeds: never offers a token


class PeTiming(FuTiming):
    """The timing of one pe tile; :meth:`prepare` gives it its lanes (``[pe] lanes``), their
    golden models and their configuration.

    One lane: the tile's input queues are its slots and the tile's outputs its output registers.
    Two lanes (ripple_core/pe/lanes.py): lane 0 has the tile's memory, lane 1 none; the port map
    wires each lane slot to a tile input (the first slot that selects an input takes it) or to
    an internal queue, and each tile output to a lane's output register. A lane port that a slot
    of the other lane reads fills its own output register, which empties into that port's
    internal queue (``INTERNAL_QUEUE_DEPTH`` tokens, bypassing: on offer the cycle it enters,
    its ready a register); the move happens first in the cycle, so the lane may refill the
    register in the cycle it empties, and the other lane may take the token in that cycle.
    The micro-op grants each lane its firings (``firings``, ``firings1``) or opens both; a
    counted one completes in the first cycle in which both lanes have made theirs, neither holds
    anything and every internal queue is empty, all from the registers at the cycle's start.
    """

    def __init__(self, uops, inputs):
        super().__init__(uops, inputs, TimedFifo(1, 1, registered_ready=False))
        self.outputs.append(TimedFifo(1, 1, registered_ready=False))
        assert len(self.outputs) == N_PORTS
        self.lanes = ()
        self.links = []             # two lanes: (a lane's output register, its internal queue)
        self.active = self.open = self.last = False     # two lanes: the micro-op gate

    def prepare(self, spec, tile, received, shared_words):
        """Build the tile's lanes and their golden models, apply the image's configuration writes
        (they never overlap micro-ops in an assembled image) and share the preloaded memory.
        The fabric holds on to the tile's input and output queues before this: the lanes are
        wired to those very objects."""
        from rsn.fu_kinds import fu_kind

        kind = fu_kind(spec.kind(tile))
        shared = shared_words if kind.memory_port else None
        arguments = spec.parameters(kind.name).rtl_arguments()
        writes = [(address, value) for address, value in received.writes if address < REGISTERS["firings"]]
        if arguments.pop("lanes", 1) == 1:
            lane = LaneTiming(self.inputs, self.outputs)
            lane.build(spec, tile, arguments, shared, f"pe {tile}")
            for address, value in writes:
                lane.model.write_word(address, value)
            self.lanes = (lane,)
            return
        ports = PORTS_IDENTITY
        for address, value in writes:
            if address == REG_PORTS:
                ports = value
        self.lanes = self._wire(decode_port_map(ports))
        self.lanes[0].build(spec, tile, arguments, shared, f"pe {tile} lane 0")
        self.lanes[1].build(spec, tile, {**arguments, "mem_depth": 0}, None, f"pe {tile} lane 1")
        for address, value in writes:
            if LANE1_BASE <= address < LANE1_BASE + LANE_REGISTERS:
                self.lanes[1].model.write_word(address - LANE1_BASE, value)
            elif address != REG_PORTS:
                self.lanes[0].model.write_word(address, value)

    def _wire(self, ports: dict) -> tuple:
        """Two lanes behind the port map ``ports`` (:func:`decode_port_map`)."""
        queues = [[TimedFifo(INTERNAL_QUEUE_DEPTH, queue_latency(INTERNAL_QUEUE_DEPTH, "bypass"))
                   for _ in range(N_PORTS)] for _ in (0, 1)]
        slots, fed, internal = [[_NEVER] * N_SLOTS for _ in (0, 1)], set(), set()
        for (lane, slot), (what, index) in sorted(ports["slots"].items()):
            if what == "lane":
                slots[lane][slot] = queues[1 - lane][index]
                internal.add((1 - lane, index))
            elif index not in fed:          # a tile input feeds the first slot that selects it
                slots[lane][slot] = self.inputs[index]
                fed.add(index)
        outputs = [[None] * N_PORTS for _ in (0, 1)]
        for q, (lane, port) in sorted(ports["outputs"].items()):
            if (lane, port) not in internal and outputs[lane][port] is None:
                outputs[lane][port] = self.outputs[q]
        self.links = []
        for lane in (0, 1):
            for port in range(N_PORTS):
                if outputs[lane][port] is None:     # internal, or shown nowhere
                    outputs[lane][port] = TimedFifo(1, 1, registered_ready=False)
                if (lane, port) in internal:
                    self.links.append((outputs[lane][port], queues[lane][port]))
        return tuple(LaneTiming(slots[lane], outputs[lane]) for lane in (0, 1))

    # ----------------------------------------------------------------------------------------
    # What the fabric asks

    def busy(self, cycle: int) -> bool:
        """PeFu's ``busy``: counted, from taking a micro-op to its completion; open, while the
        tile holds work (a token at an input or between the lanes, a result held, an operator
        out of its first state)."""
        if not self.lanes:
            return False
        if len(self.lanes) == 1:
            lane = self.lanes[0]
            model = lane.model
            if model.current is None and not model.uops:
                return False
            if not lane._open():
                return True
        elif not self.open:
            return self.active
        return (any(fifo.valid(cycle) for fifo in self.inputs)
                or any(lane.holds_work(cycle) for lane in self.lanes)
                or any(queue.level(cycle) for _, queue in self.links))

    # ----------------------------------------------------------------------------------------
    # One cycle

    def step(self, cycle: int):
        if not self.lanes:
            return
        if len(self.lanes) == 1:
            lane = self.lanes[0]
            lane.step(cycle, self._take_one)
            if lane.model.finished and self.finished_at is None:
                self.finished_at = cycle + FU_FINISH_DELAY
            return
        # The output registers empty into the internal queues first, as the switch takes from a
        # tile output before the lanes step (the queue's ready is a register, the output
        # register's room combinational).
        for register, queue in self.links:
            if register.valid(cycle) and queue.can_push(cycle):
                queue.push(cycle, register.pop(cycle))
        active = self.active
        completes = (active and not self.open and all(lane.granted_all() for lane in self.lanes)
                     and not any(lane._holding(cycle) for lane in self.lanes)
                     and not any(queue.level(cycle) for _, queue in self.links))
        for lane in self.lanes:
            lane.step(cycle)
        if completes:
            self.active = False
            if self.last:
                self._finish(cycle)
        elif not active and self.uops.valid(cycle):
            self._take_pair(cycle)

    def _take_one(self, cycle: int):
        if self.uops.valid(cycle):
            uop = self.uops.pop(cycle)
            self.lanes[0].model.load([uop])
            if uop.get("open"):
                self.finished_at = cycle + FU_FINISH_DELAY

    def _take_pair(self, cycle: int):
        """Each lane gets its grant (none if 0), to fire from the next cycle on."""
        uop = self.uops.pop(cycle)
        self.active, self.open, self.last = True, bool(uop.get("open")), bool(uop["last"])
        for lane, field in zip(self.lanes, ("firings", "firings1"), strict=True):
            if self.open or uop.get(field, 0):
                lane.model.load([{"firings": uop.get(field, 0), "last": 0, "open": int(self.open)}])
        if self.open:
            self._finish(cycle)
