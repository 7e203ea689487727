# amaranth: UnusedElaboratable=no
"""The RSN switch against its golden model, in both tiers, plus its timing and structural promises.

Random race-free micro-op programs (see ``switch_bench``) run on switches with (n_fu_in,
n_fu_out) in {(2, 1), (3, 2)} under three stall profiles and three seeds each, in Amaranth's
simulator and on Verilator; the scoreboard compares every output's token sequence with the golden
model, and the counters and flags with what the ports showed. Directed cases pin down the timing
(latency, throughput, issue bubble), the registered boundary, ``clear``, the multicast corner
case, and the model's refusals. Broken switches must be caught by the scoreboard.
"""

import random

import pytest
from amaranth.hdl import unsigned
from amaranth.sim import Simulator

from hw.params import ParameterError
from rivulet.sim.amaranth_sim import port_values
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import NoProgressError, ScoreboardError, stream_ports
from rivulet.sim.wrappers import Clocked
from rsn.channels import Channel
from rsn.isa import NO_INPUT, IsaError, SwitchUop, encode, field_width
from rsn.switch import Switch
from rsn.switch_model import SwitchModel, SwitchUopError

from .switch_bench import (
    CONFIGS,
    DIRECTED,
    MUTANT_DIRECTED,
    MUTANTS,
    SETTLE_CYCLES,
    FlatUopSwitch,
    Program,
    SwitchParams,
    make_switch_bench,
    model_outputs,
    random_program,
    run_switch_amaranth,
    run_switch_verilator,
    segment_view,
)

WIDTH = 32
PROFILES = ["no_stall", "random_stall_50", "backpressure_90"]
UOPS = 12              # per random program in Amaranth's simulator, where a cycle costs ~2 ms
UOPS_VERILATOR = 24    # and on Verilator, where cycles are nearly free
COMB_CHECK_CYCLES = 150     # enough for routes to start, multicast, stall and end


# Switches with pass-through outputs (rsn/hops.py): a mix of both kinds, and every output.
PASS_THROUGH_CONFIGS = [(3, 2, (1, 2, 4, 5, 6)), (2, 1, (0, 1, 2, 3, 4, 5))]


def config_id(config) -> str:
    passing = f"-pass={''.join(map(str, config[2]))}" if len(config) > 2 else ""
    return f"fu_in={config[0]}-fu_out={config[1]}{passing}"


configs = pytest.mark.parametrize("config", CONFIGS, ids=config_id)
all_configs = pytest.mark.parametrize("config", CONFIGS + PASS_THROUGH_CONFIGS, ids=config_id)


def random_scenarios(name: str, profile: str, uops: int = UOPS) -> list[dict]:
    return [{"kind": "random", "profile": profile, "seed": seed, "uops": uops}
            for seed in seeds_for(name)]


def latency_scenarios(params: SwitchParams, name: str) -> list[dict]:
    """First input to first output, last to last, and one seeded pair in between (the next
    input instead where a pass-through output cannot take its own side's)."""
    (seed,) = seeds_for(name, count=1)
    rng = random.Random(seed)
    pairs = [(0, 0), (params.n_inputs - 1, params.n_outputs - 1),
             (rng.randrange(params.n_inputs), rng.randrange(params.n_outputs))]
    pairs = [(source if params.selectable(sink, source) else source + 1, sink) for source, sink in pairs]
    return [{"kind": "latency", "source": source, "sink": sink, "beats": 16, "seed": seed}
            for source, sink in pairs]


# -- the data plane against the golden model ---------------------------------------------------

@all_configs
@pytest.mark.parametrize("profile", PROFILES)
def test_random_programs_amaranth(config, profile):
    params = SwitchParams(WIDTH, *config)
    for scenario in random_scenarios(f"switch-sim:{config_id(config)}:{profile}", profile):
        print(params, scenario)
        run_switch_amaranth(params, scenario)


@pytest.mark.verilator
@all_configs
def test_random_programs_verilator(config):
    """One Verilator build per configuration; every profile, seed and latency case on it."""
    params = SwitchParams(WIDTH, *config)
    scenarios = [scenario for profile in PROFILES
                 for scenario in random_scenarios(f"switch-verilator:{config_id(config)}:{profile}",
                                                  profile, UOPS_VERILATOR)]
    scenarios += latency_scenarios(params, f"switch-verilator-latency:{config_id(config)}")
    if not params.pass_through:         # the directed programs take U-turns
        scenarios += [{"kind": "directed", "name": name} for name in DIRECTED]
    print(params, scenarios)
    records = run_switch_verilator(params, scenarios, case=f"rsn-switch-{config_id(config)}")
    assert len(records) == len(scenarios)


