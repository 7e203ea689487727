# amaranth: UnusedElaboratable=no
"""The ``mac`` FU: golden model from the doc, RTL against it in both tiers, latency, throughput, mutants."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import PROFILES, ScoreboardError, port_paths
from rivulet.sim.wrappers import member_value
from rsn.channels import Channel
from rsn.fu import fu_signature
from rsn.fu_mac import LATENCY, MAC_KIND, MacFu, MacModel
from rsn.isa import IsaError, MacMode, MacUop, Precision, decode, encode

from .compute_bench import run_compute_amaranth, run_compute_amaranth_each, run_compute_verilator

# (width, mac_depth): 16 bits wrap int8 sums; a depth of 5 is no power of 2.
CONFIGS = [(32, 16), (16, 8), (8, 5)]
MUTANT_PROFILES = ["random_stall_50", "backpressure_90"]
LOAD, DOT, DOT2 = MacMode.LOAD, MacMode.DOT, MacMode.DOT2
INT8, INT32 = Precision.INT8, Precision.INT32


def uop(mode, length, rows=1, precision=INT32, last=0) -> dict:
    return decode(MacUop, encode(MacUop, {"mode": mode, "precision": precision, "length": length,
                                          "rows": rows, "last": last}))


def run_model(model, uops, a=(), b=(), room=64):
    """Feed the model; return its outputs once it stops."""
    model.load(uops)
    inputs = [Channel("a", len(a) + 1), Channel("b", len(b) + 1)]
    for channel, tokens in zip(inputs, (a, b), strict=True):
        for token in tokens:
            channel.push(token)
    output = Channel("o", room)
    while model.step(inputs, [output]):
        pass
    return list(output.tokens)


def test_model_dot_against_the_buffer():
    model = MacModel(width=32, mac_depth=4)
    minus_one = 0xFFFF_FFFF
    outputs = run_model(model, [uop(LOAD, 3), uop(DOT, 3, rows=2, last=1)],
                        a=[1, 1, 1, minus_one, 0, 2], b=[1, 2, 3])
    assert outputs == [6, 5]
    assert (model.firings, model.finished, model.busy) == (3 + 2, True, False)


@pytest.mark.parametrize("width, precision, pairs, expected", [
    (32, INT8, [(0xABCD_1280, 0x77_0080)], 16384),                      # upper bits ignored
    (32, INT8, [(0x80, 0x7F)], (-128 * 127) & 0xFFFF_FFFF),
    (16, INT8, [(0x80, 0x80)] * 4, 0),                                  # 4 * 16384 wraps in 16 bits
    (16, INT8, [(0x80, 0x80)] * 3, 49152),
    (32, INT32, [(0x8000_0000, 0x8000_0000)], 0),                       # 2**62 wraps
    (32, INT32, [(0x8000_0000, 0xFFFF_FFFF)], 0x8000_0000),             # -2**31 * -1 wraps
    (32, INT32, [(0xFFFF_FFFF, 0xFFFF_FFFF), (0x7FFF_FFFF, 2)], 0xFFFF_FFFF),
    (8, INT32, [(0x80, 0x80), (0x80, 0xFF)], 0x80),
])
def test_model_dot2_precision_and_wrapping(width, precision, pairs, expected):
    a, b = zip(*pairs, strict=True)
    assert run_model(MacModel(width=width, mac_depth=4), [uop(DOT2, len(pairs), precision=precision)],
                     a=a, b=b) == [expected]


def test_model_refuses_overlong_buffer_use_but_not_dot2():
    for mode in (LOAD, DOT):
        with pytest.raises(IsaError, match="exceeds the buffer"):
            MacModel(mac_depth=4).load([uop(mode, 5)])
    with pytest.raises(IsaError, match="length=0"):
        MacModel().load([uop(DOT2, 0)])
    assert run_model(MacModel(mac_depth=4), [uop(DOT2, 5)], a=[1] * 5, b=[2] * 5) == [10]


def test_model_takes_a_rows_last_operand_only_with_room_for_the_result():
    model = MacModel(mac_depth=4)
    model.load([uop(DOT2, 2, rows=2)])
    a, b, output = Channel("a", 4), Channel("b", 4), Channel("o", 1)
    for token in [1, 2, 3, 4]:
        a.push(token)
        b.push(1)
    assert model.step([a, b], [output]) and model.step([a, b], [output])
    assert output.pop() == 3 and output.can_push()
    assert model.step([a, b], [output])
    output.push(99)                                          # someone else fills the channel
    assert not model.step([a, b], [output]) and len(a.tokens) == 1
    output.pop()
    assert model.step([a, b], [output]) and output.pop() == 7


def test_kind_builds_the_fu_signature():
    assert (MAC_KIND.name, MAC_KIND.n_in, MAC_KIND.n_out, MAC_KIND.latency) == ("mac", 2, 1, LATENCY)
    assert MAC_KIND.rtl(width=32, mac_depth=16).signature == fu_signature(MAC_KIND, 32)
    with pytest.raises(TypeError):
        MAC_KIND.rtl(width=32, mac_depth=16, mem_depth=1024)


@pytest.mark.parametrize("width, mac_depth", CONFIGS)
@pytest.mark.parametrize("profile", list(PROFILES))
def test_amaranth_sim(width, mac_depth, profile):
    """Random programs of all modes and precisions, random data and stalls on every stream."""
    params = {"width": width, "mac_depth": mac_depth}
    run_compute_amaranth_each(MacFu(**params), "mac", params, profile=profile,
                              seeds=seeds_for(f"mac-sim:{width}:{mac_depth}:{profile}"))


@pytest.mark.parametrize("width, mac_depth", [(32, 8), (16, 5)])
def test_overlong_length_is_harmless(width, mac_depth):
    """length > mac_depth: token counts, status and every later micro-op stay right."""
    params = {"width": width, "mac_depth": mac_depth}
    for profile in MUTANT_PROFILES:
        (seed,) = seeds_for(f"mac-overlong:{width}:{mac_depth}:{profile}", count=1)
        run_compute_amaranth(MacFu(**params), "mac", params, profile=profile, seed=seed, scenario="overlong")


def test_load_runs_while_a_result_waits():
    """LOAD overlaps a result held on o[0] (48 blocked cycles), as in the model; the `last` LOAD
    completes, and `finished` rises, only with that result's departure."""
    params = {"width": 32, "mac_depth": 8}
    for seed in seeds_for("mac-load-behind"):
        checker = run_compute_amaranth(MacFu(**params), "mac", params, profile="blocked_then_free",
                                       seed=seed, scenario="load_behind_result").checker
        dot_done, load_done = checker.completion_cycles[1:3]
        assert checker.in_cycles[1][-1] < dot_done == load_done


