# amaranth: UnusedElaboratable=no
"""Fabrics that break the stream rules on one host output: the native top's checkers must see it.

Each has exactly a :class:`rsn.fabric.Fabric`'s signature and passes every port through, except
the host output it breaks.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from rivulet.sim.streams import port_paths
from rivulet.sim.wrappers import member_value
from rsn.fabric import Fabric

__all__ = ["ImpatientOutput", "RestlessOutput"]


class _BrokenOutput(wiring.Component):
    """A fabric whose host output ``port`` goes through :meth:`break_it`."""

    def __init__(self, spec, port: str):
        self.inner, self.port = Fabric(spec), port
        super().__init__(self.inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.fabric = self.inner
        for path, member in port_paths(self.signature):
            if path[0] == self.port:
                continue
            outer, inner = member_value(self, path), member_value(self.inner, path)
            m.d.comb += inner.eq(outer) if member.flow == wiring.In else outer.eq(inner)
        outer, inner = getattr(self, self.port), getattr(self.inner, self.port)
        m.d.comb += [outer.valid.eq(inner.valid), outer.payload.eq(inner.payload),
                     inner.ready.eq(outer.ready)]
        self.break_it(m, outer, inner)
        return m


class ImpatientOutput(_BrokenOutput):
    """Lowers ``valid`` for a cycle once an offer has waited two cycles without a transfer."""

    def break_it(self, m, outer, inner):
        waited = Signal(2)
        m.d.comb += outer.valid.eq(inner.valid & (waited != 2))
        with m.If((waited == 2) | (outer.valid & outer.ready)):
            m.d.sync += waited.eq(0)
        with m.Elif(outer.valid):
            m.d.sync += waited.eq(waited + 1)


class RestlessOutput(_BrokenOutput):
    """Flips the payload's low bit on every cycle an offer waits."""

    def break_it(self, m, outer, inner):
        flip = Signal()
        m.d.comb += outer.payload.eq(inner.payload ^ flip)
        with m.If(outer.valid & ~outer.ready):
            m.d.sync += flip.eq(~flip)
        with m.Else():
            m.d.sync += flip.eq(0)
