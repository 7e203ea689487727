"""The shapes the rules promise, read off the compiled graphs."""

from ripple_core.lang import Array, atomic, compile_kernel, kernel


def ops(graph, op):
    return [node for node in graph.nodes.values() if node.op == op]


@kernel
def summed(A: Array, n: int):
    s = 0
    for i in range(n):
        s += A[i]
    return s


@kernel
def absolute(a: int, b: int):
    x = a - b
    if x < 0:
        x = -x
    return x


@kernel
def two_stores(A: Array, i: int):
    A[i] = 1
    A[i + 1] = 2


@kernel
def outer_into_inner(A: Array, m: int, n: int):
    for i in range(m):
        k = i + 5
        for j in range(n):
            A[j] = A[j] + k


def test_for_range_is_a_stream():
    graph = compile_kernel(summed)
    assert len(ops(graph, "STREAM")) == 1 and not ops(graph, "SLT")


def test_pure_scalar_branch_is_a_select():
    graph = compile_kernel(absolute)
    assert len(ops(graph, "SELECT")) == 1 and not ops(graph, "STEER") and not ops(graph, "MERGE")


def test_loop_that_only_reads_an_array_gets_no_order():
    graph = compile_kernel(summed)
    assert not ops(graph, "ORDER")


def test_two_stores_to_one_array_are_ordered():
    graph = compile_kernel(two_stores)
    first, second = ops(graph, "STORE")
    assert any(src.kind == "edge" and graph.nodes[src.source].op == "ORDER" for src in second.inputs)
    order = graph.nodes[next(src.source for src in second.inputs if src.kind == "edge"
                             and graph.nodes[src.source].op == "ORDER")]
    assert any(src.kind == "edge" and src.source == first.name for src in order.inputs)


def test_outer_value_enters_the_inner_loop_through_an_invariant():
    graph = compile_kernel(outer_into_inner)
    streams = {node.name for node in ops(graph, "STREAM")}
    assert any(src.kind == "edge" and src.source in streams for node in ops(graph, "INVARIANT")
               for src in node.inputs[:1])


@kernel
async def two_locks(C: Array, B: Array, a: int, b: int):
    async for i in range(4):
        with atomic(a & 3):
            C[a & 3] = C[a & 3] + i
        with atomic(b & 3):
            C[b & 3] = C[b & 3] + B[i]


def test_with_two_acquire_sites_every_block_is_entered_through_spill_queues():
    """Overlapping invocations may meet at two sites on one address; a bounded slot in front of
    the waiting block would then stall the holder's producers (docs: several ACQUIRE sites)."""
    graph = compile_kernel(two_locks)
    queues = [node for node in ops(graph, "QUEUE") if not node.name.endswith(".q")]    # not task queues
    fed = {node.inputs[0].source for node in ops(graph, "ACQUIRE")}
    assert queues and all(node.inputs[0].spill for node in queues)
    assert fed <= {node.name for node in queues}, "an ACQUIRE's address does not come from a spill queue"
    from ripple_core.lang.examples import histogram, ripple_bfs
    for one_site in (ripple_bfs, histogram):
        assert not any(node.inputs[0].spill for node in ops(compile_kernel(one_site), "QUEUE")
                       if not node.name.endswith(".q")), one_site
