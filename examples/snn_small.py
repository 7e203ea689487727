"""A small feed-forward spiking network on crossbar tiles: input 8 -> 16 LIF -> 8 LIF (output).

The network is ``snn.network.Network``; ``snn.lower`` clusters each layer into crossbar tiles
(8 neurons each here, so the output layer's tile takes both hidden tiles' spikes on its 16
axons), routes the spikes as multicast streams and puts the weights in the image. The reference
is the mapped network simulated with ``snn.lif_model.LifCrossbarModel``, with the neuron arithmetic
of the fabric it runs on.

Run it: ``rivulet run examples/snn_small.py --fabric examples/fabrics/snn.toml --sim both``
(``FABRIC`` below is the default, so ``--fabric`` may be left out); ``-D steps=16 -D rate=0.3``
sets the parameters of ``program()``.
"""

import numpy as np

from rivulet.frontends.snn import SnnProgram
from snn.network import Network

FABRIC = "fabrics/snn.toml"     # relative to this file: the fabric when --fabric names none


def network(spec, sizes=(8, 16, 8), seed=0) -> Network:
    rng = np.random.default_rng(seed)
    params = spec.parameters("xbar").lif_params
    weights = [rng.integers(-5, params.w_max + 1, size=(a, b)) * (rng.random((a, b)) < 0.6)
               for a, b in zip(sizes, sizes[1:], strict=False)]
    return Network.from_layers(weights, params)


def spike_trains(size: int, steps: int, rate: float, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed + 1)
    return [[int(n) for n in rng.permutation(size)[:rng.binomial(size, rate)]] for _ in range(steps)]


def program(fabric, steps=8, rate=0.4, seed=0, cluster_size=8) -> SnnProgram:
    """The network with the LIF parameters of ``fabric``'s xbar tiles, and ``steps`` timesteps of
    input spikes (each input neuron spiking with probability ``rate``)."""
    net = network(fabric, seed=seed)
    return SnnProgram(net, spike_trains(net.populations["input"].size, steps, rate, seed),
                      name="snn_small", cluster_size=cluster_size)
