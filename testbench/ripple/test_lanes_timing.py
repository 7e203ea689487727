# amaranth: UnusedElaboratable=no
"""The cycle model of a two-lane ``pe`` tile (``[pe] lanes = 2``, ripple_core/pe/timing.py):
the tile's timing driven directly against the two-lane PeFu in Amaranth's simulator, cycle by
cycle (outputs, ``busy``, ``finished``), and the fabric's predicted counter against the
Verilated fabric on RipTide suite graphs packed two operators to a tile, with private banks
(and pass-through outputs every third hop) and with a shared memory."""

import random
from types import SimpleNamespace

import pytest
from amaranth.sim import Simulator

from ripple_core.lower import compile_lowering, lower_graph
from ripple_core.pe import MEM_WINDOW, REG_CONFIG, REG_CONST, REG_ORIGIN, PeFu, PeUop, pe_config_word
from ripple_core.pe.config import REG_PORTS, port_map_word
from ripple_core.pe.lanes import lane_register
from ripple_core.pe.timing import PeTiming
from rsn.cycle_model import TimedFifo, predict_cycles
from rsn.fabric_spec import parse_fabric
from rsn.isa import decode, encode
from rsn.readout import register_reads, split_register_reads
from testbench.pe_grid import pe_grid
from testbench.ripple.test_lower import _check, _ripple_programs, needs_suite, suite_cases, suite_graph

TILE = parse_fabric({"rows": 1, "cols": 1, "tiles": ["pe"], "data_width": 32,
                     "pe": {"lanes": 2, "mem_depth": 16}}, "one two-lane tile")
WORDS = [(7 * w + 3) & 0xFFFF_FFFF for w in range(16)]


def two_lane_fabric(memory: str, rows: int = 4, cols: int = 5, register_every: int | None = None):
    """ripple.toml's parameters with two operators per pe tile, its private banks or a shared
    memory, on a 4x5 grid: the smallest that places and routes the graphs below two to a tile
    (dmv without STREAM does not route on 4x4 or 3x5). Its 20 tiles build in about two thirds
    of the time of ripple.toml's 30. ``register_every`` replaces ripple.toml's K."""
    data = pe_grid("ripple.toml", rows, cols)
    data["pe"]["lanes"] = 2
    if register_every is not None:
        data["register_every"] = register_every
    if memory == "shared":
        del data["pe"]["mem_depth"]
        data["memory"] = {"words": 1024, "banks": 4}
    return parse_fabric(data, f"two-lane {rows}x{cols} ripple.toml, {memory} memory")


# The fabric of the suite's two-lane RTL tests: ripple.toml's parameters with two operators to a
# tile, a shared memory, and a route's pass-through every third hop (K = 3; ripple.toml has 2).
# One build serves this file, test_queue_modes.py's K = 3 runs and test_long_counts.py: a 4x5
# two-lane build is among the suite's costliest, and its users, all long(1), run in turn on one
# worker. Two-lane tiles with private banks are checked here tile by tile against the RTL (the
# "bank" scenario), on every operator in test_pe_lanes.py, and on whole programs by `make bench`
# (bench/results/ripple_rtl_bypass_every3_lanes2.md: the cycle model exact on every run).
LANE_FABRIC = two_lane_fabric("shared", register_every=3)


# --- one tile: the timing against the RTL ----------------------------------------------------

def _lane(lane: int, op: str, slots=("edge",) * 3, consts=(), drop=()) -> list[tuple[int, int]]:
    writes = [(lane_register(lane, REG_CONFIG), pe_config_word(op, slots=slots, drop=drop))]
    return writes + [(lane_register(lane, REG_CONST + k), value) for k, value in consts]


def _uop(firings: int, firings1: int, last: int = 1, open_: int = 0) -> dict:
    fields = {"firings": firings, "firings1": firings1, "last": last, "open": open_}
    return decode(PeUop, encode(PeUop, fields))


