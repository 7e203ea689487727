"""Programs in phases: streams of different phases share links, FU inputs and units.

The phased programs run on the golden model against references written here (plain Python ALU
arithmetic), and on the Verilated default fabric against the golden model: the hand-written ones
and at least 50 random phased programs in one simulation, each under a random stall profile.
Programs that leave a shared switch input by another output in a later phase (refused before
the switch had a fence) run on both; a fabric whose switches ignore the fence must fail them.
"""

import random

import pytest
from amaranth.hdl import Const

from rivulet.sim import fabric_run
from rivulet.sim.fabric_run import run_each_on_rtl, run_many_on_rtl
from rivulet.sim.native import session
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rsn.checks import ProgramError, check_program, check_routing
from rsn.cycle_model import predict_cycles
from rsn.fabric_spec import default_fabric, parse_fabric
from rsn.graph import StreamGraph
from rsn.model import FabricModel
from rsn.place import place
from rsn.program import Program, compile_program
from rsn.random_programs import random_phased_program
from rsn.route import EdgeRoute, Hop, RouteError, Routing, place_and_route, switch_uops
from rsn.switch import Switch
from testbench.counters import assert_counters_agree

RANDOM_PHASED_PROGRAMS = 50
# The seeds in 0..199 whose random_phased_program the router refused while a later route on a
# shared switch input had to take every output of the earlier one (before the fence).
REFUSED_WITHOUT_FENCE = (6, 10, 12, 13, 23, 30, 33, 44, 53, 62, 65, 122, 135, 142, 156, 159, 161,
                         168, 173, 175, 181, 191, 194)


def _alu_reference(x: int, relu: int, shift: int, clip: int, lo: int, hi: int) -> int:
    """docs/rsn-architecture.md's alu on one 32-bit word, written out independently."""
    y = x - (1 << 32) if x >= 1 << 31 else x
    if relu:
        y = max(y, 0)
    y >>= shift
    if clip:
        y = hi if lo > hi else min(max(y, lo), hi)
    return y & 0xFFFF_FFFF


def _alu(beats, **settings):
    return {"beats": beats, "relu": 0, "shift": 0, "clip": 0, "lo": 0, "hi": 0, **settings}


def _model(compiled):
    return FabricModel(compiled.spec).run(compiled.image, compiled.program.host_inputs)


def reused_alu_program(seed: int = 1) -> Program:
    """Phase 0: host -> alu -> host; phase 1: a bank -> the same alu (other settings) -> host.
    The alu, its FU input (fed by two streams) and the route to out0 serve both phases."""
    rng = random.Random(seed)
    first, second = rng.randint(1, 20), rng.randint(1, 20)
    settings = [{"relu": 1, "shift": 3}, {"clip": 1, "lo": -50, "hi": 900, "shift": 1}]
    graph = StreamGraph()
    graph.add_host_in("x", "in0", first)
    graph.add_host_out("y", "out0", first + second)
    graph.add_node("scale", "alu", [_alu(first, **settings[0])])
    graph.add_node("bank", "mem")
    graph.connect("x", "scale", first)
    graph.connect("scale", "y", first)
    graph.next_phase()
    graph.add_uops("bank", [{"start": 100, "stride": 1, "offset": 0, "count_i": second, "count_j": 1}])
    graph.add_uops("scale", [_alu(second, **settings[1])])
    graph.connect("bank", "scale", second)
    graph.connect("scale", "y", second)
    host = [rng.getrandbits(32) for _ in range(first)]
    words = [rng.getrandbits(32) for _ in range(second)]
    expected = [_alu_reference(x, **_settings(settings[0])) for x in host] + \
        [_alu_reference(x, **_settings(settings[1])) for x in words]
    return Program(name="reused-alu", graph=graph, host_inputs={"in0": host},
                   memories={"bank": {100 + k: word for k, word in enumerate(words)}},
                   expected={"out0": expected})


def _settings(given: dict) -> dict:
    return {"relu": 0, "shift": 0, "clip": 0, "lo": 0, "hi": 0, **given}


def relay_program(seed: int = 2) -> Program:
    """Phase 0: host -> alu a -> bank WRITE; phase 1: bank READ -> alu b -> host. The bank
    carries the data from one phase to the next; its WRITE ends before its READ starts."""
    rng = random.Random(seed)
    tokens = rng.randint(4, 30)
    first, second = {"relu": 1, "shift": 2}, {"clip": 1, "lo": -7, "hi": 4000}
    span = {"start": 37, "stride": 3, "offset": 0, "count_i": tokens, "count_j": 1}
    graph = StreamGraph()
    graph.add_host_in("x", "in1", tokens)
    graph.add_node("a", "alu", [_alu(tokens, **first)])
    graph.add_node("bank", "mem", [{"write": 1, **span}])
    graph.connect("x", "a", tokens)
    graph.connect("a", "bank", tokens)
    graph.next_phase()
    graph.add_uops("bank", [{"write": 0, **span}])
    graph.add_node("b", "alu", [_alu(tokens, **second)])
    graph.add_host_out("y", "out1", tokens)
    graph.connect("bank", "b", tokens)
    graph.connect("b", "y", tokens)
    host = [rng.getrandbits(32) for _ in range(tokens)]
    expected = [_alu_reference(_alu_reference(x, **_settings(first)), **_settings(second)) for x in host]
    return Program(name="relay", graph=graph, host_inputs={"in1": host}, expected={"out1": expected})


