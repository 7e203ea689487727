"""The sweep file: a fabric family, the axes it varies, the programs and the jobs per point.

Everything is checked when the file is read, and every fabric of every point is built and checked
as a fabric description, so a bad value stops the sweep, naming the point and the field, before
any job runs.

    name = "family"                     # optional: the file's stem
    seed = 1                            # placement and stall patterns
    [fabric]                            # what every point shares: any fabric-description field,
    tiles = "mem mac alu"               # and tiles as one pattern repeated in reading order
    [fabric.mem]
    depth = 1024
    [axes]                              # each a list, or a range {from = 2, to = 8, step = 2}
    grid = ["2x2", "3x3"]               # ROWSxCOLS; or rows and cols, or any field, or "mem.depth"
    queue_depth = {from = 2, to = 8, step = 2}
    [[programs]]
    path = "examples/mlp.py"            # relative to the sweep file; any front-end's input
    define = {batch = 2}                # -D NAME=VALUE of rivulet run
    fabric = {tiles = "pe"}             # this program's own family fields (optional)
    [[jobs]]
    kind = "model"                      # generate, model, rtl, synth, pnr
    where = {grid = ["2x2"]}            # only at these axis values (optional)
"""

import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rsn.fabric_spec import FabricError, parse_fabric

__all__ = ["SweepError", "SweepSpec", "Program", "JobSpec", "Point", "load_sweep", "parse_sweep",
           "JOB_KINDS", "PROGRAM_JOBS", "FABRIC_JOBS", "fabric_description", "toml_text"]

# Jobs of a fabric alone, and jobs that run a program on it.
FABRIC_JOBS = ("generate", "synth", "pnr")
PROGRAM_JOBS = ("model", "rtl")
JOB_KINDS = ("generate", "model", "rtl", "synth", "pnr")
_JOB_FIELDS = {"kind", "where", "programs", "board", "profile", "timeout_s"}
_TOP_FIELDS = {"name", "seed", "fabric", "axes", "programs", "jobs"}
_PROGRAM_FIELDS = {"path", "name", "define", "fabric", "vectors"}
MAX_POINTS = 10_000


class SweepError(ValueError):
    """A sweep file is invalid; the message names the file, the field and the fix."""


@dataclass(frozen=True)
class Program:
    name: str
    path: Path
    definitions: tuple[str, ...] = ()       # NAME=VALUE, as rivulet run's -D
    fabric: dict = field(default_factory=dict)
    vectors: Path | None = None


@dataclass(frozen=True)
class JobSpec:
    kind: str
    where: dict = field(default_factory=dict)   # axis -> allowed values
    board: str = "ulx3s-85f"                    # the part of synth and pnr
    profile: str = "random_stall_50"            # the RTL run's host stall profile
    timeout_s: float = 3600.0
    programs: tuple[str, ...] = ()              # only for these programs (their names); () = all

    def applies(self, values: dict) -> bool:
        return all(values[axis] in allowed for axis, allowed in self.where.items())

    def for_program(self, name: str) -> bool:
        return not self.programs or name in self.programs


@dataclass(frozen=True)
class Point:
    """One combination of axis values, in axis order."""
    values: dict

    @property
    def label(self) -> str:
        return " ".join(f"{axis}={value}" for axis, value in self.values.items())


@dataclass
class SweepSpec:
    name: str
    path: Path
    seed: int
    family: dict
    axes: dict                  # axis -> list of values, in file order
    programs: list[Program]
    jobs: list[JobSpec]

    def points(self) -> list[Point]:
        return [Point(dict(zip(self.axes, values, strict=True)))
                for values in itertools.product(*self.axes.values())]

    def fabric(self, point: Point, program: Program | None = None) -> dict:
        """The fabric description (decoded TOML) at ``point``, with ``program``'s own fields."""
        merged = _merge(self.family, program.fabric if program else {})
        for axis, value in point.values.items():
            if axis == "grid":
                merged["rows"], merged["cols"] = _grid(value, self.path)
            elif "." in axis:
                table, name = axis.split(".", 1)
                merged[table] = {**merged.get(table, {}), name: value}
            else:
                merged[axis] = value
        return fabric_description(merged)


