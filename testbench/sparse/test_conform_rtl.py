"""The RTL primitives on Verilator: SAM's recorded vectors, numpy-referenced random cases and
cases whose expectation was changed on purpose, under every stall profile and two seeds, with a
protocol monitor on every stream; one build and one simulation for all of them."""

import copy
from collections import Counter
from dataclasses import replace

import pytest

from rivulet.sim.seeds import seeds_for
from rivulet.sim.sparse_conform import run_rtl
from rivulet.sim.streams import PROFILES
from samflow.suite import load_directory

from .hinted_cases import hinted_file, random_hinted
from .random_cases import SUITE, random_files
from .spec_cases import spec_files
from .test_conform_model import EXPECTED, SCHEDULED

needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="SAM peer suite not found beside the repository")


def _accumulator_with_stops(files):
    """SAM's spacc1 case with stops put into each input at other places: the RTL drops them input by
    input (as the graphs' stop droppers do), so the recorded output must not change. RTL only: the
    golden model takes point streams without stops."""
    vectors = next(v for v in files if v.primitive == "spacc1")
    case = copy.deepcopy(vectors.cases[0])
    for port, at in (("in_outer_crdpt", (0, 3)), ("in_inner_crdpt", (2,)), ("in_val", (5, 5, 8))):
        for position in sorted(at, reverse=True):
            case.inputs[port].insert(position, "S0")
    return replace(vectors, path=vectors.path.with_name("stops_spacc1.json"), cases=[case])


def _mutants(files):
    """Copies of five cases with one expectation changed each: the RTL runs must fail them (the
    hinted scan's in its lock-step run, whose output is exact)."""
    by_name = {vectors.primitive: vectors for vectors in files}
    mutants = []
    for primitive, change in (("add", "token"), ("reduce", "missing"), ("wr_scan_vals", "memory"),
                              ("intersect", "extra"), ("rd_scan_compressed", "hinted")):
        vectors = by_name[primitive]
        case = copy.deepcopy(vectors.cases[0])
        if change == "hinted":      # SAM's last hinted scan, one kept coordinate changed to another
            case = copy.deepcopy(vectors.cases[-1])
            assert case.inputs["in_crd_skip"] and case.outputs["crd"][:2] == [389, 606]
            case.outputs["crd"][1], case.outputs["ref"][1] = 486, 3
        elif change == "token":
            case.outputs["val"][2] += 1
        elif change == "missing":
            case.outputs["val"].remove("S0")
        elif change == "memory":
            case.memory_out["arr"][1] += 1
        else:
            case.outputs["crd"].insert(0, 0)
        path = vectors.path.with_name(f"mutant_{primitive}.json")
        mutants.append(replace(vectors, path=path, cases=[case]))
    return mutants


@pytest.mark.verilator
@pytest.mark.long(1)
@needs_suite
def test_rtl_conforms_to_the_suite_and_to_numpy_under_every_stall_profile():
    suite = load_directory(SUITE, checked_primitives=set(EXPECTED))
    seeds = seeds_for("samflow:rtl", 2)
    print(f"RTL conformance seeds={seeds}")
    randoms = random_files(seeds[0], 3)
    hinted = hinted_file(random_hinted(seeds[0], 12))
    specs = spec_files()
    outcomes = run_rtl(suite + randoms + [hinted] + specs + [_accumulator_with_stops(suite)],
                       once=_mutants(suite), profiles=list(PROFILES), seeds=seeds)
    mutants = [o for o in outcomes if o.file.startswith("mutant_")]
    rest = [o for o in outcomes if not o.file.startswith("mutant_")]
    failed = [f"{o.file} {o.case}: {o.detail}" for o in rest if o.status == "failed"]
    assert not failed, "\n".join(failed)
    assert [o.status for o in mutants] == ["failed"] * 5, [o.detail for o in mutants]
    counts = Counter((o.primitive, o.status) for o in rest
                     if not o.file.startswith(("random_", "spec_", "stops_")))
    for primitive, (passed, unsupported) in EXPECTED.items():
        got = (counts[primitive, "passed"], counts[primitive, "unsupported"])
        assert got == (passed, unsupported), primitive
    assert sum(o.status == "passed" for o in rest if o.file.startswith("random_")) == 10 * 3 + 12
    assert sum(o.status == "passed" for o in rest if o.file.startswith("spec_")) == 9
    assert [o.status for o in rest if o.file.startswith("stops_")] == ["passed"]
    # Every case ran under every profile and seed; schedule-dependent ones on their recorded schedule
    # too, and hinted scans once more in lock step with SAM's timing.
    runs = len(PROFILES) * len(seeds)
    hinted_names = {case.name for files in (suite, [hinted]) for vectors in files for case in vectors.cases
                    if case.inputs.get("in_crd_skip")}
    for outcome in rest:
        if outcome.status == "passed":
            scheduled = outcome.primitive in SCHEDULED and not outcome.file.startswith("spec_")
            scheduled |= outcome.case in hinted_names
            expected = runs + 1 if scheduled else runs     # a hand-written case has no recorded schedule
            assert outcome.detail.startswith(f"{expected} runs"), (outcome.case, outcome.detail)
