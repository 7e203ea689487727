"""Run one fuzzer program on the machines that do not need a simulator, and say where they disagree.

The reference is the source program's own interpreter (:func:`ripple_core.fuzz.source.evaluate`).
Against it:

* the Ripple golden model (:mod:`ripple_core.interp`) on the compiled graph at the fabric's slot
  depth, at depth 1 and unbounded: it completes, drains, gives the reference's host outputs and
  arrays, and the same firings per node at every depth (ordered dataflow is confluent);
* the fabric's golden model (:class:`rsn.model.FabricModel`) on the compiled image: ``done``,
  host outputs, every PE's firings (the golden model's, per unit) and the status and arrays read
  back through the PEs' registers.

The RTL is compared the same way by :func:`rtl_disagreements` from what a Verilated run returns.
"""

from dataclasses import dataclass, field

from ripple_core.check import fabric_problems
from ripple_core.interp import DeadlockError, run
from ripple_core.lower import LoweringError, compile_lowering, lower_graph
from rsn.model import DeadlockError as FabricDeadlock
from rsn.model import FabricModel
from rsn.readout import model_register_reads
from rsn.route import RouteError

from .compile import compile_program
from .source import Program, evaluate

__all__ = ["Prepared", "prepare", "model_disagreements", "rtl_disagreements", "NotRunnable"]


# Re-placements a fuzzer graph gets before it counts as not routable. Graphs that route take one
# or two; one that never routes took all of compile_lowering's 64 (four minutes of one core, a
# test's whole run, on a slow machine). The fuzzer looks for disagreements, not for the router's
# limits, and skips a graph that does not fit.
ROUTE_ATTEMPTS = 8


class NotRunnable(Exception):
    """The program does not fit the fabric (it does not route, or its graph needs more tiles)."""


@dataclass
class Prepared:
    name: str
    program: Program
    graph: object
    case: dict
    lowering: object
    compiled: object
    reference: object
    notes: list[str] = field(default_factory=list)


def prepare(program: Program, spec, *, name: str, seed: int = 0) -> Prepared:
    """Reference run, graph, case, lowering and compiled image of ``program`` on ``spec``.

    Raises :class:`NotRunnable` if the graph does not place and route on the fabric; a
    LoweringError for any other reason is a finding and propagates."""
    reference = evaluate(program)
    graph = compile_program(program, name)
    case = {"args": dict(program.scalars), "mem": {k: list(v) for k, v in program.arrays.items()},
            "expect": {**{sink: list(tokens) for sink, tokens in reference.outputs.items()},
                       **{array: list(words) for array, words in reference.arrays.items()}}}
    sinks = [node.name for node in graph.nodes.values() if node.op == "SINK"]
    case["expect"] = {key: value for key, value in case["expect"].items()
                      if key in sinks or key in program.arrays}
    lowering = lower_graph(graph, case, spec, name=name)
    try:
        compiled = compile_lowering(lowering, spec, seed=seed, attempts=ROUTE_ATTEMPTS)
    except (RouteError, ValueError) as error:
        if isinstance(error, LoweringError):
            raise
        raise NotRunnable(f"{name}: {error}") from None
    return Prepared(name, program, graph, case, lowering, compiled, reference)


def _compare_run(label, result, reference) -> list[str]:
    problems = []
    for sink, tokens in reference.outputs.items():
        got = result.outputs.get(sink, [])
        if got != tokens:
            problems.append(f"{label}: host output {sink} is {got}, the reference {tokens}")
    for array, words in reference.arrays.items():
        if result.arrays.get(array) != words:
            problems.append(f"{label}: array {array} is {result.arrays.get(array)}, the reference {words}")
    if result.leftovers:
        problems.append(f"{label}: tokens left behind in {', '.join(result.leftovers[:4])}")
    return problems


def model_disagreements(prepared: Prepared, spec) -> list[str]:
    """Where the Ripple golden model (three depths) and the fabric golden model depart from the
    reference or from each other; empty if they all agree."""
    problems = []
    graph, case, reference = prepared.graph, prepared.case, prepared.reference
    firings = None
    for depth in (spec.queue_depth, 1, None):
        label = f"ripple model at depth {depth or 'unbounded'}"
        try:
            result = run(graph, case["args"], case["mem"], depth=depth)
        except DeadlockError as error:
            problems.append(f"{label} deadlocks: {error}")
            continue
        problems += _compare_run(label, result, reference)
        if firings is None:
            firings = result.firings_by_node
        elif result.firings_by_node != firings:
            changed = sorted(n for n in firings if firings[n] != result.firings_by_node.get(n))
            problems.append(f"{label}: firings of {', '.join(changed[:4])} differ from those at depth "
                            f"{spec.queue_depth}")
    model = FabricModel(spec)
    try:
        outcome = model.run(prepared.compiled.image, prepared.lowering.program.host_inputs)
    except FabricDeadlock as error:
        return problems + [f"fabric model deadlocks: {error}"]
    problems += fabric_disagreements(prepared, "fabric model", outcome.done, outcome.outputs,
                                     outcome.firings, model_register_reads(model, prepared.compiled))
    return problems


def fabric_disagreements(prepared: Prepared, label: str, done, outputs, firings, reads) -> list[str]:
    """What a fabric run (model or RTL) got wrong, by :func:`ripple_core.check.fabric_problems`,
    and whether ``done`` rose."""
    problems = [] if done else ["done never rose"]
    problems += fabric_problems(prepared.lowering, prepared.compiled, outputs, firings, reads)
    return [f"{label}: {problem}" for problem in problems]


def rtl_disagreements(prepared: Prepared, result, reads) -> list[str]:
    """Compare a Verilated run's :class:`rsn.readout.RtlResult` (and its register reads)."""
    return fabric_disagreements(prepared, "RTL", result.done_cycle is not None, result.outputs,
                                result.firings, reads)
