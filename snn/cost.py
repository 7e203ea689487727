"""Cycle cost of a crossbar tile: what the SDF actors' execution times are made of.

Our tile (the target for the RTL session): the N neurons are split over B banks, each a
memory with one read and one write port, so a bank updates one neuron per cycle in a pipeline.
An input event costs one cycle to accept the address and fetch the weight row, then one pass
over the neurons, ``ceil(N / B)`` cycles; the end-of-timestep event (leak, compare, reset) is
one more pass of the same length:

    per input spike:  1 + ceil(N / B)
    per timestep:     (E + 1) * (1 + ceil(N / B))      for E input events

tinyODIN (the notes: spike = 1 + 2 (SPI_MAX_NEUR + 1), leak-all = 2 (SPI_MAX_NEUR + 1))
spends two cycles per neuron on its single-port SRAM and scans neurons 0..SPI_MAX_NEUR, an
8-bit register, so N = SPI_MAX_NEUR + 1 neurons:

    per input spike:  1 + 2N
    per timestep:     E (1 + 2N) + 2N

At N = 128 and B = 1 that is 129 against 257 cycles per spike; each doubling of B halves the
pass. Pipeline fill and spike-output back-pressure are not counted: the RTL session measures
them and adds them here.
"""

__all__ = ["cycles_per_event", "cycles_per_timestep", "tinyodin_cycles_per_event",
           "tinyodin_cycles_per_timestep"]


def _check(neurons: int, banks: int = 1):
    if neurons < 1 or banks < 1:
        raise ValueError(f"crossbar cost: neurons={neurons} and banks={banks} must be >= 1")


def cycles_per_event(neurons: int, banks: int = 1) -> int:
    _check(neurons, banks)
    return 1 + -(-neurons // banks)


def cycles_per_timestep(events: int, neurons: int, banks: int = 1) -> int:
    if events < 0:
        raise ValueError(f"crossbar cost: events={events} must be >= 0")
    return (events + 1) * cycles_per_event(neurons, banks)


def tinyodin_cycles_per_event(neurons: int) -> int:
    _check(neurons)
    return 1 + 2 * neurons


def tinyodin_cycles_per_timestep(events: int, neurons: int) -> int:
    if events < 0:
        raise ValueError(f"crossbar cost: events={events} must be >= 0")
    return events * tinyodin_cycles_per_event(neurons) + 2 * neurons
