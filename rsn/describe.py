"""A JSON description of a generated fabric: its ports, tiles, registers and micro-op encoding.

Written next to the Verilog by ``rivulet generate fabric``, so that host software and tools in
any language can drive the fabric without reading Python.
"""

from amaranth.hdl import Shape
from amaranth.lib import data

from .fabric_spec import FabricSpec
from .isa import (
    BANK_COUNTERS,
    BANK_COUNTERS_BASE,
    GLOBAL_REGISTERS,
    REGISTERS,
    Header,
    Opcode,
    Target,
    high_bits_of,
    uop_layouts,
)

__all__ = ["describe"]


def _layout_fields(layout: data.StructLayout) -> list[dict]:
    fields = []
    for name, field in layout:
        shape = field.shape
        entry = {"name": name, "offset": field.offset, "width": Shape.cast(shape).width}
        if high_bits_of(layout, name) is not None:      # a count's high bits (rsn.isa.HIGH_SUFFIX)
            entry["high_bits_of"] = high_bits_of(layout, name)
        if isinstance(shape, data.ArrayLayout):
            entry.update(elements=shape.length, element_width=Shape.cast(shape.elem_shape).width)
        elif isinstance(shape, type):
            entry["values"] = {member.name: member.value for member in shape}
        else:
            entry["signed"] = Shape.cast(shape).signed
        fields.append(entry)
    return fields


def describe(spec: FabricSpec, metadata: dict | None = None) -> dict:
    """Everything a host needs to program the fabric built from ``spec``.

    ``metadata`` is the component's ``metadata.as_json()`` (exact Verilog port names).
    """
    from .fu_kinds import fu_kind
    return {
        "rows": spec.rows, "cols": spec.cols, "data_width": spec.data_width,
        "queue_depth": spec.queue_depth, "queue_mode": spec.queue_mode,
        "register_every": spec.register_every, "uop_queue_depth": spec.uop_queue_depth,
        "tiles": [{"row": row, "col": col, "kind": spec.kind((row, col)),
                   "fu_inputs": fu_kind(spec.kind((row, col))).n_in,
                   "fu_outputs": fu_kind(spec.kind((row, col))).n_out,
                   "failed": (row, col) in spec.failed_tiles}
                  for row, col in spec.all_tiles()],
        "host_ports": [{"name": port.name, "tile": list(port.tile), "side": port.side,
                        "direction": port.direction} for port in spec.host_ports],
        "control_chain_order": "serpentine from tile [0, 0]: even rows west to east, odd rows east to west",
        "registers": REGISTERS,
        "global_registers": GLOBAL_REGISTERS,
        # With a shared memory: bank b's counters at base + len(counters) * b + index in counters.
        "bank_counters": None if spec.memory is None else
        {"base": BANK_COUNTERS_BASE, "counters": list(BANK_COUNTERS), "banks": spec.memory.banks},
        "opcodes": {member.name: member.value for member in Opcode},
        "packet": {"header": _layout_fields(Header), "target": _layout_fields(Target),
                   "body_words": 2},
        "micro_ops": {kind: _layout_fields(layout) for kind, layout in uop_layouts().items()},
        "ports": metadata,
    }