def ping_pong_program(seed: int = 3) -> Program:
    """The bank feeds the alu in phase 0 and the alu feeds the bank in phase 1: a cycle in the
    graph, but not in time (each phase's streams point one way)."""
    rng = random.Random(seed)
    span = {"start": 500, "stride": -2, "offset": 0, "count_i": 8, "count_j": 1}
    graph = StreamGraph()
    graph.add_node("bank", "mem", [{"write": 0, **span}])
    graph.add_node("b", "alu", [_alu(8, shift=1)])
    graph.add_host_out("y", "out0", 16)
    graph.connect("bank", "b", 8)
    graph.connect("b", "y", 8)
    graph.next_phase()
    graph.add_host_in("x", "in0", 8)
    graph.add_uops("b", [_alu(8, relu=1)])
    graph.add_uops("bank", [{"write": 1, **span}])
    graph.connect("x", "b", 8)
    graph.connect("b", ["y", "bank"], 8)
    words = [rng.getrandbits(32) for _ in range(8)]
    host = [rng.getrandbits(32) for _ in range(8)]
    expected = [_alu_reference(w, **_settings({"shift": 1})) for w in words] + \
        [_alu_reference(x, **_settings({"relu": 1})) for x in host]
    return Program(name="ping-pong", graph=graph, host_inputs={"in0": host},
                   memories={"bank": {500 - 2 * k: word for k, word in enumerate(words)}},
                   expected={"out0": expected})


def diverging_output_program(seed: int = 4) -> Program:
    """alu a's output feeds alu b (then out0) in phase 0 and the host port out1 in phase 1: the
    later stream drops the earlier one's sink, so at a's switch (and wherever the two routes
    part) the later route reads an input the earlier read and leaves it by another output."""
    rng = random.Random(seed)
    first, second = rng.randint(3, 12), rng.randint(3, 12)
    settings = [{"shift": 2}, {"relu": 1}, {"clip": 1, "lo": -300, "hi": 300}]
    graph = StreamGraph()
    graph.add_host_in("x", "in0", first + second)
    graph.add_node("a", "alu", [_alu(first, **settings[0])])
    graph.add_node("b", "alu", [_alu(first, **settings[1])])
    graph.add_host_out("y", "out0", first)
    graph.add_host_out("z", "out1", second)
    graph.connect("x", "a", first)
    graph.connect("a", "b", first)
    graph.connect("b", "y", first)
    graph.next_phase()
    graph.add_uops("a", [_alu(second, **settings[2])])
    graph.connect("x", "a", second)
    graph.connect("a", "z", second)
    host = [rng.getrandbits(32) for _ in range(first + second)]
    out0 = [_alu_reference(_alu_reference(x, **_settings(settings[0])), **_settings(settings[1]))
            for x in host[:first]]
    out1 = [_alu_reference(x, **_settings(settings[2])) for x in host[first:]]
    return Program(name="diverging-output", graph=graph, host_inputs={"in0": host},
                   expected={"out0": out0, "out1": out1})


DEEP_MLP_SIZES = (12, 10, 8, 6, 4)     # x, three hidden layers, y
DEEP_MLP_SHIFT = 6


def _int8(word: int) -> int:
    low = word & 0xFF
    return low - 256 if low >= 128 else low


def _deep_mlp_reference(x, weights):
    """Four int8 layers, each relu, >> DEEP_MLP_SHIFT, clip to int8, with 32-bit wrapping dot
    products, as plain Python."""
    vector = list(x)
    for matrix in weights:
        vector = [_alu_reference(sum(_int8(w) * _int8(v) for w, v in zip(row, vector, strict=True))
                                 & 0xFFFF_FFFF, relu=1, shift=DEEP_MLP_SHIFT, clip=1, lo=-128, hi=127)
                  for row in matrix]
    return vector


