"""Bad graphs and bad tensors are refused before anything runs, and the message names the node.

Each case takes one of our graphs (examples/sam/spmv_csr.gv, x = B c) and breaks one thing.
"""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

from samflow.graph import GraphError, check_graph, graph_from_text, run_graph

REPO = Path(__file__).resolve().parents[2]
SPMV = (REPO / "examples" / "sam" / "spmv_csr.gv").read_text()
ELEMADD = (REPO / "examples" / "sam" / "mat_elemadd_csr.gv").read_text()
WRITE_LINE = SPMV.splitlines().index('    11 -> 12 [label="val" type="val"]') + 1


def _edited(text: str, *edits) -> str:
    for old, new in edits:
        assert old in text, f"the test's edit does not apply: {old!r}"
        text = text.replace(old, new)
    return text


def _check(text: str):
    return check_graph(graph_from_text(text, "spmv.gv"))


def _tensors(n=8):
    rng = np.random.default_rng(3)
    matrix = scipy.sparse.random_array((n, n), density=0.3, rng=rng,
                                       data_sampler=lambda size: rng.integers(1, 9, size)).tocsr()
    return {"B": matrix.astype(np.int64), "c": rng.integers(0, 3, n).astype(np.int64)}


GRAPH_CASES = {
    "unknown node type": (
        [('type="mul"', 'type="mull"')], r"spmv.gv:\d+: node 10 \(Mul\): unknown node type 'mull'"),
    "edge without a stream type": (
        [('10 -> 11 [label="val" type="val"]', '10 -> 11 [label="val"]')],
        r"from node 10 \(Mul\) to node 11 \(Reduce\), has no stream type"),
    "edge with an unknown stream type": (
        [('10 -> 11 [label="val" type="val"]', '10 -> 11 [type="value"]')], r"stream type 'value'"),
    "joiner input without its port label": (
        [('6 -> 7 [label="crd_in-B" style=dashed type="crd" comment="in-B"]', '6 -> 7 [type="crd"]')],
        r"node 7 \(intersect j\): the crd edge 6 -> 7 \(line \d+\) does not say which side"),
    "joiner output naming no side": (
        [('comment="out-B"', 'comment="out-Q"')],
        r"node 7 \(intersect j\): .* does not name one of its sides"),
    "ALU missing an operand": (
        [('    9 -> 10 [label="val" type="val"]\n', '')],
        r"node 10 \(Mul\): nothing feeds its input in_val2"),
    "scanner missing its reference": (
        [('    0 -> 6 [label="ref" style=bold type="ref"]\n', '')],
        r"node 6 \(FiberLookup j: B1 compressed\): nothing feeds its input in_ref"),
    "root scanner fed an edge": (
        [('    0 -> 1 [', '    4 -> 0 [type="ref"]\n    0 -> 1 [')],
        r"node 0 \(FiberLookup i: B0 dense\): is a root scanner .* drop the edge"),
    "two edges into one port": (
        [('    11 -> 12 [label="val" type="val"]\n',
          '    11 -> 12 [type="val"]\n    10 -> 12 [type="val"]\n')],
        r"node 12 \(FiberWrite Vals: x\): two edges feed its port in_val"),
    "ALU with three operands": (
        [('    9 -> 10 [label="val" type="val"]\n', '    9 -> 10 [type="val"]\n    8 -> 10 [type="val"]\n')],
        r"node 10 \(Mul\): has 3 value inputs"),
    "scanner format disagreeing with the comment": (
        [('mode="1" format="compressed"', 'mode="1" format="dense"')],
        r"node 6 \(FiberLookup j: B1 compressed\): reads mode 1 as dense, but the graph comment makes it "
        r"compressed"),
    "tensor the comment does not declare": (
        [('type="arrayvals" tensor="c"', 'type="arrayvals" tensor="q"')],
        r"node 9 \(Array Vals: c\): names tensor 'q', which the graph comment does not declare"),
    "a format that is not one": (
        [('comment="x=d0,B=ds01,c=s0"', 'comment="x=d0,B=dx01,c=s0"')],
        r"tensor B's format 'dx01' is not a format"),
    "no format comment": ([('    comment="x=d0,B=ds01,c=s0"\n', '')], r"the graph has no comment"),
    "a cycle": (
        [('    8 -> 10 [label="val" type="val"]\n', '    11 -> 10 [label="val" type="val"]\n')],
        r"the graph has a cycle \(node 1[01] \((Mul|Reduce)\) -> node 1[01] \((Mul|Reduce)\) -> "),
    "an output without its values' writer": (
        [('    11 -> 12 [label="val" type="val"]\n', ''), ('    12 [comment', '    // 12 [comment')],
        r"tensor x \(d0\) needs one fiberwrite per mode and one for its values"),
    "a node that only appears in an edge": (
        [('    11 -> 12 [label="val" type="val"]\n', '    99 -> 12 [type="val"]\n')],
        r"spmv.gv:\d+: node 99 \(no label\) has no type attribute"),
    "a syntax error": (
        [('    11 -> 12 [label="val" type="val"]\n', '    11 -> 12 [label="val" type=]\n')],
        rf"spmv.gv:{WRITE_LINE}: expected a value for attribute 'type', found ']'"),
    "an undirected edge": ([('11 -> 12', '11 -- 12')], rf"spmv.gv:{WRITE_LINE}: '--' is an undirected edge"),
}


