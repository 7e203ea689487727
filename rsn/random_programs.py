"""Random path programs for the fabric: small graphs of every shape the FUs support.

Each program is one of a few path shapes with random sizes, addressing, ALU settings and data,
and fits the default fabric (at most three tiles of each kind, host ports in0/in1/out0/out1).
There is no reference here: the golden model is the specification the RTL is compared with.
"""

import random

from rsn.graph import StreamGraph
from rsn.program import Program

__all__ = ["random_program", "random_phased_program", "SHAPES"]

MEM_DEPTH = 1024


def _affine_read(rng: random.Random, tokens_max: int = 48) -> tuple[dict, list[int]]:
    """A READ micro-op whose addresses all fall inside the bank, and those addresses in order."""
    while True:
        count_i, count_j = rng.randint(1, 12), rng.randint(1, 4)
        if count_i * count_j > tokens_max:
            continue
        start = rng.randrange(MEM_DEPTH)
        stride, offset = rng.randint(-4, 4), rng.randint(-40, 40)
        addresses = [start + i * stride + j * offset for j in range(count_j) for i in range(count_i)]
        if all(0 <= address < MEM_DEPTH for address in addresses):
            uop = {"write": 0, "start": start, "stride": stride, "offset": offset,
                   "count_i": count_i, "count_j": count_j}
            return uop, addresses


def _contiguous_read(rng: random.Random, count: int) -> tuple[dict, list[int]]:
    start = rng.randrange(MEM_DEPTH - count)
    return ({"write": 0, "start": start, "stride": 1, "offset": 0, "count_i": count, "count_j": 1},
            list(range(start, start + count)))


def _alu(rng: random.Random, beats: int) -> dict:
    lo = rng.randint(-(1 << 15), (1 << 15) - 1)
    return {"beats": beats, "relu": rng.randint(0, 1), "shift": rng.choice([0, 1, 7, 13, 31]),
            "clip": rng.randint(0, 1), "lo": lo, "hi": rng.randint(lo, (1 << 15) - 1)}


def _words(rng: random.Random, addresses) -> dict[int, int]:
    return {address: rng.getrandbits(32) for address in addresses}


def _elementwise(rng, graph, program):
    read, addresses = _affine_read(rng)
    tokens = len(addresses)
    graph.add_node("source", "mem", [read])
    program.memories["source"] = _words(rng, addresses)
    stages = rng.randint(1, 2)
    previous = "source"
    for stage in range(stages):
        graph.add_node(f"alu{stage}", "alu", [_alu(rng, tokens)])
        graph.connect(previous, f"alu{stage}", tokens)
        previous = f"alu{stage}"
    graph.add_host_out("result", "out0", tokens)
    graph.connect(previous, "result", tokens)


def _dot2(rng, graph, program):
    length, rows = rng.randint(1, 12), rng.randint(1, 4)
    precision = rng.choice(["INT8", "INT32"])
    for name in ("a", "b"):
        read, addresses = _contiguous_read(rng, length * rows)
        graph.add_node(name, "mem", [read])
        program.memories[name] = _words(rng, addresses)
    graph.add_node("mac", "mac", [{"mode": "DOT2", "precision": precision, "length": length, "rows": rows}])
    graph.connect("a", ("mac", 0), length * rows)
    graph.connect("b", ("mac", 1), length * rows)
    graph.add_host_out("result", "out1", rows)
    graph.connect("mac", "result", rows)


