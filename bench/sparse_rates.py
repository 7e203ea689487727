"""Tokens per cycle of each sparse primitive's RTL on long random streams, without stalls.

``python -m bench.sparse_rates [--quick]`` builds the conformance design once and runs, per
primitive, random streams a few hundred tokens long (built here, checked against numpy):
the figure is the tokens a primitive's first output carries per cycle, from the first cycle the
bench drives to the cycle its last expected token leaves, so it includes the few cycles of
pipeline fill. The expected streams come from numpy, so every run is also a check. Writes
bench/results/sparse_rates.json and sparse_rates.md.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from rivulet.sim.sparse_conform import run_rtl
from samflow.suite import parse_vectors

from .common import QUICK_RESULTS, RESULTS, git_stamp, now, write_results

__all__ = ["main"]

SEED = 2026


def _stream(fibers, close=1):
    tokens = []
    for k, fiber in enumerate(fibers):
        tokens += [int(v) for v in fiber] + ["S0" if k < len(fibers) - 1 else f"S{close}"]
    return tokens + ["D"]


def _files(rng, scale: int):
    """One file per primitive: long single cases whose expected streams numpy gives."""
    fiber = np.flatnonzero(rng.random(4 * scale) < 0.5)
    other = np.flatnonzero(rng.random(4 * scale) < 0.5)
    values = rng.integers(-100, 100, size=len(fiber))
    ref = list(range(len(fiber)))
    files = []

    def add(primitive, inputs, outputs, ports):
        files.append(parse_vectors({"primitive": primitive, "ports": ports, "cases": [
            {"name": f"rate_{primitive}", "params": {}, "inputs": inputs, "outputs": outputs,
             "schedule_dependent": False}]}, Path(f"rate_{primitive}.json"), {primitive}))

    joined = np.intersect1d(fiber, other).tolist()
    add("intersect", {"in_crd1": _stream([fiber]), "in_ref1": _stream([ref]),
                      "in_crd2": _stream([other]), "in_ref2": _stream([list(range(len(other)))])},
        {"crd": joined + ["S1", "D"]},
        {"inputs": ["in_ref1", "in_crd1", "in_ref2", "in_crd2"], "outputs": ["crd"]})
    united = np.union1d(fiber, other).tolist()
    add("union", {"in_crd1": _stream([fiber]), "in_ref1": _stream([ref]),
                  "in_crd2": _stream([other]), "in_ref2": _stream([list(range(len(other)))])},
        {"crd": united + ["S1", "D"]},
        {"inputs": ["in_ref1", "in_crd1", "in_ref2", "in_crd2"], "outputs": ["crd"]})
    other_values = rng.integers(-100, 100, size=len(fiber))
    add("add", {"in_val1": _stream([values]), "in_val2": _stream([other_values])},
        {"val": (values + other_values).tolist() + ["S1", "D"]},
        {"inputs": ["in_val1", "in_val2"], "outputs": ["val"]})
    add("multiply", {"in_val1": _stream([values]), "in_val2": _stream([other_values])},
        {"val": (values * other_values).tolist() + ["S1", "D"]},
        {"inputs": ["in_val1", "in_val2"], "outputs": ["val"]})
    add("stkn_drop", {"in_stream": _stream([values])}, {"val": values.tolist() + ["D"]},
        {"inputs": ["in_stream"], "outputs": ["val"]})
    add("repeat_sig_gen", {"in_stream": _stream([fiber])}, {"repsig": ["R"] * len(fiber) + ["S", "D"]},
        {"inputs": ["in_stream"], "outputs": ["repsig"]})
    dim = scale
    add("rd_scan_uncompressed", {"in_ref": [0, 1, 2, "S0", "D"]},
        {"crd": [*range(dim), "S0", *range(dim), "S0", *range(dim), "S1", "D"]},
        {"inputs": ["in_ref"], "outputs": ["crd"]})
    files[-1].cases[0].params["dim"] = dim
    rows = 4
    dense = rng.random((rows, scale)) < 0.5
    indptr = np.concatenate([[0], np.cumsum(dense.sum(axis=1))]).tolist()
    indices = np.concatenate([np.flatnonzero(r) for r in dense]).astype(int).tolist()
    crd = []
    for r in range(rows):
        crd += indices[indptr[r]:indptr[r + 1]] + (["S0"] if r < rows - 1 else ["S1"])
    files.append(parse_vectors({"primitive": "rd_scan_compressed", "ports": {
        "inputs": ["in_ref", "in_crd_skip"], "outputs": ["crd", "ref"]}, "cases": [
        {"name": "rate_rd_scan_compressed", "params": {}, "memory": {"seg_arr": indptr, "crd_arr": indices},
         "inputs": {"in_ref": [*range(rows), "S0", "D"], "in_crd_skip": []}, "outputs": {"crd": crd + ["D"]},
         "schedule_dependent": False}]}, Path("rate_rd_scan_compressed.json"), {"rd_scan_compressed"}))
    add("reduce", {"in_val": _stream([values[k:k + 8] for k in range(0, len(values), 8)])},
        {"val": [int(values[k:k + 8].sum()) for k in range(0, len(values), 8)] + ["S0", "D"]},
        {"inputs": ["in_val"], "outputs": ["val"]})
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short streams, results under build/")
    arguments = parser.parse_args(argv)
    scale = 32 if arguments.quick else 256
    files = _files(np.random.default_rng(SEED), scale)
    outcomes = run_rtl(files, profiles=["no_stall"], seeds=[SEED])
    rows = defaultdict(dict)
    for vectors, outcome in zip(files, outcomes, strict=True):
        case = vectors.cases[0]
        port = next(iter(case.outputs))
        tokens = len(case.outputs[port])
        inputs = max(len(t) for t in case.inputs.values())
        if outcome.status != "passed":
            raise SystemExit(f"{outcome.primitive}: {outcome.detail}")
        rows[outcome.primitive] = {"output": port, "output_tokens": tokens, "input_tokens": inputs,
                                   "cycles": outcome.cycles, "output_per_cycle": tokens / outcome.cycles,
                                   "input_per_cycle": inputs / outcome.cycles}
    lines = [f"# Sparse primitives: tokens per cycle on the RTL (no stalls, seed {SEED})", "",
             f"{now()}, {git_stamp()['git_revision']}. `python -m bench.sparse_rates`: one random case per "
             "primitive, checked against numpy; cycles from the first driven cycle to the last "
             "expected output token (pipeline fill included).", "",
             "| primitive | output | input tokens | output tokens | cycles | input/cycle | output/cycle |",
             "|---|---|---|---|---|---|---|"]
    for primitive, row in rows.items():
        lines.append(f"| {primitive} | {row['output']} | {row['input_tokens']} | {row['output_tokens']} | "
                     f"{row['cycles']} | {row['input_per_cycle']:.2f} | {row['output_per_cycle']:.2f} |")
    directory = QUICK_RESULTS if arguments.quick else RESULTS
    write_results(directory, "sparse_rates", {"stamp": git_stamp(), "seed": SEED, "scale": scale,
                                              "primitives": rows}, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
