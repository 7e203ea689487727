# amaranth: UnusedElaboratable=no
"""k-induction proofs of the control plane's micro-op dispatch, and mutants that must fail them.

Dispatch is proved in parts whose contracts compose:

* **the dispenser** (:class:`Dispenser`, without shared memory): every ``ctrl`` word enters the
  chain once, in order, unchanged, whatever it waits on;
* **a chain stop** (:class:`TileControl`): whatever the words on ``chain_in`` (any opcodes,
  masks, windows and repeats, any stalls), every word leaves on ``chain_out`` once, in order and
  unchanged, and each expander's input takes exactly the bodies of the SWITCH (FU) packets whose
  masks name the tile, in order, each whole (its two words), with ``window_end`` on the window's
  last body and the packet's ``repeat``; it takes them in the cycle the chain takes their second
  word. As every stop forwards the stream unchanged, each stop of a chain sees the words the
  host sent, so a micro-op reaches exactly the units of its masks.
* **an expander** (:class:`Expander`): the bodies of each window leave, in order, ``repeat``
  times (0 acts as 1): exactly ``window x repeat`` micro-ops.

The benches parse the word stream themselves, from the packet format in
docs/rsn-architecture.md, and follow one arbitrary word or micro-op position (the solver picks
it). The ``*_invariants`` functions relate the benches' state to the designs' registers. The
first line turns off Amaranth's UnusedElaboratable warning (see
:func:`testbench.formal.harness.elaborate_open`).
"""

import pytest
from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Cat, Cover, Mux, Signal, Value, unsigned

from rsn.control import Dispenser, Expander, TileControl, WordKind
from rsn.isa import Header, Opcode
from testbench.rsn.control_bench import DroppingExpander

from .harness import (
    FormalBench,
    TokenTracker,
    assert_proven,
    assert_stream_rules,
    assume_stream_rules,
    drive_free_consumer,
    drive_free_producer,
    elaborate_open,
    find_register,
    find_submodule,
    run_proof,
    track_tokens,
)

ROW, COL = 1, 2         # the tile under proof: masks must name row 1 and column 2
INDUCTION_DEPTH = 2
COVER_DEPTH = 12
MUTANT_BMC_DEPTH = 8


def transfer(stream):
    return stream.valid & stream.ready


class ProbedTileControl(TileControl):
    """A TileControl that keeps its expanders, so the bench can watch their inputs."""

    def make_expander(self, layout):
        expander = super().make_expander(layout)
        self.expanders = [*getattr(self, "expanders", []), expander]
        return expander


# --- the chain stop ------------------------------------------------------------------------

def skid_signals(fragment, source):
    """The skid slot feeding ``source`` in an ``elaborate_skid_pair`` of ``fragment``: the signal
    that ``source.payload`` is loaded from when it is not loaded from the sink."""
    payload = Value.cast(source.payload)
    for rhs in _assignments_to(fragment.statements.get("sync", []), payload):
        if getattr(rhs, "name", "").startswith("skid"):
            return rhs
    raise LookupError(f"no skid slot drives {payload!r}; did elaborate_skid_pair change?")


def _assignments_to(statements, target):
    for statement in statements:
        lhs = getattr(statement, "lhs", None)
        if lhs is not None and lhs is target:
            yield statement.rhs
        for _patterns, body, _src_loc in getattr(statement, "cases", ()):
            yield from _assignments_to(body, target)


