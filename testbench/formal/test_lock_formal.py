# amaranth: UnusedElaboratable=no
"""k-induction proof of the atomic directory (the PE's LOCK operator, ripple_core/pe/): in every
reachable state, whatever the operands, stalls and configuration writes, no two held entries hold
the same address, and no acquire is granted an address that is held. A mutant that grants a held
address must fail."""

import pytest
from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Cat, Const, Cover

from ripple_core.pe import LOCK_ENTRIES, RipplePE

from .harness import FormalBench, assert_proven, elaborate_open, find_register, run_proof

INDUCTION_DEPTH = 2


def lock_bench(pe: RipplePE) -> FormalBench:
    bench = FormalBench()
    m = bench.m
    fragment = elaborate_open(pe)
    m.submodules.dut = fragment
    for k in range(3):
        m.d.comb += [pe.i[k].valid.eq(AnySeq(1)), pe.i[k].payload.eq(AnySeq(32))]
    for p in range(2):
        m.d.comb += pe.o[p].ready.eq(AnySeq(1))
    for name, width in (("addr", 16), ("data", 32), ("write", 1), ("read", 1)):
        m.d.comb += getattr(pe.cfg, name).eq(AnySeq(width))
    valid = find_register(fragment, "lock_valid")
    held = [find_register(fragment, f"lock{e}") for e in range(LOCK_ENTRIES)]
    # The PE decodes its configuration word into registers loaded with it; in a reachable state
    # they hold the decode of the word, which induction needs to be told (and proves).
    m.d.comb += Assert(find_register(fragment, "decode_matches"), "the decode registers match the word")
    is_lock = find_register(fragment, "is_lock")
    for a in range(LOCK_ENTRIES):
        for b in range(a + 1, LOCK_ENTRIES):
            m.d.comb += Assert(~(valid[a] & valid[b] & (held[a] == held[b])),
                               f"entries {a} and {b} hold one address")
    acquire = pe.fire & is_lock & pe.i[0].ready
    busy = Cat(*(valid[e] & (held[e] == pe.i[0].payload) for e in range(LOCK_ENTRIES))).any()
    m.d.comb += [Assert(~(acquire & busy), "an acquire was granted a held address"),
                 Cover(acquire & (valid.any()))]
    return bench


@pytest.mark.formal
def test_lock_directory_is_exclusive():
    bench = lock_bench(RipplePE(0, mem_depth=2))
    assert_proven(run_proof("lock_directory", bench, depth=INDUCTION_DEPTH))


@pytest.mark.formal
def test_lock_directory_cover_is_reached():
    """An acquire is granted while another address is held: the proof is not vacuous."""
    bench = lock_bench(RipplePE(0, mem_depth=2))
    assert_proven(run_proof("lock_directory_cover", bench, mode="cover", depth=8))


class GreedyLock(RipplePE):
    """Mutant: the directory never reports an address as held."""

    def _elaborate_directory(self, *args):
        directory = super()._elaborate_directory(*args)
        directory.held = Const(0)
        return directory


@pytest.mark.formal
def test_lock_mutant_fails():
    result = run_proof("mutant_greedy_lock", lock_bench(GreedyLock(0, mem_depth=2)), mode="bmc", depth=6)
    assert result.status == "FAIL", result.log_tail()
    failed = [failure.description for failure in result.failures]
    assert any("held address" in text or "one address" in text for text in failed), failed
