"""Memory suite: the shared memory network's area and Fmax on ECP5, beside the private-bank PE.

``python -m bench.run --suite memory`` writes ``bench/results/memory.json`` and ``memory.md``
(``--quick``: one small memory, one seed, output in ``build/bench/quick/``; ``--memory-part pes``:
the Per PE rows alone, the network rows kept as recorded).

* The network alone: :class:`hw.banked_memory.BankedMemory` at several (ports, banks, words),
  meta_width 1, depth 3, lock_entries 4, with its counters.
* Per PE: ``RipplePE(2, mem_depth=64)`` (a private 64-word bank) against
  ``RipplePE(2, shared_words=16384)`` (a request/response port to the shared memory), with and
  without Ripple's operators.

Every design is built in :class:`PinHarness`: all its input ports (hundreds to thousands of
bits, more than the package's pins) come from one shift register fed by a pin, and all its
outputs are folded three bits per XOR stage into a flip-flop chain ending in a pin. So every
input is a register and every output observed, and nothing is optimised away. The harness's
own flip-flops and LUTs are counted in the totals; the tables also give the figures net of
them (FF exactly, LUT as an estimate of one LUT per fold stage).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

from amaranth.hdl import Cat, Elaboratable, Module, Signal, Value
from amaranth.lib import wiring

from hw.banked_memory import BankedMemory
from ripple_core.pe.rtl import RipplePE

from . import fpga
from .common import QUICK_RESULTS, RESULTS, git_stamp, now, relative_path, run_jobs, write_results

TARGET = "ecp5-25f"
LARGE_TARGET = "ecp5-85f"       # for a network that does not fit the 25F's 24k LUTs
SEEDS = "1"
# (ports, banks, words, target). 33 ports need about 26.7k LUTs, more than the 25F has.
# (73, 8, 16384), the 8x9 fabric's 72 pe tiles plus the control port, is not built: its
# synthesis alone would take about 10 minutes and its placement longer (see memory.md).
MEMORIES = ((9, 4, 4096, TARGET), (17, 8, 16384, TARGET), (33, 8, 16384, LARGE_TARGET))
QUICK_MEMORIES = ((5, 2, 1024, TARGET),)
# Every point is synthesised with classic ABC (``fpga.build(classic_abc=True)``), because the
# default abc9 flow overflows YoWASP's call stack from 17 ports on; the points small enough for
# abc9 are built with it too, to show what the flow changes.
ABC9_MEMORIES = ((9, 4, 4096, TARGET),)
MEMORY_OPTIONS = {"meta_width": 1, "depth": 3, "lock_entries": 4}
PE_DEPTH = 2
PRIVATE_WORDS = 64
SHARED_WORDS = 16384
PES = tuple((bank, ops) for bank in ("private", "shared") for ops in (True, False))


class PinHarness(Elaboratable):
    """A component with every input port fed from a shift register (pin ``shift_in``) and every
    output port folded, three bits per XOR stage, into flip-flops ending in pin ``fold_out``.

    Adds one FF per input bit and one FF (and about one LUT4) per three output bits.
    """

    def __init__(self, design: wiring.Component):
        self.design = design
        self.shift_in = Signal()
        self.fold_out = Signal()
        inputs, outputs = [], []
        for _, member, value in design.signature.flatten(design):
            (inputs if member.flow == wiring.In else outputs).append(Value.cast(value))
        self.inputs, self.outputs = inputs, outputs
        self.input_bits = sum(len(v) for v in inputs)
        self.output_bits = sum(len(v) for v in outputs)
        self.fold_stages = math.ceil(self.output_bits / 3)

    @property
    def ports(self) -> list:
        return [self.shift_in, self.fold_out]

    @property
    def harness_ffs(self) -> int:
        return self.input_bits + self.fold_stages

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.design
        shift = Signal(self.input_bits)
        m.d.sync += shift.eq(Cat(self.shift_in, shift[:-1]))
        m.d.comb += Cat(*self.inputs).eq(shift)
        observed = Cat(*self.outputs)
        fold = Signal(self.fold_stages)
        for stage in range(self.fold_stages):
            previous = fold[stage - 1] if stage else self.shift_in
            m.d.sync += fold[stage].eq(previous ^ observed[3 * stage:3 * stage + 3].xor())
        m.d.comb += self.fold_out.eq(fold[-1])
        return m


def critical_path(report_path: Path) -> dict:
    """Start and end cell of nextpnr's critical path, its delay split and logic levels."""
    report = json.loads(Path(report_path).read_text())
    paths = report.get("critical_paths") or []
    if not paths:
        return {}
    path = min(paths, key=lambda p: 1e9 if "clk" not in (p.get("from", "") + p.get("to", "")).lower()
               else 0)["path"]
    logic = [step for step in path if step.get("type") == "logic"]
    routing = [step for step in path if step.get("type") == "routing"]
    return {"from": path[0].get("from", {}).get("cell", ""), "to": path[-1].get("to", {}).get("cell", ""),
            "delay_ns": round(sum(step.get("delay", 0) for step in path), 2),
            "logic_ns": round(sum(step.get("delay", 0) for step in logic), 2),
            "routing_ns": round(sum(step.get("delay", 0) for step in routing), 2),
            "logic_levels": len(logic)}


