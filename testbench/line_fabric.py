"""A one-tile fabric (in0 -> alu -> out0) and a copy program for it: the smallest Verilated
fabric, built in seconds, for the command's tests that need the RTL."""

from pathlib import Path

LINE_FABRIC = '''rows = 1
cols = 1
tiles = ["alu"]
data_width = 32

[[host_ports]]
name = "in0"
tile = [0, 0]
side = "W"
direction = "in"

[[host_ports]]
name = "out0"
tile = [0, 0]
side = "E"
direction = "out"
'''

COPY_PROGRAM = '''
from rsn.graph import StreamGraph
from rsn.program import Program


def program(tokens=5):
    graph = StreamGraph()
    graph.add_host_in("x", "in0", tokens)
    graph.add_node("copy", "alu", [{"beats": tokens}])
    graph.add_host_out("y", "out0", tokens)
    graph.connect("x", "copy", tokens)
    graph.connect("copy", "y", tokens)
    values = list(range(1, tokens + 1))
    return Program(name="copy", graph=graph, host_inputs={"in0": values}, expected={"out0": values})
'''


def line_files(directory: Path) -> tuple[Path, Path]:
    """``directory/line.toml`` and ``directory/copy.py``: the fabric and a program for it."""
    fabric, program = directory / "line.toml", directory / "copy.py"
    fabric.write_text(LINE_FABRIC)
    program.write_text(COPY_PROGRAM)
    return fabric, program
