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

A layer whose input (with its bias word) is wider than a mac's buffer is **split** into pieces
that fit: per piece, a fetch and compute phases as above, but each alu passes the partial sums
through unchanged into a scratch region of its bank. Then the **reduce** phases add them on the
mac: each mac loads ones from its bank (``ones k``), and per lane one ``reduce k`` phase streams
the lane's partial sums, a row's pieces together, into ``DOT`` INT32 against the ones, through
the alu's requantisation into the *next* lane's bank. The sums cannot go back into their own
bank: it is still reading them, and a bank runs one micro-op at a time (a cyclic wait the checks
refuse). So the vectors move one bank round a ring of lanes at every split layer, and the
reduce phases run one lane after another. A pass with one vector borrows a second bank.

A bank holds each layer's input in a region of its own, the bias input's constant word right
after it (written with the image, never overwritten), the last layer's words, the split layers'
partial sums and the ones the reduce loads (constants too). Phases order
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
    pieces: tuple[tuple[tuple[int, int], ...], ...]     # layer k's (offset, words) per mac buffer
    scratch: int                    # bank address of a split layer's partial sums
    ones: int                       # bank address of the ones a reduce loads (as many as pieces)

    def split(self, k: int) -> bool:
        return len(self.pieces[k]) > 1


def _row_chunks(outputs: int, length: int) -> list[int]:
    """Rows per compute phase: a phase's weights are one stream, its results one WRITE."""
    rows = max(1, min(MAX_BEATS // length, MAX_FIELD))
    return [min(rows, outputs - start) for start in range(0, outputs, rows)]


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


def _plan(network: DenseNetwork, spec, lanes: int) -> _Plan:
    bank_words, buffer_words = spec.parameters("mem").depth, spec.parameters("mac").depth
    bases, widths, pieces, at = [], [], [], 0
    scratch_words = ones_words = 0
    for k, layer in enumerate(network.layers):
        width = layer.inputs + (layer.bias is not None)
        bases.append(at)
        widths.append(width)
        at += width
        pieces.append(tuple((offset, min(buffer_words, width - offset))
                            for offset in range(0, width, buffer_words)))
        if len(pieces[-1]) > 1:
            if lanes < 2:
                raise LoweringError(f"layer {k}: its {width} input words exceed a mac's buffer of "
                                    f"{buffer_words}, so its partial sums are added on a second lane; "
                                    f"use lanes >= 2 or a fabric with [mac] depth >= {width}")
            scratch_words = max(scratch_words, len(pieces[-1]) * layer.outputs)
            ones_words = max(ones_words, len(pieces[-1]))
    bases.append(at)
    at += network.outputs
    scratch, ones = at, at + scratch_words
    at = ones + ones_words
    if at > min(bank_words, MAX_FIELD + 1):
        sizes = " + ".join(str(width) for width in widths)
        split = f", + {scratch_words} partial sums and {ones_words} ones" if scratch_words else ""
        raise LoweringError(f"the network needs {at} words per bank ({sizes} layer inputs with their bias "
                            f"words, + {network.outputs} outputs{split}) but a mem bank holds {bank_words}; "
                            f"use a fabric with deeper banks ([mem] depth) or narrower layers")
    return _Plan(tuple(bases), tuple(widths), tuple(pieces), scratch, ones)


def _read(start: int, count: int, *, stride: int = 1, offset: int = 0, repeats: int = 1) -> dict:
    return {"write": 0, "start": start, "stride": stride, "offset": offset, "count_i": count,
            "count_j": repeats}


def _write(start: int, count: int, *, stride: int = 1) -> dict:
    return {"write": 1, "start": start, "stride": stride, "offset": 0, "count_i": count, "count_j": 1}


_PASS_THROUGH = {"relu": 0, "shift": 0, "clip": 0, "lo": 0, "hi": 0}


def _requantise(layer, beats: int) -> dict:
    low, high = layer.clip or (0, 0)
    return {"beats": beats, "relu": int(layer.relu), "shift": layer.shift,
            "clip": int(layer.clip is not None), "lo": low, "hi": high}


class _Builder:
    """The stream graph of the passes, phase by phase. ``holder`` maps each bank (by lane) that
    holds a vector to the vector's place in the pass; a split layer moves the vectors round."""

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

    def uops(self, name: str, uops: list[dict]):
        """Micro-ops for a lane's unit; a pass of one vector through a split layer borrows the
        units of a lane beyond ``lanes``, added as it first uses them."""
        if name not in self.graph.nodes:
            self.graph.add_node(name, name.rstrip("0123456789"))
        self.graph.add_uops(name, uops)

    def phase(self, role: str):
        if self.roles:
            self.graph.next_phase()
        self.roles.append(role)
        self.passes.append(self.pass_index)

    def run_pass(self, first: int, count: int):
        graph, inputs = self.graph, self.network.inputs
        self.pass_index = first // self.lanes
        holder = {lane: lane for lane in range(count)}
        for lane in range(count):
            self.phase("load")
            self.uops(f"mem{lane}", [_write(self.plan.bases[0], inputs)])
            graph.connect(self.inputs, f"mem{lane}", inputs)
        for k, layer in enumerate(self.network.layers):
            banks = sorted(holder)
            for piece, (offset, length) in enumerate(self.plan.pieces[k]):
                self._piece(k, layer, banks, piece, offset, length)
            if self.plan.split(k):
                holder = self._reduce(k, layer, holder, ring=max(2, count))
        for lane in sorted(holder):
            self.phase("drain")
            port = self.output_ports[lane % len(self.output_ports)]
            self.uops(f"mem{lane}", [_read(self.plan.bases[-1], self.network.outputs)])
            name = f"out_{port}"
            if name in graph.nodes:
                graph.node(name).tokens += self.network.outputs
            else:
                graph.add_host_out(name, port, self.network.outputs)
            graph.connect(f"mem{lane}", name, self.network.outputs)
            self.order[port].append(first + holder[lane])

    def _piece(self, k: int, layer, banks: list[int], piece: int, offset: int, length: int):
        """Fetch one piece of layer k's input into each mac, then stream the rows' weights for it.
        An unsplit layer's sums are requantised into the next layer's input; a split layer's
        partial sums go unchanged to the scratch region, row r's piece c at ``r * pieces + c``."""
        plan, graph = self.plan, self.graph
        pieces = len(plan.pieces[k])
        self.phase(f"fetch {k}")
        for lane in banks:
            self.uops(f"mem{lane}", [_read(plan.bases[k] + offset, length)])
            self.uops(f"mac{lane}", [{"mode": "LOAD", "precision": "INT8", "length": length}])
            graph.connect(f"mem{lane}", (f"mac{lane}", 1), length)
        row = 0
        for rows in _row_chunks(layer.outputs, length):
            self.phase(f"compute {k}")
            graph.connect("weights", [(f"mac{lane}", 0) for lane in banks], rows * length)
            for lane in banks:
                mem, mac, alu = f"mem{lane}", f"mac{lane}", f"alu{lane}"
                self.uops(mac, [{"mode": "DOT", "precision": "INT8", "length": length, "rows": rows}])
                if plan.split(k):
                    self.uops(alu, [{"beats": rows, **_PASS_THROUGH}])
                    target = _write(plan.scratch + row * pieces + piece, rows, stride=pieces)
                else:
                    self.uops(alu, [_requantise(layer, rows)])
                    target = _write(plan.bases[k + 1] + row, rows)
                graph.connect(mac, alu, rows)
                self.uops(mem, [target])
                graph.connect(alu, mem, rows)
            row += rows

    def _reduce(self, k: int, layer, holder: dict[int, int], ring: int) -> dict[int, int]:
        """Add a split layer's partial sums: each mac's buffer takes ones, then lane by lane the
        bank streams its sums (a row's pieces together) into its mac (DOT INT32 against the
        ones), whose alu requantises them into the next bank of the ring. Returns who holds what."""
        plan, graph = self.plan, self.graph
        pieces = len(plan.pieces[k])
        self.phase(f"ones {k}")
        for lane in sorted(holder):
            self.uops(f"mem{lane}", [_read(plan.ones, pieces)])
            self.uops(f"mac{lane}", [{"mode": "LOAD", "precision": "INT32", "length": pieces}])
            graph.connect(f"mem{lane}", (f"mac{lane}", 1), pieces)
        block = max(1, min(MAX_BEATS // pieces, MAX_FIELD))
        for lane in sorted(holder):
            mem, mac, alu, target = f"mem{lane}", f"mac{lane}", f"alu{lane}", f"mem{(lane + 1) % ring}"
            for row in range(0, layer.outputs, block):
                rows = min(block, layer.outputs - row)
                self.phase(f"reduce {k}")
                self.uops(mem, [_read(plan.scratch + row * pieces, pieces, offset=pieces, repeats=rows)])
                self.uops(mac, [{"mode": "DOT", "precision": "INT32", "length": pieces, "rows": rows}])
                graph.connect(mem, mac, rows * pieces)
                self.uops(alu, [_requantise(layer, rows)])
                graph.connect(mac, alu, rows)
                self.uops(target, [_write(plan.bases[k + 1] + row, rows)])
                graph.connect(alu, target, rows)
        return {(lane + 1) % ring: vector for lane, vector in holder.items()}


def _weight_words(network: DenseNetwork, plan: _Plan) -> list[int]:
    """One pass's weight stream: per layer and per piece of its input, the rows in order (a
    row's bias weight last, in the last piece)."""
    words = []
    for k, layer in enumerate(network.layers):
        matrix = layer.weights if layer.bias is None else np.column_stack([layer.weights, layer.bias])
        for offset, length in plan.pieces[k]:
            words += [int(value) & _WORD for value in matrix[:, offset:offset + length].reshape(-1)]
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
    ins, outs = _ports(spec, "in"), _ports(spec, "out")
    if not ins or not outs:
        raise LoweringError("the fabric needs a host input and a host output port for a dense network")
    plan = _plan(network, spec, lanes)
    lanes = min(lanes, len(inputs))         # a lane without a vector would have no work
    ones = max((len(pieces) for pieces in plan.pieces if len(pieces) > 1), default=0)
    vectors = len(inputs)
    builder = _Builder(network, plan, lanes, vectors, (ins[0], ins[-1], outs))
    for first in range(0, vectors, lanes):
        builder.run_pass(first, min(lanes, vectors - first))
    constants = {plan.bases[k] + layer.inputs: network.bias_input
                 for k, layer in enumerate(network.layers) if layer.bias is not None}
    constants.update({plan.ones + piece: 1 for piece in range(ones)})
    banks = {node.name: dict(constants) for node in builder.graph.fu_nodes() if node.kind == "mem"}
    host = _host_inputs(network, plan, inputs, lanes, ins[0], ins[-1])
    order = {port: vectors for port, vectors in builder.order.items() if vectors}
    lowered = LoweredNetwork(Program(name=name, graph=builder.graph, memories=banks, host_inputs=host),
                             network, lanes, order, builder.roles, builder.passes)
    if expected is not None:
        lowered.program.expected = _expected_outputs(lowered, np.asarray(expected))
    return lowered


def _host_inputs(network: DenseNetwork, plan: _Plan, inputs: np.ndarray, lanes: int, weights_port: str,
                 inputs_port: str) -> dict[str, list[int]]:
    """What the host sends, in the order the program's phases take it."""
    weights = _weight_words(network, plan)
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
