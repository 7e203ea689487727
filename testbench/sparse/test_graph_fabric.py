"""SAM graphs on a fabric of sparse tiles (samflow.graph.lower): SAM's residual, mattransmul and two
vector compression graphs and six of ours (SpMV, inner-product SpMM and elementwise add, with joiners;
row sums, row scaling; Gustavson's SpMM with the sparse accumulator, on a fabric of its own), placed,
routed and run on the golden fabric model
and on the Verilated fabric under back-pressure, each result decoded from the writers' host ports
and checked against scipy / numpy. Every expected result is computed here, never by samflow; ids
and printed lines carry the seed.

On the model each graph runs on its example fabric (sparse.toml, sparse_gustavson.toml). On the
RTL all of them run on one fabric that holds both, sparse.toml with a sixth row of the kinds
Gustavson's SpMM adds (:data:`RTL_FABRIC`): a 5x6 sparse fabric's build is one of the suite's
costliest, and two of them would test the same tiles twice."""

import copy
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

from rivulet.sim.fabric_run import run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rsn.fabric_spec import load_fabric, parse_fabric
from rsn.model import FabricModel
from rsn.readout import model_register_reads, register_reads, split_register_reads
from samflow.graph import GraphError, load_graph
from samflow.graph.lower import compile_lowered, decode_outputs, lower_graph, tile_faults
from testbench.counters import assert_counters_agree
from testbench.sparse.random_tensors import matrix as _matrix
from testbench.sparse.random_tensors import scalar as _scalar
from testbench.sparse.random_tensors import vector as _vector

REPO = Path(__file__).resolve().parents[2]
SAM_GRAPHS = REPO.parent / "shared" / "peer-suites" / "sam" / "graphs"
OUR_GRAPHS = REPO / "examples" / "sam"
FABRIC = REPO / "examples" / "fabrics" / "sparse.toml"
ACCUMULATOR_FABRIC = REPO / "examples" / "fabrics" / "sparse_gustavson.toml"


def _rtl_fabric():
    """sparse.toml with a sixth row (a sparse accumulator, two coordinate holders, two scanners
    and a repeat-signal generator), its bottom host ports moved down to the new row's edge."""
    data = copy.deepcopy(tomllib.loads(FABRIC.read_text()))
    data["tiles"].append("sam_scan_c sam_crd_hold sam_spacc sam_repsig sam_crd_hold sam_scan_c")
    data["rows"] += 1
    for port in data["host_ports"]:
        if port["side"] == "S" or (port["side"] in ("W", "E") and port["tile"][0] == data["rows"] - 2):
            port["tile"] = [data["rows"] - 1, port["tile"][1]]
    return parse_fabric(data, "sparse.toml with an accumulator row")


RTL_FABRIC = _rtl_fabric()


# graph -> (its file, inputs from (rng, n, density), the expected outputs by scipy / numpy)
GRAPHS = {
    "vec_ds_compression_HAND": (SAM_GRAPHS, lambda r, n, d: {"b": _vector(r, n, d)}, lambda t: {"x": t["b"]}),
    "vec_sd_compression_HAND": (SAM_GRAPHS, lambda r, n, d: {"b": scipy.sparse.coo_array(_vector(r, n, d))},
                                lambda t: {"x": t["b"].toarray()}),
    "mat_residual_HAND": (SAM_GRAPHS, lambda r, n, d: {"b": _vector(r, n, d), "C": _matrix(r, n, d),
                                                     "d": _vector(r, n, d)},
                          lambda t: {"x": t["b"] - t["C"] @ t["d"]}),
    "mat_mattransmul_HAND": (SAM_GRAPHS, lambda r, n, d: {"b": _scalar(r), "C": _matrix(r, n, d),
                                                        "d": _vector(r, n, d), "e": _scalar(r),
                                                        "f": _vector(r, n, d)},
                             lambda t: {"x": t["b"] * (t["C"].T @ t["d"]) + t["e"] * t["f"]}),
    "spmv_csr": (OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d), "c": _vector(r, n, d)},
                 lambda t: {"x": t["B"] @ t["c"]}),
    "mat_elemadd_csr": (OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d), "C": _matrix(r, n, d)},
                        lambda t: {"X": (t["B"] + t["C"]).tocsr()}),
    "mat_rowsum_csr": (OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d)},
                       lambda t: {"x": np.asarray(t["B"].sum(axis=1)).ravel()}),
    "mat_rowscale_csr": (OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d), "b": _vector(r, n, 1.0)},
                         lambda t: {"X": t["B"].multiply(t["b"].reshape(-1, 1)).tocsr()}),
    "spmm_inner": (OUR_GRAPHS, lambda r, n, d: {"B": _matrix(r, n, d), "C": _matrix(r, n, d)},
                   lambda t: {"X": t["B"] @ t["C"]}),
}


