"""The language from the command line: ``rivulet run kernel.py`` on the Ripple golden model, its
refusals, and ``rivulet compile kernel.py`` whose written graph runs the suite's vectors."""

import json
from pathlib import Path

import pytest

from ripple_core.lang import compile_kernel
from ripple_core.lang.examples import dmv
from ripple_core.riptide import load_graph
from rivulet.cli import main

SUITE = Path(__file__).resolve().parents[3] / "shared" / "peer-suites" / "riptide"
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="the RipTide peer suite is not checked out")

TWO_KERNELS = '''
from ripple_core.lang import Array, kernel, out


@kernel
def total(a: int, b: int):
    s = 0
    for i in range(a, b):
        s += i
    return s


@kernel
def fill(A: Array, n: int):
    for i in range(n):
        A[i] = i * i
        out("seen", i)


def cases(kernel, n: int = 4):
    if kernel == "total":
        return [{"args": {"a": 1, "b": n}, "mem": {}}]
    return [{"args": {"n": n}, "mem": {"A": [0] * n}}]
'''


@pytest.mark.parametrize("argv,summary", [
    (["examples/lang/bfs.py"], "all 2 cases pass"),
    (["examples/lang/bfs.py", "-D", "vertices=40", "-D", "count=1"], "all 1 cases pass"),
    (["examples/lang/dmv.py"], "all 3 cases pass"),
])
def test_the_examples_run_on_the_golden_model(capsys, argv, summary):
    assert main(["run", *argv, "--sim", "model"]) == 0
    assert summary in capsys.readouterr().out


@needs_suite
def test_dmv_runs_the_suites_vectors_and_its_compiled_graph_too(tmp_path, capsys):
    vectors = str(SUITE / "dmv.vectors.json")
    assert main(["run", "examples/lang/dmv.py", "--vectors", vectors]) == 0
    assert "all 10 cases pass" in capsys.readouterr().out
    out = tmp_path / "dmv.json"
    assert main(["compile", "examples/lang/dmv.py", "-o", str(out)]) == 0
    assert "from kernel dmv (mode ordered)" in capsys.readouterr().out
    assert load_graph(out) == compile_kernel(dmv)
    assert [a["name"] for a in json.loads(out.read_text())["function"]["args"]] == ["m", "n", "A", "B", "Z"]
    assert main(["run", str(out), "--vectors", vectors, "--sim", "model"]) == 0
    assert "all 10 cases pass" in capsys.readouterr().out


def test_a_file_of_several_kernels_needs_kernel(tmp_path, capsys):
    source = tmp_path / "two.py"
    source.write_text(TWO_KERNELS)
    assert main(["run", str(source)]) == 2
    err = capsys.readouterr().err
    assert "defines 2 kernels (total, fill); choose one with --kernel NAME" in err and err.count("\n") == 1
    for name in ("total", "fill"):
        assert main(["run", str(source), "--kernel", name, "-D", "n=6"]) == 0
        assert "all 1 cases pass" in capsys.readouterr().out
    out = tmp_path / "total.json"
    assert main(["compile", str(source), "-o", str(out), "--kernel", "total"]) == 0
    assert json.loads(out.read_text())["function"]["return_type"] == "int"


@pytest.mark.parametrize("body,argv,message", [
    (TWO_KERNELS, ["--kernel", "nope"], "is not a kernel of the file; its kernels: total, fill"),
    (TWO_KERNELS, ["--kernel", "fill", "-D", "colour=1"], "cases() has no parameter 'colour'"),
    (TWO_KERNELS.replace("def cases(kernel", "def other(kernel"), ["--kernel", "fill"],
     "defines no cases() function"),
    (TWO_KERNELS.replace('"args": {"n": n}', '"args": {}'), ["--kernel", "fill"], "case 0"),
    (TWO_KERNELS.replace("s += i", "s += i / 2"), ["--kernel", "total"], ":9:"),
    (TWO_KERNELS.replace("def fill(", "def total("), ["--kernel", "total"],
     ":14: kernel 'total' is defined again (first at line 6), and Python keeps only the last; rename one"),
    (TWO_KERNELS.replace('"A": [0] * n', '"A": [0] * (n - 1)'), ["--kernel", "fill"],
     ":16: case 0 on CPython: IndexError: A[3] is outside the array's 3 words"),
    (TWO_KERNELS.replace('"mem": {"A": [0] * n}', '"mem": [[0] * n]'), ["--kernel", "fill"],
     "case 0: mem must be a dict of array name: list of words, not list"),
    (TWO_KERNELS.replace('"args": {"n": n}', '"args": None'), ["--kernel", "fill"],
     "case 0: args must be a dict of scalar name: value, not NoneType"),
    (TWO_KERNELS.replace('"mem": {"A": [0] * n}', '"mem": {}'), ["--kernel", "fill"],
     'case 0: mem has no words for array(s) A; give every array of fill, e.g. "A": [0, 0, 0]'),
    (TWO_KERNELS.replace('"mem": {}}]', '"mem": {}, "expect": [6]}]'), ["--kernel", "total"],
     "case 0: expect must be a dict of array or output name: list of words, not list"),
    (TWO_KERNELS.replace('"mem": {}}]', '"mem": {}, "expect": {"return": 6}}]'), ["--kernel", "total"],
     "case 0: expect 'return' must be a list of words, not int; e.g. [6]"),
    (TWO_KERNELS.replace('"mem": {}}]', '"mem": {}, "expect": {"retrun": [6]}}]'), ["--kernel", "total"],
     "expect names 'retrun', which is neither an array nor an output of total (arrays: none; "
     "outputs: return)"),
    (TWO_KERNELS.replace('"mem": {}}]', '"mem": {}, "expect": {"return": [2 ** 32 + 6]}}]'),
     ["--kernel", "total"], "case 0: expect 'return' word 0: 4294967302 does not fit a dataflow word"),
])
def test_bad_kernel_files_are_refused_in_one_line(tmp_path, capsys, body, argv, message):
    source = tmp_path / "kernels.py"
    source.write_text(body)
    assert main(["run", str(source), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_a_kernel_under_two_names_is_one_kernel(tmp_path, capsys):
    source = tmp_path / "alias.py"
    source.write_text(TWO_KERNELS.replace("\n\ndef cases(", "\n\nsquares = fill\n\n\ndef cases("))
    assert main(["run", str(source), "--kernel", "squares", "-D", "n=5"]) == 0
    assert "all 1 cases pass" in capsys.readouterr().out
    source.write_text(source.read_text().replace("@kernel\ndef total(", "def total("))
    assert main(["run", str(source), "-D", "n=5"]) == 0
    assert "all 1 cases pass" in capsys.readouterr().out


def test_an_expect_that_contradicts_cpython_fails_the_case(tmp_path, capsys):
    source = tmp_path / "wrong.py"
    source.write_text(TWO_KERNELS.replace('"mem": {}}]', '"mem": {}, "expect": {"return": [99]}}]'))
    assert main(["run", str(source), "--kernel", "total"]) == 1
    assert "CPython on the kernel gives return = [6], the case expects [99]" in capsys.readouterr().out


def test_ordered_mode_is_refused_for_a_ripple_kernel_and_kernel_options_elsewhere(capsys):
    assert main(["run", "examples/lang/bfs.py", "--mode", "ordered"]) == 2
    assert "ordered" in capsys.readouterr().err
    assert main(["run", "examples/mlp.py", "--kernel", "x"]) == 2
    assert "--kernel does not apply to examples/mlp.py" in capsys.readouterr().err
