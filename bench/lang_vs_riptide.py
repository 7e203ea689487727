"""The Ripple language against hand-made graphs: the RipTide peer suite's compiled graphs and the
hand-built programs of ripple_core/programs.py.

``python -m bench.lang_vs_riptide [--no-rtl]`` writes bench/results/lang_vs_riptide.{json,md}:

* per peer kernel (ripple_core.lang.examples.PEER_KERNELS): our static instructions against the
  RipTide graph's (STREAM and no-STREAM variants), idealised steps (the Ripple golden model at
  unbounded slot depth and memory latency 1, summed over the vectors' cases) against the suite's
  ``reference_steps`` and against the RipTide graph on the same model, and RTL cycles of our
  graph on examples/fabrics/ripple_large.toml (every case in one simulation; the build is the
  one ``rivulet run kernel.py --sim rtl`` makes);
* per hand-built program: static instructions side by side, and golden-model cycles (slot
  depth 2, the fabrics' queue depth; memory latency 1) on one case each.

Targets: no more operators than the RipTide graph (STREAM variant), and at most 1.1x its steps.
A SINK counts as a node in ``static_instructions()``, but it is a host port, not a PE: the
operator columns leave SINKs out, and the table says how many there are.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from ripple_core import programs
from ripple_core.interp import run
from ripple_core.lang import compile_kernel, examples
from ripple_core.riptide import load_graph, load_vectors

from .common import REPO, RESULTS, git_stamp, now, write_results

SUITE = REPO.parent / "shared" / "peer-suites" / "riptide"
LARGE = REPO / "examples" / "fabrics" / "ripple_large.toml"
STEP_TARGET = 1.1


def operators(graph) -> int:
    return sum(1 for node in graph.nodes.values() if node.op != "SINK")


def sinks(graph) -> int:
    return sum(1 for node in graph.nodes.values() if node.op == "SINK")


def ideal_steps(graph, cases) -> int:
    """The golden model's cycles at unbounded depth, memory latency 1, summed over ``cases``."""
    total = 0
    for case in cases:
        result = run(graph, case.get("args", {}), case.get("mem", {}), depth=None, mem_latency=1)
        assert result.drained, (graph.name, result.leftovers)
        for name, words in case.get("expect", {}).items():
            got = result.arrays[name] if name in result.arrays else result.outputs.get(name)
            assert got == words, (graph.name, name)
        total += result.cycles
    return total


def rtl_cycles(entries: list[dict]) -> None:
    """Each peer kernel's RTL cycles on ripple_large.toml, summed over its cases, into ``entries``."""
    from rivulet.frontends.lang import compiled_kernel, kernel_cases, lowered_case
    from rivulet.sim.fabric_run import run_many_on_rtl
    from rsn.fabric_spec import load_fabric
    from rsn.readout import register_reads, split_register_reads

    spec = load_fabric(LARGE)
    owners, cases, compiled = [], [], []
    for entry in entries:
        loaded = compiled_kernel(examples.PEER_KERNELS[entry["kernel"]])
        for k, (case, problems) in enumerate(kernel_cases(loaded, vectors=SUITE / entry["vectors"])):
            lowered = lowered_case(loaded, case, problems, k, spec)
            owners.append(entry)
            cases.append(lowered)
            compiled.append(lowered.compile(lowered.program, spec, 1))
    results = run_many_on_rtl(compiled, profiles=["no_stall"] * len(compiled), seeds=[1] * len(compiled),
                              case="bench-lang-vs-riptide",
                              extra_reads=[register_reads(image) for image in compiled])
    for entry in entries:
        entry["rtl_cycles"], entry["rtl_passed"] = 0, True
    for entry, case, image, result in zip(owners, cases, compiled, results, strict=True):
        problems = case.problems + case.check(image, result.outputs, result.firings,
                                              split_register_reads(image, result.extra))
        entry["rtl_cycles"] += result.cycles
        entry["rtl_passed"] &= not problems


