"""Run-time faults on the golden model (rsn.faults, rsn.recovery; docs/faults.md): each kind is
detected the way the doc says, the host recovers by running again or by placing round the part,
and the recovered outputs equal the fault-free run's, which is the reference here."""

import random
import re

import pytest

from rivulet.cli import main
from rivulet.frontends import Options, frontend_for
from rivulet.run import recover_case
from rivulet.sim.fabric_run import run_each_on_rtl
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES
from rivulet.sim.toolchain import REPOSITORY
from rivulet.sweep.spec import fabric_description
from rsn.fabric_spec import DIRECTIONS, default_fabric, load_fabric, parse_fabric
from rsn.faults import Fault, FaultError, parse_fault
from rsn.link_fault import AT_BITS
from rsn.model import DeadlockError, FabricModel
from rsn.program import compile_program, load_program
from rsn.random_programs import random_program
from rsn.recovery import LIVELOCK_FACTOR, LIVELOCK_MARGIN, run_with_faults, step_budget
from rsn.route import switch_uop_phases

MLP = REPOSITORY / "examples" / "mlp.py"
ROOMY = parse_fabric(fabric_description({"rows": 4, "cols": 4, "tiles": "mem mac alu"}), "4x4 test fabric")


def _compile(program, spec):
    return compile_program(program, spec, seed=1)


def _used_links(compiled) -> list[tuple]:
    return sorted({(tile, DIRECTIONS[side]) for route in compiled.routing.routes
                   for tile, side in route.links})


def _host_tiles(spec) -> set:
    return {port.tile for port in spec.host_ports}


def _fault_free(compiled):
    return FabricModel(compiled.spec).run(compiled.image, compiled.program.host_inputs)


@pytest.mark.parametrize("text,message", [
    ("jam:1,1,E", "unknown kind 'jam'"),
    ("stuck:1,1", "a stuck fault names a link: a side N, E, S or W"),
    ("stuck:3,0,E", "tile [3, 0] is outside the 3x3 grid"),
    ("drop:0,0,N", "tile [0, 0] has no neighbour on side N"),
    ("stop:1,1,E", "a stop names a tile only (stop:1,1), not a side"),
    ("drop:1,1,E@0", "@0 must be a token number (from 1)"),
    ("corrupt:1,1,E@1/32", "bit 32 is outside the 32-bit token"),
    ("stuck:1,1,E/3", "/BIT applies to corrupt faults only"),
    (f"drop:1,1,E@{1 << AT_BITS}", f"@{1 << AT_BITS} is beyond what a link's fault gate counts (a route's "
                                   f"beats, at most {(1 << AT_BITS) - 1})"),
    ("stuck 1 1", "write stuck:R,C,SIDE[@N]"),
])
def test_a_fault_that_names_no_part_of_the_fabric_is_refused(text, message):
    with pytest.raises(FaultError, match=re.escape(message)):
        parse_fault(text, default_fabric())


def test_each_fault_kind_is_met_as_the_doc_says():
    """On the MLP's own links and tiles: stuck, drop and stop hang (the watchdog's report names
    the tiles), corrupt completes with other outputs, and a fault on an unused link is never met."""
    compiled = _compile(load_program(MLP), default_fabric())
    expected = _fault_free(compiled).outputs
    (tile, side), unused = _used_links(compiled)[0], None
    for link in ((t, s) for t in default_fabric().all_tiles() for s in DIRECTIONS):
        if link not in _used_links(compiled) and default_fabric().neighbour(*link) is not None:
            unused = link
            break
    for kind in ("stuck", "drop"):
        model = FabricModel(compiled.spec, faults=[Fault(kind, tile, side, 2)])
        with pytest.raises(DeadlockError) as hang:
            model.run(compiled.image, compiled.program.host_inputs)
        assert f"tile {list(tile)}" in str(hang.value) and model.faulty_links[0].hit, kind
    changed = 0         # a flipped bit may vanish (a weight against a ReLU'd zero, a shift)
    for link in _used_links(compiled):
        model = FabricModel(compiled.spec, faults=[Fault("corrupt", *link, 2, 7)])
        result = model.run(compiled.image, compiled.program.host_inputs)
        assert result.done and model.faulty_links[0].hit
        changed += result.outputs != expected
    assert changed > 0
    with pytest.raises(DeadlockError, match=re.escape(f"tile {list(tile)}")):
        FabricModel(compiled.spec, faults=[Fault("stop", tile, None, 3)]).run(compiled.image,
                                                                               compiled.program.host_inputs)
    model = FabricModel(compiled.spec, faults=[Fault("stuck", unused[0], unused[1], 0)])
    assert model.run(compiled.image, compiled.program.host_inputs).outputs == expected
    assert not model.faulty_links[0].hit


