"""Wrappers that make any component simulatable the same way."""

from amaranth.hdl import Cat, ClockDomain, ClockSignal, Module, ResetSignal, Shape, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .streams import port_name, port_paths

__all__ = ["Clocked", "Held", "SideBySide", "member_value", "OBSERVED"]

# The port Clocked(observe=True) adds: every output of the component side by side, so that a
# cocotb bench reads them all with one simulator call per cycle instead of one per port.
OBSERVED = "observed"


def member_value(interface, path):
    """The value at ``path`` (names and array indices) inside ``interface``."""
    for part in path:
        interface = interface[part] if isinstance(part, int) else getattr(interface, part)
    return interface


def pass_through(m, outer, inner):
    """Drive ``inner``'s inputs from ``outer``'s and ``outer``'s outputs from ``inner``'s, port by
    port (`wiring.connect` cannot flip interfaces that contain arrays); both have ``inner``'s
    signature."""
    for path, member in port_paths(inner.signature):
        outside, inside = member_value(outer, path), member_value(inner, path)
        if member.flow == wiring.In:
            m.d.comb += inside.eq(outside)
        else:
            m.d.comb += outside.eq(inside)


def _outputs(component):
    """(path, member) of each output port of ``component``, in signature order."""
    return [(path, member) for path, member in port_paths(component.signature) if member.flow == Out]


class Clocked(wiring.Component):
    """The component, with the same ports, plus a ``sync`` clock domain.

    Combinational primitives (Join, a lock-step Fork) have no clock of their own, but a bench
    needs one to pace its drivers. The wrapper's ports are the component's, so port names
    in Verilog do not change; ``clk`` and ``rst`` are added if the component lacks them.

    ``observe=True`` adds one output, :data:`OBSERVED`: the component's outputs concatenated,
    the first at bit 0, as ``observed_layout`` lists them ((Verilog name, width) each). Each read
    of a port is a simulator call, which costs a cocotb bench more than a small design's whole
    cycle (bench/results/sim_speed.md), so one read of it replaces a read per port.
    """

    def __init__(self, component, *, observe: bool = False):
        self.component = component
        self.observed_layout = ()
        if not observe:
            super().__init__(component.signature)
            return
        self.observed_layout = tuple((port_name(path), Shape.cast(member.shape).width)
                                     for path, member in _outputs(component))
        members = dict(component.signature.members)
        if OBSERVED in members:
            raise ValueError(f"Clocked: the component has a port named {OBSERVED!r} of its own")
        members[OBSERVED] = Out(max(1, sum(width for _, width in self.observed_layout)))
        super().__init__(wiring.Signature(members))

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.component
        pass_through(m, self, self.component)
        if self.observed_layout:
            m.d.comb += getattr(self, OBSERVED).eq(Cat(member_value(self.component, path)
                                                       for path, _ in _outputs(self.component)))
        heartbeat = Signal()
        m.d.sync += heartbeat.eq(~heartbeat)
        return m


class Held(wiring.Component):
    """The component, with the same ports plus ``clk`` and ``rst``, whose inputs and reset reach
    it through registers: the component sees them one clock edge late.

    Verilator evaluates the logic that depends on a top-level input at every ``eval()``, twice a
    clock cycle, and an Amaranth design's reset is folded into all of its next-state logic; so
    held, a fabric simulates about twice as fast. The native top holds its inputs this way (on
    its load clock, :mod:`rivulet.sim.native.top`); the bare model of the same fabric does so
    here, to remain its ceiling.
    """

    def __init__(self, component):
        self.component = component
        members = dict(component.signature.members)
        if "clk" in members or "rst" in members:
            raise ValueError("Held: the component has a clk or rst port of its own")
        super().__init__(wiring.Signature(members | {"clk": In(1), "rst": In(1)}))

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.component
        m.domains.sync = ClockDomain()
        m.domains.held = ClockDomain(reset_less=True)
        reset = Signal(reset_less=True, name="held_rst")
        m.d.comb += [ClockSignal("sync").eq(self.clk), ClockSignal("held").eq(self.clk),
                     ResetSignal("sync").eq(reset)]
        m.d.held += reset.eq(self.rst)
        for path, member in port_paths(self.component.signature):
            outer, inner = member_value(self, path), member_value(self.component, path)
            if member.flow == wiring.In:
                held = Signal.like(inner, reset_less=True, name="held_" + "__".join(map(str, path)))
                m.d.held += held.eq(outer)
                m.d.comb += inner.eq(held)
            else:
                m.d.comb += outer.eq(inner)
        return m


class SideBySide(wiring.Component):
    """Several components in one design, component ``k``'s ports under ``u{k}``: Verilog names
    ``u{k}__`` followed by its own. Small designs build in seconds and run in less; one build
    and one simulation for a table of them saves a build and a simulator start-up per row."""

    def __init__(self, components):
        self.components = list(components)
        super().__init__(wiring.Signature({f"u{k}": wiring.Out(component.signature)
                                           for k, component in enumerate(self.components)}))

    @staticmethod
    def prefix(k: int) -> str:
        return f"u{k}__"

    def elaborate(self, platform):
        m = Module()
        for k, component in enumerate(self.components):
            m.submodules[f"u{k}"] = component
            pass_through(m, getattr(self, f"u{k}"), component)
        return m
