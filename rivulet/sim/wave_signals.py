"""A saved signal list beside a fabric run's waves: the host ports, ``done`` and ``stalled``,
then the counters (cycles since START, the watchdog's idle count, every tile's firings and
stalls), as a GTKWave save file. A dump of a fabric holds tens of thousands of signals, so
opening it on an empty view leaves the user to find the few they look at first.

The names are the fabric top's own (``top`` is the bench's wrapper, ``top.dut`` the fabric,
``top.dut.tile_R_C`` a tile). A VCD's header is read to keep only the signals it holds; an
FST cannot be read here, so its list is written as the fabric's design names it.
"""

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Trace", "fabric_signals", "vcd_signals", "write_gtkw", "SAVE_FILE"]

SAVE_FILE = "signals.gtkw"
COUNTER_BITS = 32           # rsn.fabric's cycles and idle count, rsn.tile's firings and stalls

# GTKWave's display flags (its save-file format): right-justified binary, hexadecimal, and
# signed and unsigned decimal; a group's first and last line.
_BINARY, _SIGNED, _DECIMAL = "@28", "@424", "@24"
_GROUP_BEGIN, _GROUP_END = "@800200", "@1000200"


@dataclass(frozen=True)
class Trace:
    """One signal of the list: its full name in the dump, its width, and how to show it."""
    name: str
    width: int = 1
    signed: bool = False

    @property
    def shown(self) -> str:
        """The name as GTKWave lists it: a vector carries its bit range."""
        return self.name if self.width == 1 else f"{self.name}[{self.width - 1}:0]"


def fabric_signals(spec, ports) -> list[tuple[str, list[Trace]]]:
    """The groups of signals to show for a fabric of ``spec`` whose top-level streams are
    ``ports`` (:func:`rivulet.sim.streams.stream_ports`)."""
    host = [Trace("top.clk"), Trace("top.rst"), Trace("top.done"), Trace("top.stalled")]
    for port in ports:
        signed = port.prefix not in ("ctrl", "readback")      # the data streams carry values
        host += [Trace(f"top.{port.prefix}__valid"), Trace(f"top.{port.prefix}__ready"),
                 Trace(f"top.{port.prefix}__payload", port.width, signed)]
    counters = [Trace("top.dut.dispenser.cycles", COUNTER_BITS), Trace("top.dut.idle_cycles", COUNTER_BITS)]
    for row, col in spec.all_tiles():
        counters += [Trace(f"top.dut.tile_{row}_{col}.{counter}", COUNTER_BITS)
                     for counter in ("firings", "stalls")]
    return [("host ports", host), ("counters", counters)]


def vcd_signals(path: Path) -> set[str]:
    """The full names of the signals a VCD file declares (its header only is read)."""
    scopes, names = [], set()
    with open(path) as dump:
        for line in dump:
            words = line.split()
            if not words:
                continue
            if words[0] == "$enddefinitions":
                break
            if words[0] == "$scope" and len(words) >= 3:
                scopes.append(words[2])
            elif words[0] == "$upscope":
                scopes.pop()
            elif words[0] == "$var" and len(words) >= 5:
                names.add(".".join([*scopes, words[4]]))
    return names


def write_gtkw(directory: Path, dump: Path, groups: list[tuple[str, list[Trace]]]) -> tuple[Path, list[str]]:
    """Write :data:`SAVE_FILE` into ``directory`` for the waves in ``dump``; return its path and
    the signals left out because a VCD ``dump`` does not hold them."""
    present = vcd_signals(dump) if dump.suffix == ".vcd" else None
    lines = ["[*] the fabric's host ports and counters, written with its waves",
             f'[dumpfile] "{dump.resolve()}"', f'[savefile] "{(directory / SAVE_FILE).resolve()}"',
             "[timestart] 0"]
    missing = []
    for title, traces in groups:
        kept = [trace for trace in traces if present is None or trace.name in present]
        missing += [trace.name for trace in traces if trace not in kept]
        if not kept:
            continue
        lines += [_GROUP_BEGIN, f"-{title}"]
        for trace in kept:
            flags = _BINARY if trace.width == 1 else _SIGNED if trace.signed else _DECIMAL
            lines += [flags, trace.shown]
        lines += [_GROUP_END, f"-{title}"]
    path = directory / SAVE_FILE
    path.write_text("\n".join(lines) + "\n")
    return path, missing
