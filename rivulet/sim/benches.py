"""Run a stream component's bench in either tier, from plain functions (the tests' and the demo's)."""

import json
from dataclasses import astuple

from .amaranth_sim import run_each_in_amaranth
from .scenarios import make_bench
from .seeds import base_seed
from .streams import stream_ports
from .verilator import build_design, run_cocotb, run_directory

__all__ = ["run_verilator_bench", "run_amaranth_bench", "design_key"]


def design_key(kind: str, params: dict) -> str:
    """A readable, unique name for one (design, parameters), used for its build directory."""
    return kind + "".join(f"-{name}={value}" for name, value in sorted(params.items()))


def _max_cycles(tokens: int, params: dict) -> int:
    # Generous: 90% back-pressure on one of up to n outputs, plus a blocked phase.
    return 40 * tokens * params.get("n", 1) + 1000


def run_verilator_bench(component, kind: str, params: dict, *, case: str, profiles, seeds,
                        tokens: int = 200, design: str | None = None) -> list[dict]:
    """Build ``component`` once with Verilator and run every (profile, seed) on it.

    Returns one record per passing (profile, seed): cycles and output tokens.
    """
    ports, extra = stream_ports(component)
    config = {
        "kind": kind, "params": params, "ports": [astuple(port) for port in ports],
        "extra": extra, "profiles": list(profiles), "seeds": list(seeds),
        "base_seed": base_seed(), "tokens": tokens, "max_cycles": _max_cycles(tokens, params),
    }
    built = build_design(design or design_key(kind, params), component)
    with run_directory(case) as directory:
        summary = directory / "summary.jsonl"
        run_cocotb(built, "rivulet.sim.cocotb_bench", directory,
                   {"RIVULET_BENCH": json.dumps(config), "RIVULET_BENCH_SUMMARY": str(summary)})
        return [json.loads(line) for line in summary.read_text().splitlines()]


def run_amaranth_bench(component, kind: str, params: dict, *, profile: str, seeds,
                       tokens: int = 60) -> list[int]:
    """Run ``profile`` with each of ``seeds``, from reset, in one Amaranth simulator; return the
    cycles each took."""
    ports, extra = stream_ports(component)
    max_cycles = _max_cycles(tokens, params)
    runs = [(make_bench(kind, params, ports, extra, profile, seed, tokens), max_cycles) for seed in seeds]
    return run_each_in_amaranth(component, runs)
