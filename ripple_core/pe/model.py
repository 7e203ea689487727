"""The ``pe`` FU kind's golden model: the configured operator of :mod:`ripple_core.ops`, fired
while micro-ops grant firings."""

from collections import deque

from hw.banked_memory import MemoryOp
from hw.golden import BankedMemoryModel
from hw.params import ParameterError
from ripple_core.ops import LOAD_VALUE, make_operator, wrap
from rsn.channels import Channel, UnitModel
from rsn.isa import IsaError

from .config import (
    BANK_OPS,
    LOCK_ENTRIES,
    MEM_WINDOW,
    N_SLOTS,
    REG_CONFIG,
    REG_CONST,
    REG_FAULT,
    REG_LOCKS,
    REG_ORIGIN,
    REG_PAGE,
    REG_QUEUE_DEPTH,
    REG_RING_WORDS,
    REG_SPILL_READS,
    REG_SPILL_WRITES,
    REG_STATUS,
    RIPPLE_OPS,
    SHARED_LOCK_OPS,
    SHARED_OPS,
    SHARED_QUEUE_WORDS,
    SPILL_COUNTER_BITS,
    STATUS_FAULT,
    WIDTH,
    WINDOW_WORDS,
    check_mem_depth,
    check_shared_words,
    decode_config,
)


class PeMemoryError(ValueError):
    """A LOAD or STORE outside the PE's memory bank, or on a PE without one: a program error.
    The message names the PE, the operator and the address."""


class _Node:
    """What an ops.py operator reads of its node."""

    def __init__(self, name: str, op: str, config: dict):
        self.name, self.op, self.inputs = name, op, [None] * N_SLOTS
        # ARB: one-token tuples from the three slots (an empty slot is an absent source), the
        # granted slot's number on port 1; TASK: one argument, ``ind`` is pred.
        self.attrs = {"pred": config["pred"], "cmp": config["cmp"], "width": 1, "sources": N_SLOTS,
                      "index": True, "ind": config["pred"]}


class _SlotView:
    """What an ops.py operator's ``plan`` reads of the slots: whether each has a token, and its
    value, through the model (an edge's channel or an armed constant). One per step, so a
    module-level class: building a class on every step made BFS's model run 2.2x slower."""

    __slots__ = ("_model", "_inputs")

    def __init__(self, model: "PeModel", inputs: list[Channel]):
        self._model, self._inputs = model, inputs

    def has(self, slot) -> bool:
        return self._model._has(self._inputs, slot)

    def peek(self, slot) -> int:
        return self._model._peek(self._inputs, slot)


