"""``rivulet sweep``: a small sweep (3 grids x 2 queue depths x 2 programs, model runs at every
point, RTL runs at one) gives one table, the same under the local pool and under a local Ray
cluster; a second run does no work; an interrupted sweep resumes where it stopped; a failing job
is reported with its log and the others complete; bad sweep files are refused.

The RTL point is the default 3x3 fabric, so its Verilator build is the one the rest of the
suite shares. The seed is the session's (RIVULET_SEED), printed.
"""

import csv
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rivulet.cli import main
from rivulet.extras import ExtraMissing, require_extra
from rivulet.sim.seeds import base_seed
from rivulet.sweep import SweepError, load_sweep, run_sweep
from rivulet.sweep.pareto import pareto_front
from rivulet.sweep.results import RUN_COLUMNS

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
REPOSITORY = HERE.parents[1]
GRIDS, DEPTHS, NAMES = ["2x2", "2x3", "3x3"], [2, 4], ["relu", "dot"]
# Columns that say how a run went or where its files are: the rest is what the jobs computed.
NOT_COMPUTED = set(RUN_COLUMNS) | {"log"}


def _sweep_file(directory: Path, *, jobs: str, programs=NAMES, grids=GRIDS, depths=DEPTHS) -> Path:
    seed = base_seed()
    print(f"sweep seed {seed} (RIVULET_SEED={seed})")
    entries = "\n".join(f'[[programs]]\npath = "{PROGRAMS / name}.py"\n' for name in programs)
    text = f"""name = "small"
seed = {seed}
[fabric]
tiles = "mem mac alu"
[axes]
grid = {json.dumps(grids)}
queue_depth = {json.dumps(depths)}
{entries}
{jobs}
"""
    path = directory / "sweep.toml"
    path.write_text(text)
    return path


MODEL_AND_RTL = """[[jobs]]
kind = "model"
[[jobs]]
kind = "rtl"
where = {grid = "3x3", queue_depth = 4}
"""


# The tests of the small sweep share its run (a module fixture; 30 s with the Ray cluster's):
# long(0) keeps them together on one worker, in the half whose other long tests build the
# default fabric, as its RTL point does.


def _computed(rows):
    return [{name: value for name, value in row.items() if name not in NOT_COMPUTED} for row in rows]


@pytest.fixture(scope="module")
def pool_sweep(tmp_path_factory):
    directory = tmp_path_factory.mktemp("sweep")
    spec = _sweep_file(directory, jobs=MODEL_AND_RTL)
    return spec, run_sweep(spec, executor="pool", workers=2, directory=directory / "pool")


@pytest.mark.long(0)
@pytest.mark.verilator
def test_the_small_sweep_has_a_row_per_point_and_job_and_every_job_passes(pool_sweep):
    _, outcome = pool_sweep
    rows = outcome.rows
    expected = {(grid, depth, name, "model") for grid, depth, name in itertools.product(GRIDS, DEPTHS, NAMES)}
    expected |= {("3x3", 4, name, "rtl") for name in NAMES}
    assert {(row["grid"], row["queue_depth"], row["program"], row["job"]) for row in rows} == expected
    assert len(rows) == len(expected) and outcome.ran == len(expected)
    assert [row for row in rows if row["status"] != "passed"] == []
    for row in rows:    # each job's fabric is the point's
        assert f"{row['rows']}x{row['cols']}" == row["grid"]
        fabric = (Path(row["log"]).parent / "fabric.toml").read_text()
        assert f"queue_depth = {row['queue_depth']}" in fabric and f"rows = {row['rows']}" in fabric
    for name in NAMES:  # the RTL's counters equal the golden model's at the same point
        model, rtl = ({row["job"]: row for row in rows
                       if row["program"] == name and row["grid"] == "3x3" and row["queue_depth"] == 4}[job]
                      for job in ("model", "rtl"))
        assert rtl["cycles"] > 0 and rtl["firings"] == model["firings"]
        assert rtl["link_beats"] == model["link_beats"]


@pytest.mark.long(0)
@pytest.mark.verilator
def test_the_table_is_written_as_json_csv_and_markdown(pool_sweep):
    _, outcome = pool_sweep
    directory = outcome.directory
    written = json.loads((directory / "results.json").read_text())["rows"]
    assert written == outcome.rows
    with open(directory / "results.csv") as file:
        from_csv = list(csv.DictReader(file))
    assert [row["key"] for row in from_csv] == [row["key"] for row in outcome.rows]
    assert [row["cycles"] for row in from_csv] == [str(row.get("cycles", "")) for row in outcome.rows]
    summary = (directory / "summary.md").read_text()
    assert f"{len(outcome.rows)} jobs: {len(outcome.rows)} passed" in summary
    assert (directory / "pareto_cycles_vs_queue_depth.png").stat().st_size > 0
    assert (directory / "pareto_cycles_vs_queue_depth.svg").stat().st_size > 0