def _recover(program, faults, spec=ROOMY):
    compiled = _compile(program, spec)
    expected = _fault_free(compiled).outputs
    def check(_, result):
        return [] if result.outputs == expected else ["outputs differ from the fault-free run"]

    recovery = run_with_faults(program, spec, faults, compile_for=_compile, check=check)
    return recovery, expected


def _telling_corruption(compiled) -> Fault:
    """A corruption of a link the program uses that changes its outputs (not every one does)."""
    expected = _fault_free(compiled).outputs
    for link in _used_links(compiled):
        fault = Fault("corrupt", *link, 1, 7)
        result = FabricModel(compiled.spec, faults=[fault]).run(compiled.image, compiled.program.host_inputs)
        if result.outputs != expected:
            return fault
    raise AssertionError("no corruption of one token changes the outputs")


def test_a_transient_fault_is_detected_and_gone_on_the_second_run():
    program = load_program(MLP)
    compiled = _compile(program, ROOMY)
    for fault in (Fault("drop", *_used_links(compiled)[0], 1), _telling_corruption(compiled)):
        kind = fault.kind
        recovery, expected = _recover(program, [fault])
        assert recovery.detected and recovery.passed and recovery.how == "re-run", kind
        assert [attempt.outcome for attempt in recovery.attempts] == \
            ["hung" if kind == "drop" else "wrong outputs", "passed"]
        assert recovery.result.outputs == expected


def test_a_permanent_fault_is_placed_round():
    """A stopped tile and a stuck link the MLP uses, away from the host ports: the host excludes
    suspects until a placement runs, and its outputs are the fault-free run's."""
    program = load_program(MLP)
    compiled = _compile(program, ROOMY)
    tiles = sorted(set(compiled.routing.placement.tiles.values()) - _host_tiles(ROOMY))
    links = [link for link in _used_links(compiled) if link[0] not in _host_tiles(ROOMY)]
    for fault in (Fault("stop", tiles[0], None, 2), Fault("stuck", *links[0], 1)):
        recovery, expected = _recover(program, [fault])
        print(fault, recovery.how, [(attempt.excluded, attempt.outcome) for attempt in recovery.attempts])
        assert recovery.detected and recovery.passed and recovery.how.startswith("re-placed without"), fault
        assert recovery.result.outputs == expected
        assert recovery.attempts[1].outcome == "hung"      # the re-run met the fault again


def test_a_fault_on_a_host_ports_tile_cannot_be_placed_round():
    program = load_program(MLP)
    compiled = _compile(program, ROOMY)
    port_tiles = sorted(_host_tiles(ROOMY) & set(switch_uop_phases(compiled.routing.routes)))
    recovery, _ = _recover(program, [Fault("stop", port_tiles[0], None, 0)])
    assert recovery.detected and not recovery.passed and recovery.how == "not recovered"
    assert all(attempt.outcome != "passed" for attempt in recovery.attempts)


def test_random_programs_with_random_faults_never_pass_with_wrong_outputs():
    """Random programs on the 4x4, each with a random fault on a link or tile it uses: every run
    that passes has the fault-free outputs, and every fault away from the host ports' tiles is
    recovered from."""
    (base,) = seeds_for("faults:random", count=1)
    rng = random.Random(base)
    print(f"base seed {base}")
    done = 0
    while done < 12:
        program = random_program(rng.getrandbits(32))
        try:
            compiled = _compile(program, ROOMY)
        except ValueError:
            continue
        used_tiles = sorted(set(switch_uop_phases(compiled.routing.routes)) | set(compiled.routing.fu_uops))
        kind = rng.choice(("stuck", "drop", "corrupt", "stop"))
        if kind == "stop":
            fault = Fault(kind, rng.choice(used_tiles), None, rng.randint(0, 4))
        else:
            fault = Fault(kind, *rng.choice(_used_links(compiled)), rng.randint(1, 4), rng.randint(0, 7))
        recovery, expected = _recover(program, [fault])
        print(program.name, fault, recovery.how, len(recovery.attempts))
        if recovery.passed:
            assert recovery.result.outputs == expected, (program.name, str(fault))
        else:
            assert fault.tile in _host_tiles(ROOMY), (program.name, str(fault))
        done += 1


