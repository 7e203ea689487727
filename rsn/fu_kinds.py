"""The functional-unit kinds a fabric can hold, by the name used in fabric descriptions."""

from .fu_alu import ALU_KIND
from .fu_mac import MAC_KIND
from .fu_mem import MEM_KIND
from .fu_pe import PE_KIND
from .fu_xbar import XBAR_KIND

__all__ = ["FU_KINDS", "fu_parameters"]

FU_KINDS = {kind.name: kind for kind in (MEM_KIND, MAC_KIND, ALU_KIND)}
FU_KINDS[PE_KIND.name] = PE_KIND
FU_KINDS[XBAR_KIND.name] = XBAR_KIND


def fu_parameters(kind: str, spec) -> dict:
    """The fabric-description parameters a FU kind's RTL takes besides the data width."""
    if kind == "xbar":
        return {"params": spec.xbar_params, "axons": spec.xbar_axons, "neurons": spec.xbar_neurons,
                "banks": spec.xbar_banks}
    return {"mem": {"mem_depth": spec.mem_depth}, "mac": {"mac_depth": spec.mac_depth},
            "pe": {"mem_depth": spec.pe_mem_depth, "ripple_ops": spec.pe_ripple_ops}}.get(kind, {})
