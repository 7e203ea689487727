"""Operator rules, one state machine at a time, from the RipTide suite's semantics table.

``drive`` plays an operator against hand-filled input slots, firing it while its rule holds,
with no timing and unbounded output space: what it emits and what it leaves are the rule.
"""

import pytest

from ripple_core.graph import Node
from ripple_core.ops import BINARY, STREAM_COMPARES, make_operator, wrap


class Slots:
    def __init__(self, contents, held=()):
        self.q = [list(c) for c in contents]
        self.held = set(held)

    def has(self, i):
        return bool(self.q[i])

    def peek(self, i):
        return self.q[i][0]

    def take(self, i):
        if i not in self.held:
            self.q[i].pop(0)


def drive(op, contents, held=(), limit=100, **attrs):
    """Fire ``op`` until its rule fails; return (firings' outputs, leftover slots, operator)."""
    operator = make_operator(Node("x", op, [None] * len(contents), attrs))
    slots, firings = Slots(contents, held), []
    for _ in range(limit):
        fire = operator.plan(slots, None)
        if fire is None:
            break
        for i in fire.take:
            slots.take(i)
        operator.commit(fire)
        firings.append(dict(fire.out))
    return firings, slots.q, operator


def test_arithmetic_wraps_to_32_bits():
    big = 0x7FFF_FFFF
    assert BINARY["ADD"](big, 1) == -(1 << 31)
    assert BINARY["SUB"](-(1 << 31), 1) == big
    assert BINARY["MUL"](0x10000, 0x10000) == 0
    assert BINARY["MUL"](-3, 7) == -21
    assert BINARY["SHL"](1, 31) == -(1 << 31)
    assert BINARY["ASHR"](-8, 1) == -4
    assert BINARY["LSHR"](-8, 1) == 0x7FFF_FFFC
    assert (BINARY["AND"](-1, 0xF0), BINARY["OR"](1, 2), BINARY["XOR"](-1, 1)) == (0xF0, 3, -2)
    assert BINARY["GEP"](10, 5) == 15
    assert wrap(1 << 32) == 0


@pytest.mark.parametrize("a,b,expected", [
    # a, b, the compares in the order EQ NE SGT SGE SLT SLE UGT UGE ULT ULE
    (-1, 1, (0, 1, 0, 0, 1, 1, 1, 1, 0, 0)),
    (1, -1, (0, 1, 1, 1, 0, 0, 0, 0, 1, 1)),
    (5, 5, (1, 0, 0, 1, 0, 1, 0, 1, 0, 1)),
    (2, 3, (0, 1, 0, 0, 1, 1, 0, 0, 1, 1)),
])
def test_compares_give_0_or_1_signed_and_unsigned(a, b, expected):
    names = ("EQ", "NE", "SGT", "SGE", "SLT", "SLE", "UGT", "UGE", "ULT", "ULE")
    assert tuple(BINARY[name](a, b) for name in names) == expected


def test_binary_needs_both_operands_and_takes_both():
    firings, left, _ = drive("ADD", [[1, 2], [10]])
    assert firings == [{0: 11}] and left == [[2], []]


@pytest.mark.parametrize("pred", [True, False])
def test_steer_discards_on_the_other_polarity(pred):
    firings, left, _ = drive("STEER", [[1, 0, 1, 0], [10, 11, 12, 13]], pred=pred)
    kept = [10, 12] if pred else [11, 13]
    assert [f[0] for f in firings if f] == kept
    assert len(firings) == 4 and left == [[], []]      # every pair is taken, dropped ones too


def test_select_takes_all_three():
    firings, left, _ = drive("SELECT", [[1, 0], [5, 6], [7, 8]])
    assert [f[0] for f in firings] == [5, 8] and left == [[], [], []]


def test_merge_never_consumes_the_unchosen_side():
    firings, left, _ = drive("MERGE", [[0, 1], [20, 21], []])
    assert firings == [] and left == [[0, 1], [20, 21], []]       # waits for f; t untouched
    firings, left, _ = drive("MERGE", [[0, 1, 1], [20, 21], [30]])
    assert [f[0] for f in firings] == [30, 20, 21] and left == [[], [], []]


def test_order_emits_the_first_operand():
    firings, left, _ = drive("ORDER", [[4, 5], [9]])
    assert firings == [{0: 4}] and left == [[5], []]


def test_carry_zero_iterations_then_rearms_for_the_next_loop():
    # pred True: d = 1 continues. First loop exits at once, the second runs twice.
    firings, left, op = drive("CARRY", [[0, 1, 1, 0], [100, 200], [201, 202]], pred=True)
    assert [f.get(0) for f in firings] == [100, None, 200, 201, 202, None]
    assert left == [[], [], []] and op.state == "INIT"


