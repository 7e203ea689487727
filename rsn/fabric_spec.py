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
TILE_KINDS += ("xbar",)
TILE_KINDS += ("pe",)
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
    pe_mem_depth: int = 0                   # words in every pe tile's memory bank (0: no bank)
    pe_ripple_ops: bool = True              # pe tiles run Ripple's operators (queue, arb, task, atomics)
    failed_tiles: frozenset = field(default_factory=frozenset)
    failed_links: frozenset = field(default_factory=frozenset)   # {((row, col), side)}, both ways
    # xbar tiles (rsn/fu_xbar.py): crossbar size and neuron arithmetic, the same for every one.
    xbar_axons: int = 16
    xbar_neurons: int = 16
    xbar_banks: int = 4
    xbar_preset: str = "tinyodin"
    xbar_weight_width: int | None = None    # None: the preset's
    xbar_threshold: int | None = None       # None: the preset's (tinyODIN membrane units, Loihi vth)
    xbar_leak: int = 0                      # tinyODIN leak_amount or Loihi dv

    @property
    def xbar_params(self):
        """The ``LifParams`` of this fabric's xbar tiles."""
        from .fu_xbar import xbar_params
        return xbar_params(self.xbar_preset, self.xbar_weight_width, self.xbar_threshold, self.xbar_leak)

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
             "mem_depth", "mac_depth", "pe_mem_depth", "pe_ripple_ops", "failed_tiles",
             "failed_links"} | set(_XBAR_FIELDS)
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
    spec = FabricSpec(
        rows=rows, cols=cols, tiles=tuple(grid), host_ports=tuple(ports),
        data_width=_int(source, data, "data_width", 32, 8, 64),
        queue_depth=_int(source, data, "queue_depth", 4, 1, 64),
        uop_queue_depth=_int(source, data, "uop_queue_depth", 4, 1, 64),
        mem_depth=_power_of_two(source, data, "mem_depth", 1024, 16, 4096),
        mac_depth=_int(source, data, "mac_depth", 256, 4, 4096),
        pe_mem_depth=_pe_mem_depth(source, data),
        pe_ripple_ops=_pe_ripple_ops(source, data),
        failed_tiles=failed_tiles, failed_links=frozenset(failed_links))
    _check_pe_width(source, spec)
    return _xbar_fields(source, data, spec)


def _check_pe_width(source, spec: FabricSpec):
    """A pe tile computes on 32-bit two's complement words (RipTide's arithmetic wraps at 32
    bits), so its streams must be exactly 32 bits wide: narrower ones would truncate values and
    wider ones would carry bits the PE ignores."""
    from .fu_pe import WIDTH
    if any("pe" in row for row in spec.tiles) and spec.data_width != WIDTH:
        raise FabricError(f"{source}: data_width={spec.data_width} is not allowed with pe tiles; a pe "
                          f"tile computes on {WIDTH}-bit values, so set data_width = {WIDTH}")


def _pe_ripple_ops(source, data) -> bool:
    """Whether pe tiles build Ripple's operators (rsn/fu_pe.py): true by default; false saves
    about 900 LUTs per pe tile with a bank, for fabrics that run plain ordered dataflow."""
    value = data.get("pe_ripple_ops", True)
    if not isinstance(value, bool):
        raise FabricError(f"{source}: pe_ripple_ops={value!r} is not allowed; use true (pe tiles run "
                          f"Ripple's queue, arb, task and atomics) or false")
    return value


def _pe_mem_depth(source, data) -> int:
    """Words in every pe tile's private memory bank (rsn/fu_pe.py), for LOAD and STORE: 0 (no
    bank) or a power of two from 2 to 2048. A power of two because the PE's config window aliases
    the bank by its low address bits; at most 2048 because the host preloads an array through the
    window in one set of register writes, and a larger bank would need the page register switched
    in between."""
    value = data.get("pe_mem_depth", 0)
    if (isinstance(value, bool) or not isinstance(value, int) or value < 0 or value == 1
            or value > 2048 or value & (value - 1)):
        raise FabricError(f"{source}: pe_mem_depth={value!r} is not allowed; use 0 (pe tiles without a "
                          f"memory bank) or a power of two from 2 to 2048 (words per pe tile's bank)")
    return value


_XBAR_FIELDS = ("xbar_axons", "xbar_neurons", "xbar_banks", "xbar_preset", "xbar_weight_width",
                "xbar_threshold", "xbar_leak")


def _xbar_fields(source, data, spec: FabricSpec) -> FabricSpec:
    """The xbar fields, checked: sizes, the preset's arithmetic, AER ids within ``data_width``."""
    from dataclasses import replace

    from .fu_xbar import PRESETS, XbarAddressMap, aer_width, xbar_params
    preset = data.get("xbar_preset", "tinyodin")
    if preset not in PRESETS:
        raise FabricError(f"{source}: xbar_preset={preset!r} is not allowed; use one of {', '.join(PRESETS)}")
    axons = _int(source, data, "xbar_axons", 16, 1, 4096)
    neurons = _int(source, data, "xbar_neurons", 16, 1, 4096)
    banks = _int(source, data, "xbar_banks", 4, 1, neurons)
    if neurons % banks:
        raise FabricError(f"{source}: xbar_banks={banks} does not divide xbar_neurons={neurons}; "
                          f"choose a divisor of {neurons}")
    weight_width = data.get("xbar_weight_width")
    if weight_width is not None:
        weight_width = _int(source, data, "xbar_weight_width", None, 2, 32)
    threshold = data.get("xbar_threshold")
    if threshold is not None:
        threshold = _int(source, data, "xbar_threshold", None, 0, (1 << 17) - 1)
    leak = _int(source, data, "xbar_leak", 0, 0, 4095)
    try:
        params = xbar_params(preset, weight_width, threshold, leak)
        XbarAddressMap(params, axons, neurons, banks)
    except ValueError as error:
        raise FabricError(f"{source}: {error}") from None
    if any("xbar" in row for row in spec.tiles) and spec.data_width < aer_width(max(axons, neurons)):
        raise FabricError(f"{source}: data_width={spec.data_width} cannot carry an xbar address event "
                          f"(kind bit + id of {max(axons, neurons)} axons/neurons = "
                          f"{aer_width(max(axons, neurons))} bits); raise data_width or shrink the crossbar")
    return replace(spec, xbar_axons=axons, xbar_neurons=neurons, xbar_banks=banks, xbar_preset=preset,
                   xbar_weight_width=weight_width, xbar_threshold=threshold, xbar_leak=leak)


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
