"""A hang explains itself, in the same words on the golden model and on the RTL.

The program is a two-stage pipeline on a 1x2 fabric of pe tiles, in0 -> ID -> ADD 1 -> out0,
compiled as it is and then given a bug: the ADD is granted only 2 of its stream's 24 firings.
It stops, its input slot fills, the ID's output backs up into that slot, the ID's own input
fills, and the host is left holding the rest of in0. Both reports must name the stopped tile,
its full slot and the tiles (and the host input) it holds up.
"""

import dataclasses
import re

import pytest

from ripple_core.pe.config import pe_config_word
from rsn.assemble import UnitProgram, assemble
from rsn.fabric_spec import parse_fabric
from rsn.graph import StreamGraph
from rsn.model import DeadlockError, FabricModel
from rsn.program import Program, compile_program

TOKENS = 24
GRANTED = 2
PE_LINE = {
    "rows": 1, "cols": 2, "tiles": ["pe pe"], "queue_depth": 2,
    # No bank and no Ripple operators: the smallest pe tile, for a short Verilator build.
    "pe": {"mem_depth": 0, "ripple_ops": False},
    "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                   {"name": "out0", "tile": [0, 1], "side": "E", "direction": "out"}],
}


def _pipeline():
    graph = StreamGraph()
    graph.add_host_in("x", "in0", TOKENS)
    graph.add_node("copy", "pe", [{"firings": TOKENS}], tile=(0, 0))
    graph.add_node("inc", "pe", [{"firings": TOKENS}], tile=(0, 1))
    graph.add_host_out("y", "out0", TOKENS)
    graph.connect("x", ("copy", 0), TOKENS)
    graph.connect(("copy", 0), ("inc", 0), TOKENS)
    graph.connect(("inc", 0), "y", TOKENS)
    values = list(range(10, 10 + TOKENS))
    memories = {"copy": {0: pe_config_word("ID", drop=(1,))},
                "inc": {0: pe_config_word("ADD", slots=("edge", "hold"), drop=(1,)), 2: 1}}
    return Program("pipeline", graph, memories=memories, host_inputs={"in0": values},
                   expected={"out0": [value + 1 for value in values]})


def _stopping_early():
    """The pipeline, compiled, with the ADD's micro-op cut to GRANTED firings: the routing and
    the image both say so, as if the program had been written with the wrong count (the checks
    cannot see it: a pe's token counts depend on the data)."""
    spec = parse_fabric(PE_LINE, "1x2 pe fabric")
    compiled = compile_program(_pipeline(), spec)
    assert FabricModel(spec).run(compiled.image, compiled.program.host_inputs).outputs["out0"] == \
        compiled.program.expected["out0"]
    routing = compiled.routing
    inc = routing.placement.tiles["inc"]
    fu_uops = {tile: [{**uop, "firings": GRANTED} for uop in uops] if tile == inc else uops
               for tile, uops in routing.fu_uops.items()}
    routing = dataclasses.replace(routing, fu_uops=fu_uops)
    units = [UnitProgram(tile, "switch", uops) for tile, uops in routing.switch_uops.items()]
    units += [UnitProgram(tile, spec.kind(tile), uops) for tile, uops in fu_uops.items()]
    memories = {routing.placement.tiles[name]: words for name, words in compiled.program.memories.items()}
    image = assemble(units, memories, queue_depth=spec.uop_queue_depth)
    return dataclasses.replace(compiled, routing=routing, image=image)


def _model_report(compiled):
    with pytest.raises(DeadlockError) as deadlock:
        FabricModel(compiled.spec).run(compiled.image, compiled.program.host_inputs)
    return deadlock.value


# Slot capacity: queue_depth 2 plus the skid buffer of the switch output in front of it (2).
# The ID fired 9 times: 2 taken by the ADD, 4 in its slot, 2 on the link, 1 in its output register.
EXPECTED_LINES = [
    "tile [0, 0] pe ID: waiting, 9 of 24 firings; slot 0 holds 4 (full); "
    "output 0 blocked by tile [0, 1] slot 0 (full, 4 tokens)",
    "tile [0, 1] pe ADD: finished, 2 of 2 firings; slot 0 holds 4 (full)",
    "host input 'in0': 13 of 24 tokens taken; blocked by tile [0, 0] slot 0 (full, 4 tokens)",
]
EXPECTED_BLOCKED = {((0, 0), (0, 1)), ("host input 'in0'", (0, 0))}


def test_the_golden_model_names_the_stopped_tile_and_whom_it_blocks():
    error = _model_report(_stopping_early())
    message = str(error)
    assert message.startswith("the program deadlocked:\n"), message
    assert [line.strip() for line in message.splitlines()[1:]] == EXPECTED_LINES
    assert error.report.lines == EXPECTED_LINES
    assert error.report.blocked == EXPECTED_BLOCKED


def _blocked_pairs(lines) -> set:
    """(blocked, blocker) read back from the report's text, as a user would."""
    pairs = set()
    for line in lines:
        who = re.match(r"(tile \[\d+, \d+\]|host input '\w+')", line)[1]
        for blocked_by in re.findall(r"blocked by ([^;]*)", line):
            blockers = re.findall(r"tile \[\d+, \d+\]|host \w+ '\w+'", blocked_by)
            pairs |= {(who, blocker) for blocker in blockers}
    return pairs


@pytest.mark.verilator
def test_the_rtl_report_of_a_hang_is_the_golden_models():
    """The Verilated fabric runs the same image until its watchdog fires, reads the diagnostic
    registers and fails with the report. Its lines equal the model's: in a state where nothing
    moves, the buffers hold what the model's channels hold (their capacities are the same), so
    even the token counts agree, under random idle and back-pressure too."""
    from rivulet.sim.fabric_run import FabricRunFailure, run_many_on_rtl

    compiled = _stopping_early()
    model = _model_report(compiled).report
    profiles = ["no_stall", "random_stall_50"]
    with pytest.raises(FabricRunFailure) as failure:
        run_many_on_rtl([compiled] * len(profiles), profiles=profiles, seeds=[1, 2], case="hang-report",
                        max_cycles=6000)
    message = str(failure.value)
    for index, profile in enumerate(profiles):
        rtl = failure.value.reports[index]
        assert rtl.blocked == model.blocked, profile
        assert rtl.lines == model.lines, profile
    assert "run 0 (pipeline): the fabric's watchdog fired at cycle " in message
    shown = [line.strip() for line in message.splitlines() if line.startswith("  ")]
    assert _blocked_pairs(shown) == {("tile [0, 0]", "tile [0, 1]"), ("host input 'in0'", "tile [0, 0]")}
