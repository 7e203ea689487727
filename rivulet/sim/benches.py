"""Run a stream component's bench in either tier, from plain functions (the tests' and the demo's)."""

import json
from dataclasses import astuple

from .amaranth_sim import run_each_in_amaranth
from .scenarios import make_bench
from .seeds import base_seed
from .streams import stream_ports
from .verilator import build_design, run_cocotb, run_directory
from .wrappers import SideBySide

__all__ = ["run_verilator_bench", "run_verilator_benches", "run_amaranth_bench", "design_key"]


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
    row = _row(kind, kind, params, ports, extra, tokens)
    built = build_design(design or design_key(kind, params), component)
    return _run_rows(built, [row], case=case, profiles=profiles, seeds=seeds, tokens=tokens)


def run_verilator_benches(rows, *, case: str, design: str, profiles, seeds, tokens: int = 200,
                          optimise: bool | None = None) -> list[dict]:
    """Build the components of ``rows`` (``(name, component, kind, params)``) side by side, in one
    design, and run every (row, profile, seed) on it in one simulation: each run resets the whole
    design and drives only its row's ports.

    Returns one record per passing run (its ``row`` is the row's name); raises
    :class:`~rivulet.sim.verilator.CocotbFailure`, one line per failing run, naming the row.
    ``optimise``: as for :func:`~rivulet.sim.verilator.build_design` (every run clocks the whole
    design, so a long table can repay an optimised compile).
    """
    rows = list(rows)
    names = [name for name, *_ in rows]
    if len(set(names)) != len(names):
        repeated = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"run_verilator_benches: each row needs a name of its own; repeated: {repeated}")
    top = SideBySide([component for _, component, _, _ in rows])
    described = []
    for k, (name, component, kind, params) in enumerate(rows):
        ports, extra = stream_ports(component)
        described.append(_row(name, kind, params, ports, extra, tokens, prefix=SideBySide.prefix(k)))
    built = build_design(design, top, optimise=optimise)
    return _run_rows(built, described, case=case, profiles=profiles, seeds=seeds, tokens=tokens)


def _row(name: str, kind: str, params: dict, ports, extra, tokens: int, prefix: str = "") -> dict:
    """One component's scenario; ``prefix`` starts its port names in the design."""
    return {"name": name, "kind": kind, "params": params, "ports": [astuple(port) for port in ports],
            "extra": list(extra), "max_cycles": _max_cycles(tokens, params), "prefix": prefix}


def _run_rows(built, rows: list[dict], *, case: str, profiles, seeds, tokens: int) -> list[dict]:
    config = {"rows": rows, "profiles": list(profiles), "seeds": list(seeds), "base_seed": base_seed(),
              "tokens": tokens}
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