@all_configs
def test_latency_and_throughput(config):
    """Latency is exactly ``Switch.LATENCY`` == 1 cycle (``PASS_LATENCY`` == 0 on a pass-through
    output) and a route sustains 1 token/cycle (the LatencyChecker asserts both, cycle by cycle)."""
    assert (Switch.LATENCY, Switch.PASS_LATENCY) == (1, 0)
    params = SwitchParams(WIDTH, *config)
    for scenario in latency_scenarios(params, f"switch-latency:{config_id(config)}"):
        bench = run_switch_amaranth(params, scenario)
        # micro-op in cycle 0, tokens accepted in 1..16, delivered in 2..17 (1..16 passing
        # through), then settling.
        assert bench.cycles == scenario["beats"] + params.latency(scenario["sink"]) + SETTLE_CYCLES


def test_one_bubble_between_routes_on_one_output():
    """The next micro-op issues in the cycle after an output's last take (registered issue)."""
    bench = run_switch_amaranth(SwitchParams(WIDTH, 2, 1), {"kind": "directed", "name": "back_to_back"})
    assert [cycle for cycle, _ in bench.transfers("uop")] == [0, 5]
    assert [cycle for cycle, _ in bench.transfers("i__0")] == [1, 2, 3, 4, 6, 7, 8, 9]


@configs
def test_output_rerouted_to_an_input_it_already_took_from(config):
    """An output that took a multicast token, ended its route and is routed to the same input
    again before the token retired must not take that token twice."""
    run_switch_amaranth(SwitchParams(WIDTH, *config),
                        {"kind": "directed", "name": "reroute_before_retire"})


# -- structure: registered outputs, clear --------------------------------------------------------

@all_configs
def test_no_combinational_path_through_the_switch(config):
    """``o[*]`` and ``i[*].ready`` do not change when any input of the switch changes within a
    cycle: every output comes from flip-flops, and input readiness from registered state. A
    pass-through output's valid and payload are exempt (they follow the input by design), but
    nothing flows backwards: every ``i[k].ready`` stays registered there too."""
    params = SwitchParams(WIDTH, *config)
    switch = params.build()
    ports, extra = stream_ports(switch)
    (seed,) = seeds_for(f"switch-comb:{config_id(config)}", count=1)
    bench, _ = make_switch_bench(params, ports, extra, {"kind": "random", "seed": seed,
                                                         "profile": "random_stall_50", "uops": 8})
    top = Clocked(FlatUopSwitch(switch))
    signals = port_values(top)
    inputs = ["clear"] + [name for port in ports for name in
                          ((port.valid, port.payload) if port.into_design else (port.ready,))]
    passing = {f"o__{j}" for j in params.pass_through}
    watched = [name for port in ports for name in
               ((port.ready,) if port.into_design else (port.valid, port.payload))
               if port.prefix != "uop" and port.prefix not in passing]
    rng = random.Random(seed)

    async def testbench(ctx):
        for cycle in range(COMB_CHECK_CYCLES):
            for name, value in bench.drive(cycle).items():
                ctx.set(signals[name], value)
            before = {name: ctx.get(signals[name]) for name in watched}
            driven = {name: ctx.get(signals[name]) for name in inputs}
            for name in inputs:
                ctx.set(signals[name], rng.getrandbits(len(signals[name])))
            after = {name: ctx.get(signals[name]) for name in watched}
            changed = [name for name in watched if after[name] != before[name]]
            assert not changed, f"cycle {cycle}: {changed} changed with the inputs"
            for name, value in driven.items():
                ctx.set(signals[name], value)
            bench.observe(cycle, {name: ctx.get(signals[name]) for name in bench.sampled})
            await ctx.tick()
            if bench.finished:
                return

    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()
    delivered = sum(len(monitor.transfers) for monitor in bench.monitors
                    if not monitor.port.into_design)
    assert delivered >= 20, f"only {delivered} tokens moved: the check saw too little"


