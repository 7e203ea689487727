"""From a network and its input spike trains to an RSN program on crossbar (``xbar``) tiles.

The lowering (docs/snn.md, "On the fabric"):

* **Clusters.** Each LIF population is clustered on its own (``snn.partition.cluster``, at most
  ``cluster_size`` neurons and the tile's axons each), populations in the network's evaluation
  order, so a cluster's zero-delay sources are all earlier clusters. One xbar tile per cluster;
  a cluster's neurons are the tile's neurons 0, 1, ... in ascending global id.
* **Timing.** A zero-delay source's spikes of timestep t are integrated in t; a delay-1 source's
  (recurrence) in t + 1, through the xbar micro-op's ``delayed`` inputs. A tile reads its
  inputs in port order (delayed sources, host input, zero-delay clusters), each until its
  end-of-step word, so its events arrive source by source, each source's in its emission order;
  the reference (:func:`simulate_clusters`) feeds ``LifCrossbarModel`` in exactly that order. A
  delayed route must hold a timestep of its sender's words (:func:`_check_recurrent_buffers`).
* **Streams.** The host sends the input population's spikes as AER words on one host port,
  multicast to every cluster that needs them; each cluster's output is one stream multicast to
  every cluster that needs it, and an output population's clusters each send theirs to a host
  output port. At most three sources per cluster (the FU's inputs).
* **Id translation.** Words carry the sender's own ids (input index, or the source tile's neuron
  index); the receiving tile's micro-op gives each input a ``base``, and the source's ids occupy
  axons ``base .. base + size - 1``. So a cluster needs as many axons as its sources' sizes
  together (not only the distinct sources it uses); the lowering refuses a cluster that does not
  fit and says so.
* **Token counts.** An RSN route carries a counted number of words, but spike counts depend on
  the data, so the lowering takes every stream's count from the reference simulation of the
  mapped network (numpy, from the specification, not from the RTL). A fabric that produces a
  different count does not finish, and the run fails.
* **Image.** Every tile's weights (zeros where there is no synapse) and zero membranes.
* **Read-back.** The program's ``reads`` latch and read every tile's membranes after the run;
  ``expected_reads`` are the reference's (32-bit two's complement).
"""

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from rsn.graph import StreamGraph
from rsn.program import Program
from snn.lif_model import LifCrossbarModel
from snn.network import Network
from snn.partition import cluster, split_fanin
from snn.xbar import END_WORD, XbarAddressMap, aer_word

__all__ = ["SnnLowering", "Cluster", "lower_network", "simulate_clusters", "LoweringError", "compile_lowered"]


class LoweringError(ValueError):
    """A network cannot be lowered onto the fabric; the message says which part and why."""


@dataclass
class Cluster:
    name: str
    population: str
    gids: list[int]                              # global ids, tile neuron i = gids[i]
    sources: list[str] = field(default_factory=list)    # "input" or cluster names, port order
    bases: list[int] = field(default_factory=list)
    delayed: list[bool] = field(default_factory=list)   # per source: heard one timestep late
    weights: np.ndarray | None = None            # (axons, neurons)


@dataclass
class SnnLowering:
    program: Program
    clusters: list[Cluster]
    spikes: dict[str, list[list[int]]]           # cluster -> per timestep, its neuron ids
    membranes: dict[str, list[int]]              # cluster -> tile membranes after the run
    outputs: dict[str, str]                      # output cluster -> host output port
    address_map: XbarAddressMap
    inputs: list[list[int]] = field(default_factory=list)   # per timestep, the host's input ids


def _ordered_populations(network: Network) -> list[str]:
    try:
        return network.evaluation_order()
    except ValueError as error:
        raise LoweringError(f"snn lowering: {error}") from None


