"""The native top's host memories as instances of Verilog modules of our own.

Amaranth's ``Memory`` writes every word of its initial contents into the design, even when
there are none to give: at the millions of words of a whole data set (a dense network's weights
streamed once per pass) converting the top took minutes and the Verilog grew by a line per word.
The top's memories need no contents (the driver loads each run's words through a write port),
so each is a module written here, with the same ports and no initial contents.

The module is generated for its number of ports, with one ``if`` per write port in one clocked
block and one ``assign`` per read port, as Amaranth writes a memory: a ``for`` loop over the
write ports in the clocked block made Verilator copy the whole array every cycle (the 3x3
fabric ran at 72,000 instead of 230,000 cycles per second).
"""

from dataclasses import dataclass

from amaranth.hdl import ClockSignal, Instance, Signal

__all__ = ["HostMemory"]


@dataclass
class _Port:
    addr: Signal
    data: Signal
    en: Signal | None = None


class HostMemory:
    """``depth`` (a power of two) words of ``width`` bits: write ports on ``write_domain``'s
    clock, asynchronous read ports. Make the ports, then :meth:`connect` the memory to a module;
    :meth:`verilog` is the module's text, for the simulator's sources."""

    def __init__(self, name: str, width: int, depth: int, write_domain: str):
        self.name, self.width, self.write_domain = name, width, write_domain
        self.abits = max(1, (depth - 1).bit_length())
        self.reads: list[_Port] = []
        self.writes: list[_Port] = []

    @property
    def module(self) -> str:
        return f"rivulet_host_memory_{self.name}"

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

    def connect(self, m, name: str):
        """Add the instance to ``m`` and drive every read port's data from it."""
        if not self.reads or not self.writes:
            raise ValueError(f"host memory {self.name}: needs a read and a write port")
        ports = {"i_wclk": ClockSignal(self.write_domain)}
        for k, port in enumerate(self.writes):
            ports |= {f"i_wen{k}": port.en, f"i_waddr{k}": port.addr, f"i_wdata{k}": port.data}
        for k, port in enumerate(self.reads):
            ports |= {f"i_raddr{k}": port.addr, f"o_rdata{k}": port.data}
        m.submodules[name] = Instance(self.module, **ports)

    def verilog(self) -> str:
        """The module: no initial contents, the write ports in order (a later one wins), reads
        combinational."""
        a, w = self.abits, self.width
        ports = ["input wire wclk"]
        ports += [line for k in range(len(self.writes))
                  for line in (f"input wire wen{k}", f"input wire [{a - 1}:0] waddr{k}",
                               f"input wire [{w - 1}:0] wdata{k}")]
        ports += [line for k in range(len(self.reads))
                  for line in (f"input wire [{a - 1}:0] raddr{k}", f"output wire [{w - 1}:0] rdata{k}")]
        lines = [f"// {self.name}: {1 << a} words of {w} bits (rivulet/sim/native/host_memory.py)",
                 f"module {self.module} (", ",\n".join(f"    {port}" for port in ports), ");",
                 f"  reg [{w - 1}:0] words [0:{(1 << a) - 1}];", "  always @(posedge wclk) begin"]
        lines += [f"    if (wen{k}) words[waddr{k}] <= wdata{k};" for k in range(len(self.writes))]
        lines += ["  end"]
        lines += [f"  assign rdata{k} = words[raddr{k}];" for k in range(len(self.reads))]
        lines += ["endmodule", ""]
        return "\n".join(lines)