@pytest.mark.long(0)
@pytest.mark.verilator
def test_each_job_is_stamped_with_the_revision_tools_and_seed(pool_sweep):
    _, outcome = pool_sweep
    row = outcome.rows[0]
    result = json.loads((Path(row["log"]).parent / "result.json").read_text())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPOSITORY, capture_output=True, text=True)
    assert result["stamp"]["git_revision"] == head.stdout.strip()
    assert result["stamp"]["seed"] == base_seed()
    assert result["stamp"]["tools"]["amaranth"].startswith("0.5")


@pytest.mark.long(0)
@pytest.mark.verilator
def test_a_second_run_does_no_work(pool_sweep):
    spec, outcome = pool_sweep
    logs = {row["key"]: os.stat(row["log"]).st_mtime_ns for row in outcome.rows}
    again = run_sweep(spec, executor="pool", workers=2, directory=outcome.directory)
    assert again.ran == 0 and all(row["cached"] for row in again.rows)
    assert _computed(again.rows) == _computed(outcome.rows)
    assert {row["key"]: os.stat(row["log"]).st_mtime_ns for row in again.rows} == logs


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    # As run_sweep's own local cluster does: workers at the pool's priority, not Ray's nice 15,
    # which on a busy machine made this test four times as long as the pool's run.
    before = os.environ.get("RAY_worker_niceness")
    os.environ["RAY_worker_niceness"] = "0"
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()
    if before is None:
        os.environ.pop("RAY_worker_niceness")
    else:
        os.environ["RAY_worker_niceness"] = before


@pytest.mark.long(0)
@pytest.mark.verilator
def test_ray_gives_the_same_table_as_the_pool(pool_sweep, ray_cluster):
    spec, outcome = pool_sweep
    on_ray = run_sweep(spec, executor="ray", directory=outcome.directory.parent / "ray")
    assert on_ray.ran == len(outcome.rows)          # a directory of its own: every job ran again
    assert _computed(on_ray.rows) == _computed(outcome.rows)
    assert all(Path(row["log"]).is_relative_to(outcome.directory.parent / "ray") for row in on_ray.rows)


def test_an_interrupted_sweep_resumes_where_it_stopped(tmp_path):
    grids = ["2x2", "3x3"]
    spec = _sweep_file(tmp_path, jobs='[[jobs]]\nkind = "model"\n', programs=["relu"], grids=grids)
    directory = tmp_path / "out"
    command = [sys.executable, "-m", "rivulet", "sweep", str(spec), "-j", "1", "-o", str(directory)]
    # A session of its own, so that Ctrl-C reaches the sweep and its job process, as in a terminal.
    sweep = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(directory.glob("jobs/*/result.json")):
        assert sweep.poll() is None and time.monotonic() < deadline, sweep.stdout.read()
        time.sleep(0.05)
    os.killpg(sweep.pid, signal.SIGINT)
    output, _ = sweep.communicate(timeout=120)
    assert sweep.returncode == 130, output
    done = {path.parent.name: path.stat().st_mtime_ns for path in directory.glob("jobs/*/result.json")}
    partial = json.loads((directory / "results.json").read_text())["rows"]
    total = len(grids) * len(DEPTHS)
    assert len(partial) == total and 1 <= len(done) < total
    assert sum(row["status"] == "not run" for row in partial) >= total - len(done) - 1   # one was running

    resumed = run_sweep(spec, executor="pool", workers=2, directory=directory)
    assert resumed.ran == total - len(done) and not resumed.failed
    assert {path.parent.name: path.stat().st_mtime_ns for path in directory.glob("jobs/*/result.json")
            if path.parent.name in done} == done


BROKEN = '''
def program():
    raise ValueError("this program is broken on purpose")
'''


def test_a_failing_job_is_reported_with_its_log_and_the_others_complete(tmp_path, capsys):
    (tmp_path / "broken.py").write_text(BROKEN)
    spec = tmp_path / "sweep.toml"
    spec.write_text(f"""seed = {base_seed()}
[axes]
grid = ["2x2", "3x3"]
[[programs]]
path = "broken.py"
[[programs]]
path = "{PROGRAMS / 'relu.py'}"
[[jobs]]
kind = "model"
""")
    status = main(["sweep", str(spec), "-j", "2", "-o", str(tmp_path / "out")])
    output = capsys.readouterr()
    assert status == 1
    rows = json.loads((tmp_path / "out" / "results.json").read_text())["rows"]
    assert {(row["program"], row["status"]) for row in rows} == {("broken", "refused"), ("relu", "passed")}
    for row in rows:
        if row["program"] == "broken":
            assert "this program is broken on purpose" in row["error"]
            assert "broken on purpose" in Path(row["log"]).read_text()
            assert row["log"] in output.out
    assert "2 of 4 sweep jobs did not pass" in output.err


