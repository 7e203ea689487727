"""Every refused construct raises LangError with file:line, the construct and what to write."""
# ruff: noqa: F841, B007  (the kernels below are refused on purpose, unused names included)

import pytest

from ripple_core.lang import Array, LangError, atomic, compile_kernel, ind, inline, kernel, out, push
from ripple_core.lang.reference import run_reference

from .check import agree

HERE = __file__.rsplit("/", 1)[-1]


def refused(kernel_fn, pattern, **options):
    with pytest.raises(LangError, match=pattern) as info:
        compile_kernel(kernel_fn, **options)
    assert HERE in str(info.value) and ":" in info.value.where
    return str(info.value)


@kernel
def divides(a: int):
    return a // 3


@kernel
def modulo(a: int):
    return a % 4


@kernel
def floats(a: int):
    return a + 1.5


@kernel
def unpacks(a: int):
    x, y = a, a
    return x


@kernel
def breaks(n: int):
    i = 0
    while i < n:
        i += 1
        break
    return i


@kernel
def continues(n: int):
    s = 0
    for i in range(n):
        continue
    return s


@kernel
def early_return(n: int):
    if n > 0:
        return 1
    return 0


@kernel
def prints(n: int):
    print(n)


@kernel
def attributes(A: Array):
    return A.size


@kernel
def lists(n: int):
    x = [n]
    return n


@kernel
def comprehension(n: int):
    x = [i for i in range(n)]
    return x


@kernel
def lambdas(n: int):
    f = lambda v: v  # noqa: E731
    return n


@kernel
def tries(n: int):
    try:
        n += 1
    except ValueError:
        pass
    return n


@kernel
def other_with(n: int):
    with open("x"):
        pass


@kernel
def loop_var_assigned(n: int):
    s = 0
    for i in range(n):
        i += 1
    return s


@kernel
def variable_step(n: int, k: int):
    s = 0
    for i in range(0, n, k):
        s += i
    return s


@kernel
def not_range(A: Array):
    for v in A:
        pass


@kernel
def non_condition_and(a: int, b: int):
    return a and b


@kernel
def strings(n: int):
    s = "x"
    return n


@kernel
def globals_(n: int):
    global X
    return n


@kernel
def unannotated(n):
    return n


@kernel
def defaults(n: int = 3):
    return n


@kernel
def keyword_call(n: int):
    return helper(n, k=1)


@inline
def helper(n: int, k: int):
    return n + k


@kernel
def recursive(n: int):
    return recursive(n)


@kernel
def unknown_call(n: int):
    return abs(n)


@kernel
def undefined(n: int):
    return m  # noqa: F821


@kernel
def loop_var_after(n: int):
    for i in range(n):
        pass
    return i


@kernel
def while_true(n: int):
    while True:
        n += 1


@kernel
def array_value(A: Array):
    B = A
    B[0] = 1


@kernel
def slices(A: Array):
    A[0] = A[1:2]


@kernel
def uses_push(A: Array):
    async def task(v):
        A[v] = 1
    push(task, 0)


@kernel
def reads_kernel_local(A: Array, n: int):
    k = n + 1

    async def task(v):
        A[v] = k
    push(task, 0)


@kernel
def nested_atomic(A: Array):
    @ind
    async def task(v):
        with atomic(v):
            with atomic(v + 1):
                A[v] = 1
    push(task, 0)


@kernel
def push_width(A: Array):
    async def task(v, w):
        A[v] = w
    push(task, 0)


@kernel
async def async_for_assigns(A: Array, n: int):
    s = 0
    async for i in range(n):
        s = A[i]
    A[0] = s


@kernel
def task_returns(A: Array):
    async def task(v):
        return v
    push(task, 0)


@kernel
def augmented_divides(a: int):
    a //= 2
    return a


@kernel
def augmented_word_modulo(A: Array):
    A[0] %= 4


@kernel
def divides_by_zero(a: int):
    return a + 7 // 0


@kernel
def powers(a: int):
    return a + 2 ** 3


@kernel
def true_divides(a: int):
    return a / 2