def _scenario(name: str, rng: random.Random):
    """(configuration writes, tokens per tile input, micro-ops) of one tile."""
    n = rng.randint(3, 9)
    values = [[rng.randrange(2**32) for _ in range(n)] for _ in range(3)]
    if name in ("0 to 1", "0 to 1, two micro-ops", "0 to 1, open"):
        # lane 0: i0 + 5 -> lane 1: that * i1 -> tile output 0
        writes = _lane(0, "ADD", ("edge", "hold", "edge"), [(1, 5)]) + _lane(1, "MUL")
        ports = port_map_word({(0, 0): ("in", 0), (1, 0): ("lane", 0), (1, 1): ("in", 1)}, {0: (1, 0)})
        if name == "0 to 1":
            uops = [_uop(n, n)]
        elif name == "0 to 1, open":
            uops = [_uop(0, 0, open_=1)]
        else:
            k = rng.randint(1, n - 1)
            uops = [_uop(k, k, last=0), _uop(n - k, n - k)]
        return writes + [(REG_PORTS, ports)], values[:2], uops
    if name == "1 to 0, bank":
        # lane 1: STREAM 0..n-1 (constants), index -> lane 0's LOAD, flag -> tile output 1;
        # lane 0: LOAD's word -> tile output 0, its done token dropped
        writes = _lane(1, "STREAM", ("const",) * 3, [(0, 0), (1, n), (2, 1)])
        writes += _lane(0, "LOAD", ("hold", "edge", "hold"), [(0, 0), (2, 0)], drop=(1,))
        writes += [(REG_ORIGIN, 0)] + [(MEM_WINDOW + w, word) for w, word in enumerate(WORDS)]
        ports = port_map_word({(0, 1): ("lane", 0)}, {0: (0, 0), 1: (1, 1)})
        return writes + [(REG_PORTS, ports)], [], [_uop(n, n + 1)]
    if name == "side by side":
        # lane 0: i0 - i1 -> tile output 0; lane 1: i2 ^ 9 -> tile output 1; lane 1 granted less
        writes = _lane(0, "SUB") + _lane(1, "XOR", ("edge", "hold", "edge"), [(1, 9)])
        ports = port_map_word({(0, 0): ("in", 0), (0, 1): ("in", 1), (1, 0): ("in", 2)},
                              {0: (0, 0), 1: (1, 0)})
        return writes + [(REG_PORTS, ports)], [values[0], values[1], values[2][:n - 2]], [_uop(n, n - 2)]
    if name == "lane 0 alone":
        writes = _lane(0, "ADD")
        return writes, values[:2], [_uop(n, 0)]
    raise ValueError(name)


SCENARIOS = ("0 to 1", "0 to 1, two micro-ops", "0 to 1, open", "1 to 0, bank", "side by side",
             "lane 0 alone")


def _timing_trace(writes, tokens, uops, ready, cycles):
    inputs = [TimedFifo(1000, 0) for _ in range(3)]
    for fifo, stream in zip(inputs, tokens, strict=False):
        for token in stream:
            fifo.push(-1, token)
    queue = TimedFifo(len(uops), 0)
    for uop in uops:
        queue.push(-1, uop)
    timing = PeTiming(queue, inputs)
    timing.prepare(TILE, (0, 0), SimpleNamespace(writes=writes), None)
    trace = []
    for cycle in range(cycles):
        sent = []
        for q, output in enumerate(timing.outputs):     # the switch takes first
            if ready[cycle][q] and output.valid(cycle):
                sent.append((q, output.pop(cycle)))
        trace.append((timing.busy(cycle), timing.finished(cycle), sent))
        timing.step(cycle)
    return trace


