"""A fused two-layer int8 MLP as one triggered path program: y = W2 @ requant(relu(W1 @ x)).

Three mem tiles hold x, W1 and W2. The first mac loads each input vector into its buffer and
streams W1's rows past it; the alu applies ReLU and requantizes to int8 (shift, clip); the
second mac loads that hidden vector and streams W2's rows past it; the outputs go to the host.
The hidden activations never return to memory. The reference is plain numpy.

Run it: ``rivulet run examples/mlp.py`` (golden model) or with ``--sim rtl``; ``-D batch=4``
sets a parameter of ``program()``. A path program is placed on the fabric as it is, so
``program()`` takes no ``fabric`` (it may, to size itself from it).
"""

import numpy as np

from rsn.graph import StreamGraph
from rsn.program import Program

SIZES = {"batch": 2, "inputs": 16, "hidden": 8, "outputs": 4}
SHIFT = 8


def _wrap32(values):
    values = np.asarray(values, dtype=np.int64) & 0xFFFF_FFFF
    return np.where(values >= 1 << 31, values - (1 << 32), values)


def reference(x, w1, w2, shift):
    """The expected int32 outputs per input vector; 32-bit wrapping sums as on the fabric."""
    hidden = np.clip(np.maximum(_wrap32(x @ w1.T), 0) >> shift, -128, 127)
    return _wrap32(hidden @ w2.T)


def _matrix(values) -> dict[int, int]:
    """Row-major words for a mem tile, from address 0."""
    return {address: int(value) for address, value in enumerate(np.asarray(values).reshape(-1))}


def program(batch=SIZES["batch"], inputs=SIZES["inputs"], hidden=SIZES["hidden"],
            outputs=SIZES["outputs"], shift=SHIFT, seed=0) -> Program:
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, size=(batch, inputs))
    w1 = rng.integers(-128, 128, size=(hidden, inputs))
    w2 = rng.integers(-128, 128, size=(outputs, hidden))
    int8 = "INT8"

    graph = StreamGraph()
    # Each input vector once; W1 and W2 whole, once per input vector (offset 0 re-reads them).
    graph.add_node("x_mem", "mem", [{"start": 0, "stride": 1, "offset": inputs,
                                     "count_i": inputs, "count_j": batch}])
    graph.add_node("w1_mem", "mem", [{"start": 0, "stride": 1, "offset": 0,
                                      "count_i": hidden * inputs, "count_j": batch}])
    graph.add_node("w2_mem", "mem", [{"start": 0, "stride": 1, "offset": 0,
                                      "count_i": outputs * hidden, "count_j": batch}])
    layer1, layer2 = [], []
    for _ in range(batch):
        layer1 += [{"mode": "LOAD", "precision": int8, "length": inputs},
                   {"mode": "DOT", "precision": int8, "length": inputs, "rows": hidden}]
        layer2 += [{"mode": "LOAD", "precision": int8, "length": hidden},
                   {"mode": "DOT", "precision": int8, "length": hidden, "rows": outputs}]
    graph.add_node("layer1", "mac", layer1)
    graph.add_node("requantize", "alu", [{"beats": batch * hidden, "relu": 1, "shift": shift,
                                          "clip": 1, "lo": -128, "hi": 127}])
    graph.add_node("layer2", "mac", layer2)
    graph.add_host_out("y", "out0", batch * outputs)

    graph.connect("x_mem", ("layer1", 1), batch * inputs)
    graph.connect("w1_mem", ("layer1", 0), batch * hidden * inputs)
    graph.connect("layer1", "requantize", batch * hidden)
    graph.connect("requantize", ("layer2", 1), batch * hidden)
    graph.connect("w2_mem", ("layer2", 0), batch * outputs * hidden)
    graph.connect("layer2", "y", batch * outputs)

    expected = reference(x, w1, w2, shift).reshape(-1) & 0xFFFF_FFFF
    return Program(
        name="mlp", graph=graph,
        memories={"x_mem": _matrix(x), "w1_mem": _matrix(w1), "w2_mem": _matrix(w2)},
        expected={"out0": [int(value) for value in expected]},
        description=f"int8 MLP {inputs}-{hidden}-{outputs}, batch {batch}, requantize >> {shift}")
