"""Ripple-language kernel files: ``rivulet run kernel.py`` for a Python file that defines
``@kernel`` functions (:mod:`ripple_core.lang`, docs/ripple-language.md).

The file's kernel (``--kernel NAME`` when it defines several) is compiled with
``compile_kernel(fn, mode=...)`` (``--mode ordered|ripple``; default: inferred). Its cases come
from the file's ``cases()`` (a list of ``{"args": {...}, "mem": {...}}``, optionally with
``"expect"``; ``-D NAME=VALUE`` sets its keyword parameters, and a parameter named ``kernel``
receives the chosen kernel's name) or from ``--vectors FILE`` (the RipTide vectors schema). A
case without ``expect`` gets the kernel's own source run by CPython
(:func:`ripple_core.lang.reference.run_reference`) as its reference: every array's final words,
the ``return`` value and each ``out`` stream. A case with ``expect`` is also run on CPython, and
a disagreement is reported: the file's kernel and its expected results contradict each other.

``--sim model`` runs the Ripple golden model (:mod:`ripple_core.interp`, slot depth 2, memory
latency 1); ``--sim rtl`` lowers every case onto the fabric's ``pe`` tiles and runs all of them
in one simulation; ``--sim both`` adds the fabric's golden model. The default fabric is
``examples/fabrics/ripple_large.toml`` (a shared memory, where general programs lower) unless the
file sets ``FABRIC``. In a kernel with tasks the order of ``out`` tokens is the schedule's, so
those streams are compared as multisets; arrays and the return value are compared exactly.
"""

import ast
import inspect
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ripple_core.check import firing_problems, read_problems
from ripple_core.graph import Graph, GraphError
from ripple_core.interp import AtomicError, DeadlockError, RunawayError, check_inputs, run
from ripple_core.lang import Kernel, LangError, compile_kernel
from ripple_core.lang.reference import run_reference
from ripple_core.lower import LoweringError, lower_graph
from ripple_core.ops import wrap
from ripple_core.riptide import CASE_FIELDS, load_vectors
from rivulet.errors import RunMismatch
from rsn.fabric_spec import DEFAULT_FABRIC
from rsn.words import word_problem, words_problem

from .program_file import USER_CODE_ERRORS, _bind, _located, _module
from .protocol import FrontendError, Options, Workload
from .ripple import ripple_case

__all__ = ["KernelFile", "KERNEL_FABRIC", "MODES", "defines_kernels", "load_kernel", "compiled_kernel",
           "LoadedKernel", "kernel_cases", "lowered_case", "model_problems"]

KERNEL_FABRIC = DEFAULT_FABRIC.parent / "ripple_large.toml"
MODES = ("ordered", "ripple")
DEPTH = 2               # the golden model's slot depth for --sim model (the fabrics' queue depth)
MEM_LATENCY = 1
MASK = 0xFFFF_FFFF

_NOTES = ("model cyc: the Ripple golden model at the fabric's queue depth; RTL cyc: the fabric's counter "
          "from START to done, including the load of the image; arrays: every array read back from the "
          "fabric against the reference (CPython on the kernel's source, or the case's expect)",)


def _decorated_kernel(node) -> bool:
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if name == "kernel":
            return True
    return False


def defines_kernels(path: Path) -> bool:
    """Whether ``path`` is a Python file of language kernels: a top-level function decorated
    ``@kernel`` and no ``program()`` (a program file's entry point takes precedence)."""
    if path.suffix != ".py" or not path.is_file():
        return False
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (SyntaxError, ValueError, OSError):
        return False            # the program-file front-end reports it, with the file's line
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    if any(node.name == "program" for node in functions):
        return False
    return any(_decorated_kernel(node) for node in functions)


def _redefined_kernel(path: Path) -> str | None:
    """A kernel's name defined twice at the top of the file: Python keeps the last definition,
    so the other would be silently ignored."""
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (SyntaxError, ValueError, OSError):
        return None             # importing the file reports it
    first = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name in first and (_decorated_kernel(node) or _decorated_kernel(first[node.name])):
                return (f"{path}:{node.lineno}: kernel {node.name!r} is defined again (first at line "
                        f"{first[node.name].lineno}), and Python keeps only the last; rename one")
            first[node.name] = node
    return None


@dataclass
class LoadedKernel:
    """The chosen kernel of a file, compiled: its module (for ``cases()`` and ``FABRIC``)."""
    path: Path
    module: object
    kernel: Kernel
    graph: Graph
    mode: str

    @property
    def name(self) -> str:
        return self.kernel.__name__

    @property
    def unordered(self) -> bool:
        """Whether the order of ``out`` tokens is the schedule's (the graph has tasks)."""
        return any(node.op == "TASK" for node in self.graph.nodes.values())