def deep_mlp_program(weights_from: str = "bank", seed: int = 7) -> Program:
    """A four-layer int8 MLP in four phases on two chains that alternate: phases 0 and 2 run
    bank a -> mac1 (weights into i0) -> alu1 -> bank b, phases 1 and 3 bank b -> mac2 -> alu2
    -> bank a, and in phase 3 alu2's output goes to the host instead. The weights come from a
    third bank (``weights_from="bank"``) or from the host (``"host"``). Every stream keeps its
    route in its two phases; the two chains' streams part where they leave the mem column,
    which needs a fence (refused before it)."""
    rng = random.Random(seed)
    sizes = DEEP_MLP_SIZES
    x = [rng.randint(-128, 127) & 0xFFFF_FFFF for _ in range(sizes[0])]
    weights = [[[rng.randint(-128, 127) & 0xFFFF_FFFF for _ in range(sizes[layer])]
                for _ in range(sizes[layer + 1])] for layer in range(4)]
    requantize = {"relu": 1, "shift": DEEP_MLP_SHIFT, "clip": 1, "lo": -128, "hi": 127}
    graph = StreamGraph()
    banks = {"a": {address: word for address, word in enumerate(x)}, "b": {}}
    for name in ("a", "b", "mac1", "alu1", "mac2", "alu2"):
        graph.add_node(name, {"a": "mem", "b": "mem"}.get(name, name[:-1]))
    host_weights = []
    if weights_from == "bank":
        graph.add_node("w", "mem")
        banks["w"] = {}
    else:
        graph.add_host_in("w", "in0", sum(len(m) * len(m[0]) for m in weights))
    graph.add_host_out("y", "out0", sizes[4])
    region = [0, 64]                # activations alternate between two regions of each bank
    weight_base = 0
    for layer in range(4):
        if layer:
            graph.next_phase()
        source, target = ("a", "b") if layer % 2 == 0 else ("b", "a")
        mac, alu = ("mac1", "alu1") if layer % 2 == 0 else ("mac2", "alu2")
        n_in, n_out = sizes[layer], sizes[layer + 1]
        read_at, write_at = region[layer // 2 % 2] if layer else 0, region[(layer + 1) // 2 % 2]
        graph.add_uops(source, [{"write": 0, "start": read_at, "stride": 1, "offset": 0,
                                 "count_i": n_in, "count_j": 1}])
        flat = [word for row in weights[layer] for word in row]
        if weights_from == "bank":
            graph.add_uops("w", [{"write": 0, "start": weight_base, "stride": 1, "offset": 0,
                                  "count_i": len(flat), "count_j": 1}])
            banks["w"].update({weight_base + k: word for k, word in enumerate(flat)})
            weight_base += len(flat)
        else:
            host_weights += flat
        graph.add_uops(mac, [{"mode": "LOAD", "precision": "INT8", "length": n_in},
                             {"mode": "DOT", "precision": "INT8", "length": n_in, "rows": n_out}])
        graph.add_uops(alu, [_alu(n_out, **requantize)])
        graph.connect(source, (mac, 1), n_in)
        graph.connect("w", (mac, 0), n_in * n_out)
        graph.connect(mac, alu, n_out)
        if layer < 3:
            graph.add_uops(target, [{"write": 1, "start": write_at, "stride": 1, "offset": 0,
                                     "count_i": n_out, "count_j": 1}])
            graph.connect(alu, target, n_out)
        else:
            graph.connect(alu, "y", n_out)
    return Program(name=f"deep-mlp-{weights_from}", graph=graph, memories=banks,
                   host_inputs={"in0": host_weights} if host_weights else {},
                   expected={"out0": _deep_mlp_reference(x, weights)})


def _relies_on_fence(compiled) -> bool:
    """Some route reads a switch input that a route of an earlier phase read at that tile, and
    does not take every output the earlier one took there: without a fence it could issue early
    and take the earlier stream's tokens (the rule the router kept before the fence)."""
    latest = {}
    for route in sorted(compiled.routing.routes, key=lambda route: route.edge.phase):
        for hop in route.hops:
            before = latest.get((hop.tile, hop.input))
            if before is not None and before[0] < route.edge.phase and not before[1] <= set(hop.outputs):
                return True
            latest[hop.tile, hop.input] = (route.edge.phase, set(hop.outputs))
    return False


@pytest.mark.parametrize("weights_from", ["bank", "host"])
def test_a_deep_mlp_routes_as_two_loops_on_the_default_fabric(weights_from):
    """docs/rsn-phases.md: refused on the default 3x3 before the fence. Each chain's streams
    take the same route in both of their phases, and the result matches the reference."""
    program = deep_mlp_program(weights_from)
    compiled = compile_program(program, default_fabric())
    routes = {}
    for route in compiled.routing.routes:
        routes.setdefault((route.edge.source, tuple(route.edge.sinks)), set()).add(tuple(route.links))
    same = sum(len(links) == 1 for links in routes.values())
    fenced = sorted(tile for tile, uops in compiled.routing.switch_uops.items()
                    if any(uop.get("fence") for uop in uops))
    print(f"{program.name}: {same} of {len(routes)} streams keep one route; placement "
          f"{compiled.routing.placement.tiles}; fences at {fenced}")
    assert _relies_on_fence(compiled)
    result = _model(compiled)
    assert result.done
    assert result.outputs["out0"] == program.expected["out0"]


def test_a_reused_alu_serves_both_phases_on_the_model():
    program = reused_alu_program()
    compiled = compile_program(program, default_fabric())
    result = _model(compiled)
    assert result.done
    assert result.outputs["out0"] == program.expected["out0"]


def test_a_bank_relays_data_between_phases_on_the_model():
    program = relay_program()
    result = _model(compile_program(program, default_fabric()))
    assert result.outputs["out1"] == program.expected["out1"]


def test_units_that_feed_each_other_in_different_phases_run():
    """A graph cycle across phases is no wait cycle: each phase's waits point one way."""
    program = ping_pong_program()
    result = _model(compile_program(program, default_fabric()))
    assert result.outputs["out0"] == program.expected["out0"]


def test_streams_of_different_phases_share_links_and_switch_outputs():
    """The reused alu's input and the route to out0 carry a stream of each phase, and the switch
    micro-ops at each shared output come in phase order."""
    compiled = compile_program(reused_alu_program(), default_fabric())
    routes = compiled.routing.routes
    by_phase = {}
    for route in routes:
        for hop in route.hops:
            for output in hop.outputs:
                by_phase.setdefault((hop.tile, output), set()).add(route.edge.phase)
    assert any(phases == {0, 1} for phases in by_phase.values())
    scale = compiled.routing.placement.tiles["scale"]
    beats = [uop["beats"] for uop in compiled.routing.switch_uops[scale] if uop["enable"] & (1 << 4)]
    first, second = (edge.tokens for edge in compiled.program.graph.edges if edge.sinks == [("scale", 0)])
    assert beats == [first, second]


def _line(graph_of):
    """A 1x2 fabric, two host inputs on the west tile and two outputs on the east tile: every
    stream between them takes the one link (0, 0) -> E."""
    spec = parse_fabric({"rows": 1, "cols": 2, "tiles": ["alu alu"], "host_ports": [
        {"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
        {"name": "in1", "tile": [0, 0], "side": "N", "direction": "in"},
        {"name": "out0", "tile": [0, 1], "side": "E", "direction": "out"},
        {"name": "out1", "tile": [0, 1], "side": "N", "direction": "out"}]}, "test line")
    graph = StreamGraph()
    graph_of(graph)
    return spec, graph


def _merge(graph):
    """in0 to out0 in phase 0, in1 to out0 in phase 1."""
    graph.add_host_out("y", "out0", 8)
    for index in (0, 1):
        if index:
            graph.next_phase()
        graph.add_host_in(f"x{index}", f"in{index}", 4)
        graph.connect(f"x{index}", "y", 4)


def _crossing():
    def build(graph):
        """in0 to out0 in phase 0 and in1 to out1 in phase 1."""
        for index in (0, 1):
            if index:
                graph.next_phase()
            graph.add_host_in(f"x{index}", f"in{index}", 4)
            graph.add_host_out(f"y{index}", f"out{index}", 4)
            graph.connect(f"x{index}", f"y{index}", 4)
    return build


def test_two_phases_share_the_only_link():
    spec, graph = _line(_merge)
    routing = place_and_route(spec, graph)
    assert routing.routes[0].links == routing.routes[1].links == [((0, 0), 1)]
    program = Program("line", graph, host_inputs={"in0": [1, 2, 3, 4], "in1": [5, 6, 7, 8]})
    result = _model(compile_program(program, spec))
    assert result.outputs["out0"] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_streams_of_one_phase_sharing_a_link_are_refused_with_names():
    def build(graph):
        """Both crossing streams in phase 0, then in0 to out0 again in phase 1."""
        for index in (0, 1):
            graph.add_host_in(f"x{index}", f"in{index}", 8 if index == 0 else 4)
            graph.add_host_out(f"y{index}", f"out{index}", 8 if index == 0 else 4)
            graph.connect(f"x{index}", f"y{index}", 4)
        graph.next_phase()
        graph.connect("x0", "y0", 4)
    spec, graph = _line(build)
    with pytest.raises(RouteError, match=r"(?s)without sharing a link .* one stream per phase.*"
                                         r"tile \(0, 0\) output E \(to \(0, 1\)\) is wanted by 2 "
                                         r"streams: x0.o0 -> y0.i0; x1.o0 -> y1.i0"):
        place_and_route(spec, graph)


def _crossing_program(first: int = 6, second: int = 5, seed: int = 5) -> tuple:
    spec, graph = _line(_crossing())
    graph.nodes["x0"].tokens = graph.nodes["y0"].tokens = graph.edges[0].tokens = first
    graph.nodes["x1"].tokens = graph.nodes["y1"].tokens = graph.edges[1].tokens = second
    rng = random.Random(seed)
    inputs = {"in0": [rng.getrandbits(32) for _ in range(first)],
              "in1": [rng.getrandbits(32) for _ in range(second)]}
    program = Program("crossing", graph, host_inputs=inputs,
                      expected={"out0": list(inputs["in0"]), "out1": list(inputs["in1"])})
    return spec, program


def test_a_later_stream_leaves_a_shared_link_by_another_output_behind_a_fence():
    """Phase 1 enters the east tile by the input phase 0 came in by and leaves by another output
    (refused before the fence). Its micro-op there is fenced, so it waits for phase 0's route to
    end and carries exactly its own tokens."""
    spec, program = _crossing_program()
    compiled = compile_program(program, spec)
    east = compiled.routing.switch_uops[(0, 1)]
    assert [uop.get("fence", 0) for uop in east] == [0, 1]
    assert [uop["enable"] for uop in east] == [1 << 1, 1 << 0]      # E, then N
    assert compiled.routing.routes[0].links == compiled.routing.routes[1].links == [((0, 0), 1)]
    # The west tile reads another input in each phase (W, then N): no fence needed there.
    assert [uop.get("fence", 0) for uop in compiled.routing.switch_uops[(0, 0)]] == [0, 0]
    result = _model(compiled)
    assert result.done
    assert result.outputs == program.expected


def test_a_unit_output_feeds_other_sinks_in_a_later_phase():
    """Refused by check_phases before the fence; now compiled with fences where the two streams
    from a.o0 share a switch input, and correct against the plain-Python reference."""
    program = diverging_output_program()
    compiled = compile_program(program, default_fabric())
    assert _relies_on_fence(compiled)
    a = compiled.routing.placement.tiles["a"]
    assert any(uop.get("fence", 0) for uop in compiled.routing.switch_uops[a])
    result = _model(compiled)
    assert result.done
    assert result.outputs == program.expected


def test_fences_only_where_a_later_route_leaves_a_shared_input_elsewhere():
    """Every fence sits on a tile's first micro-op of a phase with a route that reads an input an
    earlier phase's route read there and drops one of its outputs, and every such phase has one
    (re-derived here from the routes). A later route that keeps every output needs none."""
    for program in (reused_alu_program(), diverging_output_program(), random_phased_program(6),
                    random_phased_program(10)):
        compiled = compile_program(program, default_fabric())
        for tile, uops in compiled.routing.switch_uops.items():
            hops = [(route.edge.phase, hop) for route in sorted(compiled.routing.routes,
                                                                 key=lambda route: route.edge.phase)
                    for hop in route.hops if hop.tile == tile]
            assert len(hops) == len(uops)
            wanted = [0] * len(hops)
            for index, (phase, hop) in enumerate(hops):
                before = [other for other_phase, other in hops[:index]
                          if other_phase < phase and other.input == hop.input]
                if before and not set(before[-1].outputs) <= set(hop.outputs):
                    wanted[min(k for k, (other_phase, _) in enumerate(hops) if other_phase == phase)] = 1
            assert [uop.get("fence", 0) for uop in uops] == wanted, (program.name, tile)


def test_a_unit_whose_phases_go_backwards_is_refused():
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 4)
    graph.add_host_out("y", "out0", 4)
    graph.add_node("a", "alu", [_alu(4)])
    graph.connect("x", "a", 4)
    graph.connect("a", "y", 4)
    graph.nodes["a"].uop_phases = [1]
    graph.edges[0].phase = graph.edges[1].phase = 1
    graph.next_phase()
    graph.add_uops("a", [_alu(4)])
    graph.nodes["a"].uop_phases = [1, 0]
    with pytest.raises(ProgramError, match=r"node 'a' \(alu\) micro-op 1 is in phase 0, after a micro-op "
                                           r"of phase 1"):
        check_program(default_fabric(), graph)


def _pass_through_twice(declared_in: int, second_in: int) -> StreamGraph:
    """x -> a -> y with 4 tokens, then a second phase of 8 (``second_in`` into a); the host ports
    declare ``declared_in`` and 12 tokens."""
    graph = StreamGraph()
    graph.add_host_in("x", "in0", declared_in)
    graph.add_host_out("y", "out0", 12)
    graph.add_node("a", "alu", [_alu(4)])
    graph.connect("x", "a", 4)
    graph.connect("a", "y", 4)
    graph.next_phase()
    graph.add_uops("a", [_alu(8)])
    graph.connect("x", "a", second_in)
    graph.connect("a", "y", 8)
    return graph


def test_counts_are_checked_per_phase():
    graph = _pass_through_twice(11, 7)
    with pytest.raises(ProgramError, match=r"stream x.o0 -> a.i0 \(phase 1\) carries 7 tokens but node 'a' "
                                           r"\(alu\) consumes 8 on a.i0 in phase 1"):
        check_program(default_fabric(), graph)


def test_a_host_node_declares_the_sum_of_its_phases():
    graph = _pass_through_twice(9, 8)
    with pytest.raises(ProgramError, match=r"host node 'x' has streams in several phases carrying 4 \+ 8 "
                                           r"tokens, but declares 9; declare their sum"):
        check_program(default_fabric(), graph)


def test_a_wait_cycle_within_a_phase_is_refused_naming_it():
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 4)
    graph.add_node("a", "alu", [_alu(4)])
    graph.add_host_out("y", "out0", 8)
    graph.connect("x", "a", 4)
    graph.connect("a", "y", 4)
    graph.next_phase()
    graph.add_uops("a", [_alu(4)])
    graph.add_node("b", "alu", [_alu(4)])
    graph.connect("b", "a", 4)
    graph.connect("a", ["y", "b"], 4)
    with pytest.raises(ProgramError, match=r"cyclic wait between functional units in phase 1: a -> b -> a"):
        check_program(default_fabric(), graph)