def _clusters(network: Network, spec, cluster_size: int, objective: str, rates) -> list[Cluster]:
    xbar = spec.parameters("xbar")
    axons, neurons, params = xbar.axons, xbar.neurons, xbar.lif_params
    size = min(cluster_size or neurons, neurons)
    crossbar_neurons = split_fanin(network, axons, rates, split=False)
    clusters = []
    for population in _ordered_populations(network):
        if network.populations[population].params != params:
            raise LoweringError(f"snn lowering: population {population!r} has "
                                f"{network.populations[population].params}, but the fabric's xbar tiles "
                                f"compute {params}; give the population the fabric's parameters")
        members = [n for n in crossbar_neurons if n.population == population]
        partition = cluster(members, axons, size, objective,
                            dict(enumerate(np.asarray(rates, dtype=float).tolist())))
        for index, gids in enumerate(partition.clusters):
            clusters.append(Cluster(f"{population}_c{index}", population, sorted(gids)))
    return clusters


def _connect(network: Network, clusters: list[Cluster], spec):
    xbar = spec.parameters("xbar")
    """Sources, bases and weight matrices: the id translation of the module docstring."""
    inputs = [p for p in network.populations.values() if p.params is None]
    if len(inputs) != 1:
        raise LoweringError(f"snn lowering: the network has {len(inputs)} input populations; the "
                            f"lowering streams exactly one from the host")
    source_input = inputs[0]
    owner = {gid: (c, i) for c in clusters for i, gid in enumerate(c.gids)}
    pre, post, weight = network.synapses()
    by_name = {c.name: c for c in clusters}
    delays = network.delays()
    for c in clusters:
        mine = np.isin(post, c.gids)
        heard = {}                                  # source -> its delay into this cluster
        for s, delay in zip(pre[mine].tolist(), delays[mine].tolist(), strict=True):
            source = ("input" if source_input.offset <= s < source_input.offset + source_input.size
                      else owner[s][0].name)
            heard[source] = delay
        # Port order: delayed sources first (their step is complete before this one starts, so
        # reading them first never waits), then the host input, then the zero-delay clusters in
        # evaluation order.
        order = ["input"] + [k.name for k in clusters]
        ordered = ([s for s in order if heard.get(s) == 1] + [s for s in order if heard.get(s) == 0])
        if len(ordered) > 3:
            raise LoweringError(f"snn lowering: cluster {c.name} receives from {len(ordered)} sources "
                                f"({', '.join(ordered)}); an xbar tile merges at most 3 input streams; "
                                f"use larger clusters (cluster_size) upstream")
        bases, next_axon = [], 0
        for source in ordered:
            bases.append(next_axon)
            next_axon += source_input.size if source == "input" else len(by_name[source].gids)
        if next_axon > xbar.axons:
            raise LoweringError(f"snn lowering: cluster {c.name}'s sources ({', '.join(ordered)}) have "
                                f"{next_axon} neurons together, more than the tile's {xbar.axons} "
                                f"axons (each source's ids take a contiguous axon range); use smaller "
                                f"clusters upstream or a larger crossbar")
        c.sources, c.bases, c.delayed = ordered, bases, [heard[s] == 1 for s in ordered]
        c.weights = np.zeros((xbar.axons, xbar.neurons), dtype=np.int64)
        local = {gid: i for i, gid in enumerate(c.gids)}
        for s, t, w in zip(pre[mine].tolist(), post[mine].tolist(), weight[mine].tolist(), strict=True):
            if source_input.offset <= s < source_input.offset + source_input.size:
                axon = bases[ordered.index("input")] + s - source_input.offset
            else:
                source_cluster, index = owner[s]
                axon = bases[ordered.index(source_cluster.name)] + index
            c.weights[axon, local[t]] = w


