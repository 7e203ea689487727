# amaranth: UnusedElaboratable=no
"""Dataflow graphs on pe tiles: the lowering (token counts, configuration words, errors), the
fabric's golden model, and the Verilated fabric.

References, none taken from the RTL or from the model under test:

* the RipTide peer suite's cases, all ten graphs: their ``expect`` (no host output; the arrays
  nn-vadd, nn-relu and dmv store, read back from the PEs' banks) and, since the simple kernels
  loop ``b - a + 1`` times, their token counts and firings written as formulas of the loop count;
* the same suite graphs with their discarded return value exported to a host port (one STEER of
  the opposite polarity), against the C kernel's sum computed in Python;
* three programs written with the builder (clamped_sum: STREAM, SGT, SELECT, CARRY, STEER, ADD;
  maxof: SGT, STEER, MERGE, ORDER, ID, MUL; scaled_sum: LOAD with a sync slot, STORE, and the
  sum of what it loads sent to a host port), against their Python results.

On the RTL, per-PE firing counters must equal the golden model's firings: ordered dataflow fires
each operator equally often whatever the timing (random host back-pressure, other buffering).
"""

import copy
import random
from pathlib import Path

import pytest

from ripple_core import pe as fu_pe
from ripple_core.builder import Builder
from ripple_core.graph import Input, edge
from ripple_core.lower import LoweringError, compile_lowering, lower_graph
from ripple_core.pe import MEM_WINDOW, REG_CONFIG, REG_ORIGIN, REG_PAGE, REG_STATUS, decode_config
from ripple_core.programs import (
    bfs_case,
    bfs_memory,
    histogram,
    histogram_case,
    random_csr,
    reachable,
    ripple_bfs,
    serial_case,
    serial_walk,
    tree_case,
    tree_walk,
)
from ripple_core.riptide import load_graph, load_vectors
from rivulet.cli import main
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rsn import checks
from rsn.checks import ProgramError
from rsn.cycle_model import predict_cycles
from rsn.fabric_spec import FabricError, load_fabric, parse_fabric
from rsn.graph import StreamGraph
from rsn.model import FabricModel
from rsn.place import PlaceError
from rsn.readout import model_register_reads, register_reads, split_register_reads

SUITE = Path(__file__).resolve().parents[3] / "shared" / "peer-suites" / "riptide"
FABRIC = load_fabric(Path(__file__).resolve().parents[2] / "examples" / "fabrics" / "ripple.toml")
NO_MEMORY_KERNELS = ("simple", "simple-mem")
MEMORY_KERNELS = ("nn-vadd", "nn-relu", "dmv")
VARIANTS = ("stream", "nostream")
MASK = 0xFFFF_FFFF

needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="peer suite not found beside the repository")


def suite_graph(kernel, variant):
    return load_graph(SUITE / f"{kernel}.riptide{'.nostream' if variant == 'nostream' else ''}.json")


def suite_cases(kernel):
    return load_vectors(SUITE / f"{kernel}.vectors.json")


def kernel_sum(kernel, args) -> int:
    """The C kernels: ``base`` (0 for simple-mem) plus every i with a <= i <= b, 32-bit."""
    total = args.get("base", 0) + sum(range(args["a"], args["b"] + 1))
    return total & MASK


def export_result(graph):
    """The suite graph with its return value exported: the sum's CARRY (the one whose init is not
    the argument ``a``) feeds a STEER that passes while the loop continues and drops the final sum;
    a STEER of the opposite polarity on the same decider passes exactly that final sum to a SINK."""
    graph = copy.deepcopy(graph)
    total = next(node for node in graph.nodes.values() if node.op == "CARRY"
                 and not (node.inputs[1].kind == "arg" and node.inputs[1].name == "a"))
    steer = next(node for node in graph.nodes.values() if node.op == "STEER"
                 and node.inputs[1].kind == "edge" and node.inputs[1].source == total.name)
    graph.add("exit", "STEER", [steer.inputs[0], edge(total.name)], pred=not steer.attrs["pred"])
    graph.add("result", "SINK", [edge("exit")])
    return graph.validate()


def clamped_sum_program():
    """total = sum of max(i, c) for a <= i < b (signed compare)."""
    b = Builder("clamped_sum")
    index, flag = b.stream(b.scalar("a", hold=False), b.scalar("b", hold=False), b.const(1),
                           cmp="SLT", pred=False, name="loop")
    above = b.sgt(index, b.scalar("c"), name="above")
    term = b.select(above, index, b.scalar("c"), name="term")
    acc_next = b.wire("acc_next")
    acc = b.carry(flag, b.const(0), acc_next, pred=False, name="acc")
    running = b.steer(flag, acc, pred=False, name="running")
    acc_next.bind(b.add(running, term, name="sum"))
    b.sink("total", b.steer(flag, acc, pred=True, name="exit"))
    return b.build()


