"""Switch scenarios for both simulator tiers: random programs, the golden model's prediction, the
scoreboard, a fixed-latency scenario, and switches broken on purpose.

A scenario is a small JSON-able dict (``{"kind": "random", "profile": ..., "seed": ...}`` or
``{"kind": "latency", ...}``), so the Amaranth tier and the cocotb module build the very same
bench from it.

**Race-free programs.** The switch semantics fix which tokens a route carries only if a route
never joins an input while an earlier route still drains it from a different output: it would
join that input's stream wherever the earlier route has got to. So every micro-op that reads
input ``k`` either enables every output on which the previous reader of ``k`` read it (in-order
issue then starts it after that reader ended), or reads ``k`` only on some of those outputs (each
of which took the previous reader's last token, and must not take it twice). Each input's tokens
then split into consecutive segments, one per reading micro-op, and every output's token
sequence is independent of timing (``test_generated_programs_are_race_free`` checks this on the
golden model under random schedules).
"""

import functools
import json
import random
from dataclasses import astuple, dataclass, field

from amaranth.hdl import Const, Shape, Value, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In

from rivulet.sim.amaranth_sim import AmaranthDesign, run_in_amaranth
from rivulet.sim.seeds import base_seed
from rivulet.sim.streams import (
    PROFILES,
    ScoreboardError,
    SinkDriver,
    SourceDriver,
    StreamBench,
    port_paths,
    stream_ports,
)
from rivulet.sim.verilator import build_design, run_cocotb, run_directory
from rivulet.sim.wrappers import member_value
from rsn.channels import Channel
from rsn.isa import LINK_BEATS_BITS, SWITCH_OUTPUTS, SwitchUop, encode
from rsn.switch import Switch
from rsn.switch_model import SwitchModel

__all__ = ["SwitchParams", "Program", "random_program", "latency_program", "directed_program",
           "DIRECTED", "segment_view", "model_outputs", "SwitchChecker", "LatencyChecker",
           "make_switch_bench", "FlatUopSwitch", "MUTANTS", "scenario_name", "CONFIGS", "UOP_BITS",
           "SETTLE_CYCLES", "run_switch_amaranth", "run_switch_verilator"]

UOP_BITS = Shape.cast(SwitchUop).width
BEATS_MODULUS = 1 << LINK_BEATS_BITS    # the beat counters wrap there (rsn.isa)
CONFIGS = [(2, 1), (3, 2)]          # (n_fu_in, n_fu_out)
SETTLE_CYCLES = 3                   # cycles a bench runs on after the last expected token


@dataclass(frozen=True)
class SwitchParams:
    width: int
    n_fu_in: int
    n_fu_out: int
    pass_through: tuple = ()        # outputs that pass through (rsn.switch.Switch)

    @property
    def n_inputs(self) -> int:
        return 4 + self.n_fu_out

    @property
    def n_outputs(self) -> int:
        return 4 + self.n_fu_in

    def build(self, cls=Switch):
        return cls(self.width, self.n_fu_in, self.n_fu_out, pass_through=self.pass_through)

    def latency(self, output: int) -> int:
        return Switch.PASS_LATENCY if output in self.pass_through else Switch.LATENCY

    def selectable(self, output: int, input_: int) -> bool:
        """A pass-through side output takes no U-turn (rsn.switch.Switch.selectable)."""
        return not (output in self.pass_through and output < 4 and input_ == output)

    def model(self) -> SwitchModel:
        return SwitchModel(self.n_fu_in, self.n_fu_out)


@dataclass
class Program:
    """Clean micro-ops (what the model gets), their bodies as the RTL gets them (with junk in the
    fields it must ignore), and the tokens each input's source sends."""
    uops: list[dict]
    bodies: list[int]
    tokens: list[list[int]]
    last_index: int | None = None           # the micro-op marked ``last``, if any
    static_outputs: frozenset = frozenset()


# ---------------------------------------------------------------------------------------------
# Programs

