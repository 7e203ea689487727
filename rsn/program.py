"""Programs: what ``rivulet run`` runs, and the one pipeline that compiles them to an image.

A front-end builds a :class:`Program` (a stream graph plus its data); :func:`compile_program`
checks, places, routes and assembles it for a fabric. The resulting image is what the golden
model and the RTL both run.
"""

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from .assemble import UnitProgram, assemble
from .fabric_spec import FabricSpec
from .graph import StreamGraph
from .route import Routing, place_and_route

__all__ = ["Program", "Compiled", "compile_program", "load_program", "ProgramLoadError"]


class ProgramLoadError(ValueError):
    """A program file could not be loaded; the message says which and why."""


@dataclass
class Program:
    """A stream graph with its data.

    ``memories``: mem node name -> {address: word}, written before the run. ``host_inputs``:
    host port -> tokens the host sends. ``expected``: host port -> the tokens a correct fabric
    returns, computed independently of Rivulet (e.g. with numpy), or None when unknown.
    ``reads``: FU node name -> register operations after the run, in order: ``(address, value)``
    writes, ``(address, None)`` reads (e.g. an xbar's membranes through its latch);
    ``expected_reads``: node -> the values those reads return (32-bit), or None when unknown.
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
    seeds tried, see :func:`rsn.route.place_and_route`)."""
    routing = place_and_route(spec, program.graph, seed=seed, attempts=attempts)
    tiles = routing.placement.tiles
    units = [UnitProgram(tile, "switch", uops) for tile, uops in routing.switch_uops.items()]
    units += [UnitProgram(tile, spec.kind(tile), uops) for tile, uops in routing.fu_uops.items()]
    mask = (1 << spec.data_width) - 1
    memories = {tiles[name]: {address: value & mask for address, value in contents.items()}
                for name, contents in program.memories.items()}
    image = assemble(units, memories, queue_depth=spec.uop_queue_depth, max_window=max_window)
    return Compiled(program, spec, routing, image)


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