def _rtl_trace(writes, tokens, uops, ready, cycles):
    fu = PeFu(mem_depth=TILE.parameters("pe").mem_depth, lanes=2)
    trace = []

    async def bench(ctx):
        for address, value in writes:
            ctx.set(fu.cfg.addr, address)
            ctx.set(fu.cfg.data, value)
            ctx.set(fu.cfg.write, 1)
            await ctx.tick()
        ctx.set(fu.cfg.write, 0)
        streams = [list(stream) for stream in tokens] + [[] for _ in range(3 - len(tokens))]
        pending = list(uops)
        for cycle in range(cycles):
            for k, stream in enumerate(streams):
                ctx.set(fu.i[k].valid, bool(stream))
                ctx.set(fu.i[k].payload, stream[0] if stream else 0)
            ctx.set(fu.uop.valid, bool(pending))
            if pending:
                for field in ("firings", "firings1", "last", "open"):
                    ctx.set(getattr(fu.uop.payload, field), pending[0][field])
            for q in range(2):
                ctx.set(fu.o[q].ready, ready[cycle][q])
            sent = [(q, ctx.get(fu.o[q].payload)) for q in range(2)
                    if ready[cycle][q] and ctx.get(fu.o[q].valid)]
            trace.append((bool(ctx.get(fu.busy)), bool(ctx.get(fu.finished)), sent))
            for k, stream in enumerate(streams):
                if stream and ctx.get(fu.i[k].ready):
                    stream.pop(0)
            if pending and ctx.get(fu.uop.ready):
                pending.pop(0)
            await ctx.tick()

    sim = Simulator(fu)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return trace


@pytest.mark.parametrize("back_pressure", [False, True])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_two_lane_tile_cycle_by_cycle_against_the_rtl(scenario, back_pressure):
    """Outputs (cycle and value), ``busy`` and ``finished`` every cycle, the outputs always
    ready or ready at random."""
    rng = random.Random(f"{scenario} {back_pressure}")
    writes, tokens, uops = _scenario(scenario, rng)
    cycles = 60
    ready = [[not back_pressure or rng.random() < 0.5 for _ in range(2)] for _ in range(cycles)]
    expected = _rtl_trace(writes, tokens, uops, ready, cycles)
    predicted = _timing_trace(writes, tokens, uops, ready, cycles)
    assert any(sent for _, _, sent in expected) and expected[-1][1], "the scenario did not run to its end"
    for cycle, (rtl, model) in enumerate(zip(expected, predicted, strict=True)):
        assert model == rtl, f"{scenario}: cycle {cycle}: RTL (busy, finished, sent) {rtl}, timing {model}"


# --- the fabric: the predicted counter against the Verilated fabric --------------------------

# (kernel, variant): the longest case of a recurrence without memory, a pipelined array loop and
# dmv's nested loops; then Ripple's operators (open micro-ops): the atomic histogram and BFS.
GRAPHS = [("simple", "nostream"), ("nn-vadd", "stream"), ("dmv", "nostream")]
RIPPLE = ("histogram", "ripple_bfs")


@needs_suite
@pytest.mark.verilator
@pytest.mark.long(1)
def test_suite_graphs_on_two_lane_tiles_are_cycle_exact():
    from rivulet.sim.fabric_run import run_many_on_rtl

    fabric = LANE_FABRIC
    runs = []
    for kernel, variant in GRAPHS:
        cases = suite_cases(kernel)
        k = max(range(len(cases)), key=lambda k: cases[k]["reference_steps"][variant])
        label = f"{kernel}/{variant} case {k}"
        lowering = lower_graph(suite_graph(kernel, variant), cases[k], fabric, name=label.replace("/", "-"))
        runs.append((label, lowering, compile_lowering(lowering, fabric, seed=1)))
    for label, graph, case in _ripple_programs(random.Random(7), 7):
        if label.startswith(RIPPLE):
            lowering = lower_graph(graph, case, fabric, name=label.split()[0])
            runs.append((label, lowering, compile_lowering(lowering, fabric, seed=1)))
    assert len(runs) == len(GRAPHS) + len(RIPPLE)
    programs = [run[2] for run in runs]
    results = run_many_on_rtl(programs, profiles=["no_stall"] * len(runs), seeds=[1] * len(runs),
                              case="ripple-lanes",
                              extra_reads=[register_reads(program) for program in programs])
    for (label, lowering, compiled), result in zip(runs, results, strict=True):
        _check(label, lowering, compiled, result.outputs, result.firings,
               split_register_reads(compiled, result.extra))
        predicted = predict_cycles(compiled).cycles
        print(f"{label}: RTL {result.cycles} cycles, cycle model {predicted}")
        assert predicted == result.cycles, label
