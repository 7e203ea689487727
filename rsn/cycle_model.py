"""The cycle model: how many cycles a compiled program takes on the fabric, without the RTL.

The golden model (:mod:`rsn.model`) says *what* comes out; this module says *when*. It replays
the same image cycle by cycle through a timing skeleton of the fabric built only from the
declared latencies and capacities of its parts, and reports the value the fabric's cycle counter
shows at ``done`` for a run without host-port stalls (profile ``no_stall``: host inputs always
offered, host outputs always taken).

The skeleton, and where each number comes from:

* **Dispatch** (:mod:`rsn.control`): one word per cycle into the dispenser and through every
  tile of the control chain, each stop a 2-slot register slice (1 cycle per hop); a micro-op
  body enters its unit's expander as the tile takes its second word and leaves one cycle later
  through the expander's 2-slot slice, so it leaves tile ``k``'s expander 2 + k cycles after
  its second word is taken on ``ctrl``. ``repeat`` passes replay at one body per cycle after a
  one-cycle turnaround, blocking the chain meanwhile. A body that meets a full expander blocks
  the chain (in-order, blocking dispatch), which the skeleton reproduces slice by slice.
* **Micro-op queues** (:class:`hw.token_queue.TokenQueue` of ``uop_queue_depth``): 1 cycle of
  latency up to depth 2, 2 cycles from depth 3.
* **Switches** (:class:`rsn.switch.Switch`): a micro-op issues when its outputs are idle (a
  fenced one when no output has a counted route); its routes are active from the next cycle;
  every output is a 2-slot buffer, one token per cycle, eager multicast: a skid buffer with
  ``Switch.LATENCY`` (1) cycle per hop, or with ``register_every`` >= 2 a pass-through output
  (rsn/hops.py) of latency 0, whose token may move on through the next switch in the same cycle
  (the switches carry tokens in rounds until none moves; readies are registered, so the order
  of the rounds changes nothing); ``finished`` rises two cycles after the take that ends the
  last counted route; ``busy`` while a counted route is active, a micro-op is on offer or a
  token waits in an output buffer (a static route, beats 0, is a wire that counts for neither).
* **FU input queues**: ``queue_depth`` token queues in the fabric's ``queue_mode``: latency as
  the micro-op queues (``registered``), 1 cycle at every depth (``fall_through``) or none
  (``bypass``: a token is on offer in the cycle it enters an empty queue, so the switches move
  tokens into the FU input queues before the FUs step).
* **FUs**: ``mem`` (:mod:`rsn.fu_mem`): ``READ_LATENCY`` (3) cycles from accepting a READ to its
  first word, one word per cycle, at most ``output_credits`` (3) words between the address
  generator and ``o[0]``; ``mac`` (:mod:`rsn.fu_mac`): ``LATENCY`` cycles from a row's last
  operand to its result, one operand (pair) per cycle, LOAD waits for the multiplier to drain;
  ``alu`` (:mod:`rsn.fu_alu`): ``LATENCY`` cycles, the same kind of stages. Each takes its next
  micro-op in the cycle the current one takes its last input (or issues its last address) and
  raises ``finished`` one cycle after its last ``last`` token moves.
* **Done** (:mod:`rsn.fabric`): "some unit used, every used unit finished, no unit busy, no
  control word in flight", through the registered status tree: ``done`` is that condition
  ``DONE_LATENCY`` (3) cycles late; the dispenser's counter starts the cycle after the START
  header is taken and stops while ``done`` is high. A word is in flight from its take on
  ``ctrl`` until it leaves the last tile's ``chain_out`` slice, the cycle after that tile takes
  it, and the count is a register: so a short program whose units finish while its image is
  still passing the chain ends when its last word has crossed the whole chain.

* **Value-dependent kinds** (``pe``): a kind whose timing depends on the values it sees gives
  a timing model with a ``prepare(spec, tile, received, shared_words)`` method; the skeleton
  then carries every token's value (host inputs included), decodes the image once and calls
  it with the tile's part of the image and the shared memory as the preload leaves it. The
  kind's own module states its timing (ripple_core/pe/timing.py: the PE's output registers,
  a private bank's read path, and the shared memory's request registers, credits, per-bank
  round-robin grants and in-order answers, so bank conflicts included).
* **Preload**: global WRITE packets before START (the shared memory's preload) pass the
  control chain as any words do; the cycle counter starts at START, so they only delay it.

Every transfer is decided from start-of-cycle state, as registered ready/valid handshakes are;
the only combinational readies (an FU's output register accepting while the switch takes its
old token) are honoured by stepping the switches before the FUs. Config writes never overlap
micro-ops in an assembled image, and read-back (READ packets) is not part of a run, so neither
is modelled; nor are host-port stalls (a bench profile other than ``no_stall``), which only the
RTL can say.

Checked against the Verilated fabric (``testbench/rsn/test_cycle_model.py``,
``python -m bench.cycle_model``): the MLP and random programs match the RTL's counter, every
``ctrl`` word and every host output token to the cycle. Pe tiles, without host stalls, all
exact (0% error): the RipTide suite's 68 cases on ripple.toml in both queue modes
(``registered`` and ``bypass``) and on the shared memory (ripple_large.toml); the lowered Ripple
programs of testbench/ripple/test_lower.py (tree_walk, serial_walk, histogram, Ripple BFS; four
seeds, 16 runs) on the same three; the builder programs of ``python -m bench.ripple --rtl``
(ordered and Ripple BFS on graphs of 64 to 240 vertices, ordered and Ripple dmv from 8x8 to
32x32: 14 runs) on ripple_bfs.toml, and the same with BFS at 512 and 1024 vertices too (18
runs) on ripple_large.toml, where Ripple BFS's requests wait 57 to 1,327 cycles for conflicts
(summed over the banks); and the 3x4 shared-memory test fabric's programs
(testbench/ripple/test_shared_memory.py, test_tuples.py, test_atomics_shared.py), conflicts
included. The tests check it on no-stall runs in those simulations (test_lower.py's big one,
test_queue_modes.py, the 3x4 fabric's).

:func:`path_latency` gives the closed form for one stream: the latencies of the switch outputs it
takes (``Switch.LATENCY`` each, 0 where one passes through) plus the sink's input queue latency;
:func:`path_hops` counts the switches the stream passes through (source tile's and sink tile's
included).
"""

