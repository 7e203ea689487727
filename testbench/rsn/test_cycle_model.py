# amaranth: UnusedElaboratable=no
"""The cycle model (rsn/cycle_model.py) against the fabric's own clock.

Fast checks of the closed forms come first. Then one Verilator simulation of the default fabric
runs, with no host stalls: pinned mem -> alu -> host paths whose streams cross 1 to 5 switches,
the MLP, a program whose dispatch blocks and replays, and random programs (single-phase and
phased). The per-cycle
handshake trace of the run gives the cycle of every ``ctrl`` word and every host output token,
so first-token latencies are measured on the RTL and compared with the model exactly.
"""

import dataclasses
import random
from dataclasses import dataclass

import pytest

from rivulet.sim.fabric_run import _hardware, run_many_on_rtl
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import stream_ports
from rivulet.sim.toolchain import REPOSITORY
from rsn.cycle_model import (
    CycleModelError,
    dispatch_latency,
    path_hops,
    path_latency,
    predict_cycles,
    queue_latency,
)
from rsn.fabric import Fabric
from rsn.fabric_spec import default_fabric
from rsn.fu_alu import LATENCY as ALU_LATENCY
from rsn.fu_mem import READ_LATENCY
from rsn.graph import StreamGraph
from rsn.image import split_packets
from rsn.isa import Opcode
from rsn.program import Program, compile_program, load_program
from rsn.random_programs import random_phased_program, random_program
from rsn.route import RouteError
from testbench.rsn.latency_options import LATENCY_OPTIONS, options_id

MLP = REPOSITORY / "examples" / "mlp.py"
RANDOM_PROGRAMS = 12
PHASED_PROGRAMS = 6         # programs whose phases share links and units
TOLERANCE = 0.05            # whole-program cycles: model vs RTL counter
PATH_TOKENS = 8
# (mem tile, alu tile, host output port): mem -> alu crosses 3 to 5 switches, alu -> host 1 to 3.
# With registered FU input queues every alu's micro-op is there before the data; with a bypass the
# data can come first, which the closed form follows (_first_token_formula).
PATHS = [
    ((0, 0), (0, 2), "out0"),
    ((1, 0), (1, 2), "out0"),
    ((2, 0), (2, 2), "out0"),
    ((1, 0), (0, 2), "out1"),
    ((2, 0), (0, 2), "out0"),
    ((2, 0), (1, 2), "out1"),
]


def _manhattan(a, b) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _path_program(mem_tile, alu_tile, port) -> Program:
    """mem READ -> alu -> host port, with both FUs pinned so that the hop counts are known."""
    graph = StreamGraph()
    graph.add_node("source", "mem", [{"start": 0, "stride": 1, "offset": 0, "count_i": PATH_TOKENS,
                                      "count_j": 1}], tile=mem_tile)
    graph.add_node("scale", "alu", [{"beats": PATH_TOKENS, "shift": 1}], tile=alu_tile)
    graph.add_host_out("result", port, PATH_TOKENS)
    graph.connect("source", "scale", PATH_TOKENS)
    graph.connect("scale", "result", PATH_TOKENS)
    name = f"path-{mem_tile[0]}{mem_tile[1]}-{alu_tile[0]}{alu_tile[1]}-{port}"
    return Program(name, graph, memories={"source": {k: 3 * k for k in range(PATH_TOKENS)}})


def _repeating_program() -> Program:
    """Twelve identical 3-word READs and alu passes: repeat packets and blocking dispatch."""
    graph = StreamGraph()
    uops = 12
    read = {"start": 5, "stride": 1, "offset": 0, "count_i": 3, "count_j": 1}
    graph.add_node("source", "mem", [read] * uops)
    graph.add_node("first", "alu", [{"beats": 3, "shift": 1}] * uops)
    graph.add_node("second", "alu", [{"beats": 3, "relu": 1}] * uops)
    graph.add_host_out("result", "out1", 3 * uops)
    graph.connect("source", "first", 3 * uops)
    graph.connect("first", "second", 3 * uops)
    graph.connect("second", "result", 3 * uops)
    return Program("repeating", graph, memories={"source": {5: 1, 6: -2 & 0xFFFF_FFFF, 7: 300}})


def _compiled_paths(spec=None):
    spec = spec or default_fabric()
    return [compile_program(_path_program(*path), spec) for path in PATHS]


def _body_word(compiled, node: str) -> int:
    """Image index of the second word of ``node``'s first micro-op body (when it is dispatched)."""
    tile = compiled.routing.placement.tiles[node]
    for packet in split_packets(compiled.image):
        if packet.opcode == Opcode.FU and packet.tiles(compiled.spec.rows, compiled.spec.cols) == [tile]:
            return packet.offset + 3
    raise AssertionError(f"{compiled.program.name}: no FU packet for {node}'s tile {tile}")


