"""The Python side of the native tier: runs in, the driver started once, records out.

A run is the dictionary the cocotb tier's bench takes (rivulet/sim/fabric_run.py writes it:
image, counter and diagnostic READ packets, host inputs and outputs, stall profile, seed, cycle
limit). Here it becomes the top's config values and the words of its input memory; the driver's
results become the record the cocotb tier writes, with the same error texts, so that everything
after a run reads one format whichever tier ran it.
"""

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from rivulet.sim.fabric_bench import FabricRun
from rivulet.sim.progress import CountBar
from rivulet.sim.streams import profile_named
from rivulet.sim.toolchain import shown_path
from rivulet.sim.verilator import SimulationFailure

from .patterns import stream_seed, thresholds
from .top import END_REASONS, NO_CYCLE, PROTOCOL_ERRORS

__all__ = ["NativeFailure", "run_native", "layout_run", "memory_needs", "CAPTURE_SLACK", "read_trace"]

# Tokens a sink may take beyond what the run expects before the run ends as "capture_full": a
# fabric that sends too many tokens is still seen sending them (the comparison then fails).
CAPTURE_SLACK = 64


class NativeFailure(SimulationFailure):
    """The native driver itself failed (not a run: a run's failure is in its record)."""


@dataclass
class _Layout:
    config: dict[str, int]
    words: list[int]


def memory_needs(run: dict) -> tuple[int, int]:
    """Words of the input and output memories that ``run`` needs."""
    inputs = len(run["image"]) + len(run["reads"]) + len(run["diagnostic_reads"])
    inputs += sum(len(tokens) for tokens in run["host_inputs"].values())
    outputs = run["readback_words"] + run["diagnostic_words"] + CAPTURE_SLACK
    outputs += sum(count + CAPTURE_SLACK for count in run["host_outputs"].values())
    return inputs, outputs


def layout_run(top, run: dict) -> _Layout:
    """The config values and input-memory words of ``run``; a run the memories cannot hold, a
    token wider than its stream or a host input the fabric lacks is refused here, before anything
    is loaded."""
    profile = profile_named(run["profile"])
    idle, backpressure = thresholds(profile.idle), thresholds(profile.backpressure)
    config = {
        "cfg_idle_phase": idle.phase, "cfg_idle_first": idle.first, "cfg_idle_then": idle.then,
        "cfg_bp_phase": backpressure.phase, "cfg_bp_first": backpressure.first,
        "cfg_bp_then": backpressure.then,
        "cfg_max_cycles": run["max_cycles"], "cfg_expect_stall": int(run["expect_stall"]),
        "cfg_readback_words": run["readback_words"], "cfg_diag_words": run["diagnostic_words"],
        "cfg_diag_allow": FabricRun.DIAGNOSTIC_CYCLES + FabricRun.DIAGNOSTIC_CYCLES_PER_WORD * len(
            run["diagnostic_reads"]),
        "cfg_gate": len(run["image"]),
    }
    for stream in top.streams:
        config[f"cfg_seed{stream.index}"] = stream_seed(run["seed"], stream.index)
    fault = run.get("fault")
    if fault is not None and not top.faultable:
        raise ValueError(f"run {run['name']} has a fault but this native top is not a fault-injection build")
    if top.faultable:
        fault = fault or {"link": 0, "kind": 0, "at": 0, "bit": 0}
        config.update({f"cfg_fault_{name}": fault[name] for name in ("link", "kind", "at", "bit")})
    unknown = set(run["host_inputs"]) - {stream.name for stream in top.sources}
    if unknown:
        raise ValueError(f"run {run['name']}: the fabric has no host input {sorted(unknown)}")
    words = []
    for stream in top.sources:
        tokens = (run["image"] + run["reads"] if stream.name == "ctrl"
                  else run["host_inputs"].get(stream.name, []))
        for token in tokens:
            if not 0 <= token < 1 << stream.width:
                raise ValueError(f"run {run['name']}: token {token} on {stream.name} does not fit its "
                                 f"{stream.width} bits")
        config[f"cfg_src{stream.number}_base"] = len(words)
        config[f"cfg_src{stream.number}_len"] = len(tokens)
        words += tokens
        if stream.name == "ctrl":
            config["cfg_diag_base"], config["cfg_diag_len"] = len(words), len(run["diagnostic_reads"])
            words += run["diagnostic_reads"]
    base = 0
    for stream in top.sinks:
        expected = (run["readback_words"] + run["diagnostic_words"] if stream.name == "readback"
                    else run["host_outputs"].get(stream.name, 0))
        capacity = expected + CAPTURE_SLACK
        config[f"cfg_snk{stream.number}_base"], config[f"cfg_snk{stream.number}_cap"] = base, capacity
        config[f"cfg_snk{stream.number}_expect"] = 0 if stream.name == "readback" else expected
        base += capacity
    needs = memory_needs(run)
    if needs[0] > top.in_depth or needs[1] > top.out_depth:
        raise ValueError(f"run {run['name']} needs {needs[0]} input and {needs[1]} output words; this native "
                         f"top holds {top.in_depth} and {top.out_depth}")
    return _Layout(config, words)