from collections import deque
from dataclasses import dataclass, field

from .fabric import DONE_LATENCY
from .fabric_spec import DIRECTIONS
from .fu_alu import LATENCY as ALU_LATENCY
from .fu_kinds import fu_kind, fu_kinds
from .fu_mac import LATENCY as MAC_LATENCY
from .fu_mem import READ_LATENCY, MemFu
from .hops import output_latency, pass_through_outputs
from .image import decode_image, split_packets
from .isa import MacMode, Opcode, SwitchUop, decode
from .route import FU_PORT_BASE, sink_endpoint
from .switch import Switch

__all__ = ["Prediction", "CycleModelError", "predict_cycles", "path_latency", "path_hops", "path_outputs",
           "dispatch_latency", "queue_latency", "SWITCH_LATENCY", "CHAIN_HOP_LATENCY",
           "EXPANDER_LATENCY", "SKID_SLOTS", "FU_FINISH_DELAY", "TimedFifo", "FuTiming"]

SWITCH_LATENCY = Switch.LATENCY
SKID_SLOTS = 2                  # every register slice (link, chain stop, expander output)
CHAIN_HOP_LATENCY = 1           # dispenser -> tile 0, and tile k -> tile k + 1
EXPANDER_LATENCY = 1            # a body taken by a tile leaves its expander a cycle later
SWITCH_FINISH_DELAY = 2         # `finished` rises two cycles after the route's last take
FU_FINISH_DELAY = 1             # an FU's `finished` rises the cycle after its last token moves
MEM_ISSUE_LATENCY = READ_LATENCY - 1    # one of READ_LATENCY's cycles loads the address generator
MEM_OUTPUT_CREDITS = MemFu.output_credits
_OPPOSITE = {0: 2, 1: 3, 2: 0, 3: 1}


class CycleModelError(RuntimeError):
    """The timing replay did not reach ``done``: the program deadlocks or runs too long."""


def queue_latency(depth: int, mode: str = "registered") -> int:
    """A :class:`hw.token_queue.TokenQueue`'s latency: cycles from a token entering the empty
    queue to its being on offer. Registered: flip-flops up to depth 2, then a memory."""
    if mode == "bypass":
        return 0
    return 1 if depth <= 2 or mode == "fall_through" else 2


# --------------------------------------------------------------------------------------------
# Closed forms


def _chain_index(spec, tile) -> int:
    """Position of ``tile`` on the control chain (serpentine, :meth:`FabricSpec.chain_order`)."""
    return spec.chain_order().index(tile)


def dispatch_latency(spec, tile) -> int:
    """Cycles from a micro-op body's second word taken on ``ctrl`` to the body being on offer to
    its unit at ``tile`` (no blocking): dispenser, chain hops, expander, micro-op queue."""
    return (CHAIN_HOP_LATENCY * (1 + _chain_index(spec, tile)) + EXPANDER_LATENCY
            + queue_latency(spec.uop_queue_depth))


def _tree_parents(spec, route) -> dict:
    """child tile -> parent tile of a routed stream's tree."""
    return {spec.neighbour(tile, DIRECTIONS[side]): tile for tile, side in route.links}


def path_outputs(compiled, edge_index: int, sink=None) -> list[tuple]:
    """The switch outputs a stream takes from its source to ``sink``, in order: (tile, output),
    one per switch it passes through (source tile's and sink tile's included)."""
    routing, graph = compiled.routing, compiled.program.graph
    route = routing.routes[edge_index]
    sink = _one_sink(route.edge, sink)
    tile, output = sink_endpoint(graph, routing.placement, sink)
    if isinstance(output, str):
        output = DIRECTIONS.index(output)
    parents = _tree_parents(compiled.spec, route)
    outputs = [(tile, output)]
    while tile != route.hops[0].tile:
        child, tile = tile, parents[tile]
        outputs.append((tile, _side_towards(tile, child)))
    return outputs[::-1]


def _side_towards(tile, neighbour) -> int:
    step = (neighbour[0] - tile[0], neighbour[1] - tile[1])
    return {(-1, 0): 0, (0, 1): 1, (1, 0): 2, (0, -1): 3}[step]