def _mem_body_word(compiled) -> int:
    return _body_word(compiled, "source")


def _first_token_formula(compiled, ctrl_cycles) -> int:
    """Cycles from the mem's micro-op on ``ctrl`` to the first host token, when nothing waits
    but the alu for its own micro-op (``ctrl_cycles``: when each image word was taken):
    dispatch to the mem, READ latency, the mem -> alu path, the alu, the alu -> host path. With
    short FU input queues the first token can reach the alu before its micro-op, which the alu
    takes a cycle before it can take a token."""
    spec, tiles = compiled.spec, compiled.routing.placement.tiles
    data = dispatch_latency(spec, tiles["source"]) + READ_LATENCY + path_latency(compiled, 0)
    alu_ready = (ctrl_cycles[_body_word(compiled, "scale")] - ctrl_cycles[_mem_body_word(compiled)]
                 + dispatch_latency(spec, tiles["scale"]) + 1)
    return max(data, alu_ready) + ALU_LATENCY + path_latency(compiled, 1)


def test_queue_latency_follows_the_token_queue():
    assert [queue_latency(depth) for depth in (1, 2, 3, 4, 16)] == [1, 1, 2, 2, 2]
    assert [queue_latency(depth, "fall_through") for depth in (1, 2, 3, 4, 16)] == [1, 1, 1, 1, 1]
    assert [queue_latency(depth, "bypass") for depth in (1, 2, 3, 4, 16)] == [0, 0, 0, 0, 0]


def test_path_hops_and_latency_closed_form():
    """hops = switches on the route (Manhattan distance + 1 on an intact grid); an FU sink adds
    its input queue, a host sink nothing."""
    for (mem_tile, alu_tile, port), compiled in zip(PATHS, _compiled_paths(), strict=True):
        port_tile = compiled.spec.host_port(port).tile
        to_alu, to_host = _manhattan(mem_tile, alu_tile) + 1, _manhattan(alu_tile, port_tile) + 1
        assert (path_hops(compiled, 0), path_hops(compiled, 1)) == (to_alu, to_host), compiled.program.name
        assert path_latency(compiled, 0) == to_alu + queue_latency(compiled.spec.queue_depth)
        assert path_latency(compiled, 1) == to_host
    bypassing = _compiled_paths(dataclasses.replace(default_fabric(), queue_mode="bypass"))
    assert [path_latency(compiled, 0) for compiled in bypassing] == [
        _manhattan(mem_tile, alu_tile) + 1 for mem_tile, alu_tile, _ in PATHS]


@pytest.mark.parametrize("option", LATENCY_OPTIONS, ids=options_id)
def test_model_first_token_is_the_closed_form(option):
    """The timing replay and the sum of declared latencies agree on every pinned path, and the
    tokens then follow one per cycle."""
    queue_mode, every = option
    spec = dataclasses.replace(default_fabric(), queue_mode=queue_mode, register_every=every)
    for compiled in _compiled_paths(spec):
        prediction = predict_cycles(compiled)
        arrivals = prediction.arrivals["out0" if "out0" in compiled.host_outputs else "out1"]
        dispatched = prediction.ctrl_cycles[_mem_body_word(compiled)]
        assert arrivals[0] - dispatched == _first_token_formula(compiled, prediction.ctrl_cycles), \
            compiled.program.name
        assert arrivals == list(range(arrivals[0], arrivals[0] + PATH_TOKENS))


def test_multicast_path_latency_needs_a_sink():
    compiled = compile_program(random_program(13, "multicast"), default_fabric())
    edge = compiled.routing.routes[0].edge
    with pytest.raises(ValueError, match="multicast"):
        path_latency(compiled, 0)
    assert path_latency(compiled, 0, edge.sinks[1]) == \
        path_hops(compiled, 0, edge.sinks[1]) + queue_latency(compiled.spec.queue_depth)


def test_counter_starts_after_start_and_stops_at_done():
    prediction = predict_cycles(compile_program(load_program(MLP), default_fabric()))
    assert prediction.start_cycle == 0 and not prediction.early_done
    assert prediction.cycles == prediction.done_cycle - 1
    assert prediction.dispatch_end < prediction.done_cycle


def test_model_reports_a_hang():
    """A host input that never arrives: the replay stops with an error instead of looping."""
    compiled = compile_program(random_program(5, "pass_through"), default_fabric())
    compiled.program.host_inputs = {}
    with pytest.raises(CycleModelError, match="no done"):
        predict_cycles(compiled, max_cycles=2000)


def test_image_must_start_with_start():
    """Without START first the counter would not be running: the model refuses the image."""
    compiled = compile_program(random_program(5, "pass_through"), default_fabric())
    compiled.image = compiled.image[2:]         # START is a header and a target word
    with pytest.raises(ValueError, match="not START"):
        predict_cycles(compiled)


