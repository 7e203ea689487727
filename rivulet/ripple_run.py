"""``rivulet run GRAPH.json --vectors VECTORS.json``: every case of a RipTide vectors file, one line
per case.

``--sim model`` runs the Ripple golden model (pass/fail, cycles, firings, IPC, the suite's step
count). ``--sim rtl`` lowers each case to an RSN program on ``pe`` tiles (``ripple_core.lower``)
and runs all of them in one simulation of the Verilated fabric, with the stall profile's random
host back-pressure; ``--sim both`` also runs each image on the fabric's golden model. A case
passes on the fabric when the fabric finishes and Ripple's checker (:mod:`ripple_core.check`)
finds nothing wrong.
"""

from pathlib import Path

from hw.params import ParameterError
from ripple_core.check import fabric_problems, read_problems
from ripple_core.graph import GraphError
from ripple_core.interp import AtomicError, DeadlockError, RunawayError
from ripple_core.lower import LoweringError, check_lowerable, compile_lowering, lower_graph
from ripple_core.riptide import load_graph, load_vectors, run_case
from rsn.fabric_spec import DEFAULT_FABRIC, load_fabric
from rsn.fu_pe import PeMemoryError
from rsn.program import ProgramLoadError
from rsn.readout import model_register_reads, register_reads, split_register_reads

from .errors import RunMismatch

__all__ = ["run_graph", "DEPTH", "MEM_LATENCY", "RIPPLE_FABRIC"]

DEPTH = 2           # slot depth of the model runs: the fabric's default token-queue depth
MEM_LATENCY = 1
RIPPLE_FABRIC = DEFAULT_FABRIC.parent / "ripple.toml"


def _variant(path: Path) -> str:
    return "nostream" if path.name.endswith(".nostream.json") else "stream"


def run_graph(path, vectors=None, *, sim: str = "model", say=print, fabric=None, seed: int = 1,
              profile: str = "random_stall_50") -> list:
    """Run every case of ``vectors`` on the graph in ``path``; raise :class:`RunMismatch` if any fails."""
    path = Path(path)
    if sim == "board":
        raise ParameterError(f"--sim board: a dataflow graph ({path.name}) runs on the golden model "
                             f"(--sim model) or the Verilated fabric (--sim rtl, --sim both)")
    if vectors is None:
        raise ParameterError(f"{path.name} is a dataflow graph: give its cases with --vectors FILE.json")
    try:
        graph = load_graph(path)
        cases = load_vectors(vectors)
    except GraphError as error:
        raise ProgramLoadError(str(error)) from None
    if sim == "model":
        return _run_model(path, graph, cases, vectors, say)
    try:
        check_lowerable(graph)
    except LoweringError as error:
        raise ParameterError(f"--sim {sim}: {error}") from None
    return _run_fabric(path, graph, cases, vectors, sim=sim, say=say, fabric=fabric, seed=seed,
                       profile=profile)


def _run_model(path: Path, graph, cases, vectors, say) -> list:
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


def _lower_all(graph, cases, spec, seed: int, vectors):
    lowerings, compiled = [], []
    for k, case in enumerate(cases):
        try:
            lowering = lower_graph(graph, case, spec, name=f"{graph.name}-case{k}")
        except LoweringError as error:
            raise ParameterError(f"{vectors}: case {k}: {error}") from None
        lowerings.append(lowering)
        compiled.append(compile_lowering(lowering, spec, seed=seed))
    return lowerings, compiled


def _run_fabric(path: Path, graph, cases, vectors, *, sim, say, fabric, seed, profile) -> list:
    from rivulet.sim.fabric_run import run_many_on_rtl
    from rivulet.sim.verilator import CocotbFailure
    from rsn.model import DeadlockError as FabricDeadlock
    from rsn.model import FabricModel

    spec = load_fabric(fabric or RIPPLE_FABRIC)
    variant = _variant(path)
    lowerings, compiled = _lower_all(graph, cases, spec, seed, vectors)
    say(f"{graph.name} ({path.name}): {len(cases)} cases lowered to a {spec.rows}x{spec.cols} fabric "
        f"({max(len(c.program.graph.fu_nodes()) for c in compiled)} pe tiles at most); "
        f"stall profile {profile}, case k uses seed {seed}+k")
    say("   model cyc: the golden model at the fabric's queue depth; RTL cyc: the fabric's counter from "
        "START to done, including the load of the image (its words arrive one per cycle at best); "
        "arrays: the STOREd arrays read back from the PEs' banks against the case's expect")
    rows = [[] for _ in cases]
    if sim == "both":
        for k, (lowering, image) in enumerate(zip(lowerings, compiled, strict=True)):
            try:
                fabric_model = FabricModel(spec)
                result = fabric_model.run(image.image, lowering.program.host_inputs)
                reads = model_register_reads(fabric_model, image)
                rows[k] += [f"fabric model: {p}" for p in
                            fabric_problems(lowering, image, result.outputs, result.firings, reads)]
            except (FabricDeadlock, PeMemoryError) as error:
                rows[k].append(f"fabric model: {error}")
    say("== RTL (Verilator): one simulation for every case (the first run builds the fabric; that "
        "takes minutes)")
    try:
        rtl = run_many_on_rtl(compiled, profiles=[profile] * len(compiled),
                              seeds=[seed + k for k in range(len(compiled))],
                              case=f"rivulet-run-{graph.name}-{variant}-{profile}-{seed}",
                              extra_reads=[register_reads(image) for image in compiled])
    except CocotbFailure as failure:
        raise RunMismatch(f"the RTL simulation failed: {failure}") from None
    say(f"   {'case':<5} {'origin':<10} {'result':<7} {'model cyc':>9} {'RTL cyc':>8} {'image':>6} "
        f"{'firings':>8} {'PE firings':>11} {'arrays':>9}")
    failures = []
    for k, case in enumerate(cases):
        lowering, image, result = lowerings[k], compiled[k], rtl[k]
        outcome = run_case(graph, case, variant=variant, depth=spec.queue_depth, mem_latency=MEM_LATENCY)
        problems = [f"golden model: {p}" for p in outcome.problems] + rows[k]
        reads = split_register_reads(image, result.extra)
        problems += fabric_problems(lowering, image, result.outputs, result.firings, reads)
        firings_equal = not any("PE firings" in p for p in problems)
        stored = sorted(lowering.arrays.get(node, node)
                        for node, words in (lowering.program.reads or {}).items() if len(words) > 1)
        arrays_equal = not read_problems(lowering, reads)
        say(f"   {k:<5} {case.get('origin', '-'):<10} {'FAIL' if problems else 'pass':<7} "
            f"{lowering.model.cycles:>9} {result.cycles:>8} {len(image.image):>6} "
            f"{lowering.model.firings:>8} "
            f"{'= model' if firings_equal else 'DIFFER':>11} "
            f"{('-' if not stored else '= expect' if arrays_equal else 'DIFFER'):>9}")
        for problem in problems:
            say(f"         {problem}")
        if problems:
            failures.append(f"case {k}: " + "; ".join(problems))
    if failures:
        raise RunMismatch(f"{len(failures)} of {len(cases)} cases failed: " + " | ".join(failures))
    also = " and on the fabric's golden model" if sim == "both" else ""
    say(f"   all {len(cases)} cases pass on the RTL{also}")
    return rtl
