"""Transition bubbles: how long a unit sits idle where a program goes from one phase to the next.

RSN's phases are cheap when a unit's next micro-op waits in its queue while the current one
runs, so the unit goes on as soon as its next inputs arrive. The bubble of a transition is the
number of cycles between the unit's last token of one phase and its first token of the next
(an input taken, or for a ``mem`` READ an address issued): 0 when it never stops. The cycles
come from the cycle model's record of every micro-op (:attr:`rsn.cycle_model.Prediction.work`),
which matches the RTL's counter on the kinds that record it (``mem``, ``mac``, ``alu``).

A bubble is not all overhead: a unit whose next phase reads what another unit writes in this
one also waits for that data to cross the fabric (a mem's READ after the alu's last write), and
a unit idle in a phase (a lane's bank while the other lanes load) shows that idle time as well.
:func:`transition_bubbles` reports each transition with its phases, so a bench can tell them
apart.
"""

from dataclasses import dataclass

__all__ = ["Transition", "transition_bubbles"]


@dataclass(frozen=True)
class Transition:
    """One unit going from micro-op ``index - 1`` (phase ``before``) to ``index`` (``after``)."""
    tile: tuple[int, int]
    kind: str
    index: int
    before: int
    after: int
    last: int           # cycle of the last token of phase ``before``
    first: int          # cycle of the first token of phase ``after``

    @property
    def bubble(self) -> int:
        return self.first - self.last - 1


def transition_bubbles(compiled, prediction) -> list[Transition]:
    """Every phase change on every FU of ``compiled`` whose kind's timing records its tokens,
    in tile order: the unit's consecutive micro-ops that belong to different phases."""
    tiles = compiled.routing.placement.tiles
    phases_of = {tiles[node.name]: node.phase_of_uops() for node in compiled.program.graph.fu_nodes()}
    found = []
    for tile, windows in sorted(prediction.work.items()):
        phases = phases_of.get(tile)
        if not phases or len(phases) != len(windows):
            continue            # a replayed body (``repeat``) runs more micro-ops than the graph lists
        kind = compiled.spec.kind(tile)
        for index in range(1, len(windows)):
            previous, current = windows[index - 1], windows[index]
            if phases[index] == phases[index - 1] or previous is None or current is None:
                continue
            found.append(Transition(tile, kind, index, phases[index - 1], phases[index], previous[1],
                                    current[0]))
    return found
