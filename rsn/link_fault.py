"""Link faults in the RTL: a gate on every link between two tiles of a fault-injection build.

``Fabric(spec, faultable=True)`` puts a :class:`LinkFault` on each link of :func:`fault_links`
(the links between neighbours, numbered from 1 in that order) and takes one fault at a time on
its ``fault_*`` ports: the link's number (0: none), the kind, ``at`` and the bit. The gates do
what :class:`rsn.faults.FaultyLink` does in the golden model, transfer for transfer:

* ``stuck``: after ``at`` transfers the link holds ``ready`` low towards the sender and
  ``valid`` low towards the receiver;
* ``drop``: transfer ``at`` (from 1) is taken from the sender and never offered on;
* ``corrupt``: transfer ``at`` arrives with bit ``bit`` flipped.

The gate is combinational (no register, so the link's timing is the fault-free one until the
fault acts). ``fault_acted`` is high in every cycle the fault changes what the link does; the
simulation top records the first such cycle. A normal build has no gates at all.
"""

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .fabric_spec import DIRECTIONS
from .isa import LINK_BEATS_BITS

__all__ = ["LinkFault", "fault_links", "FAULT_KINDS", "AT_BITS"]

FAULT_KINDS = {"stuck": 1, "drop": 2, "corrupt": 3}
# A fault may act at any token of a route: the gate counts transfers as wide as a link's beats.
AT_BITS = LINK_BEATS_BITS


def fault_links(spec) -> list[tuple]:
    """The links a fault-injection build can break, in the order of their numbers (1, 2, ...):
    (tile, side) of each tile's outgoing link to a neighbour, tiles in row order, sides N E S W."""
    return [(tile, side) for tile in spec.all_tiles() for side in DIRECTIONS
            if spec.neighbour(tile, side) is not None]


class LinkFault(wiring.Component):
    """One link's gate: ``i`` from the sending tile, ``o`` to the receiving one."""

    def __init__(self, width: int):
        self._width = width
        super().__init__({
            "i": In(stream.Signature(unsigned(width))),
            "o": Out(stream.Signature(unsigned(width))),
            "select": In(1), "kind": In(2), "at": In(AT_BITS), "bit": In(range(max(2, width))),
            "acted": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        transfers = Signal(AT_BITS)         # taken from the sender so far
        nth = transfers + 1 == self.at      # the transfer in progress is number `at`
        stuck = self.select & (self.kind == FAULT_KINDS["stuck"]) & (transfers >= self.at)
        drop = self.select & (self.kind == FAULT_KINDS["drop"]) & nth
        corrupt = self.select & (self.kind == FAULT_KINDS["corrupt"]) & nth
        flip = Signal(self._width)
        m.d.comb += [
            flip.eq(Mux(corrupt, 1 << self.bit, 0)),
            self.o.payload.eq(self.i.payload ^ flip),
            self.o.valid.eq(self.i.valid & ~stuck & ~drop),
            self.i.ready.eq(Mux(drop, 1, self.o.ready & ~stuck)),
            self.acted.eq(self.i.valid & (stuck | drop | corrupt)),
        ]
        with m.If(self.i.valid & self.i.ready & (transfers != (1 << AT_BITS) - 1)):
            m.d.sync += transfers.eq(transfers + 1)
        return m