def run_native(design, runs: list[dict], directory: Path, *, trace: bool = False) -> list[dict]:
    """Run every run in one driver process; one record per run (the cocotb tier's format)."""
    top = design.top
    layouts = [layout_run(top, run) for run in runs]
    runs_path, results_path = directory / "runs.txt", directory / "results.txt"
    with open(runs_path, "w") as file:
        file.write(f"{len(runs)}\n")
        for index, layout in enumerate(layouts):
            values = [layout.config[name] for name in top.config]
            file.write(f"{index} {int(trace)} {' '.join(map(str, values))}\n{len(layout.words)}\n")
            file.write(" ".join(map(str, layout.words)) + "\n")
    started = time.monotonic()
    returncode, stdout, stderr = _drive([str(design.executable), str(runs_path), str(results_path),
                                         str(directory)], results_path, len(runs))
    elapsed = time.monotonic() - started
    (directory / "sim.log").write_text(stdout + stderr)
    if returncode != 0:
        raise NativeFailure(f"the native driver failed (exit {returncode}; log: "
                            f"{shown_path(directory / 'sim.log')}): {stderr.strip()[-2000:]}")
    records = _parse(top, runs, results_path.read_text())
    for record in records:
        record["process_seconds"] = elapsed
        if trace:
            record["trace"] = read_trace(directory / f"trace-{record['index']}.txt")
    return records


