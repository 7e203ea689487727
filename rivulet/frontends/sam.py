"""SAM dataflow graphs (``*.gv``, the Graphviz files SAM's compiler writes):
``rivulet run GRAPH.gv [-D size=N -D density=D -D seed=S]``.

The graph is lowered onto the fabric's sparse tiles (:func:`samflow.graph.lower.lower_graph`) with
random integer tensors of the given size and density. A run passes when the tensors decoded from
the writers' host ports equal scipy's result, for the graphs whose computation Rivulet knows by
file name (``samflow.graph.cli.REFERENCES``); for any other graph the reference is the golden
models' run of the same graph, and the run says so.
"""

from pathlib import Path

import numpy as np

from rsn.fabric_spec import DEFAULT_FABRIC
from samflow.graph import GraphError, load_graph
from samflow.graph.cli import REFERENCES, random_tensors
from samflow.graph.lower import compile_lowered, decode_outputs, lower_graph, tile_faults
from samflow.kind import MAX_BANK_DEPTH

from .protocol import Case, FrontendError, Options, Workload

__all__ = ["SamGraph", "SPARSE_FABRIC", "ACCUMULATOR_FABRIC"]

SPARSE_FABRIC = DEFAULT_FABRIC.parent / "sparse.toml"
# A graph with a sparse accumulator (Gustavson's SpMM) needs sam_spacc tiles, which sparse.toml
# leaves out to keep its tile mix for the other graphs.
ACCUMULATOR_FABRIC = DEFAULT_FABRIC.parent / "sparse_gustavson.toml"
_PARAMETERS = {"size": 12, "density": 0.2, "seed": 0}


def _dense(value):
    return value.toarray() if hasattr(value, "toarray") else np.asarray(value)


class SamGraph:
    """The front-end of SAM's graphs (``*.gv``)."""

    name = "SAM graph"

    def accepts(self, path: Path) -> bool:
        return path.suffix == ".gv"

    def load(self, path: Path, options: Options) -> Workload:
        unknown = sorted(set(options.parameters) - set(_PARAMETERS))
        if unknown:
            takes = ", ".join(f"{k} (default {v})" for k, v in _PARAMETERS.items())
            raise FrontendError(f"{path.name}: -D {', '.join(unknown)} is not a parameter of a SAM graph "
                                f"run; it takes {takes}")
        if options.vectors is not None:
            raise FrontendError(f"{path.name} is a SAM graph: its tensors are random (-D size, density, "
                                "seed), not --vectors")
        given = {**_PARAMETERS, **options.parameters}
        size, density, seed = given["size"], given["density"], given["seed"]
        if not (isinstance(size, int) and size >= 1 and isinstance(density, int | float) and 0 <= density <= 1
                and isinstance(seed, int)):
            raise FrontendError(f"{path.name}: -D size={size} density={density} seed={seed}: the size must "
                                "be an integer of at least 1, the density between 0 and 1, the seed an "
                                "integer")
        if size > MAX_BANK_DEPTH:       # and the random tensors alone would take size^2 words of memory
            raise FrontendError(f"{path.name}: -D size={size} is more than a sparse tile's bank holds: a "
                                f"mode of N coordinates takes N words of an array's bank and N + 1 of a "
                                f"compressed level's, and a bank ([sam_array], [sam_scan_c] depth) is at "
                                f"most {MAX_BANK_DEPTH} words; use a size of at most {MAX_BANK_DEPTH}")
        try:
            graph = load_graph(path)
        except GraphError as error:
            raise FrontendError(str(error)) from None

        def lower(spec) -> list:
            try:
                tensors = random_tensors(graph, size, density, seed)
                lowered = lower_graph(graph, tensors, spec, name=f"{path.stem}-n{size}-s{seed}")
            except GraphError as error:
                raise FrontendError(str(error)) from None
            known = REFERENCES.get(path.stem)
            expected = known(tensors) if known else lowered.model_run.outputs

            def check(compiled, outputs, firings, reads) -> list[str]:
                faults = tile_faults(lowered, reads) if reads else []
                if faults:
                    return faults
                try:
                    decoded = decode_outputs(lowered, outputs)
                except GraphError as error:
                    return [f"the writers' streams do not decode: {error}"]
                return [f"{name}: differs from {'scipy' if known else 'the golden models'}"
                        for name, value in expected.items()
                        if not np.array_equal(_dense(decoded[name]), _dense(value))]
            judge = "scipy" if known else "the golden models' run of the graph"
            return [Case(lowered.program.name, lowered.program, check=check, origin=judge,
                         compile=lambda _program, fabric, seed: compile_lowered(lowered, fabric, seed=seed),
                         passed=f"{', '.join(expected)} decoded from the writers' ports "
                                f"{'equals' if len(expected) == 1 else 'equal'} {judge}")]

        notes = (f"tensors: random, size {size}, density {density}, seed {seed}",)
        if path.stem not in REFERENCES:
            notes += (f"no scipy reference is known for {path.stem}; the golden models' run of the graph is "
                      "the reference",)
        accumulates = any(node.type == "spaccumulator" for node in graph.nodes.values())
        return Workload(name=path.stem, path=path, lower=lower, notes=notes,
                        default_fabric=ACCUMULATOR_FABRIC if accumulates else SPARSE_FABRIC)
