"""The RipTide peer suite on the golden model: every graph and case, at several slot depths and
memory latencies, against the suite's own expected memory and step counts; importer errors; the
``rivulet run`` command on a suite graph."""

import json
from pathlib import Path

import pytest

from ripple_core.graph import GraphError
from ripple_core.programs import tree_case, tree_walk
from ripple_core.riptide import RiptideFormatError, load_graph, load_vectors, parse_graph, run_case
from rivulet.cli import main

SUITE = Path(__file__).resolve().parents[3] / "shared" / "peer-suites" / "riptide"
KERNELS = ("simple", "simple-mem", "nn-vadd", "nn-relu", "dmv")
VARIANTS = ("stream", "nostream")

needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"peer suite not found beside the repository "
                                                           f"({SUITE.name} under ../shared/peer-suites)")


def graph_path(kernel, variant):
    return SUITE / f"{kernel}.riptide{'.nostream' if variant == 'nostream' else ''}.json"


@needs_suite
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_every_case_passes_and_the_ideal_model_takes_the_reference_steps(kernel, variant):
    graph = load_graph(graph_path(kernel, variant))
    for k, case in enumerate(load_vectors(SUITE / f"{kernel}.vectors.json")):
        ideal = run_case(graph, case, variant=variant, depth=None, mem_latency=1)
        assert ideal.passed, (k, ideal.problems)
        assert ideal.cycles == case["reference_steps"][variant], k


@needs_suite
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_results_and_firings_are_identical_at_depths_1_2_and_4(kernel, variant):
    graph = load_graph(graph_path(kernel, variant))
    for k, case in enumerate(load_vectors(SUITE / f"{kernel}.vectors.json")):
        firings = set()
        for depth, latency in ((1, 1), (2, 1), (4, 1), (1, 3), (2, 2)):
            outcome = run_case(graph, case, variant=variant, depth=depth, mem_latency=latency)
            assert outcome.passed, (k, depth, latency, outcome.problems)
            assert outcome.cycles >= case["reference_steps"][variant]
            firings.add(outcome.firings)
        assert len(firings) == 1, (k, firings)      # every token is processed once, whatever the timing


def _suite_graph(kernel="simple"):
    return json.loads(graph_path(kernel, "stream").read_text())


@needs_suite
@pytest.mark.parametrize("mutate,message", [
    (lambda g: g["vertices"][1].update(op="ARITH_CFG_OP_FOO"),
     "x.json: vertex 1 (add): field 'op' 'ARITH_CFG_OP_FOO': operator FOO is not supported"),
    (lambda g: g["vertices"][0].update(pred="SOMETHING"),
     "x.json: vertex 0 (base.addr.0.carry..f.): field 'pred' is 'SOMETHING'"),
    (lambda g: g["vertices"][2].update(cmp="STREAM_CFG_CMP_XLT"),
     "x.json: vertex 2 (i.0.f..add.SGT.): field 'cmp'"),
    (lambda g: g["vertices"][1]["inputs"][0][0].update(ID=99),
     "x.json: vertex 1 (add), field 'inputs'[0]: field 'ID' 99 names no vertex"),
    (lambda g: g["vertices"][0]["inputs"][1][0].update(name="nope"),
     "x.json: vertex 0 (base.addr.0.carry..f.), field 'inputs'[1]: field 'name' 'nope' is not an argument"),
    (lambda g: g["vertices"][1]["inputs"].pop(),
     "x.json: node 'v1' (ADD, add): has 1 inputs, ADD takes 2"),
    (lambda g: g["vertices"][1]["inputs"][0][0].update(oport=5),
     "x.json: node 'v1' (ADD, add), input 0: node 'v2' (STREAM, i.0.f..add.SGT.) has no output port 5"),
    (lambda g: g["function"].update(args=None),
     "x.json: function.args: is None, not a list of {\"name\": ..., \"type\": ...}"),
    (lambda g: g["function"]["args"].append(dict(g["function"]["args"][0])),
     "x.json: function.args[3]: argument name 'a' is used twice"),
    (lambda g: g["function"]["args"][0].update(type="i64"),
     "x.json: function.args[0] (a): type 'i64' is not an integer of at most 32 bits"),
    (lambda g: g["function"]["args"][0].update(type="double*"),
     "x.json: function.args[0] (a): type 'double*' is not an integer of at most 32 bits"),
])
def test_importer_errors_name_the_file_vertex_and_field(mutate, message):
    document = _suite_graph()
    mutate(document)
    with pytest.raises(RiptideFormatError) as caught:
        parse_graph(document, "x.json")
    assert message in str(caught.value)


