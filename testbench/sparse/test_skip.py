"""The compressed scanner's skip input on the golden model (samflow.skip): SAM's four recorded
hinted scans on their schedules, numpy's intersections under random schedules, and the rules
checker that judges the RTL's runs under random stalls, on outputs it must refuse."""

import json

import numpy as np
import pytest

from rivulet.sim.seeds import seeds_for
from samflow.models import MODELS
from samflow.skip import arrivals_from_schedule, hinted_output_problem, scan_with_hints

from .hinted_cases import intersections, random_hinted
from .random_cases import SUITE

needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="SAM peer suite not found beside the repository")


def _recorded_hinted_cases():
    cases = json.loads((SUITE / "rd_scan_compressed.json").read_text())["cases"]
    return [case for case in cases if case["inputs"]["in_crd_skip"]]


@needs_suite
def test_sam_hinted_scans_on_their_recorded_schedules():
    cases = _recorded_hinted_cases()
    assert len(cases) == 4
    for case in cases:
        arrivals = {port: arrivals_from_schedule(case["schedule"], port) for port in case["inputs"]}
        recorded = scan_with_hints(case["memory"], case["inputs"], arrivals).outputs
        assert recorded == case["outputs"], case["name"]
        # Fed as fast as possible instead, the early hints skip more: the output follows the timing.
        asap = scan_with_hints(case["memory"], case["inputs"]).outputs
        assert hinted_output_problem(case["memory"], case["inputs"], asap) == ""


def test_hinted_scans_keep_every_intersection_under_random_schedules():
    for seed in seeds_for("samflow:skip-model", 3):
        print(f"hinted scans seed={seed}")
        for n, case in enumerate(random_hinted(seed, 60)):
            result = scan_with_hints(case.memory, case.inputs, case.arrivals)
            crd = result.outputs["crd"]
            expected = [np.intersect1d(row, other).tolist() for row, other in zip(case.fibers, case.other,
                                                                                  strict=True)]
            assert intersections(case, crd) == expected, f"seed {seed} case {n}"
            problem = hinted_output_problem(case.memory, case.inputs, result.outputs)
            assert problem == "", f"seed {seed} case {n}: {problem}"
            assert len(result.visible_after) == len(case.inputs["in_crd_skip"])
            assert result.visible_after == sorted(result.visible_after)


def test_without_hints_the_scan_is_the_plain_scan():
    for case in random_hinted(seeds_for("samflow:skip-plain", 1)[0], 30):
        inputs = {"in_ref": case.inputs["in_ref"], "in_crd_skip": []}
        plain = MODELS["rd_scan_compressed"]({}, case.memory, inputs)[0]
        assert scan_with_hints(case.memory, inputs, {"in_ref": case.arrivals["in_ref"]}).outputs == plain


# seg [0, 10]: one fiber of ten coordinates; hints 323, 537, 683, 787, 929, then its stop.
FIBER = {"seg_arr": [0, 10], "crd_arr": [227, 280, 389, 486, 530, 606, 738, 744, 877, 996]}
INPUTS = {"in_ref": [0, "D"], "in_crd_skip": [323, 537, 683, 787, 929, "S0"]}


@pytest.mark.parametrize("kept, reason", [
    ([389, 606, 738, 877, 996], ""),                                    # SAM's recorded output
    (list(FIBER["crd_arr"]), ""),                                      # every hint came too late
    ([227, 606, 738, 877, 996], "(606, 5) (kept token 1) cannot follow"),   # 389..530 needs 2 hints
    ([389, 738, 606, 877, 996], "(738, 6) (kept token 1) cannot follow"),   # out of order
    ([389, 606, 877, 996], "(877, 8) (kept token 2) cannot follow"),    # one emission, two hints
    ([389, 606], "the fiber closes before coordinate 738"),             # the stop hint is behind 3
])
def test_the_rules_checker_refuses_what_no_timing_gives(kept, reason):
    refs = [FIBER["crd_arr"].index(c) for c in kept]
    outputs = {"crd": [*kept, "S0", "D"], "ref": [*refs, "S0", "D"]}
    problem = hinted_output_problem(FIBER, INPUTS, outputs)
    assert (reason in problem) if reason else problem == "", problem


def test_the_rules_checker_refuses_broken_streams():
    good = {"crd": [389, 606, 738, 877, 996, "S0", "D"], "ref": [2, 5, 6, 8, 9, "S0", "D"]}
    assert hinted_output_problem(FIBER, INPUTS, good) == ""
    assert "control tokens" in hinted_output_problem(FIBER, INPUTS, {"crd": good["crd"][:-2] + ["D"],
                                                                      "ref": good["ref"][:-2] + ["D"]})
    shifted = {"crd": good["crd"], "ref": [2, 5, 6, 8, "S0", 9, "D"]}
    assert "disagree" in hinted_output_problem(FIBER, INPUTS, shifted)
    wrong_ref = {"crd": good["crd"], "ref": [2, 5, 7, 8, 9, "S0", "D"]}
    assert "cannot follow" in hinted_output_problem(FIBER, INPUTS, wrong_ref)
