"""From a network to clusters, their SDF graph, a tile binding and a throughput guarantee.

One actor per cluster, fired once per SNN timestep. Its execution time is the tile's cost
for the timestep's expected input events (``snn.cost``): the sum of its axons' spike rates,
rounded up. A cluster feeding another gets an edge with ``delay`` initial tokens (1: spikes of
timestep t are integrated in t+1, the reference's "deliver at t+1"), and a reverse edge with
``buffer`` tokens, so the receiver's input buffer holds ``delay + buffer`` timesteps; every actor
has a self-loop with one token, since a tile does not overlap its own timesteps.
"""

from math import ceil

import numpy as np

from snn import cost
from snn.partition import Partition, cluster, split_fanin
from snn.sdf import SdfGraph

__all__ = ["cluster_sdf", "partition_network"]


def partition_network(network, axons: int = 128, size: int = 128, objective: str = "clusters",
                      rates=None, split: bool = True, max_clusters: int | None = None) -> Partition:
    """Split fan-ins above ``axons``, then cluster; ``rates`` are spikes per timestep by global id."""
    rates = np.zeros(network.size) if rates is None else np.asarray(rates, dtype=float)
    neurons = split_fanin(network, axons, rates, split)
    return cluster(neurons, axons, size, objective, dict(enumerate(rates.tolist())), max_clusters)


def cluster_sdf(partition: Partition, size: int = 128, banks: int = 1, delay: int = 1,
                buffer: int = 2) -> SdfGraph:
    if delay < 0 or buffer < 1:
        raise ValueError(f"cluster SDF: delay={delay} must be >= 0 and buffer={buffer} >= 1")
    owner = {gid: c for c, members in enumerate(partition.clusters) for gid in members}
    graph = SdfGraph()
    for c, axons in enumerate(partition.axons):
        events = ceil(sum(partition.rates.get(s, 0.0) for s in axons) - 1e-9)
        graph.add_actor(f"c{c}", cost.cycles_per_timestep(events, size, banks))
        graph.add_edge(f"c{c}", f"c{c}", tokens=1)
    links = sorted({(owner[s], c) for c, axons in enumerate(partition.axons) for s in axons
                    if s in owner and owner[s] != c})
    for src, dst in links:
        graph.add_edge(f"c{src}", f"c{dst}", tokens=delay)
        graph.add_edge(f"c{dst}", f"c{src}", tokens=buffer)
    return graph
