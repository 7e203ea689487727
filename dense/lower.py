"""A dense network, lowered into an RSN program in phases for a given fabric.

The fabric's ``mem``, ``mac`` and ``alu`` tiles make **lanes**: lane r is one bank, one mac and
one alu, and each lane computes the network on its own input vector, so a pass runs as many
vectors as there are lanes. In every layer the weights are streamed once from a host input and
multicast to every lane's mac; each mac takes the rows against its own vector, so the weights
are read once per pass, not once per vector. Per pass, in phases:

1. **load**, one phase per lane: the host sends the vector (the inputs port) into the lane's bank;
2. per layer, **fetch** (one phase): every bank streams the layer's input into its mac's buffer
   (``LOAD``), and then one **compute** phase per chunk of rows: the weight rows go to every mac
   (``DOT`` against the buffer), each mac's sums go through its alu (ReLU, shift, clip) into
   its bank. A chunk is as many rows as one stream's beats hold, so a layer of any number of
   outputs streams through the units over several phases;
3. **drain**, one phase per lane: the bank sends the last layer's words to a host output port.

A layer's input (with its bias word) must fit the mac's buffer: splitting it over several
buffers needs its partial sums added, which no unit of the default kinds does without a cycle
through the bank (refused as a cyclic wait), so a wider layer is refused with the depth it needs.
A bank holds each layer's input in a region of its own, the bias input's constant word right
after it (written with the image, never overwritten), and the last layer's words. Phases order
the units' micro-ops; units not involved in a phase go on with the next (a lane's next load
starts while the others drain). What the fabric cannot hold is refused with a
:class:`LoweringError` that names the layer and the limit, before anything is placed.
"""

from dataclasses import dataclass, field

import numpy as np

from rsn.checks import MAX_BEATS
from rsn.graph import StreamGraph
from rsn.program import Program

from .network import DenseNetwork, NetworkError

__all__ = ["LoweredNetwork", "LoweringError", "lower_network", "MAX_FIELD"]

MAX_FIELD = (1 << 12) - 1       # the mem kind's count and start fields, the mac kind's length
_WORD = 0xFFFF_FFFF


class LoweringError(ValueError):
    """The network does not fit the fabric as asked; the message says what and how to change it."""


@dataclass(frozen=True)
class _Plan:
    """Where each layer's input lives in a bank and how the layer is computed."""
    bases: tuple[int, ...]          # bank address of layer k's input (and, last, of the outputs)
    widths: tuple[int, ...]         # layer k's input words, the bias input's constant included
    chunks: tuple[tuple[int, ...], ...]     # layer k's rows per compute phase


@dataclass
class LoweredNetwork:
    """The program, and where each vector's outputs come back: ``order`` lists, per host output
    port, the vectors whose outputs it carries, in the order it carries them."""
    program: Program
    network: DenseNetwork
    lanes: int
    order: dict[str, list[int]] = field(default_factory=dict)
    phase_roles: list[str] = field(default_factory=list)    # per phase: load, fetch k, compute k, drain
    phase_passes: list[int] = field(default_factory=list)   # per phase: the pass it belongs to

    def outputs(self, outputs: dict[str, list[int]]) -> np.ndarray:
        """The run's host outputs as a vectors x outputs array of signed 32-bit values."""
        width = self.network.outputs
        count = sum(len(vectors) for vectors in self.order.values())
        result = np.zeros((count, width), dtype=np.int64)
        for port, vectors in self.order.items():
            words = outputs[port]
            if len(words) != width * len(vectors):
                raise ValueError(f"host output {port!r} has {len(words)} words; the program sends "
                                 f"{width * len(vectors)}")
            for k, vector in enumerate(vectors):
                block = np.asarray(words[k * width:(k + 1) * width], dtype=np.int64) & _WORD
                result[vector] = np.where(block >= 1 << 31, block - (1 << 32), block)
        return result


def _tiles_of(spec, kind: str) -> list:
    return [tile for tile in spec.all_tiles() if spec.kind(tile) == kind and tile not in spec.failed_tiles]


def _ports(spec, direction: str) -> list[str]:
    return [port.name for port in spec.host_ports if port.direction == direction]


