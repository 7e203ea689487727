"""SNN on crossbar tiles: predicted against measured throughput of a mapped multi-tile network.

``python -m bench.snn`` writes ``bench/results/snn.json`` and ``bench/results/snn.md``.

The network (input 8 -> 16 -> 16, tinyODIN arithmetic) is lowered onto the 2x2 xbar fabric of
``examples/fabrics/snn.toml`` (four tiles of 8 neurons). Measured: the fabric's own cycle counter
for runs of T1 and T2 timesteps with the same first T1 steps, so image loading and pipeline fill
cancel: cycles per timestep = (cycles(T2) - cycles(T1)) / (T2 - T1), with no host stalls.
Predicted: the cluster SDF graph (one actor per tile, its time ``snn.cost.cycles_per_timestep``
for the tile's mean input events per step in these runs; a 0-token edge per spike stream and a
reverse edge of ``buffer`` tokens; a 1-token self-loop) and its MCM throughput (``snn.sdf``),
for ``buffer`` 1 (a receiver holds one timestep of spikes) and 2. The fabric's buffers hold
words, not timesteps (a queue of ``queue_depth`` plus two link slots per hop), so the truth lies
between.
The ratio shows what the model leaves out: the FU's merge (one cycle per input's end-of-step
word), output spikes under contention and the links.
"""

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from rsn.fabric_spec import load_fabric
from snn.lower import compile_lowered, lower_network
from snn.network import Network
from snn.throughput import cluster_throughput

from .common import REPO, RESULTS, git_stamp, now, write_results

FABRIC = REPO / "examples" / "fabrics" / "snn.toml"
SIZES = (8, 16, 16)


def _network(spec, seed: int) -> Network:
    rng = np.random.default_rng(seed)
    p = spec.parameters("xbar").lif_params
    weights = [rng.integers(-4, p.w_max + 1, size=(a, b)) * (rng.random((a, b)) < 0.6)
               for a, b in zip(SIZES, SIZES[1:], strict=False)]
    return Network.from_layers(weights, p)


def _inputs(steps: int, rate: float, seed: int):
    rng = np.random.default_rng(seed + 1)
    return [[int(n) for n in rng.permutation(SIZES[0])[:rng.binomial(SIZES[0], rate)]] for _ in range(steps)]


def predicted(lowering, spec, steps: int, buffer: int = 1) -> dict:
    """Cycles per timestep from the SDF graph of the mapped clusters (1 / MCM throughput)."""
    found = cluster_throughput(lowering, spec, buffer)
    return {"actor_cycles": found.actor_cycles, "throughput": str(found.throughput),
            "cycles_per_timestep": found.cycles_per_timestep}


def measure(seed: int = 0, short: int = 4, long: int = 12, rate: float = 0.4) -> dict:
    from rivulet.sim.fabric_run import run_many_on_rtl

    spec = load_fabric(FABRIC)
    net = _network(spec, seed)
    inputs = _inputs(long, rate, seed)
    lowerings = [lower_network(net, spec, inputs[:steps], name=f"snn-bench-{steps}", cluster_size=8)
                 for steps in (short, long)]
    compiled = [compile_lowered(lowering, spec, seed=seed) for lowering in lowerings]
    # The same placement for both runs, so that only the timesteps differ.
    assert compiled[0].routing.placement.tiles == compiled[1].routing.placement.tiles
    started = time.monotonic()
    results = run_many_on_rtl(compiled, profiles=["no_stall", "no_stall"], seeds=[seed, seed],
                              case="bench-snn")
    wall = time.monotonic() - started
    for lowering, result in zip(lowerings, results, strict=True):
        for port, words in lowering.program.expected.items():
            assert result.outputs[port] == words, f"{port}: the RTL differs from the reference"
    measured = (results[1].cycles - results[0].cycles) / (long - short)
    prediction = predicted(lowerings[1], spec, long)
    unbuffered = predicted(lowerings[1], spec, long, buffer=2)
    return {
        "network": {"sizes": list(SIZES), "clusters": {c.name: len(c.gids) for c in lowerings[1].clusters},
                    "params": "tinyodin", "input_rate": rate, "seed": seed},
        "fabric": {"rows": spec.rows, "cols": spec.cols, **{name: getattr(spec.parameters("xbar"), name)
                                                            for name in ("axons", "neurons", "banks")}},
        "timesteps": [short, long],
        "cycles": [results[0].cycles, results[1].cycles],
        "spikes_per_step": {c.name: sum(map(len, lowerings[1].spikes[c.name])) / long
                            for c in lowerings[1].clusters},
        "measured_cycles_per_timestep": measured,
        "predicted": prediction,
        "predicted_buffer2": unbuffered,
        "measured_over_predicted": (measured / prediction["cycles_per_timestep"]
                                    if prediction["cycles_per_timestep"] else None),
        "measured_over_predicted_buffer2": (measured / unbuffered["cycles_per_timestep"]
                                            if unbuffered["cycles_per_timestep"] else None),
        "simulation_wall_seconds": round(wall, 1),
    }


def markdown(results: dict) -> str:
    r = results["run"]
    lines = ["# SNN on crossbar tiles: predicted vs measured throughput", "",
             f"Network {r['network']['sizes']} (tinyODIN), clusters {r['network']['clusters']} on a "
             f"{r['fabric']['rows']}x{r['fabric']['cols']} fabric of {r['fabric']['axons']}x"
             f"{r['fabric']['neurons']} crossbars, B = {r['fabric']['banks']}; input rate "
             f"{r['network']['input_rate']}.", "",
             "| quantity | value |", "|---|---|",
             f"| fabric cycles for {r['timesteps'][0]} / {r['timesteps'][1]} timesteps | "
             f"{r['cycles'][0]} / {r['cycles'][1]} |",
             f"| measured cycles per timestep (difference) | {r['measured_cycles_per_timestep']:.2f} |",
             f"| SDF actor cycles (snn.cost) | {r['predicted']['actor_cycles']} |",
             f"| predicted cycles per timestep, 1-timestep buffers (1 / MCM throughput) | "
             f"{r['predicted']['cycles_per_timestep']:.2f} |",
             f"| predicted cycles per timestep, 2-timestep buffers | "
             f"{r['predicted_buffer2']['cycles_per_timestep']:.2f} |",
             f"| measured / predicted (1-timestep, 2-timestep buffers) | {r['measured_over_predicted']:.3f}, "
             f"{r['measured_over_predicted_buffer2']:.3f} |",
             f"| output spikes per step per cluster | {r['spikes_per_step']} |", "",
             "Cycle counts come from the fabric's own counter in Verilator; no host stalls."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    arguments = parser.parse_args(argv)
    results = {"meta": {"python": platform.python_version(), "date": now(), **git_stamp()},
               "run": measure(arguments.seed)}
    write_results(arguments.out, "snn", results, markdown(results), default=str)
    print(markdown(results))
    return results


if __name__ == "__main__":
    main()
