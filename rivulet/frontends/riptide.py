"""RipTide graph JSON with a vectors file: ``rivulet run GRAPH.json --vectors VECTORS.json``.

Every case of the vectors file is a case of the run, one line each. ``--sim model`` runs them on
the Ripple golden model (pass/fail, cycles, firings, IPC, the suite's step count), which needs no
fabric. ``--sim rtl`` lowers each case to an RSN program on ``pe`` tiles (``ripple_core.lower``)
and runs all of them in one simulation of the Verilated fabric; ``--sim both`` also runs each
image on the fabric's golden model. A case passes on the fabric when Ripple's checker
(:mod:`ripple_core.check`) finds nothing wrong and the Ripple golden model, at the fabric's
queue depth, agrees with the case's ``expect``.
"""

from pathlib import Path

from ripple_core.graph import GraphError
from ripple_core.interp import AtomicError, DeadlockError, RunawayError
from ripple_core.lower import LoweringError, check_lowerable, lower_graph
from ripple_core.riptide import load_graph, load_vectors, run_case
from rivulet.errors import RunMismatch
from rsn.fabric_spec import DEFAULT_FABRIC

from .protocol import FrontendError, Options, Workload
from .ripple import ripple_case

__all__ = ["RiptideGraph", "DEPTH", "MEM_LATENCY", "RIPPLE_FABRIC"]

DEPTH = 2           # slot depth of the model runs: the fabric's default token-queue depth
MEM_LATENCY = 1
RIPPLE_FABRIC = DEFAULT_FABRIC.parent / "ripple.toml"

_NOTES = ("model cyc: the golden model at the fabric's queue depth; RTL cyc: the fabric's counter from "
          "START to done, including the load of the image (its words arrive one per cycle at best); "
          "arrays: the STOREd arrays read back from the PEs' banks against the case's expect",)


def _variant(path: Path) -> str:
    return "nostream" if path.name.endswith(".nostream.json") else "stream"


class RiptideGraph:
    """The front-end of RipTide's graph JSON (``*.json``); its cases come from ``--vectors``."""

    name = "dataflow graph"

    def accepts(self, path: Path) -> bool:
        return path.suffix == ".json"

    def load(self, path: Path, options: Options) -> Workload:
        if options.parameters:
            raise FrontendError(f"{path.name} is a dataflow graph: -D sets parameters of a program file's "
                                f"program(); a graph takes its cases from --vectors")
        if options.vectors is None:
            raise FrontendError(f"{path.name} is a dataflow graph: give its cases with --vectors FILE.json")
        try:
            graph = load_graph(path)
            cases = load_vectors(options.vectors)
        except GraphError as error:
            raise FrontendError(str(error)) from None
        vectors, variant = options.vectors, _variant(path)

        def lower(spec) -> list:
            try:
                check_lowerable(graph)
            except LoweringError as error:
                raise FrontendError(f"{path.name}: {error}") from None
            return [_lowered(graph, case, k, spec, vectors, variant) for k, case in enumerate(cases)]

        return Workload(name=graph.name, path=path, default_fabric=RIPPLE_FABRIC, lower=lower,
                        sims=("model", "rtl", "both"), one_line_per_case=True, notes=_NOTES,
                        model=lambda say, record: _run_model(path, graph, cases, vectors, say, record))


def _lowered(graph, case: dict, k: int, spec, vectors, variant: str):
    try:
        lowering = lower_graph(graph, case, spec, name=f"{graph.name}-case{k}")
    except LoweringError as error:
        raise FrontendError(f"{vectors}: case {k}: {error}") from None
    outcome = run_case(graph, case, variant=variant, depth=spec.queue_depth, mem_latency=MEM_LATENCY)
    return ripple_case(lowering, origin=case.get("origin", "-"),
                       problems=[f"golden model: {problem}" for problem in outcome.problems])


def _run_model(path: Path, graph, cases, vectors, say, record) -> list:
    """Every case on the Ripple golden model; raise :class:`RunMismatch` if any fails. ``record``
    (a :class:`~rivulet.report.RunRecord`) gets each case's figures."""
    variant = _variant(path)
    say(f"{graph.name} ({path.name}): {len(cases)} cases on the golden model "
        f"(slot depth {DEPTH}, memory latency {MEM_LATENCY}); "
        f"{graph.static_instructions()} static instructions")
    say(f"   {'case':<5} {'origin':<10} {'result':<7} {'cycles':>7} {'firings':>8} {'IPC':>6} "
        f"{'ref steps':>10}")
    results, failures = [], []
    for k, case in enumerate(cases):
        entry = record.case(f"{graph.name}-case{k}", case.get("origin", "-"))
        try:
            outcome = run_case(graph, case, variant=variant, depth=DEPTH, mem_latency=MEM_LATENCY)
        except (DeadlockError, AtomicError, RunawayError) as error:
            entry.fail([str(error)])
            failures.append(f"case {k}: {error}")
            say(f"   {k:<5} {case.get('origin', '-'):<10} {'FAIL':<7} {error}")
            results.append(None)
            continue
        except GraphError as error:
            raise FrontendError(f"{vectors}: case {k}: {error}") from None
        results.append(outcome)
        entry.runs["model"] = {"cycles": outcome.cycles, "firings": outcome.firings, "ipc": outcome.ipc,
                               "reference_steps": outcome.reference_steps}
        entry.judged(outcome.problems)
        steps = "-" if outcome.reference_steps is None else str(outcome.reference_steps)
        say(f"   {k:<5} {case.get('origin', '-'):<10} {'pass' if outcome.passed else 'FAIL':<7} "
            f"{outcome.cycles:>7} {outcome.firings:>8} {outcome.ipc:>6.2f} {steps:>10}")
        if not outcome.passed:
            failures.append(f"case {k}: " + "; ".join(outcome.problems))
            for problem in outcome.problems:
                say(f"         {problem}")
    if failures:
        raise RunMismatch(f"{len(failures)} of {len(cases)} cases failed: " + " | ".join(failures))
    say(f"   all {len(cases)} cases pass")
    return results
