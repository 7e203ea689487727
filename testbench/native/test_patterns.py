"""The pattern generators' model: the stall profiles' probabilities, two-phase schedules, seeds."""

import pytest

from rivulet.sim.native.patterns import ONE, PatternStream, Thresholds, stream_seed, thresholds, xorshift
from rivulet.sim.streams import PROFILES, SLOW_PROFILES, Schedule

CYCLES = 40_000


def _willing_fraction(probability: float, seed: int) -> float:
    stream = PatternStream(seed, thresholds(Schedule(probability)))
    return sum(stream.willing(cycle) for cycle in range(CYCLES)) / CYCLES


@pytest.mark.parametrize("probability", [0.0, 0.3, 0.5, 0.9, 1.0])
def test_a_stream_is_willing_as_often_as_its_profile_says(probability):
    for seed in (1, 0xDEADBEEF, stream_seed(7, 3)):
        fraction = _willing_fraction(probability, seed)
        assert abs(fraction - (1 - probability)) < 0.01, (probability, seed, fraction)


def test_two_phase_schedules_switch_on_their_cycle():
    schedule = thresholds(Schedule((48, 1.0), (None, 0.0)))
    assert schedule == Thresholds(48, ONE, 0)
    stream = PatternStream(5, schedule)
    willing = [stream.willing(cycle) for cycle in range(100)]
    assert willing == [False] * 48 + [True] * 52


def test_every_profile_has_a_hardware_form_and_longer_schedules_are_refused():
    for profile in [*PROFILES.values(), *SLOW_PROFILES.values()]:
        thresholds(profile.idle), thresholds(profile.backpressure)
    with pytest.raises(ValueError, match="at most two phases"):
        thresholds(Schedule((10, 0.5), (10, 1.0), (None, 0.0)))


def test_seeds_are_nonzero_and_distinct_across_streams_and_runs():
    seeds = {stream_seed(seed, stream) for seed in range(200) for stream in range(16)}
    assert len(seeds) == 200 * 16 and 0 not in seeds
    with pytest.raises(ValueError, match="nonzero"):
        PatternStream(0, Thresholds(0, 0, 0))


def test_xorshift_has_no_short_cycle_from_a_seed():
    """The 13/17/5 triple has period 2**32 - 1; here, no state repeats within 100,000 steps."""
    state, seen = 1, set()
    for _ in range(100_000):
        assert state not in seen and state != 0
        seen.add(state)
        state = xorshift(state)
