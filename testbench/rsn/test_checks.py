"""The static checks: token arithmetic, and one failing program per rule with its message."""

import copy
import dataclasses

import pytest

from rsn import checks
from rsn.checks import ProgramError, tokens_per_port
from rsn.fabric_spec import default_fabric, parse_fabric
from rsn.graph import Edge, GraphError, StreamGraph
from rsn.isa import MacMode, Precision
from rsn.place import Placement, place
from rsn.route import EdgeRoute, Hop, Routing, place_and_route, switch_uops

SPEC = default_fabric()         # 3x3: columns mem, mac, alu; in0/in1 west, out0/out1 east


def fabric(rows, cols, tiles, host_ports=(), failed_tiles=(), failed_links=()):
    return parse_fabric({
        "rows": rows, "cols": cols, "tiles": list(tiles),
        "host_ports": [{"name": name, "tile": [row, col], "side": side, "direction": direction}
                       for name, row, col, side, direction in host_ports],
        "failed_tiles": [list(tile) for tile in failed_tiles],
        "failed_links": [list(link) for link in failed_links]}, "test fabric")


def dot(rows, length, mode="DOT"):
    return {"mode": mode, "precision": "INT32", "length": length, "rows": rows}


def pipeline():
    """in0 -> (mem weights LOAD) mac DOT -> alu -> out0: a program every check accepts."""
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 12)
    graph.add_node("w", "mem", [{"start": 0, "stride": 1, "count_i": 4, "count_j": 1}], tile=(1, 0))
    graph.add_node("m", "mac", [{"mode": "LOAD", "precision": "INT32", "length": 4}, dot(3, 4)])
    graph.add_node("a", "alu", [{"beats": 3, "relu": 1, "shift": 2}])
    graph.add_host_out("y", "out0", 3)
    graph.connect("w", ("m", 1), 4)
    graph.connect("x", ("m", 0), 12)
    graph.connect("m", "a", 3)
    graph.connect("a", "y", 3)
    return graph


def test_a_good_program_passes_every_check():
    graph = pipeline()
    checks.check_program(SPEC, graph)
    routing = place_and_route(SPEC, graph)
    checks.check_routing(SPEC, graph, routing)
    assert routing.placement.tiles["w"] == (1, 0)


# --- token arithmetic -----------------------------------------------------------------------

@pytest.mark.parametrize("kind, uops, expected", [
    ("mem", [{"write": 0, "count_i": 3, "count_j": 4}], ([0], [12])),
    ("mem", [{"write": 1, "count_i": 5, "count_j": 2}, {"write": 0, "count_i": 7, "count_j": 1}],
     ([10], [7])),
    ("mac", [{"mode": "LOAD", "length": 8}], ([0, 8], [0])),
    ("mac", [{"length": 3}], ([0, 3], [0])),                      # a missing mode is LOAD (0)
    ("mac", [{"mode": MacMode.DOT, "length": 4, "rows": 3}], ([12, 0], [3])),
    ("mac", [{"mode": "DOT2", "length": 5, "rows": 2}], ([10, 10], [2])),
    ("mac", [{"mode": "LOAD", "length": 4}, {"mode": "DOT", "length": 4, "rows": 6}], ([24, 4], [6])),
    ("alu", [{"beats": 7}, {"beats": 2, "relu": 1}], ([9], [9])),
])
def test_tokens_per_port(kind, uops, expected):
    assert tokens_per_port(kind, uops) == expected


def test_tokens_per_port_refuses_host_kinds_and_bad_modes():
    with pytest.raises(ProgramError, match=r"kind 'host_in' has no micro-ops"):
        tokens_per_port("host_in", [])
    with pytest.raises(ProgramError, match=r"mac micro-op 1: mode 7 is not one of LOAD, DOT, DOT2"):
        tokens_per_port("mac", [{"mode": "LOAD", "length": 1}, {"mode": 7}])


