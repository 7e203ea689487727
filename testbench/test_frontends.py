"""The front-end protocol through ``rivulet run``: the fabric given with ``--fabric`` (or the
program file's ``FABRIC``) is the one a program is lowered for, and ``-D NAME=VALUE`` reaches
``program()``."""

import re
from pathlib import Path

import pytest

from rivulet.cli import main
from rivulet.frontends import FrontendError, parse_definitions

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# A path program that shows what program() received: the fabric's queue depth and -D tokens.
PASS_THROUGH = '''
from rsn.graph import StreamGraph
from rsn.program import Program

{fabric_line}

def program(fabric, tokens=3, scale=1.0, label="plain"):
    graph = StreamGraph()
    graph.add_host_in("x", "in0", tokens)
    graph.add_node("copy", "alu", [{{"beats": tokens}}])
    graph.add_host_out("y", "out0", tokens)
    graph.connect("x", "copy", tokens)
    graph.connect("copy", "y", tokens)
    values = list(range(1, tokens + 1))
    return Program(name="pass_through", graph=graph, host_inputs={{"in0": values}},
                   expected={{"out0": values}},
                   description=f"queue_depth {{fabric.queue_depth}}, {{tokens}} tokens, "
                               f"scale {{scale!r}}, label {{label!r}}")
'''


def _fabric(tmp_path: Path, source: str, name: str, **changes) -> Path:
    """A copy of ``examples/fabrics/SOURCE`` with fields changed (top-level ones, or a kind table's:
    each name is written once in those files)."""
    text = (EXAMPLES / "fabrics" / source).read_text()
    for field, value in changes.items():
        text, count = re.subn(rf"^{field} = \S+", f"{field} = {value}", text, flags=re.MULTILINE)
        assert count == 1, field
    path = tmp_path / name
    path.write_text(text)
    return path


def _program(tmp_path: Path, fabric_line: str = "") -> Path:
    path = tmp_path / "pass_through.py"
    path.write_text(PASS_THROUGH.format(fabric_line=fabric_line))
    return path


def test_an_snn_example_is_lowered_for_the_fabric_it_runs_on(tmp_path, capsys):
    """Other neuron arithmetic and other crossbar sizes: the network is lowered for them, so the
    run passes (it used to be lowered for snn.toml and reported a deadlock on this fabric)."""
    fabric = _fabric(tmp_path, "snn.toml", "other.toml", threshold=3, axons=32, neurons=8)
    assert main(["run", str(EXAMPLES / "snn_small.py"), "--fabric", str(fabric)]) == 0
    out = capsys.readouterr().out
    assert "outputs equal the program's reference" in out
    # three tiles of 8 neurons, each read back through 8 / 4 banks = 2 latch groups: 3 x 8 membranes
    assert "register reads equal (24 values: layer1_c0, layer1_c1, layer2_c0)" in out


def test_a_fabric_that_cannot_hold_the_program_is_refused_not_run(capsys):
    assert main(["run", str(EXAMPLES / "snn_small.py"), "--fabric",
                 str(EXAMPLES / "fabrics" / "default.toml")]) == 2
    assert "snn_small.py: snn lowering: the fabric has no xbar tiles" in capsys.readouterr().err
    assert main(["run", str(EXAMPLES / "ripple_bfs.py"), "--fabric",
                 str(EXAMPLES / "fabrics" / "snn.toml")]) == 2
    assert "ripple_bfs.py: bfs-ripple: the fabric has no pe tiles" in capsys.readouterr().err


def test_a_ripple_example_is_lowered_for_the_fabric_it_runs_on(tmp_path, capsys):
    """Banks of 8 words cannot hold the BFS's arrays: the lowering for that fabric says so."""
    fabric = _fabric(tmp_path, "ripple.toml", "small-banks.toml", mem_depth=8)
    assert main(["run", str(EXAMPLES / "ripple_bfs.py"), "--fabric", str(fabric)]) == 2
    assert re.search(r"ripple_bfs.py: .*array '\w+' has \d+ words in this case, but a pe tile's bank "
                     r"holds 8 \(\[pe\] mem_depth\)", capsys.readouterr().err)


def test_program_receives_the_fabric_given_with_fabric(tmp_path, capsys):
    program = _program(tmp_path)
    shallow = _fabric(tmp_path, "default.toml", "shallow.toml", queue_depth=2)
    assert main(["run", str(program)]) == 0
    assert "pass_through: queue_depth 4, 3 tokens" in capsys.readouterr().out
    assert main(["run", str(program), "--fabric", str(shallow)]) == 0
    assert "pass_through: queue_depth 2, 3 tokens" in capsys.readouterr().out


def test_without_fabric_a_program_file_runs_on_its_own_fabric(tmp_path, capsys):
    _fabric(tmp_path, "default.toml", "shallow.toml", queue_depth=2)
    program = _program(tmp_path, fabric_line='FABRIC = "shallow.toml"')
    assert main(["run", str(program)]) == 0
    assert "pass_through: queue_depth 2, 3 tokens" in capsys.readouterr().out


def test_definitions_reach_program(tmp_path, capsys):
    program = _program(tmp_path)
    argv = ["run", str(program), "-D", "tokens=5", "-D", "scale=0.25", "--define", "label=wide"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "pass_through: queue_depth 4, 5 tokens, scale 0.25, label 'wide'" in out
    assert re.search(r"copy\s+alu\s+5\b", out)          # the alu fired once per token
    assert main(["run", str(EXAMPLES / "snn_small.py"), "-D", "steps=16"]) == 0
    assert "16 timesteps" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["-D", "tokes=5"], "pass_through.py: program() has no parameter 'tokes'; its parameters: tokens=3, "
                        "scale=1.0, label='plain'"),
    (["-D", "fabric=x.toml"], "-D fabric: the fabric is a description file; give it with --fabric"),
    (["-D", "tokens"], "-D 'tokens': write -D NAME=VALUE"),
    (["-D", "tokens=1", "-D", "tokens=2"], "-D tokens is given twice (1 and 2)"),
    (["-D", "tokens=three"], "pass_through.py: -D tokens=three: program()'s tokens is an integer (its "
                             "default is 3); give e.g. -D tokens=3"),
    (["-D", "tokens=2.5"], "-D tokens=2.5: program()'s tokens is an integer"),
    (["-D", "scale=big"], "-D scale=big: program()'s scale is a number (its default is 1.0)"),
])
def test_bad_definitions_are_refused(tmp_path, capsys, argv, message):
    assert main(["run", str(_program(tmp_path)), *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_graph_takes_no_definitions(tmp_path, capsys):
    graph = tmp_path / "g.riptide.json"
    graph.write_text("{}")
    assert main(["run", str(graph), "--vectors", str(graph), "-D", "n=1"]) == 2
    assert "g.riptide.json is a dataflow graph: -D sets parameters of a program file's program()" \
        in capsys.readouterr().err


def test_definition_values_read_as_int_float_or_string():
    assert parse_definitions(["a=3", "b=-2", "c=0x1f", "d=0.5", "e=1e-3", "f=ripple", "g="]) == {
        "a": 3, "b": -2, "c": 31, "d": 0.5, "e": 0.001, "f": "ripple", "g": ""}
    with pytest.raises(FrontendError, match="-D '3=a': write -D NAME=VALUE"):
        parse_definitions(["3=a"])