@dataclass
class _Generator:
    """Random race-free micro-op programs; ``prev[k]`` = outputs the last reader of k read it on."""
    rng: random.Random
    params: SwitchParams
    prev: list = field(default_factory=list)
    recent: list = field(default_factory=list)

    def __post_init__(self):
        self.prev = [frozenset() for _ in range(self.params.n_inputs)]

    def beats(self) -> int:
        return self.rng.choice([1, 1, 2, 3, 4, 4, 5, 6, 8, 12])

    def uop(self) -> dict:
        """Routes from 1-3 inputs; multicast and reuse of recently used outputs are common.

        Each input is read in one of three race-free ways: *cover* (enable every output the
        previous reader read it on, so this micro-op starts after that reader ended), *narrow*
        (read it only on some of those outputs, each of which starts after it has carried the
        previous reader's last token; the others may still be taking that token) or *fenced*
        (read it on any outputs, the micro-op marked ``fence``, so it starts only once every
        counted route has ended).
        """
        rng, n_out = self.rng, self.params.n_outputs
        if rng.random() < 0.05:
            return {"beats": self.beats(), "enable": 0, "select": [0] * SWITCH_OUTPUTS}
        wanted = rng.sample(range(self.params.n_inputs), rng.choice([1, 1, 2, 2, 3]))
        if any(self.prev[k] for k in wanted) and rng.random() < 0.15:
            select = {}
            for k in wanted:
                for j in rng.sample(range(n_out), rng.choice([1, 1, 2])):
                    select.setdefault(j, k)
            uop = self.routes(select, self.beats())
            uop["fence"] = 1
            return uop
        narrow = [k for k in wanted if self.prev[k] and rng.random() < 0.3]
        cover = [k for k in wanted if k not in narrow]
        select = {}
        for k in narrow:
            for j in rng.sample(sorted(self.prev[k]), rng.randint(1, len(self.prev[k]))):
                select.setdefault(j, k)
        if cover:
            for k in cover:
                for j in self.prev[k]:
                    select.setdefault(j, rng.choice(cover))
            for _ in range(rng.choice([0, 1, 1, 2])):
                pool = [j for j in (self.recent if rng.random() < 0.6 else range(n_out))
                        if j not in select]
                if pool:
                    select[rng.choice(pool)] = rng.choice(cover)
            if not select:
                select[rng.randrange(n_out)] = cover[0]
        return self.routes(select, self.beats())

    def routes(self, select: dict, beats: int) -> dict:
        # A pass-through output takes no U-turn: such a route is dropped, and since the micro-op
        # then may not name every output an earlier reader of its inputs used, it is fenced.
        uturns = [j for j, k in select.items() if not self.params.selectable(j, k)]
        select = {j: k for j, k in select.items() if j not in uturns}
        for k in set(select.values()):
            self.prev[k] = frozenset(j for j, chosen in select.items() if chosen == k)
        self.recent = list(select)
        uop = _route(beats, select)
        if uturns:
            uop["fence"] = 1
        return uop

    def static_uop(self) -> dict:
        """A route that never ends; nothing after it may need its input or outputs."""
        k = self.rng.randrange(self.params.n_inputs)
        outputs = set(self.prev[k]) or {self.rng.randrange(self.params.n_outputs)}
        if self.rng.random() < 0.5:
            outputs.add(self.rng.randrange(self.params.n_outputs))
        return self.routes({j: k for j in outputs}, 0)


def _with_junk(rng: random.Random, params: SwitchParams, uop: dict) -> int:
    """The body the RTL gets: enable bits beyond the switch's outputs, selects of disabled outputs
    and the reserved bits are random, since the hardware must ignore them."""
    select = [uop["select"][j] if uop["enable"] >> j & 1 else rng.randrange(8)
              for j in range(SWITCH_OUTPUTS)]
    junk_enable = rng.getrandbits(SWITCH_OUTPUTS) & ~((1 << params.n_outputs) - 1)
    body = encode(SwitchUop, {**uop, "select": select, "enable": uop["enable"] | junk_enable})
    reserved = dict(SwitchUop)["reserved"]
    return body | rng.getrandbits(reserved.width) << reserved.offset


def _features(params: SwitchParams, uops: list[dict]) -> set[str]:
    """What the mutants need to show up: a multi-beat route handed over on its output to a
    route from another input, and a multi-beat multicast."""
    found, holder = set(), {}
    for uop in uops:
        enabled = [j for j in range(params.n_outputs) if uop["enable"] >> j & 1]
        inputs = [uop["select"][j] for j in enabled]
        if uop["beats"] >= 4 and len(inputs) != len(set(inputs)):
            found.add("multicast")
        for j in enabled:
            before = holder.get(j)
            if before is not None and before[1] >= 2 and before[0] != uop["select"][j]:
                found.add("handover")
            holder[j] = (uop["select"][j], uop["beats"])
    return found


