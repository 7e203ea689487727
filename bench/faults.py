"""A soak of run-time faults on the golden model: mixed programs (RSN, Ripple, SNN), one random
fault each, counted from injection to recovery (docs/faults.md).

``python -m bench.faults [--runs N] [--seed S]`` takes each program of :data:`PROGRAMS` in turn
through its front-end (the same cases ``rivulet run`` makes, with their own independent checks),
injects one fault drawn uniformly from the four kinds at a link or tile the program's placement
uses (``at`` from 0/1 to 6), and runs :func:`rsn.recovery.run_with_faults`. The fault-free run
of the same placement is the truth each outcome is judged against:

* **not met**: the run passed first time with the fault-free outputs (the fault was past the
  last token, or its token did not change the result);
* **detected**: the first run hung (watchdog), a unit refused a token, or the program's check
  refused the outputs; then **recovered** by a re-run or by a placement without a suspect, or
  **not recovered** (the parts excluded are listed);
* **wrong answer reported as a pass**: a run the check passed whose outputs differ from the
  fault-free run's. The target is none.

``--rtl N`` also injects N link faults into a fault-injection build of the MLP's fabric on the
RTL (native tier, rsn.link_fault), each beside the same fault in the golden model: the RTL must
end as the model does (a hang where the model hangs, the model's outputs where it completes),
and the time to detect is the cycles from the fault's first act to the watchdog (its limit is
1,024 idle cycles). The placement the golden model's recovery found is then run on the RTL with
the fault still there, and must pass.

Writes ``bench/results/faults.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
from collections import Counter, defaultdict

from rivulet.frontends import Options, frontend_for
from rivulet.run import recover_case
from rivulet.sweep.spec import fabric_description
from rsn.fabric_spec import DIRECTIONS, load_fabric, parse_fabric
from rsn.faults import KINDS, Fault
from rsn.model import DeadlockError, FabricModel
from rsn.recovery import part_name

from .common import REPO, RESULTS, git_stamp, now, write_results

__all__ = ["PROGRAMS", "measure", "markdown", "main"]

# (label, program file, fabric): each fabric leaves the program room to be placed round a part
# (the MLP fills 7 of the default 3x3's 9 tiles, the SNN example 3 of snn.toml's 4, so they get
# the same tiles on a 4x4 and a 3x3; ripple.toml has 30 pe tiles for BFS's 16 operators).
ROOMY = {
    "a 4x4 of the default tile mix": {"rows": 4, "cols": 4, "tiles": "mem mac alu"},
    "a 3x3 of snn.toml's xbar tiles": {"rows": 3, "cols": 3, "tiles": "xbar", "data_width": 16,
                                        "xbar": {"axons": 16, "neurons": 16, "banks": 4, "preset": "tinyodin",
                                                 "threshold": 6, "leak": 1}},
}
PROGRAMS = (
    ("RSN MLP", "examples/mlp.py", "a 4x4 of the default tile mix"),
    ("SNN", "examples/snn_small.py", "a 3x3 of snn.toml's xbar tiles"),
    ("Ripple BFS", "examples/ripple_bfs.py", "examples/fabrics/ripple.toml"),
)


def _fabric(fabric: str):
    if fabric in ROOMY:
        return parse_fabric(fabric_description(ROOMY[fabric]), fabric)
    return load_fabric(REPO / fabric)


def _case(path: str, fabric: str):
    workload = frontend_for(REPO / path).load(REPO / path, Options())
    spec = _fabric(fabric)
    (case,) = workload.lower(spec)
    return case, spec


def _links(compiled) -> list[tuple]:
    """The links (tile, side) the compiled program's streams use."""
    return sorted({(tile, DIRECTIONS[side]) for route in compiled.routing.routes
                   for tile, side in route.links})


def _random_fault(rng: random.Random, compiled) -> Fault:
    routing = compiled.routing
    kind = rng.choice(KINDS)
    if kind == "stop":
        tiles = sorted(set(routing.switch_uops) | set(routing.fu_uops))
        return Fault(kind, rng.choice(tiles), None, rng.randint(0, 6))
    return Fault(kind, *rng.choice(_links(compiled)), rng.randint(0 if kind == "stuck" else 1, 6),
                 rng.randrange(compiled.spec.data_width))


_DETECTED_BY = {"hung": "watchdog", "wrong outputs": "check", "unit error": "unit"}