def clamped_sum_case(a, bound, c):
    return {"args": {"a": a, "b": bound, "c": c},
            "expect": {"total": [sum(max(i, c) for i in range(a, bound)) & MASK]}}


def maxof_program():
    """k * max(x, y) through STEER / MERGE, ordered after the decider, copied by ID."""
    b = Builder("maxof")
    decider = b.sgt(b.scalar("x", hold=False), b.scalar("y", hold=False), name="cmp")
    if_x = b.steer(decider, b.scalar("x", hold=False), pred=True, name="if_x")
    if_y = b.steer(decider, b.scalar("y", hold=False), pred=False, name="if_y")
    picked = b.merge(decider, if_x, if_y, name="pick")
    copied = b.ident(b.order(picked, decider, name="after"), name="copy")
    b.sink("max", b.mul(copied, b.scalar("k", hold=False), name="scale"))
    return b.build()


def maxof_case(x, y, k=1):
    return {"args": {"x": x, "y": y, "k": k}, "expect": {"max": [(max(x, y) * k) & MASK]}}


def scaled_sum_program():
    """B[i] = A[i] * k for i < n, and the sum of the A[i] to a host port. Each LOAD of A waits
    for the STORE of the previous index (a sync slot fed by a CARRY of the done tokens), so the
    LOAD uses all three of its slots."""
    b = Builder("scaled_sum")
    index, flag = b.stream(b.const(0), b.scalar("n", hold=False), b.const(1), cmp="SLT", pred=False,
                           name="loop")
    done_next = b.wire("done_next")
    after = b.carry(flag, b.const(1), done_next, pred=False, name="after")
    value = b.load(b.array("A"), index, b.steer(flag, after, pred=False, name="sync"), name="fetch")
    done_next.bind(b.store(b.array("B"), index, b.mul(value, b.scalar("k"), name="scale"), name="put"))
    acc_next = b.wire("acc_next")
    acc = b.carry(flag, b.const(0), acc_next, pred=False, name="acc")
    acc_next.bind(b.add(b.steer(flag, acc, pred=False, name="running"), value, name="sum"))
    b.sink("total", b.steer(flag, acc, pred=True, name="exit"))
    return b.build()


def scaled_sum_case(values, n, k, tail=2):
    """``values`` in A; B starts as ``tail`` extra words of -1 beyond n, which must stay."""
    A, B = list(values), [7] * n + [-1] * tail
    A += [0] * (len(B) - len(A))
    return {"args": {"n": n, "k": k}, "mem": {"A": A, "B": B},
            "expect": {"A": A, "B": [(a * k) & MASK for a in A[:n]] + [-1] * tail,
                       "total": [sum(A[:n]) & MASK]}}


# --- the fabric description and the cycle check ---------------------------------------------

def test_pe_tiles_need_32_bit_data():
    description = {"rows": 1, "cols": 2, "tiles": ["pe pe"], "data_width": 16}
    with pytest.raises(FabricError, match=r"data_width=16 is not allowed with pe tiles; a pe tile "
                                          r"computes on 32-bit values, so set data_width = 32"):
        parse_fabric(description, "x.toml")
    assert parse_fabric({**description, "data_width": 32}).kind((0, 1)) == "pe"
    assert parse_fabric({"rows": 1, "cols": 1, "tiles": ["alu"], "data_width": 16}).data_width == 16


def _ring(kinds):
    graph = StreamGraph()
    for k, kind in enumerate(kinds):
        graph.add_node(f"n{k}", kind, [{"firings": 4} if kind == "pe" else {"beats": 4}])
    for k in range(len(kinds)):
        graph.connect(f"n{k}", (f"n{(k + 1) % len(kinds)}", 0), 4)
    return graph


def test_cycles_of_pe_nodes_are_legal_and_others_are_not():
    checks.check_cycles(_ring(["pe", "pe", "pe"]))
    checks.check_cycles(_ring(["pe"]))                       # a PE feeding itself (a CARRY's next)
    with pytest.raises(ProgramError, match=r"cyclic wait between functional units: n1 -> n2 -> n0 -> n1 "
                                           r"\[n1 \(alu\), n2 \(pe\), n0 \(pe\)\]"):
        checks.check_cycles(_ring(["pe", "alu", "pe"]))
    with pytest.raises(ProgramError, match=r"n0 -> n0 \[n0 \(alu\)\]; .* Only cycles made of pe nodes"):
        checks.check_cycles(_ring(["alu"]))


# --- the lowering ---------------------------------------------------------------------------

def _streams(lowering) -> dict:
    return {(edge.source, tuple(edge.sinks)): edge.tokens for edge in lowering.program.graph.edges}