def _dense(value):
    return value.toarray() if hasattr(value, "toarray") else np.asarray(value)


def _case(name, n, density, seed):
    folder, make, expect = GRAPHS[name]
    tensors = make(np.random.default_rng(seed), n, density)
    return load_graph(folder / f"{name}.gv"), tensors, expect(tensors)


def _check(name, lowered, outputs, expected, where):
    decoded = decode_outputs(lowered, outputs)
    for tensor, value in expected.items():
        assert np.array_equal(_dense(decoded[tensor]), _dense(value)), f"{name} {where}: {tensor}"


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("n, density", [(8, 0.0), (8, 0.3), (12, 0.15), (16, 1.0)])
def test_a_graph_on_the_fabric_model_equals_scipy(name, n, density):
    spec = load_fabric(FABRIC)
    for seed in seeds_for(f"samflow:graph-fabric:{name}:{n}:{density}", 2):
        print(f"{name} n={n} density={density} seed={seed}")
        graph, tensors, expected = _case(name, n, density, seed)
        lowered = lower_graph(graph, tensors, spec)
        compiled, model = compile_lowered(lowered, spec), FabricModel(spec)
        result = model.run(compiled.image, {})
        assert result.done
        assert tile_faults(lowered, model_register_reads(model, compiled)) == []
        _check(name, lowered, result.outputs, expected, f"seed {seed}")


def test_a_wrong_expectation_fails_the_same_check():
    spec = load_fabric(FABRIC)
    graph, tensors, expected = _case("mat_rowsum_csr", 8, 0.5, 7)
    lowered = lower_graph(graph, tensors, spec)
    result = FabricModel(spec).run(compile_lowered(lowered, spec).image, {})
    expected["x"] = expected["x"] + np.eye(8, dtype=np.int64)[3]
    with pytest.raises(AssertionError):
        _check("mat_rowsum_csr", lowered, result.outputs, expected, "perturbed")


def _gustavson(n, density, seed):
    rng = np.random.default_rng(seed)
    tensors = {"B": _matrix(rng, n, density), "C": _matrix(rng, n, density)}
    return load_graph(OUR_GRAPHS / "spmm_gustavson.gv"), tensors, {"X": tensors["B"] @ tensors["C"]}


@pytest.mark.parametrize("n, density", [(8, 0.0), (8, 0.3), (12, 0.15), (16, 1.0)])
def test_gustavson_spmm_with_the_sparse_accumulator_on_the_fabric_model_equals_scipy(n, density):
    spec = load_fabric(ACCUMULATOR_FABRIC)
    for seed in seeds_for(f"samflow:gustavson:{n}:{density}", 2):
        print(f"spmm_gustavson n={n} density={density} seed={seed}")
        graph, tensors, expected = _gustavson(n, density, seed)
        lowered = lower_graph(graph, tensors, spec)
        compiled, model = compile_lowered(lowered, spec), FabricModel(spec)
        result = model.run(compiled.image, {})
        assert result.done
        assert tile_faults(lowered, model_register_reads(model, compiled)) == []
        _check("spmm_gustavson", lowered, result.outputs, expected, f"seed {seed}")


@pytest.mark.verilator
@pytest.mark.long(1)        # with the test below, which runs on the same build
def test_gustavson_spmm_on_the_verilated_fabric_under_back_pressure_equals_scipy_and_the_model():
    spec = RTL_FABRIC
    profiles = ["no_stall", "random_stall_50", "backpressure_90", "starved_then_flood"]
    seeds = seeds_for("samflow:gustavson-rtl", count=len(profiles))
    print(f"seeds {seeds}")
    cases = [_gustavson(10, 0.3, seed) for seed in seeds]
    lowered = [lower_graph(graph, tensors, spec) for graph, tensors, _ in cases]
    compiled = [compile_lowered(each, spec) for each in lowered]
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds, case="samflow-gustavson",
                              extra_reads=[register_reads(c) for c in compiled])
    for (_, _, expected), each, built, profile, seed, rtl in zip(cases, lowered, compiled, profiles, seeds,
                                                                  results, strict=True):
        model = FabricModel(spec).run(built.image, {})
        assert rtl.outputs == {port: model.outputs[port] for port in built.host_outputs}, f"{profile} {seed}"
        _check("spmm_gustavson", each, rtl.outputs, expected, f"{profile} seed {seed}")
        assert tile_faults(each, split_register_reads(built, rtl.extra)) == [], f"{profile} seed {seed}"
        assert_counters_agree(rtl, model, f"{profile} seed {seed}", link_beats=False)