def tile_bench(tile: ProbedTileControl, *, invariants: bool = True, mutate=None) -> FormalBench:
    """Words forwarded unchanged; each expander takes exactly its bodies (see the module's text).

    ``mutate(tile, fragment)``, if given, breaks the elaborated tile (the mutants below);
    without ``invariants`` the bench is good for bounded model checking only."""
    bench = FormalBench()
    m = bench.m
    fragment = elaborate_open(tile)
    if mutate is not None:
        mutate(tile, fragment)
    m.submodules.dut = fragment
    switch_expander, fu_expander = tile.expanders

    drive_free_producer(m, tile.chain_in)
    assume_stream_rules(m, tile.chain_in, "chain_in")
    drive_free_consumer(m, tile.chain_out)
    assert_stream_rules(m, tile.chain_out, "chain_out")
    drive_free_producer(m, tile.readback_in)
    assume_stream_rules(m, tile.readback_in, "readback_in")
    drive_free_consumer(m, tile.readback_out)
    for uop in (tile.switch_uop, tile.fu_uop):
        drive_free_consumer(m, uop)
    m.d.comb += tile.cfg.rdata.eq(AnySeq(32))

    # Every word is forwarded once, in order, unchanged.
    words = track_tokens(m, "word", arrive=transfer(tile.chain_in),
                         arrive_payload=tile.chain_in.payload, deliver=transfer(tile.chain_out),
                         deliver_payload=tile.chain_out.payload, capacity=2)

    # The bench's own parse of the packet stream.
    word = tile.chain_in.payload
    taken = transfer(tile.chain_in)
    kind = Signal(WordKind, name="bench_kind")
    header = Signal(Header, name="bench_header")
    body = Signal(range(32), name="bench_body")         # bodies of the window already taken
    named = Signal(name="bench_named")                  # the masks name this tile
    low = Signal(32, name="bench_low")
    window_end = body + 1 == header.window
    with m.If(taken):
        with m.Switch(kind):
            with m.Case(WordKind.HEADER):
                m.d.sync += [header.eq(word), kind.eq(WordKind.TARGET)]
            with m.Case(WordKind.TARGET):
                m.d.sync += [named.eq(word[ROW] & word[16 + COL]), body.eq(0),
                             kind.eq(Mux(header.window == 0, WordKind.HEADER, WordKind.BODY_LOW))]
            with m.Case(WordKind.BODY_LOW):
                m.d.sync += [low.eq(word), kind.eq(WordKind.BODY_HIGH)]
            with m.Case(WordKind.BODY_HIGH):
                m.d.sync += [body.eq(body + 1),
                             kind.eq(Mux(window_end, WordKind.HEADER, WordKind.BODY_LOW))]

    second_word = taken & (kind == WordKind.BODY_HIGH) & named
    for expander, opcode, name in ((switch_expander, Opcode.SWITCH, "switch"),
                                   (fu_expander, Opcode.FU, "fu")):
        due = second_word & (header.opcode == opcode)
        given = transfer(expander.i)
        m.d.comb += Assert(given == due, f"{name}: took a body not of its packets, or missed one")
        with m.If(given):
            m.d.comb += [
                Assert(expander.i.payload.body == Cat(low, word), f"{name}: body corrupted"),
                Assert(expander.i.payload.window_end == window_end,
                       f"{name}: window end misplaced"),
                Assert(expander.i.payload.repeat == header.repeat, f"{name}: wrong repeat"),
            ]
        m.d.comb += Cover(given & window_end & (body == 1) & (header.repeat == 2),
                          f"{name}: a two-body window with repeat 2 dispatched")
    m.d.comb += Cover(taken & (kind == WordKind.BODY_HIGH) & ~named & (header.opcode == Opcode.SWITCH),
                      "a SWITCH body for another tile goes by")
    if invariants:
        tile_invariants(m, tile, fragment, words, kind, header, body, named, low)
    return bench


def tile_invariants(m, tile, fragment, words: TokenTracker, kind, header, body, named, low):
    """The bench's parse against the PacketTracker and the tile's registers; the forwarding skid
    pair's slots against the followed word."""
    packet = find_submodule(fragment, "packet")
    m.d.comb += [
        Assert(find_register(packet, "kind") == Value.cast(kind),
               "invariant: packet tracker's word kind"),
        Assert(find_register(packet, "header") == Value.cast(header),
               "invariant: packet tracker's header"),
        Assert(find_register(fragment, "selected") == named, "invariant: tile selected"),
    ]
    with m.If(kind == WordKind.BODY_HIGH):
        m.d.comb += Assert(find_register(fragment, "low_word") == low, "invariant: low word")
    with m.If((kind == WordKind.BODY_LOW) | (kind == WordKind.BODY_HIGH)):
        m.d.comb += [
            Assert(find_register(packet, "body_at") == body, "invariant: packet tracker's body"),
            Assert(body < header.window, "invariant: body within the window"),
        ]
    forwarding_invariants(m, fragment, tile.chain_out, words)




# --- the dispenser ------------------------------------------------------------------------

