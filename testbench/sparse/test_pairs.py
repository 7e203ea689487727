"""Packed pairs (samflow.pairs): what a joiner's side and its two references look like on one
stream, checked against plain lists built here, and the RTL's half picker against the model's."""

import numpy as np
import pytest
from amaranth.hdl import Elaboratable, Module, Signal
from amaranth.sim import Simulator

from rivulet.sim.seeds import seeds_for
from samflow.pairs import empty_half, pack, pick, unpack
from samflow.rtl.pairs import picked_half
from samflow.tokens import decode, encode

WIDTH = 30


def _random_pair_streams(rng):
    low, high = [], []
    for _ in range(int(rng.integers(1, 6))):
        for _ in range(int(rng.integers(0, 5))):
            lo = "N" if rng.random() < 0.2 else int(rng.integers(0, empty_half(WIDTH)))
            hi = "N" if rng.random() < 0.2 else int(rng.integers(0, empty_half(WIDTH)))
            low.append(lo)
            high.append(hi)
        low.append("S0")
        high.append("S0")
    return low + ["D"], high + ["D"]


def test_pack_then_unpack_gives_both_streams_back():
    for seed in seeds_for("samflow:pairs", 5):
        print(f"seed={seed}")
        low, high = _random_pair_streams(np.random.default_rng(seed))
        packed = pack(low, high, WIDTH)
        assert len(packed) == len(low)
        assert unpack(packed, WIDTH) == (low, high)
        assert pick(packed, 1, WIDTH) == low and pick(packed, 2, WIDTH) == high
        assert pick(packed, 0, WIDTH) == packed
        for token in packed:            # every packed token is a token of the 30-bit layout
            assert decode(encode(token, WIDTH), WIDTH) == token


def test_both_halves_empty_is_one_empty_token_and_control_tokens_are_shared():
    assert pack(["N", 3, "S1", "D"], ["N", "N", "S1", "D"], WIDTH)[::2] == ["N", "S1"]
    with pytest.raises(ValueError):
        pack([1, 2], [3], WIDTH)


def test_the_rtl_half_picker_equals_the_model():
    word, half, out = Signal(WIDTH + 2), Signal(2), Signal(WIDTH + 2)
    sim = Simulator(_Comb(word, half, out))
    seed = seeds_for("samflow:pairs-rtl", 1)[0]
    print(f"seed={seed}")
    low, high = _random_pair_streams(np.random.default_rng(seed))
    packed = pack(low, high, WIDTH)

    async def bench(ctx):
        for token in packed:
            for which in (0, 1, 2):
                ctx.set(word, encode(token, WIDTH))
                ctx.set(half, which)
                assert decode(ctx.get(out), WIDTH) == pick([token], which, WIDTH)[0], (token, which)
    sim.add_testbench(bench)
    sim.run()


class _Comb(Elaboratable):
    """A module of one combinational assignment: ``out`` is ``word``'s picked half."""

    def __init__(self, word, half, out):
        self.word, self.half, self.out = word, half, out

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.out.eq(picked_half(self.word, self.half, WIDTH))
        return m
