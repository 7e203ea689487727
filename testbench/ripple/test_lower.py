# amaranth: UnusedElaboratable=no
"""Dataflow graphs on pe tiles: the lowering (token counts, configuration words, errors), the
fabric's golden model, and the Verilated fabric.

References, none taken from the RTL or from the model under test:

* the RipTide peer suite's cases (graphs without LOAD/STORE: simple and simple-mem, both
  variants): their ``expect`` (no host output) and, since the suite's C kernels loop
  ``b - a + 1`` times, the token counts and firings written as formulas of the loop count;
* the same suite graphs with their discarded return value exported to a host port (one STEER of
  the opposite polarity), against the C kernel's sum computed in Python;
* two programs written with the builder (clamped_sum: STREAM, SGT, SELECT, CARRY, STEER, ADD;
  maxof: SGT, STEER, MERGE, ORDER, ID, MUL), against their Python results.

On the RTL, per-PE firing counters must equal the golden model's firings: ordered dataflow fires
each operator equally often whatever the timing (random host back-pressure, other buffering).
"""

import copy
import random
from pathlib import Path

import pytest

from ripple_core.builder import Builder
from ripple_core.graph import Input, edge
from ripple_core.lower import LoweringError, compile_lowering, lower_graph
from ripple_core.riptide import load_graph, load_vectors
from rsn import checks
from rsn.checks import ProgramError
from rsn.fabric_spec import FabricError, load_fabric, parse_fabric
from rsn.fu_pe import decode_config
from rsn.graph import StreamGraph
from rsn.model import FabricModel
from rsn.place import PlaceError
from testbench.cli import main
from testbench.seeds import seeds_for
from testbench.streams import PROFILES

SUITE = Path(__file__).resolve().parents[3] / "shared" / "peer-suites" / "riptide"
FABRIC = load_fabric(Path(__file__).resolve().parents[2] / "examples" / "fabrics" / "ripple.toml")
NO_MEMORY_KERNELS = ("simple", "simple-mem")
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
    b = Builder("mem")
    b.sink("out", b.load(b.array("A"), b.const(0), name="fetch"))
    with pytest.raises(LoweringError, match=r"node 'fetch' \(LOAD\): LOAD is a memory operation .* "
                                            r"not on the RTL fabric yet"):
        lower_graph(b.build(), {"mem": {"A": [1]}, "expect": {"out": [1]}}, FABRIC)
    b = Builder("queued")
    (value,) = b.queue(b.const(1), depth=2, name="q")
    b.sink("out", value)
    with pytest.raises(LoweringError, match=r"node 'q' \(QUEUE\): QUEUE is a Ripple queue"):
        lower_graph(b.build(), {"expect": {"out": [1]}}, FABRIC)
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
def test_a_graph_with_memory_or_too_big_says_so(capsys):
    with pytest.raises(LoweringError, match=r"node .v\d+. \((LOAD|STORE)"):
        lower_graph(suite_graph("nn-relu", "stream"), suite_cases("nn-relu")[0], FABRIC)
    small = parse_fabric({"rows": 2, "cols": 3, "tiles": ["pe pe pe"] * 2})    # ripple.toml is 2x4
    lowering = lower_graph(suite_graph("simple", "nostream"), suite_cases("simple")[0], small)
    with pytest.raises(PlaceError, match=r"7 unpinned pe node\(s\) need a pe tile but only 6"):
        compile_lowering(lowering, small)
    argv = ["run", str(SUITE / "nn-relu.riptide.json"), "--vectors", str(SUITE / "nn-relu.vectors.json")]
    assert main(argv + ["--sim", "rtl"]) == 2
    assert "LOAD is a memory operation (pe tiles have no memory port yet); it is not on the RTL fabric " \
           "yet, so this graph runs only on the golden model (--sim model)" in capsys.readouterr().err


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
    for _ in range(2):
        a = rng.randint(-20, 20)
        runs.append((f"clamped_sum seed {seed}", clamped_sum_program(),
                     clamped_sum_case(a, a + rng.randint(1, 20), rng.randint(-25, 25))))
        runs.append((f"maxof seed {seed}", maxof_program(),
                     maxof_case(rng.randint(-2**31, 2**31 - 1), rng.randint(-2**31, 2**31 - 1),
                                rng.randint(-2**31, 2**31 - 1))))
    return runs