def path_hops(compiled, edge_index: int, sink=None) -> int:
    """Switches a stream passes through from its source to ``sink`` (both ends' switches)."""
    return len(path_outputs(compiled, edge_index, sink))


def _one_sink(edge, sink):
    if sink is not None:
        return sink
    if len(edge.sinks) != 1:
        raise ValueError(f"stream {edge} is a multicast; name the sink")
    return edge.sinks[0]


def path_latency(compiled, edge_index: int, sink=None) -> int:
    """Cycles from a stream's first token on offer at its source (FU output or host port) to it
    being on offer at ``sink`` (the FU input after its token queue, or the host port), when the
    routes are active and nothing stalls: the latencies of the switch outputs on the way
    (``Switch.LATENCY`` each, 0 where it passes through: rsn/hops.py) + the queue latency."""
    edge = compiled.routing.routes[edge_index].edge
    sink = _one_sink(edge, sink)
    latency = sum(output_latency(compiled.spec, tile, output)
                  for tile, output in path_outputs(compiled, edge_index, sink))
    if not compiled.program.graph.nodes[sink[0]].is_host:
        latency += queue_latency(compiled.spec.queue_depth, compiled.spec.queue_mode)
    return latency


# --------------------------------------------------------------------------------------------
# Timing primitives


class _Fifo:
    """Tokens in order, each on offer from ``latency`` cycles after its push.

    With ``registered_ready`` (register slices, token queues, the mem output credits) a push is
    allowed when the occupancy *at the start of the cycle* is below ``capacity``, as their
    ``ready`` is a register; without it (an FU's output register) a token taken this cycle
    already makes room, which needs the consumer stepped first.
    """

    def __init__(self, capacity: int, latency: int, registered_ready: bool = True):
        self.capacity, self.latency, self.registered_ready = capacity, latency, registered_ready
        self.items = deque()            # [cycle on offer, tag]
        self._pushed = self._popped = (-1, 0)   # (cycle, count) of this cycle's pushes and pops
        self.last_pop = (-1, None)              # (cycle, tag) of the latest pop

    def _count(self, record, cycle) -> int:
        return record[1] if record[0] == cycle else 0

    def level(self, cycle: int) -> int:
        """Occupancy at the start of ``cycle``."""
        return len(self.items) - self._count(self._pushed, cycle) + self._count(self._popped, cycle)

    def can_push(self, cycle: int) -> bool:
        held = len(self.items)
        if self.registered_ready:
            held += self._count(self._popped, cycle)    # a slot freed this cycle shows next cycle
        return held < self.capacity

    def push(self, cycle: int, tag=None):
        self.items.append((cycle + self.latency, tag))
        self._pushed = (cycle, self._count(self._pushed, cycle) + 1)

    def valid(self, cycle: int) -> bool:
        return bool(self.items) and self.items[0][0] <= cycle

    def head(self):
        return self.items[0][1]

    def pop(self, cycle: int):
        _, tag = self.items.popleft()
        self._popped = (cycle, self._count(self._popped, cycle) + 1)
        self.last_pop = (cycle, tag)
        return tag

    def popped(self, cycle: int) -> bool:
        return self.last_pop[0] == cycle


class _HostSource:
    """A host input port under ``no_stall``: a token on offer every cycle until all are sent."""

    def __init__(self, tokens: list[int]):
        self.tokens = deque(tokens)

    def valid(self, cycle: int) -> bool:
        return bool(self.tokens)

    def head(self) -> int:
        return self.tokens[0]

    def pop(self, cycle: int):
        return self.tokens.popleft()


class _Absent:
    """A switch input with nothing behind it (a boundary side without a host input port)."""

    def valid(self, cycle: int) -> bool:
        return False


def _move(source: _Fifo, sink: _Fifo, cycle: int) -> bool:
    """One token from ``source`` into ``sink`` if both allow (a plain stream connection)."""
    if source.valid(cycle) and sink.can_push(cycle):
        sink.push(cycle, source.pop(cycle))
        return True
    return False


def _slice() -> _Fifo:
    return _Fifo(SKID_SLOTS, 1)


# --------------------------------------------------------------------------------------------
# Control plane


@dataclass(frozen=True)
class _Word:
    """What a chain stop needs to know of one control word."""
    start: bool = False                 # a START header
    unit: str | None = None             # "switch" or "fu": the second word of a micro-op body
    targets: frozenset = frozenset()    # chain indices of the target tiles
    body: int = 0
    window_end: bool = False
    repeat: int = 1
    read: bool = False                  # a READ packet's word: not counted as in flight for ``done``


def _image_words(image, spec) -> list[_Word]:
    chain = {tile: index for index, tile in enumerate(spec.chain_order())}
    words = []
    for packet in split_packets(image):
        read = packet.opcode == Opcode.READ
        words.append(_Word(start=packet.opcode == Opcode.START, read=read))
        words.append(_Word(read=read))
        unit = {Opcode.SWITCH: "switch", Opcode.FU: "fu"}.get(packet.opcode)
        targets = frozenset(chain[tile] for tile in packet.tiles(spec.rows, spec.cols))
        for index, body in enumerate(packet.bodies):
            words.append(_Word(read=read))
            if unit is None:
                words.append(_Word(read=read))
                continue
            words.append(_Word(unit=unit, targets=targets, body=body,
                               window_end=index == packet.window - 1, repeat=max(1, packet.repeat)))
    return words


