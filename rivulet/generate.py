"""Write a catalog component's Verilog (and optionally its port list), atomically (:mod:`.files`).

Used by ``rivulet generate`` and by the demo, so both produce exactly the same files.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import verilog

from hw.catalog import build
from hw.params import ParameterError
from rsn.fu_kinds import component_catalog

from .files import write_all_atomically, write_atomically

__all__ = ["Generated", "generate", "write_atomically"]

# A plain Verilog identifier: any other name has to be escaped in Verilog (one with a space breaks
# the writer), and the module name is also the file name of `generate fabric`.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


@dataclass(frozen=True)
class Generated:
    path: Path
    module: str
    lines: int


def generate(name: str, values: dict, output: Path, *, top: str | None = None,
             metadata: Path | None = None, keep_src: bool = False) -> Generated:
    """Validate ``values``, build component ``name`` and write its Verilog to ``output``.

    The module is named ``rivulet_<name>`` unless ``top`` says otherwise: the prefix keeps names
    such as ``fork`` and ``join`` clear of Verilog keywords. ``keep_src`` keeps the
    ``(* src *)`` attributes, which map cells back to Python lines but embed file paths.
    """
    module = _module_name(top, f"rivulet_{name}")
    if metadata is not None and Path(metadata).resolve() == Path(output).resolve():
        raise ParameterError(f"--metadata {metadata} is the Verilog file -o names too; give the port list "
                             f"its own file (e.g. --metadata {Path(output).with_suffix('.json')})")
    component = build(name, component_catalog(), **values)
    text = verilog.convert(component, name=module, emit_src=keep_src,
                           strip_internal_attrs=not keep_src)
    files = {Path(output): text}
    if metadata is not None:
        files[Path(metadata)] = json.dumps(component.metadata.as_json(), indent=2) + "\n"
    write_all_atomically(files)         # both or neither: a bad --metadata path leaves no .v behind
    return Generated(Path(output), module, len(text.splitlines()))


def generate_fabric(description, directory, *, top: str | None = None,
                    keep_src: bool = False) -> list[Path]:
    """Check a fabric description, then write its Verilog and JSON description into ``directory``."""
    from rsn.describe import describe
    from rsn.fabric import Fabric
    from rsn.fabric_spec import load_fabric
    from rsn.unit_instances import convert_sharing_units

    module = _module_name(top, "rivulet_fabric")
    spec = load_fabric(description)
    fabric = Fabric(spec)
    text = convert_sharing_units(fabric, name=module, emit_src=keep_src, strip_internal_attrs=not keep_src)
    directory = Path(directory)
    verilog_path, json_path = directory / f"{module}.v", directory / f"{module}.json"
    write_all_atomically({verilog_path: text,
                          json_path: json.dumps(describe(spec, fabric.metadata.as_json()), indent=2) + "\n"})
    return [verilog_path, json_path]


def _module_name(top: str | None, default: str) -> str:
    """``top``, checked to be a plain Verilog identifier, or ``default`` when it is not given."""
    if top is None:
        return default
    if not _IDENTIFIER.fullmatch(top):
        raise ParameterError(f"--top {top!r} is not a Verilog identifier; use letters, digits, _ and $, "
                             f"starting with a letter or _ (e.g. --top my_{default})")
    return top