def test_carry_early_next_tokens_wait_for_the_decider():
    # next tokens already there while the decider says exit: they are not taken.
    firings, left, op = drive("CARRY", [[1], [7], [8, 9]], pred=False)
    assert [f.get(0) for f in firings] == [7, None]
    assert left == [[], [], [8, 9]] and op.state == "INIT"
    firings, left, op = drive("CARRY", [[], [7], [8]], pred=True)
    assert firings == [{0: 7}] and left == [[], [], [8]] and op.state == "LOOP"


def test_invariant_replays_per_continue_frees_at_exit_and_relatches():
    firings, left, op = drive("INVARIANT", [[1, 1, 0, 0], [42, 43]], pred=True)
    # 42 for the first loop (twice more on continue), exit frees it; 43: zero-iteration loop.
    assert [f.get(0) for f in firings] == [42, 42, 42, None, 43, None]
    assert left == [[], []] and op.state == "INIT"


def test_invariant_peeks_its_value_while_looping():
    firings, left, op = drive("INVARIANT", [[], [42]], pred=False)
    assert firings == [{0: 42}] and left == [[], [42]] and op.state == "LOOP"


def _stream(start, bound, step, cmp, pred=False):
    firings, left, op = drive("STREAM", [[start], [bound], [step]], cmp=cmp, pred=pred)
    assert left == [[], [], []] and op.state == ("IDLE", 0)
    return [f[0] for f in firings if 0 in f], [f[1] for f in firings]


@pytest.mark.parametrize("cmp,start,bound,step,indices", [
    ("SLT", 0, 3, 1, [0, 1, 2]),
    ("SLE", 0, 3, 1, [0, 1, 2, 3]),
    ("SLT", -2, 2, 1, [-2, -1, 0, 1]),
    ("ULT", -2, 2, 1, []),                  # 0xFFFFFFFE is not below 2
    ("ULE", 1, 5, 2, [1, 3, 5]),
    ("SGT", 2, 4, 1, [2, 3, 4]),            # ends when i > bound: for (i = a; i <= b; i++)
    ("SGE", 2, 4, 1, [2, 3]),
    ("UGT", 2, 10, -1, [2, 1, 0]),          # negative step, ends when i wraps past 0
    ("UGE", -7, -1, 3, [-7, -4]),           # ends when i >= 0xFFFFFFFF, unsigned
    ("ULT", 2, 5, -1, [2, 1, 0]),           # negative step: 0xFFFFFFFF is not below 5
    ("SLT", 5, 5, 1, []),                   # empty range
    ("SGT", 6, 5, -1, []),                  # empty with a negative step
])
def test_stream_every_compare_mode(cmp, start, bound, step, indices):
    got, flags = _stream(start, bound, step, cmp)
    assert got == indices
    assert flags == [0] * len(indices) + [1]          # N indices, N + 1 firings


def test_stream_flag_polarity():
    _, flags = _stream(0, 2, 1, "SLT", pred=True)
    assert flags == [1, 1, 0]


def test_stream_compare_set_is_complete():
    assert set(STREAM_COMPARES) == {"SLT", "ULT", "SLE", "ULE", "SGT", "UGT", "SGE", "UGE"}


def test_hold_is_never_consumed_and_constants_are_consumed_once():
    firings, left, _ = drive("ADD", [[1, 2, 3], [10]], held={1})
    assert [f[0] for f in firings] == [11, 12, 13] and left == [[], [10]]
    firings, left, _ = drive("ADD", [[1, 2, 3], [10]])
    assert [f[0] for f in firings] == [11] and left == [[2, 3], []]


def test_load_and_store_ask_for_memory_and_give_done_tokens():
    firings, left, _ = drive("STORE", [[100], [3], [7], [1]])
    assert firings == [{0: 1}] and left == [[], [], [], []]
    operator = make_operator(Node("x", "LOAD", [None] * 3, {}))
    assert operator.plan(Slots([[100], [3], []]), None) is None       # waits for its sync token
    fire = operator.plan(Slots([[100], [3], [1]]), None)
    assert fire.load == 103 and dict(fire.out)[1] == 1 and fire.take == (0, 1, 2)


def test_task_without_ind_dispatches_one_at_a_time():
    operator = make_operator(Node("t", "TASK", [None] * 2, {"width": 1, "ind": False}))
    slots = Slots([[1, 2, 3], []])
    fire = operator.plan(slots, None)
    operator.commit(fire)
    slots.take(0)
    assert dict(fire.out) == {0: 1} and operator.plan(slots, None) is None    # no credit
    slots.q[1].append(1)                                                      # invocation done
    fire = operator.plan(slots, None)
    assert fire.take == (1,) and fire.out == ()