def test_clear_zeroes_counters_and_finished():
    """``clear`` zeroes ``beats`` and ``finished``; in a cycle that also moves a token, clear wins."""
    switch = Switch(8, 2, 1)
    top = FlatUopSwitch(switch)
    finite = encode(SwitchUop, {"beats": 3, "enable": 1 << 4, "select": [0] * 4 + [2, 0, 0],
                                "last": 1})
    static = encode(SwitchUop, {"beats": 0, "enable": 1 << 1, "select": [0, 3] + [0] * 5})

    async def send_uop(ctx, body):
        ctx.set(top.uop.payload, body)
        ctx.set(top.uop.valid, 1)
        await ctx.tick().until(top.uop.ready)
        ctx.set(top.uop.valid, 0)

    async def testbench(ctx):
        for port in (top.o[4], top.o[1]):
            ctx.set(port.ready, 1)
        for k in (2, 3):
            ctx.set(top.i[k].valid, 1)
        await send_uop(ctx, finite)
        await ctx.tick().repeat(6)
        assert (ctx.get(top.beats[4]), ctx.get(top.finished), ctx.get(top.busy)) == (3, 1, 0)
        await send_uop(ctx, static)
        await ctx.tick().repeat(4)
        assert ctx.get(top.o[1].valid) and ctx.get(top.beats[1]) > 0
        ctx.set(top.clear, 1)
        await ctx.tick()
        ctx.set(top.clear, 0)
        # o[1] moved a token in the clear cycle: clear wins, so the counters restart at 0.
        assert [ctx.get(top.beats[j]) for j in range(6)] == [0] * 6
        assert ctx.get(top.finished) == 0 and ctx.get(top.busy) == 1
        await ctx.tick().repeat(5)
        assert ctx.get(top.beats[1]) == 5 and ctx.get(top.beats[4]) == 0

    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()


def test_held_counts_the_tokens_a_blocked_output_buffers():
    """``held[j]`` (the tile's diagnostic register shows it) is 0, 1, 2 as a blocked output's
    skid buffer fills, and the input then waits; it drains back to 0 once the output takes."""
    switch = Switch(8, 2, 1)
    top = FlatUopSwitch(switch)
    route = encode(SwitchUop, {"beats": 0, "enable": 1 << 1, "select": [0, 3] + [0] * 5})

    async def testbench(ctx):
        ctx.set(top.uop.payload, route)
        ctx.set(top.uop.valid, 1)
        await ctx.tick().until(top.uop.ready)
        ctx.set(top.uop.valid, 0)
        assert ctx.get(top.held[1]) == 0
        ctx.set(top.i[3].valid, 1)
        seen = []
        for _ in range(4):
            await ctx.tick()
            seen.append(ctx.get(top.held[1]))
        assert seen == [1, 2, 2, 2]
        assert ctx.get(top.i[3].valid) and not ctx.get(top.i[3].ready)     # the input waits
        assert [ctx.get(top.held[j]) for j in range(6) if j != 1] == [0] * 5
        ctx.set(top.i[3].valid, 0)
        ctx.set(top.o[1].ready, 1)
        await ctx.tick().repeat(2)
        assert ctx.get(top.held[1]) == 0

    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()


def test_switch_refuses_bad_parameters():
    with pytest.raises(ParameterError, match=r"n_fu_in=4 .* 0\.\.3"):
        Switch(32, 4, 1)
    with pytest.raises(ParameterError, match=r"n_fu_out=3 .* 0\.\.2"):
        Switch(32, 1, 3)
    with pytest.raises(ParameterError, match="width"):
        Switch(0, 1, 1)


def test_switch_signature():
    switch = Switch(16, 3, 2)
    assert (switch.n_inputs, switch.n_outputs) == (6, 7)
    assert len(switch.i) == 6 and len(switch.o) == 7 and len(switch.beats) == 7 and len(switch.held) == 7
    assert switch.o[0].payload.shape() == unsigned(16)


# -- the golden model ----------------------------------------------------------------------------

def _uop(**fields) -> dict:
    return {"beats": 1, "enable": 0, "select": [0] * 7, **fields}


@pytest.mark.parametrize("uop, message", [
    (_uop(enable=1 << 6, select=[0] * 7), r"#0: enable bit 6 is set, but this switch has only 6 "
                                          r"outputs \(0\.\.5\)"),
    (_uop(enable=1 << 2, select=[0, 0, NO_INPUT, 0, 0, 0, 0]), r"output 2 selects NO_INPUT"),
    (_uop(enable=1 << 0, select=[5, 0, 0, 0, 0, 0, 0]), r"output 0 selects input 5; this "
                                                        r"switch's inputs are 0\.\.4"),
])
def test_model_refuses_invalid_uops(uop, message):
    model = SwitchModel(2, 1)
    with pytest.raises(SwitchUopError, match=message):
        model.load([uop])
    with pytest.raises(SwitchUopError, match=message.replace("#0", "#1")):
        SwitchModel(2, 1).load([_uop(), encode(SwitchUop, uop)])     # raw bodies too


def test_model_refuses_out_of_range_fields():
    too_many = 1 << field_width(SwitchUop, "beats")
    with pytest.raises(IsaError, match=f"beats={too_many}"):
        SwitchModel(2, 1).load([_uop(beats=too_many)])


