"""Values are checked, never truncated: host inputs and memory contents that do not fit the
fabric are refused by ``compile_program`` naming the value and the limit, the boundary values
are stored modulo 2^width and run; and a short host input is named up front, by the golden
model and by the read-out helper that a hung RTL run uses."""

import dataclasses

import pytest

from rsn.checks import ProgramError
from rsn.fabric_spec import parse_fabric
from rsn.graph import StreamGraph
from rsn.model import DeadlockError, FabricModel
from rsn.program import Program, compile_program
from rsn.readout import short_host_inputs
from rsn.words import word_problem, word_range


def line_fabric(data_width: int = 32, kinds: str = "alu"):
    """One row of tiles, in0 on the west of the first and out0 on the east of the last."""
    cols = len(kinds.split())
    return parse_fabric({
        "rows": 1, "cols": cols, "tiles": [kinds], "data_width": data_width,
        "host_ports": [{"name": "in0", "tile": [0, 0], "side": "W", "direction": "in"},
                       {"name": "out0", "tile": [0, cols - 1], "side": "E", "direction": "out"}]},
        "test fabric")


def pass_through(tokens: list, declared: int | None = None) -> Program:
    """in0 -> alu (no relu, no shift, no clip) -> out0, the stream declaring ``declared`` tokens."""
    declared = len(tokens) if declared is None else declared
    graph = StreamGraph()
    graph.add_host_in("x", "in0", declared)
    graph.add_node("copy", "alu", [{"beats": declared}])
    graph.add_host_out("y", "out0", declared)
    graph.connect("x", "copy", declared)
    graph.connect("copy", "y", declared)
    return Program("pass_through", graph, host_inputs={"in0": list(tokens)})


def stored_bank(contents: dict, tokens: int = 4) -> Program:
    """A mem node streaming its first ``tokens`` words to out0."""
    graph = StreamGraph()
    graph.add_node("bank", "mem", [{"start": 0, "stride": 1, "count_i": tokens, "count_j": 1}])
    graph.add_host_out("y", "out0", tokens)
    graph.connect("bank", "y", tokens)
    return Program("stored_bank", graph, memories={"bank": contents})


def test_a_word_is_signed_or_unsigned():
    assert word_range(8) == (-128, 255)
    assert word_problem(-128, 8) is None and word_problem(255, 8) is None
    assert "does not fit 8 bits" in word_problem(256, 8)
    assert "not an integer" in word_problem(1.0, 8) and "not an integer" in word_problem(True, 8)


# --- host inputs ------------------------------------------------------------------------------

@pytest.mark.parametrize("token,message", [
    (256, r"host input 'in0' \(node 'x'\) token 1: 256 does not fit the fabric's data_width of 8 bits; "
          r"use an integer -128\.\.255 \(signed or unsigned; stored modulo 2\^8\)"),
    (-129, r"token 1: -129 does not fit the fabric's data_width of 8 bits; use an integer -128\.\.255"),
    (1.5, r"token 1: 1\.5 is a float, not an integer; use an integer -128\.\.255"),
    (2.0, r"token 1: 2\.0 is a float, not an integer"),
    (True, r"token 1: True is a bool, not an integer"),
    ("7", r"token 1: '7' is a str, not an integer"),
])
def test_host_input_values_that_do_not_fit_are_refused(token, message):
    with pytest.raises(ProgramError, match=message):
        compile_program(pass_through([0, token, 0]), line_fabric(8))


def test_host_input_boundaries_are_stored_modulo_the_width_and_run():
    compiled = compile_program(pass_through([-128, -1, 0, 255]), line_fabric(8))
    assert compiled.program.host_inputs == {"in0": [128, 255, 0, 255]}
    result = FabricModel(compiled.spec).run(compiled.image, compiled.program.host_inputs)
    assert result.outputs["out0"] == [128, 255, 0, 255]


def test_the_model_takes_host_tokens_modulo_the_width():
    """As the wire does: a program's own signed tokens give the same run as the stored words."""
    program = pass_through([-1, 5])
    compiled = compile_program(program, line_fabric(8))
    assert FabricModel(compiled.spec).run(compiled.image, program.host_inputs).outputs["out0"] == [255, 5]


