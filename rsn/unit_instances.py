"""Verilog with one module per distinct unit of a tile, instead of one per tile.

Why: Amaranth elaborates and converts every tile's FU, switch and queues on their own, although
all ``pe`` tiles of a fabric hold the same unit, and all tiles of a kind the same switch. That
made converting a 5x6 ``pe`` fabric take most of a minute. :func:`convert_sharing_units`
converts each distinct unit once and lets the tiles instantiate its module: measured on that
fabric (a loaded machine), 94.7 s and 7.7 MB of Verilog became 16.8 s and 2.9 MB. The design is
the same; only the Verilog's hierarchy changes. Each tile's control stays its own, as it holds
the tile's coordinates.

Within :func:`convert_sharing_units`, :func:`shared_unit` (which :class:`rsn.tile.Tile` calls)
returns a stand-in with the unit's signature whose elaboration is an ``Instance`` of the unit's
module; elsewhere (the Amaranth simulator, the FPGA flow) it returns the unit itself.
"""

import contextlib
import contextvars
import hashlib
import re

from amaranth.back import verilog
from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

__all__ = ["make_unit", "shared_unit", "convert_sharing_units"]

_active = contextvars.ContextVar("rsn_shared_units", default=None)


def make_unit(kind, width: int, arguments: dict, shared: dict):
    """The FU of ``kind`` for a tile: the unit itself, or a shared module's stand-in."""
    key = ("fu", kind.name, _qualified(kind.rtl), width, sorted(arguments.items()), sorted(shared.items()))
    return shared_unit(key, lambda: kind.rtl(width=width, **arguments, **shared), kind.name)


def _qualified(thing) -> str:
    return f"{getattr(thing, '__module__', '')}.{getattr(thing, '__qualname__', repr(thing))}"


def shared_unit(key, build, label: str = "unit"):
    """``build()``, a component whose hardware ``key`` fixes; while converting with
    :func:`convert_sharing_units`, a stand-in for the one module built for ``key``."""
    active = _active.get()
    if active is None:
        return build()
    units, prefix, arguments = active
    key = repr(key)
    if key not in units:
        unit = build()
        name = f"{prefix}_{label}_{hashlib.sha256(key.encode()).hexdigest()[:10]}"
        text = verilog.convert(unit, name=name, **arguments)
        units[key] = (name, unit.signature, text, _module_ports(text, name))
    name, signature, _, ports = units[key]
    return _UnitInstance(name, signature, ports)


def convert_sharing_units(top, *, name: str = "top", **arguments) -> str:
    """``verilog.convert(top, ...)`` with every distinct unit converted once (module docstring),
    with the same ``arguments``; the units' modules are named after ``name``, so that two
    fabrics converted apart can be linked into one design."""
    units = {}
    with _sharing((units, name, arguments)):
        text = verilog.convert(top, name=name, **arguments)
    return "".join([text, *(unit_text for _, _, unit_text, _ in units.values())])


@contextlib.contextmanager
def _sharing(state: tuple):
    token = _active.set(state)
    try:
        yield
    finally:
        _active.reset(token)


def _module_ports(text: str, name: str) -> set[str]:
    """The port names of module ``name`` in ``text`` (Amaranth's flattened member paths)."""
    header = re.search(rf"^module {re.escape(name)}\((.*?)\);", text, re.MULTILINE | re.DOTALL)
    if header is None:
        raise RuntimeError(f"the Verilog of unit {name} has no module header")
    return {port.strip() for port in header.group(1).split(",")}


class _UnitInstance(wiring.Component):
    """A unit's signature, elaborated as an instance of the unit's own module."""

    def __init__(self, module: str, signature: wiring.Signature, ports: set[str]):
        self._module, self._ports = module, ports
        super().__init__(signature)

    def elaborate(self, platform):
        m = Module()
        connections = {}
        if "clk" in self._ports:
            connections["i_clk"] = ClockSignal()
        if "rst" in self._ports:
            connections["i_rst"] = ResetSignal()
        for path, member, value in self.signature.flatten(self):
            port = "__".join(str(part) for part in path)
            if port not in self._ports:
                if member.flow == Out:      # an output the module lacks would read as 0: refuse
                    raise RuntimeError(f"unit module {self._module} has no port {port}")
                continue                    # an input the unit never reads
            connections[("o_" if member.flow == Out else "i_") + port] = Value.cast(value)
        m.submodules.unit = Instance(self._module, **connections)
        return m