def _check_input_spikes(network: Network, inputs: list[list[int]]):
    """Every input spike id names a neuron of the input population: a larger id would land on
    the axons of the tile's next source (ids are offsets from the population's first axon)."""
    (population,) = [p for p in network.populations.values() if p.params is None]
    for step, events in enumerate(inputs):
        for event in events:
            if isinstance(event, bool) or not isinstance(event, Integral) or not 0 <= event < population.size:
                raise LoweringError(f"snn lowering: input spike id {event!r} in timestep {step} is outside "
                                    f"the input population {population.name!r} of {population.size} "
                                    f"neurons; use ids 0..{population.size - 1}")


def simulate_clusters(clusters: list[Cluster], params, inputs: list[list[int]]):
    """The mapped network's golden run: per cluster, its spikes per timestep and final membranes.

    A tile's events of a timestep are its sources' spikes in port order; a delayed source's are
    those it sent in the previous timestep (none in the first)."""
    models = {c.name: LifCrossbarModel(c.weights, params) for c in clusters}
    spikes = {c.name: [] for c in clusters}
    previous = {"input": [], **{c.name: [] for c in clusters}}
    for step, events in enumerate(inputs):
        sent = {"input": list(events)}
        for c in clusters:                      # clusters are in evaluation order
            axons = [c.bases[k] + n for k, source in enumerate(c.sources)
                     for n in (previous[source] if c.delayed[k] else sent[source])]
            ids, _ = models[c.name].step(axons)
            ids = [int(n) for n in ids]
            stray = [n for n in ids if n >= len(c.gids)]
            if stray:
                raise LoweringError(f"snn lowering: unused neuron {stray[0]} of cluster {c.name} spikes in "
                                    f"timestep {step} (threshold 0?); its id would land on another "
                                    f"source's axons; use a threshold above 0")
            sent[c.name] = ids
            spikes[c.name].append(ids)
        previous = sent
    return spikes, {name: [int(v) for v in model.v] for name, model in models.items()}


def _check_recurrent_buffers(clusters: list[Cluster], spikes, inputs, spec):
    """A delayed stream must hold one whole timestep of its sender's words.

    The receiver reads a delayed input first in every step, but only once the sender's step is
    complete; meanwhile the sender may already emit the next step into the same route. The words
    a route is sure to hold are the receiving FU's token queue and its switch output buffer; a
    timestep that sends more can stop both tiles for good (on the model and on the RTL alike)."""
    capacity = spec.queue_depth + 2
    for c in clusters:
        for source, late in zip(c.sources, c.delayed, strict=True):
            steps = inputs if source == "input" else spikes[source]
            words = max(len(step) for step in steps) + 1
            if late and words > capacity:
                raise LoweringError(
                    f"snn lowering: the recurrent (delay 1) stream {source} -> {c.name} carries up to "
                    f"{words} words in a timestep, but the route buffers only {capacity} "
                    f"(queue_depth {spec.queue_depth} + 2); raise the fabric's queue_depth to at least "
                    f"{words - 2} or lower the spike rate of {source}")


def _words(steps: list[list[int]]) -> list[int]:
    return [word for step in steps for word in [aer_word(n) for n in step] + [END_WORD]]


