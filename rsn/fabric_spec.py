"""Fabric descriptions: what a user writes (TOML) to say which fabric to build.

A description is checked completely when it is loaded; every error names the file, the field,
the value and what is allowed, before any hardware is generated.
"""

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from hw.token_queue import QUEUE_MODES

from .fu_kinds import fu_kind, kind_names
from .isa import MAX_COUNTED_BANKS

__all__ = ["FabricError", "HostPort", "MemorySpec", "FabricSpec", "parse_fabric", "load_fabric",
           "default_fabric", "DIRECTIONS", "DEFAULT_FABRIC", "MAX_MEMORY_WORDS", "MAX_MEMORY_BANKS"]

DIRECTIONS = ("N", "E", "S", "W")            # switch port index = position in this tuple
DEFAULT_FABRIC = Path(__file__).resolve().parents[1] / "examples" / "fabrics" / "default.toml"
_STEP = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}
MAX_MEMORY_WORDS = 1 << 20      # 4 MiB of 32-bit words: more than any FPGA part we target holds
MAX_MEMORY_BANKS = MAX_COUNTED_BANKS  # the control plane has bank counter registers for this many


class FabricError(ValueError):
    """A fabric description is invalid; the message says where and how to fix it."""


@dataclass(frozen=True)
class HostPort:
    name: str
    tile: tuple[int, int]
    side: str
    direction: str          # "in": host to fabric; "out": fabric to host


@dataclass(frozen=True)
class MemorySpec:
    """The ``[memory]`` table: one data memory that every tile of a kind with a memory port
    reaches (:class:`hw.banked_memory.BankedMemory`; docs/shared-memory.md)."""
    words: int                  # a power of two
    banks: int = 4              # a power of two, at most words; word a lies in bank a % banks
    lock_entries: int = 4       # addresses each bank's atomic directory holds at once


@dataclass(frozen=True)
class FabricSpec:
    rows: int
    cols: int
    tiles: tuple[tuple[str, ...], ...]
    host_ports: tuple[HostPort, ...] = ()
    data_width: int = 32
    queue_depth: int = 4
    uop_queue_depth: int = 4
    # How soon a token entering an FU input queue is on offer to the FU (hw.token_queue.QUEUE_MODES):
    # "registered" (1 cycle up to depth 2, 2 from depth 3), "fall_through" (1), "bypass" (0 while
    # the queue is empty, a combinational path from the switch's output register into the FU).
    queue_mode: str = "registered"
    # Which switch outputs are registers (rsn/hops.py): 1, every one (a cycle per hop); K >= 2,
    # the westward and northward ones, those leaving a K x K block and those to host ports, while
    # the others pass a token on in the cycle it arrives.
    register_every: int = 1
    failed_tiles: frozenset = field(default_factory=frozenset)
    failed_links: frozenset = field(default_factory=frozenset)   # {((row, col), side)}, both ways
    # Each FU kind's parameters (its table in the description), for the kinds the grid holds:
    # ((kind name, rsn.fu.KindParameters), ...) sorted by name. A kind absent here has defaults.
    kind_parameters: tuple = ()
    memory: MemorySpec | None = None

    def parameters(self, kind: str):
        """The ``KindParameters`` of ``kind``'s tiles: the description's table, or the defaults."""
        for name, parameters in self.kind_parameters:
            if name == kind:
                return parameters
        return fu_kind(kind).parameters()

    def with_parameters(self, kind: str, **values) -> "FabricSpec":
        """A copy whose ``kind`` tiles take ``values`` (checked as a description's table would be)."""
        parameters = dataclasses.replace(self.parameters(kind), **values)
        _check_kind_parameters(f"[{kind}]", kind, parameters, self)
        others = tuple(entry for entry in self.kind_parameters if entry[0] != kind)
        return dataclasses.replace(self, kind_parameters=tuple(sorted(others + ((kind, parameters),))))

    def kind(self, tile) -> str:
        row, col = tile
        return self.tiles[row][col]

    def all_tiles(self):
        return [(row, col) for row in range(self.rows) for col in range(self.cols)]

    def chain_order(self):
        """The tiles in control-chain order: serpentine, row 0 west to east, row 1 east to west
        and so on, so that every hop of the control and read-back chains joins neighbours."""
        return [(row, col) for row in range(self.rows)
                for col in (range(self.cols) if row % 2 == 0 else reversed(range(self.cols)))]

    def neighbour(self, tile, side: str):
        """The tile across ``side`` of ``tile``, or None at the boundary."""
        row, col = tile[0] + _STEP[side][0], tile[1] + _STEP[side][1]
        return (row, col) if 0 <= row < self.rows and 0 <= col < self.cols else None

    def link_failed(self, tile, side: str) -> bool:
        other = self.neighbour(tile, side)
        opposite = DIRECTIONS[(DIRECTIONS.index(side) + 2) % 4]
        return ((tile, side) in self.failed_links
                or (other is not None and (other, opposite) in self.failed_links))

    def memory_tiles(self):
        """The tiles with a port to the shared memory (their kind asks for one), in chain
        order: tile k of this list owns the memory's port k. Empty without a ``[memory]`` table."""
        if self.memory is None:
            return []
        return [tile for tile in self.chain_order() if fu_kind(self.kind(tile)).memory_port]

    def host_port(self, name: str) -> HostPort:
        for port in self.host_ports:
            if port.name == name:
                return port
        known = ", ".join(port.name for port in self.host_ports) or "none"
        raise FabricError(f"no host port named {name!r}; the fabric has: {known}")


