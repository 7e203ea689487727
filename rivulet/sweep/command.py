"""Run a sweep: its jobs from the sweep file, on an executor, into one table.

Fabric jobs (generate, synth, pnr) depend on the fabric alone, so programs that share a point's
fabric share them; the jobs of one key run once. Jobs with a result are not run again. The
table is written when the sweep ends, also when it is interrupted (its rows then say which jobs
did not run), and every failed job's row names its log.
"""

import time
from dataclasses import dataclass, field
from pathlib import Path

from rivulet.extras import require_extra
from rivulet.sim.progress import CountBar, duration

from .executors import default_workers, run_on_pool, run_on_ray
from .jobs import RESULT, Job, file_digest, library_digest, source_revision, tool_versions
from .results import result_rows, write_tables
from .spec import FABRIC_JOBS, JOB_KINDS, SweepSpec, load_sweep, toml_text

__all__ = ["SweepOutcome", "run_sweep", "sweep_jobs", "REPOSITORY"]

REPOSITORY = Path(__file__).resolve().parents[2]


@dataclass
class SweepOutcome:
    spec: SweepSpec
    directory: Path
    rows: list[dict]
    ran: int = 0                 # jobs this call ran (not found done)
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> list[dict]:
        return [row for row in self.rows if row["status"] != "passed"]


def sweep_jobs(spec: SweepSpec) -> list[tuple[Job, str, float]]:
    """Every job of the sweep with its fabric description's text and time limit, one per key,
    in point order."""
    stamp = {"tools": tool_versions(), "code": library_digest(REPOSITORY), "seed": spec.seed}
    jobs, seen = [], set()
    for point in spec.points():
        for job_spec in spec.jobs:
            if not job_spec.applies(point.values):
                continue
            if job_spec.kind in FABRIC_JOBS:
                entries = _fabric_entries(spec, point, job_spec)
            else:
                entries = [(program, toml_text(spec.fabric(point, program))) for program in spec.programs
                           if job_spec.for_program(program.name)]
            for program, fabric_text in entries:
                inputs = {"kind": job_spec.kind, "fabric": fabric_text, **stamp}
                if job_spec.kind in FABRIC_JOBS:
                    if job_spec.kind != "generate":
                        inputs["board"] = job_spec.board
                    name = program
                else:
                    inputs.update(program_digest=file_digest(program.path), program_path=str(program.path),
                                  definitions=list(program.definitions))
                    if program.vectors:
                        inputs.update(vectors_digest=file_digest(program.vectors),
                                      vectors_path=str(program.vectors))
                    if job_spec.kind == "rtl":
                        inputs["profile"] = job_spec.profile
                    name = program.name
                job = Job(job_spec.kind, dict(point.values), name, inputs)
                if (job.key, name, tuple(point.values.items())) in seen:
                    continue
                seen.add((job.key, name, tuple(point.values.items())))
                jobs.append((job, fabric_text, job_spec.timeout_s))
    return jobs


def _fabric_entries(spec: SweepSpec, point, job_spec) -> list[tuple[str, str]]:
    """The distinct fabrics at ``point`` of the programs ``job_spec`` is for: the family's ("-")
    unless programs bring their own."""
    family = toml_text(spec.fabric(point)) if not spec.programs else None
    by_text: dict[str, list[str]] = {}
    for program in spec.programs:
        if not job_spec.for_program(program.name):
            continue
        by_text.setdefault(toml_text(spec.fabric(point, program)), []).append(program.name)
    if family is not None:
        return [("-", family)]
    if len(by_text) == 1 and len(next(iter(by_text.values()))) == len(spec.programs):
        return [("-", next(iter(by_text)))]        # every program runs on the family's fabric
    return [("+".join(names), text) for text, names in by_text.items()]


def run_sweep(spec_or_path, *, executor: str = "pool", workers: int | None = None,
              address: str | None = None, directory: Path | None = None, say=None,
              run_missing: bool = True) -> SweepOutcome:
    """Run every job of the sweep that has no result yet and write the table; see the module.
    ``run_missing=False`` runs nothing: the table of the jobs done so far, the others "not run"."""
    spec = spec_or_path if isinstance(spec_or_path, SweepSpec) else load_sweep(spec_or_path)
    if executor == "ray":
        require_extra("ray", "ray", "--executor ray")
    bar = CountBar(0) if say is None else None        # a bar on a terminal's stderr, under the lines
    say = say or bar.say
    workers = workers or default_workers()
    directory = Path(directory) if directory else REPOSITORY / "build" / "sweep" / spec.name
    jobs_root = directory / "jobs"
    jobs = sweep_jobs(spec)
    # Quick kinds first (a model run takes a second, place and route minutes): the table fills
    # early, and a sweep stopped part way has its cheap columns.
    stamp = {"seed": spec.seed, **source_revision(REPOSITORY)}
    tasks = [(job, (str(job.directory(jobs_root)), job.inputs, fabric_text, stamp,
                    timeout, str(Path.cwd())))
             for job, fabric_text, timeout in sorted(jobs, key=lambda entry: JOB_KINDS.index(entry[0].kind))]
    if not run_missing:
        tasks = [task for task in tasks if (Path(task[1][0]) / RESULT).exists()]
    results: dict[int, dict] = {}
    index = {id(job): k for k, (job, _, _) in enumerate(jobs)}
    started = time.monotonic()
    if bar is not None:
        bar.total, bar.started = len(tasks), started
    say(f"sweep {spec.name}: {len(spec.points())} points x {len(spec.programs)} programs, {len(jobs)} jobs "
        f"on {'Ray' if executor == 'ray' else 'a local pool'} ({workers} workers); in {directory}")

    def on_done(job: Job, result: dict):
        results[index[id(job)]] = result
        point = " ".join(f"{axis}={value}" for axis, value in job.point.items())
        where = "cached" if result["cached"] else f"{result['seconds']:.1f} s"
        progress = _progress(time.monotonic() - started, len(results), len(jobs))
        line = (f"[{len(results)}/{len(jobs)} {progress}] {job.kind:<8} {point} {job.program}: "
                f"{result['status']} ({where})")
        if result["status"] != "passed":
            line += f": {result.get('error')} (log: {result['log']})"
        say(line)
        if bar is not None:
            bar.update(len(results))

    outcome = SweepOutcome(spec, directory, [])
    try:
        if executor == "ray":
            run_on_ray(tasks, on_done, workers=workers, address=address)
        else:
            run_on_pool(tasks, on_done, workers=workers)
    finally:
        if bar is not None:
            bar.close()
        outcome.rows = result_rows(spec, [job for job, _, _ in jobs], results)
        outcome.ran = sum(1 for result in results.values() if not result["cached"])
        outcome.seconds = time.monotonic() - started
        outcome.files = write_tables(outcome.rows, directory, spec)
    return outcome


def _progress(elapsed: float, done: int, total: int) -> str:
    """Elapsed time and a plain estimate of the rest (jobs left at the mean pace so far)."""
    left = elapsed / done * (total - done) if done < total else 0.0
    return f"{duration(elapsed)}" + (f", ~{duration(left)} left" if done < total else "")