# --- micro-ops ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind, uop, message", [
    ("mac", {"mode": "DOT3", "precision": "INT8", "length": 4, "rows": 1},
     r"node 'n' \(mac\) micro-op 1: field mode: 'DOT3' is not one of LOAD, DOT, DOT2"),
    ("mac", {"mode": "DOT", "precision": "INT16", "length": 4, "rows": 1},
     r"node 'n' \(mac\) micro-op 1: field precision: 'INT16' is not one of INT32, INT8"),
    ("mac", {"mode": "DOT", "precision": Precision.INT8, "length": 4, "rows": 0},
     r"node 'n' \(mac\) micro-op 1: rows is 0; counts must be at least 1"),
    ("mac", {"mode": "LOAD", "precision": "INT8", "length": 300},
     r"micro-op 1: LOAD length 300 exceeds the vector buffer \(\[mac\] depth 256\)"),
    ("alu", {"beats": 0}, r"node 'n' \(alu\) micro-op 1: beats is 0; counts must be at least 1"),
    ("alu", {"beats": 4, "shift": 40}, r"micro-op 1: field shift=40 does not fit 5 bits"),
    ("alu", {"beats": 4, "clip": 1, "lo": 5, "hi": -5}, r"micro-op 1: clip range lo=5 > hi=-5"),
    ("alu", {"beats": 4, "gain": 2}, r"micro-op 1: unknown field\(s\) \['gain'\]"),
    ("mem", {"start": 5000, "count_i": 1, "count_j": 1},
     r"micro-op 1: field start=5000 does not fit 12 bits"),
    ("mem", {"write": 2, "count_i": 1, "count_j": 1}, r"micro-op 1: field write=2 does not fit 1 bits"),
])
def test_unsupported_micro_ops_are_refused(kind, uop, message):
    first = {"mac": {"mode": "LOAD", "precision": "INT8", "length": 4}, "alu": {"beats": 4},
             "mem": {"count_i": 4, "count_j": 1}}[kind]
    graph = StreamGraph()
    graph.add_node("n", kind, [first, uop])
    with pytest.raises(ProgramError, match=message):
        checks.check_ops(graph, SPEC)


def test_wrapping_mem_addresses_are_allowed():
    """The bank takes addresses modulo mem_depth, so a walk off either end is a defined access."""
    graph = StreamGraph()
    graph.add_node("n", "mem", [{"start": 1020, "stride": 1, "count_i": 8, "count_j": 1},
                                {"start": 0, "stride": -1, "offset": -3, "count_i": 2, "count_j": 2}])
    checks.check_ops(graph, SPEC)


def test_a_node_without_micro_ops_is_refused():
    graph = StreamGraph()
    graph.add_node("idle", "alu", [])
    with pytest.raises(ProgramError, match=r"node 'idle' \(alu\) has no micro-ops"):
        checks.check_ops(graph, SPEC)


# --- host ports and pins ----------------------------------------------------------------------

def host_graph(kind, port, second=None):
    graph = StreamGraph()
    graph.add_node("h", kind, port=port, tokens=4)
    if second:
        graph.add_node("h2", kind, port=second, tokens=4)
    return graph


@pytest.mark.parametrize("graph, spec, message", [
    (host_graph("host_in", "in9"), SPEC,
     r"host node 'h': no host port named 'in9'; the fabric has: in0, in1"),
    (host_graph("host_in", "out0"), SPEC, r"host node 'h' \(host_in\) uses host port 'out0', an 'out' port"),
    (host_graph("host_out", "out0", "out0"), SPEC,
     r"host port 'out0' is used by nodes 'h' and 'h2'; a host port carries one stream"),
    (host_graph("host_in", "in0"), dataclasses.replace(SPEC, failed_links=frozenset({((0, 0), "W")})),
     r"host node 'h': host port 'in0' on tile \(0, 0\) side W is failed"),
    (host_graph("host_in", "in0"), dataclasses.replace(SPEC, failed_tiles=frozenset({(0, 0)})),
     r"host port 'in0' on tile \(0, 0\) side W is failed"),
])
def test_bad_host_ports_are_refused(graph, spec, message):
    with pytest.raises(ProgramError, match=message):
        checks.check_host_ports(spec, graph)