@kernel
def outputs_return(a: int):
    out("return", a)


@kernel
def outputs_an_array_name(A: Array):
    out("A", 1)


@kernel
def outputs_no_name(a: int):
    out("", a)


@kernel
def never_pushed(A: Array, n: int):
    @ind
    async def task(v):
        A[v] = 1
    A[0] = n


SCALE = 1.5
WIDE = (1 << 33) + 1
LOWEST = -(1 << 31)
HIGHEST = (1 << 31) - 1


@kernel
def wide_literal(a: int):
    return a + 0x1_0000_0005


@kernel
def wide_constant(a: int):
    return a + WIDE


@kernel
def counts_to_the_top(a: int):
    s = 0
    for i in range(a, HIGHEST + 1):
        s = s + i
    return s


@kernel
def counts_past_the_top(a: int):
    s = 0
    for i in range(a, 0xFFFF_FFFF):
        s = s + i
    return s


@kernel
def edge_constants(A: Array):
    A[0] = A[0] + 0xFFFF_FFFF
    A[1] = LOWEST


@kernel
def reads_a_float_constant(a: int):
    return a + SCALE


@kernel
def reads_a_builtin(A: Array):
    A[0] = len


@kernel
async def awaits(n: int):
    await n


@inline
async def async_helper(x: int):
    return x


@kernel
def calls_an_async_helper(a: int):
    return async_helper(a)


CASES = [
    (divides, "operator //.*no divider.*use >> and &"),
    (modulo, "operator %.*no divider"),
    (floats, "float constant.*32-bit ints.*fixed point"),
    (unpacks, "tuple unpacking.*one value at a time"),
    (breaks, "break.*fold the exit test"),
    (continues, "continue.*guard the rest"),
    (early_return, "return.*last statement"),
    (prints, "print.*out\\("),
    (attributes, "attribute access"),
    (lists, "list.*Array argument"),
    (comprehension, "comprehension.*for loop"),
    (lambdas, "lambda.*@inline"),
    (tries, "try.*no exceptions"),
    (other_with, "with.*atomic"),
    (loop_var_assigned, "loop variable 'i'.*while loop"),
    (variable_step, "range step.*nonzero constant"),
    (not_range, "for loop.*range"),
    (non_condition_and, "and/or operand.*x != 0"),
    (strings, "str constant"),
    (globals_, "global.*argument"),
    (unannotated, "parameter 'n'.*Array.*int"),
    (defaults, "default values"),
    (keyword_call, "keyword arguments"),
    (recursive, "recursive call"),
    (unknown_call, "call of abs.*@inline"),
    (undefined, "name 'm'.*assign it"),
    (loop_var_after, "loop variable 'i'.*after the loop"),
    (while_true, "while True.*condition"),
    (array_value, "array 'A'.*index it"),
    (slices, "slice"),
    (reads_kernel_local, "read of 'k' in task 'task'.*push argument"),
    (nested_atomic, "nested atomic"),
    (push_width, "push to task.*1 values for its 2 parameters"),
    (async_for_assigns, "assignment to 's' in async for.*array"),
    (task_returns, "return in a task"),
    (augmented_divides, "operator //.*no divider.*use >> and &"),
    (augmented_word_modulo, "operator %.*no divider.*& \\(divisor - 1\\)"),
    (divides_by_zero, "operator //: the divisor is the constant 0"),
    (powers, "operator \\*\\*: the fabric has no power operator.*1 << k"),
    (true_divides, "operator /: true division makes a float.*write //"),
    (outputs_return, "output 'return': an output's name is a Python identifier other than 'return'"),
    (outputs_an_array_name, "output 'A': A is an array of the kernel.*use another name"),
    (outputs_no_name, "output '': an output's name is a Python identifier"),
    (never_pushed, "task 'task': is never pushed.*push it with push\\(task, ...\\)"),
    (reads_a_float_constant, "name 'SCALE': is a float, and a kernel reads only the int constants"),
    (wide_literal, "constant 4294967301: does not fit a 32-bit word.*from -2\\*\\*31 to 2\\*\\*32 - 1"),
    (wide_constant, "constant WIDE = 8589934593: does not fit a 32-bit word"),
    (counts_to_the_top, "range bound: range\\(a, b \\+ 1\\) with b = 2\\*\\*31 - 1 would never end.*"
                        "smaller bound"),
    (counts_past_the_top, "range bound 4294967295: the loop compares signed 32-bit words, where it reads "
                          "as -1"),
    (reads_a_builtin, "name 'len': is a Python builtin"),
    (awaits, "await: tasks do not wait for each other"),
    (calls_an_async_helper, "helper async_helper: an async def helper returns a coroutine.*plain def"),
]


