"""Malformed streams at run time: a sparse tile's sticky fault names the input and the token, on
the golden model and on the Verilated fabric under back-pressure, and a SAM graph's run names
the graph node. The expected faults are worked out by hand from the rules (samflow.faults)."""

from pathlib import Path

import pytest

from rivulet.frontends.sam import SPARSE_FABRIC
from rivulet.sim.fabric_run import FabricRunFailure, run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rsn.fabric_spec import load_fabric, parse_fabric
from rsn.graph import StreamGraph
from rsn.isa import REGISTERS
from rsn.model import DeadlockError, FabricModel
from rsn.program import Program, compile_program
from rsn.readout import model_register_reads, register_reads, split_register_reads
from samflow.faults import Fault, FaultCode, StreamRules, describe, sides_fault
from samflow.graph import load_graph
from samflow.graph.cli import random_tensors
from samflow.graph.lower import lower_graph, tile_faults
from samflow.pairs import pack
from samflow.tokens import encode

REPO = Path(__file__).resolve().parents[2]
WIDTH = 16
VALUE_WIDTH = WIDTH - 2
STATUS = REGISTERS["fu_status"]
FAULT_READS = [(STATUS + k, None) for k in range(3)]


def _rules_over(tokens, coordinates=0):
    rules = StreamRules(0, coordinates, VALUE_WIDTH)
    found = [fault for fault in map(rules.take, tokens) if fault is not None]
    return found[0] if found else None


def test_well_formed_streams_break_no_rule():
    for tokens in ([0, "D"], ["D"], [1, 2, "S0", 3, "S1", "D"], [4, "N", 6, "S0", "S0", 1, "S1", "D"],
                   ["S0", "D"], [7, 7, "S0", "D"]):
        assert _rules_over(tokens) is None, tokens
    assert _rules_over([1, 2, "S0", 0, "S1", "D"], coordinates=1) is None


def test_each_rule_names_the_offending_token():
    assert _rules_over([1, 2, "S1", 3, "S0", "D"]) == Fault(FaultCode.NESTING, 0, 2, "S1", "S0")
    assert _rules_over([1, "S0", 2, "D"]) == Fault(FaultCode.NESTING, 0, 2, 2)
    assert _rules_over([1, 5, "N", 5, "S0", "D"], coordinates=1) == Fault(FaultCode.ORDER, 0, 3, 5, 5)
    packed = pack([0, 1, "S0", "D"], [5, 3, "S0", "D"], VALUE_WIDTH)      # references low, coordinates high
    assert _rules_over(packed, coordinates=2) == Fault(FaultCode.ORDER, 0, 1, 3, 5)
    both = lambda a, b: 3       # noqa: E731  (the ALU takes both elements)
    assert sides_fault([1, "S0", 2, "S1", "D"], [3, "S1", "D"], both) == \
        Fault(FaultCode.SIDES, 1, 1, "S1", "S0")
    assert sides_fault([1, 2, "S0", "D"], [3, "D"], both) == Fault(FaultCode.SIDES, 1, 1, "D", 2)
    assert sides_fault([1, "S0", 2, "S1", "D"], [4, "S0", "S1", "D"], both) is None


@pytest.mark.parametrize("fault", [
    Fault(FaultCode.NESTING, 0, 2, "S1", "S0"), Fault(FaultCode.NESTING, 2, 9, -4),
    Fault(FaultCode.ORDER, 1, 70000, 3, 5), Fault(FaultCode.SIDES, 1, 1, "D", 2),
    Fault(FaultCode.SIDES, 1, 4, "S1", "S0")])
def test_the_register_words_keep_the_fault(fault):
    kept = Fault.from_words(fault.words())
    assert kept == Fault(fault.code, fault.input, min(fault.index, 0xFFFF), fault.token, fault.previous)
    assert describe([0, 5, 7], ("a",)) is None


def fabric():
    return parse_fabric({
        "rows": 1, "cols": 3, "tiles": ["sam_intersect sam_reduce sam_alu"], "data_width": WIDTH,
        "host_ports": [{"name": "side1", "tile": [0, 0], "side": "W", "direction": "in"},
                       {"name": "side2", "tile": [0, 0], "side": "N", "direction": "in"},
                       {"name": "vals", "tile": [0, 1], "side": "N", "direction": "in"},
                       {"name": "a", "tile": [0, 2], "side": "N", "direction": "in"},
                       {"name": "b", "tile": [0, 2], "side": "E", "direction": "in"},
                       {"name": "out", "tile": [0, 1], "side": "S", "direction": "out"}]}, "faults.toml")


def _words(tokens):
    return [encode(t, VALUE_WIDTH) for t in tokens]


