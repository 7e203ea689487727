"""Programs: what ``rivulet run`` runs, and the one pipeline that compiles them to an image.

A front-end builds a :class:`Program` (a stream graph plus its data); :func:`compile_program`
checks, places, routes and assembles it for a fabric. The resulting image is what the golden
model and the RTL both run.
"""

import dataclasses
import importlib.util
from dataclasses import dataclass, field
from numbers import Integral
from pathlib import Path

from .assemble import UnitProgram, assemble
from .checks import ProgramError
from .fabric_spec import FabricSpec
from .fu_kinds import fu_kind
from .graph import StreamGraph
from .route import Routing, place_and_route, switch_uop_phases
from .words import as_word, word_problem

__all__ = ["Program", "Compiled", "compile_program", "load_program", "ProgramLoadError", "HostInput",
           "host_inputs_declared"]


# The key of the fabric's shared memory in a program's memories and reads: not a node name
# (those cannot contain a space).
SHARED_MEMORY = "shared memory"


class ProgramLoadError(ValueError):
    """A program file could not be loaded; the message says which and why."""


@dataclass
class Program:
    """A stream graph with its data.

    ``memories``: FU node name -> {address: word}, written before the run (a mem node's bank
    words, or another kind's registers). ``host_inputs``: host port -> tokens the host sends,
    exactly as many as the port's stream declares. Every value is a word of its width (see
    :mod:`rsn.words`: signed or unsigned, stored modulo 2^width), checked by
    :func:`compile_program`. ``expected``: host port -> the tokens a correct fabric
    returns, computed independently of Rivulet (e.g. with numpy), or None when unknown.
    ``reads``: FU node name -> register operations after the run, in order: ``(address, value)``
    writes, ``(address, None)`` reads (e.g. an xbar's membranes through its latch);
    ``expected_reads``: node -> the values those reads return (32-bit), or None when unknown.

    On a fabric with a shared memory, the key :data:`SHARED_MEMORY` in ``memories`` gives its
    initial words (address -> word, preloaded before the START packet, so that the cycle counter
    counts compute only), and in ``reads`` / ``expected_reads`` the words read back from it.
    """
    name: str
    graph: StreamGraph
    memories: dict[str, dict[int, int]] = field(default_factory=dict)
    host_inputs: dict[str, list[int]] = field(default_factory=dict)
    expected: dict[str, list[int]] | None = None
    description: str = ""
    reads: dict[str, list[tuple[int, int | None]]] = field(default_factory=dict)
    expected_reads: dict[str, list[int]] | None = None


@dataclass
class Compiled:
    program: Program
    spec: FabricSpec
    routing: Routing
    image: list[int]

    @property
    def host_outputs(self) -> dict[str, int]:
        """Host output port -> tokens the program sends there."""
        return {node.port: node.tokens for node in self.program.graph.host_nodes()
                if node.kind == "host_out"}


def compile_program(program: Program, spec: FabricSpec, *, seed: int = 0, max_window: int = 8,
                    attempts: int = 3) -> Compiled:
    """Check, place, route and assemble ``program`` for the fabric ``spec`` (``attempts``: placement
    seeds tried, see :func:`rsn.route.place_and_route`).

    The compiled program's host inputs and memories are the words stored (unsigned, modulo
    2^width); a value that does not fit (or an expected output token that no ``data_width``-bit
    word can equal), or a host input of the wrong length, raises
    :class:`~rsn.checks.ProgramError` before anything is placed.
    """
    program = dataclasses.replace(program, host_inputs=_checked_host_inputs(program, spec),
                                  memories=_checked_memories(program, spec))
    _check_expected(program, spec)
    routing = place_and_route(spec, program.graph, seed=seed, attempts=attempts)
    tiles = routing.placement.tiles
    switch_phases = switch_uop_phases(routing.routes)
    fu_phases = {tiles[node.name]: node.phase_of_uops() for node in program.graph.fu_nodes()}
    units = [UnitProgram(tile, "switch", uops, switch_phases[tile])
             for tile, uops in routing.switch_uops.items()]
    units += [UnitProgram(tile, spec.kind(tile), uops, fu_phases[tile])
              for tile, uops in routing.fu_uops.items()]
    memories = {tiles[name]: contents for name, contents in program.memories.items() if name != SHARED_MEMORY}
    image = assemble(units, memories, queue_depth=spec.uop_queue_depth, max_window=max_window,
                     shared_memory=program.memories.get(SHARED_MEMORY))
    return Compiled(program, spec, routing, image)