def _crossing_routing():
    """A hand-made routing of the crossing streams: phase 1 enters the east tile by the input
    phase 0 used and leaves by another output."""
    spec, graph = _line(_crossing())
    placement = place(spec, graph)
    west, east = 3, 1               # switch ports: W = 3, E = 1, N = 0
    routes = [EdgeRoute(graph.edges[0], [Hop((0, 0), west, (east,)), Hop((0, 1), west, (east,))],
                        [((0, 0), east)]),
              EdgeRoute(graph.edges[1], [Hop((0, 0), 0, (east,)), Hop((0, 1), west, (0,))],
                        [((0, 0), east)])]
    return spec, graph, Routing(placement, routes, switch_uops(routes), {}, 1)


def test_the_routing_check_accepts_a_fenced_route_that_drops_an_output():
    spec, graph, routing = _crossing_routing()
    assert routing.switch_uops[(0, 1)][1].get("fence") == 1
    check_routing(spec, graph, routing)


def test_the_routing_check_refuses_a_later_route_that_drops_an_output_unfenced():
    """The same routing with the fence taken off: each route is a sound tree, but the later
    could issue early and take phase-0 tokens, so the check refuses it."""
    spec, graph, routing = _crossing_routing()
    del routing.switch_uops[(0, 1)][1]["fence"]
    with pytest.raises(ProgramError, match=r"tile \(0, 1\) switch input 3 is read by stream x0.o0 -> y0.i0 "
                                           r"\(outputs \[1\]\) and later by x1.o0 -> y1.i0 \(phase 1\) "
                                           r"\(outputs \[0\]\) with no fence between them; a later route "
                                           r"on a shared input must come behind a fenced switch micro-op"):
        check_routing(spec, graph, routing)


