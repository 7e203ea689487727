"""The sparse FU kinds on a fabric, registered through the entry point alone: sums per fiber of
a*b, a-b and a+b (``sam_alu``, one operator per micro-op, then ``sam_reduce``) and a dense level
scan, on the golden model and on the Verilated fabric under back-pressure, against numpy."""

import numpy as np
import pytest

from rivulet.sim.fabric_run import run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rsn.fabric_spec import parse_fabric
from rsn.fu_kinds import fu_kind
from rsn.graph import StreamGraph
from rsn.model import FabricModel
from rsn.program import Program, compile_program
from samflow.kind import ALU_OPS, SPARSE_KINDS
from samflow.tokens import encode
from testbench.counters import assert_counters_agree

WIDTH = 16
VALUE_WIDTH = WIDTH - 2
OPS = ("mul", "sub", "add")     # one micro-op (one whole stream) per operator


def fabric():
    return parse_fabric({
        "rows": 1, "cols": 3, "tiles": ["sam_alu sam_reduce sam_dense_scan"], "data_width": WIDTH,
        "host_ports": [{"name": "a", "tile": [0, 0], "side": "W", "direction": "in"},
                       {"name": "b", "tile": [0, 0], "side": "N", "direction": "in"},
                       {"name": "sums", "tile": [0, 1], "side": "N", "direction": "out"},
                       {"name": "rows", "tile": [0, 2], "side": "N", "direction": "in"},
                       {"name": "crd", "tile": [0, 2], "side": "E", "direction": "out"},
                       {"name": "ref", "tile": [0, 2], "side": "S", "direction": "out"}]}, "sparse.toml")


def _stream(fibers):
    tokens = []
    for k, fiber in enumerate(fibers):
        tokens += [int(v) for v in fiber] + ["S0" if k < len(fibers) - 1 else "S1"]
    return tokens + ["D"]


def _words(tokens):
    return [encode(t, VALUE_WIDTH) for t in tokens]


def program(seed: int) -> Program:
    """Per stream: aligned value fibers a, b and the sums of a*b, a-b or a+b per fiber (numpy),
    and dense rows to scan."""
    rng = np.random.default_rng(seed)
    a_tokens, b_tokens, sums, rows, crd, ref, dims = [], [], [], [], [], [], []
    combine = {"mul": np.multiply, "sub": np.subtract, "add": np.add}
    for op in OPS:
        lengths = rng.integers(0, 6, size=int(rng.integers(1, 5)))
        a = [rng.integers(-40, 40, size=n) for n in lengths]
        b = [rng.integers(-40, 40, size=n) for n in lengths]
        a_tokens += _stream(a)
        b_tokens += _stream(b)
        sums += [int(np.sum(combine[op](x, y))) for x, y in zip(a, b, strict=True)] + ["S0", "D"]
        dim = int(rng.integers(1, 6))
        chosen = sorted(rng.choice(8, size=int(rng.integers(1, 4)), replace=False).tolist())
        dims.append(dim)
        rows += [*chosen, "S0", "D"]
        for k, r in enumerate(chosen):
            closing = "S0" if k < len(chosen) - 1 else "S1"
            crd += list(range(dim)) + [closing]
            ref += (r * dim + np.arange(dim)).tolist() + [closing]
        crd.append("D")
        ref.append("D")
    last = [int(k == len(OPS) - 1) for k in range(len(OPS))]
    graph = StreamGraph()
    graph.add_host_in("a", "a", len(a_tokens))
    graph.add_host_in("b", "b", len(b_tokens))
    operators = [{"op": ALU_OPS[op], "last": x} for op, x in zip(OPS, last, strict=True)]
    graph.add_node("alu", "sam_alu", operators)
    graph.add_node("sum", "sam_reduce", [{"last": x} for x in last])
    graph.add_host_out("sums", "sums", len(sums))
    graph.connect("a", ("alu", 0), len(a_tokens))
    graph.connect("b", ("alu", 1), len(b_tokens))
    graph.connect("alu", ("sum", 0), len(a_tokens))     # aligned fibers: a's tokens, one for one
    graph.connect("sum", "sums", len(sums))
    graph.add_host_in("rows", "rows", len(rows))
    graph.add_node("scan", "sam_dense_scan", [{"dim": d, "last": x} for d, x in zip(dims, last, strict=True)])
    graph.add_host_out("crd", "crd", len(crd))
    graph.add_host_out("ref", "ref", len(ref))
    graph.connect("rows", ("scan", 0), len(rows))
    graph.connect(("scan", 0), "crd", len(crd))
    graph.connect(("scan", 1), "ref", len(ref))
    expected = {"sums": _words(sums), "crd": _words(crd), "ref": _words(ref)}
    inputs = {"a": _words(a_tokens), "b": _words(b_tokens), "rows": _words(rows)}
    return Program(f"sparse-{seed}", graph, host_inputs=inputs, expected=expected)


def test_the_kinds_come_from_the_entry_point():
    for name, kind in SPARSE_KINDS.items():
        assert fu_kind(name) is kind and kind.data_dependent


def test_the_golden_model_runs_the_sparse_tiles():
    spec = fabric()
    for seed in seeds_for("samflow:kinds-model", 3):
        print(f"seed={seed}")
        each = program(seed)
        result = FabricModel(spec).run(compile_program(each, spec).image, each.host_inputs)
        assert result.done
        for port, words in each.expected.items():
            assert result.outputs[port] == words, (seed, port)


@pytest.mark.verilator
@pytest.mark.long(1)
def test_the_verilated_fabric_runs_the_sparse_tiles_under_back_pressure():
    spec = fabric()
    profiles = ["no_stall", "random_stall_50", "backpressure_90", "starved_then_flood"]
    seeds = seeds_for("samflow:kinds-rtl", count=len(profiles))
    print(f"seeds {seeds}")
    programs = [program(seed) for seed in seeds]
    compiled = [compile_program(each, spec) for each in programs]
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds, case="samflow-kinds")
    for each, built, profile, rtl in zip(programs, compiled, profiles, results, strict=True):
        model = FabricModel(spec).run(built.image, each.host_inputs)
        for port, words in each.expected.items():
            assert rtl.outputs[port] == words == model.outputs[port], (profile, port)
        assert_counters_agree(rtl, model, profile)