@dataclass(frozen=True)
class HostInput:
    """A host input port as the program uses it: its host_in node and the tokens its stream
    declares (``stream``: the stream, or the node if it has none yet, as text for messages)."""
    port: str
    node: str
    declared: int
    stream: str


def host_inputs_declared(graph: StreamGraph) -> dict[str, HostInput]:
    """Host input port -> :class:`HostInput`, for every host_in node of ``graph``."""
    declared = {}
    for node in graph.host_nodes():
        if node.kind == "host_in":
            # One stream per phase may leave a host input; the host sends them all, in phase order.
            edges = [edge for edge in graph.edges if edge.source == (node.name, 0)]
            if not edges:
                declared[node.port] = HostInput(node.port, node.name, node.tokens, f"node {node.name!r}")
            elif len(edges) == 1:
                declared[node.port] = HostInput(node.port, node.name, edges[0].tokens, f"stream {edges[0]}")
            else:
                declared[node.port] = HostInput(node.port, node.name, sum(edge.tokens or 0 for edge in edges),
                                                f"the sum of its streams {'; '.join(map(str, edges))}")
    return declared


def _checked_host_inputs(program: Program, spec: FabricSpec) -> dict[str, list[int]]:
    """Each host_in node's tokens: exactly as many as its stream declares (fewer leave the fabric
    waiting for ever, more are never taken), each a ``data_width``-bit word; as stored."""
    ports = host_inputs_declared(program.graph)
    unused = sorted(set(program.host_inputs) - set(ports))
    if unused:
        raise ProgramError(f"host input {unused[0]!r} is given tokens, but no host_in node of the graph "
                           f"uses that port (host_in ports: {', '.join(sorted(ports)) or 'none'}); add "
                           f"a host_in node for it or drop its tokens")
    stored = {}
    for port, host in ports.items():
        tokens = list(program.host_inputs.get(port, []))
        if len(tokens) != host.declared:
            short = "short" if len(tokens) < host.declared else "too long"
            raise ProgramError(f"host input {port!r} (node {host.node!r}) is {short}: the host gives "
                               f"{len(tokens)} tokens, but {host.stream} declares {host.declared}; give "
                               f"{host.declared} tokens or declare {len(tokens)}")
        for index, token in enumerate(tokens):
            problem = word_problem(token, spec.data_width, "the fabric's data_width")
            if problem:
                raise ProgramError(f"host input {port!r} (node {host.node!r}) token {index}: {problem}")
        stored[port] = [as_word(token, spec.data_width) for token in tokens]
    return stored


def _check_expected(program: Program, spec: FabricSpec):
    """Each expected output token must be a ``data_width``-bit word: the fabric returns nothing
    else, so a wider one (a reference computed on wider words than the fabric carries) could only
    end the run as a mismatch."""
    for port, tokens in (program.expected or {}).items():
        for index, token in enumerate(tokens):
            problem = word_problem(token, spec.data_width, "the fabric's data_width")
            if problem:
                raise ProgramError(f"expected output {port!r} token {index}: {problem}. The program's "
                                   f"reference computes wider words than this fabric's tokens carry: run "
                                   f"it on a fabric whose data_width holds its values")


