"""The native top's host memories as an instance of our own Verilog module (host_memory.v).

Amaranth's ``Memory`` writes every word of its initial contents into the design, even when
there are none to give: at the millions of words of a whole data set (a dense network's weights
streamed once per pass) converting the top took minutes and the Verilog grew by a line per word.
The top's memories need no contents (the driver loads each run's words through a write port),
so they are this module instead: the same ports, no initial contents, any depth.
"""

from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import Cat, ClockSignal, Instance, Signal

__all__ = ["HostMemory", "VERILOG"]

VERILOG = Path(__file__).with_name("host_memory.v")


@dataclass
class _Port:
    addr: Signal
    data: Signal
    en: Signal | None = None


class HostMemory:
    """``depth`` (a power of two) words of ``width`` bits: write ports on ``write_domain``'s
    clock, asynchronous read ports. Make the ports, then :meth:`connect` the memory to a module."""

    def __init__(self, name: str, width: int, depth: int, write_domain: str):
        self.name, self.width, self.write_domain = name, width, write_domain
        self.abits = max(1, (depth - 1).bit_length())
        self.reads: list[_Port] = []
        self.writes: list[_Port] = []

    def read_port(self) -> _Port:
        number = len(self.reads)
        port = _Port(Signal(self.abits, name=f"{self.name}_raddr{number}"),
                     Signal(self.width, name=f"{self.name}_rdata{number}"))
        self.reads.append(port)
        return port

    def write_port(self) -> _Port:
        number = len(self.writes)
        port = _Port(Signal(self.abits, name=f"{self.name}_waddr{number}"),
                     Signal(self.width, name=f"{self.name}_wdata{number}"),
                     Signal(name=f"{self.name}_wen{number}"))
        self.writes.append(port)
        return port

    def _instance(self) -> tuple[Instance, Signal]:
        if not self.reads or not self.writes:
            raise ValueError(f"host memory {self.name}: needs a read and a write port")
        data = Signal(self.width * len(self.reads), name=f"{self.name}_rdata")
        return Instance(
            "rivulet_host_memory",
            p_WIDTH=self.width, p_ABITS=self.abits, p_WRITES=len(self.writes), p_READS=len(self.reads),
            i_wclk=ClockSignal(self.write_domain),
            i_wen=Cat(port.en for port in self.writes), i_waddr=Cat(port.addr for port in self.writes),
            i_wdata=Cat(port.data for port in self.writes), i_raddr=Cat(port.addr for port in self.reads),
            o_rdata=data), data

    def connect(self, m, name: str):
        """Add the instance to ``m`` and drive every read port's data from it."""
        instance, data = self._instance()
        m.submodules[name] = instance
        m.d.comb += [port.data.eq(data[k * self.width:(k + 1) * self.width])
                     for k, port in enumerate(self.reads)]
