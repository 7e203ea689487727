"""A small recurrent spiking network on crossbar tiles: input 4 -> reservoir 6 -> readout 5.

The reservoir hears its own spikes of the previous timestep (a delay-1 projection, mostly
inhibitory) and the readout's (delay 1 as well), so the cluster graph has cycles; the xbar
micro-op reads those inputs a timestep late (docs/snn.md, "Recurrence on the fabric"). The
reference is the mapped network simulated with ``snn.lif_model.LifCrossbarModel``.

Run it: ``rivulet run examples/snn_recurrent.py --fabric examples/fabrics/snn.toml --sim both``
(``FABRIC`` below is the default, so ``--fabric`` may be left out).
"""

import numpy as np

from rivulet.frontends.snn import SnnProgram
from snn.network import Network

FABRIC = "fabrics/snn.toml"     # relative to this file: the fabric when --fabric names none


def network(spec, seed=0) -> Network:
    rng = np.random.default_rng(seed)
    p = spec.parameters("xbar").lif_params

    def weights(a, b, low, high, density):
        return rng.integers(low, high + 1, size=(a, b)) * (rng.random((a, b)) < density)

    net = Network()
    net.add_input("input", 4)
    net.add_population("reservoir", 6, p)
    net.add_population("readout", 5, p, output=True)
    net.connect_dense("input", "reservoir", weights(4, 6, 2, p.w_max, 0.6))
    net.connect_dense("reservoir", "reservoir", weights(6, 6, p.w_min, 2, 0.5), delay=1)
    net.connect_dense("reservoir", "readout", weights(6, 5, 1, p.w_max, 0.6))
    net.connect_dense("readout", "reservoir", weights(5, 6, p.w_min, 0, 0.4), delay=1)
    return net


def spike_trains(size: int, steps: int, rate: float, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed + 1)
    return [[int(n) for n in rng.permutation(size)[:rng.binomial(size, rate)]] for _ in range(steps)]


def program(fabric, steps=8, rate=0.5, seed=2) -> SnnProgram:
    """The network with the LIF parameters of ``fabric``'s xbar tiles, and ``steps`` timesteps of
    input spikes (each input neuron spiking with probability ``rate``)."""
    net = network(fabric, seed=seed)
    return SnnProgram(net, spike_trains(4, steps, rate, seed), name="snn_recurrent", cluster_size=8)
