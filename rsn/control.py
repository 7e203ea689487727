"""The RSN control plane: a dispenser at the top and a control chain through the tiles.

Control words enter the fabric on ``ctrl`` and travel tile to tile (serpentine order: row 0
west to east, row 1 east to west, ...; every hop between neighbours) on the
**control chain**, a 32-bit stream with a register slice per hop, so no control signal fans out
to the whole grid and Fmax does not fall with the grid size. Every tile parses the packets going
by (:class:`PacketTracker`) and takes what targets it: micro-op bodies into its expanders, register
writes and reads onto its config bus. Read values return on the **readback chain**, a second
32-bit stream through the tiles in the same order, ending at the dispenser.

Timing, with no stalls (tile k is the k-th stop of the chain, from 0):

* one word per cycle through the dispenser and every tile; 1 cycle of latency through the
  dispenser and per hop (``chain_in`` -> ``chain_out``, ``readback_in`` -> ``readback_out``);
* a micro-op body leaves tile k's expander 2 + k cycles after its second word is taken on
  ``ctrl``; the first pass streams through at the chain's rate (a body per 2 cycles), replayed
  passes follow at one body per cycle;
* a READ value leaves ``readback`` tiles + 5 cycles after its body's second word is taken on
  ``ctrl``, whichever tile answers (config-bus strobe 1 cycle after the word reaches the tile,
  data the cycle after, then the rest of the readback chain); a tile reads at most once per 4
  cycles; a global value leaves 1 cycle after its body;
* tile k's ``clear`` pulses 2 + k cycles after the START header is taken on ``ctrl``; the
  dispenser's ``clear`` and its cycle counter reset, 1 cycle after.

The host's path into the fabric's shared memory (:class:`hw.banked_memory.BankedMemory`, whose
last port is the dispenser's, ``Dispenser(memory_words=...)``) is two global registers, reached
by WRITE and READ packets whose target masks are all zero: ``mem_address`` (0x0010), a word
pointer that a WRITE sets and a READ returns, and ``mem_data`` (0x0011), the word at the pointer,
which a WRITE writes and a READ reads, either moving the pointer on by one. Both block like the
rest of dispatch: a ``mem_data`` WRITE's second body word is taken in the cycle the memory
accepts its request (the bank writes at that edge, so anything later in the image sees the
word); a ``mem_data`` READ holds the chain until its answer is on ``readback``, in order with
every other read-back value. The memory's per-bank counters (accesses and conflict cycles) are
read-only global registers from 0x0020, two per bank (:func:`rsn.isa.bank_counter`), zeroed at
START. With no stalls and no bank conflict a preloaded word costs 2
cycles and a read word 4 (its answer leaves ``readback`` 3 cycles after the body's second word
is taken); the assembler preloads before START, so the cycle counter leaves the load out.

Dispatch is in order and blocking: a word moves on only once the tile has taken what it needs
from it. A micro-op body waits for its expander, which waits for the unit's micro-op queue, so a
unit that cannot drain its queue stops the whole chain, packets for other tiles included. An
image deadlocks if a unit's queue fills with micro-ops that cannot finish until another unit
receives micro-ops that come later in the image. The assembler must order packets so that no
unit is sent more micro-ops than its queue (plus the expander's 2-entry output slice) can hold
beyond what the units it waits on have already been sent; the golden model reproduces this
blocking, so an image that deadlocks in hardware deadlocks there too.
"""

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.banked_memory import MemoryOp, request_layout, response_layout
from hw.params import ParameterError, check_int
from hw.skid_buffer import elaborate_skid_pair

from .fu import MEMORY_META_BITS, ConfigBus
from .isa import (
    BANK_COUNTERS,
    BODY_BITS,
    GLOBAL_REGISTERS,
    MAX_COUNTED_BANKS,
    Header,
    Opcode,
    SwitchUop,
    bank_counter,
)

__all__ = ["WordKind", "ExpanderInput", "PacketTracker", "Expander", "TileControl", "Dispenser",
           "connect_control_chain", "MAX_WINDOW_LIMIT"]

