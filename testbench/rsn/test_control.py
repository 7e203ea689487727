"""The control plane (Dispenser + a chain of TileControls) against the golden image decoder.

Random images of every opcode run on a 2x3 chain under each stall profile, in Amaranth's
simulator and, from one Verilator build, under cocotb; a mutant expander must be caught; directed
runs pin the chain's throughput and latencies; the decoder's own rules are unit-tested.
"""

import json

import pytest

from rivulet.sim.amaranth_sim import run_each_in_amaranth, run_in_amaranth
from rivulet.sim.seeds import base_seed, seeds_for
from rivulet.sim.streams import PROFILES, NoProgressError, ScoreboardError
from rivulet.sim.verilator import build_design, run_cocotb, run_directory
from rsn.image import ImageError, check_packet, decode_image, split_packets
from rsn.isa import GLOBAL_REGISTERS, Header, Opcode, encode, packet

from .control_bench import GRID, ControlTop, DroppingTile, make_control_bench

PACKETS = 30
EVERYONE = {"rows": 0b11, "cols": 0b111}
LAST_TILE = {"rows": 0b10, "cols": 0b100}       # tile (1, 2), the chain's last stop
FIRST_TILE = {"rows": 0b1, "cols": 0b1}
GLOBAL = {"rows": 0, "cols": 0}


def _run(profile: str, seed: int, tile_class=None, **image) -> object:
    top = ControlTop(**GRID) if tile_class is None else ControlTop(**GRID, tile_class=tile_class)
    bench, max_cycles = make_control_bench(top, profile, seed, **image)
    run_in_amaranth(top, bench, max_cycles=max_cycles)
    return bench


# --- the RTL, in both tiers ---------------------------------------------------------------------

@pytest.mark.parametrize("profile", list(PROFILES))
def test_control_amaranth(profile):
    top = ControlTop(**GRID)
    runs = []
    for seed in seeds_for(f"control-sim:{profile}"):
        print(f"control plane {GRID} profile={profile} seed={seed}")
        runs.append(make_control_bench(top, profile, seed, packets=PACKETS))
    run_each_in_amaranth(top, runs)


@pytest.mark.verilator
def test_control_verilator():
    seeds = seeds_for("control-verilator")
    config = {"grid": GRID, "packets": PACKETS, "profiles": list(PROFILES), "seeds": seeds,
              "base_seed": base_seed()}
    print(f"control plane {GRID} seeds={seeds}")
    key = "rsn-control" + "".join(f"-{name}={value}" for name, value in sorted(GRID.items()))
    design = build_design(key, ControlTop(**GRID))
    with run_directory("rsn-control") as directory:
        summary = directory / "summary.jsonl"
        run_cocotb(design, "testbench.rsn.tb_control", directory,
                   {"RIVULET_CONTROL_BENCH": json.dumps(config), "RIVULET_BENCH_SUMMARY": str(summary)})
        runs = [json.loads(line) for line in summary.read_text().splitlines()]
    assert len(runs) == len(PROFILES) * len(seeds)


def test_mutant_dropping_last_repeat_is_caught():
    """An expander that replays one pass too few; a trailer gives every unit a later micro-op,
    so the loss shows as a wrong micro-op, not just as a missing one."""
    (seed,) = seeds_for("control-mutant", count=1)
    trailer = (packet(Opcode.SWITCH, EVERYONE, [0x5A5A], repeat=3)
               + packet(Opcode.FU, EVERYONE, [0xA5A5], repeat=3)
               + packet(Opcode.SWITCH, EVERYONE, [0x1234]) + packet(Opcode.FU, EVERYONE, [0x4321]))
    with pytest.raises(ScoreboardError, match="micro-op #") as caught:
        _run("random_stall_50", seed, DroppingTile, packets=PACKETS, trailer=trailer)
    assert not isinstance(caught.value, NoProgressError)


# --- throughput and latency (no stalls) ---------------------------------------------------------

def _cycles(bench, prefix):
    return [cycle for cycle, _ in bench.transfers(prefix)]


def test_chain_moves_one_word_per_cycle():
    writes = [0x0003 | k << 32 for k in range(20)]
    words = packet(Opcode.WRITE, EVERYONE, writes) + packet(Opcode.NOP, EVERYONE, [1, 2, 3])
    ctrl = _cycles(_run("no_stall", 0, words=words), "ctrl")
    assert ctrl == list(range(ctrl[0], ctrl[0] + len(words)))


def test_micro_op_latency_and_replay_rate():
    """A body reaches tile k's micro-op output 2 + k cycles after its second word is taken on
    ``ctrl`` (dispenser slice, k hops, expander slice); replayed passes run at one per cycle."""
    bodies = [0x1111_2222_3333_4444, 5, 6, 7]
    bench = _run("no_stall", 0, words=packet(Opcode.SWITCH, LAST_TILE, bodies, repeat=5))
    second_word = _cycles(bench, "ctrl")[3]
    uops = _cycles(bench, "switch_uop__5")
    assert uops[0] == second_word + 2 + 5
    assert uops[:4] == [uops[0] + 2 * k for k in range(4)]       # first pass: at the chain's rate
    assert uops[4:] == list(range(uops[4], uops[4] + 16))        # replays: one per cycle
    assert uops[4] == uops[3] + 2


