"""The throughput a mapped network is predicted to reach: the SDF graph of its clusters as they
were lowered onto crossbar tiles, and its MCM throughput (:mod:`snn.sdf`).

One actor per cluster, its time ``snn.cost.cycles_per_timestep`` for the cluster's mean input
events per timestep in the run being lowered; a 1-token self-loop (a tile runs one timestep at a
time); per spike stream an edge with the stream's delay in tokens (a delayed source's spikes
are those of the timestep before) and a reverse edge of ``buffer`` tokens, the timesteps a
receiver holds. The fabric's buffers hold words, not timesteps, so ``buffer`` is a bound chosen
by the caller (bench/snn.py compares 1 and 2 with the measured rate).
"""

from dataclasses import dataclass
from fractions import Fraction

from snn import cost
from snn.sdf import SdfGraph, throughput_mcm

__all__ = ["ClusterThroughput", "cluster_throughput"]


@dataclass
class ClusterThroughput:
    graph: SdfGraph
    actor_cycles: dict[str, int]        # cluster -> cycles per timestep
    events: dict[str, int]              # cluster -> mean input events per timestep (rounded up)
    throughput: Fraction                # timesteps per cycle

    @property
    def cycles_per_timestep(self) -> float | None:
        return float(1 / self.throughput) if self.throughput else None


def cluster_throughput(lowering, spec, buffer: int = 1) -> ClusterThroughput:
    """The SDF graph of ``lowering`` (:class:`snn.lower.SnnLowering`) on ``spec``'s xbar tiles."""
    xbar = spec.parameters("xbar")
    steps = max(1, len(lowering.inputs))
    graph, times, events = SdfGraph(), {}, {}
    for c in lowering.clusters:
        total = sum(len(step) for source in c.sources
                    for step in (lowering.inputs if source == "input" else lowering.spikes[source]))
        events[c.name] = -(-total // steps)
        times[c.name] = cost.cycles_per_timestep(events[c.name], xbar.neurons, xbar.banks)
        graph.add_actor(c.name, times[c.name])
        graph.add_edge(c.name, c.name, tokens=1)
    for c in lowering.clusters:
        for source, delayed in zip(c.sources, c.delayed, strict=True):
            if source != "input":
                graph.add_edge(source, c.name, tokens=int(delayed))
                graph.add_edge(c.name, source, tokens=buffer + int(delayed))
    return ClusterThroughput(graph, times, events, throughput_mcm(graph))
