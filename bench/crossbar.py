"""Crossbar suite: the crossbar tile's cycles against tinyODIN's, and its cost on iCE40 and ECP5.

``python -m bench.run --suite crossbar`` writes ``bench/results/crossbar.json`` and
``crossbar.md`` (``--quick``: one small build, output in ``build/bench/quick/``).

* Cycles: the tile (``snn.crossbar.Crossbar``) in Amaranth's simulator at N = 128 and 256 neurons
  (N axons) and B = 1, 4, 8, 16 banks, with a greedy source and sink and no output spikes: the
  cycles between two input spikes, and from an idle tile taking a timestep's first event to its
  ``END_OF_STEP``, against tinyODIN's documented ``1 + 2N`` per spike and ``E (1 + 2N) + 2N``
  per timestep (``snn.cost``), and against our own formula there.
* FPGA: one tile on each part through :mod:`bench.fpga`. A tile's configuration word (one
  neuron group's weights or membranes) and read-back word are hundreds of bits wide, more than
  the packages' user IOs, so :class:`TileHarness` feeds ``config`` from a shift register and
  folds ``readback`` into an XOR chain; ``i`` and ``o`` are real pins.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from amaranth.hdl import Cat, Elaboratable, Module, Signal, Value
from amaranth.sim import Simulator

from snn import cost
from snn.crossbar import Crossbar, EventKind, event_layout
from snn.lif_params import loihi, tinyodin

from . import fpga
from .common import QUICK_RESULTS, RESULTS, git_stamp, now, relative_path, run_jobs, write_results

NEURONS = (128, 256)
BANKS = (1, 4, 8, 16)
EVENTS = 8                      # input spikes per timestep in the per-timestep column
SEEDS = (1, 2)
# (name, target, preset, axons, neurons, banks): the ECP5 tile (128 x 128, 8-bit
# weights) and a smaller one for the HX8K (tinyODIN's 4-bit weights: 64 kbit of its 128 kbit).
TILES = (
    ("loihi_128x128_w8_b8", "ecp5-25f", "loihi", 128, 128, 8),
    ("tinyodin_128x128_w4_b4", "ice40-hx8k-ct256", "tinyodin", 128, 128, 4),
)
QUICK_TILES = (("tinyodin_32x32_w4_b4", "ice40-hx8k-ct256", "tinyodin", 32, 32, 4),)
PRESETS = {"tinyodin": lambda: tinyodin(threshold=64, leak_amount=1),
           "loihi": lambda: loihi(vth=100, dv=256)}


# ---------------------------------------------------------------------------------------------
# 1. Cycles


def measure_cycles(neurons: int, banks: int, events: int = EVENTS, steps: int = 3) -> dict:
    """Simulate ``steps`` timesteps of ``events`` spikes each, back to back, no stalls.

    Weights and membranes are the memories' reset-free initial zeros and the threshold is
    positive, so no neuron fires: the figures are the documented no-spike costs.
    """
    dut = Crossbar(tinyodin(threshold=64), axons=neurons, neurons=neurons, banks=banks)
    layout = event_layout(neurons, "axon")
    tokens = []
    for _ in range(steps):
        tokens += [layout.const({"kind": EventKind.SPIKE, "axon": (7 * k) % neurons}).as_bits()
                   for k in range(events)]
        tokens.append(layout.const({"kind": EventKind.END_OF_STEP, "axon": 0}).as_bits())
    accepted, ends = [], []

    async def testbench(ctx):
        ctx.set(dut.o.ready, 1)
        cycle = 0
        while len(ends) < steps:
            sent = len(accepted)
            ctx.set(dut.i.valid, sent < len(tokens))
            ctx.set(dut.i.payload.as_value(), tokens[sent] if sent < len(tokens) else 0)
            if ctx.get(dut.i.valid) and ctx.get(dut.i.ready):
                accepted.append(cycle)
            if ctx.get(dut.o.valid):
                if ctx.get(dut.o.payload.kind) != EventKind.END_OF_STEP:
                    raise AssertionError("a neuron fired with zero weights")
                ends.append(cycle)
            await ctx.tick()
            cycle += 1
            if cycle > 4 * (events + 1) * steps * neurons + 100:
                raise AssertionError(f"the tile stopped: {len(accepted)} tokens taken, {len(ends)} steps")

    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()
    per_step = events + 1
    first = accepted[0]
    return {"neurons": neurons, "banks": banks, "events": events,
            "cycles_per_spike": accepted[1] - accepted[0],
            "cycles_per_timestep": ends[0] - first,
            "timestep_period": ends[1] - ends[0],
            "tokens_per_step": per_step,
            "model_per_spike": cost.cycles_per_event(neurons, banks),
            "model_per_timestep": cost.cycles_per_timestep(events, neurons, banks),
            "tinyodin_per_spike": cost.tinyodin_cycles_per_event(neurons),
            "tinyodin_per_timestep": cost.tinyodin_cycles_per_timestep(events, neurons)}


# ---------------------------------------------------------------------------------------------
# 2. FPGA


class TileHarness(Elaboratable):
    """The tile with ``i`` and ``o`` on pins, ``config`` from a shift register (``config_in``,
    one bit per cycle; ``config_valid``/``config_ready`` are pins), and ``readback`` folded
    three bits per XOR stage into flip-flops ending in ``readback_out``.

    The harness adds one FF per configuration bit and per three read-back bits, and about one
    LUT per three read-back bits; the tables count them with the tile (see the footer).
    """

    def __init__(self, tile: Crossbar):
        self.tile = tile
        self.config_in = Signal()
        self.config_valid = Signal()
        self.config_ready = Signal()
        self.readback_ready = Signal()
        self.readback_valid = Signal()
        self.readback_out = Signal()

    @property
    def ports(self) -> list:
        tile = self.tile
        streams = [tile.i.valid, tile.i.ready, Value.cast(tile.i.payload), tile.o.valid, tile.o.ready,
                   Value.cast(tile.o.payload)]
        return [*streams, self.config_in, self.config_valid, self.config_ready, self.readback_ready,
                self.readback_valid, self.readback_out]

    def elaborate(self, platform):
        m = Module()
        m.submodules.tile = tile = self.tile
        config = Value.cast(tile.config.payload)
        shift = Signal(len(config))
        m.d.sync += shift.eq(Cat(self.config_in, shift[:-1]))
        m.d.comb += [config.eq(shift), tile.config.valid.eq(self.config_valid),
                     self.config_ready.eq(tile.config.ready), tile.readback.ready.eq(self.readback_ready),
                     self.readback_valid.eq(tile.readback.valid)]
        observed = Value.cast(tile.readback.payload)
        fold = Signal(math.ceil(len(observed) / 3))
        for stage in range(len(fold)):
            previous = fold[stage - 1] if stage else self.config_in
            m.d.sync += fold[stage].eq(previous ^ observed[3 * stage:3 * stage + 3].xor())
        m.d.comb += self.readback_out.eq(fold[-1])
        return m


def tile_job(name: str, target: str, preset: str, axons: int, neurons: int, banks: int,
             seeds: tuple[int, ...], build_root: str) -> dict:
    """Worker: one tile in its harness, synthesised and placed once per seed."""
    started = time.perf_counter()
    params = PRESETS[preset]()
    harness = TileHarness(Crossbar(params, axons=axons, neurons=neurons, banks=banks))
    result = fpga.build(harness, name, target, ports=harness.ports, seeds=seeds,
                        build_root=Path(build_root))
    entry = {"name": name, "preset": preset, "axons": axons, "neurons": neurons, "banks": banks,
             "weight_width": params.weight_width, "membrane_width": params.membrane_width,
             "weight_bits": axons * neurons * params.weight_width,
             "config_bits": len(Value.cast(harness.tile.config.payload)),
             "readback_bits": len(Value.cast(harness.tile.readback.payload)),
             **result.to_dict(), "seconds": round(time.perf_counter() - started, 1)}
    entry["build_dir"] = relative_path(entry["build_dir"])
    entry["netlist"] = relative_path(entry["netlist"])
    entry["reports"] = [relative_path(report) for report in entry["reports"]]
    return entry


def cycles_job(neurons: int, banks: int) -> dict:
    return {"part": "cycles", **measure_cycles(neurons, banks)}


def _describe(entry: dict) -> str:
    if entry.get("part") == "cycles":
        return (f"sim   N={entry['neurons']:>3} B={entry['banks']:>2}: {entry['cycles_per_spike']} "
                f"cycles/spike, {entry['cycles_per_timestep']} cycles/timestep")
    return (f"build {entry['target']:<16} {entry['name']}: {entry['luts']} LUT {entry['ffs']} FF "
            f"{entry['brams']} BRAM {entry['fmax_mhz']:.1f} MHz ({entry['seconds']:.0f} s)")


def run_suite(args) -> dict:
    quick = args.quick
    seeds = (fpga.DEFAULT_SEED,) if quick else tuple(int(s) for s in (args.seeds or "1,2").split(","))
    out_dir = QUICK_RESULTS if quick else RESULTS
    started = time.perf_counter()
    meta = {"date": None, **fpga.tool_metadata()}
    build_root = str(fpga.BUILD_ROOT)
    neurons = (128,) if quick else NEURONS
    jobs = [(cycles_job, n, b) for n in neurons for b in BANKS]
    jobs += [(tile_job, *tile, seeds, build_root) for tile in (QUICK_TILES if quick else TILES)]
    done = run_jobs(jobs, args.jobs, describe=_describe)
    meta.update(date=now(), **git_stamp(), seeds=list(seeds), quick=quick, events_per_timestep=EVENTS,
                workers=args.jobs,
                presets={name: repr(make()) for name, make in PRESETS.items()},
                targets={name: {"family": spec.family, "device_flags": list(spec.device_flags),
                                "package": spec.package, "freq_constraint_mhz": spec.freq_mhz}
                         for name, spec in fpga.TARGETS.items()},
                wall_time_s=round(time.perf_counter() - started, 1))
    results = {"meta": meta,
               "cycles": sorted((e for e in done if e.get("part") == "cycles"),
                                key=lambda e: (e["neurons"], e["banks"])),
               "tiles": sorted((e for e in done if e.get("part") != "cycles"), key=lambda e: e["target"])}
    figures, _ = write_results(out_dir, "crossbar", results, markdown(results))
    print(markdown(results))
    print(f"wrote {relative_path(figures)} and crossbar.md in {meta['wall_time_s']:.1f} s")
    return results


# ---------------------------------------------------------------------------------------------
# Markdown


def markdown(results: dict) -> str:
    meta = results["meta"]
    events = meta["events_per_timestep"]
    lines = ["# Crossbar tile: cycles against tinyODIN, and one tile on iCE40 and ECP5", "",
             "## Cycles", "",
             f"N neurons, N axons, B banks; a timestep of E = {events} input spikes. Ours = measured "
             "in Amaranth's simulator (greedy source and sink, no output spikes); formula = "
             "`snn.cost` (N/B per spike, (E+1) N/B + 4 per timestep, for N/B >= 3); tinyODIN = its "
             "documented 1 + 2N per spike and E (1 + 2N) + 2N per timestep. Speed-up = tinyODIN / ours.", "",
             "| N | B | cycles/spike ours | formula | tinyODIN | speed-up | cycles/timestep ours "
             "| formula | tinyODIN | speed-up | period back to back |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for e in results["cycles"]:
        lines.append(
            f"| {e['neurons']} | {e['banks']} | {e['cycles_per_spike']} | {e['model_per_spike']} "
            f"| {e['tinyodin_per_spike']} | {e['tinyodin_per_spike'] / e['cycles_per_spike']:.1f}x "
            f"| {e['cycles_per_timestep']} | {e['model_per_timestep']} | {e['tinyodin_per_timestep']} "
            f"| {e['tinyodin_per_timestep'] / e['cycles_per_timestep']:.1f}x | {e['timestep_period']} |")
    lines += ["", "## One tile on each FPGA", "",
              "| target | tile | preset | weights | LUT | FF | BRAM | Fmax (MHz) | per seed |",
              "|---|---|---|---|---:|---:|---:|---:|---|"]
    for e in results["tiles"]:
        lines.append(
            f"| {e['target']} | {e['axons']}x{e['neurons']}, B={e['banks']} | {e['preset']} "
            f"| {e['weight_width']}-bit ({e['weight_bits'] // 1024} kbit) | {e['luts']} | {e['ffs']} "
            f"| {e['brams']} | {e['fmax_mhz']:.1f} | {', '.join(f'{f:.1f}' for f in e['fmax_per_seed'])} |")
    tools = "; ".join(f"{name} {version}" for name, version in meta["packages"].items())
    lines += ["",
              "Fmax is set by (nextpnr's critical path in each `seed*/report.json`) the `read` stage: the "
              "memories' read data (block RAM without output registers; on ECP5 the weight memory's, about "
              "5.8 ns clock to output) through the add of the input (on ECP5 the Loihi tile's input sum) "
              "into the `integrate` register; on iCE40 with seed 2, about as long, the output queue: its "
              "read pointer through the head's mux and the remaining-ids mask to the last-beat decision "
              "(with `o.ready`) and back into the pointer and the sent mask. The update is three registered"
              " stages (`read`: the input add or the leak's multiply; `integrate`: the rest of the leak and"
              " the step's input; `fire`: overflow, compare and reset, compared beside the saturation), and"
              " a group issues only while the output queue has a slot for it, so `o.ready` no longer "
              "reaches the memories. Before (git bdbd44a, one update stage from the read registers through "
              "the arithmetic into the state write port and, through the output's stall, into the memories'"
              " enables): 2924 LUT, 973 FF, 8 BRAM, 33.5 MHz on ECP5; 561 LUT, 310 FF, 19 BRAM, 44.3 MHz on"
              " iCE40.",
              "",
              "Counting as in `bench/fpga.py` (LUT/FF/BRAM from the Yosys netlist by cell type, Fmax "
              "from nextpnr's `--report` JSON, median over seeds "
              f"{', '.join(map(str, meta['seeds']))}). Each tile is built in `TileHarness`: `i`/`o` "
              "on pins, `config` from a shift register (one FF per config bit: "
              + ", ".join(f"{e['config_bits']} for {e['name']}" for e in results["tiles"])
              + "), `readback` folded into an XOR chain (one FF and about one LUT per 3 bits); "
              "those FFs and LUTs are included above. Presets: "
              + "; ".join(f"{name} = `{text}`" for name, text in meta["presets"].items()) + ".",
              "",
              f"git {meta['git_revision']}"
              f"{' (with uncommitted changes)' if meta['git_tracked_changes'] else ''}; "
              f"{meta['date']}; {tools} ({meta['tools']['yosys']}); wall time {meta['wall_time_s']:.0f} s "
              f"with {meta['workers']} workers."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":      # the suite's options (targets, seeds, workers) live in bench.run
    raise SystemExit("run this suite with: python -m bench.run --suite crossbar")
