"""An SNN as populations and weighted projections, from numpy arrays only.

Neurons get global ids: populations in the order they were added, each a contiguous range.
Input populations are spike sources that live off the crossbars; every other population is
LIF neurons with one ``LifParams``. A projection is dense (a pre x post matrix whose zeros are
not synapses) or sparse (a COO triple); either way its weights are checked against the
receiving population's weight width, and errors name the projection (the layer) and the limit.

Timing: a projection has a ``delay`` of 0 or 1 timesteps. With delay 0 the receiving population
integrates the spikes in the timestep they are sent (a feed-forward layer); with delay 1 in the
next one, which is what makes recurrence well defined: a population that hears itself, or a
later population, does so through delay-1 projections. The zero-delay projections must form no
cycle (they fix the order in which populations are evaluated within a timestep).
"""

from dataclasses import dataclass

import numpy as np

from snn.lif_params import LifParams

__all__ = ["Network", "Population", "Projection"]


@dataclass(frozen=True)
class Population:
    name: str
    size: int
    params: LifParams | None        # None: an input population (spike source)
    offset: int                     # global id of its neuron 0


@dataclass(frozen=True)
class Projection:
    name: str
    pre: str
    post: str
    rows: np.ndarray                # pre-population indices
    cols: np.ndarray                # post-population indices
    weights: np.ndarray
    delay: int = 0                  # timesteps: 0 (same step) or 1 (the next step)