def _merge(base: dict, extra: dict) -> dict:
    merged = {key: dict(value) if isinstance(value, dict) else value for key, value in base.items()}
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def fabric_description(data: dict) -> dict:
    """A whole fabric description from a family's fields: ``tiles`` given as one pattern string is
    repeated over the grid in reading order, and host ports default to the four corners (inputs
    on the west side, outputs on the east), as in examples/fabrics/default.toml."""
    data = dict(data)
    rows, cols = data.get("rows"), data.get("cols")
    if not (isinstance(rows, int) and isinstance(cols, int)) or rows < 1 or cols < 1:
        return data     # parse_fabric names what is missing
    tiles = data.get("tiles", "mem mac alu")
    if isinstance(tiles, str):
        pattern = tiles.split()
        cells = [pattern[k % len(pattern)] for k in range(rows * cols)] if pattern else []
        data["tiles"] = [" ".join(cells[row * cols:(row + 1) * cols]) for row in range(rows)]
    if "host_ports" not in data:
        last_row, last_col = rows - 1, cols - 1
        ports = [("in0", [0, 0], "W", "in"), ("in1", [last_row, 0], "W", "in"),
                 ("out0", [0, last_col], "E", "out"), ("out1", [last_row, last_col], "E", "out")]
        if rows == 1:       # one row: the second port of each direction faces north and south
            ports[1], ports[3] = ("in1", [0, 0], "N", "in"), ("out1", [0, last_col], "S", "out")
        data["host_ports"] = [{"name": name, "tile": tile, "side": side, "direction": direction}
                              for name, tile, side, direction in ports]
    return data


def _grid(value, source) -> tuple[int, int]:
    try:
        rows, cols = (int(part) for part in str(value).lower().split("x"))
    except ValueError:
        raise SweepError(f"{source}: [axes] grid value {value!r} is not ROWSxCOLS, e.g. \"3x3\"") from None
    return rows, cols


def toml_text(data: dict) -> str:
    """A fabric description as TOML (the subset descriptions use: scalars, lists, tables,
    arrays of tables), so each job's directory holds the exact file its run read."""
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            continue
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    for key, table in tables:
        lines += ["", f"[{key}]"] + [f"{name} = {_toml_value(value)}" for name, value in table.items()]
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            for item in value:
                lines += ["", f"[[{key}]]"]
                lines += [f"{name} = {_toml_value(entry)}" for name, entry in item.items()]
    return "\n".join(lines) + "\n"


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise SweepError(f"cannot write {value!r} into a fabric description")


