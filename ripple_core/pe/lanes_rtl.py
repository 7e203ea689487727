"""Two operators in one ``pe`` tile (``[pe] lanes = 2``): the RTL.

:func:`elaborate_lanes` builds the body of a two-lane :class:`ripple_core.pe.PeFu` on the FU's own
ports; :class:`ripple_core.pe.lanes.PairModel` is its golden model (docs/ripple.md, "Two operators
per tile").

* **Lanes.** Lane 0 is a :class:`RipplePE` without queues with the tile's memory (its bank or
  its port to the shared memory), lane 1 one without memory. Both are gated by the micro-op.
* **Port map** (:data:`REG_PORTS`, reset :data:`PORTS_IDENTITY`). Lane L's slot k reads the
  source ``slots[3L + k]``: tile input j (0..2), the other lane's port p through its internal
  queue (``4 + p``), or nothing (3, 6, 7: never valid). A tile input feeds the first slot in
  index order (lane 0's slots 0-2, then lane 1's) that selects it, and takes its ``ready``; a
  later slot that selects it too is fed nothing. A tile input no slot selects is never ready.
* **Internal queues.** Lane L's port p is *internal* when a slot of lane 1-L selects ``4 + p``;
  its output register then fills a bypassing :data:`INTERNAL_QUEUE_DEPTH`-token
  :class:`TokenQueue`, whose output feeds the first such slot. The queue offers a token the cycle
  it enters and its ``i.ready`` is a register, so a lane's firing logic never waits on the other
  lane's, and a token fired by one lane at cycle t can be taken by the other's firing at t+1.
* **Tile outputs.** Tile output q shows lane ``outputs[q] >> 1``'s port ``outputs[q] & 1``,
  unless that port is internal (then q is never valid) or output 0 already shows it (output 1
  is then never valid). A lane port that is neither internal nor shown is never ready.
* **Micro-op.** ``firings`` grants lane 0's firings, ``firings1`` lane 1's; ``open`` opens
  both. It completes in the first cycle in which both grants are spent, neither lane holds a
  result and every internal queue is empty.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import wiring

from hw.token_queue import TokenQueue
from rsn.isa import field_width, joined_field

from .config import (
    INTERNAL_QUEUE_DEPTH,
    LANE1_BASE,
    LANE_REGISTERS,
    N_PORTS,
    N_SLOTS,
    PORT_MAP,
    PORTS_IDENTITY,
    REG_PORTS,
    SOURCE_INTERNAL,
    WIDTH,
    PeUop,
)
from .rtl import RipplePE

__all__ = ["elaborate_lanes", "grant_firings"]


class _HARDWARE:
    """The operations of :func:`_selects` on Amaranth values."""
    false = Const(0)

    @staticmethod
    def invert(value):
        return ~value

    @staticmethod
    def any(values):
        return Cat(*values).any()


class _PYTHON:
    """The same operations on Python booleans, for the selects' reset values."""
    false = False

    @staticmethod
    def invert(value):
        return not value

    @staticmethod
    def any(values):
        return any(values)


def _first(selects, ops) -> list:
    """For a list of select bits, the bits that are set with none set before them."""
    firsts, seen = [], ops.false
    for select in selects:
        firsts.append(select & ops.invert(seen))
        seen = seen | select
    return firsts


def _selects(source, codes, ops) -> dict:
    """What a port map (each slot's ``source`` code, each tile output's ``codes``) selects, as
    flat lists: ``from_input`` (tile input j feeds slot index: [j][index]), ``from_queue`` (lane
    L's port p feeds slot k of lane 1 - L: [L][p][k]), ``internal`` ([L][p]) and ``shows``
    (tile output q shows lane port code: [q][code])."""
    from_input = [_first([source[index] == j for index in range(2 * N_SLOTS)], ops) for j in range(N_SLOTS)]
    from_queue = [[_first([source[N_SLOTS * (1 - lane) + k] == SOURCE_INTERNAL + p for k in range(N_SLOTS)],
                          ops) for p in range(N_PORTS)] for lane in range(2)]
    internal = [[ops.any(from_queue[lane][p]) for p in range(N_PORTS)] for lane in range(2)]
    shows = []
    for q in range(N_PORTS):
        for code in range(2 * N_PORTS):
            lane, p = divmod(code, 2)
            shown = (codes[q] == code) & ops.invert(internal[lane][p])
            if q:
                shown = shown & (codes[0] != code)
            shows.append(shown)
    return {"from_input": [bit for row in from_input for bit in row],
            "from_queue": [bit for lane in from_queue for port in lane for bit in port],
            "internal": [bit for lane in internal for bit in lane], "shows": shows}