@pytest.mark.parametrize("expected,message", [
    ([0, 256], r"expected output 'out0' token 1: 256 does not fit the fabric's data_width of 8 bits; use "
               r"an integer -128\.\.255 \(signed or unsigned; stored modulo 2\^8\)\. The program's "
               r"reference computes wider words than this fabric's tokens carry"),
    ([0xFFFF_FF80, 0], r"expected output 'out0' token 0: 4294967168 does not fit the fabric's data_width"),
    ([0.5, 0], r"expected output 'out0' token 0: 0\.5 is a float, not an integer"),
])
def test_expected_tokens_no_fabric_word_can_equal_are_refused(expected, message):
    """A reference computed on 32-bit words, run on an 8-bit fabric, is refused before placing,
    not reported as a mismatch after the run."""
    program = dataclasses.replace(pass_through([1, 2]), expected={"out0": expected})
    with pytest.raises(ProgramError, match=message):
        compile_program(program, line_fabric(8))


def test_expected_tokens_may_be_signed_or_unsigned_words():
    program = dataclasses.replace(pass_through([-1, 5]), expected={"out0": [-1, 5]})
    compiled = compile_program(program, line_fabric(8))
    result = FabricModel(compiled.spec).run(compiled.image, compiled.program.host_inputs)
    assert result.outputs["out0"] == [255, 5]


def test_a_short_host_input_is_refused_up_front():
    with pytest.raises(ProgramError, match=r"host input 'in0' \(node 'x'\) is short: the host gives 3 "
                                           r"tokens, but stream x\.o0 -> copy\.i0 declares 5; give 5 "
                                           r"tokens or declare 3"):
        compile_program(pass_through([1, 2, 3], declared=5), line_fabric())


def test_a_long_host_input_and_a_missing_one_are_refused():
    with pytest.raises(ProgramError, match=r"host input 'in0' \(node 'x'\) is too long: the host gives 6 "
                                           r"tokens, but stream x\.o0 -> copy\.i0 declares 5"):
        compile_program(pass_through(range(6), declared=5), line_fabric())
    program = dataclasses.replace(pass_through([1, 2]), host_inputs={})
    with pytest.raises(ProgramError, match=r"host input 'in0' \(node 'x'\) is short: the host gives 0"):
        compile_program(program, line_fabric())


def test_tokens_for_a_port_no_node_uses_are_refused():
    program = pass_through([1, 2])
    program.host_inputs["in1"] = [3]
    with pytest.raises(ProgramError, match=r"host input 'in1' is given tokens, but no host_in node of "
                                           r"the graph uses that port \(host_in ports: in0\)"):
        compile_program(program, line_fabric())


# --- a short host input on the golden model and the RTL ---------------------------------------

def test_the_golden_model_names_a_short_host_input():
    compiled = compile_program(pass_through([1, 2, 3, 4, 5]), line_fabric())
    with pytest.raises(DeadlockError, match=r"host input 'in0' is short: the host gave 3 tokens, but the "
                                            r"streams from it declare 5 \(the switch of tile \[0, 0\] "
                                            r"waits on side W for the other 2\); give the host input 5"):
        FabricModel(compiled.spec).run(compiled.image, {"in0": [1, 2, 3]})


def test_a_deadlock_with_enough_host_tokens_names_no_host_input():
    compiled = compile_program(pass_through([1, 2, 3]), line_fabric())
    assert FabricModel(compiled.spec).run(compiled.image, {"in0": [1, 2, 3]}).done


def test_short_host_inputs_names_the_input_a_hung_run_waits_for():
    program = pass_through([1, 2, 3, 4, 5])
    assert short_host_inputs(program, {"in0": 3}) == [
        "host input 'in0' (node 'x') is short: 3 tokens sent, but stream x.o0 -> copy.i0 declares 5"]
    assert short_host_inputs(program, {"in0": 5}) == []


