"""SNN networks: a program file's ``program()`` returns an :class:`SnnProgram`, a network
(``snn.network.Network``) with the input spike trains to run, and this front-end clusters it
onto the fabric's ``xbar`` tiles (``snn.lower``). The reference is the mapped network simulated
with the fabric's own LIF parameters, so a fabric with other crossbar sizes or neuron arithmetic
gets a network lowered for it, or a refusal that says why it cannot."""

from dataclasses import dataclass
from pathlib import Path

from snn.lower import LoweringError, compile_lowered, lower_network
from snn.network import Network

from .protocol import Case, FrontendError

__all__ = ["SnnProgram", "lower"]


@dataclass
class SnnProgram:
    """A network and what its input population does: ``inputs`` holds, per timestep, the ids of
    the input neurons that spike, in the order the host sends them. ``cluster_size``: neurons
    per crossbar tile, at most what the fabric's tiles hold (default: that)."""
    network: Network
    inputs: list[list[int]]
    name: str = "snn"
    cluster_size: int | None = None


def lower(program: SnnProgram, spec, path: Path) -> Case:
    """The case of ``program`` on fabric ``spec``."""
    try:
        lowered = lower_network(program.network, spec, program.inputs, name=program.name,
                                cluster_size=program.cluster_size)
    except LoweringError as error:
        raise FrontendError(f"{path}: {error}") from None
    return Case(lowered.program.name, lowered.program,
                compile=lambda _program, fabric, seed: compile_lowered(lowered, fabric, seed=seed),
                pictures=lambda compiled, result, directory, where: _pictures(lowered, compiled, result,
                                                                              directory, where))


def _pictures(lowered, compiled, result, directory, where):
    from rivulet.pictures.snn import draw_snn

    return draw_snn(lowered, compiled, result, directory, where)