def _gemv(rng, graph, program):
    length, rows, vectors = rng.randint(1, 16), rng.randint(1, 6), rng.randint(1, 2)
    precision = rng.choice(["INT8", "INT32"])
    read_x, x_addresses = _contiguous_read(rng, length)
    read_x["count_j"] = vectors          # the same vector again for each pass
    read_w, w_addresses = _contiguous_read(rng, length * rows)
    read_w["count_j"] = vectors
    graph.add_node("x", "mem", [read_x])
    graph.add_node("w", "mem", [read_w])
    program.memories["x"] = _words(rng, x_addresses)
    program.memories["w"] = _words(rng, w_addresses)
    uops = []
    for _ in range(vectors):
        uops += [{"mode": "LOAD", "precision": precision, "length": length},
                 {"mode": "DOT", "precision": precision, "length": length, "rows": rows}]
    graph.add_node("mac", "mac", uops)
    graph.connect("x", ("mac", 1), length * vectors)
    graph.connect("w", ("mac", 0), length * rows * vectors)
    graph.add_node("post", "alu", [_alu(rng, rows * vectors)])
    graph.connect("mac", "post", rows * vectors)
    graph.add_host_out("result", "out0", rows * vectors)
    graph.connect("post", "result", rows * vectors)


def _multicast(rng, graph, program):
    read, addresses = _affine_read(rng)
    tokens = len(addresses)
    graph.add_node("source", "mem", [read])
    program.memories["source"] = _words(rng, addresses)
    graph.add_node("left", "alu", [_alu(rng, tokens)])
    graph.add_node("right", "alu", [_alu(rng, tokens)])
    graph.connect("source", ["left", "right"], tokens)
    graph.add_host_out("out_left", "out0", tokens)
    graph.add_host_out("out_right", "out1", tokens)
    graph.connect("left", "out_left", tokens)
    graph.connect("right", "out_right", tokens)


def _write_then_read(rng, graph, program):
    tokens = rng.randint(1, 32)
    start = rng.randrange(MEM_DEPTH - tokens)
    span = {"start": start, "stride": 1, "offset": 0, "count_i": tokens, "count_j": 1}
    graph.add_host_in("host", rng.choice(["in0", "in1"]), tokens)
    graph.add_node("scale", "alu", [_alu(rng, tokens)])
    graph.add_node("store", "mem", [{"write": 1, **span}, {"write": 0, **span}])
    graph.add_host_out("result", "out1", tokens)
    graph.connect("host", "scale", tokens)
    graph.connect("scale", "store", tokens)
    graph.connect("store", "result", tokens)
    program.host_inputs[graph.nodes["host"].port] = [rng.getrandbits(32) for _ in range(tokens)]


def _pass_through(rng, graph, program):
    tokens = rng.randint(1, 48)
    port = rng.choice(["in0", "in1"])
    graph.add_host_in("host", port, tokens)
    graph.add_node("alu", "alu", [_alu(rng, tokens)])
    graph.add_host_out("result", rng.choice(["out0", "out1"]), tokens)
    graph.connect("host", "alu", tokens)
    graph.connect("alu", "result", tokens)
    program.host_inputs[port] = [rng.getrandbits(32) for _ in range(tokens)]


SHAPES = {
    "elementwise": _elementwise, "dot2": _dot2, "gemv": _gemv, "multicast": _multicast,
    "write_then_read": _write_then_read, "pass_through": _pass_through,
}


def random_program(seed: int, shape: str | None = None) -> Program:
    """A random program of ``shape`` (or a random shape), fully determined by ``seed``."""
    rng = random.Random(seed)
    shape = shape or rng.choice(sorted(SHAPES))
    graph = StreamGraph()
    program = Program(name=f"{shape}-{seed}", graph=graph, description=f"random {shape} program")
    SHAPES[shape](rng, graph, program)
    return program


# Random phased programs: the same units and links serve several phases one after the other.
# Every unit output keeps the sinks it had in its first phase (the rule of docs/rsn-phases.md),
# so the wiring is drawn once, lazily: each source (a mem bank or the host input) enters the
# network at one unit, the middle alus feed the tail alu, the tail feeds the host. Each phase
# then runs one path from a source (a mem READ of random addresses, the host, or a DOT2 of two
# banks on the mac) through its entry to the host, with its own counts and ALU settings.