def _kernels(path: Path, module) -> dict[str, Kernel]:
    """The kernels the file itself defines (imported ones are helpers it may call)."""
    found = {}
    for name, value in vars(module).items():
        if isinstance(value, Kernel) and not value.inline \
                and Path(value.fn.__code__.co_filename).resolve() == path.resolve():
            found[name] = value
    return found


def load_kernel(path: Path, *, kernel: str | None = None, mode: str | None = None) -> LoadedKernel:
    """Import ``path``, choose its kernel and compile it; refuse (:class:`FrontendError`) a file
    with no kernel, an ambiguous or unknown ``kernel`` name, and what the compiler refuses."""
    path = Path(path)
    if mode is not None and mode not in MODES:
        raise FrontendError(f"--mode {mode!r}: choose one of: {', '.join(MODES)}")
    module = _module(path)
    if redefined := _redefined_kernel(path):
        raise FrontendError(redefined)
    kernels = _kernels(path, module)
    names = ", ".join(kernels) or "none"
    if kernel is not None:
        if kernel not in kernels:
            raise FrontendError(f"{path}: --kernel {kernel!r} is not a kernel of the file; "
                                f"its kernels: {names}")
        chosen = kernels[kernel]
    elif len(set(kernels.values())) == 1:         # one kernel, perhaps under several names
        chosen = next(iter(kernels.values()))
    elif not kernels:
        raise FrontendError(f"{path} defines no @kernel function of its own")
    else:
        raise FrontendError(f"{path} defines {len(kernels)} kernels ({names}); choose one with --kernel NAME")
    return compiled_kernel(chosen, mode=mode, path=path, module=module)


def compiled_kernel(chosen: Kernel, *, mode: str | None = None, path: Path | None = None,
                    module=None) -> LoadedKernel:
    """``chosen`` compiled (a kernel object, e.g. of :mod:`ripple_core.lang.examples`); the
    compiler's refusal becomes a :class:`FrontendError`."""
    try:
        graph = compile_kernel(chosen, mode=mode)
    except LangError as error:
        raise FrontendError(str(error)) from None
    used = mode or ("ripple" if any(node.op in ("TASK", "ACQUIRE") for node in graph.nodes.values())
                    else "ordered")
    return LoadedKernel(path or Path(chosen.fn.__code__.co_filename), module, chosen, graph, used)


def _words(values) -> list[int]:
    return [wrap(value) for value in values]


def _reference(loaded: LoadedKernel, case: dict) -> dict:
    """The case's expect from CPython on the kernel's source: every array, every SINK."""
    memory = {name: list(words) for name, words in case.get("mem", {}).items()}
    final, outputs, returned = run_reference(loaded.kernel, case.get("args", {}), memory)
    expect = {name: _words(words) for name, words in final.items()}
    for node in loaded.graph.nodes.values():
        if node.op == "SINK":
            values = ([] if returned is None else [returned]) if node.name == "return" \
                else outputs.get(node.name, [])
            expect[node.name] = _words(values)
    return expect


def _same(got: list[int], wanted: list[int], unordered: bool) -> bool:
    got, wanted = [v & MASK for v in got], [v & MASK for v in wanted]
    return Counter(got) == Counter(wanted) if unordered else got == wanted


def _disagreement(expect: dict, reference: dict, unordered_names) -> list[str]:
    problems = []
    for name, wanted in expect.items():
        if name in reference and not _same(reference[name], wanted, name in unordered_names):
            problems.append(f"CPython on the kernel gives {name} = {reference[name][:6]}"
                            f"{'...' if len(reference[name]) > 6 else ''}, the case expects {wanted[:6]}"
                            f"{'...' if len(wanted) > 6 else ''}")
    return problems


def _unordered_names(loaded: LoadedKernel) -> set[str]:
    if not loaded.unordered:
        return set()
    return {node.name for node in loaded.graph.nodes.values() if node.op == "SINK" and node.name != "return"}


