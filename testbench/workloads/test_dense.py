"""The dense workloads (ma: matrix add, st: 5-point stencil, dmv: matrix-vector product): both
versions on the golden model at depth 2, on small matrices and several seeds, checked by each
workload's own check against numpy; and each check catches a wrong word of its result."""

import pytest

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.workloads import VERSIONS, workload
from rivulet.sim.seeds import seeds_for

RESULTS = {"ma": "C", "st": "out", "dmv": "y"}      # the array each workload writes


def _run(name: str, version: str, size: int, seed: int):
    chosen = workload(name)
    case = chosen.case(version, size, "uniform", seed)
    graph = compile_kernel(chosen.kernel(version))
    result = run(graph, case["args"], {array: list(words) for array, words in case["mem"].items()}, depth=2)
    return chosen, case, result


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", RESULTS)
def test_dense_workload_matches_numpy(name, version):
    for size in (workload(name).small, 3, 5):
        for seed in seeds_for(f"workload-{name}-{version}-{size}"):
            print(f"{name} {version} n={size} seed {seed}")
            chosen, case, result = _run(name, version, size, seed)
            assert result.drained, result.leftovers
            assert chosen.check(version, case, result.arrays, result.outputs) == []


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", RESULTS)
def test_dense_check_catches_a_wrong_word(name, version):
    (seed,) = seeds_for(f"workload-{name}-mutant-{version}", count=1)
    print(f"seed {seed}")
    chosen, case, result = _run(name, version, workload(name).small, seed)
    array = RESULTS[name]
    words = list(result.arrays[array])
    at = seed % len(words)
    words[at] = (words[at] + 1) & 0xFFFFFFFF
    problems = chosen.check(version, case, {**result.arrays, array: words}, result.outputs)
    assert len(problems) == 1 and f"{array}[{at}]" in problems[0], problems
