"""How ``rivulet`` ends, for people and for scripts: exit status 0 passed, 1 results differ, 2
bad input, 3 internal error (one line naming it and the traceback's file), 130 / 143 on Ctrl-C
/ SIGTERM with one line; ``--json``; ``--version``."""

import json
import os
import signal
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import pytest

from rivulet.cli import main
from testbench.line_fabric import COPY_PROGRAM, line_files

REPOSITORY = Path(__file__).resolve().parents[1]


def _program(tmp_path: Path, text: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"rivulet {version('rivulet-hw')}\n"


def test_an_internal_error_is_one_line_and_exit_3(tmp_path, capsys, monkeypatch):
    def broken(*arguments, **options):
        return {}["missing"]
    monkeypatch.setattr("rivulet.run.run_file", broken)
    assert main(["run", "examples/mlp.py"]) == 3
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert line.startswith("rivulet: internal error: KeyError: 'missing' (a bug in rivulet; the traceback "
                           "is in "), line
    traceback_file = Path(line.split("the traceback is in ")[1].split(",")[0])
    assert "Traceback (most recent call last)" in traceback_file.read_text()
    assert "in broken" in traceback_file.read_text()
    traceback_file.unlink()
    assert main(["run", "examples/mlp.py", "--debug"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last)") and "in broken" in err
    assert err.splitlines()[-1].startswith("rivulet: internal error: KeyError: 'missing'")
    Path(err.splitlines()[-1].split("the traceback is in ")[1].split(",")[0]).unlink()


def test_bad_input_is_2_and_a_difference_is_1(tmp_path, capsys):
    assert main(["run", "examples/mlp.py", "--profile", "sometimes"]) == 2
    wrong = _program(tmp_path, COPY_PROGRAM.replace('expected={"out0": values}',
                                                     'expected={"out0": values[::-1]}'))
    assert main(["run", str(wrong)]) == 1
    assert "rivulet: MISMATCH: golden model vs reference: host port out0 differs at token 0: got 1, " \
           "expected 5" in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["generate", "token_queue", "-o", "{tmp}/file/q.v"],
     "{tmp}/file is a file, and a directory is needed there; remove it or choose another path"),
    (["generate", "token_queue", "-o", "{tmp}"], "{tmp} is a directory; name a file"),
    (["generate", "token_queue", "-o", "/proc/q.v"], "/proc/q.v: No such file or directory"),
    (["run", "examples/mlp.py", "--report", "{tmp}/file"],
     "{tmp}/file is a file, and a directory is needed there; remove it or choose another path"),
    (["compile", "examples/ripple_bfs.py", "-o", "{tmp}"],
     "cannot write {tmp}: {tmp} is a directory; name a file"),
])
def test_an_output_path_that_cannot_be_written_is_bad_input(tmp_path, capsys, argv, message):
    """The line names the path the user gave (not a temporary file beside it) and what is wrong."""
    (tmp_path / "file").write_text("")
    assert main([argument.format(tmp=tmp_path) for argument in argv]) == 2
    line = capsys.readouterr().err.splitlines()[-1]
    assert line == "rivulet: error: " + message.format(tmp=tmp_path), line


def test_a_metadata_path_that_cannot_be_written_leaves_no_verilog_behind(tmp_path, capsys):
    """Both files or neither: the user fixes the path and runs the same command again."""
    (tmp_path / "file").write_text("")
    verilog = tmp_path / "q.v"
    argv = ["generate", "token_queue", "-o", str(verilog), "--metadata", str(tmp_path / "file" / "q.json")]
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rivulet: error: {tmp_path}/file is a file, and a directory is needed there; remove it or "
        f"choose another path")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file"]