@pytest.mark.parametrize("edits, message", GRAPH_CASES.values(), ids=GRAPH_CASES.keys())
def test_bad_graph_is_refused(edits, message):
    with pytest.raises(GraphError, match=message):
        _check(_edited(SPMV, *edits))


def test_the_unbroken_graph_passes_the_same_checks():
    plan = _check(SPMV)
    assert plan.order.index("10") < plan.order.index("11") < plan.order.index("12")


TENSOR_CASES = {
    "a vector for a matrix": (
        lambda t: {**t, "B": np.arange(8)}, r"tensor B: the graph declares it 'ds01', a matrix, but was "
                                            r"given a vector of shape \(8,\)"),
    "a scalar for a vector": (
        lambda t: {**t, "c": 3}, r"tensor c: .* 's0', a vector, but was given a scalar"),
    "float values": (lambda t: {**t, "c": t["c"] * 0.5}, r"tensor c holds float64 values"),
    "shapes that disagree": (
        lambda t: {**t, "c": np.ones(10, dtype=np.int64)},
        r"node 6 \(FiberLookup j: B1 compressed\): index j is 8 long here \(B's mode 1\) but 10 in "
        r"c's mode 0"),
    "a missing tensor": (lambda t: {"B": t["B"]}, r"no value given for input tensor\(s\) c"),
    "an output given as input": (lambda t: {**t, "x": t["c"]}, r"does not read: x \(an output\)"),
    "a tensor not in the graph": (lambda t: {**t, "y": 1}, r"does not read: y \(not in the graph\)"),
}


@pytest.mark.parametrize("change, message", TENSOR_CASES.values(), ids=TENSOR_CASES.keys())
def test_bad_tensors_are_refused(change, message):
    with pytest.raises(GraphError, match=message):
        run_graph(graph_from_text(SPMV, "spmv.gv"), change(_tensors()))


def test_a_model_refusing_its_streams_names_the_node():
    # Array 8 reads c's values with B's references, past the end of c's array.
    text = _edited(SPMV, ('type="arrayvals" tensor="B"', 'type="arrayvals" tensor="c"'))
    tensors = {"B": scipy.sparse.csr_array(np.ones((8, 8), dtype=np.int64)),
               "c": np.arange(8, dtype=np.int64) + 1}
    with pytest.raises(GraphError, match=r"node 8 \(Array Vals: B\) refused its input streams: in_load_addr "
                                         r"token \d+ \d+: load address outside the array"):
        run_graph(graph_from_text(text, "spmv.gv"), tensors)