def random_program(params: SwitchParams, seed: int, n_uops: int = 12) -> Program:
    """A random race-free program with multicast, in-order conflicts and sometimes a static tail;
    its tokens are unique random ``width``-bit values."""
    rng = random.Random(seed)
    while True:
        generator = _Generator(rng, params)
        uops = [generator.uop() for _ in range(n_uops)]
        if _features(params, uops) >= {"multicast", "handover"}:
            break
    last_index = max(index for index, uop in enumerate(uops) if uop["enable"])
    static = rng.random() < 0.5
    if static:
        uops.append(generator.static_uop())
        if rng.random() < 0.3:          # a static route marked last: finished once it issues
            last_index = len(uops) - 1
    uops[last_index]["last"] = 1
    extra = rng.randint(1, 8) if static else 0
    program = Program(uops, [_with_junk(rng, params, uop) for uop in uops],
                      _tokens(rng, params, uops, extra), last_index)
    if static:
        program.static_outputs = frozenset(_enabled(params, uops[-1]))
    return program


def latency_program(params: SwitchParams, source: int, sink: int, beats: int, seed: int) -> Program:
    """One route from input ``source`` to output ``sink``, marked last."""
    rng = random.Random(seed)
    uop = _route(beats, {sink: source}, last=1)
    return Program([uop], [encode(SwitchUop, uop)], _tokens(rng, params, [uop], 0), 0)


def _route(beats: int, routes: dict, last: int = 0) -> dict:
    """A micro-op from ``{output: input}``."""
    return {"beats": beats, "enable": sum(1 << j for j in routes), "last": last,
            "select": [routes.get(j, 0) for j in range(SWITCH_OUTPUTS)]}


# Directed programs: (micro-ops, stall profile). Each is deterministic under its profile.
DIRECTED = {
    # o1's buffer fills (all sinks blocked for 48 cycles), so o0 alone takes i0's first token,
    # ends its route and is routed to i0 again while that token waits for o1: o0 must wait for
    # the next token, not take the same one twice.
    "reroute_before_retire": ([_route(2, {1: 1}), _route(1, {0: 0, 1: 0}), _route(1, {0: 0}, last=1)],
                              "blocked_then_free"),
    # Two routes in a row on one output, no stalls: shows the one-cycle bubble between them.
    "back_to_back": ([_route(4, {0: 0}), _route(4, {0: 0}, last=1)], "no_stall"),
    # i0 to o0 for 4 beats, then i0 to o1 behind a fence while every sink is blocked for 48
    # cycles: o1 must wait for o0's route to end and take only the next 3 tokens of i0.
    "fence_diverges": ([_route(4, {0: 0}), {**_route(3, {1: 0}, last=1), "fence": 1}], "blocked_then_free"),
}


def directed_program(params: SwitchParams, name: str, seed: int) -> tuple[Program, str]:
    uops, profile = DIRECTED[name]
    rng = random.Random(seed)
    uops = [dict(uop) for uop in uops]
    last = max(index for index, uop in enumerate(uops) if uop["last"])
    return Program(uops, [encode(SwitchUop, uop) for uop in uops], _tokens(rng, params, uops, 0),
                   last), profile


def _enabled(params: SwitchParams, uop: dict) -> list[int]:
    return [j for j in range(params.n_outputs) if uop["enable"] >> j & 1]


def _tokens(rng, params: SwitchParams, uops, static_extra: int) -> list[list[int]]:
    """Each reading micro-op takes ``beats`` tokens of each input it reads (a static one, the
    extra ones); values are unique, so any misrouted or repeated token shows."""
    counts = [0] * params.n_inputs
    for uop in uops:
        for k in {uop["select"][j] for j in _enabled(params, uop)}:
            counts[k] += uop["beats"] or static_extra
    if sum(counts) > 1 << (params.width - 1):
        raise ValueError(f"width {params.width} is too narrow for {sum(counts)} unique tokens")
    seen, tokens = set(), []
    for count in counts:
        values = []
        while len(values) < count:
            value = rng.getrandbits(params.width)
            if value not in seen:
                seen.add(value)
                values.append(value)
        tokens.append(values)
    return tokens


