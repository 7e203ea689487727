"""The RipTide JSON exporter: every peer-suite graph and every hand-built program survives an
export and a re-import unchanged and runs the same on the golden model; what the format cannot
say is refused, naming the node; the extensions stay optional for the importer."""

import json

import pytest

from ripple_core import programs
from ripple_core.builder import Builder
from ripple_core.export import dumps, graph_to_riptide, write_graph
from ripple_core.graph import Graph, GraphError, const, edge
from ripple_core.interp import run
from ripple_core.riptide import RiptideFormatError, load_graph, load_vectors, parse_graph, run_case

from .test_riptide import KERNELS, SUITE, VARIANTS, graph_path, needs_suite


def round_trip(graph: Graph, **options) -> Graph:
    """Export, through the JSON text, and import again."""
    return parse_graph(json.loads(dumps(graph_to_riptide(graph, **options))), "<exported>")


def same_graph(a: Graph, b: Graph):
    assert b.name == a.name
    assert list(b.nodes) == list(a.nodes)          # same names, same order
    for name, node in a.nodes.items():
        assert b.nodes[name] == node, name
    assert b.scalars == a.scalars
    assert list(b.arrays.items()) == list(a.arrays.items())
    assert b == a


@needs_suite
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_suite_graph_round_trips_and_every_case_still_passes(kernel, variant):
    path = graph_path(kernel, variant)
    original = load_graph(path)
    document = json.loads(path.read_text())
    order = [argument["name"] for argument in document["function"]["args"]]
    exported = graph_to_riptide(original, return_type=document["function"]["return_type"], arg_order=order)
    assert exported["function"]["args"] == [{"name": a["name"], "type": a["type"], "noalias": False}
                                            for a in document["function"]["args"]]
    assert exported["function"]["return_type"] == document["function"]["return_type"]
    assert all("node" not in vertex for vertex in exported["vertices"])      # v<ID> names: the suite's own
    assert [v["op"] for v in exported["vertices"]] == [v["op"] for v in document["vertices"]]
    again = parse_graph(json.loads(dumps(exported)))
    same_graph(original, again)
    same_graph(original, round_trip(again))        # and a second trip changes nothing either
    for k, case in enumerate(load_vectors(SUITE / f"{kernel}.vectors.json")):
        outcome = run_case(again, case, variant=variant, depth=None, mem_latency=1)
        assert outcome.passed, (k, outcome.problems)
        assert outcome.cycles == case["reference_steps"][variant], k


def _programs():
    row, col = programs.random_csr(24, 3, seed=7)
    matrix, vector = [[3, -1, 2], [0, 5, -4]], [7, -2, 1]
    keys = [3, 1, 3, 0, 2, 3, 1]
    return [
        ("ordered_bfs", programs.ordered_bfs(), programs.bfs_case(row, col, ordered=True)),
        ("ripple_bfs", programs.ripple_bfs(), programs.bfs_case(row, col, ordered=False)),
        ("ripple_bfs_no_spill", programs.ripple_bfs(spill=False, depth=64),
         programs.bfs_case(row, col, ordered=False)),
        ("dmv_ordered", programs.dmv(ripple=False), programs.dmv_case(matrix, vector)),
        ("dmv_ripple", programs.dmv(ripple=True), programs.dmv_case(matrix, vector)),
        ("tree_walk", programs.tree_walk(11), programs.tree_case(11)),
        ("serial_walk", programs.serial_walk(14), programs.serial_case(14)),
        ("histogram", programs.histogram(), programs.histogram_case(keys, 4)),
        ("histogram_racy", programs.histogram(atomic=False), programs.histogram_case(keys, 4)),
    ]


PROGRAMS = _programs()


