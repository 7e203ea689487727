"""``python -m samflow.graph``: a run reports the match with scipy and the tokens per stream; bad
input exits with status 2 and says why."""

import subprocess
import sys
from pathlib import Path

import pytest

from samflow.graph import cli
from samflow.graph.cli import main

REPO = Path(__file__).resolve().parents[2]
SAM_GRAPHS = REPO.parent / "shared" / "peer-suites" / "sam" / "graphs"
GRAPHS = sorted(SAM_GRAPHS.glob("*.gv")) + sorted((REPO / "examples" / "sam").glob("*.gv"))


def test_the_shipped_graphs_and_ours_are_all_there():
    """The four graphs SAM ships, and SpMV, both SpMMs and elementwise add of our own, run here."""
    wanted = {"mat_mattransmul_HAND", "mat_residual_HAND", "vec_ds_compression_HAND",
              "vec_sd_compression_HAND", "spmv_csr", "spmm_gustavson", "spmm_inner", "mat_elemadd_csr"}
    assert wanted <= {g.stem for g in GRAPHS}, sorted(wanted - {g.stem for g in GRAPHS})


@pytest.mark.parametrize("graph", GRAPHS, ids=[g.stem for g in GRAPHS])
def test_a_run_matches_scipy(graph, capsys):
    assert main([str(graph), "--size", "12", "--density", "0.2", "--seed", "9"]) == 0
    line = capsys.readouterr().out
    assert line.count("\n") == 1
    assert f"{graph.stem}: " in line and "match" in line and "size 12, density 0.2, seed 9" in line
    assert "tokens per stream: " in line and "->" in line


def test_the_module_runs_as_a_command():
    done = subprocess.run([sys.executable, "-m", "samflow.graph", str(REPO / "examples/sam/spmv_csr.gv"),
                           "--size", "8", "--density", "0.3", "--seed", "2"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("spmv_csr: x matches scipy (size 8, density 0.3, seed 2)")


def test_a_wrong_reference_exits_with_status_1(monkeypatch, capsys):
    monkeypatch.setitem(cli.REFERENCES, "spmv_csr", lambda t: {"x": t["B"] @ t["c"] + 1})
    assert main([str(REPO / "examples/sam/spmv_csr.gv"), "--size", "8"]) == 1
    assert "spmv_csr: x differs from scipy" in capsys.readouterr().out


def test_a_graph_without_a_reference_runs_and_says_so(tmp_path, capsys):
    copy = tmp_path / "my_spmv.gv"
    copy.write_text((REPO / "examples/sam/spmv_csr.gv").read_text())
    assert main([str(copy), "--size", "8"]) == 0
    assert "no scipy reference for this graph" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["missing.gv"], "missing.gv: cannot read the graph"),
    (["{spmv}", "--density", "1.5"], "the density between 0 and 1"),
    (["{broken}"], "node 10 (Mul): unknown node type 'mull'"),
    (["{spmv}", "--size", "100000"], "--size 100000: the graph's order-2 tensors would have 10,000,000,000 "
                                     "entries, more than the 16,777,216 drawn and compared densely here; use "
                                     "--size 4096 or less"),
])
def test_bad_input_exits_with_status_2(argv, message, tmp_path, capsys):
    broken = tmp_path / "broken.gv"
    broken.write_text((REPO / "examples/sam/spmv_csr.gv").read_text().replace('type="mul"', 'type="mull"'))
    spmv = REPO / "examples/sam/spmv_csr.gv"
    assert main([a.format(spmv=spmv, broken=broken) for a in argv]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and message in error
