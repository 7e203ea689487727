"""Ripple programs whose counts depend on the schedule, lowered with open counts (docs/ripple.md,
"Open counts"): PageRank-delta pushes a vertex when its residual crosses a threshold, so how often
each PE fires depends on the interleaving. The golden model's counts are one schedule's; the
fabric runs another. Each run is judged by the workload's own check (numpy's fixed point), never
by the golden model's arrays."""

import pytest

from ripple_core.lang import compile_kernel
from ripple_core.lower import LoweringError, compile_lowering, lower_graph, schedule_dependent
from ripple_core.ops import wrap
from ripple_core.workloads import workload
from rivulet.sim.seeds import seeds_for
from rsn.fabric_spec import parse_fabric
from rsn.model import FabricModel
from rsn.program import SHARED_MEMORY
from rsn.readout import model_register_reads
from testbench.pe_grid import pe_grid

from .harness import run_small_case


def _shared_fabric(rows: int, cols: int):
    """ripple_large.toml (shared memory, host ports) on a smaller grid."""
    return parse_fabric(pe_grid("ripple_large.toml", rows, cols), f"{rows}x{cols} shared-memory fabric")


def _arrays(lowering, words):
    arrays, start = {}, 0
    for array, (_, length) in lowering.shared_arrays.items():
        arrays[array] = [wrap(word) for word in words[start:start + length]]
        start += length
    return arrays


def test_only_tasks_that_write_memory_are_schedule_dependent():
    prd, dmv = workload("prd"), workload("dmv")
    assert schedule_dependent(compile_kernel(prd.kernel("ripple")))
    assert not schedule_dependent(compile_kernel(prd.kernel("ordered")))     # ordered dataflow
    assert not schedule_dependent(compile_kernel(dmv.kernel("ordered")))


def test_counts_must_be_named():
    prd = workload("prd")
    graph = compile_kernel(prd.kernel("ripple"))
    with pytest.raises(LoweringError, match="counts='some' is not one of auto, exact, open"):
        lower_graph(graph, prd.case("ripple", 8, "uniform", 1), _shared_fabric(7, 7), counts="some")


def test_prd_with_open_counts_on_the_fabric_model_meets_its_reference():
    """Ripple prd, lowered (auto: open) for a 9x10 shared-memory fabric: every PE runs an open
    micro-op and every PE-to-PE stream a static route, the fabric model runs until it is
    quiescent, and the ranks read back pass prd's check against numpy's fixed point."""
    prd, spec = workload("prd"), _shared_fabric(9, 10)
    graph = compile_kernel(prd.kernel("ripple"))
    for seed in seeds_for("open-counts-prd", 1):
        print(f"prd ripple n=12 seed {seed}")
        case = prd.case("ripple", 12, "rmat", seed)
        golden = run_small_case(prd, "ripple", case)
        expect = {array: list(words) for array, words in golden.arrays.items()}
        lowering = lower_graph(graph, {**case, "expect": expect}, spec, name="prd_open")
        assert lowering.counts == "open"
        uops = [node.uops for node in lowering.program.graph.fu_nodes()]
        assert all(u == [{"firings": 0, "open": 1}] for u in uops)
        compiled = compile_lowering(lowering, spec, seed=seed)
        model = FabricModel(spec)
        result = model.run(compiled.image, lowering.program.host_inputs)
        assert result.done
        words = model_register_reads(model, compiled)[SHARED_MEMORY]
        assert prd.check("ripple", case, _arrays(lowering, words), {}) == []


def test_an_open_stream_to_a_host_port_is_refused():
    from rsn.checks import ProgramError, check_tokens
    from rsn.graph import StreamGraph

    g = StreamGraph()
    g.add_node("a", "pe", [{"firings": 0, "open": 1}])
    g.add_host_out("out", "out0", 3)
    g.connect(("a", 0), "out", None)
    with pytest.raises(ProgramError, match="is open .* 'out' is a host port"):
        check_tokens(g)


def test_a_stream_longer_than_a_switch_micro_op_lowers_open(monkeypatch):
    """A stream of more tokens than one switch micro-op counts cannot be one counted route; auto
    lowers it open. The limit is lowered here, so that a short loop crosses it."""
    import ripple_core.lower
    from ripple_core.lang import kernel

    limit = 1000
    monkeypatch.setattr(ripple_core.lower, "MAX_BEATS", limit)

    @kernel
    def total(n: int):
        s = 0
        for i in range(n):
            s = s + i
        return s

    n = limit + 5
    graph = compile_kernel(total)
    spec = _shared_fabric(3, 4)
    lowering = lower_graph(graph, {"args": {"n": n}, "expect": {"return": [n * (n - 1) // 2]}}, spec)
    assert lowering.counts == "open"
    sink_streams = [edge for edge in lowering.program.graph.edges
                    if lowering.program.graph.nodes[edge.sinks[0][0]].kind == "host_out"]
    assert [edge.tokens for edge in sink_streams] == [1]        # the host still gets its count
    assert all(edge.tokens is None for edge in lowering.program.graph.edges if edge not in sink_streams)