@needs_suite
@pytest.mark.parametrize("kernel", NO_MEMORY_KERNELS)
def test_token_counts_and_firings_follow_the_loop_count(kernel):
    """Per case, n = b - a + 1 iterations; in both variants the header runs n + 1 times."""
    for case in suite_cases(kernel):
        n = case["args"]["b"] - case["args"]["a"] + 1
        stream = lower_graph(suite_graph(kernel, "stream"), case, FABRIC)
        nostream = lower_graph(suite_graph(kernel, "nostream"), case, FABRIC)
        if kernel == "simple":
            assert _streams(stream) == {
                (("v0", 0), (("v3", 1),)): n + 1, (("v1", 0), (("v0", 2),)): n,
                (("v2", 0), (("v1", 0),)): n, (("v2", 1), (("v0", 0), ("v3", 0))): n + 1,
                (("v3", 0), (("v1", 1),)): n}
            assert stream.firings == {"v0": n + 2, "v1": n, "v2": n + 1, "v3": n + 1}
            assert _streams(nostream) == {
                (("v0", 0), (("v4", 0), ("v6", 1))): n + 1, (("v1", 0), (("v5", 1),)): n,
                (("v2", 0), (("v1", 1),)): n + 1, (("v3", 0), (("v0", 2),)): n,
                (("v4", 0), (("v0", 0), ("v1", 0), ("v2", 0), ("v6", 0))): n + 1,
                (("v5", 0), (("v2", 2),)): n, (("v6", 0), (("v3", 0), ("v5", 0))): n}
            assert nostream.firings == {"v0": n + 2, "v1": n + 1, "v2": n + 2, "v3": n, "v4": n + 1,
                                        "v5": n, "v6": n + 1}
        else:
            assert stream.firings == {"v0": n + 2, "v1": n + 1, "v2": n + 1, "v3": n}
            assert nostream.firings == {"v0": n + 2, "v1": n + 2, "v2": n + 1, "v3": n + 1, "v4": n + 1,
                                        "v5": n, "v6": n}
        for lowering in (stream, nostream):
            assert lowering.program.expected == {} and lowering.program.host_inputs == {}
            assert {node.name: [uop["firings"] for uop in node.uops]
                    for node in lowering.program.graph.fu_nodes()} == \
                {name: [count] for name, count in lowering.firings.items()}


@needs_suite
def test_configuration_words_and_constants():
    case = {"args": {"a": 2, "b": 28, "base": -44}}
    lowering = lower_graph(suite_graph("simple", "nostream"), case, FABRIC)
    words = lowering.program.memories
    assert decode_config(words["v4"][0]) == {"op": "SGT", "pred": False, "cmp": "SLT",
                                             "slots": ("edge", "hold", "edge"), "drop": (1,)}
    assert words["v4"] == {0: words["v4"][0], 2: 28}                  # b, held by the compare
    assert decode_config(words["v0"][0])["slots"] == ("edge", "const", "edge")
    assert words["v0"][2] == 2                                           # a, the counter's init
    assert decode_config(words["v2"][0])["op"] == "CARRY" and words["v2"][2] == 0xFFFF_FFD4  # -44
    assert words["v3"][2] == 1 and decode_config(words["v3"][0])["slots"][1] == "hold"
    stream = lower_graph(suite_graph("simple", "stream"), case, FABRIC).program.memories
    assert decode_config(stream["v2"][0]) == {"op": "STREAM", "pred": False, "cmp": "SGT",
                                              "slots": ("const", "const", "const"), "drop": ()}
    assert {k: v for k, v in stream["v2"].items() if k} == {1: 2, 2: 28, 3: 1}


def test_unused_ports_are_dropped_and_sinks_become_host_ports():
    b = Builder("flags")
    _, flag = b.stream(b.scalar("n", hold=False), b.const(0), b.hold(-1), cmp="SGT", pred=False)
    b.sink("flags", flag)
    lowering = lower_graph(b.build(), {"args": {"n": 3}, "expect": {"flags": [0, 0, 0, 1]}}, FABRIC)
    (node,) = lowering.program.graph.fu_nodes()
    assert decode_config(lowering.program.memories[node.name][0])["drop"] == (0,)   # the index port
    assert lowering.program.expected == {"out0": [0, 0, 0, 1]} and lowering.outputs == {"flags": "out0"}
    assert lowering.program.memories[node.name][3] == MASK                         # the step, -1


def test_the_reference_is_the_case_not_the_model():
    lowering = lower_graph(maxof_program(), {"args": {"x": 3, "y": 9, "k": 1}, "expect": {"max": [4]}},
                           FABRIC)
    assert lowering.program.expected == {"out0": [4]}        # wrong on purpose: the run must fail
    with pytest.raises(LoweringError, match=r"no expected tokens for SINK 'max'"):
        lower_graph(maxof_program(), {"args": {"x": 3, "y": 9, "k": 1}}, FABRIC)
    with pytest.raises(LoweringError, match=r"expect names \['maximum'\], which are neither arrays nor SINK"):
        lower_graph(maxof_program(), {"args": {"x": 3, "y": 9, "k": 1},
                                      "expect": {"max": [9], "maximum": [9]}}, FABRIC)