def _one_run(case, spec, compiled, fault: Fault, seed: int) -> dict:
    """``fault`` on ``case`` (``compiled`` for ``spec`` with ``seed``), judged against the
    fault-free run of that placement."""
    truth = FabricModel(spec).run(compiled.image, compiled.program.host_inputs).outputs
    started = time.perf_counter()
    recovery = recover_case(case, spec, [fault], seed=seed)
    seconds = time.perf_counter() - started
    first = recovery.attempts[0]
    wrong_pass = recovery.passed and recovery.result.outputs != truth
    if not recovery.detected:
        outcome = "wrong answer reported as a pass" if wrong_pass else "not met"
    else:
        outcome = ("recovered: " + ("re-run" if recovery.how == "re-run" else "re-placed")
                   if recovery.passed else "not recovered")
        if wrong_pass:
            outcome = "wrong answer reported as a pass"
    return {"fault": str(fault), "kind": fault.kind, "permanent": fault.permanent,
            "detected_by": _DETECTED_BY.get(first.outcome),
            "outcome": outcome, "how": recovery.how, "attempts": len(recovery.attempts),
            "excluded": [part_name(attempt.excluded[0]) for attempt in recovery.attempts if attempt.excluded],
            "host_port_tile": fault.tile in {port.tile for port in spec.host_ports},
            "seconds": round(seconds, 3)}


def _rtl_faults(count: int, rng: random.Random) -> list[dict]:
    """``count`` link faults on the MLP on the RTL, each judged against the golden model."""
    from rivulet.sim.fabric_run import run_each_on_rtl

    case, spec = _case(*next((path, fabric) for label, path, fabric in PROGRAMS if label == "RSN MLP"))
    compiled = case.compile(case.program, spec, 1)
    links = _links(compiled)
    faults = [Fault(("stuck", "drop", "corrupt")[number % 3], *rng.choice(links), rng.randint(1, 6),
                    rng.randrange(spec.data_width)) for number in range(count)]
    recoveries = [recover_case(case, spec, [fault]) for fault in faults]
    recovered = [(recovery.compiled, fault) for recovery, fault in zip(recoveries, faults, strict=True)
                 if recovery.passed and recovery.how != "first run"]
    programs = [compiled] * count + [each for each, _ in recovered] + [compiled]
    lasting = [fault if fault.permanent else None for _, fault in recovered]
    results = run_each_on_rtl(programs, profiles=["no_stall"] * len(programs), seeds=[1] * len(programs),
                              case="bench-faults-rtl", faults=faults + lasting + [None])
    fault_free = results[-1].cycles
    entries, after = [], iter(results[count:-1])
    for fault, recovery, rtl in zip(faults, recoveries, results[:count], strict=True):
        model = FabricModel(spec, faults=[fault])
        try:
            model_outputs = model.run(compiled.image, compiled.program.host_inputs).outputs
        except DeadlockError:
            model_outputs = None
        hung = isinstance(rtl, str)
        entry = {"fault": str(fault), "kind": fault.kind, "rtl": "hung" if hung else "completed",
                 "model": "hung" if model_outputs is None else "completed", "fault_free_cycles": fault_free}
        if hung:
            stalled = int(re.search(r"watchdog fired at cycle (\d+)", rtl)[1])
            found = re.search(r"fault first acted at cycle (\d+)", rtl)
            acted = int(found[1]) if found else None
            entry.update(stalled_cycle=stalled, fault_cycle=acted,
                         detect_cycles=None if acted is None else stalled - acted)
            entry["agrees"] = model_outputs is None
        else:
            entry.update(cycles=rtl.cycles, fault_cycle=rtl.fault_cycle,
                         agrees=model_outputs is not None and all(
                             rtl.outputs.get(port, []) == tokens for port, tokens in model_outputs.items()))
        entry["recovery"] = recovery.how
        if recovery.passed and recovery.how != "first run":
            again = next(after)
            entry["recovered_rtl"] = "failed" if isinstance(again, str) else "passed"
            entry["recovered_cycles"] = None if isinstance(again, str) else again.cycles
        entries.append(entry)
    return entries


def measure(runs: int, seed: int, rtl: int = 0) -> dict:
    rng = random.Random(seed)
    started = time.perf_counter()
    cases = {label: _case(path, fabric) for label, path, fabric in PROGRAMS}
    entries = []
    for number in range(runs):
        label = PROGRAMS[number % len(PROGRAMS)][0]
        case, spec = cases[label]
        compiled = case.compile(case.program, spec, 1)
        fault = _random_fault(rng, compiled)
        entry = {"program": label, **_one_run(case, spec, compiled, fault, 1)}
        print(f"{label}: {entry['fault']}: {entry['outcome']} ({entry['how']}, {entry['attempts']} attempts, "
              f"{entry['seconds']:.2f} s)", flush=True)
        entries.append(entry)
    rtl_entries = _rtl_faults(rtl, rng) if rtl else []
    meta = {"date": now(), **git_stamp(), "seed": seed, "runs": runs, "rtl_runs": rtl,
            "wall_time_s": round(time.perf_counter() - started, 1),
            "programs": [{"label": label, "program": path, "fabric": fabric}
                         for label, path, fabric in PROGRAMS]}
    return {"meta": meta, "runs": entries, "rtl": rtl_entries}


OUTCOMES = ("not met", "recovered: re-run", "recovered: re-placed", "not recovered",
            "wrong answer reported as a pass")


