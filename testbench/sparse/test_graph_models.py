"""The golden models where a graph composes them: a repeat whose references hold an empty fiber.

SAM's Repeat takes one 'S' from the repeat signal for a stop that has no reference before it (the
signal comes from the level below, where a scanner raised that empty fiber's stop). Every expected
stream here is written by hand from that rule and from the level scanner's, not produced by a model.
"""

import pytest

from samflow.models import MODELS, ModelError


def test_repeat_takes_a_signal_for_an_empty_fiber():
    # References {0}, {}, {1}; the level below holds 2, 0 and 1 coordinates per reference.
    refs = [0, "S0", "S0", 1, "S1", "D"]
    signals = ["R", "R", "S", "S", "R", "S", "D"]
    out, _ = MODELS["repeat"]({}, {}, {"in_ref": refs, "in_repsig": signals})
    assert out["ref"] == [0, 0, "S1", "S1", 1, "S2", "D"]


def test_repeat_of_a_leading_empty_fiber():
    out, _ = MODELS["repeat"]({}, {}, {"in_ref": ["S0", 2, "S1", "D"], "in_repsig": ["S", "R", "S", "D"]})
    assert out["ref"] == ["S1", 2, "S2", "D"]


def test_repeat_stays_in_step_with_a_scanner_over_the_same_references():
    # The coordinates a compressed scanner gives for references [0, S0, S0, 1, S1, D] over fibers
    # {4, 7} and {5} (seg [0, 2, 3]): 4, 7, S1, S1, 5, S2, D; their repeat signal; the repeat must
    # give the same stop structure.
    scanned = [4, 7, "S1", "S1", 5, "S2", "D"]
    signals = ["R", "R", "S", "S", "R", "S", "D"]
    out, _ = MODELS["repeat"]({}, {}, {"in_ref": [0, "S0", "S0", 1, "S1", "D"], "in_repsig": signals})
    assert [t for t in out["ref"] if isinstance(t, str)] == [t for t in scanned if isinstance(t, str)]


def test_repeat_refuses_an_empty_fiber_facing_a_repeat():
    with pytest.raises(ModelError, match="empty fiber"):
        MODELS["repeat"]({}, {}, {"in_ref": ["S0", "D"], "in_repsig": ["R", "S", "D"]})