def test_model_ignores_selects_of_disabled_outputs():
    model = SwitchModel(2, 1)
    model.load([_uop(enable=1, select=[1, NO_INPUT, 6, 7, 7, 7, 7], last=1)])
    inputs = [Channel(f"i{k}", 4) for k in range(5)]
    outputs = [Channel(f"o{j}", 4) for j in range(6)]
    inputs[1].push(42)
    while model.step(inputs, outputs):
        pass
    assert list(outputs[0].tokens) == [42] and model.finished and not model.busy
    assert model.beats == [1, 0, 0, 0, 0, 0]


def test_model_multicast_is_eager():
    """A stalled output does not hold back the others by more than the token on offer."""
    model = SwitchModel(2, 1)
    model.load([_uop(beats=3, enable=0b11, select=[0, 0, 0, 0, 0, 0, 0])])
    inputs = [Channel(f"i{k}", 8) for k in range(5)]
    outputs = [Channel("fast", 8), Channel("stuck", 0)] + [Channel(f"o{j}", 1) for j in range(2, 6)]
    for token in (1, 2, 3):
        inputs[0].push(token)
    while model.step(inputs, outputs):
        pass
    assert list(outputs[0].tokens) == [1] and list(inputs[0].tokens) == [1, 2, 3]
    assert model.busy and not model.finished


@configs
def test_generated_programs_are_race_free(config):
    """The model gives the segment view's sequences under random schedules (small output
    channels drained at random): the programs' outcomes do not depend on timing."""
    params = SwitchParams(WIDTH, *config)
    for seed in seeds_for(f"switch-race-free:{config_id(config)}", count=20):
        program = random_program(params, seed, UOPS)
        want = [[e.token for e in tokens] for tokens in segment_view(params, program)]
        for schedule in range(3):
            model, got = model_outputs(params, program, random.Random(seed + schedule))
            assert got == want, f"seed {seed}: schedule {schedule} differs"
            assert model.beats == [len(tokens) for tokens in want]


def test_race_check_detects_a_racy_program():
    """The check above can fail: a route that joins an input another output is still draining
    (o1 is not among the outputs input 0 was last read on) gets timing-dependent tokens."""
    params = SwitchParams(WIDTH, 2, 1)
    uops = [{"beats": 3, "enable": 0b01, "select": [0] * 7},
            {"beats": 2, "enable": 0b10, "select": [0] * 7, "last": 1}]
    program = Program(uops, [], [list(range(1, 6)), [], [], [], []], 1)
    outcomes = {tuple(map(tuple, model_outputs(params, program, random.Random(seed))[1]))
                for seed in range(20)}
    assert len(outcomes) > 1


# -- the checks can fail ---------------------------------------------------------------------------

# A repeated multicast token needs one output to stall while another takes; heavy back-pressure
# shows it in nearly every random program (one base seed in a few hundred drew a program without
# that moment), random_stall_50 in most, no_stall never. So each mutant gets up to four random
# programs and must be caught by one of them; the directed test below catches each one always.
MUTANT_ROWS = [(name, profile) for name in ("early_end", "greedy_issue")
               for profile in ("random_stall_50", "backpressure_90")]
MUTANT_ROWS += [("repeating_multicast", "backpressure_90")]
# ignores_fence shows only when a fenced micro-op reaches the head while an earlier reader of
# its input still runs, which few random programs arrange: the directed program catches it.


@pytest.mark.parametrize("name, profile", MUTANT_ROWS)
def test_broken_switch_is_caught(name, profile):
    params = SwitchParams(WIDTH, 3, 2)
    seeds = seeds_for(f"switch-mutant:{name}:{profile}", count=4)
    for seed in seeds:
        scenario = {"kind": "random", "profile": profile, "seed": seed, "uops": UOPS}
        try:
            run_switch_amaranth(params, scenario, switch_class=MUTANTS[name])
        except ScoreboardError as caught:
            assert not isinstance(caught, NoProgressError), f"seed {seed}: {caught}"
            print(f"{name}, seed {seed}: {caught}")
            return
        print(f"{name}: seed {seed} drew a program the mutant runs correctly")
    pytest.fail(f"mutant {name} passed {len(seeds)} random programs under {profile} (seeds {seeds})")


@pytest.mark.parametrize("name", list(MUTANTS))
def test_broken_switch_fails_the_directed_program(name):
    """Deterministically, whatever the seed: each mutant breaks a promise in this program."""
    with pytest.raises(ScoreboardError) as caught:
        run_switch_amaranth(SwitchParams(WIDTH, 2, 1),
                            {"kind": "directed", "name": MUTANT_DIRECTED[name]},
                            switch_class=MUTANTS[name])
    print(f"{name}: {caught.value}")
