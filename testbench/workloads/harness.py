"""One run of a workload's case on the golden model (depth 2), shared by the workload tests."""

from ripple_core.interp import run
from ripple_core.lang import compile_kernel


def run_small_case(workload, version: str, case: dict):
    """Compile ``workload``'s ``version`` and run ``case``; the run must end drained."""
    graph = compile_kernel(workload.kernel(version))
    result = run(graph, case["args"], {name: list(words) for name, words in case["mem"].items()}, depth=2)
    assert result.drained, f"{workload.name} {version}: tokens left over: {result.leftovers}"
    return result