_PHASED_SOURCES = ("m0", "m1", "m2", "host")
_PHASED_ENTRIES = ("mid0", "mid1", "tail")


def _phase_path(rng, graph, program, entries, host_tokens):
    """Add one phase's path and return its token count at the tail."""
    dot_banks = [name for name in ("m0", "m1", "m2")
                 if entries.get(name) in (None, ("mac", 0), ("mac", 1))]
    free_ports = {0, 1} - {entries[name][1] for name in dot_banks if entries.get(name)}
    if len(dot_banks) >= 2 and rng.random() < 0.3 and \
            all(entries.get(name) is not None or free_ports for name in dot_banks[:2]):
        first, second = sorted(dot_banks[:2], key=lambda name: entries.get(name) is None)
        if entries.get(first) is None:
            entries[first] = ("mac", free_ports.pop())
        if entries.get(second) is None:
            entries[second] = ("mac", ({0, 1} - {entries[first][1]}).pop())
        if entries[first][1] != entries[second][1]:
            length, rows = rng.randint(1, 8), rng.randint(1, 4)
            for name in (first, second):
                read, addresses = _contiguous_read(rng, length * rows)
                graph.add_uops(name, [read])
                program.memories[name].update(_words(rng, addresses))
                graph.connect(name, entries[name], length * rows)
            graph.add_uops("mac", [{"mode": "DOT2", "precision": rng.choice(["INT8", "INT32"]),
                                    "length": length, "rows": rows}])
            graph.connect("mac", "tail", rows)
            return rows
    source = rng.choice([name for name in _PHASED_SOURCES
                         if entries.get(name) is None or entries[name][0] != "mac"])
    if entries.get(source) is None:
        entries[source] = (rng.choice(_PHASED_ENTRIES), 0)
    entry = entries[source][0]
    if source == "host":
        tokens = rng.randint(1, 24)
        host_tokens.extend(rng.getrandbits(32) for _ in range(tokens))
    else:
        read, addresses = _affine_read(rng, tokens_max=32)
        tokens = len(addresses)
        graph.add_uops(source, [read])
        program.memories[source].update(_words(rng, addresses))
    graph.connect(source, entry, tokens)
    if entry != "tail":
        graph.add_uops(entry, [_alu(rng, tokens)])
        graph.connect(entry, "tail", tokens)
    return tokens


def random_phased_program(seed: int, phases: int | None = None) -> Program:
    """A random program of 2..4 phases (or ``phases``) that reuse units and links, fully
    determined by ``seed``; its host output is every phase's result in phase order."""
    rng = random.Random(seed)
    phases = phases or rng.randint(2, 4)
    graph = StreamGraph()
    program = Program(name=f"phased-{seed}", graph=graph, description=f"random {phases}-phase program")
    for name in ("m0", "m1", "m2"):
        graph.add_node(name, "mem")
        program.memories[name] = {}
    for name in ("mid0", "mid1", "tail"):
        graph.add_node(name, "alu")
    graph.add_node("mac", "mac")
    host = graph.add_host_in("host", "in0", 1)          # counts set once every phase is drawn
    result = graph.add_host_out("result", "out0", 1)
    entries, host_tokens, total = {}, [], 0
    for phase in range(phases):
        if phase:
            graph.next_phase()
        tokens = _phase_path(rng, graph, program, entries, host_tokens)
        graph.add_uops("tail", [_alu(rng, tokens)])
        graph.connect("tail", "result", tokens)
        total += tokens
    result.tokens = total
    if host_tokens:
        host.tokens = len(host_tokens)
        program.host_inputs["in0"] = host_tokens
    unused = [name for name, node in graph.nodes.items()
              if (not node.is_host and not node.uops) or (node is host and not host_tokens)]
    for name in unused:
        del graph.nodes[name]
    for name in [name for name in program.memories if name not in graph.nodes]:
        del program.memories[name]
    return program
