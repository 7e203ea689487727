# amaranth: UnusedElaboratable=no
"""The native top's protocol checkers fire on a fabric that breaks the stream rules, naming the
stream and the cycle; a run's memories are checked before anything is loaded."""

import tomllib

import pytest

from rivulet.sim.fabric_run import _run_config
from rivulet.sim.native.build import build_native
from rivulet.sim.native.runs import layout_run, run_native
from rivulet.sim.native.top import SimTop
from rivulet.sim.run_dirs import run_directory
from rivulet.sim.seeds import seeds_for
from rsn.fabric_spec import parse_fabric
from rsn.program import compile_program
from testbench.line_fabric import COPY_PROGRAM, LINE_FABRIC

from .mutant_fabrics import ImpatientOutput, RestlessOutput


def _line_program():
    namespace = {}
    exec(COPY_PROGRAM, namespace)
    spec = parse_fabric(tomllib.loads(LINE_FABRIC), "line fabric")
    return spec, compile_program(namespace["program"](tokens=12), spec)


def _trace_bits(trace, cycle, stream):
    bits = trace[cycle] >> (2 * stream)
    return bits & 1, (bits >> 1) & 1


@pytest.mark.verilator
@pytest.mark.parametrize("mutant, rule", [(ImpatientOutput, "valid fell at cycle"),
                                          (RestlessOutput, "payload changed from")])
def test_checkers_name_the_stream_and_cycle(mutant, rule):
    spec, compiled = _line_program()
    top = SimTop(spec, in_depth=1 << 10, out_depth=1 << 10, fabric=mutant(spec, "out0"))
    design = build_native(f"native-mutant-{mutant.__name__}", top,
                          what=f"the line fabric with {mutant.__name__}")
    seeds = seeds_for(f"native-checker:{mutant.__name__}", count=3)
    print(f"seeds {seeds}")
    runs = [_run_config(compiled, "backpressure_90", seed, 20_000)[0] for seed in seeds]
    with run_directory(f"native-mutant-{mutant.__name__}") as directory:
        records = run_native(design, runs, directory, trace=True)
    stream = next(s.index for s in top.streams if s.name == "out0")
    for seed, record in zip(seeds, records, strict=True):
        assert record["end"] == "protocol", f"seed {seed}: {record['end']}"
        assert record["error"].startswith(f"out0: {rule}"), record["error"]
        cycle = int(record["error"].split(" at cycle ")[1].split()[0])
        since = int(record["error"].rsplit("since cycle ", 1)[1].rstrip(")"))
        # The trace agrees: an offer waited from `since` without a transfer up to `cycle`.
        for waiting in range(since, cycle):
            assert _trace_bits(record["trace"], waiting, stream) == (1, 0), (seed, waiting)
        valid, _ = _trace_bits(record["trace"], cycle, stream)
        assert valid == (0 if mutant is ImpatientOutput else 1), seed
        assert len(record["trace"]) == cycle + 1, "the run ends on the cycle the rule broke"


def test_a_run_too_large_for_the_memories_is_refused():
    spec, compiled = _line_program()
    top = SimTop(spec, in_depth=16, out_depth=16)
    run, _ = _run_config(compiled, "no_stall", 1, 1000)
    with pytest.raises(ValueError, match=r"needs \d+ input and \d+ output words; this native top holds 16"):
        layout_run(top, run)