def peer_rows(rtl: bool) -> list[dict]:
    entries = []
    for name, kernel in examples.PEER_KERNELS.items():
        ours = compile_kernel(kernel)
        stream = load_graph(SUITE / f"{name}.riptide.json")
        nostream = load_graph(SUITE / f"{name}.riptide.nostream.json")
        cases = load_vectors(SUITE / f"{name}.vectors.json", ours)
        entry = {"kernel": name, "vectors": f"{name}.vectors.json", "cases": len(cases),
                 "ops": operators(ours), "sinks": sinks(ours),
                 "static_instructions": ours.static_instructions(),
                 "riptide_ops": stream.static_instructions(),
                 "riptide_nostream_ops": nostream.static_instructions(),
                 "steps": ideal_steps(ours, cases),
                 "riptide_steps_on_model": ideal_steps(stream, cases),
                 "reference_steps": sum(case["reference_steps"]["stream"] for case in cases),
                 "reference_steps_nostream": sum(case["reference_steps"]["nostream"] for case in cases)}
        entry["step_ratio"] = entry["steps"] / entry["reference_steps"]
        entry["meets_ops"] = entry["ops"] <= entry["riptide_ops"]
        entry["meets_steps"] = entry["step_ratio"] <= STEP_TARGET
        entries.append(entry)
    if rtl:
        rtl_cycles(entries)
    return entries


def program_rows() -> list[dict]:
    """(name, hand-built graph, language kernel, case, extra args for the kernel) per program."""
    rng = random.Random(11)
    row, col = programs.random_csr(40, 3, 5)
    keys = [rng.randrange(5) for _ in range(24)]
    matrix = [[rng.randint(-9, 9) for _ in range(6)] for _ in range(6)]
    vector = [rng.randint(-9, 9) for _ in range(6)]
    pairs = [
        ("ordered BFS (40 vertices)", programs.ordered_bfs(), examples.ordered_bfs,
         programs.bfs_case(row, col, True), {}),
        ("Ripple BFS (40 vertices)", programs.ripple_bfs(depth=2), examples.ripple_bfs,
         programs.bfs_case(row, col, False), {}),
        ("tree walk (30 nodes)", programs.tree_walk(30), examples.tree_walk, programs.tree_case(30),
         {"nodes": 30}),
        ("serial walk (30 nodes, step 3)", programs.serial_walk(30), examples.serial_walk,
         programs.serial_case(30), {"nodes": 30, "step": 3}),
        ("histogram (24 keys, 5 bins)", programs.histogram(), examples.histogram,
         programs.histogram_case(keys, 5), {}),
        ("dmv ordered (6x6)", programs.dmv(ripple=False), examples.dmv_ordered,
         programs.dmv_case(matrix, vector), {}),
        ("dmv Ripple (6x6)", programs.dmv(ripple=True), examples.dmv_ripple,
         programs.dmv_case(matrix, vector), {}),
    ]
    entries = []
    for label, hand, kernel, case, extra in pairs:
        ours = compile_kernel(kernel)
        figures = {}
        for who, graph, args in (("hand", hand, case.get("args", {})),
                                 ("lang", ours, {**case.get("args", {}), **extra})):
            result = run(graph, args, {k: list(v) for k, v in case["mem"].items()}, depth=2, mem_latency=1)
            assert result.drained, (label, who)
            for name, words in case["expect"].items():
                got = result.arrays[name] if name in result.arrays else result.outputs.get(name)
                assert sorted(got) == sorted(words) if name == "done" else got == words, (label, who, name)
            figures[who] = result.cycles
        entries.append({"program": label, "hand_ops": operators(hand), "lang_ops": operators(ours),
                        "hand_sinks": sinks(hand), "lang_sinks": sinks(ours),
                        "hand_cycles": figures["hand"], "lang_cycles": figures["lang"]})
    return entries


def _mark(ok: bool) -> str:
    return "" if ok else " **miss**"


