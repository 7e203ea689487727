"""The micro-op encoding has one source: the assembler, the RTL decoder and the golden decoder agree.

Random micro-ops of every kind are encoded by the assembler's ``encode``, viewed through the same
layouts by hardware in Amaranth's simulator (exactly how the FUs and switches decode them), and
decoded by the golden model's ``decode``; all three must give the same field values.
"""

import random

import pytest
from amaranth.hdl import Module, Shape, Signal, unsigned
from amaranth.lib import data
from amaranth.sim import Simulator

from rivulet.sim.seeds import seeds_for
from rsn.isa import (
    HIGH_SUFFIX,
    Header,
    IsaError,
    Opcode,
    SwitchUop,
    Target,
    decode,
    encode,
    field_width,
    high_bits_of,
    joined_field,
    packet,
    uop_layout,
    uop_layouts,
)

LAYOUTS = {**uop_layouts(), "header": Header, "target": Target}
BEATS_BITS = field_width(SwitchUop, "beats")


def _random_value(shape, rng):
    if isinstance(shape, data.ArrayLayout):
        return [_random_value(shape.elem_shape, rng) for _ in range(shape.length)]
    if isinstance(shape, type):                       # an enum
        return rng.choice(list(shape))
    shape = Shape.cast(shape)
    if shape.signed:
        return rng.randrange(-(1 << (shape.width - 1)), 1 << (shape.width - 1))
    return rng.randrange(1 << shape.width)


def _named_fields(layout):
    """The fields a caller names: a ``_high`` continuation is part of its count's value."""
    return [(name, field) for name, field in layout
            if name != "reserved" and high_bits_of(layout, name) is None]


def _random_fields(layout, rng):
    return {name: rng.randrange(1 << field_width(layout, name)) if high_bits_of(layout, name + HIGH_SUFFIX)
            else _random_value(field.shape, rng) for name, field in _named_fields(layout)}


def _hardware_view(layout, samples):
    """What a design sees when it views each sample's bits through ``layout``."""
    bits = Signal(Shape.cast(layout).width)
    view = data.View(layout, bits)
    seen = []

    async def bench(ctx):
        for sample in samples:
            ctx.set(bits, sample)
            fields = {}
            for name, field in _named_fields(layout):
                value = ctx.get(joined_field(view, name))
                if isinstance(field.shape, data.ArrayLayout):
                    value = [ctx.get(view[name][index]) for index in range(field.shape.length)]
                fields[name] = value
            seen.append(fields)

    simulator = Simulator(Module())
    simulator.add_testbench(bench)
    simulator.run()
    return seen


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_assembler_rtl_and_model_agree(name):
    layout = LAYOUTS[name]
    (seed,) = seeds_for(f"isa:{name}", count=1)
    rng = random.Random(seed)
    micro_ops = [_random_fields(layout, rng) for _ in range(200)]
    encoded = [encode(layout, fields) for fields in micro_ops]
    for fields, bits, seen in zip(micro_ops, encoded, _hardware_view(layout, encoded), strict=True):
        assert decode(layout, bits) == fields, f"seed {seed}"
        assert seen == fields, f"seed {seed}: hardware view {seen} != {fields}"


def test_reserved_bits_stay_zero():
    for layout in uop_layouts().values():
        bits = encode(layout, _random_fields(layout, random.Random(1)))
        reserved = dict(iter(layout)).get("reserved")
        if reserved is not None:
            assert (bits >> reserved.offset) == 0


@pytest.mark.parametrize("layout,fields,message", [
    (uop_layout("switch"), {"beats": -1}, rf"beats=-1 does not fit {BEATS_BITS} bits"),
    (uop_layout("switch"), {"beats": 1 << BEATS_BITS},
     rf"beats={1 << BEATS_BITS} does not fit {BEATS_BITS} bits \(unsigned: 0..{(1 << BEATS_BITS) - 1}\)"),
    (uop_layout("switch"), {"beats_high": 1}, r"unknown field\(s\) \['beats_high'\]"),
    (uop_layout("mem"), {"stride": 2048}, r"stride=2048 does not fit 12 bits \(signed: -2048..2047\)"),
    (uop_layout("mac"), {"mode": "SQRT"}, r"field mode: 'SQRT' is not one of LOAD, DOT, DOT2"),
    (uop_layout("alu"), {"relu": 1, "gelu": 1}, r"unknown field\(s\) \['gelu'\]"),
    (uop_layout("switch"), {"select": [1, 2]}, r"select: expected 7 elements, got 2"),
])
def test_out_of_range_fields_are_refused(layout, fields, message):
    with pytest.raises(IsaError, match=message):
        encode(layout, fields)


def test_switch_beats_widen_without_changing_earlier_encodings():
    """The beat count's high bits sit after ``fence``, in bits that were reserved: a micro-op of at
    most 65,535 beats encodes as it did before they existed (this literal is that encoding)."""
    fields = {"enable": 0b1010001, "select": [3, 7, 7, 7, 0, 2, 1], "last": 1, "fence": 1}
    assert encode(SwitchUop, {"beats": 65535, **fields}) == 0x3287fdd1ffff
    wide = encode(SwitchUop, {"beats": 70_000, **fields})
    high = SwitchUop["beats_high"]
    low_bits = wide & ~(((1 << Shape.cast(high.shape).width) - 1) << high.offset)
    assert low_bits == encode(SwitchUop, {"beats": 70_000 & 0xFFFF, **fields})
    assert decode(SwitchUop, wide)["beats"] == 70_000


def test_packet_layout():
    words = packet(Opcode.FU, {"rows": 0b10, "cols": 0b1}, [0x1111_2222_3333_4444], repeat=3)
    header = decode(Header, words[0])
    assert header == {"opcode": Opcode.FU, "window": 1, "repeat": 3}
    assert decode(Target, words[1]) == {"rows": 2, "cols": 1}
    assert words[2:] == [0x3333_4444, 0x1111_2222]       # low word first
    with pytest.raises(IsaError, match="at most 31 bodies"):
        packet(Opcode.FU, {"rows": 1, "cols": 1}, [0] * 32)
    with pytest.raises(IsaError, match="repeat=0"):
        packet(Opcode.FU, {"rows": 1, "cols": 1}, [0], repeat=0)


def test_hardware_view_of_unsigned_bits_is_the_layout():
    assert Shape.cast(uop_layout("switch")).width == 64 == Shape.cast(unsigned(64)).width
