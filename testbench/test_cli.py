"""The ``rivulet`` command line: help, listing, generation, compilation to graph JSON, and refusal
of bad input."""

import json
import re
import runpy
from pathlib import Path

import pytest

from ripple_core.programs import ripple_bfs
from ripple_core.riptide import load_graph
from rivulet.cli import main

SUITE = Path(__file__).resolve().parents[2] / "shared" / "peer-suites" / "riptide"
needs_suite = pytest.mark.skipif(not SUITE.is_dir(),
                                 reason="RipTide peer suite not found beside the repository")


def test_help_names_every_command(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "generate" in out and "list" in out and "build" in out and "compile" in out and "examples:" in out


def test_run_on_a_board_that_is_not_there_says_so(capsys):
    assert main(["run", "examples/mlp.py", "--sim", "board", "--port", "/dev/no-such-board"]) == 1
    assert "cannot open serial port /dev/no-such-board" in capsys.readouterr().err


def test_generate_help_is_useful_on_its_own(capsys):
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    out = capsys.readouterr().out
    for needle in ("COMPONENT", "--param", "-o FILE.v", "i__payload", "token_queue"):
        assert needle in out


def test_list_shows_parameters_and_defaults(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"token_queue:.*\n\s+width=32 .*\n\s+depth=4 ", out)


@pytest.mark.parametrize("component,params,ports", [
    ("token_queue", ["width=16", "depth=3"], ["i__payload", "i__valid", "i__ready", "o__payload", "level"]),
    ("fork", ["n=3"], ["o__2__payload", "o__2__valid", "o__2__ready"]),
    ("arbiter", ["n=3", "tuple_beats=2"], ["i__2__payload", "grant", "o__valid"]),
    ("join", ["n=2", "width=4"], ["i__1__payload", "o__payload"]),
    ("skid_buffer", [], ["i__ready", "o__valid"]),
])
def test_generate_writes_verilog_with_stream_port_names(tmp_path, component, params, ports):
    verilog, metadata = tmp_path / "out.v", tmp_path / "out.json"
    argv = ["generate", component, "-o", str(verilog), "--metadata", str(metadata)]
    for param in params:
        argv += ["--param", param]
    assert main(argv) == 0
    text = verilog.read_text()
    assert re.search(rf"^module rivulet_{component}\(", text, re.MULTILINE)
    declared = set(re.findall(r"^\s*(?:input|output)\s+(?:\[\d+:0\]\s+)?(\w+);", text, re.MULTILINE))
    assert set(ports) <= declared
    assert "(* src" not in text   # reproducible by default: no paths of this machine
    assert json.loads(metadata.read_text())["interface"]["members"]


def test_generated_width_matches_the_parameter(tmp_path):
    out = tmp_path / "q.v"
    assert main(["generate", "token_queue", "-p", "width=13", "-p", "depth=5", "-o", str(out)]) == 0
    assert re.search(r"input \[12:0\] i__payload;", out.read_text())


@pytest.mark.parametrize("argv,message", [
    (["generate", "token_queue", "-p", "depth=0"], "token_queue: depth=0 is not allowed"),
    (["generate", "token_queue", "-p", "depth=100000000"],
     "token_queue: depth=100000000 exceeds the limit 65536"),
    (["generate", "tokenqueue"], "unknown component 'tokenqueue'"),
    (["generate", "fork", "-p", "n=1"], "fork: n=1 is not allowed"),
    (["generate", "join", "-p", "width=0"], "join: width=0 is not allowed"),
    (["generate", "fork", "-p", "depth=2"], "fork: unknown parameter 'depth'"),
    (["generate", "token_queue", "--top", "my queue"],
     "--top 'my queue' is not a Verilog identifier; use letters, digits, _ and $, starting with a letter"),
    (["generate", "token_queue", "--top", "2q"], "--top '2q' is not a Verilog identifier"),
    (["generate", "fabric", "--top", "sub/fabric"], "--top 'sub/fabric' is not a Verilog identifier"),
    (["generate", "fabric", "--metadata", "fabric.json"],
     "--metadata applies to one component; `generate fabric` writes its ports, tiles, registers and ISA"),
])
def test_bad_input_writes_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "out.v"
    assert main(argv + ["-o", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_run_mlp_on_the_golden_model(capsys):
    assert main(["run", "examples/mlp.py"]) == 0
    out = capsys.readouterr().out
    assert "outputs equal the program's reference" in out
    assert re.search(r"layer1\s+mac\s+48\b", out)      # 2 x 16 tokens loaded + 2 x 8 results


@pytest.mark.parametrize("argv,message", [
    (["run", "no/such/program.py"], "program file no/such/program.py does not exist"),
    (["run", "examples/mlp.py", "--profile", "sometimes"], "--profile 'sometimes' is not a stall profile"),
    (["run", "examples/mlp.py", "--profile", "no_stall"],
     "--profile stalls the RTL run's host ports, and --sim model makes none: add --sim rtl or --sim both"),
    (["run", "examples/mlp.py", "--sim", "rtl", "--baud", "9600"],
     "--baud sets the board's UART rate, and --sim rtl runs no board: add --sim board"),
    (["run", "examples/mlp.py", "--fabric", "no/such.toml"],
     "fabric description no/such.toml does not exist"),
    (["run", "examples/mlp.py", "--sim", "board"], "--sim board needs --port"),
    (["run", "examples/mlp.py", "--port", "/dev/ttyUSB1"],
     "--port names a board's serial port, and --sim model runs no board: add --sim board"),
    (["run", "examples/mlp.py", "--waves"],
     "--waves applies to the RTL run, and --sim model makes none: add --sim rtl or --sim both"),
    (["run", "examples/mlp.py", "--tier", "cocotb"], "--tier applies to the RTL run"),
    (["run", "examples/mlp.py", "--sim", "board", "--port", "/dev/ttyUSB1", "--keep"],
     "--keep applies to the RTL run, and --sim board makes none"),
    (["build", "--board", "icebreaker", "--fabric", "no/such.toml"],
     "fabric description no/such.toml does not exist"),
    (["build", "--board", "icebreaker", "--baud", "0"],
     "--baud 0 on icebreaker (12000000 Hz clock): baud=0 must be a positive integer"),
    (["build", "--board", "icebreaker", "--baud", "5000000"],
     "give 2.40 clocks per bit; the UART needs at least 4: lower the baud rate"),
])
def test_run_refuses_bad_input(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_generate_fabric_writes_verilog_and_description(tmp_path):
    assert main(["generate", "fabric", "-o", str(tmp_path)]) == 0
    description = json.loads((tmp_path / "rivulet_fabric.json").read_text())
    assert (description["rows"], description["cols"]) == (3, 3)
    assert {port["name"] for port in description["host_ports"]} == {"in0", "in1", "out0", "out1"}
    assert description["micro_ops"]["switch"][0] == {"name": "beats", "offset": 0, "width": 16,
                                                     "signed": False}
    high = next(field for field in description["micro_ops"]["switch"] if field["name"] == "beats_high")
    assert high["high_bits_of"] == "beats"
    text = (tmp_path / "rivulet_fabric.v").read_text()
    for port in ("ctrl__payload", "readback__valid", "in0__ready", "out1__payload", "done", "stalled"):
        assert re.search(rf"(input|output) (\[\d+:0\] )?{port};", text), port


@needs_suite
@pytest.mark.parametrize("graph", ["dmv.riptide.json", "nn-vadd.riptide.nostream.json"])
def test_compile_a_suite_graph_then_run_the_written_file(tmp_path, capsys, graph):
    out = tmp_path / "graph.json"
    assert main(["compile", str(SUITE / graph), "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert load_graph(out) == load_graph(SUITE / graph)
    written, original = json.loads(out.read_text()), json.loads((SUITE / graph).read_text())
    names = [[a["name"] for a in document["function"]["args"]] for document in (written, original)]
    assert names[0] == names[1]
    kernel = graph.split(".")[0]
    assert main(["run", str(out), "--vectors", str(SUITE / f"{kernel}.vectors.json"), "--sim", "model"]) == 0
    assert "cases pass" in capsys.readouterr().out


def test_compile_a_ripple_program_file_then_run_the_written_file(tmp_path, capsys):
    out, vectors = tmp_path / "bfs.json", tmp_path / "bfs.vectors.json"
    assert main(["compile", "examples/ripple_bfs.py", "-o", str(out), "-D", "vertices=12"]) == 0
    assert "from program()" in capsys.readouterr().out
    assert load_graph(out) == ripple_bfs(depth=2)
    made = runpy.run_path("examples/ripple_bfs.py")["program"](vertices=12)
    vectors.write_text(json.dumps([made.case]))
    assert main(["run", str(out), "--vectors", str(vectors), "--sim", "model"]) == 0
    assert "all 1 cases pass" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["no/such/graph.json"], "source no/such/graph.json does not exist"),
    (["Makefile"], "Makefile: rivulet compile reads a RipTide graph (.json), a Python file of @kernel"),
    (["examples/mlp.py"], "it must return a RippleProgram"),
    (["rivulet/files.py"], "rivulet/files.py defines no program() returning a RippleProgram"),
    (["examples/ripple_bfs.py", "--mode", "ordered"], "--mode does not apply to examples/ripple_bfs.py"),
    (["examples/ripple_bfs.py", "-D", "colour=red"], "program() has no parameter 'colour'"),
    (["pyproject.toml"], "not a .toml file"),
])
def test_compile_refuses_bad_input_in_one_line(tmp_path, capsys, argv, message):
    out = tmp_path / "graph.json"
    assert main(["compile", *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_compile_refuses_a_broken_graph_and_an_unwritable_output(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"function": {"name": "f", "args": []},
                                  "vertices": [{"ID": 0, "op": "ARITH_CFG_OP_FOO", "inputs": []}]}))
    assert main(["compile", str(broken), "-o", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert "vertex 0 (?): field 'op' 'ARITH_CFG_OP_FOO': operator FOO is not supported" in err
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["compile", "examples/ripple_bfs.py", "-o", str(blocker / "graph.json")]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {blocker / 'graph.json'}" in err and err.count("\n") == 1


@needs_suite
def test_compile_refuses_program_parameters_for_a_graph(tmp_path, capsys):
    out = tmp_path / "graph.json"
    assert main(["compile", str(SUITE / "simple.riptide.json"), "-o", str(out), "-D", "n=3"]) == 2
    assert "-D does not apply to" in capsys.readouterr().err
    assert not out.exists()
