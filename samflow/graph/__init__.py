"""SAM's dataflow graphs (Graphviz files from SAM's compiler) run on the golden models.

:mod:`.dot` reads the file, :mod:`.model` gives its nodes and typed streams, :mod:`.tensors`
turns scipy / numpy tensors into SAM's per-level arrays and written ones back,
:mod:`.primitives` maps each node type onto :mod:`samflow.models`, and :mod:`.run` checks a graph
with its tensors and evaluates it. ``python -m samflow.graph GRAPH.gv`` runs one on random inputs
against scipy. See docs/sparse.md, "Graphs on the golden model".
"""

from .dot import GraphError
from .model import Graph, graph_from_text, load_graph
from .run import GraphRun, bind_tensors, check_graph, run_graph

__all__ = ["GraphError", "Graph", "GraphRun", "load_graph", "graph_from_text", "check_graph",
           "bind_tensors", "run_graph"]