def dispenser_bench(dispenser: Dispenser, *, invariants: bool = True) -> FormalBench:
    """The chain's entry forwards every ``ctrl`` word once, in order, unchanged, whatever it
    blocks on (READ values outstanding, global reads, stalls)."""
    bench = FormalBench()
    m = bench.m
    fragment = elaborate_open(dispenser)
    m.submodules.dut = fragment
    drive_free_producer(m, dispenser.ctrl)
    assume_stream_rules(m, dispenser.ctrl, "ctrl")
    drive_free_consumer(m, dispenser.chain)
    assert_stream_rules(m, dispenser.chain, "chain")
    drive_free_producer(m, dispenser.readback_chain)
    assume_stream_rules(m, dispenser.readback_chain, "readback_chain")
    drive_free_consumer(m, dispenser.readback)
    assert_stream_rules(m, dispenser.readback, "readback")
    m.d.comb += [dispenser.done.eq(AnySeq(1)), dispenser.watchdog.eq(AnySeq(32))]
    words = track_tokens(m, "word", arrive=transfer(dispenser.ctrl),
                         arrive_payload=dispenser.ctrl.payload, deliver=transfer(dispenser.chain),
                         deliver_payload=dispenser.chain.payload, capacity=2)
    m.d.comb += Cover(transfer(dispenser.chain) & (words.delivered == 3) &
                      (Value.cast(find_register(find_submodule(fragment, "packet"), "kind")) ==
                       WordKind.BODY_LOW.value),
                      "a header, a target and a body word forwarded")
    if invariants:
        forwarding_invariants(m, fragment, dispenser.chain, words)
    return bench


def forwarding_invariants(m, fragment, source, words: TokenTracker):
    """The forwarding skid pair (sink ``forward``) holds the words in flight, oldest first."""
    skid = skid_signals(fragment, source)
    skid_free = find_register(fragment, "forward__ready")
    m.d.comb += Assert(words.in_flight == source.valid + ~skid_free,
                       "invariant: forwarding slots hold the words in flight")
    with m.If(words.held & (words.position == 0)):
        m.d.comb += Assert(source.payload == words.payload,
                           "invariant: the output register holds the followed word")
    with m.If(words.held & (words.position == 1)):
        m.d.comb += Assert(skid == words.payload, "invariant: skid slot holds the followed word")


# --- the expander ------------------------------------------------------------------------

MAX_WINDOW = 2
MAX_REPEAT = 3
COUNT_BITS = 5      # micro-op counters modulo 32: at most two windows' worth (12) + 2 owed


def expander_bench(expander: Expander, *, invariants: bool = True) -> FormalBench:
    """Bodies in, micro-ops out: each window's bodies, in order, ``max(repeat, 1)`` times.

    The bench counts the micro-ops due (``assigned``) and emitted, and follows one arbitrary
    output position: the first pass's micro-op there is the body taken at that position; a
    replayed one is body ``b`` of its window, which the bench knows once the window ends, and
    whose payload it has kept if ``b`` is the window body it follows (another solver's choice).
    """
    bench = FormalBench()
    m = bench.m
    peek = {}

    def add_ports(module):
        window = module.submodules.window
        peek["replay"] = window.read_ports[0]
        peek["followed"] = window.read_port(domain="comb")
        peek["queued"] = window.read_port(domain="comb")
    fragment = elaborate_open(expander, add_ports)
    m.submodules.dut = fragment
    drive_free_producer(m, expander.i)
    assume_stream_rules(m, expander.i, "i")
    drive_free_consumer(m, expander.o)
    assert_stream_rules(m, expander.o, "o")
    offered = expander.i.payload

    # The environment: windows of 1..MAX_WINDOW bodies, repeat 0..MAX_REPEAT, one per window.
    arrived = Signal(range(MAX_WINDOW), name="window_arrived")    # bodies of this window so far
    repeat = Signal(16, name="window_repeat")
    with m.If(expander.i.valid):
        m.d.comb += [Assume(offered.repeat <= MAX_REPEAT),
                     Assume(offered.window_end | (arrived != MAX_WINDOW - 1))]
        with m.If(arrived != 0):
            m.d.comb += Assume(offered.repeat == repeat)
    taken = transfer(expander.i)

    assigned = Signal(COUNT_BITS, name="uops_assigned")
    emitted = Signal(COUNT_BITS, name="uops_emitted")
    base = Signal(COUNT_BITS, name="window_base")       # position of the window's first body
    position = Signal(COUNT_BITS, name="followed_position")
    armed = Signal(name="followed_armed")
    expected = Signal(offered.body.shape(), name="followed_expected")
    body_index = Signal(range(MAX_WINDOW), name="followed_body_index")
    body_payload = Signal(offered.body.shape(), name="followed_body_payload")
    followed_pass = Signal(range(MAX_REPEAT), name="followed_pass")    # for the cover only
    m.d.comb += [position.eq(AnyConst(COUNT_BITS)), body_index.eq(AnyConst(range(MAX_WINDOW)))]
    passes = Mux(offered.repeat == 0, 1, offered.repeat)
    length = arrived + 1                                # of the window, at its last body
    start = Mux(arrived == 0, assigned, base)
    offset = (position - start)[:COUNT_BITS]
    followed_body = Mux(arrived == body_index, offered.body, body_payload)
    with m.If(taken):
        m.d.sync += [arrived.eq(Mux(offered.window_end, 0, arrived + 1)), repeat.eq(offered.repeat),
                     base.eq(start), assigned.eq(assigned + 1)]
        with m.If(arrived == body_index):
            m.d.sync += body_payload.eq(offered.body)
        with m.If(offset == arrived):                       # this body, first pass
            m.d.sync += [armed.eq(1), expected.eq(offered.body), followed_pass.eq(0)]
        with m.If(offered.window_end):
            m.d.sync += assigned.eq(start + length * passes)
            for t in range(1, MAX_REPEAT):
                replayed = (t < passes) & (body_index < length) & (offset == body_index + length * t)
                with m.If(replayed):
                    m.d.sync += [armed.eq(1), expected.eq(followed_body), followed_pass.eq(t)]
    owed = (assigned - emitted)[:COUNT_BITS]
    with m.If(expander.o.valid):
        m.d.comb += Assert(owed != 0, "o: a micro-op no window holds")
    with m.If(transfer(expander.o)):
        m.d.sync += emitted.eq(emitted + 1)
        with m.If(armed & (emitted == position)):
            m.d.sync += armed.eq(0)
            m.d.comb += Assert(Value.cast(expander.o.payload) == expected,
                               "o: micro-op out of order, missing, repeated or corrupted")
    m.d.comb += [
        Cover(transfer(expander.o) & armed & (emitted == position) &
              (followed_pass == MAX_REPEAT - 1) & (body_index == MAX_WINDOW - 1),
              "the last body of a full window delivered in its last pass"),
        Cover(expander.i.valid & ~expander.i.ready, "a body waits for the replays"),
    ]
    if invariants:
        expander_invariants(m, expander, fragment, peek, arrived, base, assigned, emitted,
                            position, armed, expected, body_index, body_payload)
    return bench


