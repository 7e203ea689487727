"""What the nine workloads' graphs are made of, and how many tiles a denser PE would need.

``python -m bench.ripple_density`` compiles both versions of every workload, splits their
tuples and counts what the fabric would get (``check_lowerable`` on a shared memory: one PE per
unit): control operators (STEER, CARRY, INVARIANT, MERGE, ORDER) against the others. Then it
pairs each operator greedily with one control operator it feeds, as a tile holding both would,
within today's FU ports (``rsn.fu.MAX_FU_INPUTS`` inputs and ``MAX_FU_OUTPUTS`` outputs from the
switch, the internal edge needing none), and reports the tiles that leaves. No simulation: the
figures come from the graphs alone. Writes bench/results/ripple_density.{json,md}.
"""

from __future__ import annotations

import argparse
from collections import Counter

from ripple_core.lang import compile_kernel
from ripple_core.lower import check_lowerable
from ripple_core.tuples import split_tuples
from ripple_core.workloads import NAMES, VERSIONS, workload
from rsn.fu import MAX_FU_INPUTS, MAX_FU_OUTPUTS

from .common import RESULTS, git_stamp, now, write_results

CONTROL = frozenset({"STEER", "CARRY", "INVARIANT", "MERGE", "ORDER"})


def _edges_in(node) -> int:
    return sum(1 for source in node.inputs if source.kind == "edge")


def paired_tiles(graph) -> int:
    """Tiles left when each operator takes one control operator it feeds into its tile, where the
    pair's streams from and to other tiles fit the FU's ports."""
    consumers = graph.consumers()
    ports_of = {}
    for node, port in consumers:
        ports_of.setdefault(node, []).append((node, port))
    operators = [node for node in graph.nodes.values() if node.op != "SINK"]
    taken, pairs = set(), 0
    for producer in operators:
        if producer.name in taken:
            continue
        for key in ports_of.get(producer.name, []):
            partner = next((sink for sink, _ in consumers[key]
                            if sink not in taken and sink != producer.name and graph.nodes[sink].op in CONTROL
                            and _fits(consumers, ports_of, producer, graph.nodes[sink])), None)
            if partner is not None:
                taken |= {producer.name, partner}
                pairs += 1
                break
    return len(operators) - pairs


def _fits(consumers, ports_of, producer, control) -> bool:
    inputs = _edges_in(producer) + sum(1 for source in control.inputs
                                       if source.kind == "edge" and source.source != producer.name)
    feeds_others = any(sink != control.name for key in ports_of.get(producer.name, [])
                       for sink, _ in consumers[key])
    outputs = len(ports_of.get(control.name, [])) + int(feeds_others)
    return inputs <= MAX_FU_INPUTS and outputs <= MAX_FU_OUTPUTS


def measure() -> list[dict]:
    rows = []
    for name in NAMES:
        w = workload(name)
        for version in VERSIONS:
            graph = split_tuples(compile_kernel(w.kernel(version)))
            units = len(check_lowerable(graph, shared_memory=True))
            kinds = Counter("control" if node.op in CONTROL else "other"
                            for node in graph.nodes.values() if node.op != "SINK")
            rows.append({"workload": name, "version": version, "pes": units, "control": kinds["control"],
                         "other": kinds["other"], "paired_tiles": paired_tiles(graph)})
    return rows


def markdown(report: dict) -> str:
    settings = report["settings"]
    dirty = " (with uncommitted changes)" if settings["git_tracked_changes"] else ""
    lines = ["# Ripple's workloads: control operators, and tiles with an operator and a control operator",
             "", f"git {settings['git_revision']}{dirty}, measured {settings['measured']}; written by "
             "`python -m bench.ripple_density` (no simulation).", "",
             "PEs: one per unit on a shared-memory fabric today. Control: STEER, CARRY, INVARIANT, MERGE, "
             "ORDER. Paired: each operator with one control operator it feeds in one tile, the pair's other "
             f"streams within {MAX_FU_INPUTS} inputs and {MAX_FU_OUTPUTS} outputs (greedy, in graph order).",
             "",
             "| workload | version | PEs | control | other | control share | paired tiles | tiles per PE |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in report["rows"]:
        share = row["control"] / (row["control"] + row["other"])
        lines.append(f"| {row['workload']} | {row['version']} | {row['pes']} | {row['control']} "
                     f"| {row['other']} | {share:.0%} | {row['paired_tiles']} "
                     f"| {row['paired_tiles'] / row['pes']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(RESULTS), help="results directory")
    arguments = parser.parse_args(argv)
    report = {"settings": {"measured": now(), **git_stamp()}, "rows": measure()}
    figures, table = write_results(arguments.out, "ripple_density", report, markdown(report))
    print(f"wrote {figures} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
