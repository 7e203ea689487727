"""The small fabric and the programs the board-top tests run over the UART host link."""

import random

from rsn.fabric_spec import parse_fabric
from rsn.graph import StreamGraph
from rsn.program import Program, compile_program
from rsn.random_programs import random_program

__all__ = ["BOARD_FABRIC", "board_spec", "board_program", "SIM_CLOCK_HZ", "SIM_BAUD"]

# 2x2: both host inputs, both host outputs, a mem and an alu in each row.
BOARD_FABRIC = {
    "rows": 2, "cols": 2, "tiles": ["mem alu", "alu mem"],
    "host_ports": [
        {"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
        {"name": "in1", "tile": [1, 0], "side": "W", "direction": "in"},
        {"name": "out0", "tile": [0, 1], "side": "E", "direction": "out"},
        {"name": "out1", "tile": [1, 1], "side": "E", "direction": "out"},
    ],
}
SIM_BAUD = 115_200
SIM_CLOCK_HZ = 8 * SIM_BAUD          # 8 clocks per bit: fast to simulate, same RTL as on a board


def board_spec():
    return parse_fabric(BOARD_FABRIC, "board test fabric")


def _two_lanes(seed: int) -> Program:
    """in0 -> alu -> out0 and in1 -> alu -> out1 at the same time: both input channels' credits
    and both output ports in flight together."""
    rng = random.Random(seed)
    graph = StreamGraph()
    program = Program(name=f"two_lanes-{seed}", graph=graph, description="two host lanes through alus")
    for lane in (0, 1):
        tokens = rng.randint(12, 30)
        lo = rng.randint(-(1 << 15), (1 << 15) - 1)
        graph.add_host_in(f"host{lane}", f"in{lane}", tokens)
        graph.add_node(f"alu{lane}", "alu", [{
            "beats": tokens, "relu": rng.randint(0, 1), "shift": rng.choice([0, 3, 9]),
            "clip": rng.randint(0, 1), "lo": lo, "hi": rng.randint(lo, (1 << 15) - 1)}])
        graph.add_host_out(f"result{lane}", f"out{lane}", tokens)
        graph.connect(f"host{lane}", f"alu{lane}", tokens)
        graph.connect(f"alu{lane}", f"result{lane}", tokens)
        program.host_inputs[f"in{lane}"] = [rng.getrandbits(32) for _ in range(tokens)]
    return program


def board_program(shape: str, seed: int):
    """A compiled program for the board fabric: ``two_lanes`` or a random_programs shape."""
    program = _two_lanes(seed) if shape == "two_lanes" else random_program(seed, shape)
    return compile_program(program, board_spec())