def _finish(entry: dict, harness: PinHarness, result, started: float) -> dict:
    entry.update(result.to_dict())
    entry["flow"] = "abc" if entry.pop("classic_abc") else "abc9"
    entry.update(input_bits=harness.input_bits, output_bits=harness.output_bits,
                 harness_ffs=harness.harness_ffs, harness_luts_est=harness.fold_stages,
                 net_ffs=result.ffs - harness.harness_ffs,
                 net_luts_est=result.luts - harness.fold_stages,
                 critical_paths=[critical_path(report) for report in result.reports],
                 seconds=round(time.perf_counter() - started, 1))
    entry["build_dir"] = relative_path(entry["build_dir"])
    entry["netlist"] = relative_path(entry["netlist"])
    entry["reports"] = [relative_path(report) for report in entry["reports"]]
    return entry


def memory_job(ports: int, banks: int, words: int, target: str, classic_abc: bool,
               seeds: tuple[int, ...], build_root: str) -> dict:
    """Worker: one BankedMemory in its harness, synthesised once and placed once per seed."""
    started = time.perf_counter()
    harness = PinHarness(BankedMemory(ports, banks, words, **MEMORY_OPTIONS))
    name = f"banked_memory_p{ports}_b{banks}_w{words}"
    name += "_abc" if classic_abc else ""
    entry = {"part": "memory", "ports": ports, "banks": banks, "words": words, **MEMORY_OPTIONS,
             "classic_abc": classic_abc}
    try:
        result = fpga.build(harness, name, target, ports=harness.ports, seeds=seeds,
                            build_root=Path(build_root), classic_abc=classic_abc)
    except fpga.ToolError as error:  # e.g. more cells than the part has: recorded, not fatal
        entry["flow"] = "abc" if entry.pop("classic_abc") else "abc9"
        netlist = Path(build_root) / target / name / "synth.json"
        synthesised = synthesis_figures(netlist, name, target, harness) if netlist.exists() else {}
        return {**entry, **synthesised, "target": target, "error": str(error).splitlines()[-1][:300],
                "seconds": round(time.perf_counter() - started, 1)}
    return _finish(entry, harness, result, started)


def synthesis_figures(netlist: Path, name: str, target: str, harness: PinHarness) -> dict:
    """LUT/FF/BRAM of a synthesised netlist that was not placed and routed (no Fmax)."""
    luts, ffs, brams = fpga._count_resources(fpga.TARGETS[target], fpga.cell_counts(netlist, name))
    return {"luts": luts, "ffs": ffs, "brams": brams, "input_bits": harness.input_bits,
            "output_bits": harness.output_bits, "harness_ffs": harness.harness_ffs,
            "harness_luts_est": harness.fold_stages, "net_ffs": ffs - harness.harness_ffs,
            "net_luts_est": luts - harness.fold_stages}


def pe_job(bank: str, ripple_ops: bool, target: str, classic_abc: bool, seeds: tuple[int, ...],
           build_root: str) -> dict:
    """Worker: one RipplePE with a private bank or a shared-memory port, in its harness."""
    started = time.perf_counter()
    memory = {"mem_depth": PRIVATE_WORDS} if bank == "private" else {"shared_words": SHARED_WORDS}
    harness = PinHarness(RipplePE(PE_DEPTH, ripple_ops=ripple_ops, **memory))
    name = f"ripple_pe_{bank}_{'ops' if ripple_ops else 'noops'}{'_abc' if classic_abc else ''}"
    result = fpga.build(harness, name, target, ports=harness.ports, seeds=seeds,
                        build_root=Path(build_root), classic_abc=classic_abc)
    entry = {"part": "pe", "bank": bank, "ripple_ops": ripple_ops, "depth": PE_DEPTH, **memory,
             "classic_abc": classic_abc}
    return _finish(entry, harness, result, started)