def _int(source, data, name, default, low, high):
    value = data.get(name, default)
    if value is None:
        raise FabricError(f"{source}: {name} is missing; give an integer {low}..{high}, e.g. {name} = {low}")
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FabricError(f"{source}: {name}={value!r} is not allowed; use an integer {low}..{high}")
    return value


def _queue_mode(source, data) -> str:
    value = data.get("queue_mode", "registered")
    if value not in QUEUE_MODES:
        raise FabricError(f"{source}: queue_mode={value!r} is not allowed; use one of "
                          f"{', '.join(repr(mode) for mode in QUEUE_MODES)} (how soon a token entering "
                          f"an FU input queue is on offer to the FU: 'registered' is 1 cycle up to depth 2 "
                          f"and 2 beyond, 'fall_through' 1, 'bypass' 0 while the queue is empty)")
    return value


def _tile(source, what, value, rows, cols):
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise FabricError(f"{source}: {what} {value!r} is not a [row, col] pair")
    row, col = value
    if not (0 <= row < rows and 0 <= col < cols):
        raise FabricError(f"{source}: {what} [{row}, {col}] is outside the {rows}x{cols} grid")
    return row, col


def _list(source, data, name, how) -> list:
    """Field ``name``, an array (empty when absent): anything else is refused, saying ``how`` to
    write it, before it is walked."""
    value = data.get(name, [])
    if not isinstance(value, list):
        raise FabricError(f"{source}: {name} = {value!r} is not an array; {how}")
    return value


