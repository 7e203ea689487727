"""Random path programs on the RTL against the golden model, at the native tier's speed.

``python -m bench.random_rtl [--programs N] [--seed S] [--batch B]`` draws N random path programs
(rsn.random_programs, every shape; default 10,000), compiles each for the default 3x3 fabric,
runs it on the fabric's golden model and, under a random stall profile and seed, on the
Verilated fabric (native tier, B runs per driver process), and compares host outputs, firings
and link beats. Writes bench/results/random_rtl.json and random_rtl.md: counts, the seed,
mismatches (the target is none), cycles simulated and the time each part took.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from .common import RESULTS, git_stamp, now, write_results

__all__ = ["main"]


def _problems(compiled, model, rtl) -> list[str]:
    problems = []
    for port, tokens in model.outputs.items():
        if rtl.outputs.get(port, []) != tokens:
            got = rtl.outputs.get(port, [])
            problems.append(f"host port {port}: RTL {got[:8]}..., model {tokens[:8]}...")
    for tile, firings in rtl.firings.items():
        if firings != model.firings[tile] or rtl.link_beats[tile] != model.link_beats[tile]:
            problems.append(f"tile {tile}: RTL firings {firings} links {rtl.link_beats[tile]}, model "
                            f"{model.firings[tile]} {model.link_beats[tile]}")
    return problems


def measure(count: int, seed: int, batch: int) -> dict:
    from rivulet.sim.fabric_run import run_each_on_rtl
    from rivulet.sim.streams import PROFILES
    from rsn.fabric_spec import default_fabric
    from rsn.model import FabricModel
    from rsn.program import compile_program
    from rsn.random_programs import random_program

    spec = default_fabric()
    rng = random.Random(seed)
    shapes, mismatches = Counter(), []
    rtl_seconds = model_seconds = cycles = 0.0
    done = not_routed = 0
    while done < count:
        started = time.monotonic()
        runs = []
        while len(runs) < min(batch, count - done):
            program = random_program(rng.getrandbits(32))
            try:
                compiled = compile_program(program, spec)
            except ValueError:
                not_routed += 1
                continue
            model = FabricModel(spec).run(compiled.image, program.host_inputs)
            runs.append((compiled, model, rng.choice(list(PROFILES)), rng.getrandbits(32)))
            shapes[program.name.rsplit("-", 1)[0]] += 1
        model_seconds += time.monotonic() - started
        started = time.monotonic()
        results = run_each_on_rtl([run[0] for run in runs], profiles=[run[2] for run in runs],
                                  seeds=[run[3] for run in runs], case="bench-random-rtl")
        rtl_seconds += time.monotonic() - started
        for (compiled, model, profile, run_seed), result in zip(runs, results, strict=True):
            problems = [f"RTL: {result}"] if isinstance(result, str) else _problems(compiled, model, result)
            if not isinstance(result, str):
                cycles += result.sim_cycles
            if problems:
                mismatches.append({"program": compiled.program.name, "profile": profile, "seed": run_seed,
                                   "problems": problems[:3]})
        done += len(runs)
        print(f"{done}/{count} programs, {len(mismatches)} mismatches", flush=True)
    return {"measured": now(), **git_stamp(), "seed": seed, "programs": done, "not_routed": not_routed,
            "shapes": dict(shapes), "mismatches": mismatches, "cycles": int(cycles),
            "model_and_compile_seconds": round(model_seconds, 1), "rtl_seconds": round(rtl_seconds, 1)}


def markdown(results: dict) -> str:
    shapes = ", ".join(f"{shape} {count}" for shape, count in sorted(results["shapes"].items()))
    lines = [
        "# Random path programs: RTL against the golden model",
        "",
        f"Measured {results['measured']} at {results['git_revision']} "
        f"(`python -m bench.random_rtl --seed {results['seed']}`), default 3x3 fabric, native tier, "
        "a random stall profile and seed per program.",
        "",
        f"- programs: **{results['programs']:,}** ({shapes}); {results['not_routed']} drawn did not route",
        f"- mismatches (host outputs, firings, link beats): **{len(results['mismatches'])}**",
        f"- cycles simulated on the RTL: {results['cycles']:,} in {results['rtl_seconds']} s "
        f"(build included if it was not cached); compiling and the golden model: "
        f"{results['model_and_compile_seconds']} s",
    ]
    for mismatch in results["mismatches"][:20]:
        lines.append(f"  - {mismatch['program']} ({mismatch['profile']}, seed {mismatch['seed']}): "
                     f"{mismatch['problems'][0]}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--batch", type=int, default=1000, help="runs per driver process")
    arguments = parser.parse_args(argv)
    results = measure(arguments.programs, arguments.seed, arguments.batch)
    figures, table = write_results(RESULTS, "random_rtl", results, markdown(results))
    print(f"wrote {figures} and {table}")


if __name__ == "__main__":
    main()