@pytest.mark.parametrize("text, message", [
    ('[axes]\ngrid = ["3by3"]\n[[jobs]]\nkind = "generate"\n', "is not ROWSxCOLS"),
    ('[axes]\ngrid = ["3x3"]\n[[jobs]]\nkind = "simulate"\n', "kind must be one of generate, model"),
    ('[axes]\ngrid = ["3x3"]\nqueue_depth = [0]\n[[jobs]]\nkind = "generate"\n',
     "point grid=3x3 queue_depth=0: queue_depth=0 is not allowed"),
    ('[axes]\ngrid = ["3x3"]\n[[jobs]]\nkind = "generate"\nwhere = {grid = "4x4"}\n',
     "where grid = ['4x4'] is not among the axis values"),
    ('[axes]\nqueue_depth = {from = 2}\n[[jobs]]\nkind = "generate"\n', "a range is {from = A, to = B"),
    ('[axes]\ngrid = ["3x3"]\n[[jobs]]\nkind = "model"\n', "there is no [[programs]] entry"),
    ('[axes]\ngrid = ["3x3"]\n[[jobs]]\nkind = "synth"\nboard = "nexys"\n', "board 'nexys' is not known"),
    ('[axes]\ngrid = ["3x3"]\n[[jobs]]\nkind = "generate"\nprograms = ["mlp"]\n',
     "names no program of the sweep"),
    ('axes = 5\n[[jobs]]\nkind = "generate"\n', 'axes must be an [axes] table, e.g. [axes] grid = ["2x2", '),
    ('jobs = 5\n', "jobs = 5; write each entry as a [[jobs]] table (double brackets)"),
    ('programs = "mlp.py"\n[[jobs]]\nkind = "generate"\n', "programs = 'mlp.py'; write each entry as a "
                                                         "[[programs]] table"),
    ('[axes]\ngrid = ["3x3"]\n[[jobs]]\nkind = "generate"\nwhere = "grid=3x3"\n',
     "where = 'grid=3x3'; give a table of axis values, e.g. where = {queue_depth = 4}"),
    # these two once started the sweep: the job failed at once, or the run broke midway
    ('[axes]\ngrid = ["3x3"]\n[[jobs]]\nkind = "generate"\ntimeout_s = -5\n',
     "timeout_s = -5; give the seconds a job may take, a number > 0"),
    ('[axes]\ngrid = ["3x3"]\n[[jobs]]\nkind = "generate"\ntimeout_s = "1h"\n', "timeout_s = '1h'"),
])
def test_a_bad_sweep_file_is_refused_before_any_job_runs(tmp_path, capsys, text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    with pytest.raises(SweepError) as refused:
        load_sweep(spec)
    assert message in str(refused.value)
    assert main(["sweep", str(spec), "-o", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_sweep_file_that_cannot_be_read_is_refused(tmp_path):
    with pytest.raises(SweepError, match=r"sweep file .* cannot be read \(Is a directory\); give a \.toml"):
        load_sweep(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(SweepError, match=r"binary.toml: not a text file \(byte 0 is not UTF-8\)"):
        load_sweep(binary)


def test_a_job_for_some_programs_runs_only_for_them(tmp_path):
    """``programs = [...]`` in a [[jobs]] entry: its jobs exist for those programs only, model
    and fabric jobs alike, and the rows keep the program's name."""
    from rivulet.sweep.command import sweep_jobs

    jobs = 'programs = ["dot"]'
    text = (f'[[jobs]]\nkind = "model"\n{jobs}\n[[jobs]]\nkind = "generate"\n{jobs}\n'
            '[[jobs]]\nkind = "model"\n')
    spec = load_sweep(_sweep_file(tmp_path, jobs=text, grids=["3x3"], depths=[2]))
    made = [(job.kind, job.program) for job, _, _ in sweep_jobs(spec)]
    assert made == [("model", "dot"), ("generate", "dot"), ("model", "relu")]


def test_a_missing_extra_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)       # import ray now fails
    with pytest.raises(ExtraMissing, match=r"pip install 'rivulet-hw\[ray\]'"):
        require_extra("ray", "ray", "--executor ray")


def test_the_pareto_front_is_the_set_no_point_beats():
    import numpy as np
    rng = np.random.default_rng(base_seed())
    for _ in range(20):
        points = [tuple(map(int, point)) for point in rng.integers(0, 12, size=(15, 2))]
        for senses in (("min", "min"), ("max", "max"), ("min", "max")):
            signs = np.array([1 if sense == "min" else -1 for sense in senses])
            values = np.array(points) * signs
            # Brute force: i is dominated if some j is <= on both and < on one, or equal and earlier.
            expected = [i for i in range(len(points)) if not any(
                (np.all(values[j] <= values[i]) and np.any(values[j] < values[i]))
                or (np.all(values[j] == values[i]) and j < i) for j in range(len(points)))]
            assert pareto_front(points, senses) == expected
