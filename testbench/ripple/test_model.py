"""The interpreter on builder programs: back-pressure, memory order, queues and spill, tasks,
``arb`` fairness, atomics, deadlock reports and graph validation."""

import random

import pytest

from ripple_core.builder import Builder
from ripple_core.graph import Graph, GraphError, Input, edge
from ripple_core.interp import AtomicError, DeadlockError, run
from rivulet.sim.seeds import seeds_for

DEPTHS = (1, 2, 4, None)


def even_numbers(n_values):
    """for i in [0, n): if i & 1 == 0: emit i -- a stream, a compare and a STEER."""
    b = Builder("evens")
    index, _ = b.stream(b.const(0), b.scalar("n", hold=False), b.const(1), cmp="SLT")
    is_even = b.eq(b.and_(index, b.hold(1)), b.hold(0))
    b.sink("out", b.steer(is_even, index))
    return b.build()


def test_steer_pairing_survives_back_pressure_at_every_depth():
    for seed in seeds_for("ripple-steer-pairing"):
        n = random.Random(seed).randrange(0, 40)
        print(f"seed {seed}: n = {n}")
        for depth in DEPTHS:
            result = run(even_numbers(n), {"n": n}, depth=depth)
            assert result.outputs["out"] == list(range(0, n, 2)), (seed, depth)
            assert result.drained and not result.not_idle


def test_one_cycle_per_firing_and_counters():
    result = run(even_numbers(4), {"n": 4}, depth=None)
    # the stream emits indices in cycles 0-3 (its flag-only fifth firing is cycle 4); AND, EQ and
    # STEER each follow one cycle later, so the last STEER fires in cycle 6 and its token lands in 7.
    assert result.cycles == 7
    assert result.firings == 5 + 4 + 4 + 4
    assert result.static_instructions == 4
    assert result.ipc == pytest.approx(17 / 7)


def test_a_load_ordered_after_a_store_sees_the_stored_value():
    for latency in (1, 3):
        b = Builder("raw")
        data = b.array("A", 4)
        done = b.store(data, b.const(2), b.const(77))
        b.sink("got", b.load(data, b.const(2), sync=done))
        result = run(b.build(), memory={"A": [1, 2, 3, 4]}, mem_latency=latency)
        assert result.outputs["got"] == [77] and result.arrays["A"] == [1, 2, 77, 4]
        assert result.cycles == 2 * latency


def test_a_store_ordered_after_a_load_keeps_the_old_value_for_it():
    b = Builder("war")
    data = b.array("A", 2)
    value = b.load(data, b.const(0))
    b.sink("got", value)
    b.store(data, b.const(0), b.const(5), sync=value.at(1))
    result = run(b.build(), memory={"A": [9, 0]})
    assert result.outputs["got"] == [9] and result.arrays["A"] == [5, 0]


def self_pushing_tree(levels, *, spill, depth=2, ind=True):
    """grow(n): if n > 0: push grow(n - 1) twice -- 2^(levels+1) - 1 invocations in all."""
    b = Builder("tree")
    task = b.task("grow", 1, ind=ind, depth=depth, spill=spill)
    (n,) = task.args
    alive = b.sgt(n, b.hold(0))
    child = b.sub(b.steer(alive, n), b.hold(1))
    b.push(task, child)
    b.push(task, child)
    b.push(task, b.const(levels))
    b.sink("visited", n)
    if not ind:
        task.finish(alive)
    return b.build()


@pytest.mark.parametrize("ind", [True, False])
def test_self_push_on_a_bounded_queue_is_a_deadlock_that_names_the_queue(ind):
    with pytest.raises(DeadlockError) as caught:
        run(self_pushing_tree(6, spill=False, ind=ind))
    assert "queue 'grow.q' (depth 2) full" in str(caught.value)
    assert "deadlock" in str(caught.value)


@pytest.mark.parametrize("ind", [True, False])
def test_self_push_completes_on_a_spill_queue(ind):
    result = run(self_pushing_tree(6, spill=True, ind=ind))
    assert sorted(result.outputs["visited"]) == sorted(
        level for level in range(7) for _ in range(2 ** (6 - level)))
    assert result.spill_writes == result.spill_reads > 0 and result.drained


def test_task_dependency_cycles_without_spill_are_found_statically():
    assert self_pushing_tree(3, spill=False).unspilled_task_cycles() == [["grow"]]
    assert self_pushing_tree(3, spill=True).unspilled_task_cycles() == []


