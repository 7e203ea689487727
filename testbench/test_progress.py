"""Long Verilator builds show progress (phase and time, on stderr), a cached build says so, and
``--waves`` says where the waves went and how to open them."""

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from rivulet.cli import main
from rivulet.sim.progress import Progress
from testbench.line_fabric import line_files


def test_progress_says_each_phase_and_the_time_then_done():
    lines, phase = [], ["verilator"]
    with Progress("building the fabric", phase=lambda: phase[0], done="built the fabric",
                  say=lines.append, interval=60, poll=0.01):
        time.sleep(0.1)
        phase[0] = "compiling the C++ model"
        time.sleep(0.1)
    assert lines == ["building the fabric (verilator, 0 s)...",
                     "building the fabric (compiling the C++ model, 0 s)...",
                     "built the fabric in 0 s"]


def test_progress_repeats_every_interval_and_a_quick_quiet_step_says_nothing():
    lines = []
    with Progress("building", say=lines.append, interval=0.05, poll=0.01):
        time.sleep(0.3)
    assert len(lines) >= 3 and set(lines) == {"building (0 s)..."}
    lines.clear()
    with Progress("converting", say=lines.append, quiet_for=10, poll=0.01):
        time.sleep(0.05)
    assert lines == []


@pytest.mark.verilator
def test_a_cached_build_says_so(tmp_path):
    from rivulet.sim.fabric_run import _fabric_key
    from rivulet.sim.verilator import build_design
    from rsn.fabric import Fabric
    from rsn.fabric_spec import load_fabric

    spec = load_fabric(line_files(tmp_path)[0])
    build_design(_fabric_key(spec), Fabric(spec), what="the Verilated fabric 1x1", say=lambda line: None)
    lines = []
    build_design(_fabric_key(spec), Fabric(spec), what="the Verilated fabric 1x1", say=lines.append)
    (line,) = lines
    assert re.fullmatch(r"using the cached build in \S*build/sim/fabric-[0-9a-f]{12} "
                        r"\(the Verilated fabric 1x1\)", line), line


@pytest.mark.verilator
def test_waves_say_where_they_went_and_how_to_open_them(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("WAVES", raising=False)
    monkeypatch.setattr("rivulet.sim.waves._vcd_note_given", False)
    fabric, program = line_files(tmp_path)
    assert main(["run", str(program), "--fabric", str(fabric), "--sim", "rtl", "--waves"]) == 0
    err = capsys.readouterr().err
    found = re.search(r"^waves: (\S+/dump\.(fst|vcd)) \(open with: gtkwave (\S+)  or: surfer (\S+)\)$",
                      err, re.MULTILINE)
    assert found, err
    waves = Path(found[1])
    assert found[3] == found[4] == found[1] and waves.exists()
    if found[2] == "vcd":
        assert err.count("waves are written as VCD instead of FST") == 1
    assert "WAVES" not in os.environ        # set for the run only
    shutil.rmtree(waves.parent)             # a run with waves keeps its directory