def load_sweep(path) -> SweepSpec:
    """Read and check the sweep file ``path`` (see the module docstring)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SweepError(f"sweep file {path} does not exist") from None
    except OSError as error:        # a directory, or a file we may not read
        raise SweepError(f"sweep file {path} cannot be read ({error.strerror}); give a .toml file") from None
    except UnicodeDecodeError as error:
        raise SweepError(f"{path}: not a text file (byte {error.start} is not UTF-8); a sweep file is a TOML "
                         f"file") from None
    except tomllib.TOMLDecodeError as error:
        raise SweepError(f"{path}: not valid TOML: {error}") from None
    return parse_sweep(data, path)


def parse_sweep(data: dict, path: Path) -> SweepSpec:
    unknown = sorted(set(data) - _TOP_FIELDS)
    if unknown:
        raise SweepError(f"{path}: unknown field(s) {unknown}; a sweep file has {sorted(_TOP_FIELDS)}")
    seed = data.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SweepError(f"{path}: seed={seed!r} is not an integer")
    family = data.get("fabric", {})
    if not isinstance(family, dict):
        raise SweepError(f"{path}: [fabric] must be a table of fabric-description fields")
    if not isinstance(data.get("axes", {}), dict):
        raise SweepError(f"{path}: axes must be an [axes] table, e.g. [axes] grid = [\"2x2\", \"3x3\"]")
    axes = {axis: _axis_values(axis, values, path) for axis, values in data.get("axes", {}).items()}
    if "grid" in axes and ({"rows", "cols"} & set(axes)):
        raise SweepError(f"{path}: [axes] has grid and rows/cols; give the grid one way")
    for name in ("programs", "jobs"):
        if not isinstance(data.get(name, []), list):
            raise SweepError(f"{path}: {name} = {data[name]!r}; write each entry as a [[{name}]] table "
                             f"(double brackets)")
    programs = [_program(entry, k, path) for k, entry in enumerate(data.get("programs", []))]
    jobs = [_job(entry, k, path, axes, [program.name for program in programs])
            for k, entry in enumerate(data.get("jobs", []))]
    if not jobs:
        raise SweepError(f"{path}: no [[jobs]]; add e.g. [[jobs]] kind = \"model\" "
                         f"(kinds: {', '.join(JOB_KINDS)})")
    if any(job.kind in PROGRAM_JOBS for job in jobs) and not programs:
        raise SweepError(f"{path}: model and rtl jobs run programs, and there is no [[programs]] entry")
    names = [program.name for program in programs]
    if len(set(names)) != len(names):
        raise SweepError(f"{path}: two programs are named alike ({names}); give each a name = \"...\"")
    spec = SweepSpec(str(data.get("name", path.stem)), path, seed, family, axes, programs, jobs)
    count = 1
    for values in axes.values():
        count *= len(values)
    if count > MAX_POINTS:
        raise SweepError(f"{path}: the axes make {count} points, more than {MAX_POINTS}; split the sweep")
    for point in spec.points():
        for program in programs or [None]:
            where = f"{path}, point {point.label}" + (f", program {program.name}" if program else "")
            try:
                parse_fabric(spec.fabric(point, program), where)
            except FabricError as error:
                raise SweepError(str(error)) from None
    return spec


def _axis_values(axis: str, values, path: Path) -> list:
    if isinstance(values, dict):
        if set(values) - {"from", "to", "step"} or not {"from", "to"} <= set(values):
            raise SweepError(f"{path}: [axes] {axis} = {values!r}: a range is {{from = A, to = B, step = S}} "
                             f"(to included, step 1 by default)")
        start, stop, step = values["from"], values["to"], values.get("step", 1)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, stop, step)) or step < 1:
            raise SweepError(f"{path}: [axes] {axis}: from, to and step must be integers, step >= 1")
        values = list(range(start, stop + 1, step))
    if not isinstance(values, list) or not values:
        raise SweepError(f"{path}: [axes] {axis} must be a non-empty list or a range table")
    if len(set(map(repr, values))) != len(values):
        raise SweepError(f"{path}: [axes] {axis} lists a value twice: {values}")
    if axis == "grid":
        for value in values:
            _grid(value, path)
    return values


def _program(entry, index: int, path: Path) -> Program:
    where = f"{path}: [[programs]] entry {index + 1}"
    if not isinstance(entry, dict) or "path" not in entry:
        raise SweepError(f"{where} needs path = \"PROGRAM\" (a program file or graph JSON)")
    unknown = sorted(set(entry) - _PROGRAM_FIELDS)
    if unknown:
        raise SweepError(f"{where}: unknown field(s) {unknown}; fields are {sorted(_PROGRAM_FIELDS)}")
    file = (path.parent / entry["path"]).resolve()
    if not file.is_file():
        raise SweepError(f"{where}: program {entry['path']} does not exist (paths are relative to the "
                         f"sweep file)")
    vectors = None
    if "vectors" in entry:
        vectors = (path.parent / entry["vectors"]).resolve()
        if not vectors.is_file():
            raise SweepError(f"{where}: vectors {entry['vectors']} does not exist")
    define = entry.get("define", {})
    if not isinstance(define, dict):
        raise SweepError(f"{where}: define must be a table, e.g. define = {{batch = 4}}")
    fabric = entry.get("fabric", {})
    if not isinstance(fabric, dict):
        raise SweepError(f"{where}: fabric must be a table of fabric-description fields")
    return Program(str(entry.get("name", file.stem)), file,
                   tuple(f"{name}={value}" for name, value in define.items()), fabric, vectors)


def _job(entry, index: int, path: Path, axes: dict, programs: list[str]) -> JobSpec:
    where = f"{path}: [[jobs]] entry {index + 1}"
    if not isinstance(entry, dict) or entry.get("kind") not in JOB_KINDS:
        raise SweepError(f"{where}: kind must be one of {', '.join(JOB_KINDS)}")
    unknown = sorted(set(entry) - _JOB_FIELDS)
    if unknown:
        raise SweepError(f"{where}: unknown field(s) {unknown}; fields are {sorted(_JOB_FIELDS)}")
    if not isinstance(entry.get("where", {}), dict):
        raise SweepError(f"{where}: where = {entry['where']!r}; give a table of axis values, e.g. "
                         f"where = {{queue_depth = 4}}")
    timeout = entry.get("timeout_s", 1)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise SweepError(f"{where}: timeout_s = {timeout!r}; give the seconds a job may take, a number > 0")
    where_values = {}
    for axis, allowed in entry.get("where", {}).items():
        if axis not in axes:
            raise SweepError(f"{where}: where names {axis!r}, which is not an axis "
                             f"({', '.join(axes) or 'none'})")
        allowed = allowed if isinstance(allowed, list) else [allowed]
        missing = [value for value in allowed if value not in axes[axis]]
        if missing:
            raise SweepError(f"{where}: where {axis} = {missing} is not among the axis values {axes[axis]}")
        where_values[axis] = allowed
    options = {name: entry[name] for name in ("board", "profile", "timeout_s") if name in entry}
    if "programs" in entry:
        names = entry["programs"] if isinstance(entry["programs"], list) else [entry["programs"]]
        unknown = [name for name in names if name not in programs]
        if unknown or not names:
            raise SweepError(f"{where}: programs = {unknown or names} names no program of the sweep "
                             f"({', '.join(programs)})")
        options["programs"] = tuple(names)
    job = JobSpec(entry["kind"], where_values, **options)
    if job.kind in ("synth", "pnr"):
        from board.boards import BOARDS
        if job.board not in BOARDS:
            raise SweepError(f"{where}: board {job.board!r} is not known; boards: {', '.join(BOARDS)}")
    if job.kind == "rtl":
        from rivulet.sim.streams import PROFILES
        if job.profile not in PROFILES:
            raise SweepError(f"{where}: profile {job.profile!r} is not a stall profile; one of: "
                             f"{', '.join(PROFILES)}")
    return job