def test_an_accumulator_sum_too_wide_for_its_half_is_refused():
    graph = load_graph(OUR_GRAPHS / "spmm_gustavson.gv")
    B = scipy.sparse.csr_array(np.array([[200, 0], [0, 1]]))
    C = scipy.sparse.csr_array(np.array([[100, 0], [0, 1]]))     # X[0, 0] = 20,000, beyond 16,383
    with pytest.raises(GraphError, match=r"node 16 \(SparseAccumulator 1 in0=j in1=i\): gives the sum "
                                         r"20000, but a sum leaves packed with its coordinate in a signed "
                                         r"half of 15 bits \(-16384..16383\)"):
        lower_graph(graph, {"B": B, "C": C}, load_fabric(ACCUMULATOR_FABRIC))


def test_an_accumulator_row_wider_than_its_workspace_is_refused():
    graph = load_graph(OUR_GRAPHS / "spmm_gustavson.gv")
    n = 300
    B = scipy.sparse.csr_array(([1], ([0], [0])), shape=(2, 2), dtype=np.int64)
    C = scipy.sparse.csr_array(([1], ([0], [n - 1])), shape=(2, n), dtype=np.int64)
    with pytest.raises(GraphError, match=r"sums at inner coordinate 299, but a sam_spacc tile's workspace "
                                         r"holds coordinates 0..255"):
        lower_graph(graph, {"B": B, "C": C}, load_fabric(ACCUMULATOR_FABRIC))


def test_a_coordinate_too_large_for_a_joiners_half_is_refused():
    graph = load_graph(OUR_GRAPHS / "spmv_csr.gv")
    n = 40_000                          # a column coordinate beyond a 15-bit half (0..32766)
    c = np.zeros(n, dtype=np.int64)
    c[n - 1] = 3
    B = scipy.sparse.csr_array(([5], ([1], [n - 1])), shape=(8, n), dtype=np.int64)
    with pytest.raises(GraphError, match=r"gives crd 39999, but a joiner's side packs coordinate and "
                                         r"reference in halves of 15 bits \(0..32766\)"):
        lower_graph(graph, {"B": B, "c": c}, load_fabric(FABRIC))


def test_a_tensor_larger_than_a_bank_is_refused_with_the_table_to_change():
    graph, tensors, _ = _case("mat_rowsum_csr", 24, 0.6, 3)     # about 345 nonzeros; banks of 256
    with pytest.raises(GraphError, match=r"node 1 \(FiberLookup j: B1 compressed\): needs \d+ words in a "
                                         r"bank of 256; raise depth in the fabric's \[sam_scan_c\] table"):
        lower_graph(graph, tensors, load_fabric(FABRIC))


def test_a_tensor_larger_than_any_bank_is_refused_without_pointing_at_a_table():
    graph = load_graph(OUR_GRAPHS / "mat_rowsum_csr.gv")
    B = scipy.sparse.csr_array((3000, 4), dtype=np.int64)     # 3001 segment words: no depth holds them
    with pytest.raises(GraphError, match=r"needs 3001 words in a bank, more than any bank holds \(2048 words "
                                         r"at the most\); use smaller or sparser tensors"):
        lower_graph(graph, {"B": B}, load_fabric(FABRIC))