def test_read_latency_and_pacing():
    """A tile's value leaves on ``readback`` tiles + 5 cycles after the body's second word is
    taken, wherever the tile is (the value does the rest of the chain on the readback chain); a
    tile reads once per 4 cycles; the next packet waits for the last value; a global value
    leaves 1 cycle after its body."""
    tiles = GRID["rows"] * GRID["cols"]
    for target in (LAST_TILE, FIRST_TILE):
        words = packet(Opcode.READ, target, [3, 4]) + packet(Opcode.READ, GLOBAL, [GLOBAL_REGISTERS["done"]])
        bench = _run("no_stall", 0, words=words)
        ctrl, returned = _cycles(bench, "ctrl"), _cycles(bench, "readback")
        assert returned[0] == ctrl[3] + tiles + 5
        assert returned[1] == returned[0] + 4
        assert ctrl[6] == returned[1]            # header taken once the last value is back
        assert returned[2] == ctrl[9] + 1


# --- the golden decoder -------------------------------------------------------------------------

def test_decode_image_expands_and_orders():
    words = (packet(Opcode.WRITE, {"rows": 0b11, "cols": 0b1}, [0x10 | 7 << 32, 0x11 | 8 << 32], repeat=4)
             + packet(Opcode.SWITCH, {"rows": 0b1, "cols": 0b110}, [1, 2], repeat=3)
             + packet(Opcode.START, GLOBAL, [])
             + packet(Opcode.FU, {"rows": 0b10, "cols": 0b1 | 1 << 9}, [9])
             + packet(Opcode.READ, {"rows": 0b10, "cols": 0b1}, [0x11 | 0xDEAD << 32])
             + packet(Opcode.READ, GLOBAL, [GLOBAL_REGISTERS["cycles"]])
             + packet(Opcode.NOP, EVERYONE, [3]))
    image = decode_image(words, 2, 3, max_window=8)
    assert image.tile(0, 1).switch_bodies == [1, 2] * 3 == image.tile(0, 2).switch_bodies
    assert image.tile(0, 0).switch_bodies == [] and image.tile(1, 1).switch_bodies == []
    assert image.tile(1, 0).fu_bodies == [9] and image.tile(0, 0).fu_bodies == []
    assert image.tile(0, 0).writes == [(0x10, 7), (0x11, 8)] == image.tile(1, 0).writes
    assert image.tile(1, 0).reads == [0x11] and image.tile(0, 0).reads == []
    assert [(slot.tile, slot.address) for slot in image.readback] == [((1, 0), 0x11), (None, 0)]
    assert image.starts == [2] and image.start_offsets == [12]
    assert image.tile(0, 1).switch_uops[0]["beats"] == 1
    assert [found.opcode for found in split_packets(words)][-1] == Opcode.NOP


@pytest.mark.parametrize("words, message", [
    (packet(Opcode.SWITCH, EVERYONE, [1, 2])[:-1], "needs 6 words but the image ends after 5"),
    ([0x0000_0007, 0], "opcode 7"),
    ([encode(Header, {"opcode": Opcode.NOP}), -1], "not a 32-bit"),
])
def test_split_packets_reports(words, message):
    with pytest.raises(ImageError, match=message):
        split_packets(words)


@pytest.mark.parametrize("words, message", [
    (packet(Opcode.SWITCH, EVERYONE, [0] * 9), "window 9 exceeds the expander's max_window 8"),
    (packet(Opcode.FU, GLOBAL, [0]), "reach no tile"),
    (packet(Opcode.READ, EVERYONE, [0]), "exactly one target tile"),
    (packet(Opcode.READ, GLOBAL, [7]), "global register 0x7"),
    (packet(Opcode.WRITE, FIRST_TILE, [0x1_0000]), "beyond 16 bits"),
    (packet(Opcode.START, GLOBAL, [0]), "START carries no bodies"),
    ([packet(Opcode.NOP, GLOBAL, [])[0] | 1 << 31, 0], "reserved header bits"),
    (packet(Opcode.NOP, GLOBAL, []) * 2, "one packet, found 2"),
])
def test_check_packet_refuses(words, message):
    with pytest.raises(ImageError, match=message):
        check_packet(words, max_window=8)


def test_check_packet_accepts_long_register_windows():
    """max_window bounds the expanders only: WRITE and READ stream their bodies through."""
    assert check_packet(packet(Opcode.WRITE, EVERYONE, [0] * 20), max_window=8).window == 20
    assert check_packet(packet(Opcode.READ, LAST_TILE, [0] * 20), max_window=8).window == 20


def test_decode_image_refuses_read_outside_the_grid():
    with pytest.raises(ImageError, match="outside the 2x3 grid"):
        decode_image(packet(Opcode.READ, {"rows": 1 << 2, "cols": 1}, [0]), 2, 3)
