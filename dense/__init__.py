"""Dense int8 layer sequences, lowered into RSN programs in phases (docs/dense.md)."""

from .lower import LoweredNetwork, LoweringError, lower_network
from .network import DenseLayer, DenseNetwork, NetworkError
from .quantise import Quantised, quantise

__all__ = ["DenseLayer", "DenseNetwork", "NetworkError", "LoweredNetwork", "LoweringError", "lower_network",
           "Quantised", "quantise"]
