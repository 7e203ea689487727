"""The functional-unit interface: what every FU kind plugs into a tile with.

A FU kind is described by a :class:`FuKind` (port counts, micro-op layout, latency, RTL class,
golden model class). :func:`fu_signature` builds the one signature every FU component has; see
docs/rsn-architecture.md ("Functional units") for the meaning of each member.
"""

from dataclasses import dataclass

from amaranth.hdl import unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["ConfigBus", "FuKind", "fu_signature", "MAX_FU_INPUTS", "MAX_FU_OUTPUTS"]

MAX_FU_INPUTS = 3
MAX_FU_OUTPUTS = 2

# Register access from the control plane, as seen by the controller (a FU takes `In(ConfigBus)`).
# A write takes effect at the clock edge; read data is valid in the cycle after `read`.
ConfigBus = wiring.Signature({
    "addr": Out(16),
    "data": Out(32),
    "write": Out(1),
    "read": Out(1),
    "rdata": In(32),
})


@dataclass(frozen=True)
class FuKind:
    """A kind of functional unit, as the fabric generator and the compiler see it."""
    name: str
    n_in: int
    n_out: int
    uop_layout: object      # an rsn.isa layout
    latency: int            # cycles from a step's last input token to its output token
    rtl: type               # the wiring.Component; constructed as rtl(width=..., **fabric params)
    model: type             # the golden model (an rsn.channels.UnitModel)


def fu_signature(kind: FuKind, width: int) -> wiring.Signature:
    """The signature of every FU: data streams, micro-ops, config bus, counters and flags."""
    assert kind.n_in <= MAX_FU_INPUTS and kind.n_out <= MAX_FU_OUTPUTS
    members = {
        "uop": In(stream.Signature(kind.uop_layout)),
        "cfg": In(ConfigBus),
        "clear": In(1),         # START: zero the counters and the finished flag
        "firings": Out(32),
        "stalls": Out(32),
        "busy": Out(1),
        "finished": Out(1),
    }
    if kind.n_in:
        members["i"] = In(stream.Signature(unsigned(width))).array(kind.n_in)
    if kind.n_out:
        members["o"] = Out(stream.Signature(unsigned(width))).array(kind.n_out)
    return wiring.Signature(members)
