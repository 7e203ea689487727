"""A primitive's own memory bank, with a port for the host to load it and read it back.

Scanners, arrays and writers keep their arrays in a bank of their own rather than in a ``mem``
tile: a level scanner reads ``seg[r]``, ``seg[r+1]`` and ``crd[p]`` in the cycle it needs them,
which a ``mem`` tile's stream interface (a request, then a response some cycles later) would turn
into a round trip per coordinate (docs/sparse.md).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["host_port", "Bank"]


def host_port(width: int, depth: int) -> wiring.Signature:
    """The host's side of a bank: a write port, and a combinational read port to check results."""
    address = max(1, (depth - 1).bit_length())
    return wiring.Signature({"we": Out(1), "waddr": Out(address), "wdata": Out(width),
                             "raddr": Out(address), "rdata": In(width)})


class Bank:
    """Builds a bank inside a primitive's ``elaborate``: ``read(address)`` gives a combinational
    read port's data, ``write(enable, address, data)`` the primitive's own write (the host's
    write wins in the same cycle; the host writes only while the primitive is idle)."""

    def __init__(self, m: Module, name: str, host, width: int, depth: int):
        self._m, self._host, self.depth = m, host, depth
        self._memory = memory.Memory(shape=width, depth=depth, init=[])
        m.submodules[name] = self._memory
        self._write = self._memory.write_port()
        self._own_we = Signal(name=f"{name}_own_we")
        self._own_addr = Signal.like(self._write.addr, name=f"{name}_own_addr")
        self._own_data = Signal(width, name=f"{name}_own_data")
        m.d.comb += [
            self._write.en.eq(host.we | self._own_we),
            self._write.addr.eq(Mux(host.we, host.waddr, self._own_addr)),
            self._write.data.eq(Mux(host.we, host.wdata, self._own_data)),
        ]
        peek = self._memory.read_port(domain="comb")
        m.d.comb += [peek.addr.eq(host.raddr), host.rdata.eq(peek.data)]

    def read(self, address):
        port = self._memory.read_port(domain="comb")
        self._m.d.comb += port.addr.eq(address)
        return port.data

    def write(self, enable, address, data):
        self._m.d.comb += [self._own_we.eq(enable), self._own_addr.eq(address), self._own_data.eq(data)]