def _shape_problem(loaded: LoadedKernel, case: dict) -> str | None:
    """What is malformed in a case's fields, before anything runs: args and mem must be dicts,
    mem must hold every array (CPython needs each one), and expect may name only the kernel's
    arrays and outputs, each with a list of 32-bit words."""
    graph = loaded.graph
    for field, what in (("args", "scalar name: value"), ("mem", "array name: list of words"),
                        ("expect", "array or output name: list of words")):
        if field in case and not isinstance(case[field], dict):
            return f"{field} must be a dict of {what}, not {type(case[field]).__name__}"
    missing = [name for name in graph.arrays if name not in case.get("mem", {})]
    if missing:
        return (f"mem has no words for array(s) {', '.join(missing)}; give every array of {graph.name}, "
                f"e.g. \"{missing[0]}\": [0, 0, 0] ([] for an empty one)")
    outputs = [node.name for node in graph.nodes.values() if node.op == "SINK"]
    for name, words in case.get("expect", {}).items():
        if name not in graph.arrays and name not in outputs:
            return (f"expect names {name!r}, which is neither an array nor an output of {graph.name} "
                    f"(arrays: {', '.join(graph.arrays) or 'none'}; outputs: {', '.join(outputs) or 'none'})")
        if not isinstance(words, list | tuple):
            return f"expect {name!r} must be a list of words, not {type(words).__name__}; e.g. [{words!r}]"
        for index, value in enumerate(words):
            if problem := word_problem(value, 32, "a dataflow word"):
                return f"expect {name!r} word {index}: {problem}"
    return None


def kernel_cases(loaded: LoadedKernel, parameters: dict | None = None,
                 vectors=None) -> list[tuple[dict, list]]:
    """(case with its ``expect``, problems found before any run) for each case of the file's
    ``cases()`` or of ``vectors``."""
    path = loaded.path
    if vectors is not None:
        if parameters:
            raise FrontendError(f"-D sets parameters of {path.name}'s cases(); with --vectors the cases "
                                f"come from the vectors file")
        try:
            raw = load_vectors(vectors, loaded.graph)
        except GraphError as error:
            raise FrontendError(str(error)) from None
        where = str(vectors)
    else:
        function = getattr(loaded.module, "cases", None)
        if not callable(function):
            raise FrontendError(f"{path} defines no cases() function; write one returning a list of "
                                f"{{\"args\": {{...}}, \"mem\": {{...}}}}, or give --vectors FILE.json")
        given = dict(parameters or {})
        if "kernel" in inspect.signature(function).parameters:
            given.setdefault("kernel", loaded.name)
        try:
            _takes_fabric, given = _bind(path, function, given)
        except FrontendError as error:
            raise FrontendError(str(error).replace("program()", "cases()")) from None
        try:
            raw = function(**given)
        except USER_CODE_ERRORS as error:
            raise FrontendError(_located(path, error, "in cases()")) from error
        if isinstance(raw, dict):
            raw = [raw]
        if not isinstance(raw, list) or not raw or not all(isinstance(case, dict) for case in raw):
            raise FrontendError(f"{path}:{function.__code__.co_firstlineno}: cases() must return a non-empty "
                                f"list of dicts {{\"args\": {{...}}, \"mem\": {{...}}}}")
        where = f"{path}: cases()"
    unordered = _unordered_names(loaded)
    made = []
    for k, case in enumerate(raw):
        unknown = sorted(set(case) - set(CASE_FIELDS))
        if unknown:
            raise FrontendError(f"{where}: case {k} has fields {unknown}; a case has args, mem and "
                                f"optionally expect")
        problem = _shape_problem(loaded, case)
        if problem:
            raise FrontendError(f"{where}: case {k}: {problem}")
        try:
            check_inputs(loaded.graph, case.get("args", {}), case.get("mem", {}))
        except GraphError as error:
            raise FrontendError(f"{where}: case {k}: {error}") from None
        try:
            reference = _reference(loaded, case)
        except USER_CODE_ERRORS as error:
            raise FrontendError(_located(path, error, f"case {k} on CPython")) from error
        if "expect" in case:
            problems = _disagreement(case["expect"], reference, unordered)
            made.append(({**case, "expect": {**reference, **case["expect"]}}, problems))
        else:
            made.append(({**case, "expect": reference}, []))
    return made


def model_problems(loaded: LoadedKernel, case: dict, result) -> list[str]:
    """What a run of the Ripple golden model got wrong against the case's expect."""
    problems = []
    unordered = _unordered_names(loaded)
    for name, wanted in case["expect"].items():
        got = result.arrays.get(name) if name in loaded.graph.arrays else result.outputs.get(name, [])
        if got is None or not _same(got, wanted, name in unordered):
            kind = "array" if name in loaded.graph.arrays else "output"
            problems.append(f"{kind} {name}: got {(got or [])[:6]}, expected {wanted[:6]}"
                            + (" (as a multiset)" if name in unordered else ""))
    if result.leftovers:
        problems.append("tokens left over: " + ", ".join(result.leftovers[:4]))
    return problems


