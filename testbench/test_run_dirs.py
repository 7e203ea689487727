"""Parallel runs are safe: every run has a directory of its own under build/sim-runs/, so two
runs of the same program, profile and seed at once both pass; the Verilator build stays shared."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rivulet.sim.run_dirs import RUN_ROOT, run_directory
from testbench.line_fabric import line_files

REPOSITORY = Path(__file__).resolve().parents[1]


def test_each_run_of_a_case_gets_its_own_directory(monkeypatch):
    monkeypatch.delenv("WAVES", raising=False)
    monkeypatch.delenv("RIVULET_KEEP_RUNS", raising=False)
    with run_directory("same case") as first, run_directory("same case") as second:
        assert first != second and first.parent == second.parent == RUN_ROOT
        assert first.name.startswith(f"same_case-{os.getpid()}-") and not any(first.iterdir())
    assert not first.exists() and not second.exists()      # passed: removed


def test_a_failed_or_kept_run_keeps_its_directory(monkeypatch):
    monkeypatch.delenv("WAVES", raising=False)
    with pytest.raises(RuntimeError), run_directory("failing") as failed:
        raise RuntimeError("the run failed")
    assert failed.is_dir()
    failed.rmdir()
    monkeypatch.setenv("RIVULET_KEEP_RUNS", "1")
    with run_directory("kept") as kept:
        pass
    assert kept.is_dir()
    kept.rmdir()


@pytest.mark.verilator
def test_two_runs_of_the_same_program_at_once_both_pass(tmp_path):
    """The same program, profile and seed: once the same run directory, then both crashed
    (``zip() argument 2 is shorter``) or reported a hang."""
    fabric, program = line_files(tmp_path)
    argv = [sys.executable, "-m", "rivulet", "run", str(program), "--fabric", str(fabric),
            "--sim", "rtl", "--seed", "3"]
    environment = {**os.environ, "WAVES": "", "RIVULET_KEEP_RUNS": ""}
    subprocess.run(argv, cwd=REPOSITORY, env=environment, capture_output=True, check=False)   # build
    runs = [subprocess.Popen(argv, cwd=REPOSITORY, env=environment, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    for run, (out, err) in [(run, run.communicate()) for run in runs]:
        assert run.returncode == 0, err
        assert "outputs equal the program's reference" in out, err
        assert not list(RUN_ROOT.glob(f"*-{run.pid}-*")), "a passing run leaves no run directory"