@dataclass(frozen=True)
class Expected:
    token: int
    uop: int
    input: int
    beat: int
    beats: int

    def describe(self) -> str:
        of = f"beat {self.beat + 1} of {self.beats}" if self.beats else f"static beat {self.beat + 1}"
        return f"{self.token:#x} (micro-op #{self.uop}, from input {self.input}, {of})"


def segment_view(params: SwitchParams, program: Program) -> list[list[Expected]]:
    """Each output's tokens as a compiler sees a race-free program: every micro-op reading input
    ``k`` takes the next ``beats`` tokens of ``k`` (a static route, all that are left)."""
    position = [0] * params.n_inputs
    expected = [[] for _ in range(params.n_outputs)]
    for index, uop in enumerate(program.uops):
        enabled = _enabled(params, uop)
        for k in sorted({uop["select"][j] for j in enabled}):
            count = uop["beats"] or len(program.tokens[k]) - position[k]
            segment = program.tokens[k][position[k]:position[k] + count]
            position[k] += count
            for j in enabled:
                if uop["select"][j] == k:
                    expected[j] += [Expected(token, index, k, beat, uop["beats"])
                                    for beat, token in enumerate(segment)]
    return expected


def model_outputs(params: SwitchParams, program: Program, rng: random.Random | None = None):
    """Run the golden model to quiescence; return (model, tokens per output).

    With ``rng``, micro-ops arrive at random moments, each step finds a random set of outputs
    blocked and outputs are drained at random moments, so the model runs under a random
    schedule (used to show that a program's outcome does not depend on timing).
    """
    model = params.model()
    waiting = list(program.uops)
    if not rng:
        model.load(waiting)
        waiting = []
    inputs = [Channel(f"i{k}", len(tokens) + 1) for k, tokens in enumerate(program.tokens)]
    for channel, tokens in zip(inputs, program.tokens, strict=True):
        for token in tokens:
            channel.push(token)
    outputs = [Channel(f"o{j}", 1 << 30) for j in range(params.n_outputs)]
    received = [[] for _ in range(params.n_outputs)]

    def drain(channels):
        for channel in channels:
            while channel.can_pop():
                received[outputs.index(channel)].append(channel.pop())

    while True:
        if rng:
            if waiting and rng.random() < 0.3:
                model.load([waiting.pop(0)])
            drain(rng.sample(outputs, rng.randint(0, len(outputs))))
            for channel in outputs:
                channel.capacity = len(channel.tokens) + (rng.random() < 0.5)
        if model.step(inputs, outputs):
            continue
        for channel in outputs:
            channel.capacity = 1 << 30
        if waiting:
            model.load([waiting.pop(0)])
        elif not model.step(inputs, outputs):
            break
    drain(outputs)
    return model, received


# ---------------------------------------------------------------------------------------------
# Scoreboard

def _expect(condition: bool, message: str):
    if not condition:
        raise ScoreboardError(message)