@pytest.mark.parametrize("kernel_fn, pattern", CASES, ids=[k.__name__ for k, _ in CASES])
def test_refusal(kernel_fn, pattern):
    print(refused(kernel_fn, pattern))


def test_a_task_never_pushed_is_refused_at_its_own_line():
    assert f"{HERE}:{never_pushed.fn.__code__.co_firstlineno + 3}:" in refused(never_pushed, "never pushed")


def test_ordered_mode_refuses_ripple_constructs():
    message = refused(uses_push, 'mode="ripple"', mode="ordered")
    assert "async def task" in message
    compile_kernel(uses_push)       # inferred: ripple


def _inflight_kernel(decorator_text: str):
    from ripple_core.lang.random_kernels import kernel_from_source

    return kernel_from_source(f"""
from ripple_core.lang import Array, ind, kernel, push

@kernel
def bounded(A: Array, n: int):
    {decorator_text}
    async def work(i):
        A[i] = i
    for i in range(n):
        push(work, i)
""", "bounded", HERE)


@pytest.mark.parametrize("decorator", ["@ind(3)", "@ind(inflight=0)", "@ind(inflight=missing)",
                                       "@ind(inflight=2, depth=4)"])
def test_ind_takes_only_a_positive_inflight(decorator):
    refused(_inflight_kernel(decorator), r"@ind takes one argument, inflight=k, an integer >= 1")


@kernel
def augmented_constant_division(A: Array):
    x = -7
    x //= 2
    y = 7
    y %= -3
    A[0] = x * 10 + y


def test_constants_at_a_words_edges_are_accepted():
    """0xFFFFFFFF is the word -1 and -2**31 the lowest: both fit, and wrap as CPython's reference does."""
    agree(edge_constants, {}, {"A": [5, 0]})
    assert run_reference(edge_constants, {}, {"A": [5, 0]})[0]["A"] == [4, -(1 << 31)]


def test_augmented_division_of_constants_folds_like_c():
    agree(augmented_constant_division, {}, {"A": [0]})
    assert run_reference(augmented_constant_division, {}, {"A": [0]})[0]["A"] == [-29]


@pytest.mark.parametrize("k", range(1, 8))
def test_outputs_and_tasks_may_have_names_like_an_operators(k):
    """The compiler names operators add1, sub2, ...; a user's output or task of such a name keeps it."""
    from ripple_core.lang.random_kernels import kernel_from_source

    named = kernel_from_source(f"""
from ripple_core.lang import Array, kernel, out, push

@kernel
def named(A: Array, n: int):
    async def add{k}(v):
        A[v] = v + 1
    out("sub{k}", n - 1)
    for i in range(n):
        push(add{k}, i + 1)
""", "named", HERE)
    agree(named, {"n": 3}, {"A": [0] * 4})


@pytest.mark.parametrize("statement,marker", [("out('x', n)", "out"), ("push(n, n)", "push"),
                                              ("with atomic(n):\n        pass", "atomic")])
def test_a_marker_used_without_its_import_is_named(statement, marker):
    from ripple_core.lang.random_kernels import kernel_from_source

    forgot = kernel_from_source(f"""
from ripple_core.lang import kernel

@kernel
def forgot(n: int):
    {statement}
""", "forgot", HERE)
    refused(forgot, f"{marker}\\(\\): {marker} is not ripple_core.lang's {marker} here; import it: "
            f"from ripple_core.lang import {marker}")
