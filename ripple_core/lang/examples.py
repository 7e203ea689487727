"""The hand-built programs of :mod:`ripple_core.programs` and the RipTide peer suite's kernels,
written in the Ripple language. The tests compare each against the hand-built graph (or the
suite's vectors) on the golden model."""

from .api import Array, atomic, ind, kernel, out, push

__all__ = ["ordered_bfs", "ripple_bfs", "dmv_ordered", "dmv_ripple", "tree_walk", "serial_walk",
           "histogram", "simple", "simple_mem", "nn_vadd", "nn_relu", "dmv", "PEER_KERNELS"]


@kernel
def ordered_bfs(row: Array, col: Array, visited: Array, queue: Array):
    head = 0
    tail = 1
    while head < tail:
        v = queue[head]
        head += 1
        for e in range(row[v], row[v + 1]):
            d = col[e]
            if visited[d] == 0:
                visited[d] = 1
                queue[tail] = d
                tail += 1


@kernel
def ripple_bfs(row: Array, col: Array, visited: Array):
    @ind
    async def visit(v):
        for e in range(row[v], row[v + 1]):
            d = col[e]
            with atomic(d):
                if visited[d] == 0:
                    visited[d] = 1
                    push(visit, d)
    push(visit, 0)


@kernel
def dmv_ordered(A: Array, x: Array, y: Array, m: int, n: int):
    for i in range(m):
        s = 0
        for j in range(n):
            s += A[i * n + j] * x[j]
        y[i] = s


@kernel
async def dmv_ripple(A: Array, x: Array, y: Array, m: int, n: int):
    async for i in range(m):
        s = 0
        for j in range(n):
            s += A[i * n + j] * x[j]
        y[i] = s


@kernel
def tree_walk(seen: Array, nodes: int):
    @ind
    async def walk(n):
        seen[n] = 1
        out("done", 1)
        left = n + n + 1
        right = left + 1
        if left < nodes:
            push(walk, left)
        if right < nodes:
            push(walk, right)
    push(walk, 0)


@kernel
def serial_walk(seen: Array, nodes: int, step: int):
    async def walk(n):
        out("order", n)
        seen[n] = 1
        following = n + step
        if following < nodes:
            push(walk, following)
    push(walk, 0)


@kernel
def histogram(keys: Array, count: Array, n: int):
    for i in range(n):
        k = keys[i]
        with atomic(k):
            count[k] += 1
        out("done", 1)


# The RipTide peer suite (C signatures in argument order; pointers are Arrays).

@kernel
def simple(a: int, b: int, base: int):
    total = base
    for i in range(a, b + 1):
        total += i
    return total


@kernel
def simple_mem(a: int, b: int):
    total = 0
    for i in range(a, b + 1):
        total += i
    return total


@kernel
def nn_vadd(weight: Array, src: Array, dest: Array, size: int):
    for i in range(size):
        dest[i] = src[i] + weight[i]


@kernel
def nn_relu(src: Array, dest: Array, size: int):
    for i in range(size):
        v = src[i]
        dest[i] = 0 if v < 0 else v


@kernel
def dmv(m: int, n: int, A: Array, B: Array, Z: Array):
    for i in range(m):
        s = 0
        for j in range(n):
            s += A[i * n + j] * B[j]
        Z[i] = s


PEER_KERNELS = {"simple": simple, "simple-mem": simple_mem, "nn-vadd": nn_vadd, "nn-relu": nn_relu,
                "dmv": dmv}
