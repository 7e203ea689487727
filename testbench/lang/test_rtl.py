"""The language on the Verilated fabric: every peer kernel on all cases of its suite vectors, the
Ripple BFS example and the atomic histogram, lowered by the kernel front-end and run in ONE
native simulation, each under a random stall profile.

The fabric is examples/fabrics/ripple.toml (5x6 pe tiles, private banks), the one
testbench/ripple/test_lower.py's RTL test builds, so this adds no build to the suite. The 3x4
shared-memory fabric of the tier tests holds the small kernels but not dmv (15 operators) or
BFS (16). References: the suite's expect (checked against CPython on the kernel too), a plain
Python reachability search for BFS, a plain count for the histogram; never a golden model.
"""

import random

import pytest

from ripple_core.lang.examples import PEER_KERNELS, histogram
from rivulet.frontends.lang import compiled_kernel, kernel_cases, load_kernel, lowered_case
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rivulet.sim.toolchain import REPOSITORY
from rsn.fabric_spec import load_fabric
from rsn.readout import register_reads, split_register_reads

pytestmark = pytest.mark.verilator

SUITE = REPOSITORY.parent / "shared" / "peer-suites" / "riptide"
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="the RipTide peer suite is not checked out")
FABRIC = load_fabric(REPOSITORY / "examples" / "fabrics" / "ripple.toml")


def histogram_cases(rng, count: int):
    made = []
    for _ in range(count):
        bins = rng.randint(1, 4)
        keys = [rng.randrange(bins) for _ in range(rng.randint(1, 12))]
        made.append({"args": {"n": len(keys)}, "mem": {"keys": keys, "count": [0] * bins},
                     "expect": {"keys": keys, "count": [keys.count(b) for b in range(bins)],
                                "done": [1] * len(keys)}})
    return made


def all_cases(rng):
    """(label, loaded kernel, case, problems before any run) for every run of the batch."""
    runs = []
    for name, kernel in PEER_KERNELS.items():
        loaded = compiled_kernel(kernel)
        for k, made in enumerate(kernel_cases(loaded, vectors=SUITE / f"{name}.vectors.json")):
            runs.append((f"{name} case {k}", loaded, *made))
    bfs = load_kernel(REPOSITORY / "examples" / "lang" / "bfs.py")
    for k, made in enumerate(kernel_cases(bfs, {"vertices": 12, "seed": rng.randrange(1000)})):
        runs.append((f"bfs case {k}", bfs, *made))
    counter = compiled_kernel(histogram)
    for k, case in enumerate(histogram_cases(rng, 2)):
        runs.append((f"histogram case {k}", counter, case, []))
    return runs


@needs_suite
@pytest.mark.long(0)        # with the other tests that build ripple.toml (conftest)
def test_peer_kernels_bfs_and_histogram_on_the_rtl():
    from rivulet.sim.fabric_run import run_many_on_rtl

    (seed,) = seeds_for("lang-rtl", count=1)
    rng = random.Random(seed)
    labels, cases, compiled, profiles, seeds = [], [], [], [], []
    for k, (label, loaded, case, problems) in enumerate(all_cases(rng)):
        lowered = lowered_case(loaded, case, problems, k, FABRIC)
        assert not lowered.problems, (label, lowered.problems)      # golden model = reference
        run_seed = rng.randrange(2**31)
        labels.append(label)
        cases.append(lowered)
        compiled.append(lowered.compile(lowered.program, FABRIC, run_seed))
        profiles.append(rng.choice(list(PROFILES)))
        seeds.append(run_seed)
    print(f"language kernels on the RTL (seed={seed}):", list(zip(labels, profiles, seeds, strict=True)))
    assert {label.split(" case")[0] for label in labels} == {*PEER_KERNELS, "bfs", "histogram"}
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds, case="lang-rtl",
                              extra_reads=[register_reads(image) for image in compiled])
    for label, case, image, result in zip(labels, cases, compiled, results, strict=True):
        reads = split_register_reads(image, result.extra)
        assert case.check(image, result.outputs, result.firings, reads) == [], label
        assert result.done_cycle is not None, label

