# amaranth: UnusedElaboratable=no
"""The Verilated board top driven over its UART pins by the host driver (board/host.py):
programs load, run and read back the same results as the golden model."""

import json
import random

import pytest

from board.top import BoardTop
from rivulet.sim.seeds import seeds_for
from rivulet.sim.verilator import build_design, run_cocotb, run_directory
from rsn.model import FabricModel
from testbench.board.programs import SIM_BAUD, SIM_CLOCK_HZ, board_program, board_spec

SHAPES = ["two_lanes", "write_then_read", "pass_through"]


@pytest.mark.parametrize(("clock_hz", "baud", "match"), [
    (1_000_000, 115_200, r"clock_hz=1000000 and baud=115200.*3\.5%"),
    (300_000, 115_200, r"clock_hz=300000 and baud=115200.*at least 4"),
    (0, 115_200, r"clock_hz=0"),
])
def test_board_top_refuses_a_bad_baud_rate(clock_hz, baud, match):
    with pytest.raises(ValueError, match=match):
        BoardTop(board_spec(), clock_hz=clock_hz, baud=baud)


@pytest.mark.parametrize(("clock_hz", "baud", "divisor"), [
    (12_000_000, 115_200, 104), (25_000_000, 115_200, 217), (SIM_CLOCK_HZ, SIM_BAUD, 8)])
def test_board_top_divisor(clock_hz, baud, divisor):
    assert BoardTop(board_spec(), clock_hz=clock_hz, baud=baud).clocks_per_bit == divisor


@pytest.mark.verilator
@pytest.mark.long(1)
def test_programs_over_uart_match_golden_model():
    seeds = seeds_for("board:uart", count=len(SHAPES))
    print(f"seeds {seeds}")
    runs = []
    for shape, seed in zip(SHAPES, seeds, strict=True):
        rng = random.Random(seed)
        runs.append({"shape": shape, "program_seed": rng.getrandbits(32), "idle_seed": rng.getrandbits(32),
                     "idle": rng.choice([0.0, 0.3, 1.0]), "max_idle": rng.choice([20, 200])})
    top = BoardTop(board_spec(), clock_hz=SIM_CLOCK_HZ, baud=SIM_BAUD, n_leds=5)
    case = "board-uart"
    design = build_design("board-top-2x2", top, wrap=False)
    with run_directory(case) as directory:
        result_path = directory / "result.jsonl"
        run_cocotb(design, "testbench.board.tb_board", directory, {
            "RIVULET_BOARD_RUN": json.dumps({"runs": runs, "clocks_per_bit": top.clocks_per_bit}),
            "RIVULET_BOARD_RESULT": str(result_path)})
        records = sorted((json.loads(line) for line in result_path.read_text().splitlines()),
                         key=lambda record: record["index"])
    assert len(records) == len(runs)
    for run, record in zip(runs, records, strict=True):
        compiled = board_program(run["shape"], run["program_seed"])
        what = f"{compiled.program.name} (idle {run['idle']}, seed {run['idle_seed']})"
        model = FabricModel(compiled.spec).run(compiled.image, compiled.program.host_inputs)
        assert model.done
        for port, tokens in model.outputs.items():
            assert record["outputs"].get(port, []) == tokens, f"{what}: host port {port}"
        assert any(record["outputs"].values()), what
        for tile, firings in record["firings"]:
            assert firings == model.firings[tuple(tile)], f"{what}: firings of tile {tile}"
        for tile, beats in record["link_beats"]:
            assert beats == model.link_beats[tuple(tile)], f"{what}: link beats of tile {tile}"
        assert record["fabric_cycles"] > 0
        words = record["frames_sent"]
        print(f"{what}: {words} frames to the board, {record['sim_cycles']} cycles, "
              f"{record['sim_cycles'] / words:.0f} cycles per host word")
