"""One comparison used by every language test: the compiled graph on the golden model (slot
depth 2 and unbounded) against the kernel's 32-bit CPython reference, on the same inputs."""

from ripple_core.interp import run
from ripple_core.lang import compile_kernel
from ripple_core.lang.reference import run_reference


def agree(kernel, args: dict, memory: dict, mode=None, graph=None):
    graph = graph or compile_kernel(kernel, mode=mode)
    expected_memory, expected_outputs, expected_return = run_reference(kernel, args, memory)
    for depth in (2, None):
        result = run(graph, args, {k: list(v) for k, v in memory.items()}, depth=depth)
        assert result.drained, result.leftovers
        for name, words in expected_memory.items():
            assert result.arrays[name] == words, (name, depth)
        outputs = dict(result.outputs)
        returned = outputs.pop("return", [])
        assert returned == ([] if expected_return is None else [expected_return]), depth
        for name, values in outputs.items():
            want = expected_outputs.get(name, [])
            assert sorted(values) == sorted(want), (name, depth)
            if not any(node.op == "TASK" for node in graph.nodes.values()):
                assert values == want, (name, depth)
    return graph
