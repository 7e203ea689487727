"""Fabric descriptions: what a user writes (TOML) to say which fabric to build.

A description is checked completely when it is loaded; every error names the file, the field,
the value and what is allowed, before any hardware is generated.
"""

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FabricError", "HostPort", "FabricSpec", "parse_fabric", "load_fabric", "default_fabric",
           "DIRECTIONS", "TILE_KINDS", "DEFAULT_FABRIC"]

DIRECTIONS = ("N", "E", "S", "W")            # switch port index = position in this tuple
TILE_KINDS = ("mem", "mac", "alu")
DEFAULT_FABRIC = Path(__file__).resolve().parents[1] / "examples" / "fabrics" / "default.toml"
_STEP = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}


class FabricError(ValueError):
    """A fabric description is invalid; the message says where and how to fix it."""


@dataclass(frozen=True)
class HostPort:
    name: str
    tile: tuple[int, int]
    side: str
    direction: str          # "in": host to fabric; "out": fabric to host


@dataclass(frozen=True)
class FabricSpec:
    rows: int
    cols: int
    tiles: tuple[tuple[str, ...], ...]
    host_ports: tuple[HostPort, ...] = ()
    data_width: int = 32
    queue_depth: int = 4
    uop_queue_depth: int = 4
    mem_depth: int = 1024
    mac_depth: int = 256
    failed_tiles: frozenset = field(default_factory=frozenset)
    failed_links: frozenset = field(default_factory=frozenset)   # {((row, col), side)}, both ways

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

    def host_port(self, name: str) -> HostPort:
        for port in self.host_ports:
            if port.name == name:
                return port
        known = ", ".join(port.name for port in self.host_ports) or "none"
        raise FabricError(f"no host port named {name!r}; the fabric has: {known}")


def _int(source, data, name, default, low, high):
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FabricError(f"{source}: {name}={value!r} is not allowed; use an integer {low}..{high}")
    return value


def _power_of_two(source, data, name, default, low, high):
    """Memory addresses wrap modulo the depth, which must therefore be a power of two."""
    value = _int(source, data, name, default, low, high)
    if value & (value - 1):
        raise FabricError(f"{source}: {name}={value} is not a power of two; addresses wrap modulo "
                          f"the depth, so use one of {', '.join(str(1 << k) for k in range(4, 13))}")
    return value


def _tile(source, what, value, rows, cols):
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise FabricError(f"{source}: {what} {value!r} is not a [row, col] pair")
    row, col = value
    if not (0 <= row < rows and 0 <= col < cols):
        raise FabricError(f"{source}: {what} [{row}, {col}] is outside the {rows}x{cols} grid")
    return row, col


def parse_fabric(data: dict, source: str = "fabric") -> FabricSpec:
    """Check a decoded description and build its :class:`FabricSpec`."""
    known = {"rows", "cols", "tiles", "host_ports", "data_width", "queue_depth", "uop_queue_depth",
             "mem_depth", "mac_depth", "failed_tiles", "failed_links"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise FabricError(f"{source}: unknown field(s) {unknown}; fields are {sorted(known)}")
    rows = _int(source, data, "rows", None, 1, 16)
    cols = _int(source, data, "cols", None, 1, 16)
    tiles = data.get("tiles")
    if not isinstance(tiles, list) or len(tiles) != rows:
        raise FabricError(f"{source}: tiles must list {rows} rows (one string per row)")
    grid = []
    for row, line in enumerate(tiles):
        kinds = tuple(str(line).split())
        if len(kinds) != cols:
            raise FabricError(f"{source}: tiles row {row} {line!r} has {len(kinds)} kinds, not {cols}")
        for col, kind in enumerate(kinds):
            if kind not in TILE_KINDS:
                raise FabricError(f"{source}: tile [{row}, {col}] has unknown kind {kind!r}; "
                                  f"kinds are {', '.join(TILE_KINDS)}")
        grid.append(kinds)
    failed_tiles = frozenset(_tile(source, "failed tile", value, rows, cols)
                             for value in data.get("failed_tiles", []))
    failed_links = set()
    for value in data.get("failed_links", []):
        if not isinstance(value, list) or len(value) != 3 or value[2] not in DIRECTIONS:
            raise FabricError(f"{source}: failed link {value!r} is not [row, col, side]")
        failed_links.add((_tile(source, "failed link", value[:2], rows, cols), value[2]))
    ports, names, sides = [], set(), set()
    for entry in data.get("host_ports", []):
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
    return FabricSpec(
        rows=rows, cols=cols, tiles=tuple(grid), host_ports=tuple(ports),
        data_width=_int(source, data, "data_width", 32, 8, 64),
        queue_depth=_int(source, data, "queue_depth", 4, 1, 64),
        uop_queue_depth=_int(source, data, "uop_queue_depth", 4, 1, 64),
        mem_depth=_power_of_two(source, data, "mem_depth", 1024, 16, 4096),
        mac_depth=_int(source, data, "mac_depth", 256, 4, 4096),
        failed_tiles=failed_tiles, failed_links=frozenset(failed_links))


def load_fabric(path) -> FabricSpec:
    """Read and check a TOML fabric description."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise FabricError(f"fabric description {path} does not exist") from None
    except tomllib.TOMLDecodeError as error:
        raise FabricError(f"{path}: not valid TOML: {error}") from None
    return parse_fabric(data, str(path))


def default_fabric() -> FabricSpec:
    return load_fabric(DEFAULT_FABRIC)
