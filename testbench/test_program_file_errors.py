"""An error inside a program file is the user's input going wrong, not the command: it is shown
as FILE:LINE and the message, the line being the file's own, never importlib's frames, and
exits with status 2 (bad input)."""

import pytest

from rivulet.cli import main


@pytest.mark.parametrize("text,message", [
    ("x = 1\n\ndef program(:\n    pass\n",
     "prog.py:3: syntax error: invalid syntax in: def program(:"),
    ("import no_such_module_here\n",
     "prog.py:1: while loading the file: ModuleNotFoundError: No module named 'no_such_module_here'"),
    ("def program():\n    return 42\n",
     "prog.py:1: program() returned 42 (type int); it must return one of: Program, RippleProgram, "
     "SnnProgram"),
    ("def program():\n    values = [1, 2]\n    return values[5]\n",
     "prog.py:3: in program(): IndexError: list index out of range"),
    # a builder's validation error, raised inside the builder: the file's own line is named
    ("from ripple_core.builder import Builder\n\n\ndef program():\n    b = Builder()\n"
     "    b.wire('w').bind(b.const(1))\n",
     "prog.py:6: in program(): GraphError: wire 'w' must be bound to an operator output"),
    # an SNN network's validation error
    ("from snn.lif_params import LifParams\nfrom snn.network import Network\n\n\ndef program():\n"
     "    network = Network()\n    network.add_population('hidden', 0, LifParams())\n",
     "prog.py:7: in program(): ValueError: network: population 'hidden' has size 0; it must be an int >= 1"),
    # sys.exit() would have ended the command with that status and no word
    ("import sys\n\n\ndef program():\n    sys.exit(3)\n",
     "prog.py:5: in program(): the file called sys.exit(3); rivulet imports a program file and calls it, so "
     "it must not end the process"),
    ("raise SystemExit('usage: prog.py N')\n",
     "prog.py:1: while loading the file: the file called sys.exit('usage: prog.py N')"),
    # a RippleProgram made wrong: checked where it is made, not deep in the lowering
    ("from rivulet.frontends import RippleProgram\n\n\ndef program():\n    return RippleProgram(None)\n",
     "prog.py:5: in program(): TypeError: RippleProgram's graph is a NoneType; give a ripple_core"),
    ("from ripple_core.programs import tree_walk\nfrom rivulet.frontends import RippleProgram\n\n\n"
     "def program():\n    return RippleProgram(tree_walk(8), {'expect': {'done': 1}})\n",
     "prog.py:6: in program(): ValueError: RippleProgram's case: expect['done'] is 1; give the array's final "
     "contents or the SINK's tokens as a list of integers"),
])
def test_an_error_in_a_program_file_names_its_file_and_line(tmp_path, capsys, text, message):
    path = tmp_path / "prog.py"
    path.write_text(text)
    assert main(["run", str(path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"rivulet: error: {tmp_path / message}"), line
    assert "importlib" not in line and "<frozen" not in line
