"""One data memory shared by many requesters: banks, round-robin per bank, in-order answers."""

from functools import reduce
from operator import or_

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .params import ParameterError, check_int

__all__ = ["MemoryOp", "BankedMemory", "request_layout", "response_layout", "LATENCY"]

# Clock edges from a request's handshake to its response's earliest handshake (see BankedMemory).
LATENCY = 2
COUNTER_WIDTH = 32


class MemoryOp(enum.Enum, shape=2):
    """What a request asks of the memory; the ``op`` field of :func:`request_layout`."""
    READ = 0
    WRITE = 1
    ACQUIRE = 2
    RELEASE = 3


def request_layout(width: int, meta_width: int) -> data.StructLayout:
    """``op``, word ``addr`` (32 bits), ``data`` (written by WRITE) and ``meta`` (if any)."""
    fields = {"op": MemoryOp, "addr": 32, "data": width}
    if meta_width:
        fields["meta"] = meta_width
    return data.StructLayout(fields)


def response_layout(width: int, meta_width: int) -> data.StructLayout:
    """``data``, ``fault`` and the request's ``meta`` (if any), returned unchanged."""
    fields = {"data": width, "fault": 1}
    if meta_width:
        fields["meta"] = meta_width
    return data.StructLayout(fields)


def _check_power_of_two(name: str, value: int, meaning: str, minimum: int = 1) -> int:
    check_int("BankedMemory", name, value, minimum=minimum, meaning=meaning)
    if value & (value - 1):
        raise ParameterError(
            f"BankedMemory: {name}={value} is not allowed; {name} ({meaning}) must be a power of two")
    return value


def _select(choices, shape):
    """AND-OR multiplexer: the value whose one-hot select is high (0 if none is)."""
    return reduce(or_, (Mux(select, value, 0) for select, value in choices), Const(0, shape))


def _shift_buffer(m, slots, level, pushes, pop):
    """A FIFO of registers whose head is ``slots[0]``: what is on offer comes from flip-flops.

    ``pushes`` are ``(valid, payload)`` pairs entering in list order in one cycle; ``pop``
    removes the head. The caller guarantees room (here: the credits).
    """
    base = level - pop
    for index, slot in enumerate(slots):
        if index + 1 < len(slots):
            with m.If(pop):
                m.d.sync += slot.eq(slots[index + 1])
        before = Const(0, 2)
        for valid, payload in pushes:
            with m.If(valid & (base + before == index)):
                m.d.sync += slot.eq(payload)
            before = before + valid
    m.d.sync += level.eq(level - pop + sum(valid for valid, _ in pushes))


