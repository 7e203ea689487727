"""Bit-exact leaky integrate-and-fire neurons, for the SNN front-end.

The parameters (``hw.lif_params``) and the golden model of one crossbar (``hw.lif_model``) live
in ``hw``, the lowest layer, because they specify the crossbar tile and ``rsn``'s ``xbar`` unit
model uses them; ``snn`` keeps its names here. ``docs/snn.md`` describes every choice.
"""

from hw.lif_model import LifCrossbarModel
from hw.lif_params import LifParams, loihi, tinyodin

__all__ = ["LifParams", "LifCrossbarModel", "tinyodin", "loihi"]