def slow_consumer(values, depth, spill, body=6):
    """A producer pushes ``values`` into a task that runs one invocation at a time; its body is a
    chain of ``body`` IDs, so the queue fills and (with spill) overflows."""
    b = Builder("slow")
    task = b.task("work", 1, ind=False, depth=depth, spill=spill)
    (v,) = task.args
    b.sink("order", v)
    token = v
    for _ in range(body):
        token = b.ident(token)
    task.finish(token)
    index, _ = b.stream(b.const(0), b.const(values), b.const(1), cmp="SLT")
    b.push(task, index)
    return b.build()


def test_spill_queue_keeps_fifo_order_and_counts_its_traffic():
    for depth in (1, 2, 4):
        result = run(slow_consumer(30, depth, spill=True), trace=True)
        assert result.outputs["order"] == list(range(30))
        assert result.spill_writes == result.spill_reads > 0
        dispatches = [cycle for cycle, node, out in result.trace if node == "work" and out]
        gaps = {b - a for a, b in zip(dispatches, dispatches[1:], strict=False)}
        assert min(gaps) >= 6 + 1, "a non-ind task dispatched before its invocation finished"


def test_a_bounded_queue_back_pressures_without_losing_order():
    result = run(slow_consumer(30, 2, spill=False))
    assert result.outputs["order"] == list(range(30)) and result.spill_traffic == 0


def test_ind_tasks_are_pipelined():
    result = run(self_pushing_tree(3, spill=True, depth=8, ind=True), trace=True)
    dispatches = [cycle for cycle, node, out in result.trace if node == "grow" and out]
    assert any(b - a == 1 for a, b in zip(dispatches, dispatches[1:], strict=False))


def arbitrated(counts):
    """Source s streams (s, i) for i < counts[s] into one arb; the sink sees the merged tuples."""
    b = Builder("arb")
    tuples = []
    for source, count in enumerate(counts):
        index, flag = b.stream(b.const(0), b.const(count), b.const(1), cmp="SLT")
        tag = b.steer(flag, b.hold(source), pred=False)     # one tag per index: flag 0 while running
        tuples.append((tag, index))
    tag, index = b.arb(*tuples, name="rr")
    b.sink("tag", tag)
    b.sink("index", index)
    return b.build()


def test_arb_is_round_robin_and_fair():
    for seed in seeds_for("ripple-arb-fairness"):
        rng = random.Random(seed)
        counts = [rng.randrange(1, 12) for _ in range(rng.randrange(2, 5))]
        print(f"seed {seed}: counts {counts}")
        for depth in (1, 2, 4):
            result = run(arbitrated(counts), depth=depth)
            tags, indices = result.outputs["tag"], result.outputs["index"]
            for source, count in enumerate(counts):     # whole tuples, each source in order
                assert [i for t, i in zip(tags, indices, strict=True) if t == source] == list(range(count))
            # While every source still has tuples to give, no source waits more than N - 1 grants.
            active = len(counts)
            for k in range(len(tags)):
                remaining = [counts[s] - tags[:k].count(s) for s in range(len(counts))]
                if all(remaining):
                    window = tags[k:k + active]
                    assert len(window) < active or len(set(window)) == active, (seed, depth, tags)
                else:
                    break
            assert result.drained


def counter_updates(sites, addresses, atomic):
    """``sites`` pipelines, each incrementing counts[a] for its list of addresses a: load, add 1,
    store, with acquire/release around them when ``atomic``."""
    b = Builder("counters")
    counts = b.array("counts")
    for site in range(sites):
        table = b.array(f"addr{site}")
        index, _ = b.stream(b.const(0), b.const(len(addresses[site])), b.const(1), cmp="SLT")
        address = b.load(table, index)
        if atomic:
            address = b.acquire(address)
        old = b.load(counts, address)
        done = b.store(counts, address, b.add(old, b.hold(1)))
        if atomic:
            b.release(address, sync=done)
    return b.build()


def test_atomics_stay_mutually_exclusive_under_contention():
    for seed in seeds_for("ripple-atomics"):
        rng = random.Random(seed)
        sites, slots = rng.randrange(2, 5), rng.randrange(1, 6)
        addresses = [[rng.randrange(slots) for _ in range(rng.randrange(5, 25))] for _ in range(sites)]
        print(f"seed {seed}: {sites} sites over {slots} counters")
        memory = {"counts": [0] * slots, **{f"addr{s}": addresses[s] for s in range(sites)}}
        expected = [sum(a.count(k) for a in addresses) for k in range(slots)]
        for depth in (1, 2, 4):
            result = run(counter_updates(sites, addresses, True), memory=memory, depth=depth)
            assert result.arrays["counts"] == expected, (seed, depth)
            assert result.drained


