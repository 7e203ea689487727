"""Fan-in splitting and greedy clustering of neurons into crossbar-sized clusters.

A cluster is what one crossbar tile holds: at most N neurons, all with the same ``LifParams``
(the tile has one parameter set), and at most A axons, one per distinct presynaptic source of
its neurons, whether that source is outside the cluster or inside it (a tile's own spikes come
back through its input stream like any other).

Splitting (SpiNeMap's unrolling): a neuron with more than A sources becomes a chain. Each link
takes at most A - 1 of the original inputs plus the previous link's output; the last link is
the original neuron. The added links are relays: no leak, reset by subtraction, threshold
``w_max << input_shift``, and they drive the next link with weight ``w_max``, so every relay
spike carries exactly the charge it removed. What is exact: positive charge is conserved up to
the residual below one quantum left in each relay. What is not: each link adds one timestep of
delay, a relay forwards at most one quantum per timestep (excess waits), and negative partial
sums are never forwarded (there are no negative spikes). So a split network is an approximation
of the original, to be checked against its float reference, not bit-exact with it.
"""

import dataclasses
from dataclasses import dataclass

import numpy as np

from snn.network import Network

__all__ = ["Neuron", "Partition", "cluster", "inter_cluster_traffic", "split_fanin"]


@dataclass
class Neuron:
    """One crossbar neuron. ``gid`` is the network's id, or a new id past it for a relay."""

    gid: int
    label: str                      # "layer1[5]", or "layer1[5].relay0" for a chain link
    population: str
    params: object
    sources: dict                   # presynaptic gid -> weight
    rate: float = 0.0               # expected spikes per timestep


def split_fanin(network: Network, axons: int, rates=None, split: bool = True) -> list[Neuron]:
    """The crossbar neurons of ``network``, with every fan-in above ``axons`` split into a chain.

    ``rates``: expected spikes per timestep by global id (inputs included); relays get the
    estimate min(1, positive input charge per step / quantum).
    """
    if axons < 2:
        raise ValueError(f"partition: axons={axons} must be >= 2 (a chain link needs one axon for its "
                         "predecessor and at least one for an input)")
    rates = np.zeros(network.size) if rates is None else np.asarray(rates, dtype=float)
    if rates.shape != (network.size,):
        raise ValueError(f"partition: rates must have one entry per neuron ({network.size}), "
                         f"got {rates.shape}")
    pre, post, weight = network.synapses()
    order = np.argsort(post, kind="stable")
    pre, post, weight = pre[order], post[order], weight[order]
    bounds = np.searchsorted(post, np.arange(network.size + 1))
    neurons, next_gid = [], network.size
    for population in network.populations.values():
        if population.params is None:
            continue
        p = population.params
        for index in range(population.size):
            gid = population.offset + index
            lo, hi = bounds[gid], bounds[gid + 1]
            sources = dict(zip(pre[lo:hi].tolist(), weight[lo:hi].tolist(), strict=True))
            label = f"{population.name}[{index}]"
            if len(sources) > axons and not split:
                raise ValueError(f"partition: layer {population.name!r} neuron {index} has fan-in "
                                 f"{len(sources)}, above the crossbar's {axons} axons; allow splitting "
                                 f"or use a larger crossbar")
            if len(sources) <= axons:
                neurons.append(Neuron(gid, label, population.name, p, sources, float(rates[gid])))
                continue
            relay = dataclasses.replace(p, threshold=p.w_max << p.input_shift, compare=">=",
                                        spike_requires_nonnegative=False, reset="subtract", leak="none",
                                        leak_amount=0, fire="step", leak_first=False, refractory=0)
            items = list(sources.items())
            chunks = [dict(items[k:k + axons - 1]) for k in range(0, len(items), axons - 1)]
            previous = None
            for k, chunk in enumerate(chunks):
                if previous is not None:
                    chunk[previous] = p.w_max
                if k == len(chunks) - 1:
                    neurons.append(Neuron(gid, label, population.name, p, chunk, float(rates[gid])))
                    break
                charge = sum(rates[s] * w for s, w in chunk.items() if s < network.size and w > 0)
                if previous is not None:
                    charge += neurons[-1].rate * p.w_max
                neurons.append(Neuron(next_gid, f"{label}.relay{k}", population.name, relay, chunk,
                                      min(1.0, charge / p.w_max)))
                previous, next_gid = next_gid, next_gid + 1
    return neurons


