"""RSN programs in phases: the digits MLP and square GEMMs on 2x2, 3x3 and 4x4 fabrics.

``python -m bench.rsn_phases`` lowers each workload with :func:`dense.lower_network` onto the
default tile mix (``mem mac alu`` in reading order, as the sweep family builds it) and measures:

* **RTL** (the native tier, host never stalling): the fabric's cycle counter for the whole
  workload, every output checked against numpy; images (vectors) per 1,000 cycles;
* **mac utilisation**: per mac tile, the share of the run's cycles in which it takes an operand
  (the operands a lane takes follow from the network and the vectors it runs), against the
  **roofline** of the fabric (every mac tile taking one operand per cycle) and the host port's
  bound (one weight word per cycle, every pass);
* **cycle model** and **transition bubbles** on the first three passes of the workload (the cycle
  model replays some 4,000 cycles per second, too slow for millions): its error against the RTL
  run of those two passes, and per mac tile the cycles between its last operand of one phase and
  its first of the next (:mod:`rsn.transitions`), against what reloading an image per phase
  would cost at least (the phase's image words, one per cycle on ``ctrl``, and ``done``'s latency).

The GEMM is C = X W^T with X and W random int8 (N x N, seed 1): N vectors through one dense
layer of N outputs, no bias, exact int32 sums. ``wide640`` is one wider than a mac buffer: 96
vectors of 640 through 64 outputs, the layer split in three pieces whose partial sums the macs
add (docs/dense.md); a fabric of one lane refuses it. Writes ``bench/results/rsn_phases.json``
and ``.md``. ``--quick``: the digits MLP on 12 images and the 64 x 64 GEMM only, into build/.
``--workloads NAME ... --merge`` measures those workloads and replaces their points in the
recorded results.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from collections import defaultdict

import numpy as np

from dense import DenseLayer, DenseNetwork, LoweringError, lower_network
from rivulet.sim.fabric_run import run_many_on_rtl
from rivulet.sweep.spec import fabric_description
from rsn.cycle_model import predict_cycles
from rsn.fabric import DONE_LATENCY
from rsn.fabric_spec import parse_fabric
from rsn.image import split_packets
from rsn.isa import Opcode
from rsn.program import compile_program
from rsn.transitions import transition_bubbles

from .common import QUICK_RESULTS, REPO, RESULTS, git_stamp, now, write_results

__all__ = ["fabric", "measure", "markdown", "main"]

GRIDS = (2, 3, 4)
GEMM_SIZES = (64, 128, 256)
WIDE = (96, 640, 64)            # vectors, inputs, outputs: wider than the mac buffer of 256
MODEL_PASSES = 3
SEED = 1
DIGITS = REPO / "examples" / "digits_mlp.py"


def fabric(size: int):
    """A size x size grid of the default tile mix in reading order, host ports on the corners."""
    return parse_fabric(fabric_description({"rows": size, "cols": size, "tiles": "mem mac alu",
                                            "mem": {"depth": 1024}, "mac": {"depth": 256}}),
                        f"bench {size}x{size}")


def _digits_module():
    loader = importlib.util.spec_from_file_location("digits_mlp", DIGITS)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def workloads(quick: bool) -> list[dict]:
    """Each workload: its network, inputs, the numpy reference and (digits) the labels."""
    digits = _digits_module()
    quantised, images, labels, float_accuracy = digits.trained()
    if quick:
        images, labels = images[:12], labels[:12]
    found = [{"name": "digits", "network": quantised.network, "inputs": images, "labels": labels,
              "float_accuracy": float_accuracy}]
    rng = np.random.default_rng(SEED)
    for size in GEMM_SIZES[:1] if quick else GEMM_SIZES:
        weights = rng.integers(-128, 128, size=(size, size))
        inputs = rng.integers(-128, 128, size=(size, size))
        found.append({"name": f"gemm{size}", "network": DenseNetwork((DenseLayer(weights, None),), 1),
                      "inputs": inputs})
    if not quick:
        vectors, width, outputs = WIDE
        weights = rng.integers(-128, 128, size=(outputs, width))
        inputs = rng.integers(-128, 128, size=(vectors, width))
        found.append({"name": f"wide{width}", "network": DenseNetwork((DenseLayer(weights, None),), 1),
                      "inputs": inputs})
    for workload in found:      # the example's int8 arithmetic in numpy, not dense/'s
        workload["expected"] = digits.int8_logits(workload["network"], workload["inputs"])
    return found


def _operands_per_vector(network, buffer_words: int) -> int:
    """Operands a mac takes for one vector: each layer's LOAD of its input and its rows' DOTs;
    a layer split into pieces also loads a one per piece and adds each row's pieces."""
    total = 0
    for layer in network.layers:
        width = layer.inputs + (layer.bias is not None)
        pieces = -(-width // buffer_words)
        total += (width + (pieces if pieces > 1 else 0)) * (layer.outputs + 1)
    return total


def _phase_words(compiled) -> dict[int, int]:
    """Image words of each phase's micro-op packets (what a reload of that phase would send)."""
    from rsn.route import switch_uop_phases
    tiles = compiled.routing.placement.tiles
    phases = {("switch", tile): iter(at) for tile, at in switch_uop_phases(compiled.routing.routes).items()}
    phases.update({("fu", tiles[node.name]): iter(node.phase_of_uops())
                   for node in compiled.program.graph.fu_nodes()})
    words = defaultdict(int)
    packets = split_packets(compiled.image)
    ends = [packet.offset for packet in packets[1:]] + [len(compiled.image)]
    for packet, end in zip(packets, ends, strict=True):
        if packet.opcode not in (Opcode.SWITCH, Opcode.FU):
            continue
        unit = "switch" if packet.opcode == Opcode.SWITCH else "fu"
        targets = packet.tiles(compiled.spec.rows, compiled.spec.cols)
        packet_phases = [next(phases[unit, tile]) for tile in targets
                         for _ in range(len(packet.bodies) * packet.repeat)]
        words[packet_phases[0]] += end - packet.offset
    return dict(words)


def _transition_name(before: str, after: str, same_pass: bool) -> str:
    """"fetch -> compute", "compute -> compute", "compute -> fetch (next layer)" or "(next pass)";
    a split layer adds "compute -> fetch (next piece)", "compute -> ones", "ones -> reduce" and
    "reduce -> fetch"."""
    (before_step, before_layer), (after_step, after_layer) = before.split(), after.split()
    name = f"{before_step} -> {after_step}"
    if after_step == "fetch":
        name += (" (next pass)" if not same_pass else " (next piece)" if before_layer == after_layer
                 else " (next layer)")
    return name


def _bubbles(lowered, compiled, prediction) -> dict:
    """The mac tiles' transitions, grouped by the kinds of phase they leave and enter."""
    roles = lowered.phase_roles
    words = _phase_words(compiled)
    groups = defaultdict(list)
    reload = defaultdict(list)
    for transition in transition_bubbles(compiled, prediction):
        if transition.kind != "mac":
            continue
        passes = lowered.phase_passes
        name = _transition_name(roles[transition.before], roles[transition.after],
                                passes[transition.before] == passes[transition.after])
        if passes[transition.after] == 0:
            name = f"first pass: {name}"
        groups[name].append(transition.bubble)
        reload[name].append(words.get(transition.after, 0) + DONE_LATENCY)
    summary = {}
    for name, bubbles in sorted(groups.items()):
        summary[name] = {"count": len(bubbles), "mean": round(statistics.fmean(bubbles), 1),
                         "max": max(bubbles), "reload_floor": round(statistics.fmean(reload[name]), 1)}
    return summary


def _measure_point(workload: dict, size: int) -> dict:
    started = time.perf_counter()
    spec = fabric(size)
    network, inputs, expected = workload["network"], workload["inputs"], workload["expected"]
    name = f"{workload['name']}-{size}x{size}"
    lowered = lower_network(network, inputs, spec, expected=expected, name=name)
    head = MODEL_PASSES * lowered.lanes
    short = lower_network(network, inputs[:head], spec, expected=expected[:head],
                          name=f"{name}-{MODEL_PASSES}-passes")
    whole, part = compile_program(lowered.program, spec), compile_program(short.program, spec)
    compile_seconds = time.perf_counter() - started
    rtl_started = time.perf_counter()
    results = run_many_on_rtl([whole, part], profiles=["no_stall"] * 2, seeds=[SEED] * 2,
                              case=f"bench-rsn-phases-{name}")
    rtl_seconds = time.perf_counter() - rtl_started
    outputs = lowered.outputs(results[0].outputs)
    if not np.array_equal(outputs, expected) or not np.array_equal(short.outputs(results[1].outputs),
                                                                   expected[:head]):
        raise AssertionError(f"{name}: the RTL outputs differ from numpy")
    model_started = time.perf_counter()
    prediction = predict_cycles(part, max_cycles=10 * results[1].cycles + 10_000)
    model_seconds = time.perf_counter() - model_started
    cycles, vectors = results[0].cycles, len(inputs)
    macs = [tile for tile in spec.all_tiles() if spec.kind(tile) == "mac"]
    per_vector = _operands_per_vector(network, spec.parameters("mac").depth)
    lane_vectors = [len(range(lane, vectors, lowered.lanes)) for lane in range(lowered.lanes)]
    shares = [count * per_vector / cycles for count in lane_vectors]
    products = vectors * sum(layer.inputs * layer.outputs for layer in network.layers)
    weight_words = sum((layer.inputs + (layer.bias is not None)) * layer.outputs for layer in network.layers)
    passes = -(-vectors // lowered.lanes)
    entry = {
        "workload": workload["name"], "grid": f"{size}x{size}", "lanes": lowered.lanes,
        "mac_tiles": len(macs),
        "vectors": vectors, "phases": len(lowered.phase_roles), "image_words": len(whole.image),
        "cycles": cycles, "vectors_per_kcycle": round(1000 * vectors / cycles, 3),
        "mac_share_min": round(min(shares), 4), "mac_share_max": round(max(shares), 4),
        "mac_stall_share": round(max(results[0].stalls.get(tile, 0) for tile in macs) / cycles, 4),
        "roofline_cycles": -(-products // len(macs)), "host_bound_cycles": passes * weight_words,
        "model_passes_vectors": head, "model_rtl_cycles": results[1].cycles,
        "model_cycles": prediction.cycles,
        "model_error_pct": round(100 * (prediction.cycles - results[1].cycles) / results[1].cycles, 3),
        "bubbles": _bubbles(short, part, prediction), "compile_s": round(compile_seconds, 1),
        "rtl_s": round(rtl_seconds, 1), "model_s": round(model_seconds, 1),
    }
    entry["roofline_share"] = round(entry["roofline_cycles"] / cycles, 4)
    if "labels" in workload:
        labels = workload["labels"]
        entry["accuracy"] = {"float": round(workload["float_accuracy"], 4),
                             "int8_reference": round(float(np.mean(expected.argmax(axis=1) == labels)), 4),
                             "rtl": round(float(np.mean(outputs.argmax(axis=1) == labels)), 4)}
    return entry


def measure(quick: bool = False, grids=GRIDS, names=None) -> dict:
    started = time.perf_counter()
    entries = []
    for workload in workloads(quick):
        if names and workload["name"] not in names:
            continue
        for size in grids:
            try:
                entry = _measure_point(workload, size)
            except LoweringError as error:
                print(f"{workload['name']} {size}x{size}: refused: {error}", flush=True)
                entries.append({"workload": workload["name"], "grid": f"{size}x{size}",
                                "refused": str(error)})
                continue
            print(f"{entry['workload']} {entry['grid']}: {entry['cycles']:,} cycles, mac share "
                  f"{entry['mac_share_max']:.3f}, model error {entry['model_error_pct']:+.2f}%", flush=True)
            entries.append(entry)
    meta = {"date": now(), **git_stamp(), "profile": "no_stall", "seed": SEED, "model_passes": MODEL_PASSES,
            "quick": quick, "wall_time_s": round(time.perf_counter() - started, 1)}
    return {"meta": meta, "points": entries}


def _share_text(entry: dict) -> str:
    low, high = entry["mac_share_min"], entry["mac_share_max"]
    return f"{100 * high:.1f}%" if low == high else f"{100 * low:.1f}-{100 * high:.1f}%"


def markdown(results: dict) -> str:
    meta = results["meta"]
    points = [entry for entry in results["points"] if "refused" not in entry]
    refused = [entry for entry in results["points"] if "refused" in entry]
    lines = [
        "# RSN phases: the digits MLP and GEMMs, on 2x2, 3x3 and 4x4 fabrics", "",
        f"{meta['date']}, git {meta['git_revision'][:7]}; `python -m bench.rsn_phases` "
        f"({meta['wall_time_s']:,.0f} s). Fabrics: the default tile mix (`mem mac alu` in reading "
        "order, mem depth 1024, mac depth 256, host ports on the four corners); programs from "
        "`dense.lower_network` (docs/dense.md): one lane per mem, mac and alu, each layer's weights "
        "multicast from the host once per pass. RTL: the native tier with a host that never stalls "
        "(`no_stall`), the fabric's own cycle counter; every output equals numpy's.", "",
        *[f"The {', '.join(each['workloads'])} points are from a later run ({each['date']}, git "
          f"{each['git_revision'][:7]}, {each['wall_time_s']:,.0f} s; `--workloads ... --merge`).\n"
          for each in meta.get("merged", [])],
        "**mac share**: the share of the run's cycles in which a mac tile takes an operand (a lane's "
        "operands follow from the network and its vectors). **Roofline**: every mac tile of the fabric "
        "taking one operand per cycle (products / mac tiles). **Host bound**: one weight word per "
        "cycle on the host port, every pass. **Model error**: the cycle model against the RTL on the "
        f"workload's first {meta['model_passes']} passes.", "",
        "| workload | grid | lanes / mac tiles | vectors | phases | image words | cycles "
        "| vectors per 1k cycles | mac share | mac stalled | roofline cycles | of roofline | host bound "
        "| model error |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in points:
        lines.append(
            f"| {entry['workload']} | {entry['grid']} | {entry['lanes']} / {entry['mac_tiles']} | "
            f"{entry['vectors']} | {entry['phases']:,} | {entry['image_words']:,} | {entry['cycles']:,} | "
            f"{entry['vectors_per_kcycle']:.3f} | {_share_text(entry)} | "
            f"{100 * entry['mac_stall_share']:.1f}% | "
            f"{entry['roofline_cycles']:,} | {100 * entry['roofline_share']:.1f}% | "
            f"{entry['host_bound_cycles']:,} | {entry['model_error_pct']:+.2f}% |")
    for entry in refused:
        lines += ["", f"{entry['workload']} on {entry['grid']}: refused before placement: {entry['refused']}"]
    for entry in points:
        if "accuracy" in entry:
            accuracy = entry["accuracy"]
            lines += ["", f"Digits on {entry['grid']}: {entry['vectors']} test images; accuracy float "
                      f"{100 * accuracy['float']:.1f}%, int8 reference "
                      f"{100 * accuracy['int8_reference']:.1f}%, "
                      f"RTL {100 * accuracy['rtl']:.1f}% (every logit equal to the reference)."]
    lines += ["", "## Transition bubbles on the mac tiles", "",
              f"Cycle model, first {meta['model_passes']} passes: cycles between a mac's last operand of "
              "one phase and its first of the next (0: no bubble). *Reload floor*: what a reload of the "
              "image for the next phase would cost at least: its micro-op words, one per cycle on "
              "`ctrl`, plus `done`'s latency.", "",
              "| workload | grid | transition | count | mean bubble | max | reload floor |",
              "|---|---|---|---:|---:|---:|---:|"]
    for entry in points:
        for name, figures in entry["bubbles"].items():
            lines.append(f"| {entry['workload']} | {entry['grid']} | {name} | {figures['count']} | "
                         f"{figures['mean']:.1f} | {figures['max']} | {figures['reload_floor']:.1f} |")
    lines += ["", EXPLANATION, ""]
    return "\n".join(lines)


EXPLANATION = """\
Why the bubbles are what they are. **First pass**: the image is still being dispatched (one
word per cycle on `ctrl`), so the first phases' units wait for their micro-ops; from the second
pass on, the dispatch is ahead and the queues hold the next phases' micro-ops.
**fetch -> compute**: the layer's input is in the mac's buffer and its compute micro-op waits in
the queue, so the mac that loads last takes its first weight row the next cycle or the one after
(the overlap RSN's phases promise; `test_a_mac_starts_its_next_phase_while_the_last_one_ends`
checks it). The weights are multicast, so the other lanes wait for that one: in a pass's first
layer the lanes' vectors arrive one after another through one host input port, which is the
tens to hundreds of cycles on the 4x4 (five lanes) and for wide vectors. **compute -> compute**
(a layer of more weights than one stream carries): the next chunk's weights follow on the same
host stream, one cycle. **compute -> fetch (next layer)**: a data dependency, not set-up: the
next layer's input is the alu's output of this one, which must leave the mac's pipeline, pass the
alu, be written to the bank and read back (22 cycles). **compute -> fetch (next pass)**: the
lane's bank first sends the last layer's outputs to the host (a drain phase per lane, the lanes
sharing the output ports) and then takes the next vector from the host, one lane after another,
before its mac can load it: about the outputs plus the vector plus the loads of the lanes
before it. This is the one transition that costs more than a reload floor; it is a few percent
of a pass (a pass streams every weight once), and loading the next pass's vectors while the
current pass computes would remove most of it. A reload per phase would add at least the
reload floor (the phase's image words and the drain to `done`) at every transition, where the
overlapped ones cost a cycle or none. **A split layer** (wide640, three pieces of 256, 256 and
128 words): **compute -> fetch (next piece)** and **compute -> ones** wait for the last partial
sum to reach the bank, the 22 cycles of a next layer; **ones -> reduce** is the reduce phases
running one lane after another (each reads its bank and writes the next lane's): a lane waits
for the reduces before its own, about pieces x outputs cycles each (192 here), so the last lane
of the 3x3 waits 431 cycles, of the 4x4 861; **reduce -> fetch (next pass)** adds those reduces
to the drain and the next pass's loads. All of it is 1 to 2 % of a pass, which streams 40,960
weights."""


def _merged(recorded: dict, measured: dict) -> dict:
    """The recorded points with the measured workloads' replaced (in the recorded order, new
    workloads last); the meta says which points come from which run."""
    names = {entry["workload"] for entry in measured["points"]}
    points = [entry for entry in recorded["points"] if entry["workload"] not in names] + measured["points"]
    meta = dict(recorded["meta"])
    meta["merged"] = [*recorded["meta"].get("merged", []),
                      {"workloads": sorted(names), **{key: measured["meta"][key] for key in
                                                      ("date", "git_revision", "wall_time_s")}}]
    return {"meta": meta, "points": points}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="digits on 12 images and the 64x64 GEMM, into build/")
    parser.add_argument("--grids", type=int, nargs="*", default=list(GRIDS),
                        help="grid sizes (default 2 3 4)")
    parser.add_argument("--workloads", nargs="*", metavar="NAME",
                        help="only these workloads (digits, gemm64, gemm128, gemm256, wide640)")
    parser.add_argument("--merge", action="store_true",
                        help="replace the measured workloads' points in the recorded JSON, keep the rest")
    parser.add_argument("--table-only", action="store_true",
                        help="run nothing: write the Markdown again from the recorded JSON")
    arguments = parser.parse_args(argv)
    if arguments.table_only:
        results = json.loads((RESULTS / "rsn_phases.json").read_text())
    else:
        results = measure(arguments.quick, tuple(arguments.grids), arguments.workloads)
        if arguments.merge:
            results = _merged(json.loads((RESULTS / "rsn_phases.json").read_text()), results)
    figures, table = write_results(QUICK_RESULTS if arguments.quick else RESULTS, "rsn_phases", results,
                                   markdown(results))
    print(f"wrote {figures} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