@pytest.mark.parametrize("pins, message", [
    ([(0, 1)], r"node 'n0' \(alu\) is pinned to tile \(0, 1\), which is a mac tile"),
    ([(1, 2)], r"node 'n0' is pinned to failed tile \(1, 2\)"),
    ([(3, 0)], r"node 'n0' is pinned to tile \(3, 0\), outside the 3x3 grid"),
    ([(0, 2), (0, 2)], r"nodes 'n0' and 'n1' are both pinned to tile \(0, 2\); a tile has one FU"),
])
def test_bad_pins_are_refused(pins, message):
    spec = dataclasses.replace(SPEC, failed_tiles=frozenset({(1, 2)}))
    graph = StreamGraph()
    for index, tile in enumerate(pins):
        graph.add_node(f"n{index}", "alu", [{"beats": 1}], tile=tile)
    with pytest.raises(ProgramError, match=message):
        checks.check_pins(spec, graph)


# --- token counts and connections -----------------------------------------------------------

def test_stream_tokens_must_match_the_producer():
    graph = StreamGraph()
    graph.add_node("m", "mem", [{"count_i": 3, "count_j": 4}])
    graph.add_node("w", "mem", [{"write": 1, "count_i": 10, "count_j": 1}])
    graph.connect("m", "w", 10)
    with pytest.raises(ProgramError, match=r"stream m.o0 -> w.i0 carries 10 tokens but node 'm' \(mem\) "
                                           r"produces 12 on m.o0"):
        checks.check_tokens(graph)


def test_stream_tokens_must_match_every_sink():
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 8)
    graph.add_node("a", "alu", [{"beats": 8}])
    graph.add_node("m", "mac", [dot(2, 3, "DOT2")])
    graph.add_host_out("y", "out0", 8)
    graph.add_host_out("z", "out1", 2)
    graph.connect("x", ["a", ("m", 0), ("m", 1)], 8)
    graph.connect("a", "y", 8)
    graph.connect("m", "z", 2)
    with pytest.raises(ProgramError, match=r"stream x.o0 -> a.i0, m.i0, m.i1 carries 8 tokens but node 'm' "
                                           r"\(mac\) consumes 6 on m.i0"):
        checks.check_tokens(graph)


def test_a_used_port_must_be_connected():
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 4)
    graph.add_node("m", "mac", [{"mode": "LOAD", "precision": "INT8", "length": 4}, dot(1, 4)])
    graph.connect("x", ("m", 0), 4)
    with pytest.raises(ProgramError, match=r"node 'm' \(mac\) consumes 4 tokens on m.i1 but no stream is "
                                           r"connected there; connect one"):
        checks.check_tokens(graph)
    graph.edges.clear()
    graph.connect("x", [("m", 0), ("m", 1)], 4)
    with pytest.raises(ProgramError, match=r"node 'm' \(mac\) produces 1 tokens on m.o0 but no stream"):
        checks.check_tokens(graph)


def test_a_port_is_connected_exactly_once():
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 4)
    graph.add_host_in("x2", "in1", 4)
    graph.add_node("a", "alu", [{"beats": 4}])
    graph.add_host_out("y", "out0", 4)
    graph.connect("x", "a", 4)
    graph.connect("a", "y", 4)
    with pytest.raises(GraphError, match=r"input a.i0 is already fed by x.o0 -> a.i0"):
        graph.connect("x2", "a", 4)
    graph.edges.append(Edge(("x2", 0), [("a", 0)], 4))      # bypass connect(): checks catch it too
    with pytest.raises(ProgramError, match=r"a.i0 is connected 2 times \(x.o0 -> a.i0; x2.o0 -> a.i0\); "
                                           r"a input port carries exactly one stream"):
        checks.check_tokens(graph)