@pytest.mark.parametrize("name,graph,case", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_hand_built_program_round_trips_and_runs_the_same(name, graph, case):
    again = round_trip(graph)
    same_graph(graph, again)
    before = run(graph, case.get("args", {}), case["mem"])
    after = run(again, case.get("args", {}), case["mem"])
    assert (after.arrays, after.outputs, after.cycles, after.firings, after.leftovers) == \
        (before.arrays, before.outputs, before.cycles, before.firings, before.leftovers)
    if name != "histogram_racy":            # its increments race: no fixed expected counts
        got = {**after.arrays, **after.outputs}
        assert {key: got[key] for key in case["expect"]} == case["expect"]
        assert not after.leftovers


def test_ripple_extensions_are_written_as_documented():
    document = graph_to_riptide(programs.ripple_bfs(depth=3))
    by_node = {vertex["node"]: vertex for vertex in document["vertices"]}
    task, queue, arb = by_node["visit"], by_node["visit.q"], by_node["visit.arb"]
    assert (task["op"], task["width"], task["ind"]) == ("RIPPLE_CFG_OP_TASK", 1, True)
    assert (queue["op"], queue["width"]) == ("RIPPLE_CFG_OP_QUEUE", 1)
    assert queue["inputs"][0][0]["depth"] == 3 and queue["inputs"][0][0]["spill"] is True
    assert (arb["width"], arb["sources"]) == (1, 2)
    assert {vertex["op"] for vertex in document["vertices"]} >= {"MEM_CFG_OP_ACQUIRE", "MEM_CFG_OP_RELEASE"}
    sink = next(v for v in graph_to_riptide(programs.tree_walk(5))["vertices"] if v["op"].endswith("SINK"))
    assert sink["node"] == "done"


def test_labels_sized_arrays_and_renamed_vertices_survive():
    b = Builder("labels")
    total = b.add(b.scalar("x"), b.array("buf", size=6), name="v1")     # v1 at position 0
    b.sink("out", b.ident(total, name="v0"))
    graph = b.build()
    graph.nodes["v1"].label = "%sum"
    document = graph_to_riptide(graph)
    assert [v.get("node") for v in document["vertices"]] == ["v1", "v0", "out"]
    assert document["function"]["args"][1] == {"name": "buf", "type": "i32*", "noalias": False, "size": 6}
    assert document["vertices"][0]["name"] == "%sum"
    same_graph(graph, round_trip(graph))


def test_write_graph_writes_a_file_load_graph_reads(tmp_path):
    graph = programs.histogram()
    path = write_graph(graph, tmp_path / "histogram.json", return_type="i32")
    same_graph(graph, load_graph(path))
    assert json.loads(path.read_text())["function"]["return_type"] == "i32"


def _unknown_op() -> Graph:
    graph = Graph("bad")
    graph.add("n0", "ADD", [const(1), const(2)])
    graph.add("fancy", "ADD", [edge("n0"), const(2)], label="%f", saturate=True)
    return graph


@pytest.mark.parametrize("make,message", [
    (_unknown_op, "node 'fancy' (ADD, %f): attribute 'saturate' of ADD has no field in the RipTide JSON"),
    (lambda: _with(Graph("bad"), "x", "ADD", [const(1, port=3), const(2)]),
     "node 'x' (ADD), input 0: "),
    (lambda: _with(Graph("bad"), "y", "FROB", [const(1)]), "node 'y' (FROB): unknown operator 'FROB'"),
])
def test_what_the_format_cannot_say_is_refused_naming_the_node(make, message):
    with pytest.raises(GraphError) as refused:
        graph_to_riptide(make())
    assert message in str(refused.value)


def _with(graph: Graph, name, op, inputs) -> Graph:
    graph.add(name, op, inputs)
    return graph


def test_an_argument_order_that_moves_arrays_is_refused():
    graph = programs.dmv(ripple=False)
    with pytest.raises(GraphError, match="changes the order of the arrays"):
        graph_to_riptide(graph, arg_order=["m", "n", "x", "A", "y"])
    with pytest.raises(GraphError, match="must list each argument"):
        graph_to_riptide(graph, arg_order=["m", "A", "x", "y"])


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["vertices"][1].update(node="stream1"),
     "vertices[1]: node name 'stream1' is used by two vertices"),
    (lambda d: d["vertices"][0].update(node=""), "field 'node' '' is not a non-empty string"),
    (lambda d: d["vertices"][0]["inputs"][0][0].update(depth=0), "field 'depth' 0 is not an integer >= 1"),
    (lambda d: d["vertices"][0]["inputs"][0][0].update(spill="yes"), "field 'spill' is 'yes'"),
    (lambda d: d["function"]["args"][1].update(size=-1), "field 'size' -1 is not an integer >= 0"),
])
def test_importer_refuses_bad_extension_fields(mutate, message):
    document = graph_to_riptide(programs.histogram())
    mutate(document)
    with pytest.raises(RiptideFormatError) as refused:
        parse_graph(document, "h.json")
    assert message in str(refused.value)


def test_a_task_without_its_ind_field_is_refused():
    document = graph_to_riptide(programs.tree_walk(5))
    task = next(v for v in document["vertices"] if v["op"] == "RIPPLE_CFG_OP_TASK")
    del task["ind"]
    with pytest.raises(RiptideFormatError, match=r"t.json: node 'walk' \(TASK\): needs ind=True"):
        parse_graph(document, "t.json")