def parse_fabric(data: dict, source: str = "fabric") -> FabricSpec:
    """Check a decoded description and build its :class:`FabricSpec`."""
    _refuse_flat_kind_fields(source, data)
    tables = set(kind_names())
    unknown = sorted(set(data) - _FIELDS - tables)
    if unknown:
        raise FabricError(f"{source}: unknown field(s) {unknown}; fields are {sorted(_FIELDS)}, and a "
                          f"table per FU kind ({', '.join(f'[{name}]' for name in sorted(tables))})")
    rows = _int(source, data, "rows", None, 1, 16)
    cols = _int(source, data, "cols", None, 1, 16)
    tiles = data.get("tiles")
    if not isinstance(tiles, list) or len(tiles) != rows:
        raise FabricError(f"{source}: tiles must list {rows} rows (one string per row)")
    grid = []
    for row, line in enumerate(tiles):
        if not isinstance(line, str):
            raise FabricError(f"{source}: tiles row {row} is {line!r}; write each row as one string of kinds "
                              f"separated by spaces, e.g. \"mem mac alu\"")
        kinds = tuple(line.split())
        if len(kinds) != cols:
            raise FabricError(f"{source}: tiles row {row} {line!r} has {len(kinds)} kinds, not {cols}")
        for col, kind in enumerate(kinds):
            if kind not in tables:
                raise FabricError(f"{source}: tile [{row}, {col}] has unknown kind {kind!r}; "
                                  f"kinds are {', '.join(kind_names())}")
        grid.append(kinds)
    failed_tiles = frozenset(_tile(source, "failed tile", value, rows, cols) for value in
                             _list(source, data, "failed_tiles", "write e.g. failed_tiles = [[1, 1]]"))
    failed_links = set()
    for value in _list(source, data, "failed_links", 'write e.g. failed_links = [[0, 0, "E"]]'):
        if not isinstance(value, list) or len(value) != 3 or value[2] not in DIRECTIONS:
            raise FabricError(f"{source}: failed link {value!r} is not [row, col, side]")
        failed_links.add((_tile(source, "failed link", value[:2], rows, cols), value[2]))
    ports, names, sides = [], set(), set()
    host_ports = _list(source, data, "host_ports",
                       "write each host port as a [[host_ports]] table (double brackets)")
    for position, entry in enumerate(host_ports):
        if not isinstance(entry, dict):
            raise FabricError(f"{source}: host_ports[{position}] is {entry!r}; each host port is a "
                              f"[[host_ports]] table with name, tile, side and direction")
        unknown = sorted(set(entry) - _HOST_PORT_FIELDS)
        if unknown:
            raise FabricError(f"{source}: host_ports[{position}] has unknown field(s) {unknown}; a host port "
                              f"takes {', '.join(sorted(_HOST_PORT_FIELDS))}")
        name = entry.get("name")
        if not isinstance(name, str) or not name.isidentifier():
            raise FabricError(f"{source}: host port name {name!r} must be an identifier")
        if name in names:
            raise FabricError(f"{source}: host port name {name!r} is used twice")
        tile = _tile(source, f"host port {name} tile", entry.get("tile"), rows, cols)
        side, direction = entry.get("side"), entry.get("direction")
        if side not in DIRECTIONS:
            raise FabricError(f"{source}: host port {name} side {side!r}; use one of N, E, S, W")
        if direction not in ("in", "out"):
            raise FabricError(f"{source}: host port {name} direction {direction!r}; use in or out")
        spec_probe = FabricSpec(rows, cols, tuple(grid))
        if spec_probe.neighbour(tile, side) is not None:
            raise FabricError(f"{source}: host port {name} on side {side} of tile {list(tile)} "
                              f"faces another tile; host ports sit on the grid's boundary")
        if (tile, side) in sides:
            raise FabricError(f"{source}: two host ports on side {side} of tile {list(tile)}")
        names.add(name)
        sides.add((tile, side))
        ports.append(HostPort(name, tile, side, direction))
    grid_only = FabricSpec(rows, cols, tuple(grid))
    for tile, side in sorted(failed_links):
        if grid_only.neighbour(tile, side) is None and (tile, side) not in sides:
            raise FabricError(f"{source}: failed link {[*tile, side]} leaves the grid, and no host port "
                              f"sits on side {side} of tile {list(tile)}; a failed link joins two tiles, or "
                              f"a tile and its host port: check the side")
    spec = FabricSpec(
        rows=rows, cols=cols, tiles=tuple(grid), host_ports=tuple(ports),
        data_width=_int(source, data, "data_width", 32, 8, 64),
        queue_depth=_int(source, data, "queue_depth", 4, 1, 64),
        uop_queue_depth=_int(source, data, "uop_queue_depth", 4, 1, 64),
        queue_mode=_queue_mode(source, data),
        register_every=_int(source, data, "register_every", 1, 1, 16),
        failed_tiles=failed_tiles, failed_links=frozenset(failed_links))
    spec = dataclasses.replace(spec, memory=_memory(source, data.get("memory"), spec))
    return dataclasses.replace(spec, kind_parameters=_kind_parameters(source, data, spec))


_FIELDS = {"rows", "cols", "tiles", "host_ports", "data_width", "queue_depth", "uop_queue_depth",
           "queue_mode", "register_every", "failed_tiles", "failed_links", "memory"}
_HOST_PORT_FIELDS = {"name", "tile", "side", "direction"}