def test_lowering_errors_name_the_node():
    graph = maxof_program()
    graph.nodes["copy"].inputs[0] = Input("edge", source="after", hold=True)
    with pytest.raises(LoweringError, match=r"node 'copy' \(ID\), input 0 \(after.o0 \(hold\)\): a held "
                                            r"edge slot"):
        lower_graph(graph, maxof_case(1, 2), FABRIC)
    alu_only = parse_fabric({"rows": 1, "cols": 1, "tiles": ["alu"]})
    with pytest.raises(LoweringError, match="the fabric has no pe tiles"):
        lower_graph(maxof_program(), maxof_case(1, 2), alu_only)


def test_leftover_tokens_are_refused():
    b = Builder("unsteered")
    decider = b.sgt(b.const(1), b.const(2), name="cmp")
    b.sink("out", b.merge(decider, b.const(5), b.const(6), name="pick"))   # leaves the 5 behind
    with pytest.raises(LoweringError, match=r"leaves tokens behind on this case \(pick.i1 holds 1"):
        lower_graph(b.build(), {"expect": {"out": [6]}}, FABRIC)


@needs_suite
def test_a_graph_too_big_for_the_fabric_says_so():
    small = parse_fabric({"rows": 2, "cols": 3, "tiles": ["pe pe pe"] * 2})
    lowering = lower_graph(suite_graph("simple", "nostream"), suite_cases("simple")[0], small)
    with pytest.raises(PlaceError, match=r"7 unpinned pe node\(s\) need a pe tile but only 6"):
        compile_lowering(lowering, small)


def test_re_placing_stops_once_every_try_left_many_links_shared(monkeypatch):
    """A pin moves one operator: after HOPELESS_AFTER tries that each left more than
    HOPELESS_LINKS links shared, compile_lowering gives up with the first error instead of
    spending all its attempts; tries that came close go on."""
    import rsn.program
    from ripple_core import lower
    from rsn.route import RouteError

    lowering = lower_graph(clamped_sum_program(), clamped_sum_case(0, 5, 2), FABRIC)
    for shared, tries in ((lower.HOPELESS_LINKS + 1, lower.HOPELESS_AFTER), (lower.HOPELESS_LINKS, 10)):
        calls = []

        def failing(program, spec, *, seed, attempts, shared=shared, calls=calls):
            calls.append(seed)
            raise RouteError(f"try {len(calls)}", links=[((0, 0), 1)] * shared)
        monkeypatch.setattr(rsn.program, "compile_program", failing)
        with pytest.raises(RouteError, match="^try 1$"):
            compile_lowering(lowering, FABRIC, attempts=10)
        assert len(calls) == tries, shared


# --- memory: LOAD and STORE on a PE's bank ----------------------------------------------------

@needs_suite
def test_memory_nodes_get_their_array_in_their_bank():
    """dmv case 2: A (6 words) at 0, B (3) at 6, Z (2) at 9. Each LOAD/STORE PE's origin is its
    array's base, its bank is preloaded through the window, and the program reads back the
    status of every memory PE and Z, the array the STORE writes, against the case's expect."""
    case = suite_cases("dmv")[2]
    assert {name: len(words) for name, words in case["mem"].items()} == {"A": 6, "B": 3, "Z": 2}
    lowering = lower_graph(suite_graph("dmv", "stream"), case, FABRIC)
    assert lowering.arrays == {"v13": "Z", "v18": "A", "v19": "B"}
    words = lowering.program.memories
    for node, base in (("v18", 0), ("v19", 6), ("v13", 9)):
        array = case["mem"][lowering.arrays[node]]
        assert words[node][REG_ORIGIN] == base and words[node][REG_PAGE] == 0
        assert [words[node][MEM_WINDOW + k] for k in range(len(array))] == [v & MASK for v in array]
        assert MEM_WINDOW + len(array) not in words[node]
        assert words[node][1] == base                  # slot 0, the base, holds the pointer argument
    assert decode_config(words["v18"][0])["slots"] == ("hold", "edge", "hold")   # LOAD, no sync
    assert decode_config(words["v18"][0])["drop"] == (1,)                         # its done token
    assert decode_config(words["v13"][0])["slots"] == ("hold", "edge", "edge")   # STORE
    assert lowering.program.reads == {
        "v18": [(REG_STATUS, None)], "v19": [(REG_STATUS, None)],
        "v13": [(REG_STATUS, None), (MEM_WINDOW, None), (MEM_WINDOW + 1, None)]}
    status_load, status_store = 1 | 2 | 8, 1 | 2      # first state, hold slots armed, no fault
    assert lowering.program.expected_reads == {
        "v18": [status_load], "v19": [status_load],
        "v13": [status_store] + [v & MASK for v in case["expect"]["Z"]]}
    assert case["expect"]["Z"] != case["mem"]["Z"] and not lowering.array_problems