def test_the_routing_check_refuses_a_fence_the_routes_do_not_need():
    """A fence where no input is read again would only cost cycles; the check wants the exact
    micro-ops."""
    spec, graph, routing = _crossing_routing()
    routing.switch_uops[(0, 0)][1]["fence"] = 1
    with pytest.raises(ProgramError, match=r"tile \(0, 0\): switch micro-ops .* do not match its hops"):
        check_routing(spec, graph, routing)


def test_a_single_phase_graph_routes_as_before():
    """A graph that never starts a phase is the old model: its streams' phases are all 0 and
    the micro-ops come in program order (the rest of the suite checks the images themselves)."""
    graph = StreamGraph()
    graph.add_host_in("x", "in0", 4)
    graph.add_host_out("y", "out0", 4)
    graph.add_node("a", "alu", [_alu(4)])
    graph.connect("x", "a", 4)
    graph.connect("a", "y", 4)
    assert not graph.phased and graph.phases() == [0]
    assert str(graph.edges[0]) == "x.o0 -> a.i0"


def _random_phased(rng, spec, wanted):
    """``wanted`` random phased programs that compile, and how many drawn the router refused."""
    programs, refused = [], 0
    while len(programs) < wanted:
        program = random_phased_program(rng.getrandbits(32))
        try:
            programs.append(compile_program(program, spec))
        except RouteError:
            refused += 1
    return programs, refused