@dataclass
class TimedRun:
    cycles: int                     # the fabric's cycle counter at done
    done_cycle: int
    ctrl_cycles: list[int]          # bench cycle of each ctrl word (image, then the reads)
    arrivals: dict[str, list[int]]  # host port -> bench cycle of each token


def run_with_timing(compiled_programs, case: str) -> list[TimedRun]:
    """Run programs with no host stalls in one simulation, keeping every transfer's cycle: the
    per-cycle handshake trace of every host stream gives the cycle of each transfer."""
    spec = _hardware(compiled_programs[0].spec)
    ports, _ = stream_ports(Fabric(spec))
    position = {port.prefix: index for index, port in enumerate(ports)}
    count = len(compiled_programs)
    results = run_many_on_rtl(compiled_programs, profiles=["no_stall"] * count, seeds=[1] * count, case=case,
                              trace=True)

    def transfers(trace, name):
        shift = 2 * position[name]
        return [cycle for cycle, bits in enumerate(trace) if (bits >> shift) & 3 == 3]

    return [TimedRun(result.cycles, result.done_cycle, transfers(result.trace, "ctrl"),
                     {port: transfers(result.trace, port) for port in compiled.host_outputs})
            for compiled, result in zip(compiled_programs, results, strict=True)]


def _path_failures(compiled, rtl: TimedRun) -> list[str]:
    """First-token latency (mem micro-op on ctrl -> first host token) and every arrival, exact."""
    name = compiled.program.name
    prediction = predict_cycles(compiled)
    port = next(iter(compiled.host_outputs))
    word = _mem_body_word(compiled)
    measured = rtl.arrivals[port][0] - rtl.ctrl_cycles[word]
    predicted = prediction.arrivals[port][0] - prediction.ctrl_cycles[word]
    formula = _first_token_formula(compiled, rtl.ctrl_cycles)
    print(f"{name}: hops {path_hops(compiled, 0)} + {path_hops(compiled, 1)}, first-token latency "
          f"RTL {measured}, model {predicted}, closed form {formula}")
    failures = []
    if not measured == predicted == formula:
        failures.append(f"{name}: first-token latency RTL {measured}, model {predicted}, formula {formula}")
    if rtl.arrivals[port] != prediction.arrivals[port]:
        failures.append(f"{name}: arrivals RTL {rtl.arrivals[port]} vs model {prediction.arrivals[port]}")
    return failures


def _whole_program_failures(compiled, rtl: TimedRun) -> tuple[float, list[str]]:
    predicted = predict_cycles(compiled).cycles
    error = (predicted - rtl.cycles) / rtl.cycles
    print(f"{compiled.program.name}: RTL {rtl.cycles} cycles, model {predicted}, error {100 * error:+.2f}%")
    if abs(error) > TOLERANCE:
        return error, [f"{compiled.program.name}: model {predicted} vs RTL {rtl.cycles} cycles "
                       f"({100 * error:+.2f}%, over {100 * TOLERANCE:.0f}%)"]
    return error, []


def _phased(rng, spec) -> list:
    """Random phased programs that the router places (it refuses a few of those drawn)."""
    compiled = []
    while len(compiled) < PHASED_PROGRAMS:
        try:
            compiled.append(compile_program(random_phased_program(rng.getrandbits(32)), spec))
        except RouteError:
            pass
    return compiled


@pytest.mark.verilator
@pytest.mark.long(0)
@pytest.mark.parametrize("option", LATENCY_OPTIONS, ids=options_id)
def test_cycle_model_against_rtl(option):
    """One simulation per FU input queue mode, and one with pass-through switch outputs:
    pinned paths exactly, then whole programs within 5% of the RTL counter."""
    queue_mode, every = option
    spec = dataclasses.replace(default_fabric(), queue_mode=queue_mode, register_every=every)
    (base,) = seeds_for("cycle_model:random", count=1)
    rng = random.Random(base)
    seeds = [rng.getrandbits(32) for _ in range(RANDOM_PROGRAMS)]
    print(f"base seed {base}: random program seeds {seeds}")
    paths = _compiled_paths(spec)
    programs = [load_program(MLP), _repeating_program()] + [random_program(seed) for seed in seeds]
    whole = [compile_program(program, spec) for program in programs] + _phased(rng, spec)
    results = run_with_timing(paths + whole, case=f"cycle-model-{options_id(option)}")
    failures = []
    for compiled, rtl in zip(paths, results, strict=False):
        failures += _path_failures(compiled, rtl)
    errors = []
    for compiled, rtl in zip(whole, results[len(paths):], strict=True):
        error, problems = _whole_program_failures(compiled, rtl)
        errors.append(abs(error))
        failures += problems
    print(f"whole programs: mean |error| {100 * sum(errors) / len(errors):.2f}%, "
          f"max {100 * max(errors):.2f}%")
    assert not failures, "\n".join(failures)