def test_writers_fed_empty_fibers_without_a_crddrop_are_refused():
    # The elementwise add with its writers on the unions directly: a row empty in both matrices
    # leaves an empty j fiber, which SAM's writer gives no segment.
    text = _edited(
        ELEMADD,
        ('9 -> 10 [label="crd_outer-i" style=dashed type="crd" comment="outer-i"]', '2 -> 10 [type="crd"]'),
        ('9 -> 11 [label="crd_inner-j" style=dashed type="crd" comment="inner-j"]', '5 -> 11 [type="crd"]'))
    matrix = np.eye(4, dtype=np.int64)
    matrix[2, 2] = 0
    tensors = {"B": scipy.sparse.csr_array(matrix), "C": scipy.sparse.csr_array(matrix)}
    with pytest.raises(GraphError, match=r"output X: node 11 \(FiberWrite j: X1 compressed\): wrote 3 fibers "
                                         r"under the 4 positions of the level above; .*crddrop"):
        run_graph(graph_from_text(text, "elemadd.gv"), tensors)
    assert np.array_equal(run_graph(graph_from_text(ELEMADD, "elemadd.gv"), tensors).outputs["X"].toarray(),
                          2 * matrix)


SPMM = (REPO / "examples" / "sam" / "spmm_gustavson.gv").read_text()

OTHER_CASES = {
    "crdhold input naming neither level": (
        SPMM, [('1 -> 14 [label="crd_i" style=dashed type="crd" comment="i"]',
                '1 -> 14 [type="crd" comment="q"]')],
        r"node 14 \(CrdHold i,k\): the crd 'q' edge 1 -> 14 \(line \d+\) names neither its outer level "
        r"'i' nor"),
    "crddrop output of the wrong kind": (
        ELEMADD, [('9 -> 11 [label="crd_inner-j" style=dashed type="crd"',
                   '9 -> 11 [label="crd_inner-j" type="val"')],
        r"node 9 \(CrdDrop i,j\): the val 'inner-j' edge 9 -> 11 .* carries val tokens; this port takes crd"),
    "accumulator of order 2": (
        SPMM, [('type="spaccumulator" order="1"', 'type="spaccumulator" order="2"')],
        r"node 16 \(SparseAccumulator 1 in0=j in1=i\): order 2 is not mapped"),
    "accumulator input without a label": (
        SPMM, [('15 -> 16 [label="crd_inner-j" style=dashed type="crd" comment="inner-j"]',
                '8 -> 16 [type="crd"]')],
        r"node 16 \(SparseAccumulator 1 in0=j in1=i\): the crd edge 8 -> 16 .* does not say which "
        r"coordinates"),
    "broadcast changing the stream kind": (
        SPMM, [('8 -> 9 [label="crd" style=dashed type="crd"]', '8 -> 9 [type="ref"]')],
        r"node 8 \(broadcast\): fans out a crd stream, but the ref edge 8 -> 9"),
    "a three-sided join": (
        ELEMADD, [('    0 -> 2 [label="ref_in-B" style=bold type="ref" comment="in-B"]\n',
                   '    0 -> 2 [label="ref_in-B" style=bold type="ref" comment="in-B"]\n'
                   '    0 -> 2 [type="crd" comment="in-D"]\n')],
        r"node 2 \(union i\): joins 3 sides \(B, D, C\); SAM's union takes two"),
    "a writer of an input tensor": (
        SPMM, [('type="fiberwrite" index="i" tensor="X"', 'type="fiberwrite" index="i" tensor="B"')],
        r"node 0 \(FiberLookup i: B0 compressed\): reads tensor B, which is written by a fiberwrite"),
}


@pytest.mark.parametrize("text, edits, message", OTHER_CASES.values(), ids=OTHER_CASES.keys())
def test_other_bad_graphs_are_refused(text, edits, message):
    with pytest.raises(GraphError, match=message):
        check_graph(graph_from_text(_edited(text, *edits), "g.gv"))