@needs_suite
def test_the_read_back_reference_is_the_case_not_the_model():
    case = copy.deepcopy(suite_cases("nn-relu")[1])
    case["expect"]["dest"][0] += 1
    lowering = lower_graph(suite_graph("nn-relu", "stream"), case, FABRIC)
    (store,) = [node for node, array in lowering.arrays.items() if array == "dest"]
    assert lowering.program.expected_reads[store][1:] == [v & MASK for v in case["expect"]["dest"]]
    case["expect"]["src"][0] += 1           # a loaded array the fabric cannot change
    assert lower_graph(suite_graph("nn-relu", "stream"), case, FABRIC).array_problems == [
        "array src: the case expects it to change, but no STORE writes it in this case, so it keeps "
        "its initial contents"]


def test_read_back_words_and_the_fault_bit_are_checked():
    from ripple_core.check import fabric_problems

    case = scaled_sum_case([3, -4, 5], 3, 2)
    lowering = lower_graph(scaled_sum_program(), case, FABRIC)
    compiled = compile_lowering(lowering, FABRIC)
    tiles = compiled.routing.placement.tiles
    firings = {tiles[name]: count for name, count in lowering.firings.items() if count}
    good = dict(lowering.program.expected_reads)
    assert good == {"fetch": [1 | 2], "put": [1 | 2, 6, MASK - 7, 10, MASK, MASK]}
    assert fabric_problems(lowering, compiled, {"out0": [4]}, firings, good) == []
    assert fabric_problems(lowering, compiled, {"out0": [4]}, firings,
                           {**good, "put": [1 | 2, 6, 8, 10, MASK, MASK]}) == [
        "array B (bank of put) differs at 1 word(s), first word 1: got 8, expected 4294967288 (-8)"]
    assert fabric_problems(lowering, compiled, {"out0": [4]}, firings, {**good, "fetch": [1 | 2 | 16]}) == [
        "fetch (A): memory fault (status bit 4): a LOAD or STORE address fell outside its bank"]


def test_memory_shapes_private_banks_cannot_serve_are_refused():
    b = Builder("twice")
    index, _ = b.stream(b.const(0), b.const(2), b.const(1), cmp="SLT", pred=False)
    b.store(b.array("A"), index, b.hold(1), name="first")
    b.store(b.array("A"), index, b.hold(2), name="second")
    with pytest.raises(LoweringError, match=r"node 'second' \(STORE\) and node 'first' \(STORE\) both "
                                            r"access array 'A', which is stored to; a pe tile's memory bank "
                                            r"is private"):
        lower_graph(b.build(), {"mem": {"A": [1, 2]}, "expect": {"A": [2, 2]}}, FABRIC)
    b = Builder("computed")
    b.sink("out", b.load(b.add(b.array("A"), b.const(1)), b.const(0), name="fetch"))
    with pytest.raises(LoweringError, match=r"node 'fetch' \(LOAD\): its base is .*; on pe tiles a LOAD's "
                                            r"base must be an array's pointer argument with hold"):
        lower_graph(b.build(), {"mem": {"A": [1, 2]}, "expect": {"out": [2]}}, FABRIC)
    b = Builder("synced")
    b.store(b.array("A"), b.const(0), b.const(5), b.const(1), name="put")
    with pytest.raises(LoweringError, match=r"node 'put' \(STORE\): a STORE with a sync slot does not fit "
                                            r"in a PE \(a pe tile has 3 operand slots\); order it through an "
                                            r"ORDER"):
        lower_graph(b.build(), {"mem": {"A": [0]}, "expect": {"A": [5]}}, FABRIC)


@needs_suite
def test_banks_too_small_or_missing_say_which_field(tmp_path, capsys):
    graph, case = suite_graph("nn-vadd", "stream"), suite_cases("nn-vadd")[5]
    assert len(case["mem"]["src"]) == 50
    small = FABRIC.with_parameters("pe", mem_depth=32)
    with pytest.raises(LoweringError, match=r"array 'weight' has 50 words in this case, but a pe tile's "
                                            r"bank holds 32 \(\[pe\] mem_depth\); node 'v0' \(LOAD, %2\) "
                                            r"needs the whole array in its bank, so raise \[pe\] mem_depth "
                                            r"to at least 64"):
        lower_graph(graph, case, small)
    with pytest.raises(LoweringError, match=r"node 'v0' \(LOAD, %2\) needs a memory bank, but the fabric's "
                                            r"pe tiles have none \(\[pe\] mem_depth = 0\); set mem_depth"):
        lower_graph(graph, case, FABRIC.with_parameters("pe", mem_depth=0))
    for value in (1, 48, 4096, -2, True):
        with pytest.raises(FabricError, match=rf"x.toml: \[pe\]: mem_depth={value!r} is not allowed; use 0 "
                                              rf"\(pe tiles without a memory bank\) or a power of two from "
                                              rf"2 to 2048"):
            parse_fabric({"rows": 1, "cols": 1, "tiles": ["pe"], "pe": {"mem_depth": value}}, "x.toml")
    fabric = (Path(__file__).resolve().parents[2] / "examples" / "fabrics" / "ripple.toml").read_text()
    bankless = tmp_path / "bankless.toml"
    bankless.write_text(fabric.replace("mem_depth = 64", "mem_depth = 0"))
    argv = ["run", str(SUITE / "nn-relu.riptide.json"), "--vectors", str(SUITE / "nn-relu.vectors.json"),
            "--sim", "rtl", "--fabric", str(bankless)]
    assert main(argv) == 2
    assert "case 0: nn_relu: node 'v4' (LOAD, %1) needs a memory bank, but the fabric's pe tiles have none " \
           "([pe] mem_depth = 0)" in capsys.readouterr().err


