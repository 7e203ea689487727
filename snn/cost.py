"""Cycle cost of a crossbar tile: what the SDF actors' execution times are made of.

Our tile (``snn.crossbar.Crossbar``, measured in ``testbench/crossbar``): the N neurons are
split over B banks, each a group word of one memory with a read and a write port, so B neurons
are updated per cycle in a pipeline. An input event is one pass over the ``G = ceil(N / B)``
groups, one per cycle; the next event is taken as the last group issues, so passes follow each
other without a gap. A group is written back ``WRITE_DISTANCE`` = 3 cycles after it was read
(the memories' read registers, then two pipeline registers), and a pass may not read a group
before the pass ahead of it has written it, so with fewer than 3 groups a pass takes 3 cycles.
The end-of-timestep event (leak, compare, reset) is one more pass, and its ``END_OF_STEP``
leaves ``PIPELINE_LATENCY`` = 4 cycles after its last group issued (three update stages, then
the output queue's head). With P = max(G, 3):

    per input spike:  P
    per timestep:     E * P + G + 4     for E input events, from an idle tile taking the first
                                        event to END_OF_STEP ((E + 1) G + 4 when G >= 3)
    back to back:     (E + 1) * P       between consecutive END_OF_STEPs

(From an idle tile the first pass does not wait, so the first two events are G apart.)

tinyODIN (the notes: spike = 1 + 2 (SPI_MAX_NEUR + 1), leak-all = 2 (SPI_MAX_NEUR + 1))
spends two cycles per neuron on its single-port SRAM and scans neurons 0..SPI_MAX_NEUR, an
8-bit register, so N = SPI_MAX_NEUR + 1 neurons:

    per input spike:  1 + 2N
    per timestep:     E (1 + 2N) + 2N

At N = 128 and B = 1 that is 128 against 257 cycles per spike; each doubling of B halves the
pass (down to 3 cycles). Output spikes leave one per cycle while the pass goes on; without
back-pressure each one delays the timestep by at most one cycle (a group issues only while the
output queue holds a slot for it).
"""

from snn.crossbar import END_LATENCY, WRITE_DISTANCE

__all__ = ["PIPELINE_LATENCY", "WRITE_DISTANCE", "cycles_per_group_pass", "cycles_per_event",
           "cycles_per_timestep", "tinyodin_cycles_per_event", "tinyodin_cycles_per_timestep"]

PIPELINE_LATENCY = END_LATENCY


def _check(neurons: int, banks: int = 1):
    if neurons < 1 or banks < 1:
        raise ValueError(f"crossbar cost: neurons={neurons} and banks={banks} must be >= 1")


def cycles_per_group_pass(neurons: int, banks: int = 1) -> int:
    """G = ceil(N / B): the cycles one pass spends issuing its groups."""
    _check(neurons, banks)
    return -(-neurons // banks)


def cycles_per_event(neurons: int, banks: int = 1) -> int:
    """Cycles between consecutive input events: G, but at least WRITE_DISTANCE."""
    return max(cycles_per_group_pass(neurons, banks), WRITE_DISTANCE)


def cycles_per_timestep(events: int, neurons: int, banks: int = 1) -> int:
    """From an idle tile taking the first of ``events`` input events to its END_OF_STEP."""
    if events < 0:
        raise ValueError(f"crossbar cost: events={events} must be >= 0")
    return (events * cycles_per_event(neurons, banks) + cycles_per_group_pass(neurons, banks)
            + PIPELINE_LATENCY)


def tinyodin_cycles_per_event(neurons: int) -> int:
    _check(neurons)
    return 1 + 2 * neurons


def tinyodin_cycles_per_timestep(events: int, neurons: int) -> int:
    if events < 0:
        raise ValueError(f"crossbar cost: events={events} must be >= 0")
    return events * tinyodin_cycles_per_event(neurons) + 2 * neurons