@pytest.mark.parametrize("argv,message", [
    (["-D", "size=100000"], r"-D size=100000 is more than a sparse tile's bank holds: .* a bank "
                            r"\(\[sam_array\], \[sam_scan_c\] depth\) is at most 2048 words; "
                            r"use a size of at most 2048"),
    (["-D", "size=2049"], r"-D size=2049 is more than a sparse tile's bank holds"),
])
def test_rivulet_run_refuses_a_size_no_bank_holds_before_making_tensors(capsys, argv, message):
    """A size of 100000 once asked numpy for 75 GiB before anything looked at the fabric."""
    from rivulet.cli import main

    assert main(["run", str(OUR_GRAPHS / "spmv_csr.gv"), *argv]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_graph_file_that_is_not_text_is_refused(tmp_path):
    binary = tmp_path / "binary.gv"
    binary.write_bytes(b"\xff\xfe digraph")
    with pytest.raises(GraphError, match=r"binary.gv: not a text file \(byte 0 is not UTF-8\)"):
        load_graph(binary)


def test_too_few_host_output_ports_are_refused():
    spec = load_fabric(FABRIC)
    few = type(spec)(**{**spec.__dict__, "host_ports": spec.host_ports[:1]})
    graph, tensors, _ = _case("mat_rowsum_csr", 8, 0.3, 3)
    with pytest.raises(GraphError, match="the graph has 2 writers, each a host output port, but the "
                                         "fabric has 1"):
        lower_graph(graph, tensors, few)


@pytest.mark.verilator
@pytest.mark.long(1)
def test_the_graphs_on_the_verilated_fabric_under_back_pressure_equal_scipy_and_the_model():
    spec = RTL_FABRIC
    profiles = ["no_stall", "random_stall_50", "backpressure_90", "starved_then_flood"]
    # Each graph under two of the profiles, in turn: every profile meets four or five graphs.
    runs = [(name, profiles[(k + shift) % len(profiles)])
            for k, name in enumerate(GRAPHS) for shift in (0, 2)]
    seeds = seeds_for("samflow:graph-fabric-rtl", count=len(runs))
    print(f"seeds {seeds}")
    cases = [(name, *_case(name, 10, 0.3, seed)) for (name, _), seed in zip(runs, seeds, strict=True)]
    lowered = [lower_graph(graph, tensors, spec) for _, graph, tensors, _ in cases]
    compiled = [compile_lowered(each, spec) for each in lowered]
    results = run_many_on_rtl(compiled, profiles=[p for _, p in runs], seeds=seeds, case="samflow-graphs",
                              extra_reads=[register_reads(c) for c in compiled])
    for (name, _graph, _tensors, expected), each, built, (_, profile), seed, rtl in zip(
            cases, lowered, compiled, runs, seeds, results, strict=True):
        model = FabricModel(spec).run(built.image, {})
        used = set(built.host_outputs)
        assert set(rtl.outputs) == used, (name, profile)
        assert rtl.outputs == {port: model.outputs[port] for port in used}, f"{name} {profile} seed {seed}"
        _check(name, each, rtl.outputs, expected, f"{profile} seed {seed}")
        faults = tile_faults(each, split_register_reads(built, rtl.extra))
        assert faults == [], f"{name} {profile} seed {seed}"
        assert_counters_agree(rtl, model, f"{name} {profile}", link_beats=False)


def test_rivulet_run_takes_a_sam_graph(capsys):
    from rivulet.cli import main

    assert main(["run", str(OUR_GRAPHS / "mat_rowscale_csr.gv"), "-D", "size=9", "-D", "seed=4"]) == 0
    assert "X decoded from the writers' ports equals scipy" in capsys.readouterr().out
    assert main(["run", str(OUR_GRAPHS / "spmm_gustavson.gv"), "-D", "size=8"]) == 0     # its own fabric
    assert "X decoded from the writers' ports equals scipy" in capsys.readouterr().out
    assert main(["run", str(OUR_GRAPHS / "spmm_gustavson.gv"), "--fabric", str(FABRIC)]) == 2
    assert "need a sam_crd_hold tile but only 1 usable" in capsys.readouterr().err
    assert main(["run", str(OUR_GRAPHS / "mat_rowsum_csr.gv"), "-D", "rows=3"]) == 2
    assert "-D rows is not a parameter of a SAM graph run; it takes size" in capsys.readouterr().err


def test_a_stream_longer_than_a_switch_micro_op_takes_a_static_route(monkeypatch):
    """A stream between tiles longer than a micro-op counts runs on a static route (the sparse
    kinds end at ``D``); one to a writer's host port, which needs a count, is refused. The limit is
    lowered here so that small tensors cross it."""
    import samflow.graph.lower as lower

    spec = load_fabric(FABRIC)
    graph, tensors, expected = _case("spmm_inner", 8, 0.5, 4)
    counted = lower_graph(graph, tensors, spec).program.graph
    to_host = max(e.tokens for e in counted.edges if any(counted.nodes[s].is_host for s, _ in e.sinks))
    long = {(e.source, tuple(e.sinks)) for e in counted.edges if e.tokens > to_host}
    assert long, "no stream between tiles is longer than the writers' streams"
    monkeypatch.setattr(lower, "MAX_BEATS", to_host)
    lowered = lower_graph(graph, tensors, spec)
    edges = lowered.program.graph.edges
    assert {(e.source, tuple(e.sinks)) for e in edges if e.tokens is None} == long
    compiled, model = compile_lowered(lowered, spec), FabricModel(spec)
    result = model.run(compiled.image, {})
    assert result.done
    _check("spmm_inner", lowered, result.outputs, expected, "static routes")
    monkeypatch.setattr(lower, "MAX_BEATS", to_host - 1)
    with pytest.raises(GraphError, match=rf"stream carries {to_host} tokens to a writer, a host output port, "
                                         rf"which counts at most {to_host - 1}"):
        lower_graph(graph, tensors, spec)