def _drive(command: list[str], results_path: Path, total: int) -> tuple[int, str, str]:
    """Run the driver; on a terminal, a bar of the runs it has finished (it writes each run's
    results as the run ends, a line starting ``run`` first)."""
    bar = CountBar(total, label="native runs")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen, done = 0, 0
    try:
        while True:
            try:
                stdout, stderr = process.communicate(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                if bar.live and results_path.exists():
                    with open(results_path, "rb") as results:
                        results.seek(seen)
                        fresh = results.read()
                    complete = fresh[:fresh.rfind(b"\n") + 1]
                    seen += len(complete)
                    done += sum(line.startswith(b"run ") for line in complete.splitlines())
                    bar.update(done)
    finally:
        bar.close()
        if process.poll() is None:          # interrupted: the driver goes too
            process.kill()
            process.wait()
    return process.returncode, stdout, stderr


def _parse(top, runs, text: str) -> list[dict]:
    records, lines = [], iter(text.splitlines())
    for line in lines:
        _, index, clocked, microseconds = line.split()
        status = dict(zip(top.status, map(int, next(lines).split()[1:]), strict=True))
        captured = {}
        for sink in top.sinks:
            fields = next(lines).split()
            captured[sink.name] = [int(word) for word in fields[3:]]
        records.append(_record(top, runs[int(index)], int(index), status, captured, int(clocked),
                               int(microseconds)))
    return records


def _record(top, run, index, status, captured, clocked, microseconds) -> dict:
    reason = END_REASONS.get(status["st_reason"], f"unknown ({status['st_reason']})")
    readback = captured.pop("readback")
    outputs = {name: captured.get(name, []) for name in run["host_outputs"]}
    sent = {stream.name: status[f"st_src{stream.number}_sent"] for stream in top.sources}
    record = {
        "index": index, "outputs": outputs, "readback": readback,
        "done_cycle": _cycle(status["st_done_cycle"]), "stalled_cycle": _cycle(status["st_stalled_cycle"]),
        "cycles": status["st_end_cycle"] + 1 if reason == "complete" else None,
        "host_sent": {name: count for name, count in sent.items() if name in run["host_inputs"]},
        "diagnostics": None, "error": None, "end": reason, "clocked": clocked,
        "run_seconds": microseconds / 1e6,
    }
    if top.faultable:
        record["fault_cycle"] = _cycle(status["st_fault_cycle"])
    if reason == "diagnosed":
        record["diagnostics"] = readback[status["st_diag_from"]:]
    elif reason == "watchdog":
        record["diagnostics"] = []
    if reason != "complete":
        record["error"] = _error(top, run, reason, status, record, sent, captured)
        if record.get("fault_cycle") is not None:
            record["error"] += f"; the injected fault first acted at cycle {record['fault_cycle']}"
    return record


def _cycle(value: int):
    return None if value == NO_CYCLE else value


def _error(top, run, reason, status, record, sent, captured) -> str:
    """The error text the cocotb tier's bench gives for the same end."""
    cycle = status["st_end_cycle"]
    progress = _progress(top, run, status, record, sent)
    if reason == "protocol":
        stream = top.streams[status["st_err_port"]].name
        offered, payload, since = status["st_err_offered"], status["st_err_payload"], status["st_err_since"]
        if PROTOCOL_ERRORS.get(status["st_err_kind"]) == "valid fell without a transfer":
            return (f"{stream}: valid fell at cycle {status['st_err_cycle']} without a transfer; payload "
                    f"{offered:#x} was offered since cycle {since}")
        return (f"{stream}: payload changed from {offered:#x} to {payload:#x} at cycle "
                f"{status['st_err_cycle']} while valid and not ready (offered since cycle {since})")
    if reason == "early_done":
        short = {name: f"{len(record['outputs'][name])}/{count}"
                 for name, count in run["host_outputs"].items() if len(record["outputs"][name]) < count}
        return f"done rose at cycle {cycle} before the host had every token: {short}"
    if reason in ("watchdog", "diagnosed"):
        message = f"the fabric's watchdog fired at cycle {record['stalled_cycle']}: {progress}"
        values = record["diagnostics"]
        if reason == "diagnosed" and len(values) < run["diagnostic_words"]:
            gate = len(run["image"])
            message += (f"; {len(values)} of {run['diagnostic_words']} diagnostic values came back "
                        f"(control words taken: {min(sent['ctrl'], gate)} of the image's {gate})")
        return message
    if reason == "cycle_limit":
        totals = {stream.name: len(run["image"]) + len(run["reads"]) if stream.name == "ctrl"
                  else len(run["host_inputs"].get(stream.name, [])) for stream in top.sources}
        sources = ", ".join(f"{name} sent {count}/{totals[name]}" for name, count in sent.items())
        return f"no completion after {run['max_cycles']} cycles: {sources}; {progress}"
    if reason == "capture_full":
        full = [name for name, words in captured.items() if len(words) > run["host_outputs"].get(name, 0)]
        return (f"at cycle {cycle} a host output took more tokens than the run expects plus {CAPTURE_SLACK} "
                f"({', '.join(full) or 'readback'}): {progress}")
    return f"the run ended for an unknown reason at cycle {cycle}: {progress}"


def _progress(top, run, status, record, sent) -> str:
    """As FabricRun.progress, from the counts at the end (the read-back count when the watchdog
    fired, for a diagnosed run)."""
    done = record["done_cycle"]
    gate = len(run["image"])
    image = f"image {sent['ctrl']}/{gate} words sent, " if sent["ctrl"] < gate else ""
    inputs = ", ".join(f"{name} {count}/{len(run['host_inputs'].get(name, []))}"
                       for name, count in sent.items() if name != "ctrl")
    outputs = ", ".join(f"{name} {len(tokens)}/{run['host_outputs'][name]}"
                        for name, tokens in record["outputs"].items())
    readback = len(record["readback"])
    if status["st_diagnosing"]:
        readback = status["st_diag_from"]
    return (f"done={'cycle ' + str(done) if done is not None else 'no'}, {image}host inputs sent: "
            f"{inputs or 'none'}, outputs: {outputs or 'none'}, readback {readback}/{run['readback_words']}")


def read_trace(path: Path) -> list[int]:
    """A trace file of the driver: per cycle, the (valid, ready) bits of every stream as one int."""
    trace = []
    for line in Path(path).read_text().splitlines():
        value = 0
        for word, text in enumerate(line.split()):
            value |= int(text, 16) << (32 * word)
        trace.append(value)
    return trace