class SwitchChecker:
    """Every output's token sequence against the prediction, plus what the ports show each cycle.

    Per cycle: ``beats[j]`` equals the transfers seen on ``o[j]`` before this cycle; ``finished``
    stays low until the ``last`` micro-op has been accepted, and when high every output of that
    micro-op has delivered all but at most two (its skid buffer) of its tokens; ``busy`` is high
    while a micro-op waits or an output owes, for accepted counted micro-ops, more tokens than its
    buffer can hold; ``progress`` is high in
    every cycle a data token moves. At the end: sequences, beat counters, ``finished``, ``busy``.
    """

    def __init__(self, params: SwitchParams, program: Program):
        self.params, self.program = params, program
        self.expected = segment_view(params, program)
        self.model, predicted = model_outputs(params, program)
        for j, (segments, tokens) in enumerate(zip(self.expected, predicted, strict=True)):
            _expect([e.token for e in segments] == tokens,
                    f"bench bug: the golden model and the segment view disagree on o[{j}]; "
                    f"the program is not race-free")
        self.received = [[] for _ in range(params.n_outputs)]
        self.accepted_uops = 0
        self.sample = None
        self.settled = 0
        last = program.last_index
        self.last_outputs = set() if last is None else set(_enabled(params, program.uops[last]))
        # A static route never ends, so `finished` does not wait for its tokens.
        self.owed_at_last = {j: sum(1 for e in self.expected[j]
                                    if e.uop <= last and program.uops[e.uop]["beats"])
                             for j in self.last_outputs} if last is not None else {}

    def on_cycle(self, cycle, sample, transfers):
        self.sample = sample
        self._check_counters(cycle, sample)
        self._check_status(cycle, sample, transfers)
        for j in range(self.params.n_outputs):
            if f"o__{j}" in transfers:
                self._check_token(cycle, j, transfers[f"o__{j}"])
        if "uop" in transfers:
            self.accepted_uops += 1
        self.settled = self.settled + 1 if self._all_received() else 0

    def _check_counters(self, cycle, sample):
        for j, tokens in enumerate(self.received):
            _expect(sample[f"beats__{j}"] == len(tokens) % BEATS_MODULUS,
                    f"cycle {cycle}: beats[{j}] is {sample[f'beats__{j}']}, but o[{j}] has "
                    f"carried {len(tokens)} tokens")

    def _check_status(self, cycle, sample, transfers):
        last = self.program.last_index
        if sample["finished"]:
            _expect(last is not None and self.accepted_uops > last,
                    f"cycle {cycle}: finished is high, but the last micro-op (#{last}) has not "
                    f"been accepted ({self.accepted_uops} accepted before this cycle)")
            for j in self.last_outputs:
                _expect(len(self.received[j]) >= self.owed_at_last[j] - 2,
                        f"cycle {cycle}: finished is high, but o[{j}] has delivered "
                        f"{len(self.received[j])} of the {self.owed_at_last[j]} tokens up to the "
                        f"last micro-op; at most 2 can wait in its buffer")
        owing = [j for j in range(self.params.n_outputs)
                 if self._owed(j) - len(self.received[j]) > 2]
        _expect(sample["busy"] or not owing,
                f"cycle {cycle}: busy is low, but outputs {owing} still owe more tokens of "
                f"accepted micro-ops than their buffers hold")
        _expect(sample["busy"] or not sample["uop__valid"],
                f"cycle {cycle}: busy is low while a micro-op waits")
        moved = [prefix for prefix in transfers if prefix != "uop"]
        _expect(sample["progress"] or not moved,
                f"cycle {cycle}: tokens moved on {moved}, but progress is low")

    def _owed(self, j) -> int:
        """Tokens output j carries for the counted micro-ops accepted so far (a static route does
        not keep the switch busy)."""
        return sum(1 for e in self.expected[j]
                   if e.uop < self.accepted_uops and self.program.uops[e.uop]["beats"])

    def _check_token(self, cycle, j, token):
        index = len(self.received[j])
        _expect(index < len(self.expected[j]),
                f"cycle {cycle}: o[{j}] carries {token:#x}, but it should carry only "
                f"{len(self.expected[j])} tokens; the last was {self._describe(j, -1)}")
        want = self.expected[j][index]
        _expect(token == want.token,
                f"cycle {cycle}: o[{j}] token #{index} is {token:#x} ({self._origin(token)}), "
                f"expected {want.describe()}")
        self.received[j].append(token)

    def _describe(self, j, index):
        return self.expected[j][index].describe() if self.expected[j] else "none"

    def _origin(self, token) -> str:
        for k, tokens in enumerate(self.program.tokens):
            if token in tokens:
                return f"token #{tokens.index(token)} of input {k}"
        return "no input's token"

    def _all_received(self) -> bool:
        return all(len(got) >= len(want) for got, want in zip(self.received, self.expected,
                                                                strict=True))

    def complete(self):
        return self._all_received() and self.settled >= SETTLE_CYCLES

    def progress(self):
        counts = ", ".join(f"o[{j}] {len(got)}/{len(want)}" for j, (got, want)
                           in enumerate(zip(self.received, self.expected, strict=True)))
        return f"accepted {self.accepted_uops}/{len(self.program.uops)} micro-ops; {counts}"

    def finish(self):
        for j, (got, want) in enumerate(zip(self.received, self.expected, strict=True)):
            _expect(got == [e.token for e in want], f"o[{j}] sequence differs from the prediction")
            _expect(self.model.beats[j] == len(got) % BEATS_MODULUS,
                    f"the model counts {self.model.beats[j]} beats on o[{j}], the ports {len(got)}")
        sample = self.sample
        for j in range(self.params.n_outputs):
            _expect(sample[f"beats__{j}"] == self.model.beats[j],
                    f"at the end beats[{j}] is {sample[f'beats__{j}']}, expected "
                    f"{self.model.beats[j]}")
        _expect(bool(sample["finished"]) == self.model.finished,
                f"at the end finished is {sample['finished']}, the model says "
                f"{int(self.model.finished)}")
        _expect(bool(sample["busy"]) == self.model.busy,
                f"at the end busy is {sample['busy']}, the model says {int(self.model.busy)} "
                f"(static routes on {sorted(self.program.static_outputs)})")