def _long_pipeline(tokens):
    """in0 -> alu -> alu -> out0 carrying ``tokens`` tokens; each alu takes them in micro-ops of at
    most 65,535 beats (its own count's width), one after the other."""
    beats = [{"beats": min(65535, tokens - start)} for start in range(0, tokens, 65535)]
    graph = StreamGraph()
    graph.add_node("a", "alu", beats)
    graph.add_node("b", "alu", beats)
    graph.add_host_in("x", "in0", tokens)
    graph.add_host_out("y", "out0", tokens)
    graph.connect("x", "a", tokens)
    graph.connect("a", "b", tokens)
    graph.connect("b", "y", tokens)
    return graph


def test_a_stream_longer_than_16_bits_is_one_counted_route():
    checks.check_tokens(_long_pipeline(80000))


def test_a_stream_fits_one_switch_micro_op():
    too_many = checks.MAX_BEATS + 1
    with pytest.raises(ProgramError, match=rf"stream x.o0 -> a.i0 carries {too_many:,} tokens; a counted "
                                           rf"stream carries 1..{checks.MAX_BEATS:,} \(one switch micro-op's "
                                           rf"beats\); give it less data"):
        checks.check_tokens(_long_pipeline(too_many))


# --- cycles -----------------------------------------------------------------------------------

def test_cyclic_wait_is_named():
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 4)
    graph.add_node("m", "mac", [dot(4, 1, "DOT2")])
    graph.add_node("a", "alu", [{"beats": 4}])
    graph.add_node("b", "alu", [{"beats": 4}])
    graph.connect("x", ("m", 0), 4)
    graph.connect("m", "a", 4)
    graph.connect("a", "b", 4)
    graph.connect("b", ("m", 1), 4)
    checks.check_tokens(graph)
    with pytest.raises(ProgramError, match=r"cyclic wait between functional units: m -> a -> b -> m"):
        checks.check_cycles(graph)


def test_self_loop_is_a_cycle_and_a_diamond_is_not():
    graph = StreamGraph()
    graph.add_node("a", "alu", [{"beats": 4}])
    graph.connect("a", "a", 4)
    with pytest.raises(ProgramError, match=r"cyclic wait between functional units: a -> a"):
        checks.check_cycles(graph)
    diamond = StreamGraph()
    diamond.add_node("s", "alu", [{"beats": 4}])
    diamond.add_node("l", "alu", [{"beats": 4}])
    diamond.add_node("r", "alu", [{"beats": 4}])
    diamond.add_node("m", "mac", [dot(4, 1, "DOT2")])
    diamond.connect("s", ["l", "r"], 4)
    diamond.connect("l", ("m", 0), 4)
    diamond.connect("r", ("m", 1), 4)
    checks.check_cycles(diamond)


# --- placement --------------------------------------------------------------------------------

@pytest.mark.parametrize("tiles, message", [
    ({"m": (1, 2)}, r"node 'm' \(mac\) is placed on tile \(1, 2\), a alu tile"),
    ({"w": (2, 0)}, r"node 'w' is pinned to \(1, 0\) but placed on \(2, 0\)"),
    ({"y": (0, 0)}, r"host node 'y' is placed on \(0, 0\), not on tile \(0, 2\) of its port 'out0'"),
])
def test_placement_check(tiles, message):
    graph = pipeline()
    good = place(SPEC, graph)
    checks.check_placement(SPEC, graph, good)
    bad = dataclasses.replace(good, tiles={**good.tiles, **tiles})
    with pytest.raises(ProgramError, match=message):
        checks.check_placement(SPEC, graph, bad)


def test_placement_check_refuses_shared_and_failed_tiles():
    graph = StreamGraph()
    graph.add_node("a", "alu", [{"beats": 1}])
    graph.add_node("b", "alu", [{"beats": 1}])
    shared = Placement(tiles={"a": (0, 2), "b": (0, 2)}, host_sides={}, wirelength=0, overflow=0, seed=0)
    with pytest.raises(ProgramError, match=r"nodes 'a' and 'b' are both placed on tile \(0, 2\)"):
        checks.check_placement(SPEC, graph, shared)
    spec = dataclasses.replace(SPEC, failed_tiles=frozenset({(1, 2)}))
    moved = Placement(tiles={"a": (1, 2), "b": (0, 2)}, host_sides={}, wirelength=0, overflow=0, seed=0)
    with pytest.raises(ProgramError, match=r"node 'a' is placed on failed tile \(1, 2\)"):
        checks.check_placement(spec, graph, moved)


