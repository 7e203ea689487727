"""Sharing identical Verilog modules: copies collapse into one, different ones stay, instance
names stay, and Verilator accepts the result."""

import re
import subprocess

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.token_queue import TokenQueue
from rivulet.sim.shared_modules import share_identical_modules
from rivulet.sim.toolchain import use_tool_environment


class _Lanes(wiring.Component):
    """Three queues side by side, two of them alike."""

    def __init__(self):
        lane = stream.Signature(8)
        super().__init__({f"{direction}{k}": (In(lane) if direction == "i" else Out(lane))
                          for k in range(3) for direction in "io"})

    def elaborate(self, platform):
        m = Module()
        for k, depth in enumerate((4, 4, 2)):
            m.submodules[f"lane{k}"] = queue = TokenQueue(8, depth)
            wiring.connect(m, wiring.flipped(getattr(self, f"i{k}")), queue.i)
            wiring.connect(m, queue.o, wiring.flipped(getattr(self, f"o{k}")))
        return m


def test_copies_collapse_and_instances_keep_their_names(tmp_path):
    text = verilog.convert(_Lanes(), name="top", emit_src=False)
    shared, before, after = share_identical_modules(text)
    assert (before, after) == (4, 3)
    assert sorted(re.findall(r"^module \\(\S+)", shared, re.MULTILINE)) == ["top.lane0", "top.lane2"]
    instances = re.findall(r"^  (\\\S+) +(\w+) *\($", shared, re.MULTILINE)
    assert instances == [("\\top.lane0", "lane0"), ("\\top.lane0", "lane1"), ("\\top.lane2", "lane2")]
    assert share_identical_modules(shared)[1:] == (after, after), "sharing twice changes nothing"


@pytest.mark.verilator
def test_verilator_accepts_the_shared_text(tmp_path):
    use_tool_environment()
    shared, _, _ = share_identical_modules(verilog.convert(_Lanes(), name="top", emit_src=False))
    source = tmp_path / "top.v"
    source.write_text(shared)
    done = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "--top-module", "top", str(source)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr



def test_modules_alike_but_for_their_children_both_stay():
    """Two FU modules of one adapter around different primitives (a shared unit's plain-named
    module each) are not copies, though their texts match once each names its own children
    relative to itself: the children differ. Renaming a module's own name once touched the
    escaped names of its children (``\\top_i.primitive``), and the tile lost its joiner."""
    from samflow.kind import SPARSE_KINDS

    text = "".join(verilog.convert(SPARSE_KINDS[kind].rtl(width=32), name=name)
                   for kind, name in (("sam_union", "top_u"), ("sam_intersect", "top_i")))
    shared, before, after = share_identical_modules(text)

    def modules(verilog_text):
        return set(re.findall(r"^module (.+?)\s*\(", verilog_text, re.MULTILINE))
    kept = {"top_u", "top_i", "\\top_u.primitive", "\\top_i.primitive", "\\top_u.primitive.joiner",
            "\\top_i.primitive.joiner"}
    assert kept <= modules(shared), sorted(kept - modules(shared))
    merged = modules(text) - modules(shared)        # only the stream checkers, alike in both
    assert len(merged) == before - after and all(".check_in" in name for name in merged), sorted(merged)