class _Expander:
    """A unit's expander: bodies pass through a register slice; ``repeat`` passes replay."""

    def __init__(self):
        self.out = _slice()
        self.window: list = []
        self.replays: deque = deque()   # bodies still to read back from the window buffer
        self.replaying = False
        self.resumes_at = 0             # the first cycle after a replay that takes bodies again
        self.held = None                # a replayed body read, not yet emitted

    def can_take(self, cycle: int) -> bool:
        return not self.replaying and cycle >= self.resumes_at and self.out.can_push(cycle)

    def take(self, cycle: int, uop, word: _Word):
        self.out.push(cycle, uop)
        self.window.append(uop)
        if word.window_end:
            if word.repeat > 1:
                self.replays = deque(self.window * (word.repeat - 1))
                self.replaying = True
            self.window = []

    def step(self, cycle: int):
        """Replay: one buffer read per cycle, emitted the cycle after (Expander.elaborate)."""
        if not self.replaying:
            return
        emit_ready = self.out.can_push(cycle)
        if self.held is not None and emit_ready:
            self.out.push(cycle, self.held)
        if self.replays and (self.held is None or emit_ready):
            self.held = self.replays.popleft()
        elif self.held is None or emit_ready:
            self.held, self.replaying, self.resumes_at = None, False, cycle + 1

    @property
    def idle(self) -> bool:
        return not self.replaying and not self.out.items


class _ControlChain:
    """The dispenser and the chain stops: who takes which word in which cycle."""

    def __init__(self, words: list[_Word], tiles: list):
        self.words, self.tiles = words, tiles
        self.sent = 0                               # words taken on ctrl
        self.slices = [_slice() for _ in range(len(tiles))]     # dispenser, tiles 0 .. n-2
        self.passed_last = 0                        # words taken by the last tile
        self.ctrl_cycles: list[int] = []
        self.start_cycle = None
        # Non-READ words taken on ctrl, and (cycle, count) of those the last tile has taken.
        self.entered = 0
        self.dropped = deque([(-1, 0)])

    @property
    def over(self) -> bool:
        return self.passed_last == len(self.words) and all(
            tile.switch_expander.idle and tile.fu_expander.idle for tile in self.tiles)

    def in_flight(self, cycle: int) -> bool:
        """The fabric's words-in-flight count at the start of ``cycle`` is not zero: a non-READ
        word taken on ``ctrl`` has not yet left the last tile's ``chain_out`` slice (it leaves
        the cycle after the last tile takes it, so takes up to ``cycle - 2`` have left)."""
        while len(self.dropped) > 1 and self.dropped[1][0] <= cycle - 2:
            self.dropped.popleft()
        return self.entered != self.dropped[0][1]

    def step(self, cycle: int):
        for tile in self.tiles:
            tile.switch_expander.step(cycle)
            tile.fu_expander.step(cycle)
        if self.sent < len(self.words) and self.slices[0].can_push(cycle):
            word = self.words[self.sent]
            if word.start and self.start_cycle is None:
                self.start_cycle = cycle
            self.slices[0].push(cycle, word)
            self.ctrl_cycles.append(cycle)
            self.sent += 1
            self.entered += not word.read
        for index, tile in enumerate(self.tiles):
            self._stop(index, tile, cycle)

    def _stop(self, index: int, tile, cycle: int):
        upstream = self.slices[index]
        last = index == len(self.tiles) - 1
        if not upstream.valid(cycle) or not (last or self.slices[index + 1].can_push(cycle)):
            return
        word = upstream.head()
        expander = None
        if word.unit is not None and index in word.targets:
            expander = tile.switch_expander if word.unit == "switch" else tile.fu_expander
            if not expander.can_take(cycle):
                return
        upstream.pop(cycle)
        if expander is not None:
            expander.take(cycle, tile.decode(word), word)
        if last:
            self.passed_last += 1
            if not word.read:
                self.dropped.append((cycle, self.dropped[-1][1] + 1))
        else:
            self.slices[index + 1].push(cycle, word)


# --------------------------------------------------------------------------------------------
# Units