def test_random_phased_programs_reuse_links_on_the_model():
    (base,) = seeds_for("phases:model", count=1)
    rng = random.Random(base)
    compiled, refused = _random_phased(rng, default_fabric(), 30)
    print(f"base seed {base}: {refused} refused by the router")
    reused = 0
    for each in compiled:
        result = _model(each)
        assert result.done, each.program.name
        assert len(result.outputs["out0"]) == each.program.graph.nodes["result"].tokens
        links = [link for route in each.routing.routes for link in route.links]
        reused += len(links) != len(set(links))
    assert reused >= len(compiled) // 2, f"only {reused} of {len(compiled)} programs reuse a link"
    assert refused <= len(compiled) // 2


def _fenced_programs(rng, spec) -> tuple[list, int]:
    """The hand-written phased programs, 50 random ones and those of REFUSED_WITHOUT_FENCE."""
    fixed = [compile_program(program, spec) for program in (reused_alu_program(), relay_program(),
                                                            ping_pong_program(),
                                                            diverging_output_program(),
                                                            deep_mlp_program("bank"),
                                                            deep_mlp_program("host"),
                                                            lanes_program(4))]
    drawn, refused = _random_phased(rng, spec, RANDOM_PHASED_PROGRAMS)
    once_refused = [compile_program(random_phased_program(seed), spec) for seed in REFUSED_WITHOUT_FENCE]
    return fixed + drawn + once_refused, refused


def _runs(compiled, seeds, profiles) -> str:
    return ", ".join(f"{each.program.name} seed {seed} {profile}"
                     for each, seed, profile in zip(compiled, seeds, profiles, strict=True))


def _check_against_model(each, rtl, profile):
    model = _model(each)
    what = f"{each.program.name} ({profile})"
    for port, tokens in model.outputs.items():
        assert rtl.outputs.get(port, []) == tokens, f"{what}: host port {port}"
        if each.program.expected and port in each.program.expected:
            assert tokens == each.program.expected[port], f"{what}: reference, port {port}"
    assert_counters_agree(rtl, model, what)


@pytest.mark.verilator
def test_phased_programs_rtl_equals_golden_model():
    """The hand-written phased programs, 50 random ones and the 23 random ones the router refused
    before the fence, one simulation, random stalls."""
    (base,) = seeds_for("phases:rtl", count=1)
    rng = random.Random(base)
    spec = default_fabric()
    compiled, refused = _fenced_programs(rng, spec)
    relying = [each.program.name for each in compiled if _relies_on_fence(each)]
    profiles = [rng.choice(list(PROFILES)) for _ in compiled]
    seeds = [rng.getrandbits(32) for _ in compiled]
    print(f"base seed {base} ({refused} refused by the router; {len(relying)} of {len(compiled)} rely "
          f"on a fence): " + _runs(compiled, seeds, profiles))
    assert len(relying) >= len(REFUSED_WITHOUT_FENCE) // 2, relying
    results = run_many_on_rtl(compiled, profiles=profiles, seeds=seeds, case="fabric-phases")
    for each, rtl, profile in zip(compiled, results, profiles, strict=True):
        _check_against_model(each, rtl, profile)