def lower_network(network: Network, spec, inputs: list[list[int]], *, name: str = "snn",
                  cluster_size: int | None = None, objective: str = "clusters", rates=None,
                  host_input: str | None = None, host_outputs: list[str] | None = None) -> SnnLowering:
    """Map ``network`` onto ``spec``'s xbar tiles and build the program that runs ``inputs``.

    ``inputs``: per timestep, the input population's spiking ids in the order the host sends them.
    """
    if "xbar" not in {kind for row in spec.tiles for kind in row}:
        raise LoweringError("snn lowering: the fabric has no xbar tiles; use a fabric such as "
                            "examples/fabrics/snn.toml")
    if not 1 <= len(inputs) <= 0xFFFF:
        raise LoweringError(f"snn lowering: {len(inputs)} timesteps; run 1..65535")
    rates = np.zeros(network.size) if rates is None else rates
    clusters = _clusters(network, spec, cluster_size, objective, rates)
    _connect(network, clusters, spec)
    _check_input_spikes(network, inputs)
    xbar = spec.parameters("xbar")
    params = xbar.lif_params
    spikes, membranes = simulate_clusters(clusters, params, inputs)
    _check_recurrent_buffers(clusters, spikes, inputs, spec)
    amap = XbarAddressMap(params, xbar.axons, xbar.neurons, xbar.banks)

    in_ports = [p.name for p in spec.host_ports if p.direction == "in"]
    out_ports = host_outputs or [p.name for p in spec.host_ports if p.direction == "out"]
    host_input = host_input or (in_ports[0] if in_ports else None)
    if host_input is None:
        raise LoweringError("snn lowering: the fabric has no host input port for the input spikes")
    output_clusters = [c for c in clusters if c.population in network.outputs]
    if len(output_clusters) > len(out_ports):
        raise LoweringError(f"snn lowering: {len(output_clusters)} output clusters but only "
                            f"{len(out_ports)} host output ports ({', '.join(out_ports)})")
    steps = len(inputs)
    graph = StreamGraph()
    for c in clusters:
        mask = sum(1 << k for k in range(len(c.sources)))
        bases = (c.bases + [0, 0, 0])[:3]
        delayed = sum(1 << k for k, late in enumerate(c.delayed) if late)
        graph.add_node(c.name, "xbar", [{"steps": steps, "inputs": mask, "base": bases,
                                         "delayed": delayed, "last": 1}])
    input_words = _words(inputs)
    graph.add_host_in("spikes_in", host_input, len(input_words))
    outputs, expected = {}, {}
    for c, port in zip(output_clusters, out_ports, strict=False):
        words = _words(spikes[c.name])
        graph.add_host_out(f"{c.name}_out", port, len(words))
        outputs[c.name], expected[port] = port, words
    streams = {"input": ("spikes_in", len(input_words))}
    streams.update({c.name: (c.name, len(_words(spikes[c.name]))) for c in clusters})
    for source, (node, tokens) in streams.items():
        sinks = [(c.name, c.sources.index(source)) for c in clusters if source in c.sources]
        if source in outputs:
            sinks.append(f"{source}_out")
        if not sinks:
            raise LoweringError(f"snn lowering: the spikes of {source} reach no cluster and no host port; "
                                f"mark its population as an output or connect it")
        graph.connect(node, sinks, tokens)
    memories = {c.name: {**amap.weight_words(c.weights), **amap.membrane_words([0] * xbar.neurons)}
                for c in clusters}
    sizes = ", ".join(f"{c.name} {len(c.gids)}" for c in clusters)
    reads = {c.name: [op for group in range(amap.groups) for op in
                      [(amap.latch_address, group)] + [(amap.membrane_address(group * amap.banks + b), None)
                                                       for b in range(amap.banks)]]
             for c in clusters}
    program = Program(name=name, graph=graph, memories=memories, host_inputs={host_input: input_words},
                      expected=expected, reads=reads,
                      expected_reads={c.name: [v & 0xFFFF_FFFF for v in membranes[c.name]] for c in clusters},
                      description=f"SNN of {len(clusters)} crossbar tiles ({sizes}), {steps} timesteps")
    return SnnLowering(program, clusters, spikes, membranes, outputs, amap, [list(s) for s in inputs])


def compile_lowered(lowering: SnnLowering, spec, seed: int = 0, attempts: int = 8):
    """``compile_program`` with placement seeds ``seed, seed + 1, ...`` until the spikes route.

    Multicast trees on a small grid leave the annealer few link-disjoint placements; another seed
    usually finds one. Raises the last RouteError if none of ``attempts`` does.
    """
    from rsn.program import compile_program
    from rsn.route import RouteError

    for attempt in range(attempts):
        try:
            return compile_program(lowering.program, spec, seed=seed + attempt)
        except RouteError as error:
            last = error
    raise last
