"""Cycle cost of a crossbar tile: what the SDF actors' execution times are made of.

Our tile (``hw.crossbar.Crossbar``, measured in ``testbench/crossbar``): the N neurons are
split over B banks, each a group word of one memory with a read and a write port, so B neurons
are updated per cycle in a pipeline. An input event is one pass over the ``ceil(N / B)`` groups,
one per cycle; the next event is taken as the last group issues, so passes follow each other
without a gap. The end-of-timestep event (leak, compare, reset) is one more pass, and its
``END_OF_STEP`` leaves ``PIPELINE_LATENCY`` = 2 cycles after its last group issued (one cycle
in the memories' read registers, one in the output register):

    per input spike:  ceil(N / B)
    per timestep:     (E + 1) * ceil(N / B) + 2      for E input events, from an idle tile
                                                     taking the first event to END_OF_STEP
    back to back:     (E + 1) * ceil(N / B)          between consecutive END_OF_STEPs

tinyODIN (the notes: spike = 1 + 2 (SPI_MAX_NEUR + 1), leak-all = 2 (SPI_MAX_NEUR + 1))
spends two cycles per neuron on its single-port SRAM and scans neurons 0..SPI_MAX_NEUR, an
8-bit register, so N = SPI_MAX_NEUR + 1 neurons:

    per input spike:  1 + 2N
    per timestep:     E (1 + 2N) + 2N

At N = 128 and B = 1 that is 128 against 257 cycles per spike; each doubling of B halves the
pass. Output spikes leave one per cycle while the pass goes on; without back-pressure each one
delays the timestep by at most one cycle (a group whose spikes find the output busy waits).
"""

__all__ = ["PIPELINE_LATENCY", "cycles_per_event", "cycles_per_timestep", "tinyodin_cycles_per_event",
           "tinyodin_cycles_per_timestep"]

PIPELINE_LATENCY = 2


def _check(neurons: int, banks: int = 1):
    if neurons < 1 or banks < 1:
        raise ValueError(f"crossbar cost: neurons={neurons} and banks={banks} must be >= 1")


def cycles_per_event(neurons: int, banks: int = 1) -> int:
    _check(neurons, banks)
    return -(-neurons // banks)


def cycles_per_timestep(events: int, neurons: int, banks: int = 1) -> int:
    if events < 0:
        raise ValueError(f"crossbar cost: events={events} must be >= 0")
    return (events + 1) * cycles_per_event(neurons, banks) + PIPELINE_LATENCY


def tinyodin_cycles_per_event(neurons: int) -> int:
    _check(neurons)
    return 1 + 2 * neurons


def tinyodin_cycles_per_timestep(events: int, neurons: int) -> int:
    if events < 0:
        raise ValueError(f"crossbar cost: events={events} must be >= 0")
    return events * tinyodin_cycles_per_event(neurons) + 2 * neurons
