"""Long Verilator builds show progress (phase and time, on stderr), a cached build says so, and
``--waves`` says where the waves went and how to open them, with a saved signal list."""

import io
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from rivulet.cli import main
from rivulet.sim.progress import CountBar, Progress
from rivulet.sim.wave_signals import Trace, write_gtkw
from rsn.fabric_spec import load_fabric
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


def _declared(vcd: Path) -> set[str]:
    """Every signal's full name in a VCD header, for checking the saved list against it."""
    words = vcd.read_text().split("$enddefinitions")[0].split()
    scopes, names = [], set()
    for at, word in enumerate(words):
        if word == "$scope":
            scopes.append(words[at + 2])
        elif word == "$upscope":
            scopes.pop()
        elif word == "$var":            # $var TYPE WIDTH ID NAME [RANGE] $end
            names.add(".".join([*scopes, words[at + 4]]))
    return names


@pytest.mark.verilator
def test_waves_say_where_they_went_and_how_to_open_them(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("WAVES", raising=False)
    monkeypatch.setattr("rivulet.sim.waves._vcd_note_given", False)
    fabric, program = line_files(tmp_path)
    assert main(["run", str(program), "--fabric", str(fabric), "--sim", "rtl", "--waves"]) == 0
    err = capsys.readouterr().err
    found = re.search(r"^waves: (\S+/dump\.(fst|vcd)) \(open with: gtkwave (\S+) (\S+/signals\.gtkw)  "
                      r"or: surfer (\S+)\)$", err, re.MULTILINE)
    assert found, err
    waves = Path(found[1])
    assert found[3] == found[5] == found[1] and waves.exists()
    saved = Path(found[4]).read_text().splitlines()
    assert f'[dumpfile] "{waves.resolve()}"' in saved
    listed = [line.split("[")[0] for line in saved if line.startswith("top.")]
    tiles = len(load_fabric(fabric).all_tiles())
    assert sum(name.endswith((".firings", ".stalls")) for name in listed) == 2 * tiles
    assert {"top.done", "top.stalled", "top.in0__payload", "top.out0__valid",
            "top.dut.dispenser.cycles"} <= set(listed)
    if found[2] == "vcd":
        assert err.count("waves are written as VCD instead of FST") == 1
        assert "saved signal list leaves" not in err
        assert set(listed) <= _declared(waves)
    assert "WAVES" not in os.environ        # set for the run only
    shutil.rmtree(waves.parent)             # a run with waves keeps its directory


def test_the_saved_signal_list_leaves_out_what_a_vcd_does_not_hold(tmp_path):
    vcd = tmp_path / "dump.vcd"
    vcd.write_text("$timescale 1ps $end\n$scope module top $end\n$var wire 1 ! done $end\n"
                   "$scope module dut $end\n$var wire 32 # idle_cycles [31:0] $end\n$upscope $end\n"
                   "$upscope $end\n$enddefinitions $end\n#0\n1!\n")
    groups = [("host ports", [Trace("top.done"), Trace("top.stalled")]),
              ("counters", [Trace("top.dut.idle_cycles", 32), Trace("top.dut.tile_0_0.firings", 32)])]
    saved, missing = write_gtkw(tmp_path, vcd, groups)
    lines = saved.read_text().splitlines()
    assert missing == ["top.stalled", "top.dut.tile_0_0.firings"]
    assert [line for line in lines if line.startswith("top.")] == ["top.done", "top.dut.idle_cycles[31:0]"]
    # each group opens and closes, named, with the display flag before every signal
    assert lines[lines.index("top.done") - 1] == "@28"
    assert lines[lines.index("top.dut.idle_cycles[31:0]") - 1] == "@24"
    assert lines.count("-host ports") == 2 and lines.count("-counters") == 2


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_count_bar_redraws_on_a_terminal_and_is_quiet_in_a_log():
    terminal, log = _Terminal(), io.StringIO()
    for stream in (terminal, log):
        bar = CountBar(4, stream, width=8)
        bar.update(1)
        bar.say("job 1 passed")
        bar.update(2)
        bar.close()
    assert log.getvalue() == "job 1 passed\n"           # the caller's line, no redraws
    drawn = terminal.getvalue()
    assert "[##......] 1/4, 0 s, ~0 s left" in drawn and "[####....] 2/4" in drawn
    assert "job 1 passed\n" in drawn and drawn.endswith("\r\033[K")   # the bar leaves no line behind


def test_a_native_simulation_shows_the_runs_it_has_finished(tmp_path, monkeypatch):
    from rivulet.sim.native.runs import _drive

    results = tmp_path / "results.txt"
    driver = ("import sys, time\n"
              "with open(sys.argv[1], 'w') as out:\n"
              "    for index in range(2):\n"
              "        time.sleep(1.5)\n"
              "        out.write(f'run {index} 10 5\\nstatus 0\\n'); out.flush()\n"
              "print('driver done')\n")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code, stdout, _ = _drive([sys.executable, "-c", driver, str(results)], results, 2)
    assert (code, stdout) == (0, "driver done\n")
    drawn = terminal.getvalue()
    assert "native runs [" in drawn and "1/2" in drawn and drawn.endswith("\r\033[K")