class _SwitchTiming:
    """A switch's route registers: in-order issue into idle outputs, eager multicast.

    A cycle is :meth:`begin` (the issue decision and ``finished``, from registers), then
    :meth:`carry` until no switch of the fabric moves a token (a pass-through output offers a
    token in the cycle it takes it, so it may move on through the next switch in that cycle),
    then :meth:`end` (the issued routes become active from the next cycle)."""

    def __init__(self, latencies: list[int], uops: _Fifo, unreachable=frozenset()):
        self.uops = uops
        self.inputs: list = []
        self.outputs = [_Fifo(SKID_SLOTS, latency) for latency in latencies]
        self.unreachable = unreachable      # (output, input) pairs a pass-through output cannot select
        self.active = [False] * len(latencies)
        self.select = [None] * len(latencies)
        self.remaining = [0] * len(latencies)
        self.delivered: dict[int, set] = {}
        self.last_pending: set = set()
        self.last_issued = False
        self.finished_at = None
        self._issuing = None                # this cycle's issued micro-op and its outputs
        self._served: set = set()           # inputs that offered a token this cycle
        self._users: dict[int, list[int]] = {}  # input -> outputs routed from it at the cycle's start

    def busy(self, cycle: int) -> bool:
        """A counted route is active, a micro-op is on offer, or a token waits in an output
        buffer (a static route, beats 0, is a wire: it never ends and holds nothing back)."""
        counted = (active and left for active, left in zip(self.active, self.remaining, strict=True))
        return any(counted) or self.uops.valid(cycle) or any(output.level(cycle) for output in self.outputs)

    def finished(self, cycle: int) -> bool:
        return self.finished_at is not None and self.finished_at <= cycle

    def begin(self, cycle: int):
        head = self.uops.head() if self.uops.valid(cycle) else None
        enabled = [j for j in range(len(self.outputs)) if head and head["enable"] >> j & 1]
        issue = head is not None and not any(self.active[j] for j in enabled)
        if issue and head["fence"]:         # held while any counted route is active
            issue = not any(self.active[j] and self.remaining[j] for j in range(len(self.outputs)))
        # `finished` is computed from registers: it follows the last route's end by two cycles.
        all_ended = self.last_issued and not self.last_pending
        if all_ended:
            self.last_issued = False
            if self.finished_at is None:
                self.finished_at = cycle + SWITCH_FINISH_DELAY - 1
        self._issuing = (head, enabled) if issue else None
        self._served = set()
        self._users = {}
        for j, active in enumerate(self.active):
            if active and (j, self.select[j]) not in self.unreachable:
                self._users.setdefault(self.select[j], []).append(j)

    def end(self, cycle: int):
        if self._issuing is None:
            return
        head, enabled = self._issuing
        self.uops.pop(cycle)
        for j in enabled:
            self.active[j], self.select[j], self.remaining[j] = True, head["select"][j], head["beats"]
        if head["last"]:
            if head["beats"]:           # only counted routes end, so only they hold it back
                self.last_pending |= set(enabled)
            self.last_issued = True

    def carry(self, cycle: int) -> bool:
        """Move the tokens of inputs that offer one and have not yet this cycle into the output
        slices; True if any did. An input offers at most one token per cycle, and its outputs'
        room is their start-of-cycle level, so a later call only sees inputs that a pass-through
        output upstream has filled since."""
        moved = False
        for k, outputs in self._users.items():
            if k in self._served or not self.inputs[k].valid(cycle):
                continue
            self._served.add(k)
            moved = True
            self.last_pending -= self._carry_input(cycle, k, outputs)
        return moved

    def _carry_input(self, cycle: int, k: int, outputs: list[int]) -> set:
        """Input ``k``'s token (on offer) into its outputs' slices; return the outputs whose
        route ends."""
        ending = set()
        source = self.inputs[k]
        delivered = self.delivered.setdefault(k, set())
        room = {j: self.outputs[j].can_push(cycle) for j in outputs}
        taking = [j for j in outputs if j not in delivered and room[j]]
        for j in taking:
            self.outputs[j].push(cycle, source.head())     # the token's value, for value-timed kinds
            if self.remaining[j] != 0:
                self.remaining[j] -= 1
                if self.remaining[j] == 0:
                    self.active[j], self.select[j] = False, None
                    ending.add(j)
        if all(j in delivered or room[j] for j in outputs):
            source.pop(cycle)
            delivered.clear()
        else:
            delivered.update(taking)
        return ending


class _FuTiming:
    """What every FU's timing model shares: micro-op queue, inputs, outputs, ``finished``."""

    def __init__(self, uops: _Fifo, inputs: list[_Fifo], output: _Fifo):
        self.uops, self.inputs, self.outputs = uops, inputs, [output]
        self.finished_at = None
        self.work = []          # per accepted micro-op: [first, last] cycle it took or issued a token

    def _worked(self, cycle: int):
        """The current micro-op moved one of its own tokens (an input taken, an address issued)."""
        window = self.work[-1]
        if window[0] is None:
            window[0] = cycle
        window[1] = cycle

    def finished(self, cycle: int) -> bool:
        return self.finished_at is not None and self.finished_at <= cycle

    def _finish(self, cycle: int):
        if self.finished_at is None:
            self.finished_at = cycle + FU_FINISH_DELAY

    def _accept(self, cycle: int, ready: bool):
        """The next micro-op, if one is on offer and the unit is ready for it."""
        if ready and self.uops.valid(cycle):
            self.work.append([None, None])
            return self.uops.pop(cycle)
        return None


class MemTiming(_FuTiming):
    """Affine READ/WRITE: one address per cycle, READ words through a 3-credit output path."""

    def __init__(self, uops, inputs):
        super().__init__(uops, inputs, _Fifo(MEM_OUTPUT_CREDITS, MEM_ISSUE_LATENCY))
        self.active, self.write, self.last, self.left = False, False, False, 0

    def busy(self, cycle: int) -> bool:
        return self.active or bool(self.outputs[0].items)

    def step(self, cycle: int):
        out = self.outputs[0]
        if out.popped(cycle) and out.last_pop[1]:
            self._finish(cycle)
        issue = self.active and not self.write and out.can_push(cycle)
        consume = self.active and self.write and self.inputs[0].valid(cycle)
        final = self.left == 1
        closes = final and self.last
        if issue:
            out.push(cycle, closes)
        if consume:
            self.inputs[0].pop(cycle)
            if closes:
                self._finish(cycle)
        if issue or consume:
            self._worked(cycle)
            self.left -= 1
            self.active = not final
        uop = self._accept(cycle, not self.active or ((issue or consume) and final))
        if uop is not None:
            self.active, self.write, self.last = True, bool(uop["write"]), bool(uop["last"])
            self.left = uop["count_i"] * uop["count_j"]