def _check(label, lowering, compiled, outputs, firings):
    assert not lowering.array_problems, label
    for port, tokens in lowering.program.expected.items():
        assert outputs.get(port, []) == tokens, f"{label}: host port {port}"
    tiles = compiled.routing.placement.tiles
    assert {name: firings[tiles[name]] for name in lowering.program.graph.nodes if name in tiles
            and not lowering.program.graph.nodes[name].is_host} == \
        {name: count for name, count in lowering.firings.items() if count}, f"{label}: PE firings"


@needs_suite
def test_fabric_golden_model_runs_every_lowered_case():
    for seed in seeds_for("ripple-lower-model", count=1):
        print(f"ripple lowering on the fabric model, seed={seed}")
        for label, graph, case in _programs(seed):
            lowering = lower_graph(graph, case, FABRIC, name=label.replace(" ", "_"))
            compiled = compile_lowering(lowering, FABRIC, seed=seed)
            result = FabricModel(FABRIC).run(compiled.image, lowering.program.host_inputs)
            assert result.done, label
            _check(label, lowering, compiled, result.outputs, result.firings)


# --- the Verilated fabric -------------------------------------------------------------------

@needs_suite
@pytest.mark.verilator
def test_rtl_runs_every_case_without_memory():
    """One fabric build, one simulation: every suite case without memory (both variants, plain and
    with the result exported) and the builder programs, each under a random stall profile."""
    from testbench.fabric_run import run_many_on_rtl

    (seed,) = seeds_for("ripple-lower-rtl", count=1)
    rng = random.Random(seed)
    labels, lowerings, compiled_programs, profiles, seeds = [], [], [], [], []
    for label, graph, case in _programs(seed):
        lowering = lower_graph(graph, case, FABRIC, name=label.replace(" ", "_").replace("/", "-"))
        run_seed = rng.randrange(2**31)
        labels.append(label)
        lowerings.append(lowering)
        compiled_programs.append(compile_lowering(lowering, FABRIC, seed=run_seed))
        profiles.append(rng.choice(list(PROFILES)))
        seeds.append(run_seed)
    print(f"ripple rtl runs (seed={seed}):", list(zip(labels, profiles, seeds, strict=True)))
    results = run_many_on_rtl(compiled_programs, profiles=profiles, seeds=seeds, case="ripple-lower-rtl")
    for label, lowering, compiled, result, profile, run_seed in zip(
            labels, lowerings, compiled_programs, results, profiles, seeds, strict=True):
        _check(f"{label} profile={profile} seed={run_seed}", lowering, compiled, result.outputs,
               result.firings)
        assert result.done_cycle is not None and result.cycles > lowering.model.cycles


@needs_suite
@pytest.mark.verilator
def test_rivulet_run_sim_both_on_a_suite_graph(capsys):
    (seed,) = seeds_for("ripple-cli-rtl", count=1)
    print(f"rivulet run --sim both, seed={seed}")
    argv = ["run", str(SUITE / "simple-mem.riptide.nostream.json"), "--vectors",
            str(SUITE / "simple-mem.vectors.json"), "--sim", "both", "--seed", str(seed % 10_000)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "all 6 cases pass on the RTL and on the fabric's golden model" in out
    assert out.count("= model") == 6


def test_a_fabric_run_with_other_firings_or_outputs_fails():
    """The comparison the CLI and the tests make can fail: firings and outputs are both checked."""
    from testbench.ripple_run import fabric_problems

    lowering = lower_graph(maxof_program(), maxof_case(3, 9), FABRIC)
    compiled = compile_lowering(lowering, FABRIC)
    tiles = compiled.routing.placement.tiles
    firings = {tiles[name]: count for name, count in lowering.firings.items() if count}
    assert fabric_problems(lowering, compiled, {"out0": [9]}, firings) == []
    firings[tiles["pick"]] += 1
    problems = fabric_problems(lowering, compiled, {"out0": [3]}, firings)
    assert problems[0].startswith("host port out0 differs at token 0: got [3], expected [9]")
    assert problems[1].startswith("PE firings differ from the golden model's: pick on")
