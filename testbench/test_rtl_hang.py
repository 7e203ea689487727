"""A hang on the RTL names the short host input, as the golden model does: the bench's count of
the tokens each host input sent reaches ``rivulet run``'s message through rsn.readout."""

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from rivulet.errors import RunMismatch
from rivulet.frontends import Case
from rivulet.run import run_program
from rsn.fabric_spec import load_fabric
from rsn.program import compile_program
from testbench.line_fabric import line_files


def _cut_after_compiling(tokens: list[int]):
    """A compile that keeps only ``tokens`` of the host input: the static check, which refuses
    a short input up front, has passed by then, as with data-dependent token counts."""
    def compile_cut(program, spec, seed):
        compiled = compile_program(program, spec, seed=seed)
        return dataclasses.replace(compiled, program=dataclasses.replace(
            compiled.program, host_inputs={"in0": tokens}))
    return compile_cut


@pytest.mark.verilator
def test_a_hung_run_names_the_short_host_input(tmp_path):
    fabric, program_file = line_files(tmp_path)
    namespace = {}
    exec(program_file.read_text(), namespace)
    program = namespace["program"](tokens=5)
    case = Case(program.name, program, compile=_cut_after_compiling([1, 2, 3]))
    with pytest.raises(RunMismatch) as mismatch:
        run_program(case, load_fabric(fabric), sim="rtl", profile="no_stall", say=lambda line: None)
    message = str(mismatch.value)
    assert message.startswith("RTL: copy: host input 'in0' (node 'x') is short: 3 tokens sent, but stream "
                              "x.o0 -> copy.i0 declares 5; the fabric's watchdog fired at cycle "), message
    log = Path(re.search(r"\(log: (\S+/sim\.log)\)$", message)[1])
    assert log.exists()                     # a failed run keeps its directory, for the log
    shutil.rmtree(log.parent)