class LatencyChecker(SwitchChecker):
    """One route, no stalls: exact timing. The micro-op is accepted in cycle 0, its route is
    active from cycle 1, input tokens are accepted in consecutive cycles from 1, and each leaves
    ``Switch.LATENCY`` cycles after it was accepted."""

    def __init__(self, params, program, source: int, sink: int):
        super().__init__(params, program)
        self.source, self.sink = source, sink
        self.accepted_at = {}
        self.uop_cycle = None

    def on_cycle(self, cycle, sample, transfers):
        super().on_cycle(cycle, sample, transfers)
        if "uop" in transfers:
            self.uop_cycle = cycle
        if f"i__{self.source}" in transfers:
            self.accepted_at[transfers[f"i__{self.source}"]] = cycle
        if f"o__{self.sink}" in transfers:
            token = transfers[f"o__{self.sink}"]
            latency = cycle - self.accepted_at[token]
            expected = self.params.latency(self.sink)
            _expect(latency == expected,
                    f"cycle {cycle}: token {token:#x} left o[{self.sink}] {latency} cycles after "
                    f"i[{self.source}] accepted it; the output's latency is {expected}")

    def finish(self):
        super().finish()
        _expect(self.uop_cycle == 0, f"the micro-op was accepted in cycle {self.uop_cycle}, not 0")
        cycles = [self.accepted_at[token] for token in self.program.tokens[self.source]]
        _expect(cycles == list(range(1, 1 + len(cycles))),
                f"i[{self.source}] accepted tokens in cycles {cycles}; expected one per cycle "
                f"from cycle 1")


# ---------------------------------------------------------------------------------------------
# Benches

def scenario_name(scenario: dict) -> str:
    if scenario["kind"] == "random":
        return f"{scenario['profile']}-seed{scenario['seed']}"
    if scenario["kind"] == "latency":
        return f"latency-i{scenario['source']}-o{scenario['sink']}"
    return scenario["name"]


def make_switch_bench(params: SwitchParams, ports, extra, scenario: dict) -> tuple[StreamBench, int]:
    """The bench of one scenario and a generous cycle budget for it."""
    if scenario["kind"] == "random":
        program = random_program(params, scenario["seed"], scenario.get("uops", 12))
        checker = SwitchChecker(params, program)
        profile = PROFILES[scenario["profile"]]
    elif scenario["kind"] == "latency":
        program = latency_program(params, scenario["source"], scenario["sink"], scenario["beats"],
                                  scenario["seed"])
        checker = LatencyChecker(params, program, scenario["source"], scenario["sink"])
        profile = PROFILES["no_stall"]
    elif scenario["kind"] == "directed":
        program, profile_name = directed_program(params, scenario["name"], scenario.get("seed", 0))
        checker = SwitchChecker(params, program)
        profile = PROFILES[profile_name]
    else:
        raise ValueError(f"unknown switch scenario {scenario!r}")
    rng = random.Random(json.dumps(scenario, sort_keys=True))
    payloads = {"uop": program.bodies, **{f"i__{k}": tokens for k, tokens in enumerate(program.tokens)}}
    sources = [SourceDriver(port, payloads[port.prefix], profile.idle, random.Random(rng.getrandbits(64)))
               for port in ports if port.into_design]
    sinks = [SinkDriver(port, profile.backpressure, random.Random(rng.getrandbits(64)))
             for port in ports if not port.into_design]
    bench = StreamBench(ports, sources, sinks, checker, extra)
    tokens = sum(len(e) for e in checker.expected) + len(program.uops)
    return bench, 40 * tokens + 500