def test_latency_and_throughput():
    """A 256-word buffer, rows of 256 without stalls: about one operand per cycle, results at LATENCY."""
    (seed,) = seeds_for("mac-throughput", count=1)
    params = {"width": 32, "mac_depth": 256}
    checker = run_compute_amaranth(MacFu(**params), "mac", params, profile="no_stall", seed=seed,
                                   scenario="throughput").checker
    assert LATENCY == 5
    assert set(checker.latencies) == {LATENCY}
    assert len(checker.in_cycles[0]) == 5 * 256 and checker.throughput() >= 0.95


class ZeroExtendingMac(MacFu):
    """Reads an int8 operand as unsigned: wrong whenever exactly one operand is negative."""

    @staticmethod
    def _int8_operand(word):
        return word[:8]


class ForgetfulMac(wiring.Component):
    """A MacFu that reports itself idle while its last result still waits in the output register."""

    def __init__(self, **params):
        self.inner = MacFu(**params)
        super().__init__(self.inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = self.inner
        for path, member in port_paths(self.signature):
            outer, inner = member_value(self, path), member_value(self.inner, path)
            m.d.comb += inner.eq(outer) if member.flow == wiring.In else outer.eq(inner)
        m.d.comb += self.busy.eq(self.inner.busy & ~self.inner.o[0].valid)
        return m


class HastyLoadMac(MacFu):
    """Finishes a `last` LOAD at its last token, though an earlier result still waits on o[0]."""

    @staticmethod
    def _completes_last(m, sent, out_closes, last_load_done, result_waiting):
        return (sent & out_closes) | last_load_done


def test_hasty_load_mutant_caught():
    params = {"width": 32, "mac_depth": 8}
    for seed in seeds_for("mac-mutant:HastyLoadMac"):
        with pytest.raises(ScoreboardError, match=r"finished is 1, expected 0"):
            run_compute_amaranth(HastyLoadMac(**params), "mac", params, profile="blocked_then_free",
                                 seed=seed, scenario="load_behind_result")


@pytest.mark.parametrize("mutant, evidence", [
    (ZeroExtendingMac, r"output token #\d+ is 0x[0-9a-f]+, expected"),
    (ForgetfulMac, r"busy is 0, expected 1"),
])
@pytest.mark.parametrize("profile", MUTANT_PROFILES)
def test_mutant_caught(mutant, evidence, profile):
    params = {"width": 32, "mac_depth": 16}
    for seed in seeds_for(f"mac-mutant:{mutant.__name__}:{profile}"):
        with pytest.raises(ScoreboardError, match=evidence):
            run_compute_amaranth(mutant(**params), "mac", params, profile=profile, seed=seed)


@pytest.mark.verilator
def test_verilator():
    """The generated Verilog: every profile x 3 seeds, then latency and throughput, one build."""
    params = {"width": 32, "mac_depth": 32}
    design = "rsn-mac-mac_depth=32-width=32"
    seeds = seeds_for("mac-verilator")
    print(f"mac {params} seeds={seeds}")
    records = run_compute_verilator(MacFu(**params), "mac", params, design=design, case="rsn-mac-random",
                                    profiles=list(PROFILES), seeds=seeds)
    assert len(records) == len(PROFILES) * len(seeds)
    (record,) = run_compute_verilator(MacFu(**params), "mac", params, design=design,
                                      case="rsn-mac-throughput", profiles=["no_stall"], seeds=seeds[:1],
                                      scenario="throughput")
    assert record["latencies"] == [LATENCY] and record["throughput"] >= 0.95