def test_importer_refuses_files_that_are_not_graphs(tmp_path):
    bad = tmp_path / "bad.riptide.json"
    bad.write_text("{")
    with pytest.raises(RiptideFormatError, match="bad.riptide.json: not JSON"):
        load_graph(bad)
    with pytest.raises(RiptideFormatError, match="x.json: expected an object with 'function' and 'vertices'"):
        parse_graph([], "x.json")
    bad.write_bytes(b"\xff\xfe{}")
    with pytest.raises(RiptideFormatError, match=r"bad.riptide.json: not a text file \(byte 0 is not "
                                                 r"UTF-8\)"):
        load_graph(bad)
    with pytest.raises(RiptideFormatError, match=r"bad.riptide.json: not a text file"):
        load_vectors(bad)


@needs_suite
def test_rivulet_run_reports_every_case(capsys):
    argv = ["run", str(graph_path("nn-relu", "nostream")), "--vectors", str(SUITE / "nn-relu.vectors.json")]
    assert main(argv + ["--sim", "model"]) == 0
    out = capsys.readouterr().out
    assert "all 6 cases pass" in out and out.count(" pass ") == 6
    # The same command on the RTL (--sim rtl / both) is tested with the fabric build it needs,
    # in testbench/ripple/test_lower.py.


@needs_suite
def test_rivulet_run_reports_a_failing_case(tmp_path, capsys):
    cases = json.loads((SUITE / "nn-vadd.vectors.json").read_text())
    cases[2]["expect"]["dest"][0] += 1
    vectors = tmp_path / "wrong.vectors.json"
    vectors.write_text(json.dumps(cases))
    assert main(["run", str(graph_path("nn-vadd", "stream")), "--vectors", str(vectors)]) == 1
    captured = capsys.readouterr()
    assert "FAIL" in captured.out and "array dest differs at word 0" in captured.out
    assert "1 of 6 cases failed" in captured.err


def _vectors(tmp_path, cases) -> Path:
    vectors = tmp_path / "case.vectors.json"
    vectors.write_text(json.dumps(cases))
    return vectors


RELU_CASE = {"args": {"size": 2}, "mem": {"src": [-3, 4], "dest": [0, 0]}, "expect": {"dest": [0, 4]}}


@needs_suite
@pytest.mark.parametrize("change,message", [
    ({"args": {"size": 2, "n": 3}},
     r"case 0: argument\(s\) 'n' given, but nn_relu's 1 scalar parameter\(s\) are size"),
    ({"args": {"size": 2, "src": 0}},
     r"case 0: argument\(s\) 'src' given, but nn_relu's 1 scalar parameter\(s\) are size "
     r"\(arrays go in mem\)"),
    ({"args": {}}, r"case 0: nn_relu: no value for scalar argument\(s\) size"),
    ({"mem": {"src": [1, 2], "dest": [0, 0], "tmp": [0]}},
     r"case 0: memory given for \['tmp'\], which are not arrays of nn_relu"),
    ({"args": {"size": 1 << 32}}, r"case 0: argument 'size': 4294967296 does not fit a dataflow "
                                  r"word of 32 bits; use an integer -2147483648\.\.4294967295"),
    ({"args": {"size": 2.0}}, r"case 0: argument 'size': 2\.0 is a float, not an integer"),
    ({"mem": {"src": [1, -(1 << 31) - 1], "dest": [0, 0]}},
     r"case 0: array 'src' word 1: -2147483649 does not fit a dataflow word of 32 bits"),
    ({"mem": {"src": [1, 0.5], "dest": [0, 0]}},
     r"case 0: array 'src' word 1: 0\.5 is a float, not an integer"),
    ({"mem": {"src": "12", "dest": [0, 0]}}, r"case 0: memory of array 'src' is a str, not a list"),
])
def test_vectors_whose_cases_do_not_fit_the_graph_are_refused(tmp_path, change, message):
    graph = load_graph(graph_path("nn-relu", "stream"))
    vectors = _vectors(tmp_path, [{**RELU_CASE, **change}])
    with pytest.raises(RiptideFormatError, match=r"case\.vectors\.json: " + message):
        load_vectors(vectors, graph)
    case = load_vectors(vectors)[0]                 # without the graph: refused when the case runs
    with pytest.raises(GraphError, match=message.removeprefix("case 0: ")):
        run_case(graph, case)