class BankedMemory(wiring.Component):
    """A data memory that ``ports`` requesters share, each reaching every address.

    Why: the pe tiles of a fabric (and the control plane, for preload and read-back) use one
    memory instead of private banks, so any tile can LOAD what another STOREd and the atomic
    directory (ACQUIRE/RELEASE) is shared. Banking keeps one block RAM per bank and lets
    requests to different banks proceed in the same cycle.

    Address map: word address ``a`` is in range iff ``a < words``; bank ``a % banks``, row
    ``a // banks``. An out-of-range request is accepted without touching a bank and answered,
    in order, with ``fault`` = 1 and data 0.

    Answers (``resp.data``): READ, the word; WRITE, 0; ACQUIRE, 1 if no entry of the bank's
    directory held the address and one was free (it now holds it), else 0 (busy, nothing
    changed, retry); RELEASE, 1 if the address was held (now freed), else 0 (a program error).
    ACQUIRE/RELEASE do not touch the data. With ``lock_entries`` = 0 every ACQUIRE is busy.

    Latency: a request handshaken at clock edge t is on offer at ``resp`` from just after edge
    t+1, so its response handshakes at edge t+2 at the earliest (:data:`LATENCY`).

    Ordering and deadlock freedom, by construction:

    * every request, whatever its bank (or fault), takes the same two cycles to its port's
      response buffer, and a port issues at most one request per cycle, so responses enter each
      port's buffer, and leave it, in request order;
    * a port's request is accepted only while it holds a credit: fewer than ``depth`` of its
      requests are in flight or buffered. So an accepted request always has a buffer slot and
      the response path never waits on the request path. The credit returns at the edge its
      response handshakes and is usable from the next cycle: ``req.ready`` never depends on
      ``resp.ready`` (no combinational path), and ``resp[k].ready`` low stops only port k.
    * A credit is out for three accept decisions (accept, in flight, on offer), so ``depth``
      >= 3 sustains one request per cycle per port; smaller depths trade throughput for area.

    Arbitration: per bank, among the ports whose valid, in-range request targets the bank and
    which have a credit, the first after the bank's last granted port in cyclic order
    0, 1, ..., ports-1 (port 0 first before any grant), as :class:`~hw.arbiter.Arbiter`. At
    most one access per bank per cycle, and a port that keeps requesting waits at most
    ``ports``-1 grants. The grant is combinational: ``req.ready`` depends on ``req.valid`` and
    the address (of every port), but a requester need never wait for ready before raising valid.

    Parameters
    ----------
    ports : int
        Request/response port pairs (>= 1).
    banks : int
        Memory banks, a power of two (>= 1).
    words : int
        Total words, a power of two, a multiple of ``banks``.
    width : int
        Data width in bits (>= 1).
    meta_width : int
        Bits (0..8) passed from each request to its response unchanged, to tag what it answers.
    depth : int
        Response-buffer slots (credits) per port (>= 1).
    lock_entries : int
        Addresses each bank's atomic directory can hold at once (>= 0).

    Members
    -------
    req : In(stream.Signature(request_layout(width, meta_width))).array(ports)
    resp : Out(stream.Signature(response_layout(width, meta_width))).array(ports)
    accesses : Out(32).array(banks)
        Requests granted by each bank (wraps).
    conflicts : Out(32).array(banks)
        Cycles in which some eligible request for the bank was not granted (wraps).
    clear : In(1)
        Zeroes every counter at the next edge (a fabric pulses it at START, so the counters
        count the run, as the tiles' counters do); a grant in that cycle is not counted.
    """

    def __init__(self, ports: int, banks: int, words: int, *, width: int = 32, meta_width: int = 0,
                 depth: int = 3, lock_entries: int = 4):
        self.ports = check_int("BankedMemory", "ports", ports, minimum=1,
                               meaning="number of request/response port pairs")
        self.banks = _check_power_of_two("banks", banks, "number of memory banks")
        self.words = _check_power_of_two("words", words, "total number of words")
        if words < banks:
            raise ParameterError(
                f"BankedMemory: words={words} is not allowed; words (total number of words) must be "
                f">= banks={banks}, so that every bank has a row")
        if words > 2**32:
            raise ParameterError(
                f"BankedMemory: words={words} is not allowed; words (total number of words) must be "
                f"<= 2**32, the reach of the 32-bit address")
        self.width = check_int("BankedMemory", "width", width, minimum=1, meaning="data width in bits")
        self.meta_width = check_int("BankedMemory", "meta_width", meta_width, minimum=0,
                                    meaning="bits passed from request to response")
        if meta_width > 8:
            raise ParameterError(
                f"BankedMemory: meta_width={meta_width} is not allowed; meta_width (bits passed from "
                f"request to response) must be 0..8")
        self.depth = check_int("BankedMemory", "depth", depth, minimum=1,
                               meaning="response-buffer slots per port")
        self.lock_entries = check_int("BankedMemory", "lock_entries", lock_entries, minimum=0,
                                      meaning="atomic-directory entries per bank")
        self.request_layout = request_layout(width, meta_width)
        self.response_layout = response_layout(width, meta_width)
        super().__init__({
            "req": In(stream.Signature(self.request_layout)).array(ports),
            "resp": Out(stream.Signature(self.response_layout)).array(ports),
            "accesses": Out(COUNTER_WIDTH).array(banks),
            "conflicts": Out(COUNTER_WIDTH).array(banks),
            "clear": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        ports, banks = range(self.ports), range(self.banks)
        bank_bits = (self.banks - 1).bit_length()
        address_bits = (self.words - 1).bit_length()

        # Request side: decode, and the credit that reserves a response slot.
        outstanding = [Signal(range(self.depth + 1), name=f"outstanding{k}") for k in ports]
        credit = [Signal(name=f"credit{k}") for k in ports]
        in_range = [Signal(name=f"in_range{k}") for k in ports]
        eligible = [[Signal(name=f"eligible{k}_bank{b}") for b in banks] for k in ports]
        for k in ports:
            addr = self.req[k].payload.addr
            m.d.comb += [
                credit[k].eq(outstanding[k] < self.depth),
                in_range[k].eq(addr[address_bits:] == 0),
            ]
            for b in banks:
                m.d.comb += eligible[k][b].eq(self.req[k].valid & credit[k] & in_range[k]
                                              & (addr[:bank_bits] == b))

        granted = [[Signal(name=f"granted{k}_bank{b}") for b in banks] for k in ports]
        read_data, lock_result = [], []
        for b in banks:
            data_b, lock_b = self._elaborate_bank(m, b, [eligible[k][b] for k in ports],
                                                  [granted[k][b] for k in ports])
            read_data.append(data_b)
            lock_result.append(lock_b)

        for k in ports:
            request, response = self.req[k], self.resp[k]
            accept = request.valid & request.ready
            pop = response.valid & response.ready
            m.d.comb += request.ready.eq((credit[k] & ~in_range[k]) | Cat(granted[k]).any())
            m.d.sync += outstanding[k].eq(outstanding[k] + accept - pop)

            # In flight, the cycle after the accept: what the response needs besides the bank's
            # registered outputs. Loaded every cycle; only `flight_valid` depends on the accept.
            flight_valid = Signal(name=f"flight_valid{k}")
            flight_op = Signal(MemoryOp, name=f"flight_op{k}")
            flight_bank = Signal(range(self.banks), name=f"flight_bank{k}")
            flight_fault = Signal(name=f"flight_fault{k}")
            m.d.sync += [
                flight_valid.eq(accept),
                flight_op.eq(request.payload.op),
                flight_bank.eq(request.payload.addr[:bank_bits]),
                flight_fault.eq(~in_range[k]),
            ]
            arrival = Signal(self.response_layout, name=f"arrival{k}")
            from_bank = [Signal(name=f"flight{k}_from_bank{b}") for b in banks]
            m.d.comb += [from_bank[b].eq(flight_bank == b) for b in banks]
            word = _select(zip(from_bank, read_data, strict=True), self.width)
            answer = _select(zip(from_bank, lock_result, strict=True), 1)
            with m.If(~flight_fault):
                with m.Switch(flight_op):
                    with m.Case(MemoryOp.READ):
                        m.d.comb += arrival.data.eq(word)
                    with m.Case(MemoryOp.ACQUIRE, MemoryOp.RELEASE):
                        m.d.comb += arrival.data.eq(answer)
            m.d.comb += arrival.fault.eq(flight_fault)
            if self.meta_width:
                flight_meta = Signal(self.meta_width, name=f"flight_meta{k}")
                m.d.sync += flight_meta.eq(request.payload.meta)
                m.d.comb += arrival.meta.eq(flight_meta)

            slots = [Signal(self.response_layout, name=f"resp{k}_slot{i}") for i in range(self.depth)]
            level = Signal(range(self.depth + 1), name=f"resp{k}_level")
            pushes = self._arrivals(m, k, flight_valid, arrival, from_bank[0] & ~flight_fault)
            _shift_buffer(m, slots, level, pushes, pop)
            m.d.comb += [response.valid.eq(level != 0), response.payload.eq(slots[0])]
        return m

    def _arrivals(self, m, port, valid, arrival, from_bank_zero):
        """The responses entering ``port``'s buffer this cycle, in order: this cycle's arrival.

        (A seam for the test bench's mutants, which break the ordering here.)
        """
        return [(valid, arrival)]

    def _elaborate_bank(self, m, b, eligible, granted):
        """Bank ``b``: arbiter, data array, atomic directory, counters.

        ``eligible[k]``: port k's request targets this bank and may go; drives ``granted[k]``.
        Returns the bank's registered read data and atomic result, valid the cycle after a grant.
        """
        n = self.ports
        bank_bits = (self.banks - 1).bit_length()
        address_bits = (self.words - 1).bit_length()
        rows = self.words // self.banks

        # Round-robin as a masked pick, linear in the ports (a case per last-granted port with a
        # priority chain in each is quadratic, and a fabric's memory has a port per tile): the
        # lowest eligible port after the last granted one, else the lowest eligible port.
        # `passed` marks the ports up to the last granted one (all of them before any grant).
        passed = Signal(n, init=(1 << n) - 1, name=f"bank{b}_passed")
        requests = Cat(eligible)
        later = requests & ~passed
        pick = Mux(later.any(), later, requests)
        first = Signal(n, name=f"bank{b}_first")
        m.d.comb += first.eq(pick & (-pick)[:n])        # lowest set bit
        m.d.comb += [granted[k].eq(first[k]) for k in range(n)]
        busy = requests.any()
        with m.If(busy):
            m.d.sync += passed.eq(first | (first - 1)[:n])

        choices = list(zip(granted, (self.req[k].payload for k in range(n)), strict=True))
        op = Signal(MemoryOp, name=f"bank{b}_op")
        row = Signal(range(rows), name=f"bank{b}_row")
        write_data = Signal(self.width, name=f"bank{b}_write_data")
        m.d.comb += [
            op.eq(_select(((g, p.op) for g, p in choices), 2)),
            row.eq(_select(((g, p.addr[bank_bits:address_bits]) for g, p in choices), len(row))),
            write_data.eq(_select(((g, p.data) for g, p in choices), self.width)),
        ]

        m.submodules[f"bank{b}"] = storage = Memory(shape=self.width, depth=rows, init=[])
        write = storage.write_port()
        read = storage.read_port(domain="sync")
        m.d.comb += [
            write.addr.eq(row), write.data.eq(write_data), write.en.eq(busy & (op == MemoryOp.WRITE)),
            read.addr.eq(row), read.en.eq(busy & (op == MemoryOp.READ)),
        ]

        lock_result = Signal(name=f"bank{b}_lock_result")
        if self.lock_entries:
            self._elaborate_directory(m, b, row, busy & (op == MemoryOp.ACQUIRE),
                                      busy & (op == MemoryOp.RELEASE), lock_result)

        waited = Cat(e & ~g for e, g in zip(eligible, granted, strict=True)).any()
        with m.If(self.clear):
            m.d.sync += [self.accesses[b].eq(0), self.conflicts[b].eq(0)]
        with m.Else():
            m.d.sync += [
                self.accesses[b].eq(self.accesses[b] + busy),
                self.conflicts[b].eq(self.conflicts[b] + waited),
            ]
        return read.data, lock_result

    def _elaborate_directory(self, m, b, row, acquire, release, result):
        """Bank ``b``'s held addresses (as rows: the bank is implied): ``lock_entries`` slots."""
        entries = range(self.lock_entries)
        held = Signal(self.lock_entries, name=f"bank{b}_held")
        held_row = [Signal.like(row, name=f"bank{b}_held_row{e}") for e in entries]
        match = Signal(self.lock_entries, name=f"bank{b}_match")
        m.d.comb += [match[e].eq(held[e] & (held_row[e] == row)) for e in entries]
        free = ~held
        first_free = Signal(self.lock_entries, name=f"bank{b}_first_free")
        m.d.comb += first_free.eq(free & (-free)[:self.lock_entries])   # lowest set bit
        with m.If(acquire):
            m.d.sync += result.eq(~match.any() & free.any())
            with m.If(~match.any()):
                for e in entries:
                    with m.If(first_free[e]):
                        m.d.sync += [held[e].eq(1), held_row[e].eq(row)]
        with m.If(release):
            m.d.sync += result.eq(match.any())
            for e in entries:
                with m.If(match[e]):
                    m.d.sync += held[e].eq(0)
