"""Where do a design's LUTs go? Attribute each LUT to the registers, memories and ports it feeds.

After ABC, mapped LUTs lose the ``src`` attribute of the Python line that made them (only carry
logic keeps it), so counting LUTs by source line says little. Instead, each LUT is followed
forward through combinational cells until it reaches flip-flops (named by the signal they hold
and the pin: D, enable, reset), a memory primitive, or an output port; LUTs are grouped by that
set of destinations. "32 x ``o__payload.D``" reads as "a 32-bit multiplexer in front of the
output register".

Run ``python -m bench.attribution build/bench/<target>/<name>`` for one design.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from .fpga import TARGETS

__all__ = ["lut_attribution"]

COMBINATIONAL = {"SB_LUT4", "SB_CARRY", "LUT4", "CCU2C", "PFUMX", "L6MUX21"}
LUT_RAM = {"TRELLIS_DPR16X4"}
PIN_ROLE = {"D": "D", "DI": "D", "E": "enable", "CE": "enable", "R": "reset", "S": "reset",
            "LSR": "reset"}


def lut_attribution(netlist: Path, top: str, target: str) -> Counter:
    """LUT count (weighted as in :data:`bench.fpga.TARGETS`) per set of destinations."""
    module = json.loads(Path(netlist).read_text())["modules"][top]
    weights = TARGETS[target].lut_weights
    net_names = _net_names(module)
    readers = _readers(module)
    out_ports = {bit: name for name, port in module["ports"].items()
                 if port["direction"] == "output" for bit in port["bits"]}
    tally: Counter = Counter()
    for cell in module["cells"].values():
        weight = weights.get(cell["type"], 0)
        if cell["type"] in LUT_RAM:
            tally["LUT RAM storage"] += weight
        elif weight:
            sinks = _sinks(module, cell, readers, out_ports, net_names)
            tally[" + ".join(sorted(sinks)) or "(nothing)"] += weight
    return tally


def _net_names(module: dict) -> dict:
    """Bit -> the most readable net name carrying it (public and short first)."""
    names = {}
    ranked = sorted(module["netnames"].items(),
                    key=lambda item: (item[1].get("hide_name", 0), len(item[0])))
    for name, net in ranked:
        for bit in net["bits"]:
            names.setdefault(bit, name)
    return names


def _readers(module: dict) -> dict:
    """Bit -> [(cell name, input pin)] for every cell input it drives."""
    readers = defaultdict(list)
    for name, cell in module["cells"].items():
        for pin, bits in cell["connections"].items():
            if cell["port_directions"].get(pin) == "input":
                for bit in bits:
                    readers[bit].append((name, pin))
    return readers


def _outputs(cell: dict) -> list:
    return [bit for pin, bits in cell["connections"].items()
            if cell["port_directions"].get(pin) == "output" for bit in bits]


def _sinks(module, cell, readers, out_ports, net_names) -> set[str]:
    """Follow ``cell``'s outputs through combinational cells to the first non-LUT readers."""
    sinks, seen, frontier = set(), set(), _outputs(cell)
    while frontier:
        bit = frontier.pop()
        if bit in seen:
            continue
        seen.add(bit)
        if bit in out_ports:
            sinks.add(f"port {out_ports[bit]}")
        for name, pin in readers[bit]:
            reader = module["cells"][name]
            if reader["type"] in COMBINATIONAL:
                frontier += _outputs(reader)
            else:
                sinks.add(_label(name, reader, pin, net_names))
    return sinks


def _label(name: str, cell: dict, pin: str, net_names: dict) -> str:
    if "Q" in cell["connections"]:  # a flip-flop: name it after the signal it holds
        # drop the bit index and Yosys' numeric suffixes so a 32-bit register is one name
        held = re.sub(r"(\[\d+\]|_\d+)+$", "", net_names.get(cell["connections"]["Q"][0], name))
        return f"{held}.{PIN_ROLE.get(pin, pin)}"
    pin_group = re.sub(r"\d+$", "", pin)
    return f"memory {cell['type']}.{pin_group}"


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    run_dir = Path(argv[0])
    target, top = run_dir.parent.name, run_dir.name
    tally = lut_attribution(run_dir / "synth.json", top, target)
    print(f"{top} on {target}: {sum(tally.values())} LUTs")
    for sinks, count in tally.most_common():
        print(f"{count:5}  {sinks}")


if __name__ == "__main__":
    main()
