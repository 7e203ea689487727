"""Idle and back-pressure patterns that hardware and Python draw alike, cycle by cycle.

Both tiers of a fabric run decide every cycle whether a host source offers its next token and
whether a host sink takes one from the same generator: a 32-bit xorshift register per stream
(a linear feedback shift register in the wider sense: its next state is a fixed XOR of shifted
copies of the state), stepped once per cycle from its seed. The native simulation top holds one
in hardware per stream (:mod:`.top`); :class:`PatternStream` is its model, which drives the
cocotb tier. So for the same seed both tiers see the same idle and back-pressure on every cycle,
and their handshake traces can be compared exactly.

A stall profile's probability schedule becomes thresholds on the low 16 bits of the state: a
stream is willing in a cycle when ``state & 0xFFFF >= threshold``, so a threshold of 0 is
always and one of 65536 never. A schedule may have two phases: ``first`` for ``phase`` cycles,
then ``then`` (the profiles' "blocked, then free" and "starved, then flood").
"""

from dataclasses import dataclass

from rivulet.sim.streams import Schedule

__all__ = ["MASK", "ONE", "xorshift", "stream_seed", "Thresholds", "thresholds", "PatternStream"]

MASK = 0xFFFF_FFFF
ONE = 1 << 16           # the threshold of probability 1: never willing


def xorshift(state: int) -> int:
    """The generator's next state (Marsaglia's 13/17/5 triple: full period over nonzero states)."""
    state ^= (state << 13) & MASK
    state ^= state >> 17
    state ^= (state << 5) & MASK
    return state


def stream_seed(seed: int, index: int) -> int:
    """The nonzero seed of stream ``index`` of a run with seed ``seed`` (a splitmix-style mix, so
    that neighbouring seeds and streams start far apart)."""
    value = (seed * 0x9E37_79B9 + (index + 1) * 0x85EB_CA6B) & MASK
    value ^= value >> 16
    value = (value * 0x7FEB_352D) & MASK
    value ^= value >> 15
    return value or 1


@dataclass(frozen=True)
class Thresholds:
    """One schedule as the hardware holds it: ``first`` for ``phase`` cycles, then ``then``."""
    phase: int
    first: int
    then: int

    def at(self, cycle: int) -> int:
        return self.first if cycle < self.phase else self.then


def thresholds(schedule: Schedule) -> Thresholds:
    """The hardware form of ``schedule``; a schedule of more than two phases is refused."""
    phases = schedule.phases
    if len(phases) > 2 or phases[-1][0] is not None:
        raise ValueError(f"the native tier's pattern generators hold at most two phases, not {schedule!r}")

    def threshold(probability: float) -> int:
        return round(probability * ONE)

    if len(phases) == 1:
        return Thresholds(0, threshold(phases[0][1]), threshold(phases[0][1]))
    return Thresholds(phases[0][0], threshold(phases[0][1]), threshold(phases[1][1]))


class PatternStream:
    """The model of one stream's generator: call :meth:`willing` once per cycle, in order."""

    def __init__(self, seed: int, schedule: Thresholds):
        if not 0 < seed <= MASK:
            raise ValueError(f"a pattern seed is a nonzero 32-bit value, not {seed}")
        self.state, self.schedule, self.cycle = seed, schedule, 0

    def willing(self, cycle: int) -> bool:
        """Whether the stream offers (a source) or takes (a sink) in ``cycle``; advances the state."""
        assert cycle == self.cycle, f"pattern asked for cycle {cycle}, it is at cycle {self.cycle}"
        willing = (self.state & 0xFFFF) >= self.schedule.at(cycle)
        self.junk = self.state      # what an idle source drives on its payload this cycle
        self.state = xorshift(self.state)
        self.cycle += 1
        return willing