@pytest.mark.verilator
def test_a_crossing_on_a_line_rtl_equals_reference():
    """The crossing streams (a fenced route on a shared input) on the Verilated 1x2 fabric, under
    every stall profile, against the host inputs themselves."""
    (base,) = seeds_for("phases:line-rtl", count=1)
    rng = random.Random(base)
    programs = [_crossing_program(rng.randint(1, 20), rng.randint(1, 20), rng.getrandbits(32))
                for _ in PROFILES]
    spec = programs[0][0]
    compiled = [compile_program(program, spec) for _, program in programs]
    seeds = [rng.getrandbits(32) for _ in compiled]
    print(f"base seed {base}: run seeds {seeds}")
    results = run_many_on_rtl(compiled, profiles=list(PROFILES), seeds=seeds, case="fabric-phases-line")
    for each, rtl, profile in zip(compiled, results, PROFILES, strict=True):
        for port, tokens in each.program.expected.items():
            assert rtl.outputs.get(port, []) == tokens, f"{profile}: host port {port}"
        _check_against_model(each, rtl, profile)


@pytest.mark.verilator
def test_the_cycle_model_is_exact_on_fenced_programs():
    """The cycle model's fence (rsn.cycle_model) against the RTL's counter and every host output
    transfer, no stalls: the hand-written programs that need a fence and six random ones."""
    spec = default_fabric()
    compiled = [compile_program(program, spec) for program in
                (diverging_output_program(), deep_mlp_program("bank"), deep_mlp_program("host"))]
    compiled += [compile_program(random_phased_program(seed), spec) for seed in REFUSED_WITHOUT_FENCE[:6]]
    assert all(_relies_on_fence(each) for each in compiled)
    line, crossing = _crossing_program(9, 7)
    for programs in (compiled, [compile_program(crossing, line)]):
        count = len(programs)
        results = run_many_on_rtl(programs, profiles=["no_stall"] * count, seeds=[1] * count,
                                  case="fabric-phases-cycles")
        for each, rtl in zip(programs, results, strict=True):
            predicted = predict_cycles(each)
            print(f"{each.program.name}: RTL {rtl.cycles} cycles, model {predicted.cycles}")
            assert predicted.cycles == rtl.cycles, each.program.name


class _FencelessSwitch(Switch):
    """A mutant switch that ignores the fence: a fenced micro-op issues as an unfenced one."""

    def _fence_holds(self, fence, counted):
        return Const(0, 1)


@pytest.mark.verilator
def test_a_switch_that_ignores_the_fence_is_caught(monkeypatch):
    """The programs that rely on a fence, on a fabric whose switches ignore it (its own build):
    at least one of them must hang or differ from the golden model."""
    monkeypatch.setattr("rsn.tile.Switch", _FencelessSwitch)
    native_key, fabric_key = session.native_key, fabric_run._fabric_key
    monkeypatch.setattr(session, "native_key", lambda spec: "fenceless-" + native_key(spec))
    monkeypatch.setattr(fabric_run, "_fabric_key", lambda spec: "fenceless-" + fabric_key(spec))
    (base,) = seeds_for("phases:fenceless", count=1)
    rng = random.Random(base)
    spec = default_fabric()
    compiled, _ = _fenced_programs(rng, spec)
    compiled = [each for each in compiled if _relies_on_fence(each)]
    profiles = [rng.choice(list(PROFILES)) for _ in compiled]
    seeds = [rng.getrandbits(32) for _ in compiled]
    print(f"base seed {base}: " + _runs(compiled, seeds, profiles))
    results = run_each_on_rtl(compiled, profiles=profiles, seeds=seeds, case="fabric-phases-fenceless",
                              max_cycles=20_000)
    caught = []
    for each, rtl, profile in zip(compiled, results, profiles, strict=True):
        if isinstance(rtl, str):
            caught.append(f"{each.program.name}: {rtl.splitlines()[0]}")
            continue
        try:
            _check_against_model(each, rtl, profile)
        except AssertionError as error:
            caught.append(f"{each.program.name}: {str(error).splitlines()[0]}")
    print(f"the fenceless fabric failed {len(caught)} of {len(compiled)}:\n  " + "\n  ".join(caught))
    assert caught, f"a switch that ignores the fence ran all {len(compiled)} fenced programs correctly"


def test_a_host_input_of_several_phases_is_checked_against_their_sum():
    spec, graph = _line(_merge)
    program = Program("line", graph, host_inputs={"in0": [1, 2, 3, 4], "in1": [5, 6, 7]})
    short = r"host input 'in1' \(node 'x1'\) is short: the host gives "
    with pytest.raises(ProgramError, match=short + r"3 tokens, but stream x1.o0 -> y.i0 \(phase 1\) "
                                                   r"declares 4"):
        compile_program(program, spec)
    graph.next_phase()
    graph.connect("x1", "y", 2)
    graph.nodes["x1"].tokens, graph.nodes["y"].tokens = 6, 10
    program = Program("line", graph, host_inputs={"in0": [1, 2, 3, 4], "in1": [5, 6, 7, 8, 9]})
    with pytest.raises(ProgramError, match=short + r"5 tokens, but the sum of its streams x1.o0 -> y.i0 "
                                           r"\(phase 1\); x1.o0 -> y.i0 \(phase 2\) declares 6"):
        compile_program(program, spec)
    program.host_inputs["in1"].append(10)
    assert _model(compile_program(program, spec)).outputs["out0"] == list(range(1, 11))


