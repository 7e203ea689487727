# amaranth: UnusedElaboratable=no
"""Which tier runs a fabric simulation, and the native build that fits a batch of runs."""

import hashlib
import os

from rivulet.sim.waves import waves_requested
from rsn.fabric import Fabric

from .build import build_native
from .runs import memory_needs, run_native
from .top import SimTop

__all__ = ["TIERS", "THREADS", "simulation_tier", "native_key", "native_design", "run_native"]

TIERS = ("native", "cocotb")
# The memories of the usual native top: every run of the suite and the examples fits. A batch
# that needs more gets a top of its own, sized to the next power of two.
IN_DEPTH, OUT_DEPTH = 1 << 15, 1 << 14
# Verilator threads of the native model: 1, since a second thread does not pay on two cores
# (bench/results/sim_speed.md); RIVULET_SIM_THREADS sets another count.
THREADS = 1


def simulation_tier(tier: str | None = None) -> str:
    """``tier``, else ``RIVULET_SIM_TIER``, else native, except that waves need the cocotb tier."""
    tier = tier or os.environ.get("RIVULET_SIM_TIER") or ("cocotb" if waves_requested() else "native")
    if tier not in TIERS:
        raise ValueError(f"unknown simulation tier {tier!r}: choose one of {', '.join(TIERS)}")
    return tier


def _depth(need: int, usual: int) -> int:
    depth = usual
    while depth < need:
        depth *= 2
    return depth


def native_design(spec, runs: list[dict], host_words: tuple[int, int] | None = None):
    """The native build of ``spec`` whose memories hold every run of ``runs``, and at least
    ``host_words`` (input, output words) when given: a caller running cases of several sizes
    sizes them for its largest, so that every size shares one build."""
    needs = [memory_needs(run) for run in runs] + ([host_words] if host_words else [])
    in_depth = _depth(max(need[0] for need in needs), IN_DEPTH)
    out_depth = _depth(max(need[1] for need in needs), OUT_DEPTH)
    faultable = any(run.get("fault") for run in runs)      # a fault-injection build (rsn.link_fault)
    fabric = Fabric(spec, faultable=True) if faultable else None
    top = SimTop(spec, in_depth=in_depth, out_depth=out_depth, fabric=fabric)
    suffix = "" if (in_depth, out_depth) == (IN_DEPTH, OUT_DEPTH) else f"-in{in_depth}-out{out_depth}"
    suffix += "-faultable" if faultable else ""
    threads = int(os.environ.get("RIVULET_SIM_THREADS") or THREADS)
    return build_native(native_key(spec) + suffix, top, threads=threads,
                        what=f"the native fabric {spec.rows}x{spec.cols}")


def native_key(spec) -> str:
    """The build directory's name for ``spec`` with the usual memories."""
    return "native-" + hashlib.sha256(repr(spec).encode()).hexdigest()[:12]