class AluTiming(_FuTiming):
    """Stages moving together, the last into the output register (AluFu.elaborate)."""

    def __init__(self, uops, inputs):
        super().__init__(uops, inputs, _Fifo(1, 1, registered_ready=False))
        self.active, self.last, self.left = False, False, 0
        # Each stage: None (empty) or the token's "closes a `last` micro-op" flag.
        self.stages = [None] * (ALU_LATENCY - 1)

    def busy(self, cycle: int) -> bool:
        return (self.active or any(stage is not None for stage in self.stages)
                or self.outputs[0].level(cycle) > 0)

    def step(self, cycle: int):
        out = self.outputs[0]
        if out.popped(cycle) and out.last_pop[1]:
            self._finish(cycle)
        tail = self.stages[-1]
        advance = not (tail is not None and out.items)
        take = self.active and advance and self.inputs[0].valid(cycle)
        final_take = take and self.left == 1
        if take:
            self._worked(cycle)
            self.inputs[0].pop(cycle)
            self.left -= 1
            self.active = not final_take
        if advance:
            if tail is not None:
                out.push(cycle, tail)
            self.stages = [(final_take and self.last) if take else None] + self.stages[:-1]
        uop = self._accept(cycle, not self.active or final_take)
        if uop is not None:
            self.active, self.last, self.left = True, bool(uop["last"]), uop["beats"]


class MacTiming(_FuTiming):
    """Operand stages, then an accumulator into the output register (MacFu.elaborate)."""

    def __init__(self, uops, inputs):
        super().__init__(uops, inputs, _Fifo(1, 1, registered_ready=False))
        self.active, self.uop, self.index, self.rows_left = False, None, 0, 0
        # Each stage: None (empty) or (row_end, closes); the result leaves the last one.
        self.stages = [None] * (MAC_LATENCY - 1)
        self.load_pending = False

    def busy(self, cycle: int) -> bool:
        return self.active or any(self.stages) or self.outputs[0].level(cycle) > 0

    def step(self, cycle: int):
        out, (a, b) = self.outputs[0], self.inputs
        sent = out.popped(cycle)
        result_waiting = out.level(cycle) > 0          # o[0].valid at the start of the cycle
        tail = self.stages[-1]
        advance = not (tail is not None and tail[0] and out.items)
        mode = self.uop["mode"] if self.active else None
        took_a = advance and a.valid(cycle) and (
            mode == MacMode.DOT or (mode == MacMode.DOT2 and b.valid(cycle)))
        loaded = mode == MacMode.LOAD and not any(self.stages) and b.valid(cycle)
        row_done = self.active and self.index == self.uop["length"] - 1
        final_take = (took_a or loaded) and row_done and (loaded or self.rows_left == 0)
        closes = final_take and bool(self.uop["last"])
        if took_a:
            a.pop(cycle)
            if mode == MacMode.DOT2:
                b.pop(cycle)
        if loaded:
            b.pop(cycle)
        if took_a or loaded:
            self._worked(cycle)
            self.index = 0 if row_done else self.index + 1
            if row_done:
                self.rows_left -= 1
        if final_take:
            self.active = False
        if advance:
            if tail is not None and tail[0]:
                out.push(cycle, tail[1])
            self.stages = [(row_done, closes) if took_a else None] + self.stages[:-1]
        self._track_finish(cycle, sent, result_waiting, loaded and closes)
        uop = self._accept(cycle, not self.active or final_take)
        if uop is not None:
            self.active, self.uop, self.index, self.rows_left = True, uop, 0, uop["rows"] - 1

    def _track_finish(self, cycle, sent, result_waiting, last_load_done):
        """``finished``: the last result leaves, or a final LOAD ends with no result waiting."""
        out_closes = sent and self.outputs[0].last_pop[1]
        if out_closes or (last_load_done and (not result_waiting or sent)) or (self.load_pending and sent):
            self._finish(cycle)
        if last_load_done and result_waiting and not sent:
            self.load_pending = True
        elif sent:
            self.load_pending = False


TimedFifo, FuTiming = _Fifo, _FuTiming      # for the timing models of kinds defined elsewhere


class _UntimedFu(_FuTiming):
    """A tile whose kind has no timing model (``xbar``: its timing depends on the data values
    in a way no skeleton here follows); allowed only while the program leaves the tile unused."""

    def __init__(self, uops, inputs, n_out: int):
        super().__init__(uops, inputs, _Fifo(1, 1))
        self.outputs = [_Fifo(1, 1) for _ in range(n_out)]

    def busy(self, cycle: int) -> bool:
        return False

    def step(self, cycle: int):
        pass


