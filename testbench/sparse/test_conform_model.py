"""The golden models on SAM's recorded vectors and on numpy-referenced random cases, the runner's
counts, and the refusal of bad vector files (file, case, port and token named)."""

import copy
import json
from collections import Counter

import pytest

from rivulet.cli import main
from rivulet.sim.seeds import seeds_for
from samflow.conform import conform, model_outcome
from samflow.suite import SuiteError, load_directory, parse_vectors

from .random_cases import SUITE, random_files
from .spec_cases import spec_files

needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="SAM peer suite not found beside the repository")

# Cases per primitive the models must pass, and those they leave unsupported; every other file
# is unsupported. repeat, crd_hold and flatten are schedule-dependent: their recorded schedules
# keep SAM in step; the compressed scanner's four skip-hint cases run on their recorded schedules
# in SAM's timing (samflow.skip).
EXPECTED = {
    "rd_scan_compressed": (10, 0), "rd_scan_uncompressed": (12, 0), "repeat": (6, 0),
    "repeat_sig_gen": (16, 0), "intersect": (4, 0), "union": (2, 0), "add": (11, 0),
    "multiply": (3, 0), "reduce": (2, 0), "crd_drop": (3, 0), "stkn_drop": (4, 0),
    "empty_stkn_drop": (6, 0), "array": (10, 0), "wr_scan_vals": (3, 0), "wr_scan_compressed": (4, 0),
    "crd_hold": (2, 0), "flatten": (8, 0), "split": (10, 0), "crdpt_converter": (4, 0),
    "bv": (15, 0), "bv_chunk": (2, 0), "rd_scan_bv": (2, 0), "intersect_bv": (2, 0), "bv_drop": (3, 0),
    # SAM's sums are Python floats; the recorded ones are whole numbers, which the RTL's integers give.
    "spacc1": (1, 0), "spacc2": (2, 0), "spcrdpt_accum1": (1, 0), "spcrdpt_accum2": (2, 0),
}
SCHEDULED = {"repeat", "crd_hold", "flatten"}


@needs_suite
def test_models_pass_every_supported_case_of_the_suite():
    outcomes = conform(SUITE, "model")
    counts = Counter((o.primitive, o.status) for o in outcomes)
    failed = [f"{o.case}: {o.detail}" for o in outcomes if o.status == "failed"]
    assert not failed, "\n".join(failed)
    for primitive, (passed, unsupported) in EXPECTED.items():
        got = (counts[primitive, "passed"], counts[primitive, "unsupported"])
        assert got == (passed, unsupported), primitive
    assert sum(counts[p, "passed"] for p in EXPECTED) == 150
    assert len(outcomes) == 156


def test_models_match_numpy_on_random_cases():
    for seed in seeds_for("samflow:model-random", 2):
        print(f"random cases seed={seed}")
        for vectors in random_files(seed, 12):
            for case in vectors.cases:
                outcome = model_outcome(vectors, case)
                assert outcome.status == "passed", f"seed {seed} {case.name}: {outcome.detail}"


def test_models_follow_the_stated_semantics():
    for vectors in spec_files():
        for case in vectors.cases:
            outcome = model_outcome(vectors, case)
            assert outcome.status == "passed", f"{vectors.primitive} {case.name}: {outcome.detail}"


@needs_suite
@pytest.mark.parametrize("change", ["output token", "extra output", "memory word", "stop level"])
def test_a_changed_expectation_fails(tmp_path, change):
    """The comparison can fail: one recorded token changed makes its case fail, and only it."""
    name = {"output token": "add", "extra output": "union", "memory word": "wr_scan_vals",
            "stop level": "rd_scan_uncompressed"}[change]
    content = json.loads((SUITE / f"{name}.json").read_text())
    case = content["cases"][0]
    if change == "output token":
        case["outputs"]["val"][1] += 1
    elif change == "extra output":
        case["outputs"]["crd"].insert(-1, "N")
    elif change == "memory word":
        case["memory_out"]["arr"][2] += 1
    else:
        case["outputs"]["crd"][case["outputs"]["crd"].index("S0")] = "S1"
    (tmp_path / f"{name}.json").write_text(json.dumps(content))
    statuses = [o.status for o in conform(tmp_path, "model")]
    assert statuses[0] == "failed" and set(statuses[1:]) <= {"passed"}


def _case(**changes):
    inputs = {"in_ref1": [0, 1, "S0", "D"], "in_crd1": [0, 3, "S0", "D"],
              "in_ref2": [0, "S0", "D"], "in_crd2": [3, "S0", "D"]}
    case = {"name": "t::c", "params": {}, "inputs": inputs, "outputs": {"crd": [3, "S0", "D"]},
            "schedule_dependent": False}
    for port, tokens in changes.items():
        case["inputs"][port] = tokens
    return case