def elaborate_lanes(fu, m: Module, *, mem_depth: int, shared_words: int, ripple_ops: bool):
    """Build a two-lane pe tile in ``m`` on the ports of ``fu`` (a PeFu with ``lanes=2``)."""
    lanes = [RipplePE(0, gated=True, mem_depth=mem_depth, shared_words=shared_words, ripple_ops=ripple_ops),
             RipplePE(0, gated=True, mem_depth=0, shared_words=0, ripple_ops=ripple_ops)]
    m.submodules.lane0, m.submodules.lane1 = lanes
    if shared_words:
        wiring.connect(m, lanes[0].mem_req, wiring.flipped(fu.mem_req))
        wiring.connect(m, wiring.flipped(fu.mem_resp), lanes[0].mem_resp)

    # The port map register and the config bus: REG_PORTS here, lane 1's registers at
    # LANE1_BASE + r, everything else lane 0's. Reads return in the next cycle.
    ports_word = Signal(PORT_MAP.size, init=PORTS_IDENTITY, name="ports_word")
    cfg = fu.cfg
    on_ports = cfg.addr == REG_PORTS
    on_lane1 = (cfg.addr >= LANE1_BASE) & (cfg.addr < LANE1_BASE + LANE_REGISTERS)
    on_lane0 = ~on_ports & ~on_lane1
    m.d.comb += [
        lanes[0].cfg.addr.eq(cfg.addr), lanes[0].cfg.data.eq(cfg.data),
        lanes[0].cfg.write.eq(cfg.write & on_lane0), lanes[0].cfg.read.eq(cfg.read & on_lane0),
        lanes[1].cfg.addr.eq(cfg.addr - LANE1_BASE), lanes[1].cfg.data.eq(cfg.data),
        lanes[1].cfg.write.eq(cfg.write & on_lane1), lanes[1].cfg.read.eq(cfg.read & on_lane1),
    ]
    with m.If(cfg.write & on_ports):
        m.d.sync += ports_word.eq(cfg.data)
    read_ports, read_lane1 = Signal(), Signal()
    ports_read = Signal(32, name="ports_read")
    with m.If(cfg.read):
        m.d.sync += [read_ports.eq(on_ports), read_lane1.eq(on_lane1), ports_read.eq(ports_word)]
    m.d.comb += cfg.rdata.eq(Mux(read_ports, ports_read, Mux(read_lane1, lanes[1].cfg.rdata,
                                                                lanes[0].cfg.rdata)))

    # The internal queues: queues[L][p] carries lane L's port p to lane 1 - L.
    queues = [[TokenQueue(unsigned(WIDTH), INTERNAL_QUEUE_DEPTH, mode="bypass") for _ in range(N_PORTS)]
              for _ in range(2)]
    for lane in range(2):
        for p in range(N_PORTS):
            m.submodules[f"internal{lane}_{p}"] = queues[lane][p]

    # The selects the port map decodes to, in registers: they load with the word (from the value
    # being written, so they never lag it), and the streams' multiplexers see flip-flops only.
    written = cfg.write & on_ports
    ports_next = PORT_MAP(Mux(written, cfg.data[:PORT_MAP.size], ports_word))
    wanted = _selects([ports_next.slots[index] for index in range(2 * N_SLOTS)],
                      [ports_next.outputs[q] for q in range(N_PORTS)], _HARDWARE)
    reset = _selects([(PORTS_IDENTITY >> (3 * index)) & 7 for index in range(2 * N_SLOTS)],
                     [(PORTS_IDENTITY >> (6 * N_SLOTS + 2 * q)) & 3 for q in range(N_PORTS)], _PYTHON)
    selects = {}
    for name, values in wanted.items():
        bits = Signal(len(values), init=sum(int(bool(v)) << n for n, v in enumerate(reset[name])), name=name)
        m.d.sync += bits.eq(Cat(*values))
        selects[name] = [bits[n] for n in range(len(values))]
    slot_of = [(index // N_SLOTS, index % N_SLOTS) for index in range(2 * N_SLOTS)]
    # from_input[j][index]: tile input j feeds slot index; from_queue[lane][p][k]: lane's port p
    # feeds slot k of lane 1 - lane; internal[lane][p]; shows[q][2 * lane + p].
    from_input = [selects["from_input"][2 * N_SLOTS * j:2 * N_SLOTS * (j + 1)] for j in range(N_SLOTS)]
    from_queue = [[selects["from_queue"][N_SLOTS * (N_PORTS * lane + p):N_SLOTS * (N_PORTS * lane + p + 1)]
                   for p in range(N_PORTS)] for lane in range(2)]
    internal = [selects["internal"][N_PORTS * lane:N_PORTS * (lane + 1)] for lane in range(2)]
    shows = [selects["shows"][2 * N_PORTS * q:2 * N_PORTS * (q + 1)] for q in range(N_PORTS)]

    for index, (lane, k) in enumerate(slot_of):
        slot = lanes[lane].i[k]
        feeds = [(from_input[j][index], fu.i[j]) for j in range(N_SLOTS)]
        feeds += [(from_queue[1 - lane][p][k], queues[1 - lane][p].o) for p in range(N_PORTS)]
        m.d.comb += [slot.valid.eq(Cat(*(select & stream.valid for select, stream in feeds)).any()),
                     slot.payload.eq(_or_payloads(feeds))]
    for j in range(N_SLOTS):
        m.d.comb += fu.i[j].ready.eq(Cat(*(from_input[j][index] & lanes[lane].i[k].ready
                                           for index, (lane, k) in enumerate(slot_of))).any())
    for lane in range(2):
        for p in range(N_PORTS):
            queue = queues[lane][p]
            reader = lanes[1 - lane]
            m.d.comb += [queue.i.valid.eq(internal[lane][p] & lanes[lane].o[p].valid),
                         queue.i.payload.eq(lanes[lane].o[p].payload),
                         queue.o.ready.eq(Cat(*(from_queue[lane][p][k] & reader.i[k].ready
                                                for k in range(N_SLOTS))).any())]

    # Tile outputs: output q shows lane port outputs[q], unless it is internal or output 0
    # shows it already; a lane port is ready through the internal queue or the output showing it.
    for q in range(N_PORTS):
        m.d.comb += [
            fu.o[q].valid.eq(Cat(*(shows[q][code] & lanes[code // 2].o[code % 2].valid
                                   for code in range(2 * N_PORTS))).any()),
            fu.o[q].payload.eq(_or_payloads([(shows[q][code], lanes[code // 2].o[code % 2])
                                             for code in range(2 * N_PORTS)])),
        ]
    for lane in range(2):
        for p in range(N_PORTS):
            code = 2 * lane + p
            ready = (internal[lane][p] & queues[lane][p].i.ready) | \
                Cat(*(shows[q][code] & fu.o[q].ready for q in range(N_PORTS))).any()
            m.d.comb += lanes[lane].o[p].ready.eq(ready)

    # The micro-op: lane 0's grant, lane 1's, or open for both.
    uop = fu.uop
    active, last, open_ = Signal(), Signal(), Signal()
    accept = uop.valid & uop.ready
    completes = Signal()
    grants = [grant_firings(m, lanes[lane].fire, name=str(lane), open_=open_, accept=accept,
                            count=joined_field(uop.payload, "firings1" if lane else "firings"),
                            opens=uop.payload.open, completes=completes) for lane in range(2)]
    for lane, (_, enable) in enumerate(grants):
        m.d.comb += lanes[lane].enable.eq(enable)
    queued = Cat(*(queue.level != 0 for pair in queues for queue in pair)).any()
    holding = lanes[0].holding | lanes[1].holding
    m.d.comb += completes.eq(active & ~open_ & (grants[0][0] == 0) & (grants[1][0] == 0) & ~holding & ~queued)
    m.d.comb += uop.ready.eq(~active)
    with m.If(completes):
        m.d.sync += active.eq(0)
    with m.If(accept):
        m.d.sync += [active.eq(1), last.eq(uop.payload.last), open_.eq(uop.payload.open)]
    sent = Cat(*(fu.o[q].valid & fu.o[q].ready for q in range(N_PORTS))).any()
    waiting = Cat(*(fu.i[k].valid for k in range(N_SLOTS))).any()
    holds_work = waiting | holding | ~lanes[0].idle | ~lanes[1].idle | queued
    m.d.comb += fu.busy.eq(Mux(open_, holds_work, active))
    fired = lanes[0].fire | lanes[1].fire
    return dict(firing=lanes[0].fire + lanes[1].fire, stall=active & ~fired & ~sent & (~open_ | holds_work),
                completes_last=(completes & last) | (accept & uop.payload.open))


def grant_firings(m, fire, *, name: str, open_, accept, count, opens, completes):
    """A lane's grant: ``left``, the firings it has still to make, and ``enable``, that it may
    fire (its micro-op is active, and open or with firings left). ``enable`` is a register,
    updated with ``left`` (on a firing, an accepted micro-op of ``count`` firings or ``opens``,
    the micro-op's completion), so the firing logic sees a flip-flop rather than a zero test of
    ``left``'s 24 bits. Returns ``(left, enable)``."""
    left = Signal(field_width(PeUop, "firings"), name=f"left{name}")
    enable = Signal(name=f"enable{name}")
    with m.If(fire):
        m.d.sync += [left.eq(left - 1), enable.eq(open_ | (left != 1))]
    with m.If(completes):
        m.d.sync += enable.eq(0)
    with m.If(accept):
        m.d.sync += [left.eq(count), enable.eq(opens | (count != 0))]
    return left, enable


def _or_payloads(feeds):
    """The payload of the one selected stream of ``feeds`` ((select, stream) pairs), 0 if none."""
    value = Const(0, WIDTH)
    for select, stream in feeds:
        value = value | Mux(select, stream.payload, 0)
    return value
