"""The RSN tile switch: circuit switching with counted routes (docs/rsn-architecture.md).

Every output owns a small route register (active, one-hot select, remaining beats); micro-ops
issue in order into idle outputs; an input token is multicast eagerly to every active output that
selects it and retires once all of them have it. Outputs leave through a :class:`SkidBuffer`, so
every path out of the switch starts at a flip-flop, except the outputs a fabric with
``register_every`` >= 2 makes pass-through (rsn/hops.py): a two-slot bypassing
:class:`TokenQueue` that offers a token in the cycle it arrives.
"""

from functools import reduce

from amaranth.hdl import C, Cat, Module, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.params import ParameterError, check_int
from hw.skid_buffer import SkidBuffer
from hw.token_queue import TokenQueue
from rsn.fu import MAX_FU_INPUTS, MAX_FU_OUTPUTS
from rsn.isa import LINK_BEATS_BITS, SwitchUop, field_width, joined_field

__all__ = ["Switch", "NEIGHBOURS"]

NEIGHBOURS = 4      # N, E, S, W: the first four inputs and outputs of every switch


def _check_port_count(name: str, value, maximum: int, meaning: str) -> int:
    check_int("Switch", name, value, minimum=0, meaning=meaning)
    if value > maximum:
        raise ParameterError(f"Switch: {name}={value} is not allowed; {name} ({meaning}) "
                             f"must be 0..{maximum}")
    return value


def _any(bits) -> object:
    return reduce(lambda a, b: a | b, bits)