def markdown(results: dict) -> str:
    meta, runs = results["meta"], results["runs"]
    lines = ["# Run-time faults: a soak on the golden model", "",
             f"{meta['date']}, git {meta['git_revision'][:7]}; `python -m bench.faults --runs {meta['runs']} "
             f"--seed {meta['seed']}{' --rtl ' + str(meta['rtl_runs']) if meta.get('rtl_runs') else ''}` "
             f"({meta['wall_time_s']:,.0f} s). One random fault per run at a link or "
             "tile the program uses; programs through their front-ends with their own checks: " +
             "; ".join(f"{each['label']} (`{each['program']}` on " +
                       (each['fabric'] if each['fabric'] in ROOMY else f"`{each['fabric']}`") + ")"
                       for each in meta["programs"]) +
             ". The fault-free run of the same placement is the truth; docs/faults.md says what each "
             "outcome means.", "",
             "| program | fault kind | runs | " + " | ".join(OUTCOMES) + " | mean attempts | mean s |",
             "|---|---|---:|" + "---:|" * len(OUTCOMES) + "---:|---:|"]
    groups = defaultdict(list)
    for run in runs:
        groups[run["program"], run["kind"]].append(run)
    for (program, kind), group in sorted(groups.items()):
        counts = Counter(run["outcome"] for run in group)
        lines.append(f"| {program} | {kind} | {len(group)} | " +
                     " | ".join(str(counts[outcome]) for outcome in OUTCOMES) +
                     f" | {statistics.fmean(run['attempts'] for run in group):.1f} | "
                     f"{statistics.fmean(run['seconds'] for run in group):.2f} |")
    total = Counter(run["outcome"] for run in runs)
    detected = [run for run in runs if run["detected_by"]]
    by = Counter(run["detected_by"] for run in detected)
    lines += ["", f"**All {len(runs)} runs**: " + ", ".join(f"{o} {total[o]}" for o in OUTCOMES) +
              f". Detected {len(detected)}: by the watchdog {by['watchdog']}, by the program's check "
              f"{by['check']}, by a unit {by['unit']}."]
    stuck = [run for run in runs if run["outcome"] == "not recovered"]
    if stuck:
        lines += ["", "Not recovered (a host port's tile cannot be left out: the port is there):", ""]
        for run in stuck:
            port = " (a host port's tile)" if run["host_port_tile"] else ""
            lines.append(f"- {run['program']} `{run['fault']}`{port}: left out in turn "
                         f"{', '.join(run['excluded']) or 'nothing that fitted'}")
    lines += _rtl_lines(results.get("rtl", []))
    lines += ["", NOTES, ""]
    return "\n".join(lines)


def _rtl_lines(entries: list[dict]) -> list[str]:
    if not entries:
        return []
    lines = ["", "## On the RTL", "",
             f"{len(entries)} link faults on the MLP (its 4x4), each on a fault-injection build of the "
             "fabric (native tier, no host stalls) beside the same fault in the golden model. *Detect*: "
             "cycles from the fault's first act to the watchdog. *Recovered run*: the placement the golden "
             "model's recovery found, on the RTL with the fault still there.", "",
             "| fault | RTL | golden model | agree | fault acted (cycle) | detect (cycles) | recovery | "
             "recovered run on the RTL | cycles (fault-free) |",
             "|---|---|---|---|---:|---:|---|---|---:|"]
    for entry in entries:
        recovered = entry.get("recovered_rtl", "-")
        if entry.get("recovered_cycles"):
            recovered += f", {entry['recovered_cycles']:,} cycles"
        lines.append(f"| `{entry['fault']}` | {entry['rtl']} | {entry['model']} | "
                     f"{'yes' if entry['agrees'] else '**no**'} | {entry.get('fault_cycle') or '-'} | "
                     f"{entry.get('detect_cycles') or '-'} | {entry['recovery']} | {recovered} | "
                     f"{entry['fault_free_cycles']:,} |")
    detects = [entry["detect_cycles"] for entry in entries if entry.get("detect_cycles")]
    if detects:
        lines += ["", f"Detected by the watchdog {len(detects)} times, {min(detects):,} to {max(detects):,} "
                      f"cycles after the fault acted; RTL and golden model agree on "
                      f"{sum(entry['agrees'] for entry in entries)} of {len(entries)}."]
    return lines


NOTES = """\
What the figures do not cover: the soak's faults are injected into the golden model, which has
no cycles, so its time to recover is the host's wall time (compiles and runs of the model); the
RTL section measures the time to detect in fabric cycles for link faults (a stopped tile is the
golden model's only). The recovery loop runs on the golden model; its placement is then checked
on the RTL. A corrupted token is found only by a program's check (the links carry no parity
bit), so a program without a reference would take a corrupted answer as a pass; every program
here has one."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=150,
                        help="faulty runs (default 150, spread over the programs)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the faults (default 1)")
    parser.add_argument("--rtl", type=int, default=0, metavar="N",
                        help="also N link faults on the RTL (a fault-injection build; default 0)")
    arguments = parser.parse_args(argv)
    results = measure(arguments.runs, arguments.seed, arguments.rtl)
    figures, table = write_results(RESULTS, "faults", results, markdown(results))
    print(f"wrote {figures} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