def test_rivulet_run_injects_a_fault_and_recovers(capsys):
    compiled = _compile(load_program(MLP), default_fabric())
    tile, side = _used_links(compiled)[0]
    assert main(["run", str(MLP), "--fault", f"drop:{tile[0]},{tile[1]},{side}@2"]) == 0
    out = capsys.readouterr().out
    assert "attempt 1 on the same placement: hung" in out and "attempt 2 on the same placement: passed" in out
    assert "passed (re-run; detected)" in out and "outputs equal the program's reference" in out
    assert main(["run", str(MLP), "--fault", "stop:1,1,E"]) == 2
    assert "a stop names a tile only" in capsys.readouterr().err
    assert main(["run", str(MLP), "--sim", "rtl", "--fault", "stop:1,1"]) == 2
    assert "--fault runs on the golden model" in capsys.readouterr().err


def test_a_livelock_is_reported_hung_within_its_step_budget():
    """Dropping the sixth token on link [1, 2] E of BFS on ripple.toml leaves tokens moving for
    ever, so no unit deadlocks. The run stops at its step budget (a few times the fault-free
    run's steps) and counts as hung; the re-run, without the transient fault, passes."""
    source = REPOSITORY / "examples" / "ripple_bfs.py"
    spec = load_fabric(REPOSITORY / "examples" / "fabrics" / "ripple.toml")
    (case,) = frontend_for(source).load(source, Options()).lower(spec)
    compiled = case.compile(case.program, spec, 1)
    budget = step_budget(compiled, spec)
    assert budget == LIVELOCK_FACTOR * _fault_free(compiled).steps + LIVELOCK_MARGIN
    recovery = recover_case(case, spec, [parse_fault("drop:1,2,E@6", spec)])
    first, second = recovery.attempts
    print(first.detail)
    assert (first.outcome, second.outcome) == ("hung", "passed") and recovery.how == "re-run"
    assert f"livelock: no completion within {budget} steps" in first.detail

SMALL = parse_fabric(fabric_description({"rows": 2, "cols": 3, "tiles": "mem mac alu alu mac mem"}),
                     "2x3 fault test fabric")


@pytest.mark.verilator
def test_the_rtl_meets_a_link_fault_as_the_golden_model_does():
    """Link faults on a fault-injection build of a 2x3 fabric (rsn.link_fault), each on a link a
    random program uses, under a random stall profile: where the golden model with the same fault
    hangs, the RTL's watchdog fires, after the cycle the fault acted; where it completes, the
    RTL's outputs are the model's (a corrupted token's effect included)."""
    (base,) = seeds_for("faults:rtl", count=1)
    rng = random.Random(base)
    programs, faults = [], []
    while len(programs) < 9:
        program = random_program(rng.getrandbits(32))
        try:
            compiled = _compile(program, SMALL)
        except ValueError:
            continue
        kind = ("stuck", "drop", "corrupt")[len(programs) % 3]
        faults.append(Fault(kind, *rng.choice(_used_links(compiled)), rng.randint(1, 3), rng.randrange(32)))
        programs.append(compiled)
    profiles = [rng.choice(list(PROFILES)) for _ in programs]
    runs = zip(programs, faults, profiles, strict=True)
    print(f"base seed {base}: " + ", ".join(f"{each.program.name} {fault} {profile}"
                                            for each, fault, profile in runs))
    results = run_each_on_rtl(programs, profiles=profiles, seeds=list(range(len(programs))),
                              case="faults-rtl", faults=faults)
    hung = 0
    for compiled, fault, rtl in zip(programs, faults, results, strict=True):
        model = FabricModel(SMALL, faults=[fault])
        try:
            expected = model.run(compiled.image, compiled.program.host_inputs).outputs
        except DeadlockError:
            expected = None
        label = f"{compiled.program.name} {fault}"
        if expected is None:
            assert isinstance(rtl, str) and "watchdog fired" in rtl, (label, rtl)
            hung += 1
        else:
            assert not isinstance(rtl, str), (label, rtl)
            ports = set(rtl.outputs) | {port for port, tokens in expected.items() if tokens}
            assert {port: rtl.outputs.get(port, []) for port in ports} == \
                {port: expected.get(port, []) for port in ports}, label
            assert (rtl.fault_cycle is not None) == model.faulty_links[0].hit, label
    assert hung > 0