class Switch(wiring.Component):
    """One tile's switch: routes ``i`` to ``o`` under in-order switch micro-ops.

    Timing (fixed, whatever the traffic):

    * **latency 1**: a token accepted on ``i[k]`` in cycle ``c`` is offered on ``o[j]`` in cycle
      ``c + 1`` (the output skid buffer is the only register on the way);
    * a route carries one token per cycle while its input offers and its output takes;
    * a micro-op accepted on ``uop`` in cycle ``c`` makes its routes active in ``c + 1``; the head
      micro-op issues only into outputs whose route register is idle, so an output that takes its
      route's last token in cycle ``c`` accepts the next micro-op in ``c + 1`` and carries its
      first token from ``c + 2`` (one bubble per route boundary on the same output, which keeps
      ``uop.ready`` independent of the data plane);
    * a micro-op with ``fence`` set issues only once no output has a counted route: if the last
      counted route ends with a take in cycle ``c``, the fenced micro-op is accepted in ``c + 1``
      (the same timing as a route handed over on one output). Then every earlier stream's last
      token has retired from its input (an input retires a token in the cycle its last output
      takes it), so the fenced routes see only later tokens, whichever inputs and outputs they use.

    ``i[k].ready`` is a function of registers only (the route registers, the delivered bits and
    the skid buffers' registered readies); ``o[j]`` comes from flip-flops.

    Status: ``busy`` is "an output has a counted route, a micro-op waits on ``uop``, or a token
    waits in an output buffer"; ``progress`` is
    "a token entered an output buffer or left the switch in this cycle" (combinational, for the
    watchdog). ``finished`` rises two cycles after the take that ends the last counted route of an
    issued ``last`` micro-op (routes of all issued ``last`` micro-ops count together) and stays
    until ``clear``. A static route (``beats`` 0) never ends and counts for neither: it is a wire,
    so a program of open streams ends when no unit is busy and no buffer holds a token
    (docs/ripple.md, "Open counts"). ``beats[j]`` counts
    tokens transferred on ``o[j]``, modulo ``2**LINK_BEATS_BITS`` (the width of a route's count).
    ``clear`` zeroes ``beats`` and ``finished`` and wins over an
    increment or a rise in the same cycle (a ``last`` micro-op's end is then reported a cycle
    later). ``held[j]`` is the number of tokens in output ``j``'s skid buffer (0..2), for the
    tile's diagnostic register: after a hang it says how far a blocked stream has backed up.

    Enable bits beyond ``n_outputs`` are ignored. An enabled output whose select names no input
    of this switch is activated but never offers a token (its route hangs; the golden model
    refuses such micro-ops).

    **Pass-through outputs** (``pass_through``): such an output is a two-slot queue that offers
    a token in the cycle it is taken while the queue is empty (latency 0, ``PASS_LATENCY``), and
    keeps it, as a skid buffer would, while ``o[j].ready`` is low. Its ``ready`` towards the
    switch is still a register (the queue's level), so all the rules above hold with a latency
    of 0 on that output; only ``o[j].valid`` and ``o[j].payload`` now depend combinationally on
    the selected input. A pass-through neighbour output ``j`` (0..3) cannot select input ``j``
    (a U-turn, which no route takes): that keeps every loop of links in a fabric through a
    register (rsn/hops.py); a micro-op that asks for one hangs as an unknown select does.

    Parameters
    ----------
    width : int
        Data width ``W``.
    n_fu_in, n_fu_out : int
        The tile FU's input and output counts (0..3 and 0..2).
    pass_through : iterable of int
        The outputs that pass through (default none: every output a register).
    """

    LATENCY = 1         # cycles from a token's acceptance on an input to its offer on an output
    PASS_LATENCY = 0    # the same on a pass-through output

    def __init__(self, width: int, n_fu_in: int, n_fu_out: int, pass_through=()):
        check_int("Switch", "width", width, minimum=1, meaning="data width in bits")
        _check_port_count("n_fu_in", n_fu_in, MAX_FU_INPUTS, "inputs of the tile's FU")
        _check_port_count("n_fu_out", n_fu_out, MAX_FU_OUTPUTS, "outputs of the tile's FU")
        self.width = width
        self.n_inputs = NEIGHBOURS + n_fu_out
        self.n_outputs = NEIGHBOURS + n_fu_in
        self.pass_through = frozenset(pass_through)
        if not self.pass_through <= set(range(self.n_outputs)):
            raise ParameterError(f"Switch: pass_through={sorted(self.pass_through)} names outputs "
                                 f"beyond 0..{self.n_outputs - 1}")
        data = stream.Signature(unsigned(width))
        super().__init__({
            "i": In(data).array(self.n_inputs),
            "o": Out(data).array(self.n_outputs),
            "uop": In(stream.Signature(SwitchUop)),
            "beats": Out(LINK_BEATS_BITS).array(self.n_outputs),
            "held": Out(range(3)).array(self.n_outputs),
            "clear": In(1),
            "busy": Out(1),
            "finished": Out(1),
            "progress": Out(1),
        })

    def latency(self, output: int) -> int:
        """Cycles from a token taken by ``output`` to its offer there, while it holds nothing."""
        return self.PASS_LATENCY if output in self.pass_through else self.LATENCY

    def selectable(self, output: int, input_: int) -> bool:
        """Can ``output`` carry ``input_``'s tokens? (Not a pass-through output's own side.)"""
        return not (output in self.pass_through and output < NEIGHBOURS and input_ == output)

    # The four rules below are separate methods so that a test can break exactly one of them.

    def _route_ends(self, remaining):
        """The take in progress is the route's last (``remaining == 0`` is a static route)."""
        return remaining == 1

    def _offer(self, selected_valid, taken):
        """Eager multicast: an output offers its input's token only if it has not taken it yet."""
        return selected_valid & ~taken

    def _can_issue(self, enable, active):
        """In-order issue: every output the head names must be idle."""
        return ~(enable & active).any()

    def _fence_holds(self, fence, counted):
        """A fenced micro-op waits while any output still has a counted route (static routes are
        wires and never end, so they do not hold a fence)."""
        return fence & counted.any()

    def elaborate(self, platform):
        m = Module()
        routes = _Routes(self.n_inputs, self.n_outputs)
        buffers = []
        for j in range(self.n_outputs):
            if j in self.pass_through:
                buffer = TokenQueue(unsigned(self.width), 2, mode="bypass")
            else:
                buffer = SkidBuffer(unsigned(self.width))
            m.submodules[f"out{j}"] = buffer
            wiring.connect(m, buffer.o, wiring.flipped(self.o[j]))
            buffers.append(buffer)
        for j, buffer in enumerate(buffers):
            if j in self.pass_through:
                m.d.comb += self.held[j].eq(buffer.level)
            else:
                # A SkidBuffer holds o.valid plus ~i.ready tokens (its formal proof's occupancy).
                m.d.comb += self.held[j].eq(buffer.o.valid + ~buffer.i.ready)
        self._elaborate_outputs(m, routes, buffers)
        self._elaborate_inputs(m, routes, buffers)
        issue, enable = self._elaborate_issue(m, routes)
        self._elaborate_status(m, routes, issue, enable)
        return m

    def _elaborate_outputs(self, m, routes, buffers):
        """Each output offers its selected input's token (an AND-OR mux over the one-hot select)
        unless it took that token already. The mux leaves out the inputs an output cannot select,
        so that a pass-through output has no path at all from its own side's input."""
        for j, buffer in enumerate(buffers):
            inputs = [k for k in range(self.n_inputs) if self.selectable(j, k)]
            select = Cat(routes.select[j][k] for k in inputs)
            column = Cat(routes.delivered[k][j] for k in inputs)
            taken = (select & column).any()
            offer = self._offer((select & Cat(self.i[k].valid for k in inputs)).any(), taken)
            m.d.comb += [
                buffer.i.valid.eq(offer),
                buffer.i.payload.eq(_any(self.i[k].payload & routes.select[j][k].replicate(self.width)
                                         for k in inputs)),
                routes.take[j].eq(offer & buffer.i.ready),
                routes.ending[j].eq(routes.take[j] & self._route_ends(routes.remaining[j])),
            ]

    def _elaborate_inputs(self, m, routes, buffers):
        """Input k is ready when some output routes it and every such output either has taken
        its token already or has room for it now; the token then retires."""
        for k, port in enumerate(self.i):
            users = Cat(routes.select[j][k] for j in range(self.n_outputs))
            served = Cat(~users[j] | routes.delivered[k][j] | buffer.i.ready
                         for j, buffer in enumerate(buffers))
            m.d.comb += port.ready.eq(users.any() & served.all())
            with m.If(port.valid & port.ready):     # the token retires
                m.d.sync += routes.delivered[k].eq(0)
            with m.Else():
                m.d.sync += routes.delivered[k].eq(routes.delivered[k] | (users & routes.take))

    def _elaborate_issue(self, m, routes):
        """Issue the head micro-op into its (idle) outputs; count down and end routes."""
        head = self.uop.payload
        beats = joined_field(head, "beats")
        enable = Signal(self.n_outputs)
        issue = Signal()
        m.d.comb += [
            enable.eq(head.enable[:self.n_outputs]),
            # Both terms come from registers only, so uop.ready stays off the data plane.
            self.uop.ready.eq(self._can_issue(enable, routes.active)
                              & ~self._fence_holds(head.fence, routes.counted)),
            issue.eq(self.uop.valid & self.uop.ready),
        ]
        for j in range(self.n_outputs):
            with m.If(issue & enable[j]):
                m.d.sync += [
                    routes.active[j].eq(1),
                    routes.select[j].eq(Cat((head.select[j] == k) if self.selectable(j, k) else C(0, 1)
                                            for k in range(self.n_inputs))),
                    routes.remaining[j].eq(beats),
                    routes.counted[j].eq(beats != 0),
                ]
            with m.Elif(routes.take[j] & (routes.remaining[j] != 0)):
                m.d.sync += routes.remaining[j].eq(routes.remaining[j] - 1)
                with m.If(routes.ending[j]):
                    m.d.sync += [routes.active[j].eq(0), routes.select[j].eq(0), routes.counted[j].eq(0)]
        return issue, enable

    def _elaborate_status(self, m, routes, issue, enable):
        """Beat counters, busy, progress, and finished (the routes of ``last`` micro-ops)."""
        moved_out = Cat(port.valid & port.ready for port in self.o)
        for j in range(self.n_outputs):
            with m.If(self.clear):
                m.d.sync += self.beats[j].eq(0)
            with m.Elif(moved_out[j]):
                m.d.sync += self.beats[j].eq(self.beats[j] + 1)

        # `finished` is a status flag, so it is computed from registers a cycle late rather
        # than from this cycle's route ends: it rises two cycles after the last take.
        last_pending = Signal(self.n_outputs)   # outputs still routing for a `last` micro-op
        last_issued = Signal()                  # a `last` micro-op issued, finished not yet set
        # Only counted routes end, so only they hold `finished` back; a static route is a wire.
        issue_last = issue & self.uop.payload.last & (joined_field(self.uop.payload, "beats") != 0)
        m.d.sync += last_pending.eq((last_pending & ~routes.ending) |
                                    (enable & issue_last.replicate(self.n_outputs)))
        all_ended = last_issued & ~last_pending.any()
        with m.If(issue & self.uop.payload.last):
            m.d.sync += last_issued.eq(1)
        with m.Elif(all_ended & ~self.clear):
            m.d.sync += last_issued.eq(0)
        with m.If(self.clear):
            m.d.sync += self.finished.eq(0)
        with m.Elif(all_ended):
            m.d.sync += self.finished.eq(1)

        m.d.comb += [
            # A token still waiting in an output buffer keeps the switch busy: without it `done`
            # rose while a back-pressured host had yet to take the last tokens. (`held`, not
            # `o.valid`: a token passing through is held by whatever register it comes from.)
            # A static route alone does not: an open program ends when nothing moves anywhere.
            self.busy.eq(routes.counted.any() | self.uop.valid | Cat(held != 0 for held in self.held).any()),
            self.progress.eq(routes.take.any() | moved_out.any()),
        ]


class _Routes:
    """The switch's route registers and the per-cycle signals derived from them."""

    def __init__(self, n_inputs: int, n_outputs: int):
        self.active = Signal(n_outputs)         # output j has a route (possibly static)
        # One-hot input of each output's route; all zero while the output is idle, so that it
        # is also "output j uses input k" without gating by `active`.
        self.select = [Signal(n_inputs, name=f"select{j}") for j in range(n_outputs)]
        self.remaining = [Signal(field_width(SwitchUop, "beats"), name=f"remaining{j}")
                          for j in range(n_outputs)]
        # delivered[k][j]: output j took input k's current token; cleared when it retires. Kept
        # per input rather than per output, so an output that ends its route and is routed to
        # the same input again before that token retires does not take it twice.
        self.delivered = [Signal(n_outputs, name=f"delivered{k}") for k in range(n_inputs)]
        # Output j has a counted (not static) route: active & (remaining != 0), kept as a register
        # of its own so that the fence's condition is an OR of flip-flops, not of wide compares
        # in the issue path (which, computed, took hundreds of LUTs on ECP5).
        self.counted = Signal(n_outputs)
        self.take = Signal(n_outputs)           # output j moves a token into its buffer
        self.ending = Signal(n_outputs)         # ... and it is its route's last