def _memory(source, table, spec: FabricSpec) -> MemorySpec | None:
    """The ``[memory]`` table, checked: sizes, and at least one tile that can use it."""
    if table is None:
        return None
    where = f"{source}: [memory]"
    if not isinstance(table, dict):
        raise FabricError(f"{where} must be a table (words, banks, lock_entries), not {table!r}")
    names = [field.name for field in dataclasses.fields(MemorySpec)]
    unknown = sorted(set(table) - set(names))
    if unknown:
        raise FabricError(f"{where}: unknown parameter(s) {unknown}; the shared memory takes: "
                          f"{', '.join(names)}")
    if "words" not in table:
        raise FabricError(f"{where}: say how many 32-bit words the shared memory holds, e.g. words = 16384")
    for name, low, high in (("words", 2, MAX_MEMORY_WORDS), ("banks", 1, MAX_MEMORY_BANKS)):
        value = table.get(name, 4)
        if (isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high
                or value & (value - 1)):
            raise FabricError(f"{where}: {name}={value!r} is not allowed; use a power of two from {low} "
                              f"to {high}")
    memory = MemorySpec(**table)
    if memory.banks > memory.words:
        raise FabricError(f"{where}: banks={memory.banks} is more than words={memory.words}; every bank "
                          f"holds at least one word, so use banks <= words")
    entries = memory.lock_entries
    if isinstance(entries, bool) or not isinstance(entries, int) or not 0 <= entries <= 16:
        raise FabricError(f"{where}: lock_entries={entries!r} is not allowed; use an integer 0..16 "
                          f"(addresses each bank's atomic directory holds at once; 0: no atomics)")
    users = sorted({kind for row in spec.tiles for kind in row if fu_kind(kind).memory_port})
    if not users:
        able = sorted(name for name in kind_names() if fu_kind(name).memory_port)
        raise FabricError(f"{where}: no tile of this fabric can use the shared memory; tiles of kind "
                          f"{', '.join(able) or '(none registered)'} have a memory port, so add some or "
                          f"drop the table")
    return memory


def _refuse_flat_kind_fields(source, data):
    """A kind's parameter written the old, flat way (``pe_mem_depth = 64``) is refused with the
    table that replaced it (``[pe]`` with ``mem_depth = 64``)."""
    for key, value in data.items():
        if key in _FIELDS or isinstance(value, dict):
            continue
        for kind in kind_names():
            names = {field.name for field in dataclasses.fields(fu_kind(kind).parameters)}
            rest = key.removeprefix(f"{kind}_")
            if rest != key and rest in names:
                raise FabricError(f"{source}: {key} = {value!r} is the old spelling; kind parameters "
                                  f"now live in a table per kind, so write\n  [{kind}]\n  {rest} = "
                                  f"{_toml(value)}\n(tables come after every top-level field)")


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _kind_parameters(source, data, spec: FabricSpec) -> tuple:
    """Each kind's table, checked; kept for the kinds the grid holds (a table for a kind the grid
    does not hold is still checked, so a typo in it is found)."""
    present = {kind for row in spec.tiles for kind in row}
    entries = []
    for kind in sorted(set(kind_names()) & (present | set(data))):
        table = data.get(kind, {})
        where = f"{source}: [{kind}]"
        if not isinstance(table, dict):
            raise FabricError(f"{where} must be a table of {kind} parameters, not {table!r}")
        parameter_class = fu_kind(kind).parameters
        names = [field.name for field in dataclasses.fields(parameter_class)]
        unknown = sorted(set(table) - set(names))
        if unknown:
            allowed = ", ".join(names) if names else "none"
            raise FabricError(f"{where}: unknown parameter(s) {unknown}; {kind} tiles take: {allowed}")
        parameters = parameter_class(**table)
        _check_kind_parameters(where, kind, parameters, spec)
        if kind in present:
            entries.append((kind, parameters))
    return tuple(entries)


def _check_kind_parameters(where: str, kind: str, parameters, spec: FabricSpec):
    """``check``, then ``check_fabric`` when ``spec`` has tiles of the kind."""
    try:
        parameters.check()
        if any(kind in row for row in spec.tiles):
            parameters.check_fabric(spec)
    except ValueError as error:
        raise FabricError(f"{where}: {error}") from None


def load_fabric(path) -> FabricSpec:
    """Read and check a TOML fabric description."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise FabricError(f"fabric description {path} does not exist") from None
    except OSError as error:        # a directory, or a file we may not read
        raise FabricError(f"fabric description {path} cannot be read ({error.strerror}); give a .toml "
                          f"file") from None
    except UnicodeDecodeError as error:
        raise FabricError(f"{path}: not a text file (byte {error.start} is not UTF-8); a fabric description "
                          f"is a TOML file") from None
    except tomllib.TOMLDecodeError as error:
        raise FabricError(f"{path}: not valid TOML: {error}") from None
    return parse_fabric(data, str(path))


def default_fabric() -> FabricSpec:
    return load_fabric(DEFAULT_FABRIC)