def _describe(entry: dict) -> str:
    if "error" in entry:
        return f"build {entry['target']} memory p={entry['ports']}: failed: {entry['error']}"
    if entry["part"] == "memory":
        what = f"memory p={entry['ports']} b={entry['banks']} w={entry['words']} {entry['flow']}"
    else:
        what = f"pe {entry['bank']} ripple_ops={entry['ripple_ops']} {entry['flow']}"
    return (f"build {entry['target']} {what}: {entry['luts']} LUT {entry['ffs']} FF {entry['brams']} BRAM "
            f"{entry['fmax_mhz']:.1f} MHz ({entry['seconds']:.0f} s)")


def run_suite(args) -> dict:
    quick = args.quick
    only_pes = getattr(args, "memory_part", "all") == "pes"
    if only_pes and quick:
        raise SystemExit("--memory-part pes re-measures the recorded table's PE rows; it has no --quick")
    seeds = (fpga.DEFAULT_SEED,) if quick else tuple(int(s) for s in (args.seeds or SEEDS).split(","))
    out_dir = QUICK_RESULTS if quick else RESULTS
    started = time.perf_counter()
    meta = {"date": None, **fpga.tool_metadata()}
    stamp = git_stamp()         # the revision the builds are made from: before the run, not after
    build_root = str(fpga.BUILD_ROOT)
    if quick:
        memories, abc9_memories, pes = QUICK_MEMORIES, (), ()
    elif only_pes:
        return _rerun_pes(args, seeds, stamp, meta, started, build_root)
    else:
        memories, abc9_memories, pes = MEMORIES, ABC9_MEMORIES, PES
    jobs = [(memory_job, *point, True, seeds, build_root) for point in memories]
    jobs += _pe_jobs(pes, seeds, build_root)
    jobs += [(memory_job, *point, False, seeds, build_root) for point in abc9_memories]
    done = run_jobs(jobs, args.jobs, describe=_describe)
    meta.update(date=now(), **stamp, seeds=list(seeds), quick=quick, workers=args.jobs,
                target=TARGET, memory_options=MEMORY_OPTIONS,
                targets={name: {"family": spec.family, "device_flags": list(spec.device_flags),
                                "package": spec.package, "freq_constraint_mhz": spec.freq_mhz}
                         for name, spec in fpga.TARGETS.items() if name in (TARGET, LARGE_TARGET)},
                wall_time_s=round(time.perf_counter() - started, 1))
    results = {"meta": meta,
               "memories": sorted((e for e in done if e["part"] == "memory"),
                                  key=lambda e: (e["flow"], e["ports"], e["banks"], e["words"])),
               "pes": _pe_rows(e for e in done if e["part"] == "pe")}
    figures, _ = write_results(out_dir, "memory", results, markdown(results))
    print(markdown(results))
    print(f"wrote {relative_path(figures)} and memory.md in {meta['wall_time_s']:.1f} s")
    return results


def _pe_jobs(pes, seeds, build_root) -> list[tuple]:
    """The PE points, each with the classic abc flow, then with abc9."""
    return [(pe_job, bank, ops, TARGET, classic, seeds, build_root) for classic in (True, False)
            for bank, ops in pes]


def _pe_rows(entries) -> list[dict]:
    """The PE rows in the table's order: flow, bank, with Ripple's operators first."""
    return sorted(entries, key=lambda e: (e["flow"], e["bank"], not e["ripple_ops"]))