def order_and_nesting() -> Program:
    """An intersect whose side 1 falls from 5 to 3, and a reduce whose S1 closes more than the
    stream's last stop S0; both drain their outputs, so the run ends."""
    inputs = {"side1": pack([0, 1, "S0", "D"], [5, 3, "S0", "D"], VALUE_WIDTH),
              "side2": pack([0, 1, "S0", "D"], [3, 5, "S0", "D"], VALUE_WIDTH),
              "vals": [1, 2, "S1", 3, "S0", "D"]}
    graph = StreamGraph()
    for port, tokens in inputs.items():
        graph.add_host_in(port, port, len(tokens))
    graph.add_node("join", "sam_intersect", [{"discard": 3, "last": 1}])
    graph.add_node("sum", "sam_reduce", [{"discard": 1, "last": 1}])
    graph.connect("side1", ("join", 0), 4)
    graph.connect("side2", ("join", 1), 4)
    graph.connect("vals", ("sum", 0), 6)
    reads = {"join": FAULT_READS, "sum": FAULT_READS}
    return Program("order-and-nesting", graph, host_inputs={p: _words(t) for p, t in inputs.items()},
                   reads=reads)


def sides_apart() -> Program:
    """An ALU whose inputs close different fibers: S0 on one side meets S1 on the other."""
    a, b = [1, "S0", 2, "S1", "D"], [3, "S1", "D"]
    graph = StreamGraph()
    graph.add_host_in("a", "a", len(a))
    graph.add_host_in("b", "b", len(b))
    graph.add_node("alu", "sam_alu", [{"op": 0, "last": 1}])
    graph.add_host_out("out", "out", 3)
    graph.connect("a", ("alu", 0), len(a))
    graph.connect("b", ("alu", 1), len(b))
    graph.connect("alu", "out", 3)
    return Program("sides-apart", graph, host_inputs={"a": _words(a), "b": _words(b)})


EXPECTED = {"join": Fault(FaultCode.ORDER, 0, 1, 3, 5), "sum": Fault(FaultCode.NESTING, 0, 2, "S1", "S0")}
SIDES_LINE = "fault at input in_val2, token 1 (S1): the inputs close different fibers (in_val1 stands at S0)"


def test_the_golden_model_keeps_each_fault():
    spec = fabric()
    compiled = compile_program(order_and_nesting(), spec)
    model = FabricModel(spec)
    assert model.run(compiled.image, compiled.program.host_inputs).done
    reads = model_register_reads(model, compiled)
    assert {name: Fault.from_words(words) for name, words in reads.items()} == EXPECTED
    apart = compile_program(sides_apart(), spec)
    with pytest.raises(DeadlockError) as error:
        FabricModel(spec).run(apart.image, apart.program.host_inputs)
    assert SIDES_LINE in str(error.value)


@pytest.mark.verilator
def test_the_verilated_tiles_keep_each_fault_under_back_pressure():
    spec = fabric()
    profiles = ["no_stall", "random_stall_50", "starved_then_flood"]
    seeds = seeds_for("samflow:faults-rtl", count=len(profiles))
    print(f"seeds {seeds}")
    compiled = [compile_program(order_and_nesting(), spec) for _ in profiles]
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds, case="samflow-faults",
                              extra_reads=[register_reads(c) for c in compiled])
    for built, profile, seed, rtl in zip(compiled, profiles, seeds, results, strict=True):
        reads = split_register_reads(built, rtl.extra)
        assert {name: Fault.from_words(words) for name, words in reads.items()} == EXPECTED, (profile, seed)
    apart = compile_program(sides_apart(), spec)
    with pytest.raises(FabricRunFailure) as error:
        run_many_on_rtl([apart], profiles=["random_stall_50"], seeds=seeds[:1], case="samflow-faults-sides",
                        max_cycles=3000)
    assert SIDES_LINE in str(error.value)


def test_a_graph_run_names_the_node_with_the_fault():
    graph = load_graph(REPO / "examples" / "sam" / "mat_elemadd_csr.gv")
    lowered = lower_graph(graph, random_tensors(graph, 6, 0.4, 3), load_fabric(SPARSE_FABRIC))
    union = next(tile for tile, node in lowered.nodes.items() if node.type == "union")
    node = lowered.nodes[union]
    assert lowered.program.reads[union] == FAULT_READS
    clean = {tile: [0, 0, 0] for tile in lowered.nodes}
    assert tile_faults(lowered, clean) == []
    faulty = {**clean, union: Fault(FaultCode.ORDER, 1, 4, 2, 9).words()}
    assert tile_faults(lowered, faulty) == [
        f"{graph.source}:{node.line}: {node.where} (tile {union}): a malformed stream at run time: "
        "input in_side2, token 4 (2): coordinates do not rise within a fiber (9 before 2)"]
