"""``rivulet run GRAPH.json --vectors VECTORS.json``: every case of a RipTide vectors file on the
Ripple golden model, one line per case (pass/fail, cycles, firings, IPC, the suite's step count).

The PE exists as the ``pe`` FU kind, but no lowering from a dataflow graph to an RSN program exists
yet, so only ``--sim model`` runs a graph.
"""

from pathlib import Path

from hw.params import ParameterError
from ripple_core.graph import GraphError
from ripple_core.interp import AtomicError, DeadlockError, RunawayError
from ripple_core.riptide import load_graph, load_vectors, run_case
from rsn.program import ProgramLoadError

from .run_command import RunMismatch

__all__ = ["run_graph", "DEPTH", "MEM_LATENCY"]

DEPTH = 2           # slot depth of the model runs: the fabric's default token-queue depth
MEM_LATENCY = 1


def _variant(path: Path) -> str:
    return "nostream" if path.name.endswith(".nostream.json") else "stream"


def run_graph(path, vectors=None, *, sim: str = "model", say=print) -> list:
    """Run every case of ``vectors`` on the graph in ``path``; raise :class:`RunMismatch` if any fails."""
    path = Path(path)
    if sim != "model":
        raise ParameterError(f"--sim {sim}: dataflow graphs are not lowered to the fabric yet (the pe FU "
                             f"exists, the graph-to-program lowering does not), so a dataflow graph "
                             f"({path.name}) runs only on the golden model: use --sim model")
    if vectors is None:
        raise ParameterError(f"{path.name} is a dataflow graph: give its cases with --vectors FILE.json")
    try:
        graph = load_graph(path)
        cases = load_vectors(vectors)
    except GraphError as error:
        raise ProgramLoadError(str(error)) from None
    variant = _variant(path)
    say(f"{graph.name} ({path.name}): {len(cases)} cases on the golden model "
        f"(slot depth {DEPTH}, memory latency {MEM_LATENCY}); "
        f"{graph.static_instructions()} static instructions")
    say(f"   {'case':<5} {'origin':<10} {'result':<7} {'cycles':>7} {'firings':>8} {'IPC':>6} "
        f"{'ref steps':>10}")
    results, failures = [], []
    for k, case in enumerate(cases):
        try:
            outcome = run_case(graph, case, variant=variant, depth=DEPTH, mem_latency=MEM_LATENCY)
        except (DeadlockError, AtomicError, RunawayError) as error:
            failures.append(f"case {k}: {error}")
            say(f"   {k:<5} {case.get('origin', '-'):<10} {'FAIL':<7} {error}")
            results.append(None)
            continue
        except GraphError as error:
            raise ProgramLoadError(f"{vectors}: case {k}: {error}") from None
        results.append(outcome)
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
