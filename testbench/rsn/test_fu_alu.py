# amaranth: UnusedElaboratable=no
"""The ``alu`` FU: golden model from the doc, RTL against it in both tiers, latency, a mutant."""

import pytest

from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES, ScoreboardError
from rsn.channels import Channel
from rsn.fu import fu_signature
from rsn.fu_alu import ALU_KIND, LATENCY, AluFu, AluModel, alu_result
from rsn.isa import AluUop, IsaError, decode, encode

from .compute_bench import run_compute_amaranth, run_compute_amaranth_each, run_compute_verilator

WIDTHS = [32, 16, 8]
MUTANT_PROFILES = ["random_stall_50", "backpressure_90"]


def uop(**fields) -> dict:
    """A decoded micro-op with the given fields (others 0), as the assembler would send it."""
    return decode(AluUop, encode(AluUop, fields))


@pytest.mark.parametrize("width, token, fields, expected", [
    (32, 0xFFFF_FFF9, {"shift": 1}, 0xFFFF_FFFC),                       # -7 >> 1 = -4
    (32, 0xFFFF_FFF9, {"relu": 1, "shift": 1}, 0),
    (32, 1000, {"shift": 2, "clip": 1, "lo": -10, "hi": 100}, 100),
    (32, 0x8000_0000, {"shift": 31}, 0xFFFF_FFFF),                      # most negative >> 31 = -1
    (32, 0x8000_0000, {"shift": 0}, 0x8000_0000),
    (32, 0x8000_0000, {"clip": 1, "lo": -32768, "hi": 32767}, 0xFFFF_8000),
    (32, 0x7FFF_FFFF, {"relu": 1, "clip": 1, "lo": -32768, "hi": 32767}, 32767),
    (32, 0, {"clip": 1, "lo": 5, "hi": -5}, 0xFFFF_FFFB),               # lo > hi gives hi
    (32, 123, {"clip": 0, "lo": 200, "hi": 300}, 123),                  # bounds unused unless clip
    (16, 0x8000, {"clip": 1, "lo": -32768, "hi": -32768}, 0x8000),
    (8, 0x80, {"clip": 1, "lo": -1000, "hi": 1000}, 0x80),              # bounds beyond W: exact
    (8, 0x10, {"clip": 1, "lo": 200, "hi": 300}, 200),                  # ... then truncated to W
    (8, 0x7F, {"shift": 31}, 0),                                        # shift >= W
    (8, 0x81, {"shift": 31}, 0xFF),
])
def test_model_follows_the_doc(width, token, fields, expected):
    assert alu_result(token, uop(beats=1, **fields), width) == expected


def test_model_moves_one_token_per_step_and_finishes():
    model = AluModel(width=32)
    model.load([uop(beats=2, relu=1), uop(beats=1, shift=4, last=1)])
    source, sink = Channel("i", 8), Channel("o", 1)
    for token in [0xFFFF_FFFF, 7, 0x100]:
        source.push(token)
    assert model.step([source], [sink]) and list(sink.tokens) == [0]
    assert not model.step([source], [sink])                 # the output channel is full
    sink.pop()
    assert model.step([source], [sink]) and sink.pop() == 7
    assert model.busy and not model.finished
    assert model.step([source], [sink]) and sink.pop() == 0x10
    assert (model.busy, model.finished, model.firings) == (False, True, 3)
    assert not model.step([source], [sink])


def test_model_refuses_zero_beats():
    with pytest.raises(IsaError, match="beats=0"):
        AluModel().load([uop(beats=0)])


def test_kind_builds_the_fu_signature():
    assert (ALU_KIND.name, ALU_KIND.n_in, ALU_KIND.n_out, ALU_KIND.latency) == ("alu", 1, 1, LATENCY)
    assert ALU_KIND.rtl(width=24).signature == fu_signature(ALU_KIND, 24)
    with pytest.raises(TypeError):
        ALU_KIND.rtl(width=32, mac_depth=16)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("profile", list(PROFILES))
def test_amaranth_sim(width, profile):
    """Random programs, random data and stalls on every stream; outputs and status every cycle."""
    run_compute_amaranth_each(AluFu(width), "alu", {"width": width}, profile=profile,
                              seeds=seeds_for(f"alu-sim:{width}:{profile}"))


def test_latency_and_throughput():
    """Without stalls: one token per cycle, across a micro-op boundary too, LATENCY cycles each."""
    (seed,) = seeds_for("alu-throughput", count=1)
    checker = run_compute_amaranth(AluFu(32), "alu", {"width": 32}, profile="no_stall", seed=seed,
                                   scenario="throughput").checker
    assert LATENCY == 2
    assert set(checker.latencies) == {LATENCY}
    assert len(checker.in_cycles[0]) == 400 and checker.throughput() == 1.0


class LogicalShiftAlu(AluFu):
    """Shifts in zeros: wrong for every negative value shifted by 1 or more."""

    @staticmethod
    def _shift_right(value, amount):
        return value.as_unsigned() >> amount


@pytest.mark.parametrize("profile", MUTANT_PROFILES)
def test_mutant_caught(profile):
    for seed in seeds_for(f"alu-mutant:{profile}"):
        with pytest.raises(ScoreboardError, match=r"output token #\d+ is 0x[0-9a-f]+, expected"):
            run_compute_amaranth(LogicalShiftAlu(32), "alu", {"width": 32}, profile=profile, seed=seed)


@pytest.mark.verilator
def test_verilator():
    """The generated Verilog: every profile x 3 seeds, then latency and throughput, one build."""
    params = {"width": 32}
    seeds = seeds_for("alu-verilator")
    print(f"alu {params} seeds={seeds}")
    records = run_compute_verilator(AluFu(**params), "alu", params, design="rsn-alu-width=32",
                                    case="rsn-alu-random", profiles=list(PROFILES), seeds=seeds)
    assert len(records) == len(PROFILES) * len(seeds)
    (record,) = run_compute_verilator(AluFu(**params), "alu", params, design="rsn-alu-width=32",
                                      case="rsn-alu-throughput", profiles=["no_stall"], seeds=seeds[:1],
                                      scenario="throughput")
    assert record["latencies"] == [LATENCY] and record["throughput"] == 1.0