class PeModel(UnitModel):
    """Golden model of the ``pe`` FU: the configured operator of :mod:`ripple_core.ops`, fired
    while micro-ops grant firings. One :meth:`step` is at most one firing (or one completion).

    Registers are those of the module docstring: ``write_word`` / ``read_word``. With a bank
    (``mem_depth`` words), LOAD reads and STORE writes ``memory[base + offset - origin]``; an
    address outside the bank raises :class:`PeMemoryError` (the RTL's fault bit never shows
    here, so status bit 4 and the fault register read 0). ``name`` names the PE in errors.

    With ``shared_words`` instead of a bank, LOAD and STORE reach flat address ``base + offset``
    of a memory shared with other units: a list of that many words, the model's own until
    :meth:`share_memory` hands it the fabric's (the fabric model does, for every unit with a
    memory port). An address outside it raises :class:`PeMemoryError`. ACQUIRE and RELEASE
    ask that memory's atomic directory (a :class:`hw.golden.BankedMemoryModel`, which the fabric
    model shares alike; the model's own until then): ACQUIRE fires when it is granted, RELEASE
    of an address nobody holds raises :class:`PeMemoryError`. A QUEUE there keeps up to
    :data:`SHARED_QUEUE_WORDS` words of its own and the rest in a ring of that memory, as the
    RTL does (:meth:`_step_shared_queue`); a spill queue that finds its ring full sets the fault
    (status bit 4, the fault register the address past the ring) and waits, as the RTL does.
    """

    KIND, COUNT_FIELD = "pe", "firings"

    def __init__(self, width: int = WIDTH, mem_depth: int = 0, ripple_ops: bool = True, *,
                 shared_words: int = 0, name: str = "pe"):
        super().__init__()
        self.ripple_ops = bool(ripple_ops)
        if width != WIDTH:
            raise ParameterError(f"PeModel: width={width!r}; the pe FU computes on {WIDTH} bits")
        self.mem_depth = check_mem_depth("PeModel", mem_depth)
        self.shared_words = check_shared_words("PeModel", shared_words)
        self.name = name
        self.memory = [0] * (mem_depth or shared_words)
        self.directory: BankedMemoryModel | None = None     # ACQUIRE/RELEASE: made or shared on use
        self.origin, self.page, self.queue_depth = 0, 0, 0
        self.ring_words = 0             # shared memory: the QUEUE's ring (from origin)
        self.word, self.constants, self.armed = 0, [0] * N_SLOTS, [False] * N_SLOTS
        self.left = 0
        self._configure(0)

    def _configure(self, word: int):
        self.word, self.config = word, decode_config(word)
        op = self.config["op"]
        if op in RIPPLE_OPS and not self.ripple_ops:
            raise PeMemoryError(f"{self.name}: configured as {op}, but this PE was built without Ripple's "
                                f"operators (ripple_ops=False; the fabric's [pe] ripple_ops)")
        if op in BANK_OPS and not self.mem_depth and not (self.shared_words and op in SHARED_OPS):
            reach = (f"{op} needs a private bank; with the shared memory a pe tile runs "
                     f"{', '.join(SHARED_OPS + SHARED_LOCK_OPS)}"
                     if self.shared_words else "this PE has no memory bank (mem_depth=0)")
            raise PeMemoryError(f"{self.name}: configured as {op}, but {reach}")
        if op in SHARED_LOCK_OPS and not self.shared_words:
            raise PeMemoryError(f"{self.name}: configured as {op}, which asks the shared memory's atomic "
                                f"directory, but this PE has no port to a shared memory (shared_words=0); "
                                f"with private banks LOCK serves one ACQUIRE and one RELEASE site")
        self.armed = [False] * N_SLOTS
        self.ring, self.spill_writes, self.spill_reads = deque(), 0, 0
        self.ring_head = self.ring_count = 0      # shared memory: the QUEUE's ring; self.ring its buffer
        self.fault = None
        self.locks: set[int] = set()
        self.operator = None if op in ("QUEUE", "LOCK", "LDST") + SHARED_LOCK_OPS else \
            make_operator(_Node(self.name, op, self.config))

    def _first_state(self) -> bool:
        op = self.config["op"]
        if op == "QUEUE":
            return not self.ring and not self.ring_count
        if op == "LOCK":
            return not self.locks
        return self.operator is None or self.operator.idle()

    def _window_word(self, addr: int) -> int | None:
        """The bank word a config address reaches, or None if it is not in the window."""
        if not self.mem_depth or not MEM_WINDOW <= addr < MEM_WINDOW + WINDOW_WORDS:
            return None
        return (self.page * WINDOW_WORDS + addr - MEM_WINDOW) % self.mem_depth

    def write_word(self, addr: int, value: int):
        value &= 0xFFFF_FFFF
        if addr == REG_CONFIG:
            self._configure(value)
        elif REG_CONST <= addr < REG_CONST + N_SLOTS:
            self.constants[addr - REG_CONST] = value
            self.armed[addr - REG_CONST] = True
        elif self.mem_depth and addr == REG_ORIGIN:
            self.origin = wrap(value)
        elif self.mem_depth and addr == REG_PAGE:
            self.page = value & 1
        elif self.mem_depth and addr == REG_QUEUE_DEPTH:
            self.queue_depth = min(value, self.mem_depth)
        elif self.shared_words and addr in (REG_ORIGIN, REG_QUEUE_DEPTH, REG_RING_WORDS):
            setattr(self, {REG_ORIGIN: "origin", REG_QUEUE_DEPTH: "queue_depth",
                           REG_RING_WORDS: "ring_words"}[addr], value)
        elif (word := self._window_word(addr)) is not None:
            self.memory[word] = value

    def read_word(self, addr: int) -> int:
        if addr == REG_CONFIG:
            return self.word
        if REG_CONST <= addr < REG_CONST + N_SLOTS:
            return self.constants[addr - REG_CONST]
        if addr == REG_STATUS:
            return (int(self._first_state()) | sum(int(a) << (k + 1) for k, a in enumerate(self.armed))
                    | (STATUS_FAULT if self.fault is not None else 0))
        if self.shared_words:
            wrap16 = (1 << SPILL_COUNTER_BITS) - 1
            registers = {REG_ORIGIN: self.origin, REG_QUEUE_DEPTH: self.queue_depth,
                         REG_RING_WORDS: self.ring_words, REG_FAULT: self.fault or 0,
                         REG_SPILL_WRITES: self.spill_writes & wrap16,
                         REG_SPILL_READS: self.spill_reads & wrap16}
            if addr in registers:
                return registers[addr]
        if self.mem_depth and addr == REG_ORIGIN:
            return self.origin & 0xFFFF_FFFF
        if self.mem_depth and addr == REG_PAGE:
            return self.page
        if self.mem_depth:
            wrap16 = (1 << SPILL_COUNTER_BITS) - 1
            counters = {REG_QUEUE_DEPTH: self.queue_depth, REG_SPILL_WRITES: self.spill_writes & wrap16,
                        REG_SPILL_READS: self.spill_reads & wrap16, REG_LOCKS: len(self.locks)}
            if addr in counters:
                return counters[addr]
        if (word := self._window_word(addr)) is not None:
            return self.memory[word]
        return 0

    def share_memory(self, memory: list[int], directory: BankedMemoryModel | None = None):
        """Reach ``memory`` (the fabric's shared words, a list other units hold too) and, for
        ACQUIRE and RELEASE, the atomic ``directory`` of that memory, shared alike."""
        if len(memory) != self.shared_words:
            raise ParameterError(f"{self.name}: the shared memory has {len(memory)} words, but this PE "
                                 f"was built for shared_words={self.shared_words}")
        self.memory = memory
        if directory is not None:
            self.directory = directory

    def _bank_word(self, address: int) -> int:
        """The bank word holding flat ``address``; raise :class:`PeMemoryError` if none does."""
        if self.shared_words:
            if not 0 <= address < self.shared_words:
                raise PeMemoryError(f"{self.name}: {self.config['op']} of address {address}, outside the "
                                    f"shared memory (addresses 0..{self.shared_words - 1})")
            return address
        word = address - self.origin
        if not 0 <= word < self.mem_depth:
            last = self.origin + self.mem_depth - 1
            raise PeMemoryError(f"{self.name}: {self.config['op']} of address {address}, outside the "
                                f"memory bank (flat addresses {self.origin}..{last}: origin "
                                f"{self.origin}, mem_depth {self.mem_depth})")
        return word

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        if self.current is None:
            if not self.uops:
                return False
            self.current = self.uops.popleft()
            self.left = self.current["firings"]
            if self.current.get("open"):
                self.open = self.finished = True    # as the RTL: finished once it is accepted
        if self.left == 0 and not self.open:
            if any(channel.can_pop() for channel in outputs):
                return False    # the RTL completes once its output registers are empty
            self.finished |= bool(self.current["last"])
            self.current = None
            return True
        op = self.config["op"]
        if op in ("QUEUE", "LOCK", "LDST") + SHARED_LOCK_OPS:
            return getattr(self, f"_step_{op.lower()}")(inputs, outputs)
        fire = self.operator.plan(_SlotView(self, inputs), None)
        if fire is None:
            return False
        out = fire.out
        if fire.load is not None:
            loaded = self.memory[self._bank_word(fire.load)]
            out = tuple((port, loaded if value is LOAD_VALUE else value) for port, value in out)
        emitted = [(port, value) for port, value in out if port not in self.config["drop"]]
        if not all(outputs[port].can_push() for port, _ in emitted):
            return False
        if fire.store is not None:
            address, value = fire.store
            self.memory[self._bank_word(address)] = value & 0xFFFF_FFFF
        self._take(inputs, fire.take)
        for port, value in emitted:
            outputs[port].push(value & 0xFFFF_FFFF)
        self.operator.commit(fire)
        return self._fired()

    # Slot access shared by every operator; then Ripple's queue, the atomic directory and the
    # shared array, as this module's docstring says.

    def _has(self, inputs, slot) -> bool:
        kind = self.config["slots"][slot]
        return inputs[slot].can_pop() if kind == "edge" else self.armed[slot]

    def _peek(self, inputs, slot) -> int:
        kind = self.config["slots"][slot]
        return wrap(inputs[slot].peek() if kind == "edge" else self.constants[slot])

    def _take(self, inputs, slots):
        for slot in slots:
            kind = self.config["slots"][slot]
            if kind == "edge":
                inputs[slot].pop()
            elif kind == "const":
                self.armed[slot] = False

    def _emit(self, outputs, port, value) -> bool:
        """Push ``value`` on ``port`` (dropped if the port discards); False if there is no room."""
        if port in self.config["drop"]:
            return True
        if not outputs[port].can_push():
            return False
        outputs[port].push(value & 0xFFFF_FFFF)
        return True

    def load(self, uops):
        """Queue micro-ops; an open one has no count and, never completing, must come last."""
        uops = list(uops)
        super().load(uops)
        queued = list(self.uops)
        for index, uop in enumerate(queued[:-1]):
            if uop.get("open"):
                raise IsaError(f"{self.name}: open micro-op #{index} never completes, so it must be the "
                               f"unit's last; {len(queued) - index - 1} more follow it")

    def check_uop(self, uop: dict):
        if uop.get("open"):
            if uop["firings"]:
                raise IsaError(f"pe micro-op open with firings={uop['firings']}: an open micro-op has no "
                               f"count, so firings must be 0")
            return
        super().check_uop(uop)

    def _fired(self) -> bool:
        self.firings += 1
        if not self.open:
            self.left -= 1
        return True

    @property
    def busy(self) -> bool:
        """Counted: a micro-op waits or runs. Open: the operator is out of its first state (the
        fabric model adds tokens in the unit's channels), as the RTL's ``busy``."""
        if self.open:
            return not self._first_state()
        return super().busy

    def _second_site_ready(self, inputs, outputs) -> bool:
        return self._has(inputs, 1) and self._has(inputs, 2) and \
            (1 in self.config["drop"] or outputs[1].can_push())

    def _step_queue(self, inputs, outputs) -> bool:
        if self.shared_words:
            return self._step_shared_queue(inputs, outputs)
        spill = self.config["pred"]
        limit = self.mem_depth if spill else self.queue_depth
        moved = False
        if self.ring and (0 in self.config["drop"] or outputs[0].can_push()):
            if spill and len(self.ring) > self.queue_depth:
                self.spill_reads += 1
            self._emit(outputs, 0, self.ring.popleft())
            moved = self._fired()
        if self._has(inputs, 0) and len(self.ring) < limit:
            if spill and len(self.ring) >= self.queue_depth:
                self.spill_writes += 1
            self.ring.append(self._peek(inputs, 0))
            self._take(inputs, [0])
            moved = True
        return moved

    def _step_shared_queue(self, inputs, outputs) -> bool:
        """QUEUE on the shared memory: ``self.ring`` is the buffer in the PE (the oldest words, at
        most ``L`` = min(max(depth, 1), SHARED_QUEUE_WORDS)), the newer ones are in the ring at
        ``memory[origin + i]``, i from ``ring_head``. A step dequeues, refills one word from the
        ring and takes one word in; a word goes to the buffer only when the ring is empty."""
        spill, buffer = self.config["pred"], self.ring
        limit = min(max(self.queue_depth, 1), SHARED_QUEUE_WORDS)
        moved = False
        if buffer and (0 in self.config["drop"] or outputs[0].can_push()):
            self._emit(outputs, 0, buffer.popleft())
            moved = self._fired()
        if self.ring_count and len(buffer) < limit:
            buffer.append(self.memory[self.origin + self.ring_head])
            self.ring_head = (self.ring_head + 1) % self.ring_words
            self.ring_count -= 1
            self.spill_reads += 1
            moved = True
        if not self._has(inputs, 0) or not (spill or len(buffer) + self.ring_count < self.queue_depth):
            return moved
        if not self.ring_count and len(buffer) < limit:
            buffer.append(self._peek(inputs, 0))
        elif self.ring_count < self.ring_words:
            tail = (self.ring_head + self.ring_count) % self.ring_words
            self.memory[self.origin + tail] = self._peek(inputs, 0)
            self.ring_count += 1
            self.spill_writes += 1
        else:
            if self.fault is None:
                self.fault = (self.origin + self.ring_words) & 0xFFFF_FFFF
            return moved            # the word waits, as in the RTL
        self._take(inputs, [0])
        return True

    def _step_lock(self, inputs, outputs) -> bool:
        if self._second_site_ready(inputs, outputs):
            address = self._peek(inputs, 1)
            if address not in self.locks:
                raise PeMemoryError(f"{self.name}: RELEASE of address {address}, which no ACQUIRE holds")
            self.locks.discard(address)
            self._take(inputs, [1, 2])
            self._emit(outputs, 1, 1)
            return self._fired()
        if not self._has(inputs, 0):
            return False
        address = self._peek(inputs, 0)
        if address in self.locks or len(self.locks) >= LOCK_ENTRIES:
            return False
        if not self._emit(outputs, 0, address):
            return False
        self.locks.add(address)
        self._take(inputs, [0])
        return self._fired()

    def _step_ldst(self, inputs, outputs) -> bool:
        if self._second_site_ready(inputs, outputs):
            word = self._ldst_word(self._peek(inputs, 1), "STORE")
            self.memory[word] = self._peek(inputs, 2) & 0xFFFF_FFFF
            self._take(inputs, [1, 2])
            self._emit(outputs, 1, 1)
            return self._fired()
        if not self._has(inputs, 0):
            return False
        word = self._ldst_word(self._peek(inputs, 0), "LOAD")
        if not self._emit(outputs, 0, self.memory[word]):
            return False
        self._take(inputs, [0])
        return self._fired()

    def _ldst_word(self, offset: int, site: str) -> int:
        if not 0 <= offset < self.mem_depth:
            raise PeMemoryError(f"{self.name}: LDST's {site} of word {offset}, outside the memory bank "
                                f"(words 0..{self.mem_depth - 1}; flat address {self.origin + offset})")
        return offset

    def _shared_lock(self, inputs, outputs, request) -> tuple[int, int] | None:
        """ACQUIRE or RELEASE on the shared directory: None if a slot is empty or port 0 has no
        room, else the address (checked against the memory) and the directory's answer."""
        if not all(self._has(inputs, slot) for slot in range(N_SLOTS)):
            return None
        if 0 not in self.config["drop"] and not outputs[0].can_push():
            return None
        address = self._peek(inputs, 0)
        self._bank_word(address)
        if self.directory is None:          # a PE on its own: a directory of its own
            self.directory = BankedMemoryModel(self.shared_words, 1, LOCK_ENTRIES)
        return address, self.directory.request(request, address)[0]

    def _step_acquire(self, inputs, outputs) -> bool:
        asked = self._shared_lock(inputs, outputs, MemoryOp.ACQUIRE)
        if asked is None or not asked[1]:
            return False                    # busy: the RTL asks again, the tokens stay
        self._take(inputs, range(N_SLOTS))
        self._emit(outputs, 0, asked[0])
        return self._fired()

    def _step_release(self, inputs, outputs) -> bool:
        asked = self._shared_lock(inputs, outputs, MemoryOp.RELEASE)
        if asked is None:
            return False
        if not asked[1]:
            raise PeMemoryError(f"{self.name}: RELEASE of address {asked[0]}, which no ACQUIRE holds")
        self._take(inputs, range(N_SLOTS))
        self._emit(outputs, 0, 1)
        return self._fired()
