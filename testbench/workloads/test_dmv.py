"""The dmv workload (dense matrix-vector product): both versions on the golden model at depth 2, on small
matrices and several seeds, checked by the workload's own check against numpy; and the check
catches a wrong word."""

import pytest

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.workloads import VERSIONS, workload
from rivulet.sim.seeds import seeds_for

WORKLOAD = workload("dmv")


def _run(version: str, size: int, seed: int):
    case = WORKLOAD.case(version, size, "uniform", seed)
    graph = compile_kernel(WORKLOAD.kernel(version))
    result = run(graph, case["args"], {name: list(words) for name, words in case["mem"].items()}, depth=2)
    return case, result


@pytest.mark.parametrize("version", VERSIONS)
def test_dmv_matches_numpy(version):
    for size in (WORKLOAD.small, 3, 5):
        for seed in seeds_for(f"workload-dmv-{version}-{size}"):
            print(f"dmv {version} n={size} seed {seed}")
            case, result = _run(version, size, seed)
            assert result.drained, result.leftovers
            assert WORKLOAD.check(version, case, result.arrays, result.outputs) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_dmv_check_catches_a_wrong_word(version):
    (seed,) = seeds_for(f"workload-dmv-mutant-{version}", count=1)
    print(f"seed {seed}")
    case, result = _run(version, WORKLOAD.small, seed)
    words = list(result.arrays["y"])
    at = seed % len(words)
    words[at] = (words[at] + 1) & 0xFFFFFFFF
    problems = WORKLOAD.check(version, case, {**result.arrays, "y": words}, result.outputs)
    assert len(problems) == 1 and f"y[{at}]" in problems[0], problems