# --- routing ----------------------------------------------------------------------------------

def two_streams_one_row():
    spec = fabric(1, 3, ["alu alu alu"], [("in0", 0, 0, "W", "in"), ("in1", 0, 0, "N", "in"),
                                          ("out0", 0, 2, "E", "out"), ("out1", 0, 2, "N", "out")])
    graph = StreamGraph()
    for index in (0, 1):
        graph.add_host_in(f"x{index}", f"in{index}", 4)
        graph.add_host_out(f"y{index}", f"out{index}", 4)
        graph.connect(f"x{index}", f"y{index}", 4)
    return spec, graph


def manual_routing(spec, graph, hop_lists):
    routes = [EdgeRoute(edge, [Hop(*hop) for hop in hops], [])
              for edge, hops in zip(graph.edges, hop_lists, strict=True)]
    return Routing(placement=place(spec, graph), routes=routes, switch_uops=switch_uops(routes),
                   fu_uops={}, iterations=1)


def test_two_writers_on_one_link_are_refused():
    spec, graph = two_streams_one_row()
    along_the_row = [((0, 1), 3, (1,))]
    routing = manual_routing(spec, graph, [
        [((0, 0), 3, (1,)), *along_the_row, ((0, 2), 3, (1,))],
        [((0, 0), 0, (1,)), *along_the_row, ((0, 2), 3, (0,))]])
    with pytest.raises(ProgramError, match=r"tile \(0, 0\) switch output 1 has two writers: streams "
                                           r"x0.o0 -> y0.i0 and x1.o0 -> y1.i0; one writer per link"):
        checks.check_routing(spec, graph, routing)


@pytest.mark.parametrize("change, message", [
    (lambda hops: hops.pop(1), r"leaves tile \(0, 0\) by E but tile \(0, 1\) does not continue it from W"),
    (lambda hops: hops.__setitem__(2, Hop((0, 2), 3, (0,))),
     r"ends at \(tile, switch output\) \[\(\(0, 2\), 0\)\], but its sinks are at \[\(\(0, 2\), 1\)\]"),
    (lambda hops: hops.__setitem__(0, Hop((0, 0), 0, (1,))),
     r"does not start at tile \(0, 0\) switch input 3"),
    (lambda hops: hops.append(Hop((0, 1), 3, (4,))), r"enters tile \(0, 1\) twice; a route is a tree"),
])
def test_broken_routes_are_refused(change, message):
    spec, graph = two_streams_one_row()
    del graph.edges[1]
    del graph.nodes["x1"], graph.nodes["y1"]
    routing = place_and_route(spec, graph)
    change(routing.routes[0].hops)
    with pytest.raises(ProgramError, match=message):
        checks.check_routing(spec, graph, routing)


def test_routes_through_failed_tiles_and_links_are_refused():
    spec = fabric(2, 2, ["alu alu", "alu alu"], [("in0", 0, 0, "W", "in"), ("out0", 0, 1, "E", "out")])
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 4)
    graph.add_host_out("y", "out0", 4)
    graph.connect("x", "y", 4)
    routing = place_and_route(spec, graph)
    assert [hop.tile for hop in routing.routes[0].hops] == [(0, 0), (0, 1)]
    with pytest.raises(ProgramError, match=r"stream x.o0 -> y.i0 uses failed link \(0, 0\) E"):
        checks.check_routing(dataclasses.replace(spec, failed_links=frozenset({((0, 1), "W")})), graph,
                             routing)
    detour = manual_routing(spec, graph, [[((0, 0), 3, (2,)), ((1, 0), 0, (1,)), ((1, 1), 3, (0,)),
                                           ((0, 1), 2, (1,))]])
    checks.check_routing(spec, graph, detour)
    with pytest.raises(ProgramError, match=r"stream x.o0 -> y.i0 passes through failed tile \(1, 0\)"):
        checks.check_routing(dataclasses.replace(spec, failed_tiles=frozenset({(1, 0)})), graph, detour)


