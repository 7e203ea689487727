"""The ``pe`` FU in the cycle model (rsn/cycle_model.py): the PE's golden model decides what
fires, this skeleton says when.

A PE's timing depends on the values it sees (a STREAM's bound, a STEER's decider), so the
skeleton carries every token's value and runs the unit's golden model (:class:`PeModel`) once
per cycle on what is on offer at that cycle: at most one firing per cycle, as the RTL fires.
The numbers, from ripple_core/pe/rtl.py and hw/banked_memory.py:

* a firing's results are on offer the next cycle (``LATENCY``), in a one-token output
  register per port that a firing may refill in the cycle its token leaves;
* with a private bank, a LOAD's results follow one cycle later (``LOAD_LATENCY``, 2);
* on the shared memory a LOAD or STORE fires into the request register (no output room
  needed), the memory takes it the next cycle and answers :data:`hw.banked_memory.LATENCY`
  edges later, and the answer enters the output registers when every port it fills has room:
  without contention a LOAD's word (and its done token) is on offer in the fourth cycle after
  the firing's, a STORE's done token likewise, once the write has happened
  (:data:`SHARED_ACCESS_LATENCY`, counted as ``LATENCY`` and ``LOAD_LATENCY`` are).
  At most :data:`ANSWERS_IN_FLIGHT` answers wait (the port's credits and the request
  register); a firing beyond them waits.

Not modelled: bank conflicts (a request that waits for another port's grant; the banks'
conflict counters say how often it happened on the RTL), the private bank's catch register,
LDST, QUEUE and LOCK's own timing (they fire as plain operators here).
"""

from collections import deque

from hw.banked_memory import LATENCY as MEMORY_LATENCY
from rsn.cycle_model import FU_FINISH_DELAY, FuTiming, TimedFifo
from rsn.isa import REGISTERS

from .config import N_PORTS

__all__ = ["PeTiming", "SHARED_ACCESS_LATENCY", "PRIVATE_LOAD_LATENCY", "ANSWERS_IN_FLIGHT"]

# Cycles from a firing to its results on offer.
PRIVATE_LOAD_LATENCY = 2                      # ripple_core.pe.fu.LOAD_LATENCY: read port, output register
SHARED_ACCESS_LATENCY = 1 + MEMORY_LATENCY + 1  # request register, memory, output register
ANSWERS_IN_FLIGHT = 3 + 1                     # BankedMemory's default credits and the request register
MEMORY_OPS = ("LOAD", "STORE")


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
    """An output port seen as the golden model's channel: the output register, or, for a firing
    whose results come later (a LOAD, a STORE on the shared memory), that firing's answer."""

    def __init__(self, timing: "PeTiming", port: int):
        self.timing, self.port = timing, port

    def can_push(self) -> bool:
        timing = self.timing
        if timing.answer is not None:
            return len(timing.answers) < ANSWERS_IN_FLIGHT
        return timing.outputs[self.port].can_push(timing.cycle)

    def push(self, value: int):
        timing = self.timing
        if timing.answer is not None:
            timing.answer[self.port] = value
        else:
            timing.outputs[self.port].push(timing.cycle, value)

    def can_pop(self) -> bool:
        """Results still to leave: the golden model completes a micro-op only when none are."""
        timing = self.timing
        return bool(timing.outputs[self.port].items) or bool(timing.answers)


class PeTiming(FuTiming):
    """The timing of one pe tile; :meth:`prepare` gives it its golden model and configuration."""

    def __init__(self, uops, inputs):
        super().__init__(uops, inputs, TimedFifo(1, 1, registered_ready=False))
        self.outputs.append(TimedFifo(1, 1, registered_ready=False))
        assert len(self.outputs) == N_PORTS
        self.model = None
        self.cycle = 0
        self.answer = None                  # {port: value} of the access firing being planned
        self.answers = deque()              # (cycle it may enter the output registers, {port: value})
        self._inputs = [_Input(fifo) for fifo in inputs]
        self._outputs = [_Output(self, port) for port in range(N_PORTS)]

    def prepare(self, spec, tile, received, shared_words):
        """Build the tile's golden model, apply the image's configuration writes (they never
        overlap micro-ops in an assembled image) and share the preloaded memory."""
        from rsn.fu_kinds import fu_kind

        kind = fu_kind(spec.kind(tile))
        shared = {"shared_words": len(shared_words)} if shared_words is not None and kind.memory_port else {}
        self.model = kind.model(width=spec.data_width, **spec.parameters(kind.name).rtl_arguments(),
                                **shared, name=f"pe {tile}")
        if shared:
            self.model.share_memory(shared_words)
        for address, value in received.writes:
            if address < REGISTERS["firings"]:
                self.model.write_word(address, value)

    def busy(self, cycle: int) -> bool:
        """PeFu's ``active``: from the cycle after it takes a micro-op to the one after its
        completion (which waits for every result to leave)."""
        model = self.model
        return model is not None and (model.current is not None or bool(model.uops))

    def _delay(self) -> int | None:
        """Cycles from this firing to its answer entering the output registers, or None if its
        results go straight to them."""
        op = self.model.config["op"]
        if op not in MEMORY_OPS:
            return None
        if self.model.shared_words:
            return SHARED_ACCESS_LATENCY - 1
        return PRIVATE_LOAD_LATENCY - 1 if op == "LOAD" else None

    def step(self, cycle: int):
        if self.model is None:
            return
        self.cycle = cycle
        for channel in self._inputs:
            channel.cycle = cycle
        if self.answers and self.answers[0][0] <= cycle:
            _, values = self.answers[0]
            if all(self.outputs[port].can_push(cycle) for port in values):
                self.answers.popleft()
                for port, value in values.items():
                    self.outputs[port].push(cycle, value)
        model = self.model
        if model.current is None and not model.uops:
            # PeFu takes a micro-op only while idle, and fires from the next cycle on; a micro-op's
            # completion (a model step without a firing) is such a cycle of its own.
            if self.uops.valid(cycle):
                model.load([self.uops.pop(cycle)])
        else:
            firings, delay = model.firings, self._delay()
            self.answer = {} if delay is not None else None
            model.step(self._inputs, self._outputs)
            if model.firings != firings and delay is not None:
                self.answers.append((cycle + delay, self.answer))
            self.answer = None
        if self.model.finished and self.finished_at is None:
            self.finished_at = cycle + FU_FINISH_DELAY