def test_a_metadata_path_that_is_the_verilog_file_is_refused(tmp_path, capsys):
    verilog = tmp_path / "q.v"
    assert main(["generate", "token_queue", "-o", str(verilog), "--metadata", str(verilog)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rivulet: error: --metadata {verilog} is the Verilog file -o names too; give the port list its own "
        f"file (e.g. --metadata {tmp_path / 'q.json'})")
    assert not verilog.exists()


# --- signals ----------------------------------------------------------------------------------

SLOW = '''
import time
from pathlib import Path


def program():
    Path(__file__).with_suffix(".started").touch()
    for _ in range(1200):       # short sleeps: the main thread sees the signal whichever thread took it
        time.sleep(0.05)
'''


@pytest.mark.parametrize("number,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_and_sigterm_end_with_one_line(tmp_path, number, status):
    path = _program(tmp_path, SLOW, "slow.py")
    run = subprocess.Popen([sys.executable, "-m", "rivulet", "run", str(path)], cwd=REPOSITORY,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    started = time.monotonic()
    while not path.with_suffix(".started").exists():
        assert run.poll() is None and time.monotonic() - started < 60, run.communicate()
        time.sleep(0.05)
    os.kill(run.pid, number)
    try:
        out, err = run.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        run.send_signal(signal.SIGABRT)         # PYTHONFAULTHANDLER: every thread's stack on stderr
        out, err = run.communicate()
        pytest.fail(f"rivulet run did not end within 30 s of signal {number}; where it was:\n{err}")
    assert (run.returncode, err) == (status, "rivulet: interrupted\n")


# --- --json -----------------------------------------------------------------------------------

def _json_run(capsys, argv) -> tuple[int, dict]:
    status = main([*argv, "--json"])
    return status, json.loads(capsys.readouterr().out)      # stdout holds the JSON alone


def test_json_gives_the_results_of_a_passing_run(tmp_path, capsys):
    fabric, program = line_files(tmp_path)
    status, result = _json_run(capsys, ["run", str(program), "--fabric", str(fabric)])
    assert status == 0
    assert {key: result[key] for key in ("sim", "passed", "exit_status", "error")} == {
        "sim": "model", "passed": True, "exit_status": 0, "error": None}
    (case,) = result["cases"]
    assert (case["name"], case["passed"], case["problems"]) == ("copy", True, [])
    assert case["runs"]["model"]["outputs"] == {"out0": [1, 2, 3, 4, 5]}
    assert case["runs"]["model"]["tiles"] == [{"tile": [0, 0], "firings": 5, "link_beats": [0, 5, 0, 0, 5]}]


def test_json_gives_a_difference_and_a_refusal(tmp_path, capsys):
    fabric, program = line_files(tmp_path)
    program.write_text(program.read_text().replace('expected={"out0": values}', 'expected={"out0": [9]}'))
    status, result = _json_run(capsys, ["run", str(program), "--fabric", str(fabric)])
    assert (status, result["passed"], result["exit_status"]) == (1, False, 1)
    assert result["error"].startswith("MISMATCH: golden model vs reference: host port out0 differs at "
                                      "token 0: got 1, expected 9")
    (case,) = result["cases"]
    assert case["passed"] is False and case["problems"][0].startswith("golden model: host port out0")
    assert case["runs"]["model"]["outputs"] == {"out0": [1, 2, 3, 4, 5]}
    status, result = _json_run(capsys, ["run", str(tmp_path / "none.py")])
    assert (status, result["exit_status"], result["cases"]) == (2, 2, [])
    assert result["error"] == f"error: program file {tmp_path / 'none.py'} does not exist"


@pytest.mark.verilator
def test_json_gives_the_rtl_cycles_and_counters(tmp_path, capsys):
    fabric, program = line_files(tmp_path)
    status, result = _json_run(capsys, ["run", str(program), "--fabric", str(fabric), "--sim", "both"])
    assert status == 0
    runs = result["cases"][0]["runs"]
    assert runs["rtl"]["outputs"] == runs["model"]["outputs"] == {"out0": [1, 2, 3, 4, 5]}
    assert runs["rtl"]["cycles"] > 0 and runs["rtl"]["host_sent"] == {"in0": 5}
    (tile,) = runs["rtl"]["tiles"]
    assert (tile["tile"], tile["firings"], tile["link_beats"]) == ([0, 0], 5, [0, 5, 0, 0, 5])
    assert tile["stalls"] >= 0
