# amaranth: UnusedElaboratable=no
"""The ``observed`` port that Verilated benches read every output through (rivulet.sim.wrappers):
each output's bits are where the layout says, in every cycle, whatever the inputs do."""

import random

import pytest
from amaranth.hdl import Shape, unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import Out
from amaranth.sim import Simulator

from hw.token_queue import TokenQueue
from rivulet.sim.seeds import seeds_for
from rivulet.sim.streams import port_paths
from rivulet.sim.wrappers import OBSERVED, Clocked, SideBySide, member_value


def _two_queues():
    return SideBySide([TokenQueue(unsigned(8), 2), TokenQueue(unsigned(5), 3, mode="bypass")])


def test_the_layout_lists_every_output_once_with_its_width():
    inner = _two_queues()
    top = Clocked(inner, observe=True)
    outputs = {"__".join(map(str, path)): Shape.cast(member.shape).width
               for path, member in port_paths(inner.signature) if member.flow == Out}
    assert dict(top.observed_layout) == outputs
    assert len(top.observed_layout) == len(outputs)
    assert len(getattr(top, OBSERVED)) == sum(outputs.values())
    assert "u1__o__payload" in outputs and "u0__i__ready" in outputs and "u0__i__valid" not in outputs


def test_each_output_reads_back_from_its_field_under_random_inputs():
    inner = _two_queues()
    top = Clocked(inner, observe=True)
    inputs = [(path, member) for path, member in port_paths(inner.signature) if member.flow != Out]
    fields, offset = {}, 0
    for name, width in top.observed_layout:
        fields[name] = (offset, (1 << width) - 1)
        offset += width
    outputs = {"__".join(map(str, path)): member_value(top, path)
               for path, member in port_paths(inner.signature) if member.flow == Out}
    (seed,) = seeds_for("observed-port", count=1)
    print(f"seed {seed}")
    rng = random.Random(seed)
    checked = []

    async def bench(ctx):
        for _ in range(200):
            for path, member in inputs:
                ctx.set(member_value(top, path), rng.getrandbits(Shape.cast(member.shape).width))
            word = ctx.get(getattr(top, OBSERVED))
            for name, signal in outputs.items():
                offset, mask = fields[name]
                assert (word >> offset) & mask == ctx.get(signal), name
            checked.append(word)
            await ctx.tick()

    simulator = Simulator(top)
    simulator.add_clock(1e-6)
    simulator.add_testbench(bench)
    simulator.run()
    assert len(set(checked)) > 10       # the outputs did move


def test_without_observe_the_ports_are_the_components():
    inner = TokenQueue(unsigned(8), 2)
    assert Clocked(inner).signature == inner.signature
    assert Clocked(inner).observed_layout == ()


def test_a_component_with_a_port_of_that_name_is_refused():
    class Named(wiring.Component):
        observed: Out(1)

        def elaborate(self, platform):
            raise AssertionError("not elaborated")

    with pytest.raises(ValueError, match="port named 'observed'"):
        Clocked(Named(), observe=True)
