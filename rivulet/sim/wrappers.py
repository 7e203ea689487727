"""Wrappers that make any component simulatable the same way."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from .streams import port_paths

__all__ = ["Clocked", "member_value"]


def member_value(interface, path):
    """The value at ``path`` (names and array indices) inside ``interface``."""
    for part in path:
        interface = interface[part] if isinstance(part, int) else getattr(interface, part)
    return interface


class Clocked(wiring.Component):
    """The component, with the same ports, plus a ``sync`` clock domain.

    Combinational primitives (Join, a lock-step Fork) have no clock of their own, but a bench
    needs one to pace its drivers. The wrapper's ports are exactly the component's, so port names
    in Verilog do not change; ``clk`` and ``rst`` are added if the component lacks them.
    """

    def __init__(self, component):
        self.component = component
        super().__init__(component.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.component
        # Port by port: `wiring.connect` cannot flip interfaces that contain arrays.
        for path, member in port_paths(self.signature):
            outer, inner = member_value(self, path), member_value(self.component, path)
            if member.flow == wiring.In:
                m.d.comb += inner.eq(outer)
            else:
                m.d.comb += outer.eq(inner)
        heartbeat = Signal()
        m.d.sync += heartbeat.eq(~heartbeat)
        return m