def expander_invariants(m, expander, fragment, peek, arrived, base, assigned, emitted,
                        position, armed, expected, body_index, body_payload):
    """Where the expander keeps the micro-ops still owed: the output register, the skid slot,
    the window buffer's read register (``held``), then the reads still to issue, pass after
    pass over buffer entries ``0..last_at``."""
    replaying = find_register(fragment, "replaying")
    fill_at = find_register(fragment, "fill_at")
    last_at = find_register(fragment, "last_at")
    replay_at = find_register(fragment, "replay_at")
    passes_left = find_register(fragment, "passes_left")
    held = find_register(fragment, "held")
    skid = find_register(fragment, "skid")
    skid_valid = find_register(fragment, "skid_valid")
    length = last_at + 1
    to_issue = Mux(passes_left == 0, 0, (passes_left - 1) * length + length - replay_at)
    slots = expander.o.valid + skid_valid
    owed = (assigned - emitted)[:COUNT_BITS]
    m.d.comb += [
        Assert(~skid_valid | expander.o.valid, "invariant: skid slot full behind an empty output"),
        Assert(last_at < MAX_WINDOW, "invariant: last_at in the buffer"),
        Assert(replay_at <= last_at, "invariant: replay_at within the window"),
        Assert(passes_left < MAX_REPEAT, "invariant: passes left"),
        Assert(fill_at == arrived, "invariant: the buffer fills from 0"),
        Assert(replaying | (~held & (passes_left == 0)), "invariant: no replay while taking bodies"),
        Assert(~replaying | (arrived == 0), "invariant: replays only between windows"),
        Assert(~replaying | (replay_at == 0) | (passes_left != 0), "invariant: replay pointer at rest"),
        Assert(owed == slots + Mux(replaying, held + to_issue, 0), "invariant: micro-ops owed"),
        Assert((arrived == 0) | (assigned == (base + arrived)[:COUNT_BITS]),
               "invariant: the window's first pass so far"),
    ]
    # The followed window body sits in the buffer at its index.
    stored = Mux(replaying, body_index <= last_at, body_index < arrived)
    m.d.comb += peek["followed"].addr.eq(body_index)
    with m.If(stored):
        m.d.comb += Assert(peek["followed"].data == body_payload, "invariant: buffer holds the body")
    # The followed micro-op.
    ahead = (position - emitted)[:COUNT_BITS]
    queued = ahead - slots - held            # reads still to issue before it, while replaying
    address = Mux(length == 1, 0, (replay_at + queued)[0])
    m.d.comb += peek["queued"].addr.eq(address)
    with m.If(armed):
        m.d.comb += Assert(ahead < owed, "invariant: followed micro-op still owed")
        with m.If((ahead == 0) & expander.o.valid):
            m.d.comb += Assert(Value.cast(expander.o.payload) == expected,
                               "invariant: output register holds the micro-op")
        with m.Elif((ahead == 1) & skid_valid):
            m.d.comb += Assert(skid == expected, "invariant: skid slot holds the micro-op")
        with m.Elif(replaying & held & (ahead == slots)):
            m.d.comb += Assert(peek["replay"].data == expected,
                               "invariant: read register holds the micro-op")
        with m.Elif(replaying):
            m.d.comb += Assert(peek["queued"].data == expected,
                               "invariant: the buffer holds the micro-op to replay")


