"""A matrix-vector product on one mac tile: two mem tiles -> mac -> host (4 nodes, 3 streams).
The reference is numpy's int8 product with 32-bit wrapping."""

import numpy as np

from rsn.graph import StreamGraph
from rsn.program import Program


def program(inputs=8, outputs=3, seed=1) -> Program:
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, size=inputs)
    w = rng.integers(-128, 128, size=(outputs, inputs))
    int8 = "INT8"
    graph = StreamGraph()
    graph.add_node("x_mem", "mem", [{"start": 0, "stride": 1, "offset": 0, "count_i": inputs, "count_j": 1}])
    graph.add_node("w_mem", "mem", [{"start": 0, "stride": 1, "offset": 0, "count_i": outputs * inputs,
                                     "count_j": 1}])
    graph.add_node("dot", "mac", [{"mode": "LOAD", "precision": int8, "length": inputs},
                                  {"mode": "DOT", "precision": int8, "length": inputs, "rows": outputs}])
    graph.add_host_out("y", "out0", outputs)
    graph.connect("x_mem", ("dot", 1), inputs)
    graph.connect("w_mem", ("dot", 0), outputs * inputs)
    graph.connect("dot", "y", outputs)
    expected = (w @ x).astype(np.int64) & 0xFFFF_FFFF
    return Program(name="dot", graph=graph,
                   memories={"x_mem": {k: int(v) for k, v in enumerate(x)},
                             "w_mem": {k: int(v) for k, v in enumerate(w.reshape(-1))}},
                   expected={"out0": [int(v) for v in expected]},
                   description=f"int8 matrix-vector product {outputs}x{inputs}")