class _TileTiming:
    """One tile: control stop, two expanders, micro-op queues, switch and FU."""

    def __init__(self, spec, tile):
        self.tile = tile
        self.kind = fu_kind(spec.kind(tile))
        uop_latency = queue_latency(spec.uop_queue_depth)
        self.switch_expander, self.fu_expander = _Expander(), _Expander()
        self.switch_uops = _Fifo(spec.uop_queue_depth, uop_latency)
        self.fu_uops = _Fifo(spec.uop_queue_depth, uop_latency)
        n_outputs = len(DIRECTIONS) + self.kind.n_in
        passing = pass_through_outputs(spec, tile, n_outputs)
        self.switch = _SwitchTiming([output_latency(spec, tile, j) for j in range(n_outputs)],
                                    self.switch_uops,
                                    frozenset((j, j) for j in passing if j < len(DIRECTIONS)))
        self.fu_inputs = [_Fifo(spec.queue_depth, queue_latency(spec.queue_depth, spec.queue_mode))
                          for _ in range(self.kind.n_in)]
        if self.kind.timing is not None:
            self.fu = self.kind.timing(self.fu_uops, self.fu_inputs)
        else:
            self.fu = _UntimedFu(self.fu_uops, self.fu_inputs, self.kind.n_out)
        self.switch_used_at = self.fu_used_at = None
        self._decoded: dict = {}

    def decode(self, word: _Word) -> dict:
        layout = SwitchUop if word.unit == "switch" else self.kind.uop_layout
        key = (word.unit, word.body)
        if key not in self._decoded:
            self._decoded[key] = decode(layout, word.body)
        return self._decoded[key]

    def feed_units(self, cycle: int):
        """Expander slices into the micro-op queues; a unit is "used" once its queue takes one."""
        if _move(self.switch_expander.out, self.switch_uops, cycle) and self.switch_used_at is None:
            self.switch_used_at = cycle + 1
        if _move(self.fu_expander.out, self.fu_uops, cycle) and self.fu_used_at is None:
            self.fu_used_at = cycle + 1

    def feed_fu_inputs(self, cycle: int):
        for k, queue in enumerate(self.fu_inputs):
            _move(self.switch.outputs[FU_PORT_BASE + k], queue, cycle)

    def used(self, cycle: int) -> bool:
        return any(at is not None and at <= cycle for at in (self.switch_used_at, self.fu_used_at))

    def finished(self, cycle: int) -> bool:
        switch_used = self.switch_used_at is not None and self.switch_used_at <= cycle
        fu_used = self.fu_used_at is not None and self.fu_used_at <= cycle
        return ((not switch_used or self.switch.finished(cycle))
                and (not fu_used or self.fu.finished(cycle)))

    def busy(self, cycle: int) -> bool:
        return (self.switch.busy(cycle) or self.fu.busy(cycle)
                or self.switch_uops.level(cycle) > 0 or self.fu_uops.level(cycle) > 0)


# --------------------------------------------------------------------------------------------
# The fabric


@dataclass
class Prediction:
    """What the cycle model expects of a ``no_stall`` run; cycles count from the first ``ctrl``
    transfer (the bench's cycle 0, when START is the image's first word).

    ``cycles``: the fabric's cycle counter at ``done`` (what ``RtlResult.cycles`` reports).
    ``done_cycle``: the cycle ``done`` is first high. ``dispatch_end``: the cycle the image's last
    word is taken on ``ctrl``. ``ctrl_cycles``: the cycle each image word is taken.
    ``arrivals``: host output port -> the cycle of each token's transfer. ``finished``: (tile,
    unit) -> the cycle its ``finished`` flag rose. ``early_done``: cycles in which ``done`` was
    high before the end (every used unit finished while later micro-ops were still on the chain).
    ``work``: tile -> its FU's micro-ops in order, each ``(first, last)``: the cycles it took its
    first and last input token (or issued its first and last address), ``None`` for a kind whose
    timing model does not record them (:mod:`rsn.transitions` reads the bubbles between phases).
    """
    cycles: int
    done_cycle: int
    start_cycle: int
    dispatch_end: int
    ctrl_cycles: list[int]
    arrivals: dict[str, list[int]]
    finished: dict = field(default_factory=dict)
    early_done: list[int] = field(default_factory=list)
    work: dict = field(default_factory=dict)

    def first_output(self, port: str) -> int:
        return self.arrivals[port][0]