# --- the proofs ----------------------------------------------------------------------------

@pytest.mark.formal
def test_tile_dispatch_proof():
    assert_proven(run_proof("tile_dispatch", tile_bench(ProbedTileControl(ROW, COL, max_window=2)),
                            depth=INDUCTION_DEPTH))


@pytest.mark.formal
def test_tile_dispatch_covers_reached():
    """Windows reach both expanders, and a body for another tile goes by."""
    assert_proven(run_proof("tile_dispatch_cover",
                            tile_bench(ProbedTileControl(ROW, COL, max_window=2)),
                            mode="cover", depth=COVER_DEPTH))


def select_by_row_only(tile, fragment):
    """Mutant: the tile matches the row mask only, taking packets meant for other columns."""
    selected = find_register(fragment, "selected")
    kind = find_register(find_submodule(fragment, "packet"), "kind")
    target = transfer(tile.chain_in) & (kind == WordKind.TARGET)
    fragment.add_statements("sync", selected.eq(Mux(target, tile.chain_in.payload[ROW], selected)))


@pytest.mark.formal
def test_tile_dispatch_mutant_fails():
    bench = tile_bench(ProbedTileControl(ROW, COL, max_window=2), invariants=False,
                       mutate=select_by_row_only)
    result = run_proof("mutant_tile_row_only", bench, mode="bmc", depth=MUTANT_BMC_DEPTH)
    assert result.status == "FAIL", result.log_tail()
    assert result.counterexample, "expected a counterexample trace from the initial state"
    failed = {failure.description for failure in result.failures}
    assert failed & {"switch: took a body not of its packets, or missed one",
                     "fu: took a body not of its packets, or missed one"}, failed


@pytest.mark.formal
def test_expander_proof():
    assert_proven(run_proof("expander", expander_bench(Expander(unsigned(64), MAX_WINDOW)),
                            depth=INDUCTION_DEPTH))


@pytest.mark.formal
def test_expander_covers_reached():
    """A full window's last pass is delivered and a body waits for replays: the proof is not
    vacuous."""
    assert_proven(run_proof("expander_cover", expander_bench(Expander(unsigned(64), MAX_WINDOW)),
                            mode="cover", depth=COVER_DEPTH))


@pytest.mark.formal
def test_expander_mutant_fails():
    """The simulation suite's expander that replays one pass too few."""
    bench = expander_bench(DroppingExpander(unsigned(64), MAX_WINDOW), invariants=False)
    result = run_proof("mutant_dropping_expander", bench, mode="bmc", depth=MUTANT_BMC_DEPTH)
    assert result.status == "FAIL", result.log_tail()
    assert result.counterexample, "expected a counterexample trace from the initial state"
    failed = [failure.description for failure in result.failures]
    assert "o: micro-op out of order, missing, repeated or corrupted" in failed, failed


@pytest.mark.formal
def test_dispenser_forwarding_proof():
    assert_proven(run_proof("dispenser_forwarding", dispenser_bench(Dispenser()),
                            depth=INDUCTION_DEPTH))


@pytest.mark.formal
def test_dispenser_forwarding_covers_reached():
    assert_proven(run_proof("dispenser_forwarding_cover", dispenser_bench(Dispenser()),
                            mode="cover", depth=COVER_DEPTH))


class LeakyDispenser(Dispenser):
    """Mutant: takes a ``ctrl`` word whenever the chain is ready, even while its slice is full or
    it waits for READ values: such words are lost."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.ctrl.ready.eq(self.chain.ready)
        return m


@pytest.mark.formal
def test_dispenser_forwarding_mutant_fails():
    result = run_proof("mutant_leaky_dispenser", dispenser_bench(LeakyDispenser(), invariants=False),
                       mode="bmc", depth=MUTANT_BMC_DEPTH)
    assert result.status == "FAIL", result.log_tail()
    assert result.counterexample, "expected a counterexample trace from the initial state"
    failed = {failure.description for failure in result.failures}
    assert failed & {"word: token delivered out of order or corrupted",
                     "word: more tokens delivered than arrived, or more than 2 held"}, failed