def _run_model(loaded: LoadedKernel, cases, say, record) -> list:
    graph = loaded.graph
    say(f"{loaded.name} ({loaded.path.name}, mode {loaded.mode}): {len(cases)} cases on the Ripple golden "
        f"model (slot depth {DEPTH}, memory latency {MEM_LATENCY}); {graph.static_instructions()} static "
        f"instructions")
    say(f"   {'case':<5} {'origin':<10} {'result':<7} {'cycles':>7} {'firings':>8} {'IPC':>6}")
    results, failures = [], []
    for k, (case, problems) in enumerate(cases):
        origin = case.get("origin", "-")
        entry = record.case(f"{loaded.name}-case{k}", origin)
        try:
            result = run(graph, case.get("args", {}), case.get("mem", {}), depth=DEPTH,
                         mem_latency=MEM_LATENCY)
        except (DeadlockError, AtomicError, RunawayError) as error:
            entry.fail([str(error)])
            failures.append(f"case {k}: {error}")
            say(f"   {k:<5} {origin:<10} {'FAIL':<7} {error}")
            results.append(None)
            continue
        problems = problems + model_problems(loaded, case, result)
        results.append(result)
        entry.runs["model"] = {"cycles": result.cycles, "firings": result.firings, "ipc": result.ipc}
        entry.judged(problems)
        say(f"   {k:<5} {origin:<10} {'FAIL' if problems else 'pass':<7} {result.cycles:>7} "
            f"{result.firings:>8} {result.ipc:>6.2f}")
        if problems:
            failures.append(f"case {k}: " + "; ".join(problems))
            for problem in problems:
                say(f"         {problem}")
    if failures:
        raise RunMismatch(f"{len(failures)} of {len(cases)} cases failed: " + " | ".join(failures))
    say(f"   all {len(cases)} cases pass (reference: CPython on the kernel, or the case's expect)")
    return results


def lowered_case(loaded: LoadedKernel, case: dict, problems: list, k: int, spec):
    """One case on the fabric: the lowering, the Ripple golden model at the fabric's depth against
    the reference, and a checker that takes a task kernel's ``out`` streams as multisets."""
    try:
        lowering = lower_graph(loaded.graph, case, spec, name=f"{loaded.name}-case{k}")
    except LoweringError as error:
        raise FrontendError(f"{loaded.path}: case {k}: {error}") from None
    found = [f"golden model: {problem}" for problem in model_problems(loaded, case, lowering.model)]
    made = ripple_case(lowering, origin=case.get("origin", "-"), problems=[*problems, *found])
    unordered = {lowering.outputs[name] for name in _unordered_names(loaded) if name in lowering.outputs}
    if unordered:
        def check(compiled, outputs: dict, firings: dict, reads: dict | None) -> list[str]:
            found = list(lowering.array_problems)
            if reads is not None:
                found += read_problems(lowering, reads)
            for port, wanted in (lowering.program.expected or {}).items():
                got = outputs.get(port, [])
                if port in unordered:
                    if not _same(got, wanted, True):
                        found.append(f"host port {port}: tokens {sorted(v & MASK for v in got)[:6]} are not "
                                     f"the expected multiset {sorted(v & MASK for v in wanted)[:6]}")
                elif problem := words_problem(f"host port {port}", got, wanted, 32):
                    found.append(problem)
            return found + firing_problems(lowering, compiled, firings)
        made.check = check
    return made


class KernelFile:
    """The front-end of Python files of Ripple-language ``@kernel`` functions."""

    name = "kernel file"
    kernel_options = True           # reads --mode and --kernel

    def accepts(self, path: Path) -> bool:
        return defines_kernels(Path(path))

    def load(self, path: Path, options: Options) -> Workload:
        loaded = load_kernel(path, kernel=options.kernel, mode=options.mode)
        cases = kernel_cases(loaded, options.parameters, options.vectors)
        fabric = getattr(loaded.module, "FABRIC", None)
        if fabric is not None and not isinstance(fabric, str | Path):
            raise FrontendError(f"{path}: FABRIC = {fabric!r}; it must be the path of a fabric description")
        default = KERNEL_FABRIC if fabric is None else path.parent / fabric

        def lower(spec) -> list:
            return [lowered_case(loaded, case, problems, k, spec) for k, (case, problems) in enumerate(cases)]

        return Workload(name=loaded.name, path=path, default_fabric=default, lower=lower,
                        sims=("model", "rtl", "both"), one_line_per_case=True, notes=_NOTES,
                        model=lambda say, record: _run_model(loaded, cases, say, record))