def lanes_program(passes: int, seed: int = 3) -> Program:
    """Three mem -> mac -> alu lanes run a two-layer int8 network on three vectors per pass, the
    weights multicast from in0 to every mac and the vectors sent on in1 one lane at a time, for
    ``passes`` passes in phases. The units run different numbers of micro-ops per phase (the
    switch at in1 takes part in every lane's load, a mac only in its own): going round the units
    by micro-op index alone deadlocked the control chain at four passes."""
    rng = random.Random(seed)
    sizes, lanes = (5, 4, 3), 3
    weights = [[[rng.randint(-128, 127) for _ in range(sizes[k])] for _ in range(sizes[k + 1])]
               for k in range(2)]
    graph = StreamGraph()
    for lane in range(lanes):
        for kind in ("mem", "mac", "alu"):
            graph.add_node(f"{kind}{lane}", kind)
    graph.add_host_in("w", "in0", passes * sum(len(m) * len(m[0]) for m in weights))
    graph.add_host_in("x", "in1", passes * lanes * sizes[0])
    graph.add_host_out("y", "out0", passes * lanes * sizes[2])
    requantize = {"relu": 1, "shift": DEEP_MLP_SHIFT, "clip": 1, "lo": -128, "hi": 127}
    host_w, host_x, expected = [], [], []
    for number in range(passes):
        vectors = [[rng.randint(-128, 127) for _ in range(sizes[0])] for _ in range(lanes)]
        for lane, vector in enumerate(vectors):
            if number or lane:
                graph.next_phase()
            graph.add_uops(f"mac{lane}", [{"mode": "LOAD", "precision": "INT8", "length": sizes[0]}])
            graph.connect("x", (f"mac{lane}", 1), sizes[0])
            host_x += [value & 0xFFFF_FFFF for value in vector]
        for layer in range(2):
            n_in, n_out = sizes[layer], sizes[layer + 1]
            if layer:
                graph.next_phase()
                for lane in range(lanes):
                    graph.add_uops(f"mem{lane}", [{"write": 0, "start": 0, "stride": 1, "offset": 0,
                                                   "count_i": n_in, "count_j": 1}])
                    graph.add_uops(f"mac{lane}", [{"mode": "LOAD", "precision": "INT8", "length": n_in}])
                    graph.connect(f"mem{lane}", (f"mac{lane}", 1), n_in)
            graph.next_phase()
            graph.connect("w", [(f"mac{lane}", 0) for lane in range(lanes)], n_in * n_out)
            host_w += [value & 0xFFFF_FFFF for row in weights[layer] for value in row]
            for lane in range(lanes):
                graph.add_uops(f"mac{lane}", [{"mode": "DOT", "precision": "INT8", "length": n_in,
                                               "rows": n_out}])
                graph.add_uops(f"alu{lane}", [_alu(n_out, **requantize)])
                graph.connect(f"mac{lane}", f"alu{lane}", n_out)
                graph.add_uops(f"mem{lane}", [{"write": 1, "start": 0, "stride": 1, "offset": 0,
                                               "count_i": n_out, "count_j": 1}])
                graph.connect(f"alu{lane}", f"mem{lane}", n_out)
        for lane in range(lanes):
            graph.next_phase()
            graph.add_uops(f"mem{lane}", [{"write": 0, "start": 0, "stride": 1, "offset": 0,
                                           "count_i": sizes[2], "count_j": 1}])
            graph.connect(f"mem{lane}", "y", sizes[2])
        expected += [word for vector in vectors for word in _deep_mlp_reference_layers(vector, weights)]
    return Program(name=f"lanes-{passes}", graph=graph, memories={f"mem{lane}": {} for lane in range(lanes)},
                   host_inputs={"in0": host_w, "in1": host_x}, expected={"out0": expected})


def _deep_mlp_reference_layers(vector, weights):
    """The deep MLP's layer rule (int8 dot products, relu, shift, clip) over ``weights``' layers."""
    for matrix in weights:
        vector = [_alu_reference(sum(w * v for w, v in zip(row, vector, strict=True)) & 0xFFFF_FFFF,
                                 relu=1, shift=DEEP_MLP_SHIFT, clip=1, lo=-128, hi=127) for row in matrix]
    return vector


def _image_phases(compiled) -> list[int]:
    """The phase of every micro-op body of the image, in image order."""
    from rsn.image import split_packets
    from rsn.isa import Opcode
    from rsn.route import switch_uop_phases

    phases = {("switch", tile): iter(at) for tile, at in switch_uop_phases(compiled.routing.routes).items()}
    tiles = compiled.routing.placement.tiles
    phases.update({("fu", tiles[node.name]): iter(node.phase_of_uops())
                   for node in compiled.program.graph.fu_nodes()})
    seen = []
    for packet in split_packets(compiled.image):
        if packet.opcode not in (Opcode.SWITCH, Opcode.FU):
            continue
        tile = (packet.rows.bit_length() - 1, packet.cols.bit_length() - 1)
        unit = "switch" if packet.opcode == Opcode.SWITCH else "fu"
        for _ in range(len(packet.bodies) * packet.repeat):
            seen.append(next(phases[unit, tile]))
    return seen


@pytest.mark.parametrize("passes", [1, 2, 4])
def test_unbalanced_phases_are_dispatched_phase_by_phase_and_run(passes):
    program = lanes_program(passes)
    compiled = compile_program(program, default_fabric())
    phases = _image_phases(compiled)
    assert phases == sorted(phases), "a micro-op of a later phase was sent before one of an earlier phase"
    result = _model(compiled)
    assert result.done
    assert result.outputs["out0"] == program.expected["out0"]
