"""Reading SAM's conformance vector files, and refusing bad ones before anything runs.

A file holds the cases of one primitive (the format is described in the suite's README). Every
error names the file, the case, the port and the token, and says what is wrong.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from .tokens import TokenError, check_token, is_data, is_stop, stop_level

__all__ = ["SuiteError", "Case", "VectorFile", "load_file", "load_directory", "SAM_PRIMITIVES",
           "REPSIG_PORTS", "COORDINATE_PORTS", "parse_vectors"]

# Every primitive the suite's format names; anything else is a typo or another suite.
SAM_PRIMITIVES = frozenset("""
    rd_scan_uncompressed rd_scan_compressed rd_scan_bv wr_scan_vals wr_scan_compressed repeat
    repeat_sig_gen intersect union intersect_bv add multiply reduce crd_drop crd_hold
    crdpt_converter stkn_drop empty_stkn_drop split flatten spacc1 spacc2 spcrdpt_accum1
    spcrdpt_accum2 bv bv_chunk bv_drop array memory_block""".split())

REPSIG_PORTS = {"in_repsig", "repsig"}
# The sparse accumulators, whose values SAM keeps as Python floats.
FLOAT_PRIMITIVES = {"spacc1", "spacc2", "spcrdpt_accum1", "spcrdpt_accum2"}
# Inputs whose coordinates must rise strictly within a fiber.
COORDINATE_PORTS = {
    "intersect": ("in_crd1", "in_crd2"), "union": ("in_crd1", "in_crd2"),
    "wr_scan_compressed": ("in_crd",), "crd_drop": ("in_outer_crd", "in_inner_crd"),
}
# Hint streams carry no 'D' and follow no nesting.
_UNTERMINATED_PORTS = {"in_crd_skip", "crd_skip1", "crd_skip2"}


class SuiteError(ValueError):
    """A vector file that cannot be run as it is."""


@dataclass
class Case:
    name: str
    params: dict
    memory: dict
    setup: list
    inputs: dict
    outputs: dict
    memory_out: dict
    schedule_dependent: bool
    schedule: list | None
    file: str

    def where(self, port: str | None = None, index: int | None = None) -> str:
        text = f"{self.file}: case {self.name!r}"
        if port is not None:
            text += f", port {port}"
        if index is not None:
            token = self.inputs.get(port, self.outputs.get(port, []))
            text += f", token {index}" + (f" {token[index]!r}" if index < len(token) else "")
        return text


@dataclass
class VectorFile:
    path: Path
    primitive: str
    input_ports: list
    output_ports: list
    defaults: dict
    cases: list = field(default_factory=list)


def _check_stream(case: Case, port: str, tokens: list, floats_allowed: bool):
    repsig = port in REPSIG_PORTS
    if not isinstance(tokens, list):
        raise SuiteError(f"{case.where(port)}: the stream must be a JSON list of tokens")
    for index, token in enumerate(tokens):
        if floats_allowed and isinstance(token, float):
            continue
        try:
            check_token(token, repsig=repsig)
        except TokenError as error:
            raise SuiteError(f"{case.where(port, index)}: {error}") from None
    if not tokens or port in _UNTERMINATED_PORTS:
        return
    if tokens[-1] != "D" or "D" in tokens[:-1]:
        at = tokens.index("D") if "D" in tokens[:-1] else len(tokens) - 1
        raise SuiteError(f"{case.where(port, at)}: a stream ends with exactly one 'D', as its last token")
    if repsig:
        return
    stops = [(index, stop_level(t)) for index, t in enumerate(tokens) if is_stop(t)]
    if not stops:
        return
    closing = len(tokens) - 2
    if not is_stop(tokens[closing]):
        raise SuiteError(f"{case.where(port, closing)}: the token before 'D' must be the stop that "
                         "closes the outermost fiber")
    top = stop_level(tokens[closing])
    for index, level in stops:
        if level > top:
            raise SuiteError(f"{case.where(port, index)}: stop levels do not nest: S{level} closes more "
                             f"fibers than the stream's outermost stop S{top} (token {closing})")


def _check_sorted(case: Case, port: str, tokens: list):
    previous = None
    for index, token in enumerate(tokens):
        if is_data(token):
            if previous is not None and token <= previous:
                raise SuiteError(f"{case.where(port, index)}: coordinates are not sorted within the "
                                 f"fiber ({previous} before {token}); a fiber's coordinates rise strictly")
            previous = token
        elif token != "N":
            previous = None


def _check_compressed_memory(case: Case):
    memory = case.memory
    for name in ("seg_arr", "crd_arr"):
        if not isinstance(memory.get(name), list) or not all(is_data(v) for v in memory[name]):
            raise SuiteError(f"{case.where()}: memory.{name} must be a list of integers")
    seg, crd = memory["seg_arr"], memory["crd_arr"]
    for k in range(len(seg) - 1):
        if not 0 <= seg[k] <= seg[k + 1] <= len(crd):
            raise SuiteError(f"{case.where()}: memory.seg_arr[{k}..{k + 1}] = {seg[k]}, {seg[k + 1]} is not "
                             f"a rising range inside crd_arr (length {len(crd)})")
        fiber = crd[seg[k]:seg[k + 1]]
        for j in range(1, len(fiber)):
            if fiber[j] <= fiber[j - 1]:
                raise SuiteError(f"{case.where()}: memory.crd_arr[{seg[k] + j}] = {fiber[j]}: coordinates "
                                 f"are not sorted within fiber {k}")


def _object(where: str, container: dict, key: str) -> dict:
    """``container[key]`` (empty when absent), refused unless it is a JSON object."""
    value = container.get(key, {})
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: '{key}' is {value!r}; it must be a JSON object")
    return value


def _case(path: Path, entry, number: int, vectors: VectorFile, checked: bool) -> Case:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise SuiteError(f"{path.name}: case {number} has no name; every case is an object with 'name'")
    missing = [key for key in ("params", "inputs", "outputs", "schedule_dependent") if key not in entry]
    if missing:
        raise SuiteError(f"{path.name}: case {entry['name']!r} lacks {', '.join(missing)}")
    for key in ("params", "inputs", "outputs", "memory", "memory_out"):
        _object(f"{path.name}: case {entry['name']!r}", entry, key)
    case = Case(entry["name"], {**vectors.defaults, **entry["params"]}, entry.get("memory", {}),
                entry.get("setup", []), entry["inputs"], entry["outputs"], entry.get("memory_out", {}),
                bool(entry["schedule_dependent"]), entry.get("schedule"), path.name)
    for port in vectors.input_ports:
        if port not in case.inputs:
            raise SuiteError(f"{case.where(port)}: the input port is missing from 'inputs'")
    for port in case.inputs:
        if port not in vectors.input_ports:
            raise SuiteError(f"{case.where(port)}: no such input port; {vectors.primitive} has "
                             f"{', '.join(vectors.input_ports)}")
    if case.schedule_dependent and not isinstance(case.schedule, list):
        raise SuiteError(f"{case.where()}: a schedule-dependent case must hold its 'schedule'")
    if not checked:
        return case
    floats = vectors.primitive in FLOAT_PRIMITIVES
    for port, tokens in case.inputs.items():
        _check_stream(case, port, tokens, floats)
    for port in COORDINATE_PORTS.get(vectors.primitive, ()):
        _check_sorted(case, port, case.inputs[port])
    if vectors.primitive == "rd_scan_compressed":
        _check_compressed_memory(case)
    if vectors.primitive == "rd_scan_bv":
        words = case.memory.get("bv_arr")
        if not isinstance(words, list) or not all(is_data(w) and w >= 0 for w in words):
            raise SuiteError(f"{case.where()}: memory.bv_arr must be a list of non-negative integers")
    return case


def load_file(path: Path, checked_primitives=()) -> VectorFile:
    """Read one vector file; cases of ``checked_primitives`` have every token checked too."""
    try:
        content = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise SuiteError(f"{path}: cannot read it: {error}") from None
    except json.JSONDecodeError as error:
        raise SuiteError(f"{path}: not JSON ({error})") from None
    return parse_vectors(content, Path(path), checked_primitives)


def parse_vectors(content, path: Path, checked_primitives=()) -> VectorFile:
    """A vector file's content (the parsed JSON) as a :class:`VectorFile`; ``path`` names it."""
    if (not isinstance(content, dict) or "primitive" not in content
            or not isinstance(content.get("cases"), list)):
        raise SuiteError(f"{path.name}: not a vector file; it needs 'primitive', 'ports' and 'cases'")
    primitive = content["primitive"]
    if primitive not in SAM_PRIMITIVES:
        name = content["cases"][0].get("name", "?") if content["cases"] else "(no cases)"
        raise SuiteError(f"{path.name}: unknown primitive {primitive!r} (first case {name!r}); SAM's are "
                         + ", ".join(sorted(SAM_PRIMITIVES)))
    ports = _object(path.name, content, "ports")
    for side in ("inputs", "outputs"):
        names = ports.get(side, [])
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise SuiteError(f"{path.name}: ports.{side} is {names!r}; give the port names as a list of "
                             f"strings")
    vectors = VectorFile(Path(path), primitive, list(ports.get("inputs", [])), list(ports.get("outputs", [])),
                         _object(path.name, content, "constructor_defaults"))
    vectors.cases = [_case(Path(path), entry, number, vectors, primitive in checked_primitives)
                     for number, entry in enumerate(content["cases"])]
    return vectors


def load_directory(directory: Path, checked_primitives=()) -> list[VectorFile]:
    """Every ``*.json`` vector file of ``directory``, in name order; all checked before any runs."""
    directory = Path(directory)
    if not directory.is_dir():
        raise SuiteError(f"{directory}: not a directory of vector files")
    files = sorted(directory.glob("*.json"))
    if not files:
        raise SuiteError(f"{directory}: holds no *.json vector files")
    return [load_file(path, checked_primitives) for path in files]