@dataclass
class Partition:
    neurons: list                   # the Neuron records clustered
    clusters: list                  # per cluster: list of gids
    axons: list                     # per cluster: sorted list of source gids (its axon rows)
    rates: dict                     # gid -> spikes per timestep, sources and neurons alike


def inter_cluster_traffic(partition: Partition) -> float:
    """Spikes per timestep crossing between clusters or arriving from inputs: each source counts
    once per cluster that has it as an axon and does not hold it (a multicast packet per tile)."""
    return float(sum(partition.rates.get(s, 0.0) for members, axons in
                     zip(partition.clusters, partition.axons, strict=True)
                     for s in set(axons) - set(members)))


def cluster(neurons: list, axons: int = 128, size: int = 128, objective: str = "clusters",
            source_rates: dict | None = None, max_clusters: int | None = None) -> Partition:
    """Greedy clustering, SpiNeMap's two variants.

    - ``"clusters"`` (minClusters): first-fit decreasing; neurons by falling fan-in, each into
      the first cluster, by falling axon use, that still fits it.
    - ``"traffic"`` (minComm): neurons by falling spike rate, each into the cluster that adds the
      least inter-cluster traffic (ties: the fuller cluster, then the older), a new cluster only
      when none fits.

    Neither is optimal, and neither dominates the other on every input.
    """
    if objective not in ("clusters", "traffic"):
        raise ValueError(f"partition: objective={objective!r} must be 'clusters' or 'traffic'")
    if size < 1:
        raise ValueError(f"partition: size={size} must be >= 1")
    rates = dict(source_rates or {})
    rates.update({n.gid: n.rate for n in neurons})
    for n in neurons:
        if len(n.sources) > axons:
            raise ValueError(f"partition: layer {n.population!r} neuron {n.label} has fan-in "
                             f"{len(n.sources)}, "
                             f"above the crossbar's {axons} axons; split it first (split_fanin)")
    members: list = []
    axon_sets: list = []
    params: list = []
    if objective == "clusters":
        ordered = sorted(neurons, key=lambda n: (-len(n.sources), n.gid))
    else:
        ordered = sorted(neurons, key=lambda n: (-n.rate, -len(n.sources), n.gid))
    for n in ordered:
        fits = [c for c in range(len(members)) if params[c] == n.params and len(members[c]) < size
                and len(axon_sets[c] | n.sources.keys()) <= axons]
        if objective == "clusters":
            fits.sort(key=lambda c: (-len(axon_sets[c]), c))
        else:
            def added(c, n=n):
                new = sum(rates.get(s, 0.0) for s in n.sources.keys() - axon_sets[c] - members[c] - {n.gid})
                return new - (rates.get(n.gid, 0.0) if n.gid in axon_sets[c] else 0.0)
            fits.sort(key=lambda c: (added(c), -len(axon_sets[c]), c))
        if fits:
            c = fits[0]
        else:
            if max_clusters is not None and len(members) >= max_clusters:
                raise ValueError(f"partition: layer {n.population!r} (neuron {n.label}) needs cluster "
                                 f"{len(members) + 1}, past the limit of {max_clusters} crossbar tiles "
                                 f"of {axons} axons x {size} neurons")
            members.append(set())
            axon_sets.append(set())
            params.append(n.params)
            c = len(members) - 1
        members[c].add(n.gid)
        axon_sets[c] |= n.sources.keys()
    return Partition(list(neurons), [sorted(m) for m in members], [sorted(a) for a in axon_sets], rates)