def test_switch_micro_ops_must_match_the_hops():
    graph = pipeline()
    routing = place_and_route(SPEC, graph)
    tile = routing.routes[0].hops[0].tile
    for field, value in (("select", None), ("beats", 5), ("last", 0)):
        tampered = copy.deepcopy(routing)
        uop = tampered.switch_uops[tile][-1]
        if field == "select":
            uop["select"] = [0] * 7
        else:
            uop[field] = value
        with pytest.raises(ProgramError, match=rf"tile \({tile[0]}, {tile[1]}\): switch micro-ops .* do not "
                                               rf"match its hops"):
            checks.check_routing(SPEC, graph, tampered)
    tampered = copy.deepcopy(routing)
    tampered.fu_uops[routing.placement.tiles["a"]][0]["last"] = 0
    with pytest.raises(ProgramError, match=r"FU micro-ops .* are not node 'a''s with last on the final one"):
        checks.check_routing(SPEC, graph, tampered)


# --- the graph's own structural errors ----------------------------------------------------------

def small_graph():
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 4)
    graph.add_node("a", "alu", [{"beats": 4}])
    graph.add_host_out("y", "out0", 4)
    return graph


@pytest.mark.parametrize("build, message", [
    (lambda g: g.add_node("a", "alu", [{"beats": 1}]), r"node 'a' is added twice"),
    (lambda g: g.add_node("f", "fpu"),
     r"node 'f': unknown kind 'fpu'; kinds are mem, mac, alu, (.*, )?host_in, host_out"),
    (lambda g: g.add_node("h", "host_in", tokens=3), r"node 'h': a host_in node needs port=<host port name>"),
    (lambda g: g.add_node("h", "host_in", [{"beats": 1}], port="in1", tokens=3),
     r"node 'h': a host_in node has no micro-ops and no tile pin"),
    (lambda g: g.add_node("h", "host_out", port="out1"),
     r"node 'h': tokens=0; say how many tokens the host expects"),
    (lambda g: g.add_node("b", "alu", [{"beats": 1}], port="in1"),
     r"node 'b': port= and tokens= are for host nodes"),
    (lambda g: g.add_node("b", "alu", [{"beats": 1}], tile=(1,)),
     r"node 'b': tile \(1,\) is not a \(row, col\) pair"),
    (lambda g: g.add_node("b c", "alu"), r"node name 'b c' must be a non-empty string without spaces"),
    (lambda g: g.connect("x", "zz", 4), r"no node named 'zz' \(nodes: x, a, y\); add it with add_node first"),
    (lambda g: g.connect("x", ("a", 1), 4), r"node 'a' \(alu\) has no input port 1; it has inputs 0..0"),
    (lambda g: g.connect("y", "a", 4), r"node 'y' \(host_out\) has no output port 0; it has no outputs"),
    (lambda g: g.connect("x", [], 4), r"stream from x.o0 has no sinks"),
    (lambda g: g.connect("x", ["a", ("a", 0)], 4), r"stream from x.o0 lists a sink twice"),
    (lambda g: g.connect("x", "a", 0), r"stream from x.o0: tokens=0 must be an integer >= 1"),
    (lambda g: [g.connect("x", "a", 4), g.connect("x", "y", 4)],
     r"output x.o0 already drives x.o0 -> a.i0; add the new sinks to that stream \(multicast\)"),
    (lambda g: g.connect(("x", "0"), "a", 4),
     r"source \('x', '0'\) is not a node name or a \(node name, port"),
])
def test_graph_structure_errors(build, message):
    with pytest.raises(GraphError, match=message):
        build(small_graph())


def test_graph_lookups_and_labels():
    graph = small_graph()
    edge = graph.connect("x", ["a"], 4)
    assert graph.edge_from("x") is edge and graph.edge_into("a", 0) is edge
    assert graph.edge_into("y") is None
    assert str(edge) == "x.o0 -> a.i0"
    assert [node.name for node in graph.fu_nodes()] == ["a"]
    assert [node.name for node in graph.host_nodes()] == ["x", "y"]