@needs_suite
def test_a_bank_word_wider_than_the_pe_is_refused():
    """A preloaded array travels to the bank as 32-bit words; a wider value is refused, not cut."""
    graph, case = suite_graph("nn-vadd", "stream"), copy.deepcopy(suite_cases("nn-vadd")[5])
    case["mem"]["weight"][3] = 1 << 32
    with pytest.raises(LoweringError, match=r"^nn_vadd: array 'weight' word 3: 4294967296 does not fit a "
                                            r"dataflow word of 32 bits; use an integer -2147483648\.\."
                                            r"4294967295"):
        lower_graph(graph, case, FABRIC)
    case["mem"]["weight"][3] = (1 << 32) - 1                # the word -1, as the boundary
    lowered = lower_graph(graph, case, FABRIC)
    bank = next(unit for unit, array in lowered.arrays.items() if array == "weight")
    assert lowered.program.memories[bank][MEM_WINDOW + 3] == MASK


# --- the fabric's golden model --------------------------------------------------------------

def _programs(seed: int):
    """Every (label, graph, case) of this file's references."""
    rng = random.Random(seed)
    runs = []
    for kernel in NO_MEMORY_KERNELS:
        for variant in VARIANTS:
            graph = suite_graph(kernel, variant)
            exported = export_result(graph)
            for k, case in enumerate(suite_cases(kernel)):
                runs.append((f"{kernel}/{variant} case {k}", graph, case))
                runs.append((f"{kernel}/{variant} case {k} exported", exported,
                             {**case, "expect": {"result": [kernel_sum(kernel, case["args"])]}}))
    for kernel in MEMORY_KERNELS:
        for variant in VARIANTS:
            graph = suite_graph(kernel, variant)
            for k, case in enumerate(suite_cases(kernel)):
                runs.append((f"{kernel}/{variant} case {k}", graph, case))
    for _ in range(2):
        n = rng.randint(0, 12)
        runs.append((f"scaled_sum seed {seed}", scaled_sum_program(),
                     scaled_sum_case([rng.randint(-2**31, 2**31 - 1) for _ in range(n)], n,
                                     rng.randint(-5, 5), tail=rng.randint(0, 3))))
        a = rng.randint(-20, 20)
        runs.append((f"clamped_sum seed {seed}", clamped_sum_program(),
                     clamped_sum_case(a, a + rng.randint(1, 20), rng.randint(-25, 25))))
        runs.append((f"maxof seed {seed}", maxof_program(),
                     maxof_case(rng.randint(-2**31, 2**31 - 1), rng.randint(-2**31, 2**31 - 1),
                                rng.randint(-2**31, 2**31 - 1))))
    runs += _ripple_programs(rng, seed)
    return runs


def _ripple_programs(rng: random.Random, seed: int):
    """Programs with Ripple's operators: a self-pushing task on a spill queue (queue, arb, task),
    an ``async`` task that runs one invocation at a time (its finish token returns the credit),
    atomic increments that contend for a few keys (LOCK, LDST), and Ripple BFS (all of them)."""
    runs = []
    nodes = rng.randint(12, 40)
    runs.append((f"tree_walk {nodes} seed {seed}", tree_walk(nodes, depth=2), tree_case(nodes)))
    nodes, step = rng.randint(8, 30), rng.randint(1, 4)
    runs.append((f"serial_walk {nodes} step {step} seed {seed}", serial_walk(nodes, step),
                 serial_case(nodes, step)))
    keys = [rng.randrange(3) for _ in range(rng.randint(10, 30))]
    runs.append((f"histogram seed {seed}", histogram(), histogram_case(keys, 3)))
    row, col = random_csr(rng.randint(8, 16), 3, rng.randrange(2**31))
    while len(col) > FABRIC.parameters("pe").mem_depth:
        row, col = random_csr(len(row) - 2, 3, rng.randrange(2**31))
    runs.append((f"ripple_bfs {len(row) - 1} vertices seed {seed}", ripple_bfs(depth=2),
                 {"mem": bfs_memory(row, col, ordered=False), "expect": {"visited": reachable(row, col)}}))
    return runs