class FlatUopSwitch(wiring.Component):
    """A switch whose ``uop.payload`` is plain bits, with the same port names.

    ``rivulet/sim/amaranth_sim.py`` sets payloads with integers, which Amaranth refuses for a
    struct-layout view such as ``SwitchUop``; the Verilog ports are plain bit vectors anyway.
    """

    def __init__(self, switch: Switch):
        self.switch = switch
        members = dict(switch.signature.members)
        members["uop"] = In(stream.Signature(unsigned(UOP_BITS)))
        super().__init__(members)

    def elaborate(self, platform):
        from amaranth.hdl import Module
        m = Module()
        m.submodules.switch = self.switch
        for path, member in port_paths(self.signature):
            outer = Value.cast(member_value(self, path))
            inner = Value.cast(member_value(self.switch, path))
            m.d.comb += inner.eq(outer) if member.flow == wiring.In else outer.eq(inner)
        return m


def run_switch_amaranth(params: SwitchParams, scenario: dict, *,
                        switch_class=Switch) -> StreamBench:
    """Run one scenario in Amaranth's simulator; return the bench (its transfers and cycles)."""
    design = _switch_design(params, switch_class)
    ports, extra = stream_ports(design.component.switch)
    bench, max_cycles = make_switch_bench(params, ports, extra, scenario)
    run_in_amaranth(design, bench, max_cycles=max_cycles)
    return bench


@functools.cache
def _switch_design(params: SwitchParams, switch_class) -> AmaranthDesign:
    """One simulator per switch for every scenario run on it, each from reset."""
    return AmaranthDesign(FlatUopSwitch(params.build(switch_class)))


def run_switch_verilator(params: SwitchParams, scenarios: list[dict], *, case: str,
                         switch_class=Switch) -> list[dict]:
    """Build the switch once with Verilator and run every scenario on it, one cocotb test each.

    Returns one record per passing scenario (with its cycles and output tokens).
    """
    switch = params.build(switch_class)
    ports, extra = stream_ports(switch)
    config = {"params": {"width": params.width, "n_fu_in": params.n_fu_in,
                         "n_fu_out": params.n_fu_out, "pass_through": list(params.pass_through)},
              "ports": [astuple(port) for port in ports], "extra": extra,
              "scenarios": scenarios, "base_seed": base_seed()}
    name = "rsn-switch" if switch_class is Switch else f"rsn-{switch_class.__name__}"
    passing = "-pt" + "".join(map(str, sorted(params.pass_through))) if params.pass_through else ""
    built = build_design(f"{name}-w{params.width}-fi{params.n_fu_in}-fo{params.n_fu_out}{passing}", switch)
    with run_directory(case) as directory:
        summary = directory / "summary.jsonl"
        run_cocotb(built, "testbench.rsn.tb_switch", directory,
                   {"RIVULET_SWITCH_BENCH": json.dumps(config), "RIVULET_BENCH_SUMMARY": str(summary)})
        return [json.loads(line) for line in summary.read_text().splitlines()]


# ---------------------------------------------------------------------------------------------
# Mutants: each breaks one rule of the switch; the scoreboard must catch it.

class EarlyEndSwitch(Switch):
    """Ignores the last beat: a route of two or more beats ends one token early."""

    def _route_ends(self, remaining):
        return (remaining == 1) | (remaining == 2)


class RepeatingMulticastSwitch(Switch):
    """Forgets which multicast outputs already took the token: a fast output takes it again."""

    def _offer(self, selected_valid, taken):
        return selected_valid


class GreedyIssueSwitch(Switch):
    """Issues the head micro-op without waiting for its outputs to be idle."""

    def _can_issue(self, enable, active):
        return Const(1, 1)


class FenceIgnoringSwitch(Switch):
    """Issues a fenced micro-op as an unfenced one."""

    def _fence_holds(self, fence, counted):
        return Const(0, 1)


MUTANTS = {
    "early_end": EarlyEndSwitch,
    "repeating_multicast": RepeatingMulticastSwitch,
    "greedy_issue": GreedyIssueSwitch,
    "ignores_fence": FenceIgnoringSwitch,
}
# The directed program each mutant fails whatever the seed.
MUTANT_DIRECTED = {"early_end": "reroute_before_retire", "repeating_multicast": "reroute_before_retire",
                   "greedy_issue": "reroute_before_retire", "ignores_fence": "fence_diverges"}
