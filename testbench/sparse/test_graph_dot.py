"""The DOT reader on the constructs SAM's files use and a few a hand edit brings, and the value
forms of crddrop / crdhold (expected streams written by hand from their rules)."""

import pytest

from samflow.graph import GraphError
from samflow.graph.dot import parse_dot
from samflow.graph.valued import drop_zero_values, hold_values
from samflow.models import ModelError


def test_reads_nodes_edges_and_graph_attributes():
    graph = parse_dot('''
        /* a block comment */
        digraph SAM {
            comment="x=s0,b=d0"          // a line comment
            # a preprocessor-style comment line
            3 [type="fiberlookup" label="Scan \\"b\\"\\ndense"];
            3 [index=i, mode=0]
            a -> b -> c [type=crd comment="in-i"]
            edge [type=val]
            c -> 3
        }''', "g.gv")
    assert graph.attrs == {"comment": "x=s0,b=d0"}
    assert graph.nodes["3"].attrs == {"type": "fiberlookup", "label": 'Scan "b"\\ndense', "index": "i",
                                      "mode": "0"}
    assert [(e.src, e.dst, e.attrs) for e in graph.edges] == [
        ("a", "b", {"type": "crd", "comment": "in-i"}), ("b", "c", {"type": "crd", "comment": "in-i"}),
        ("c", "3", {"type": "val"})]
    assert [n for n in graph.nodes] == ["3", "a", "b", "c"]
    assert graph.edges[2].line == 10


def test_a_label_may_span_lines():
    graph = parse_dot('digraph { 3 [label="Add\nsubtract" type=add]\n 4 [type=mul] }')
    assert graph.nodes["3"].attrs["label"] == "Add\nsubtract"
    assert graph.nodes["4"].line == 3


@pytest.mark.parametrize("text, message", [
    ("graph { a -- b }", "g.gv:1: a SAM graph is a 'digraph', not 'graph'"),
    ("digraph { a -- b }", "g.gv:1: '--' is an undirected edge"),
    ("digraph { subgraph s { a } }", "subgraphs are not part of SAM's graphs"),
    ("digraph { a:n -> b }", "ports and string concatenation are not part of SAM's graphs"),
    ("digraph {\n a [type=]\n}", "g.gv:2: expected a value for attribute 'type', found ']'"),
    ("digraph { a -> b ", "expected a statement, found 'the end of the file'"),
    ("digraph { a } b", "text after the graph's closing '}'"),
    ('digraph { a [label="open] }', "unexpected character '\"'"),
])
def test_malformed_files_are_refused_with_the_line(text, message):
    with pytest.raises(GraphError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_dot(text, "g.gv")


def test_drop_zero_values_removes_zero_positions_and_keeps_stops():
    out = drop_zero_values([0, 1, 2, 3, "S0", "D"], [5, 0, 0, -2, "S0", "D"])
    assert out == {"outer_crd": [0, 3, "S0", "D"], "inner_crd": [5, -2, "S0", "D"]}
    assert drop_zero_values([0, 1, "S0", "D"], [0, 0, "S0", "D"]) == {"outer_crd": ["S0", "D"],
                                                                        "inner_crd": ["S0", "D"]}


def test_hold_values_passes_aligned_streams():
    assert hold_values([2, 5, "S0", "D"], [7, 8, "S0", "D"]) == {"outer_crd": [2, 5, "S0", "D"],
                                                                 "inner_crd": [7, 8, "S0", "D"]}


@pytest.mark.parametrize("crds, vals", [([0, 1, "S0", "D"], [5, "S0", "D"]),
                                        ([0, 1, "S0", "D"], [5, 6, "S1", "D"]),
                                        ([0, "S0", "D"], ["S0", 4, "D"])])
def test_value_forms_refuse_streams_that_do_not_line_up(crds, vals):
    with pytest.raises(ModelError):
        drop_zero_values(crds, vals)
    with pytest.raises(ModelError):
        hold_values(crds, vals)