@needs_suite
def test_a_case_at_the_word_limits_runs(tmp_path):
    graph = load_graph(graph_path("nn-relu", "stream"))
    case = {"args": {"size": 2}, "mem": {"src": [(1 << 32) - 1, -(1 << 31)], "dest": [0, 0]},
            "expect": {"src": [-1, -(1 << 31)], "dest": [0, 0]}}
    (loaded,) = load_vectors(_vectors(tmp_path, [case]), graph)
    assert run_case(graph, loaded).passed       # 2^32 - 1 is the word -1: ReLU gives 0


@pytest.mark.parametrize("change,message", [
    ({"expcet": {"dest": [0, 4]}}, r"case 0: unknown field\(s\) \['expcet'\]; a case has args, mem, expect"),
    ({"expect": {"dest": 4}}, r"case 0: expect\['dest'\] is 4; give the array's final contents or the SINK's "
                              r"tokens as a list of integers"),
    ({"expect": {"dest": ["0", "4"]}}, r"case 0: expect\['dest'\] is \['0', '4'\]"),
])
def test_vectors_with_a_misspelt_field_or_a_malformed_expect_are_refused(tmp_path, change, message):
    """Without these checks a misspelt expect checked nothing and a number crashed the run."""
    with pytest.raises(RiptideFormatError, match=r"case\.vectors\.json: " + message):
        load_vectors(_vectors(tmp_path, [{**RELU_CASE, **change}]))


@needs_suite
def test_an_expect_naming_neither_an_array_nor_a_sink_is_refused_when_the_case_runs():
    graph = load_graph(graph_path("nn-relu", "stream"))
    with pytest.raises(GraphError, match=r"the case's expect names \['dst'\], which are neither arrays nor "
                                         r"SINK nodes of nn_relu \(arrays: src, dest; SINKs: none\)"):
        run_case(graph, {**RELU_CASE, "expect": {"dst": [0, 4]}})


def test_a_sinks_expected_tokens_are_checked_on_the_golden_model():
    """The lowering asks every SINK's tokens of the case's expect; the model run checks the same."""
    graph = tree_walk(8)
    assert run_case(graph, tree_case(8)).passed
    wrong = tree_case(8)
    wrong["expect"]["done"] = [1] * 7
    assert run_case(graph, wrong).problems == ["SINK done differs at word 7: got [1], expected []"]


def test_a_vectors_file_without_cases_is_refused(tmp_path):
    with pytest.raises(RiptideFormatError, match=r"case\.vectors\.json: has no cases; a vectors file lists "
                                                 r"at least one case"):
        load_vectors(_vectors(tmp_path, []))


@needs_suite
def test_rivulet_run_refuses_a_case_with_an_extra_argument(tmp_path, capsys):
    vectors = _vectors(tmp_path, [{**RELU_CASE, "args": {"size": 2, "n": 3}}])
    assert main(["run", str(graph_path("nn-relu", "stream")), "--vectors", str(vectors)]) == 2
    assert "case 0: argument(s) 'n' given, but nn_relu's 1 scalar parameter(s) are size" in \
        capsys.readouterr().err