WORD = unsigned(32)
MAX_WINDOW_LIMIT = 31           # the header's window field is 5 bits


def _check_max_window(component: str, max_window) -> int:
    check_int(component, "max_window", max_window, minimum=1,
              meaning="micro-op bodies a packet's window may hold")
    if max_window > MAX_WINDOW_LIMIT:
        raise ParameterError(f"{component}: max_window={max_window} is not allowed; the header's "
                             f"window field holds at most {MAX_WINDOW_LIMIT}")
    return max_window


class WordKind(enum.Enum, shape=2):
    """What the word on offer is, within its packet."""
    HEADER = 0
    TARGET = 1
    BODY_LOW = 2        # first (least significant) word of a body
    BODY_HIGH = 3


# One micro-op body for an expander, with what it needs to know of its packet.
ExpanderInput = data.StructLayout({
    "body": unsigned(BODY_BITS),
    "window_end": 1,                # the last body of the packet's window
    "repeat": 16,                   # the packet's repeat count (0 acts as 1)
})


class PacketTracker(wiring.Component):
    """Follows packet boundaries in a word stream, so that every chain stop parses on its own.

    ``kind`` says what the word on offer is; ``header`` is the current packet's header (valid
    from its target word on); ``window_end`` marks the words of its last body. ``step`` is high
    in a cycle where the word on offer is taken.
    """

    def __init__(self):
        super().__init__({
            "word": In(WORD),
            "step": In(1),
            "kind": Out(WordKind),
            "header": Out(Header),
            "window_end": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        body_at = Signal(range(MAX_WINDOW_LIMIT))
        window = self.header.window
        m.d.comb += self.window_end.eq(body_at + 1 == window)
        with m.If(self.step):
            with m.Switch(self.kind):
                with m.Case(WordKind.HEADER):
                    m.d.sync += [self.header.eq(self.word), self.kind.eq(WordKind.TARGET)]
                with m.Case(WordKind.TARGET):
                    m.d.sync += [body_at.eq(0),
                                 self.kind.eq(Mux(window == 0, WordKind.HEADER, WordKind.BODY_LOW))]
                with m.Case(WordKind.BODY_LOW):
                    m.d.sync += self.kind.eq(WordKind.BODY_HIGH)
                with m.Case(WordKind.BODY_HIGH):
                    m.d.sync += [body_at.eq(body_at + 1),
                                 self.kind.eq(Mux(self.window_end, WordKind.HEADER, WordKind.BODY_LOW))]
        return m


class Expander(wiring.Component):
    """Replays a packet's window of micro-op bodies ``repeat`` times, so the chain carries it once.

    The first pass goes straight through (and into the window buffer); the other ``repeat - 1``
    passes are read back from the buffer at one body per cycle, during which no new body is
    taken. A window longer than ``max_window`` is refused by the assembler; here its excess
    bodies overwrite the buffer's last entry.

    Members
    -------
    i : In(stream.Signature(ExpanderInput))
    o : Out(stream.Signature(layout))
    """

    def __init__(self, layout, max_window: int = 8):
        self._layout = layout
        self.max_window = _check_max_window("Expander", max_window)
        super().__init__({
            "i": In(stream.Signature(ExpanderInput)),
            "o": Out(stream.Signature(layout)),
        })

    def replays(self, repeat):
        """Passes to read back from the buffer after the pass-through one."""
        return Mux(repeat > 1, repeat - 1, 0)

    def elaborate(self, platform):
        m = Module()
        depth = self.max_window
        m.submodules.window = window = Memory(shape=unsigned(BODY_BITS), depth=depth, init=[])
        write = window.write_port()
        read = window.read_port()       # synchronous; keeps its data while `en` is low

        emit = stream.Signature(unsigned(BODY_BITS)).create(path=("emit",))
        elaborate_skid_pair(m, emit, self.o, unsigned(BODY_BITS))

        replaying = Signal()
        fill_at = Signal(range(depth))
        last_at = Signal(range(depth))          # the window's last body in the buffer
        replay_at = Signal(range(depth))
        passes_left = Signal(16)                # passes still to read from the buffer
        held = Signal()                         # the read port holds a body not yet emitted

        body = self.i.payload.body
        taken = self.i.valid & self.i.ready
        m.d.comb += [write.addr.eq(fill_at), write.data.eq(body), write.en.eq(taken),
                     read.addr.eq(replay_at)]

        with m.If(~replaying):
            m.d.comb += [self.i.ready.eq(emit.ready), emit.valid.eq(self.i.valid),
                         emit.payload.eq(body)]
            with m.If(taken & self.i.payload.window_end):
                passes = self.replays(self.i.payload.repeat)
                m.d.sync += [fill_at.eq(0), last_at.eq(fill_at), replay_at.eq(0),
                             passes_left.eq(passes), replaying.eq(passes != 0)]
            with m.Elif(taken & (fill_at != depth - 1)):
                m.d.sync += fill_at.eq(fill_at + 1)
        with m.Else():
            issue = (passes_left != 0) & (~held | emit.ready)
            m.d.comb += [read.en.eq(issue), emit.valid.eq(held), emit.payload.eq(read.data)]
            with m.If(issue):
                m.d.sync += held.eq(1)
                with m.If(replay_at == last_at):
                    m.d.sync += [replay_at.eq(0), passes_left.eq(passes_left - 1)]
                with m.Else():
                    m.d.sync += replay_at.eq(replay_at + 1)
            with m.Elif(~held | emit.ready):
                # Nothing left to issue and the last body is gone (or going): take bodies again.
                m.d.sync += [held.eq(0), replaying.eq(0)]
        return m


class TileControl(wiring.Component):
    """One tile's stop on the control chain: takes the packets that target ``(row, col)``.

    SWITCH and FU bodies go to the tile's two expanders; WRITE bodies become config-bus writes,
    READ bodies config-bus reads whose values join the readback chain; a START header (whatever
    its target) pulses ``clear``. Every word is forwarded, once taken; upstream readback values
    are forwarded too.

    Members
    -------
    chain_in, chain_out : In/Out(stream.Signature(32))
    readback_in, readback_out : In/Out(stream.Signature(32))
    switch_uop : Out(stream.Signature(SwitchUop))
    fu_uop : Out(stream.Signature(unsigned(64)))    the tile casts it to its FU's layout
    cfg : Out(ConfigBus)
    clear : Out(1)
    """

    def __init__(self, row: int, col: int, max_window: int = 8):
        for name, value in (("row", row), ("col", col)):
            check_int("TileControl", name, value, minimum=0, meaning="tile coordinate, 0..15")
            if value > 15:
                raise ParameterError(f"TileControl: {name}={value} is not allowed; masks have 16 bits, "
                                     f"so a coordinate is 0..15")
        self.row, self.col = row, col
        self.max_window = _check_max_window("TileControl", max_window)
        super().__init__({
            "chain_in": In(stream.Signature(WORD)),
            "chain_out": Out(stream.Signature(WORD)),
            "readback_in": In(stream.Signature(WORD)),
            "readback_out": Out(stream.Signature(WORD)),
            "switch_uop": Out(stream.Signature(SwitchUop)),
            "fu_uop": Out(stream.Signature(unsigned(BODY_BITS))),
            "cfg": Out(ConfigBus),
            "clear": Out(1),
        })

    def make_expander(self, layout) -> Expander:
        return Expander(layout, self.max_window)

    def elaborate(self, platform):
        m = Module()
        m.submodules.packet = packet = PacketTracker()
        m.submodules.switch_expander = switch = self.make_expander(SwitchUop)
        m.submodules.fu_expander = fu = self.make_expander(unsigned(BODY_BITS))
        wiring.connect(m, switch.o, wiring.flipped(self.switch_uop))
        wiring.connect(m, fu.o, wiring.flipped(self.fu_uop))

        forward = stream.Signature(WORD).create(path=("forward",))
        elaborate_skid_pair(m, forward, self.chain_out, WORD)

        word = self.chain_in.payload
        selected = Signal()             # this tile is a target of the current packet
        low_word = Signal(32)
        opcode = packet.header.opcode
        mine = (packet.kind == WordKind.BODY_HIGH) & selected
        to_switch = mine & (opcode == Opcode.SWITCH)
        to_fu = mine & (opcode == Opcode.FU)
        is_write = mine & (opcode == Opcode.WRITE)
        is_read = mine & (opcode == Opcode.READ)
        read_busy = self._elaborate_readback(m)

        local_ready = ~((to_switch & ~switch.i.ready) | (to_fu & ~fu.i.ready) | (is_read & read_busy))
        accepted = self.chain_in.valid & self.chain_in.ready
        m.d.comb += [
            forward.payload.eq(word),
            forward.valid.eq(self.chain_in.valid & local_ready),
            self.chain_in.ready.eq(forward.ready & local_ready),
            packet.word.eq(word),
            packet.step.eq(accepted),
        ]
        for expander, wanted in ((switch, to_switch), (fu, to_fu)):
            m.d.comb += [
                expander.i.valid.eq(self.chain_in.valid & forward.ready & wanted),
                expander.i.payload.body.eq(Cat(low_word, word)),
                expander.i.payload.window_end.eq(packet.window_end),
                expander.i.payload.repeat.eq(packet.header.repeat),
            ]

        with m.If(accepted):
            with m.Switch(packet.kind):
                with m.Case(WordKind.TARGET):
                    m.d.sync += selected.eq(word[self.row] & word[16 + self.col])
                with m.Case(WordKind.BODY_LOW):
                    m.d.sync += low_word.eq(word)
                with m.Case(WordKind.BODY_HIGH):
                    m.d.sync += [self.cfg.addr.eq(low_word[:16]), self.cfg.data.eq(word)]
        starts = accepted & (packet.kind == WordKind.HEADER) & (Header(word).opcode == Opcode.START)
        m.d.sync += [
            self.cfg.write.eq(accepted & is_write),
            self.cfg.read.eq(accepted & is_read),
            self.clear.eq(starts),
        ]
        return m

    def _elaborate_readback(self, m) -> Signal:
        """Forward the readback chain and insert this tile's read values; return "read busy"."""
        merged = stream.Signature(WORD).create(path=("merged",))
        elaborate_skid_pair(m, merged, self.readback_out, WORD)
        awaiting = Signal()             # read data is on cfg.rdata this cycle
        value = Signal(32)
        value_valid = Signal()
        m.d.sync += awaiting.eq(self.cfg.read)
        with m.If(awaiting):
            m.d.sync += [value.eq(self.cfg.rdata), value_valid.eq(1)]
        with m.Elif(merged.ready):
            m.d.sync += value_valid.eq(0)
        m.d.comb += [
            merged.valid.eq(value_valid | self.readback_in.valid),
            merged.payload.eq(Mux(value_valid, value, self.readback_in.payload)),
            self.readback_in.ready.eq(merged.ready & ~value_valid),
        ]
        return self.cfg.read | awaiting | value_valid


class Dispenser(wiring.Component):
    """The control plane's entry: feeds the control chain, answers global reads, paces READs.

    Every ``ctrl`` word is forwarded to the chain. A READ with all-zero target masks reads the
    global registers (cycle counter, ``done``, ``watchdog``); its values are sampled when the
    body's second word is taken and go straight to ``readback``. After a READ to a tile, the next
    packet's header waits until all ``window`` values have come back on ``readback_chain``: one
    READ in flight at a time, so values reach the host in order. START zeroes ``cycles`` and
    starts it counting.

    With ``memory_words`` > 0 the dispenser owns the last port of the fabric's shared memory
    (:class:`hw.banked_memory.BankedMemory`; ``meta`` is always 0) and has two more global
    registers, reached by packets whose target masks are all zero:

    * ``mem_address``: a 32-bit word pointer. A WRITE body sets it (in the cycle its second
      word is taken, with no wait); a READ body returns it. START leaves it alone.
    * ``mem_data``: the word at the pointer. A WRITE body makes a WRITE request of its value at
      the pointer, a READ body a READ request; either moves the pointer on by one.

    With ``memory_banks`` > 0 it also shows the memory's per-bank counters (``bank_accesses``,
    ``bank_conflicts``, from :class:`~hw.banked_memory.BankedMemory`) as read-only global
    registers: bank b's at :func:`rsn.isa.bank_counter` (``BANK_COUNTERS_BASE + 2 * b`` and
    ``+ 1``), read like the cycle counter. The fabric zeroes them with ``clear`` (START).

    Both memory registers are blocking, like the rest of dispatch. The second word of a
    ``mem_data`` WRITE body is taken in the very cycle the memory accepts its request, and a
    bank writes at that edge, so
    whatever comes later in the image (a PE's LOAD) sees the word; the write's answer is taken
    and dropped. A ``mem_data`` READ's second word is taken when its request is accepted, and
    then no ``ctrl`` word is taken until the answer has gone to ``readback``'s output register,
    in order with every other read-back value. A pointer at or beyond the memory's words makes
    the memory answer a fault (a READ gives 0, a WRITE changes nothing); the image check
    (:func:`rsn.image.decode_image`) refuses such images. Global WRITEs to other addresses
    reach no register (the image check refuses them).

    Timing with no stalls and no bank conflict (testbench/rsn/test_dispenser_memory.py measures
    it): a preloaded word takes 2 cycles (its two body words, taken back to back, one word per
    cycle as any packet); a read word 4: its request goes with the body's second word at cycle
    t, the answer is taken from the memory at t+2 and is on ``readback`` at t+3, when the next
    body's first word is taken. A packet adds its header and target words.

    Members
    -------
    ctrl : In(stream.Signature(32))             from the host
    chain : Out(stream.Signature(32))           to tile (0, 0)
    readback_chain : In(stream.Signature(32))   from the last tile
    readback : Out(stream.Signature(32))        to the host
    done : In(1)
    watchdog : In(32)
    cycles : Out(32)                            cycles since the last START (0 before any), frozen while done
    clear : Out(1)                              START: pulsed 1 cycle after its header
    mem_req : Out(stream.Signature(request_layout(32, MEMORY_META_BITS)))     (memory_words > 0)
    mem_resp : In(stream.Signature(response_layout(32, MEMORY_META_BITS)))    (memory_words > 0)
    bank_accesses, bank_conflicts : In(32).array(memory_banks)                (memory_banks > 0)
    """

    def __init__(self, memory_words: int = 0, memory_banks: int = 0):
        self.memory_words = check_int("Dispenser", "memory_words", memory_words, minimum=0,
                                      meaning="words of the shared memory (0: none)")
        self.memory_banks = check_int("Dispenser", "memory_banks", memory_banks, minimum=0,
                                      meaning="banks of the shared memory whose counters it shows")
        if memory_banks > MAX_COUNTED_BANKS or (memory_banks and not memory_words):
            raise ParameterError(f"Dispenser: memory_banks={memory_banks} is not allowed; it must be "
                                 f"0..{MAX_COUNTED_BANKS}, and 0 without a shared memory")
        members = {
            "ctrl": In(stream.Signature(WORD)),
            "chain": Out(stream.Signature(WORD)),
            "readback_chain": In(stream.Signature(WORD)),
            "readback": Out(stream.Signature(WORD)),
            "done": In(1),
            "watchdog": In(32),
            "cycles": Out(32),
            "clear": Out(1),
        }
        if memory_words:
            members["mem_req"] = Out(stream.Signature(request_layout(32, MEMORY_META_BITS)))
            members["mem_resp"] = In(stream.Signature(response_layout(32, MEMORY_META_BITS)))
        if memory_banks:
            members["bank_accesses"] = In(32).array(memory_banks)
            members["bank_conflicts"] = In(32).array(memory_banks)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.packet = packet = PacketTracker()
        forward = stream.Signature(WORD).create(path=("forward",))
        elaborate_skid_pair(m, forward, self.chain, WORD)
        answers = stream.Signature(WORD).create(path=("answers",))
        elaborate_skid_pair(m, answers, self.readback, WORD)

        word = self.ctrl.payload
        opcode = packet.header.opcode
        global_target = Signal()        # the current packet's target masks are all zero
        address = Signal(16)
        outstanding = Signal(range(MAX_WINDOW_LIMIT + 1))   # tile read values still to come back
        running = Signal()

        global_body = (packet.kind == WordKind.BODY_HIGH) & global_target
        answers_here = global_body & (opcode == Opcode.READ)
        waiting = (packet.kind == WordKind.HEADER) & (outstanding != 0)
        accepted = self.ctrl.valid & self.ctrl.ready
        returned = self.readback_chain.valid & self.readback_chain.ready
        if self.memory_words:
            memory = _MemoryPort(self, m, global_body, address, word, opcode, accepted, forward)
            answers_here = answers_here & ~memory.at_data & ~memory.waiting
            local_ready = ~waiting & ~memory.waiting & ~(answers_here & ~answers.ready) & ~memory.blocked
            global_value = self._global_value(m, address, memory.pointer)
            tile_valid, tile_payload = memory.answer(answers, self.readback_chain)
            chain_ready = answers.ready & ~answers_here & ~memory.waiting
        else:
            local_ready = ~waiting & ~(answers_here & ~answers.ready)
            global_value = self._global_value(m, address)
            tile_valid, tile_payload = self.readback_chain.valid, self.readback_chain.payload
            chain_ready = answers.ready & ~answers_here
        m.d.comb += [
            forward.payload.eq(word),
            forward.valid.eq(self.ctrl.valid & local_ready),
            self.ctrl.ready.eq(forward.ready & local_ready),
            packet.word.eq(word),
            packet.step.eq(accepted),
            # While a global READ body is on offer its value has the readback slot; tile values
            # cannot be arriving then (none is outstanding), so `ready` need not look at `valid`.
            answers.valid.eq(Mux(answers_here, self.ctrl.valid & forward.ready, tile_valid)),
            answers.payload.eq(Mux(answers_here, global_value, tile_payload)),
            self.readback_chain.ready.eq(chain_ready),
        ]

        issued = Signal(range(MAX_WINDOW_LIMIT + 1))
        with m.If(accepted & (packet.kind == WordKind.TARGET)):
            m.d.sync += global_target.eq(word == 0)
            # A READ whose masks reach no tile (one of them zero) is refused by the assembler;
            # expecting no values for it keeps the chain from waiting forever.
            with m.If((opcode == Opcode.READ) & (word[:16] != 0) & (word[16:] != 0)):
                m.d.comb += issued.eq(packet.header.window)
        with m.If(accepted & (packet.kind == WordKind.BODY_LOW)):
            m.d.sync += address.eq(word[:16])
        # Saturating: surplus values (a READ wrongly aimed at several tiles) must not wedge us.
        m.d.sync += outstanding.eq(issued + outstanding - (returned & (outstanding != 0)))

        starts = accepted & (packet.kind == WordKind.HEADER) & (Header(word).opcode == Opcode.START)
        m.d.sync += self.clear.eq(starts)
        with m.If(starts):
            m.d.sync += [self.cycles.eq(0), running.eq(1)]
        with m.Elif(running & ~self.done):
            # Frozen while `done`: the count measures the program, not the reads that follow it.
            m.d.sync += self.cycles.eq(self.cycles + 1)
        return m

    def _global_value(self, m, address, pointer=None) -> Signal:
        value = Signal(32)
        with m.Switch(address):
            with m.Case(GLOBAL_REGISTERS["cycles"]):
                m.d.comb += value.eq(self.cycles)
            with m.Case(GLOBAL_REGISTERS["done"]):
                m.d.comb += value.eq(self.done)
            with m.Case(GLOBAL_REGISTERS["watchdog"]):
                m.d.comb += value.eq(self.watchdog)
            if pointer is not None:
                with m.Case(GLOBAL_REGISTERS["mem_address"]):
                    m.d.comb += value.eq(pointer)
            for bank in range(self.memory_banks):
                for name in BANK_COUNTERS:
                    with m.Case(bank_counter(bank, name)):
                        m.d.comb += value.eq(getattr(self, f"bank_{name}")[bank])
        return value


# WRITE answers the dispenser may await at once (it drops them as they come; BankedMemory's
# credits keep far fewer in flight). A new request waits while this many are out.
_WRITE_ANSWERS_LIMIT = 15


class _MemoryPort:
    """The dispenser's side of the shared memory: the pointer, requests, answers (elaborated
    into the dispenser's module ``m``; see :class:`Dispenser`)."""

    def __init__(self, dispenser: Dispenser, m, global_body, address, word, opcode, accepted, forward):
        request, self.response = dispenser.mem_req, dispenser.mem_resp
        self.pointer = Signal(32)
        self.waiting = Signal()         # a mem_data READ's answer has not gone to readback yet
        write_answers = Signal(range(_WRITE_ANSWERS_LIMIT + 1))     # WRITE answers still to drop
        self.write_answers = write_answers
        self.at_data = address == GLOBAL_REGISTERS["mem_data"]
        is_write = opcode == Opcode.WRITE
        access = global_body & self.at_data & (is_write | (opcode == Opcode.READ))
        room = write_answers != _WRITE_ANSWERS_LIMIT
        # Offered only with the word on offer and the chain's slice free, so that the request
        # and the word go together: the word is taken exactly when the request is accepted.
        m.d.comb += [
            request.valid.eq(dispenser.ctrl.valid & forward.ready & access & ~self.waiting & room),
            request.payload.op.eq(Mux(is_write, MemoryOp.WRITE, MemoryOp.READ)),
            request.payload.addr.eq(self.pointer),
            request.payload.data.eq(word),
            request.payload.meta.eq(0),
        ]
        self.blocked = access & ~(request.ready & room)
        requested = request.valid & request.ready
        dropped = self.response.valid & self.response.ready & (write_answers != 0)
        m.d.sync += write_answers.eq(write_answers + (requested & is_write) - dropped)
        with m.If(requested):
            m.d.sync += self.pointer.eq(self.pointer + 1)
            with m.If(~is_write):
                m.d.sync += self.waiting.eq(1)
        with m.Elif(accepted & global_body & is_write & (address == GLOBAL_REGISTERS["mem_address"])):
            m.d.sync += self.pointer.eq(word)
        self._m = m

    def answer(self, answers, readback_chain):
        """Drive the response's ready; return what goes to readback when no global value does:
        the READ answer while one is awaited (after the WRITE answers before it), else the
        readback chain's value."""
        m, response = self._m, self.response
        read_answer = self.waiting & (self.write_answers == 0)
        m.d.comb += response.ready.eq((self.write_answers != 0) | (read_answer & answers.ready))
        with m.If(read_answer & response.valid & answers.ready):
            m.d.sync += self.waiting.eq(0)
        return (Mux(self.waiting, read_answer & response.valid, readback_chain.valid),
                Mux(self.waiting, response.payload.data, readback_chain.payload))


def connect_control_chain(m: Module, dispenser: Dispenser, tiles):
    """Chain ``tiles`` (in chain order, :meth:`FabricSpec.chain_order`) after ``dispenser``,
    both ways."""
    tiles = list(tiles)
    wiring.connect(m, dispenser.chain, tiles[0].chain_in)
    for upstream, downstream in zip(tiles, tiles[1:], strict=False):
        wiring.connect(m, upstream.chain_out, downstream.chain_in)
        wiring.connect(m, upstream.readback_out, downstream.readback_in)
    m.d.comb += tiles[0].readback_in.valid.eq(0)
    wiring.connect(m, tiles[-1].readback_out, dispenser.readback_chain)
    m.d.comb += tiles[-1].chain_out.ready.eq(1)     # the chain ends: words are dropped