def _check(label, lowering, compiled, outputs, firings, reads):
    assert not lowering.array_problems, label
    for port, tokens in lowering.program.expected.items():
        assert outputs.get(port, []) == tokens, f"{label}: host port {port}"
    assert reads == lowering.program.expected_reads, f"{label}: status and arrays read back"
    # Every program here fires the same counts under any schedule, open counts or not (open
    # ones give a tile to units that never fire: their zeros are left out on both sides).
    tiles = compiled.routing.placement.tiles
    assert {name: firings[tiles[name]] for name in lowering.program.graph.nodes if name in tiles
            and not lowering.program.graph.nodes[name].is_host and firings[tiles[name]]} == \
        {name: count for name, count in lowering.firings.items() if count}, f"{label}: PE firings"


# --- the fabric's golden model and the Verilated fabric ----------------------------------------

@needs_suite
@pytest.mark.verilator
@pytest.mark.long(0)
def test_every_suite_case_on_the_fabric_model_and_the_rtl():
    """Every case of the ten suite graphs (the graphs without memory also with their result
    exported) and the builder programs, each compiled once (the cases of a graph share its
    placement, placed with the base seed): first on the fabric's golden model,
    then all in one simulation of the one fabric build, each under a random stall profile. Both
    are checked on their own: host outputs, per-PE firings, the memory PEs' status and STOREd
    arrays. Some also run without stalls (:func:`_predicted`), and there the cycle model's
    counter must equal the fabric's."""
    from rivulet.sim.fabric_run import run_many_on_rtl

    (seed,) = seeds_for("ripple-lower-rtl", count=1)
    rng = random.Random(seed)
    labels, lowerings, compiled_programs, profiles, seeds = [], [], [], [], []
    for label, graph, case in _programs(seed):
        lowering = lower_graph(graph, case, FABRIC, name=label.replace(" ", "_").replace("/", "-"))
        run_seed = rng.randrange(2**31)
        compiled = compile_lowering(lowering, FABRIC, seed=seed)     # one placement per graph
        fabric_model = FabricModel(FABRIC)
        result = fabric_model.run(compiled.image, lowering.program.host_inputs)
        assert result.done, f"{label}: the fabric model did not finish"
        _check(f"{label} on the fabric model", lowering, compiled, result.outputs, result.firings,
               model_register_reads(fabric_model, compiled))
        for profile in [rng.choice(list(PROFILES))] + (["no_stall"] if _predicted(label) else []):
            labels.append(label)
            lowerings.append(lowering)
            compiled_programs.append(compiled)
            profiles.append(profile)
            seeds.append(run_seed)
    print(f"ripple runs (seed={seed}):", list(zip(labels, profiles, seeds, strict=True)))
    results = run_many_on_rtl(compiled_programs, profiles=profiles, seeds=seeds, case="ripple-lower-rtl",
                              extra_reads=[register_reads(compiled) for compiled in compiled_programs])
    predicted = 0
    for label, lowering, compiled, result, profile, run_seed in zip(
            labels, lowerings, compiled_programs, results, profiles, seeds, strict=True):
        _check(f"{label} profile={profile} seed={run_seed}", lowering, compiled, result.outputs,
               result.firings, split_register_reads(compiled, result.extra))
        assert result.done_cycle is not None and result.cycles > lowering.model.cycles
        if profile == "no_stall":       # the cycle model times runs without host stalls, exactly
            assert predict_cycles(compiled).cycles == result.cycles, f"{label}: cycle model"
            predicted += 1
    assert predicted >= 17, predicted


def _predicted(label: str) -> bool:
    """The runs whose counter the cycle model must predict (a no-stall copy of each joins the
    simulation): the two first cases of every graph with memory (the shortest, 3 to 5 steps,
    whose image is still crossing the control chain when their units finish, among them), one
    graph with its result on a host port, and every program with Ripple's operators."""
    return (label.startswith(MEMORY_KERNELS) and label.endswith(("case 0", "case 1"))
            or label == "simple/nostream case 1 exported"
            or label.startswith(("tree_walk", "serial_walk", "histogram", "ripple_bfs")))