def _vectors(primitive="intersect", case=None):
    return {"primitive": primitive, "ports": {"inputs": ["in_ref1", "in_crd1", "in_ref2", "in_crd2"],
                                              "outputs": ["crd"]}, "cases": [case or _case()]}


@pytest.mark.parametrize("content, message", [
    (_vectors("intersekt"), "bad.json: unknown primitive 'intersekt' .*case 't::c'"),
    (_vectors(case=_case(in_crd1=[0, "X", "S0", "D"])),
     r"case 't::c', port in_crd1, token 1 'X': 'X' is not a token"),
    (_vectors(case=_case(in_crd1=[0, 3, "S0", "D", 4])),
     "port in_crd1, token 3 'D': a stream ends with exactly one 'D'"),
    (_vectors(case=_case(in_crd1=[0, "S1", 3, "S0", "D"], in_ref1=[0, "S1", 1, "S0", "D"])),
     "port in_ref1, token 1 'S1': stop levels do not nest: S1 closes more fibers than the stream's "
     "outermost stop S0"),
    (_vectors(case=_case(in_crd1=[3, 0, "S0", "D"])), "port in_crd1, token 1 0: coordinates are not sorted "
     r"within the fiber \(3 before 0\)"),
    (_vectors(case=_case(in_crd1=[3, 3, "S0", "D"])), "port in_crd1, token 1 3: coordinates are not sorted"),
    (_vectors(case={**_case(), "inputs": {"in_ref1": []}}), "port in_crd1: the input port is missing"),
    ({"cases": []}, "not a vector file"),
    ({**_vectors(), "ports": "in_ref1"}, r"bad.json: 'ports' is 'in_ref1'; it must be a JSON object"),
    ({**_vectors(), "ports": {"inputs": "in_ref1"}},
     r"bad.json: ports.inputs is 'in_ref1'; give the port names as a list of strings"),
    ({**_vectors(), "constructor_defaults": [1]}, r"bad.json: 'constructor_defaults' is \[1\]"),
    (_vectors(case={**_case(), "params": [1]}),
     r"bad.json: case 't::c': 'params' is \[1\]; it must be a JSON object"),
    (_vectors(case={**_case(), "outputs": [0, "D"]}), r"case 't::c': 'outputs' is \[0, 'D'\]"),
])
def test_bad_vector_files_are_refused(tmp_path, content, message):
    with pytest.raises(SuiteError, match=message):
        parse_vectors(copy.deepcopy(content), tmp_path / "bad.json", checked_primitives={"intersect"})


def test_unsorted_compressed_memory_is_refused(tmp_path):
    ports = {"inputs": ["in_ref", "in_crd_skip"], "outputs": []}
    content = {"primitive": "rd_scan_compressed", "ports": ports,
               "cases": [{"name": "c", "params": {}, "memory": {"seg_arr": [0, 3], "crd_arr": [0, 5, 2]},
                          "inputs": {"in_ref": [0, "D"], "in_crd_skip": []}, "outputs": {},
                          "schedule_dependent": False}]}
    with pytest.raises(SuiteError, match=r"case 'c': memory.crd_arr\[2\] = 2: coordinates are not sorted "
                                         "within fiber 0"):
        parse_vectors(content, tmp_path / "scan.json", checked_primitives={"rd_scan_compressed"})


def test_the_command_refuses_bad_input_before_running(tmp_path, capsys):
    (tmp_path / "a.json").write_text(json.dumps(_vectors(case=_case(in_crd2=[4, 2, "S0", "D"]))))
    assert main(["conform", str(tmp_path), "--sim", "both"]) == 2
    said = capsys.readouterr().err
    assert "a.json: case 't::c', port in_crd2, token 1 2: coordinates are not sorted" in said
    assert main(["conform", str(tmp_path / "nothing")]) == 2
    assert "not a directory of vector files" in capsys.readouterr().err


@needs_suite
def test_the_command_prints_counts_per_primitive(capsys):
    assert main(["conform", str(SUITE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["file", "primitive", "sim", "passed", "failed", "unsupported"]
    rows = [" ".join(line.split()) for line in lines]
    assert "rd_scan_compressed.json rd_scan_compressed model 10 0 0" in rows
    assert " ".join(lines[-1].split()) == "total model 150 0 6"


@needs_suite
def test_a_failing_case_makes_the_command_fail(tmp_path, capsys):
    content = json.loads((SUITE / "reduce.json").read_text())
    content["cases"][1]["outputs"]["val"][0] = 44
    (tmp_path / "reduce.json").write_text(json.dumps(content))
    assert main(["conform", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert ("failed: reduce.json test_reduce.py::test_reduce_direct_nd[arrs1] [model]: val differs at "
            "token 0") in out


def test_directory_loading_checks_every_file_first(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(_vectors()))
    (tmp_path / "b.json").write_text("{not json")
    with pytest.raises(SuiteError, match="b.json: not JSON"):
        load_directory(tmp_path)