def _plan(network: DenseNetwork, spec) -> _Plan:
    bank_words, buffer_words = spec.parameters("mem").depth, spec.parameters("mac").depth
    bases, widths, chunks, at = [], [], [], 0
    for k, layer in enumerate(network.layers):
        width = layer.inputs + (layer.bias is not None)
        if width > buffer_words:
            bias = " with its bias word" if layer.bias is not None else ""
            raise LoweringError(f"layer {k}: its {width} input words{bias} exceed a mac's buffer of "
                                f"{buffer_words}; use a fabric with [mac] depth >= {width} (a layer's "
                                f"inputs are not split over several buffers)")
        bases.append(at)
        widths.append(width)
        at += width
        rows = max(1, MAX_BEATS // width)       # a compute phase's weights are one stream
        chunks.append(tuple(min(rows, layer.outputs - start) for start in range(0, layer.outputs, rows)))
    bases.append(at)
    at += network.outputs
    if at > min(bank_words, MAX_FIELD + 1):
        sizes = " + ".join(str(width) for width in widths)
        raise LoweringError(f"the network needs {at} words per bank ({sizes} layer inputs with their bias "
                            f"words, + {network.outputs} outputs) but a mem bank holds {bank_words}; use a "
                            f"fabric with deeper banks ([mem] depth) or narrower layers")
    return _Plan(tuple(bases), tuple(widths), tuple(chunks))


def _read(start: int, count: int) -> dict:
    return {"write": 0, "start": start, "stride": 1, "offset": 0, "count_i": count, "count_j": 1}


def _write(start: int, count: int) -> dict:
    return {"write": 1, "start": start, "stride": 1, "offset": 0, "count_i": count, "count_j": 1}


def _requantise(layer, beats: int) -> dict:
    low, high = layer.clip or (0, 0)
    return {"beats": beats, "relu": int(layer.relu), "shift": layer.shift,
            "clip": int(layer.clip is not None), "lo": low, "hi": high}


class _Builder:
    """The stream graph of the passes, phase by phase."""

    def __init__(self, network: DenseNetwork, plan: _Plan, lanes: int, vectors: int, ports):
        self.network, self.plan, self.lanes = network, plan, lanes
        self.weights_port, self.inputs_port, self.output_ports = ports
        self.graph, self.roles, self.passes = StreamGraph(), [], []
        for lane in range(lanes):
            for kind in ("mem", "mac", "alu"):
                self.graph.add_node(f"{kind}{lane}", kind)
        weights = sum(layer.outputs * width for layer, width in zip(network.layers, plan.widths, strict=True))
        passes = -(-vectors // lanes)
        shared = self.weights_port == self.inputs_port
        self.graph.add_host_in("weights", self.weights_port,
                               passes * weights + (vectors * network.inputs if shared else 0))
        self.inputs = "weights" if shared else self.graph.add_host_in("inputs", self.inputs_port,
                                                                        vectors * network.inputs).name
        self.order = {port: [] for port in self.output_ports}
        per_port = {port: 0 for port in self.output_ports}
        for vector in range(vectors):
            per_port[self.output_ports[vector % lanes % len(self.output_ports)]] += 1
        for port, count in per_port.items():
            if count:
                self.graph.add_host_out(f"out_{port}", port, count * network.outputs)

    def phase(self, role: str):
        if self.roles:
            self.graph.next_phase()
        self.roles.append(role)
        self.passes.append(self.pass_index)

    def run_pass(self, first: int, count: int):
        plan, graph = self.plan, self.graph
        self.pass_index = first // self.lanes
        for lane in range(count):
            self.phase("load")
            graph.add_uops(f"mem{lane}", [_write(plan.bases[0], self.network.inputs)])
            graph.connect(self.inputs, f"mem{lane}", self.network.inputs)
        for k, layer in enumerate(self.network.layers):
            width = plan.widths[k]
            self.phase(f"fetch {k}")
            for lane in range(count):
                graph.add_uops(f"mem{lane}", [_read(plan.bases[k], width)])
                graph.add_uops(f"mac{lane}", [{"mode": "LOAD", "precision": "INT8", "length": width}])
                graph.connect(f"mem{lane}", (f"mac{lane}", 1), width)
            row = 0
            for rows in plan.chunks[k]:
                self.phase(f"compute {k}")
                graph.connect("weights", [(f"mac{lane}", 0) for lane in range(count)], rows * width)
                for lane in range(count):
                    mem, mac, alu = f"mem{lane}", f"mac{lane}", f"alu{lane}"
                    graph.add_uops(mac, [{"mode": "DOT", "precision": "INT8", "length": width, "rows": rows}])
                    graph.add_uops(alu, [_requantise(layer, rows)])
                    graph.connect(mac, alu, rows)
                    graph.add_uops(mem, [_write(plan.bases[k + 1] + row, rows)])
                    graph.connect(alu, mem, rows)
                row += rows
        for lane in range(count):
            self.phase("drain")
            port = self.output_ports[lane % len(self.output_ports)]
            graph.add_uops(f"mem{lane}", [_read(plan.bases[-1], self.network.outputs)])
            graph.connect(f"mem{lane}", f"out_{port}", self.network.outputs)
            self.order[port].append(first + lane)


def _weight_words(network: DenseNetwork) -> list[int]:
    """One pass's weight stream: each layer's rows in order, a row's bias weight last."""
    words = []
    for layer in network.layers:
        matrix = layer.weights if layer.bias is None else np.column_stack([layer.weights, layer.bias])
        words += [int(value) & _WORD for value in matrix.reshape(-1)]
    return words


def lower_network(network: DenseNetwork, inputs, spec, *, lanes: int | None = None, expected=None,
                  name: str = "dense") -> LoweredNetwork:
    """The program that runs ``network`` on every row of ``inputs`` (vectors x inputs, int8) on
    the fabric ``spec``; ``lanes`` (default: as many as the fabric has mem, mac and alu tiles)
    vectors per pass. ``expected`` (vectors x outputs, computed independently) becomes the
    program's expected host outputs."""
    try:
        inputs = network.check_inputs(inputs)
    except NetworkError as error:
        raise LoweringError(str(error)) from None
    available = min(len(_tiles_of(spec, kind)) for kind in ("mem", "mac", "alu"))
    if available == 0:
        raise LoweringError("the fabric needs at least one working mem, mac and alu tile for a dense "
                            "network (examples/fabrics/default.toml has three of each)")
    if lanes is None:
        lanes = available
    if isinstance(lanes, bool) or not isinstance(lanes, int) or not 1 <= lanes <= available:
        raise LoweringError(f"lanes={lanes!r}: the fabric has {available} lanes (mem, mac and alu tiles)")
    lanes = min(lanes, len(inputs))         # a lane without a vector would have no work
    ins, outs = _ports(spec, "in"), _ports(spec, "out")
    if not ins or not outs:
        raise LoweringError("the fabric needs a host input and a host output port for a dense network")
    plan = _plan(network, spec)
    vectors = len(inputs)
    builder = _Builder(network, plan, lanes, vectors, (ins[0], ins[-1], outs))
    for first in range(0, vectors, lanes):
        builder.run_pass(first, min(lanes, vectors - first))
    banks = {f"mem{lane}": {plan.bases[k] + layer.inputs: network.bias_input
                            for k, layer in enumerate(network.layers) if layer.bias is not None}
             for lane in range(lanes)}
    host = _host_inputs(network, inputs, lanes, ins[0], ins[-1])
    order = {port: vectors for port, vectors in builder.order.items() if vectors}
    lowered = LoweredNetwork(Program(name=name, graph=builder.graph, memories=banks, host_inputs=host),
                             network, lanes, order, builder.roles, builder.passes)
    if expected is not None:
        lowered.program.expected = _expected_outputs(lowered, np.asarray(expected))
    return lowered


def _host_inputs(network: DenseNetwork, inputs: np.ndarray, lanes: int, weights_port: str,
                 inputs_port: str) -> dict[str, list[int]]:
    """What the host sends, in the order the program's phases take it."""
    weights = _weight_words(network)
    sent = {weights_port: [], inputs_port: []}
    for first in range(0, len(inputs), lanes):
        for vector in inputs[first:first + lanes]:
            sent[inputs_port] += [int(value) & _WORD for value in vector]
        sent[weights_port] += weights
    if weights_port == inputs_port:        # one port: each pass's vectors come before its weights
        sent = {weights_port: []}
        for first in range(0, len(inputs), lanes):
            for vector in inputs[first:first + lanes]:
                sent[weights_port] += [int(value) & _WORD for value in vector]
            sent[weights_port] += weights
    return sent


def _expected_outputs(lowered: LoweredNetwork, expected: np.ndarray) -> dict[str, list[int]]:
    width = lowered.network.outputs
    count = sum(len(vectors) for vectors in lowered.order.values())
    if expected.shape != (count, width):
        raise LoweringError(f"expected outputs have shape {expected.shape}; the program computes "
                            f"{count} vectors of {width}")
    return {port: [int(value) & _WORD for vector in vectors for value in expected[vector]]
            for port, vectors in lowered.order.items()}