def markdown(peers: list[dict], hand: list[dict], rtl: bool) -> str:
    lines = ["# The Ripple language against RipTide's graphs and the hand-built programs", "",
             "Written by `python -m bench.lang_vs_riptide`. Operators: graph nodes less SINKs (a SINK "
             "is a host port, not a PE; `static_instructions()` counts it, so it is shown apart). "
             "Steps: the Ripple golden model at unbounded slot depth and memory latency 1, summed "
             "over the suite's vectors; `ref` is the suite's `reference_steps` (STREAM variant, the "
             "no-STREAM one in brackets), `RipTide on model` the suite's graph on the same model. "
             f"Targets: operators <= RipTide's (STREAM), steps <= {STEP_TARGET}x `ref`. RTL cycles: the "
             "8x9 fabric's counter from START to done, no stall, summed over the cases; it includes the "
             "load of the configuration image, which dominates on cases this small.", "",
             "| kernel | cases | ours (SINKs) | RipTide | RipTide nostream | steps | ref (nostream) "
             "| ratio | RipTide on model |" + (" RTL cycles (ripple_large) |" if rtl else ""),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if rtl else "")]
    for e in peers:
        rtl_cell = ""
        if rtl:
            rtl_cell = f" {e['rtl_cycles']}{'' if e['rtl_passed'] else ' FAIL'} |"
        lines.append(f"| {e['kernel']} | {e['cases']} | {e['ops']}{_mark(e['meets_ops'])} ({e['sinks']}) "
                     f"| {e['riptide_ops']} | {e['riptide_nostream_ops']} | {e['steps']} "
                     f"| {e['reference_steps']} ({e['reference_steps_nostream']}) "
                     f"| {e['step_ratio']:.2f}{_mark(e['meets_steps'])} | {e['riptide_steps_on_model']} |"
                     + rtl_cell)
    misses = [e["kernel"] for e in peers if not (e["meets_ops"] and e["meets_steps"])]
    lines += ["", "Rows that miss: " + (", ".join(misses) if misses else "none") + "."]
    for e in peers:
        if not e["meets_ops"] and e["sinks"] and e["ops"] == e["riptide_ops"] + 1:
            lines.append(f"* {e['kernel']}: the kernel returns a value. The RipTide graph has no path that "
                         f"exports it (its loop-exit STEER discards the final sum, so the suite's expect "
                         f"is empty); ours has the exit STEER that sends it to the SINK `return`, a host "
                         f"port: one STEER more, no step more.")
        elif not e["meets_ops"] or not e["meets_steps"]:
            lines.append(f"* {e['kernel']}: not explained yet.")
    slower = [e for e in hand
              if e["lang_ops"] > e["hand_ops"] or e["lang_cycles"] > STEP_TARGET * e["hand_cycles"]]
    lines += ["",
              "## Hand-built programs (ripple_core/programs.py) against ripple_core/lang/examples.py", "",
              "Golden-model cycles at slot depth 2 (the fabrics' queue depth), memory latency 1, on one "
              "case each.", "",
              "| program | hand ops (SINKs) | language ops (SINKs) | hand cycles | language cycles |",
              "|---|---:|---:|---:|---:|"]
    for e in hand:
        lines.append(f"| {e['program']} | {e['hand_ops']} ({e['hand_sinks']}) | {e['lang_ops']} "
                     f"({e['lang_sinks']}) | {e['hand_cycles']} | {e['lang_cycles']} |")
    lines += ["", "More operators than the hand-built graph, or more than "
              f"{STEP_TARGET}x its cycles: " + (", ".join(e["program"] for e in slower) or "none") + "."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-rtl", action="store_true", help="leave out the RTL cycles (no Verilator run)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    arguments = parser.parse_args(argv)
    rtl = not arguments.no_rtl
    peers, hand = peer_rows(rtl), program_rows()
    results = {"measured": now(), **git_stamp(), "peer_kernels": peers, "programs": hand}
    text = markdown(peers, hand, rtl)
    figures, table = write_results(arguments.out, "lang_vs_riptide", results, text)
    print(text)
    print(f"wrote {figures} and {table}")


if __name__ == "__main__":
    main()