def test_without_atomics_the_same_updates_are_lost():
    addresses = [[0] * 10, [0] * 10]
    memory = {"counts": [0], "addr0": addresses[0], "addr1": addresses[1]}
    assert run(counter_updates(2, addresses, False), memory=memory).arrays["counts"][0] < 20


def test_distinct_addresses_are_held_in_parallel():
    addresses = [[0] * 8, [1] * 8, [2] * 8]
    memory = {"counts": [0] * 3, **{f"addr{s}": addresses[s] for s in range(3)}}
    result = run(counter_updates(3, addresses, True), memory=memory)
    assert result.arrays["counts"] == [8, 8, 8] and result.max_locks_held >= 3


def test_contention_counts_the_acquires_that_waited_for_a_held_address():
    """A site's next ACQUIRE waits for its own RELEASE; sites on counters of their own wait
    exactly as one site alone does, each; sites sharing one counter also wait for each other;
    without atomics nothing waits."""
    def measured(addresses, atomic=True):
        memory = {"counts": [0] * 3, **{f"addr{s}": addresses[s] for s in range(len(addresses))}}
        result = run(counter_updates(len(addresses), addresses, atomic), memory=memory)
        return result.contended_acquires, result.lock_wait_cycles

    alone = measured([[0] * 8])
    assert alone[0] >= 1 and alone[1] >= alone[0]
    assert measured([[0] * 8, [1] * 8, [2] * 8]) == (3 * alone[0], 3 * alone[1])
    shared = measured([[0] * 8] * 3)
    assert shared[1] > 3 * alone[1]
    assert measured([[0] * 8] * 3, atomic=False) == (0, 0)


def test_release_without_acquire_is_an_error():
    b = Builder("bad")
    b.release(b.const(12), name="rel")
    with pytest.raises(AtomicError, match="node 'rel' releases address 12"):
        run(b.build())


def test_a_lock_never_released_is_reported():
    b = Builder("stuck")
    first = b.acquire(b.const(3), name="first")
    b.acquire(b.const(3), sync=first, name="second")
    with pytest.raises(DeadlockError, match="'second'.*waits for address 3, held by 'first'"):
        run(b.build())


def test_validation_names_the_node_and_input():
    graph = Graph("g")
    graph.add("a", "ADD", [Input("const", value=1), edge("missing")])
    with pytest.raises(GraphError, match=r"node 'a' \(ADD\), input 1: source node 'missing' does not exist"):
        graph.validate()
    graph = Graph("g")
    graph.add("s", "STEER", [Input("const", value=1), Input("const", value=2)])
    with pytest.raises(GraphError, match="node 's' .*pred"):
        graph.validate()
    graph = Graph("g")
    graph.add("x", "ID", [Input("const", value=1)])
    graph.add("y", "ADD", [edge("x", 1), Input("const", value=1)])
    with pytest.raises(GraphError, match=r"node 'y' \(ADD\), input 0: node 'x' \(ID\) has no output port 1"):
        graph.validate()
    graph = Graph("g")
    graph.add("z", "SELECT", [Input("const", value=1)])
    with pytest.raises(GraphError, match=r"node 'z' \(SELECT\): has 1 inputs, SELECT takes 3"):
        graph.validate()


def test_builder_refuses_plain_numbers_and_unbound_wires():
    b = Builder()
    b.add(3, b.hold(1), name="n")
    with pytest.raises(GraphError, match=r"node 'n', input 0: 3 is not an operand; use b.const"):
        b.build()
    b = Builder()
    b.ident(b.wire("back"), name="i")
    with pytest.raises(GraphError, match="wire 'back' was never bound"):
        b.build()


def test_a_loop_with_a_wire_and_carry():
    """sum of 0..n-1 with CARRY for i and the sum, exit value through a STEER."""
    for n in (0, 1, 5):
        b = Builder("sum")
        more, i_next, s_next = b.wire("more"), b.wire("i"), b.wire("s")
        i = b.carry(more, b.const(0), i_next)
        total = b.carry(more, b.const(0), s_next)
        more.bind(b.slt(i, b.scalar("n")))
        i_next.bind(b.add(b.steer(more, i), b.hold(1)))
        s_next.bind(b.add(b.steer(more, total), b.steer(more, i)))
        b.sink("sum", b.steer(more, total, pred=False))
        b.steer(more, i, pred=False)          # i's exit value goes nowhere
        graph = b.build()
        for depth in DEPTHS:
            result = run(graph, {"n": n}, depth=depth)
            assert result.outputs["sum"] == [n * (n - 1) // 2], (n, depth)
            assert result.drained and not result.not_idle
