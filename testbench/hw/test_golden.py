"""The golden models themselves, against hand-worked examples of their specifications."""

import pytest

from hw.golden import QueueModel, RoundRobinModel, fork_outputs, join_outputs, merge_is_interleaving


def test_queue_model_is_a_bounded_fifo():
    queue = QueueModel(2)
    queue.push("a")
    queue.push("b")
    assert queue.level == 2 and not queue.can_accept()
    with pytest.raises(AssertionError, match="while full"):
        queue.push("c")
    assert queue.pop() == "a" and queue.pop() == "b"
    with pytest.raises(AssertionError, match="while empty"):
        queue.pop()


def test_round_robin_rotates_from_the_last_grant():
    arbiter = RoundRobinModel(3)
    # Everyone requests: 0, 1, 2, 0, ... each grant starting after the last one.
    granted = []
    for _ in range(4):
        granted.append(arbiter.choose({0, 1, 2}))
        arbiter.transferred(granted[-1])
    assert granted == [0, 1, 2, 0]
    # After 0, input 2 alone requesting is granted; then 1 comes before 0 again.
    assert arbiter.choose({2}) == 2
    arbiter.transferred(2)
    assert arbiter.choose({0, 1}) == 0      # cyclic order after 2 is 0, 1
    assert arbiter.choose(set()) is None


def test_round_robin_holds_a_grant_for_a_whole_tuple():
    arbiter = RoundRobinModel(2, tuple_beats=3)
    assert arbiter.choose({0, 1}) == 0
    arbiter.transferred(0)
    assert arbiter.choose({1}) == 0         # mid-tuple: input 0 keeps the grant
    with pytest.raises(AssertionError, match="middle of input 0's tuple"):
        arbiter.transferred(1)


def test_stream_shapes():
    assert fork_outputs([1, 2], 3) == [[1, 2]] * 3
    assert join_outputs([[1, 2], [3, 4]]) == [(1, 3), (2, 4)]
    assert merge_is_interleaving([5, 7, 6], [0, 1, 0], [[5, 6], [7]])
    assert not merge_is_interleaving([6, 7, 5], [0, 1, 0], [[5, 6], [7]])     # reordered
    assert not merge_is_interleaving([5, 7], [0, 1], [[5, 6], [7]])           # lost a token