def _checked_memories(program: Program, spec: FabricSpec) -> dict[str, dict[int, int]]:
    """Each node's initial words, checked against what its unit holds; as stored."""
    checked = {}
    for name, contents in program.memories.items():
        if name == SHARED_MEMORY:
            checked[name] = _checked_shared_memory(contents, spec)
            continue
        node = program.graph.nodes.get(name)
        if node is None or node.is_host:
            raise ProgramError(f"memories name {name!r}, which is not an FU node of the graph; memory "
                               f"contents belong to a mem node (or another FU's registers)")
        checked[name] = {}
        for address, value in dict(contents).items():
            word = _memory_word(node, address, value, spec)     # checks the address first
            checked[name][int(address)] = word
    return checked


def _checked_shared_memory(contents, spec: FabricSpec) -> dict[int, int]:
    """The shared memory's initial words: the fabric must have one, each address inside it, each
    word 32 bits; as stored."""
    if spec.memory is None:
        raise ProgramError(f"memories give words for the {SHARED_MEMORY}, but the fabric has none; add a "
                           f"[memory] table to the fabric description")
    checked = {}
    for address, value in dict(contents).items():
        where = f"{SHARED_MEMORY} address {address!r}"
        if isinstance(address, bool) or not isinstance(address, Integral) or \
                not 0 <= address < spec.memory.words:
            raise ProgramError(f"{where}: an address must be an integer 0..{spec.memory.words - 1} (the "
                               f"[memory] table's words)")
        problem = word_problem(value, _CONFIG_DATA_BITS, "a memory word")
        if problem:
            raise ProgramError(f"{where}: {problem}")
        checked[int(address)] = as_word(value, _CONFIG_DATA_BITS)
    return checked


# Initial words travel as control-plane WRITEs: a 16-bit register address and 32 bits of data,
# which a mem bank zero-extends (or truncates) to data_width.
_REGISTER_ADDRESSES = 1 << 16
_CONFIG_DATA_BITS = 32


def _memory_word(node, address, value, spec: FabricSpec) -> int:
    """``value`` at ``address`` of ``node`` as stored; raise :class:`ProgramError` if it does not fit.

    A kind with a bank (``FuKind.storage_words``) takes words at 0..words-1 (a larger address
    would alias another word), each data_width bits but at most the 32 of a WRITE: above 32 bits
    the bank zero-extends, so only 0..2^32-1 is stored faithfully. Other kinds' addresses are
    registers, their values 32-bit words.
    """
    shown = int(address) if isinstance(address, Integral) else repr(address)
    where = f"memory of node {node.name!r} ({node.kind}) address {shown}"
    kind = fu_kind(node.kind)
    bank = kind.storage_words(spec.parameters(kind.name)) if kind.storage_words else None
    depth = _REGISTER_ADDRESSES if bank is None else bank
    why = "registers have 16-bit addresses" if bank is None else \
        f"the bank holds {bank} words, the [{kind.name}] table's size"
    if isinstance(address, bool) or not isinstance(address, Integral) or not 0 <= address < depth:
        raise ProgramError(f"{where}: an address must be an integer 0..{depth - 1} ({why})")
    bank_width = bank is not None and spec.data_width <= _CONFIG_DATA_BITS
    width = spec.data_width if bank_width else _CONFIG_DATA_BITS
    limit = "the fabric's data_width" if bank_width else "a WRITE's data"
    problem = word_problem(value, width, limit)
    if problem is None and bank is not None and spec.data_width > _CONFIG_DATA_BITS and value < 0:
        problem = (f"{value} is negative, but a WRITE carries 32 bits, which the {spec.data_width}-bit "
                   f"bank zero-extends; give the word as an unsigned 0..{(1 << 32) - 1}")
    if problem:
        raise ProgramError(f"{where}: {problem}")
    return as_word(value, width)


def load_program(path, **options) -> Program:
    """Load ``program(**options)`` from the Python file ``path``."""
    path = Path(path)
    if not path.exists():
        raise ProgramLoadError(f"program file {path} does not exist")
    module_spec = importlib.util.spec_from_file_location(f"rivulet_program_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    if not hasattr(module, "program"):
        raise ProgramLoadError(f"{path} defines no program(...) function returning a rsn.program.Program")
    return module.program(**options)