def _rerun_pes(args, seeds, stamp, meta, started, build_root) -> dict:
    """The Per PE rows again, with the network rows kept as recorded (their 17- and 33-port points
    did not finish routing in an hour); the PE rows carry their own revision and date
    (``pes_meta``)."""
    figures = RESULTS / "memory.json"
    if not figures.exists():
        raise SystemExit(f"{relative_path(figures)} is missing: run the whole suite first "
                         "(python -m bench.run --suite memory)")
    results = json.loads(figures.read_text())
    jobs = _pe_jobs(PES, seeds, build_root)
    done = run_jobs(jobs, args.jobs, describe=_describe)
    meta.update(date=now(), **stamp, seeds=list(seeds), workers=args.jobs,
                wall_time_s=round(time.perf_counter() - started, 1))
    results["pes"] = _pe_rows(done)
    results["pes_meta"] = meta
    write_results(RESULTS, "memory", results, markdown(results))
    print(markdown(results))
    print(f"wrote {relative_path(figures)} and memory.md (the PE rows) in {meta['wall_time_s']:.1f} s")
    return results


# ---------------------------------------------------------------------------------------------
# Markdown


def _fmax(entry: dict) -> str:
    per_seed = entry["fmax_per_seed"]
    text = f"{entry['fmax_mhz']:.1f}"
    return text if len(per_seed) == 1 else f"{text} ({', '.join(f'{f:.1f}' for f in per_seed)})"


def _path(entry: dict) -> str:
    paths = [p for p in entry.get("critical_paths", []) if p]
    if not paths:
        return ""
    p = paths[0]
    return (f"`{p['from'][:40]}` -> `{p['to'][:40]}`, {p['logic_levels']} logic levels, "
            f"{p['logic_ns']} ns logic + {p['routing_ns']} ns routing")


def _pes_stamp(pes_meta: dict | None) -> list[str]:
    """The line that dates PE rows measured apart from the network's (``--memory-part pes``)."""
    if not pes_meta:
        return []
    changes = " (with uncommitted changes)" if pes_meta["git_tracked_changes"] else ""
    return [f"Measured apart from the network rows (`python -m bench.run --suite memory --memory-part "
            f"pes`): git {pes_meta['git_revision']}{changes}, {pes_meta['date']}, seeds "
            f"{', '.join(map(str, pes_meta['seeds']))}, wall time {pes_meta['wall_time_s']:.0f} s.", ""]