class _FabricTiming:
    def __init__(self, compiled):
        spec = compiled.spec
        self.spec = spec
        self.tiles = {tile: _TileTiming(spec, tile) for tile in spec.all_tiles()}
        self.order = [self.tiles[tile] for tile in spec.chain_order()]
        self.chain = _ControlChain(_image_words(compiled.image, spec), self.order)
        self.host_out: dict[str, _Fifo] = {}
        self.arrivals: dict[str, list[int]] = {}
        self._wire(compiled)
        self._prepare(compiled)

    def _prepare(self, compiled):
        """Hand the value-timed units their part of the image and the preloaded shared memory."""
        units = [(tile, unit.fu) for tile, unit in self.tiles.items() if hasattr(unit.fu, "prepare")]
        if not units:
            return
        spec = self.spec
        decoded = decode_image(compiled.image, spec.rows, spec.cols,
                               memory_words=None if spec.memory is None else spec.memory.words)
        shared = None
        if spec.memory is not None:
            shared = [0] * spec.memory.words
            start = decoded.starts[0] if decoded.starts else len(decoded.packets)
            for access in decoded.memory:
                if access.kind == "write" and access.packet < start:
                    shared[access.address] = access.value & 0xFFFF_FFFF
        for tile, fu in units:
            fu.prepare(spec, tile, decoded.tile(*tile), shared)

    def _wire(self, compiled):
        spec = self.spec
        host_at = {(port.tile, port.side): port for port in spec.host_ports}
        sent = compiled.program.host_inputs
        for tile, unit in self.tiles.items():
            inputs = []
            for side_index, side in enumerate(DIRECTIONS):
                neighbour = spec.neighbour(tile, side)
                port = host_at.get((tile, side))
                if neighbour is not None:
                    inputs.append(self.tiles[neighbour].switch.outputs[_OPPOSITE[side_index]])
                elif port is not None and port.direction == "in":
                    inputs.append(_HostSource(list(sent.get(port.name, []))))
                else:
                    inputs.append(_Absent())
                if neighbour is None and port is not None and port.direction == "out":
                    self.host_out[port.name] = unit.switch.outputs[side_index]
                    self.arrivals[port.name] = []
            unit.switch.inputs = inputs + unit.fu.outputs

    def _done_condition(self, cycle: int) -> bool:
        return (any(tile.used(cycle) for tile in self.order)
                and all(tile.finished(cycle) for tile in self.order)
                and not any(tile.busy(cycle) for tile in self.order)
                and not self.chain.in_flight(cycle))

    def step(self, cycle: int):
        self.chain.step(cycle)
        for tile in self.order:
            tile.feed_units(cycle)
        for tile in self.order:
            tile.switch.begin(cycle)
        carrying = True
        while carrying:         # one round, or more while pass-through outputs move tokens on
            carrying = False
            for tile in self.order:
                carrying |= tile.switch.carry(cycle)
            carrying &= self.spec.register_every > 1
        for tile in self.order:
            tile.switch.end(cycle)
        # Before the FUs step, so that a bypassing queue offers a token in the cycle it enters
        # (with a latency of a cycle or more the order makes no difference: the queues' ready
        # is registered).
        for tile in self.order:
            tile.feed_fu_inputs(cycle)
        for tile in self.order:
            tile.fu.step(cycle)
        for name, link in self.host_out.items():
            if link.valid(cycle):
                link.pop(cycle)
                self.arrivals[name].append(cycle)

    def run(self, max_cycles: int) -> Prediction:
        # `done` in cycle c is the done condition of cycle c - DONE_LATENCY (a pure delay).
        early = []
        for cycle in range(max_cycles):
            done = self._done_condition(cycle)
            if done and self.chain.over:
                return self._prediction(cycle + DONE_LATENCY, early)
            if done:                # `done` will be high, yet the run goes on: micro-ops still coming
                early.append(cycle + DONE_LATENCY)
            self.step(cycle)
        raise CycleModelError(f"no done after {max_cycles} cycles: the program deadlocks or runs longer; "
                              f"{self.chain.sent}/{len(self.chain.words)} image words dispatched")

    def _prediction(self, done_cycle: int, early: list[int]) -> Prediction:
        start = self.chain.start_cycle if self.chain.start_cycle is not None else 0
        # The counter is zeroed the cycle after START, then counts every cycle without `done`.
        counted = done_cycle - (start + 1) - sum(1 for cycle in early if cycle > start)
        finished = {}
        for tile in self.order:
            for unit, flag in (("switch", tile.switch.finished_at), (tile.kind.name, tile.fu.finished_at)):
                if flag is not None:
                    finished[tile.tile, unit] = flag
        work = {tile.tile: [tuple(window) if window[0] is not None else None for window in tile.fu.work]
                for tile in self.order if tile.fu.work}
        return Prediction(cycles=counted, done_cycle=done_cycle, start_cycle=start,
                          dispatch_end=self.chain.ctrl_cycles[-1] if self.chain.ctrl_cycles else 0,
                          ctrl_cycles=list(self.chain.ctrl_cycles), arrivals=self.arrivals,
                          finished=finished, early_done=early, work=work)


def predict_cycles(compiled, *, max_cycles: int = 1_000_000) -> Prediction:
    """Replay ``compiled`` (an :class:`rsn.program.Compiled`) on the timing skeleton and return
    the predicted cycle counter and event times of a run with no host-port stalls."""
    packets = split_packets(compiled.image)
    preload = 0             # global WRITEs (the shared memory's preload) may come before START
    while preload < len(packets) and packets[preload].opcode == Opcode.WRITE and packets[preload].is_global:
        preload += 1
    if preload == len(packets) or packets[preload].opcode != Opcode.START:
        first = packets[preload].opcode.name if preload < len(packets) else "nothing"
        raise ValueError(f"the image starts with {first}, not START (after any preload): the cycle "
                         f"counter would not be counting")
    timed = sorted(name for name, kind in fu_kinds().items() if kind.timing is not None)
    untimed = sorted({node.kind for node in compiled.program.graph.fu_nodes()} - set(timed))
    if untimed:
        raise CycleModelError(f"the cycle model has no timing for FU kind {', '.join(untimed)} "
                              f"(its timing depends on the data, not only on token counts); it "
                              f"predicts {', '.join(timed)} programs. For SNN programs "
                              f"snn.sdf predicts the throughput")
    return _FabricTiming(compiled).run(max_cycles)
