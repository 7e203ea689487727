"""A ReLU with requantize over a vector from one mem tile: mem -> alu -> host (3 nodes, 2 streams).
The smallest program of the sweep tests: it fits a 2x2 fabric of the mem/mac/alu family."""

import numpy as np

from rsn.graph import StreamGraph
from rsn.program import Program


def program(length=12, shift=2, seed=0) -> Program:
    values = np.random.default_rng(seed).integers(-300, 300, size=length)
    graph = StreamGraph()
    graph.add_node("x_mem", "mem", [{"start": 0, "stride": 1, "offset": 0, "count_i": length, "count_j": 1}])
    graph.add_node("relu", "alu", [{"beats": length, "relu": 1, "shift": shift, "clip": 1, "lo": -128,
                                    "hi": 127}])
    graph.add_host_out("y", "out0", length)
    graph.connect("x_mem", "relu", length)
    graph.connect("relu", "y", length)
    expected = np.clip(np.maximum(values, 0) >> shift, -128, 127)
    return Program(name="relu", graph=graph, memories={"x_mem": {k: int(v) for k, v in enumerate(values)}},
                   expected={"out0": [int(v) & 0xFFFF_FFFF for v in expected]},
                   description=f"relu >> {shift} over {length} values")
