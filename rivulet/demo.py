"""``make demo``: the main job, end to end.

1. the stream primitives' Verilog, and one of them verified on Verilator under random back-pressure;
2. the default fabric's Verilog and JSON description;
3. a fused two-layer int8 MLP compiled for that fabric, run on the golden model and on the
   Verilated fabric under random host back-pressure, both checked against numpy and each other;
4. a 64-64-32-10 int8 MLP trained on scikit-learn's digits, in phases on the same fabric: a few
   test images on both, every logit checked against the int8 reference in numpy (needs the
   ``ml`` extra; skipped with a note without it).
"""

import sys
import time

from hw.catalog import build
from rivulet.sim.benches import run_verilator_bench
from rivulet.sim.seeds import base_seed, seeds_for
from rivulet.sim.streams import PROFILES
from rivulet.sim.toolchain import BUILD_ROOT, REPOSITORY
from rsn.fabric_spec import DEFAULT_FABRIC
from rsn.fu_kinds import component_catalog

from .generate import generate, generate_fabric
from .run import run_file

DEMO_ROOT = BUILD_ROOT / "demo"
SIMULATED = ("token_queue", {"width": 32, "depth": 4})


def _relative(path) -> str:
    return str(path.relative_to(REPOSITORY))


def generate_all() -> list:
    print(f"1. Verilog of every primitive, default parameters -> {_relative(DEMO_ROOT / 'verilog')}/")
    generated = []
    for name, generator in sorted(component_catalog().items()):
        values = {parameter.name: parameter.default for parameter in generator.parameters}
        result = generate(name, values, DEMO_ROOT / "verilog" / f"rivulet_{name}.v")
        settings = " ".join(f"{key}={value}" for key, value in values.items())
        print(f"   {result.path.name:<28} {settings:<28} {result.lines:>5} lines")
        generated.append(result)
    return generated


def simulate() -> list[dict]:
    kind, params = SIMULATED
    seeds = seeds_for("demo", count=3)
    settings = ", ".join(f"{key}={value}" for key, value in params.items())
    print(f"\n2. cocotb + Verilator: {kind}({settings}), {len(PROFILES)} stall profiles x "
          f"{len(seeds)} seeds, 200 tokens each")
    print("   (first run compiles the Verilated model; later runs reuse it)")
    started = time.monotonic()
    records = run_verilator_bench(build(kind, component_catalog(), **params), kind, params, case="demo",
                                  profiles=list(PROFILES), seeds=seeds)
    print(f"   {'profile':<20} {'cycles':>7} {'tokens':>7} {'tokens/cycle':>13}   (first seed of each)")
    for record in records[::len(seeds)]:
        rate = record["output_tokens"] / record["cycles"]
        print(f"   {record['profile']:<20} {record['cycles']:>7} {record['output_tokens']:>7} {rate:>13.3f}")
    print(f"   {len(records)} simulations passed in {time.monotonic() - started:.1f} s: protocol "
          f"monitor on both streams, scoreboard against the golden FIFO model")
    return records


def fabric_and_mlp():
    print(f"\n3. The default fabric -> {_relative(DEMO_ROOT / 'fabric')}/")
    for path in generate_fabric(DEFAULT_FABRIC, DEMO_ROOT / "fabric"):
        print(f"   {path.name}")
    print("\n4. A fused int8 MLP on that fabric: golden model and Verilated RTL (native tier), compared\n")
    run_file(REPOSITORY / "examples" / "mlp.py", sim="both", profile="random_stall_50",
             seed=seeds_for("demo-mlp", count=1)[0] % 1000, say=lambda line: print("   " + line))


DIGITS_IMAGES = 6


def digits_in_phases():
    print(f"\n5. A 64-64-32-10 MLP on scikit-learn's digits, in phases: {DIGITS_IMAGES} test images on the "
          "golden model and the RTL\n")
    try:
        import sklearn  # noqa: F401
    except ImportError:
        print("   skipped: scikit-learn is not installed (pip install 'rivulet-hw[ml]')")
        return
    run_file(REPOSITORY / "examples" / "digits_mlp.py", sim="both", profile="random_stall_50",
             seed=seeds_for("demo-digits", count=1)[0] % 1000, definitions=[f"images={DIGITS_IMAGES}"],
             say=lambda line: print("   " + line))
    print("   the whole test split: rivulet run examples/digits_mlp.py --sim rtl")


def main() -> int:
    print("Rivulet demo: stream primitives, then a program on a generated fabric\n")
    generate_all()
    simulate()
    fabric_and_mlp()
    digits_in_phases()
    print(f"\nAll checks passed. Seeds derive from RIVULET_SEED={base_seed()}; set it to replay.")
    print("Next: `make test` runs the whole suite; `rivulet run examples/mlp.py --sim both`;"
          " `rivulet --help`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
