"""Results compare as words: an expected value equals the fabric's word modulo 2^width, whether
it is written signed or unsigned, and a difference shows the word in both readings."""

from pathlib import Path

import pytest

from rivulet.cli import main
from rsn.words import same_word, word_text, words_problem

# in0 -> alu (a plain copy) -> out0 on the default fabric, with the reference written as given.
COPY = '''
from rsn.graph import StreamGraph
from rsn.program import Program


def program(sent=(-1, 5, 2), expected=(-1, 5, 2)):
    n = len(sent)
    graph = StreamGraph()
    graph.add_host_in("x", "in0", n)
    graph.add_node("copy", "alu", [{"beats": n}])
    graph.add_host_out("y", "out0", n)
    graph.connect("x", "copy", n)
    graph.connect("copy", "y", n)
    return Program(name="copy", graph=graph, host_inputs={"in0": list(sent)},
                   expected={"out0": list(expected)})
'''


def _copy(tmp_path: Path, sent, expected) -> Path:
    path = tmp_path / "copy.py"
    path.write_text(COPY.replace("sent=(-1, 5, 2), expected=(-1, 5, 2)",
                                 f"sent={tuple(sent)!r}, expected={tuple(expected)!r}"))
    return path


def test_words_compare_modulo_the_width():
    assert same_word(4294967295, -1, 32) and same_word(255, -1, 8) and not same_word(255, -1, 16)
    assert word_text(4294967295, 32) == "4294967295 (-1)" and word_text(-1, 32) == "4294967295 (-1)"
    assert word_text(1, 32) == "1" and word_text(128, 8) == "128 (-128)"
    assert words_problem("host port out0", [4294967295, 7], [-1, 7], 32) is None


@pytest.mark.parametrize("got,expected,message", [
    ([1, 4294967295], [1, 1], "host port out0 differs at token 1: got 4294967295 (-1), expected 1 "
                              "(2 vs 2 tokens)"),
    ([1], [1, -2], "host port out0 differs at token 1: got nothing, expected 4294967294 (-2) "
                   "(1 vs 2 tokens)"),
    ([1, 2], [1], "host port out0 differs at token 1: got 2, expected nothing (2 vs 1 tokens)"),
])
def test_a_difference_shows_both_readings(got, expected, message):
    assert words_problem("host port out0", got, expected, 32) == message


def test_a_reference_written_signed_passes(tmp_path, capsys):
    assert main(["run", str(_copy(tmp_path, [-1, 5, 2], [-1, 5, 2]))]) == 0
    assert "outputs equal the program's reference" in capsys.readouterr().out
    assert main(["run", str(_copy(tmp_path, [-1, 5, 2], [4294967295, 5, 2]))]) == 0


def test_a_mismatch_shows_both_readings(tmp_path, capsys):
    assert main(["run", str(_copy(tmp_path, [-1, 5, 2], [1, 5, 2]))]) == 1
    assert ("golden model vs reference: host port out0 differs at token 0: got 4294967295 (-1), "
            "expected 1 (3 vs 3 tokens)") in capsys.readouterr().err