def markdown(results: dict) -> str:
    meta = results["meta"]
    options = meta["memory_options"]
    lines = ["# The shared memory network on ECP5, beside the private-bank PE", "",
             "Flow `abc` = LUTs mapped by classic `abc -lut 4` (LUT4s only), used for every point "
             "because synth_ecp5's default `abc9` exhausts YoWASP's WebAssembly call stack (in its "
             "XAIGER2 writer) from 17 ports on; `abc9` = the default flow of the other suites (LUT5-7 "
             "from PFUMX/L6MUX21, which count 0), shown where it runs. Compare rows of one flow.", "",
             "## The memory network alone", "",
             f"`BankedMemory(ports, banks, words, meta_width={options['meta_width']}, "
             f"depth={options['depth']}, lock_entries={options['lock_entries']})`, 32-bit words, with its "
             "per-bank counters. LUT and FF include the pin harness; net = minus the harness (FF exact, "
             "LUT estimated as one LUT4 per fold stage). Per bank / per port: net LUT divided by banks / "
             "by ports.", "",
             "| target | flow | ports | banks | words | LUT | net LUT | FF | net FF | BRAM | Fmax (MHz) "
             "| LUT/bank | LUT/port |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for e in results["memories"]:
        if "error" in e and "luts" not in e:
            lines.append(f"| {e['target']} | {e['flow']} | {e['ports']} | {e['banks']} | {e['words']} "
                         f"| not built: {e['error']} | | | | | | | |")
            continue
        fmax = "not routed" if "error" in e else _fmax(e)
        lines.append(
            f"| {e['target']} | {e['flow']} | {e['ports']} | {e['banks']} | {e['words']} | {e['luts']} "
            f"| {e['net_luts_est']} | {e['ffs']} | {e['net_ffs']} | {e['brams']} | {fmax} "
            f"| {e['net_luts_est'] / e['banks']:.0f} | {e['net_luts_est'] / e['ports']:.0f} |")
    lines += ["", "## Per PE", "",
              f"`RipplePE({PE_DEPTH}, ...)`: private = `mem_depth={PRIVATE_WORDS}` (its own bank); "
              f"shared = `shared_words={SHARED_WORDS}` (a `mem_req`/`mem_resp` port; the memory not "
              "included). Same harness and counting.", "",
              *_pes_stamp(results.get("pes_meta")),
              "| flow | PE | ripple_ops | LUT | net LUT | FF | net FF | BRAM | Fmax (MHz) |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for e in results["pes"]:
        lines.append(
            f"| {e['flow']} | {e['bank']} | {e['ripple_ops']} | {e['luts']} | {e['net_luts_est']} "
            f"| {e['ffs']} | {e['net_ffs']} | {e['brams']} | {_fmax(e)} |")
    lines += ["", "Critical paths (nextpnr, first seed):", ""]
    for e in results["memories"]:
        if "error" in e:
            continue
        lines.append(f"- memory p={e['ports']} b={e['banks']} ({e['target']}, {e['flow']}): {_path(e)}")
    for e in results["pes"]:
        lines.append(f"- pe {e['bank']} ripple_ops={e['ripple_ops']} ({e['flow']}): {_path(e)}")
    conclusions = CONCLUSIONS if not meta["quick"] else []
    if conclusions:
        lines += ["", "## Conclusions", "", *conclusions]
    tools = "; ".join(f"{name} {version}" for name, version in meta["packages"].items())
    lines += ["",
              "Counting as in `bench/fpga.py` (LUT/FF/BRAM from the Yosys netlist by cell type: LUT = LUT4 + "
              "2 x CCU2C + 4 x TRELLIS_DPR16X4, BRAM = DP16KD; Fmax from nextpnr's `--report` JSON, median "
              f"over seeds {', '.join(map(str, meta['seeds']))}). Each design is built in "
              "`bench.memory.PinHarness`: every input from one shift register, every output folded into "
              "an XOR chain.",
              "",
              f"git {meta['git_revision']}"
              f"{' (with uncommitted changes)' if meta['git_tracked_changes'] else ''}; "
              f"{meta['date']}; {tools} ({meta['tools']['yosys']}); wall time {meta['wall_time_s']:.0f} s "
              f"with {meta['workers']} worker(s)."]
    for note in results.get("notes", []):          # said of a recorded run, kept in its figures
        lines += ["", note]
    return "\n".join(lines) + "\n"


# Written after reading the recorded figures (bench/results/memory.json); only for the full run.
CONCLUSIONS: list[str] = [
    "- Per port the network costs about 470 LUT at 9 ports (4 banks), 710 at 17 and 790 at 33 (8 banks; "
    "the last two synthesis only), and it grows faster than the ports: LUT/bank goes 1056, 1503, 3261. "
    "Its FFs are about 140-165 per port.",
    "- A tile's share against a private bank (flow abc, net LUT; the PE rows re-measured at a later "
    "revision than the network's): with Ripple's operators, private 2982 vs shared 3009 + 470..790 = "
    "3479..3799, so the shared tile is 500-820 LUT larger (the shared PE also holds its ring buffer and "
    "the ACQUIRE/RELEASE path); without them, private 1924 vs shared 1564 + 470..790 = 2034..2354, "
    "110-430 LUT larger. FF: 949 (759 without operators) vs 955 (648) + 140..165. BRAM: 1 per private "
    "64-word bank vs 32 for 16384 shared words (about 2 per port at 17 ports).",
    "- Fmax at 9 ports: the network alone 47.3 (abc) / 49.0 MHz (abc9); the shared-port PE with "
    "Ripple's operators 60.7 / 72.2 MHz (74.9 / 80.0 without), the private-bank PE with them 66.7 / "
    "68.7 MHz. So in a fabric of shared-port PEs the network is the slowest block, by 13 (abc) to 23 "
    "MHz (abc9). Its critical path runs from a request's address register through decode, the bank's "
    "round-robin choice and the granted row into the bank's atomic directory (the held-row registers' "
    "enable), 17-22 logic levels, 71-78% of the delay routing.",
    "- A registered request stage could gain up to those 13-23 MHz at 9 ports (up to the PEs' 61-72 "
    "MHz; other fabric blocks not measured here) for a cycle more latency. At 17 ports or more it is not "
    "measured: the 17-port network (12.4k LUTs, half the 25F) had not finished routing after 12 minutes "
    "(overuse still 9151), which says the all-to-all muxes are congested, not how fast they would be.",
]


if __name__ == "__main__":      # the suite's options (targets, seeds, workers) live in bench.run
    raise SystemExit("run this suite with: python -m bench.run --suite memory")