class Network:
    def __init__(self):
        self.populations: dict[str, Population] = {}
        self.projections: list[Projection] = []
        self.outputs: list[str] = []

    @property
    def size(self) -> int:
        return sum(p.size for p in self.populations.values())

    def _add(self, name, size, params):
        if name in self.populations:
            raise ValueError(f"network: population {name!r} already exists")
        if not isinstance(size, int | np.integer) or size < 1:
            raise ValueError(f"network: population {name!r} has size {size!r}; it must be an int >= 1")
        self.populations[name] = Population(name, int(size), params, self.size)

    def add_input(self, name: str, size: int):
        self._add(name, size, None)

    def add_population(self, name: str, size: int, params: LifParams, output: bool = False):
        if not isinstance(params, LifParams):
            raise ValueError(f"network: population {name!r} needs LifParams, got {type(params).__name__}")
        self._add(name, size, params)
        if output:
            self.outputs.append(name)

    def connect_dense(self, pre: str, post: str, weights, name: str | None = None, delay: int = 0):
        """``weights[i, j]`` from pre neuron i to post neuron j; zero means no synapse."""
        weights = np.asarray(weights)
        name = name or f"{pre}->{post}"
        shape = (self._population(pre, name).size, self._population(post, name).size)
        if weights.shape != shape:
            raise ValueError(f"network: projection {name!r} has weights of shape {weights.shape}; "
                             f"{pre!r} x {post!r} needs {shape}")
        rows, cols = np.nonzero(weights)
        self.connect_sparse(pre, post, rows, cols, weights[rows, cols], name, delay)

    def connect_sparse(self, pre: str, post: str, rows, cols, weights, name: str | None = None,
                       delay: int = 0):
        """A COO triple: synapse k from pre neuron ``rows[k]`` to post neuron ``cols[k]``."""
        name = name or f"{pre}->{post}"
        source, target = self._population(pre, name), self._population(post, name)
        if delay not in (0, 1) or isinstance(delay, bool):
            raise ValueError(f"network: projection {name!r} has delay={delay!r}; use 0 (the same "
                             f"timestep) or 1 (the next timestep)")
        for k in self.projections:
            if k.pre == pre and k.post == post and k.delay != delay:
                raise ValueError(f"network: projection {name!r} connects {pre!r} to {post!r} with "
                                 f"delay {delay}, but projection {k.name!r} does with delay {k.delay}; "
                                 f"one population pair has one delay")
        if target.params is None:
            raise ValueError(f"network: projection {name!r} targets input population {post!r}")
        rows, cols, weights = (np.asarray(x).reshape(-1) for x in (rows, cols, weights))
        if not rows.size == cols.size == weights.size:
            raise ValueError(f"network: projection {name!r} has {rows.size} rows, {cols.size} cols and "
                             f"{weights.size} weights; they must match")
        for label, values in (("weights", weights), ("rows", rows), ("cols", cols)):
            if values.size and not np.issubdtype(values.dtype, np.integer):
                raise ValueError(f"network: projection {name!r} {label} must be integers, got {values.dtype}")
        for label, values, size, end in (("rows", rows, source.size, pre), ("cols", cols, target.size, post)):
            if values.size and (values.min() < 0 or values.max() >= size):
                raise ValueError(f"network: projection {name!r} {label} reach "
                                 f"{values.min()}..{values.max()}, outside population {end!r} "
                                 f"(0..{size - 1})")
        p = target.params
        if weights.size and (weights.min() < p.w_min or weights.max() > p.w_max):
            raise ValueError(f"network: layer {name!r} has weights {weights.min()}..{weights.max()}, outside "
                             f"the {p.weight_width}-bit limit {p.w_min}..{p.w_max} of population {post!r}")
        pairs = set()
        for k in self.projections:
            if k.pre == pre and k.post == post:
                pairs.update(zip(k.rows.tolist(), k.cols.tolist(), strict=True))
        pairs_new = list(zip(rows.tolist(), cols.tolist(), strict=True))
        if len(set(pairs_new)) != len(pairs_new) or pairs.intersection(pairs_new):
            raise ValueError(f"network: projection {name!r} repeats a synapse between the same two neurons")
        self.projections.append(Projection(name, pre, post, rows.astype(np.int64), cols.astype(np.int64),
                                           weights.astype(np.int64), int(delay)))

    def _population(self, name, projection):
        if name not in self.populations:
            raise ValueError(f"network: projection {projection!r} names unknown population {name!r}")
        return self.populations[name]

    def synapses(self):
        """All synapses as global-id arrays ``(pre, post, weight)``."""
        parts = [(self.populations[k.pre].offset + k.rows, self.populations[k.post].offset + k.cols,
                  k.weights) for k in self.projections]
        if not parts:
            return tuple(np.zeros(0, dtype=np.int64) for _ in range(3))
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))

    def delays(self) -> np.ndarray:
        """The delay of every synapse, in the order of :meth:`synapses`."""
        parts = [np.full(k.rows.size, k.delay, dtype=np.int64) for k in self.projections]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def evaluation_order(self) -> list[str]:
        """The LIF populations in an order where every zero-delay projection goes forward
        (declaration order among the ready ones); raises ValueError naming a zero-delay cycle."""
        lif = [name for name, p in self.populations.items() if p.params is not None]
        pre = {name: {k.pre for k in self.projections if k.post == name and k.delay == 0} for name in lif}
        ordered, placed = [], {name for name, p in self.populations.items() if p.params is None}
        while len(ordered) < len(lif):
            ready = [name for name in lif if name not in placed and pre[name] <= placed]
            if not ready:
                stuck = [name for name in lif if name not in placed]
                raise ValueError(f"network: populations {stuck} form a cycle of zero-delay projections, "
                                 f"so no timestep can be evaluated; give one projection of the cycle "
                                 f"delay=1 (its spikes then arrive in the next timestep)")
            ordered += ready
            placed.update(ready)
        return ordered

    def population_of(self, gid: int) -> tuple[Population, int]:
        """The population holding global id ``gid`` and the neuron's index in it."""
        for p in self.populations.values():
            if p.offset <= gid < p.offset + p.size:
                return p, gid - p.offset
        raise ValueError(f"network: no neuron has global id {gid}")

    @classmethod
    def from_layers(cls, weights, params, input_size: int | None = None):
        """A feed-forward network ``input -> layer1 -> ... -> layerK`` (the last is the output).

        ``weights[k]`` is the (fan-in x size) matrix into layer k+1; ``params`` is one
        ``LifParams`` for every layer or a list with one per layer.
        """
        weights = [np.asarray(w) for w in weights]
        if not weights:
            raise ValueError("network: from_layers needs at least one weight matrix")
        params = list(params) if isinstance(params, list | tuple) else [params] * len(weights)
        if len(params) != len(weights):
            raise ValueError(f"network: {len(weights)} weight matrices but {len(params)} LifParams")
        net = cls()
        net.add_input("input", input_size or weights[0].shape[0])
        previous = "input"
        for k, (w, p) in enumerate(zip(weights, params, strict=True), start=1):
            if w.ndim != 2:
                raise ValueError(f"network: layer 'layer{k}' weights must be 2-D, got shape {w.shape}")
            net.add_population(f"layer{k}", w.shape[1], p, output=k == len(weights))
            net.connect_dense(previous, f"layer{k}", w, name=f"layer{k}")
            previous = f"layer{k}"
        return net