@needs_suite
@pytest.mark.verilator
def test_rivulet_run_sim_both_on_a_suite_graph(capsys):
    (seed,) = seeds_for("ripple-cli-rtl", count=1)
    print(f"rivulet run --sim both, seed={seed}")
    argv = ["run", str(SUITE / "nn-relu.riptide.nostream.json"), "--vectors",
            str(SUITE / "nn-relu.vectors.json"), "--sim", "both", "--seed", str(seed % 10_000)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "all 6 cases pass on the RTL and on the fabric's golden model" in out
    assert out.count("= model") == 6
    assert out.count("= expect") == 5           # case 0 has size 0: its STORE never fires


def test_a_fabric_run_with_other_firings_or_outputs_fails():
    """The comparison the CLI and the tests make can fail: firings and outputs are both checked."""
    from ripple_core.check import fabric_problems

    lowering = lower_graph(maxof_program(), maxof_case(3, 9), FABRIC)
    compiled = compile_lowering(lowering, FABRIC)
    tiles = compiled.routing.placement.tiles
    firings = {tiles[name]: count for name, count in lowering.firings.items() if count}
    assert fabric_problems(lowering, compiled, {"out0": [9]}, firings) == []
    firings[tiles["pick"]] += 1
    problems = fabric_problems(lowering, compiled, {"out0": [3]}, firings)
    assert problems[0] == "host port out0 differs at token 0: got 3, expected 9 (1 vs 1 tokens)"
    assert problems[1].startswith("PE firings differ from the golden model's: pick on")


def test_self_pushing_task_without_spill_is_refused_naming_its_queue():
    """Ripple's rule, checked before anything is generated: a task on a push cycle needs a spill
    queue. The golden model shows the deadlock the rule prevents, and the spill version lowers."""
    from ripple_core.interp import DeadlockError, run

    case = tree_case(30)
    with pytest.raises(LoweringError, match=r"tree-walk: queue 'walk.q' \(depth 2\) has no spill, but its "
                                            r"task is on a push cycle \(walk -> walk\).*spill=True"):
        lower_graph(tree_walk(30, spill=False), case, FABRIC)
    with pytest.raises(DeadlockError, match=r"queue 'walk.q' \(depth 2\) full"):
        run(tree_walk(30, spill=False), memory=case["mem"], depth=2)
    lowering = lower_graph(tree_walk(30), case, FABRIC)
    queue = lowering.program.memories["walk.q"]
    assert queue[fu_pe.REG_QUEUE_DEPTH] == 2 and decode_config(queue[REG_CONFIG])["pred"]


def test_ripple_units_fuse_sites_and_copy_read_only_arrays():
    """ACQUIRE and RELEASE share a LOCK PE, the LOAD and STORE of ``visited`` an LDST PE (slots and
    ports as docs/ripple.md lists them), and ``row``, read by two LOADs, is in both their banks."""
    row, col = random_csr(10, 3, 4)
    lowering = lower_graph(ripple_bfs(depth=2), bfs_case(row, col, ordered=False), FABRIC)
    units = lowering.units
    (lock,) = [name for name, nodes in units.items() if len(nodes) == 2 and "acquire" in name]
    (ldst,) = [name for name, nodes in units.items() if len(nodes) == 2 and "store" in name]
    assert decode_config(lowering.program.memories[lock][REG_CONFIG])["op"] == "LOCK"
    assert decode_config(lowering.program.memories[ldst][REG_CONFIG])["op"] == "LDST"
    assert lowering.arrays[ldst] == "visited"
    assert sorted(array for array in lowering.arrays.values()) == ["col", "row", "row", "visited"]
    assert lowering.firings[lock] == 2 * len(col)       # one acquire and one release per edge
    streams = {(edge.source, tuple(edge.sinks)) for edge in lowering.program.graph.edges}
    # the acquired address goes to the load site (LDST slot 0) and the release site (LOCK slot 1)
    assert any(source == (lock, 0) and (ldst, 0) in sinks and (lock, 1) in sinks
               for source, sinks in streams), streams


def test_a_fabric_without_ripple_ops_refuses_their_graphs():
    plain = FABRIC.with_parameters("pe", ripple_ops=False)
    with pytest.raises(LoweringError, match=r"tree-walk: node 'walk.arb' \(ARB\) needs a pe tile with "
                                            r"Ripple's operators \(ARB\), but the fabric is built "
                                            r"without them \(\[pe\] ripple_ops = false\)"):
        lower_graph(tree_walk(8), tree_case(8), plain)
    with pytest.raises(FabricError, match=r"x.toml: \[pe\]: ripple_ops=1 is not allowed; use true"):
        parse_fabric({"rows": 1, "cols": 1, "tiles": ["pe"], "pe": {"ripple_ops": 1}}, "x.toml")


def test_ripple_bfs_example_runs_on_the_fabric_model(capsys):
    example = Path(__file__).resolve().parents[2] / "examples" / "ripple_bfs.py"
    fabric = Path(__file__).resolve().parents[2] / "examples" / "fabrics" / "ripple.toml"
    assert main(["run", str(example), "--fabric", str(fabric), "--sim", "model"]) == 0
    out = capsys.readouterr().out
    assert "register reads equal" in out and "visit.q" in out and "acquire6+release13" in out