@pytest.mark.verilator
def test_a_hung_rtl_run_names_the_short_host_input():
    """The static check is bypassed (the compiled program's input cut after compiling): the
    fabric waits for the 2 missing tokens until its watchdog fires, and the bench's count of the
    tokens it sent names the short input through rsn.readout."""
    from rivulet.sim.fabric_run import run_many_on_rtl

    compiled = compile_program(pass_through([1, 2, 3, 4, 5]), line_fabric())
    cut = dataclasses.replace(compiled, program=dataclasses.replace(compiled.program,
                                                                    host_inputs={"in0": [1, 2, 3]}))
    (rtl,) = run_many_on_rtl([cut], profiles=["no_stall"], seeds=[1], case="short-host-input",
                             max_cycles=5000, expect_stall=True)
    assert rtl.stalled_cycle is not None and rtl.done_cycle is None
    assert rtl.outputs["out0"] == [1, 2, 3]
    assert short_host_inputs(compiled.program, rtl.host_sent) == [
        "host input 'in0' (node 'x') is short: 3 tokens sent, but stream x.o0 -> copy.i0 declares 5"]


# --- memories ---------------------------------------------------------------------------------

@pytest.mark.parametrize("data_width,contents,message", [
    (8, {0: 300}, r"memory of node 'bank' \(mem\) address 0: 300 does not fit the fabric's data_width "
                  r"of 8 bits; use an integer -128\.\.255"),
    (8, {1: -200}, r"address 1: -200 does not fit the fabric's data_width of 8 bits"),
    (32, {0: 1 << 32}, r"address 0: 4294967296 does not fit the fabric's data_width of 32 bits"),
    (32, {2: 0.5}, r"address 2: 0\.5 is a float, not an integer"),
    (64, {0: 1 << 32}, r"address 0: 4294967296 does not fit a WRITE's data of 32 bits"),
    (64, {0: -1}, r"address 0: -1 is negative, but a WRITE carries 32 bits, which the 64-bit bank "
                  r"zero-extends; give the word as an unsigned 0\.\.4294967295"),
    (32, {1024: 1}, r"memory of node 'bank' \(mem\) address 1024: an address must be an integer "
                    r"0\.\.1023 \(the bank holds 1024 words, the \[mem\] table.s size\)"),
    (32, {-1: 1}, r"address -1: an address must be an integer 0\.\.1023"),
    (32, {"0": 1}, r"address '0': an address must be an integer 0\.\.1023"),
])
def test_memory_contents_that_do_not_fit_are_refused(data_width, contents, message):
    with pytest.raises(ProgramError, match=message):
        compile_program(stored_bank(contents), line_fabric(data_width, "mem"))


def test_memory_boundaries_are_stored_modulo_the_width_and_run():
    compiled = compile_program(stored_bank({0: -128, 1: 255, 2: -1, 1023: 7}), line_fabric(8, "mem"))
    assert compiled.program.memories == {"bank": {0: 128, 1: 255, 2: 255, 1023: 7}}
    result = FabricModel(compiled.spec).run(compiled.image)
    assert result.outputs["out0"] == [128, 255, 255, 0]


def test_a_wide_bank_takes_unsigned_32_bit_words():
    compiled = compile_program(stored_bank({0: (1 << 32) - 1, 1: -(1 << 31)}, tokens=2),
                               line_fabric(32, "mem"))
    assert compiled.program.memories == {"bank": {0: (1 << 32) - 1, 1: 1 << 31}}
    wide = compile_program(stored_bank({0: (1 << 32) - 1}, tokens=1), line_fabric(64, "mem"))
    assert FabricModel(wide.spec).run(wide.image).outputs["out0"] == [(1 << 32) - 1]


def test_memories_of_a_node_not_in_the_graph_are_refused():
    program = stored_bank({0: 1})
    program.memories["nowhere"] = {0: 1}
    with pytest.raises(ProgramError, match=r"memories name 'nowhere', which is not an FU node"):
        compile_program(program, line_fabric(32, "mem"))


def test_register_contents_of_other_kinds_are_32_bit_words():
    program = pass_through([1])
    program.memories["copy"] = {0x10: 1 << 32}
    with pytest.raises(ProgramError, match=r"memory of node 'copy' \(alu\) address 16: 4294967296 does "
                                           r"not fit a WRITE's data of 32 bits"):
        compile_program(program, line_fabric())
    program.memories["copy"] = {1 << 16: 0}
    with pytest.raises(ProgramError, match=r"address 65536: an address must be an integer 0\.\.65535 "
                                           r"\(registers have 16-bit addresses\)"):
        compile_program(program, line_fabric())
