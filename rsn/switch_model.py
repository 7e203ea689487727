"""Golden model of the tile switch, written from "Switch semantics" in docs/rsn-architecture.md.

A route is (selected input, remaining beats); ``remaining == 0`` is a static route. The model
knows nothing of cycles: each :meth:`SwitchModel.step` issues the head micro-op or moves one
token into one output channel. For every input it remembers which outputs already took the
token at its head (eager multicast): an output takes each token at most once, and the token
leaves its input when every active output that selects the input has it.

Which tokens a route carries is independent of timing only if no route joins an input that a
different output is still draining for an earlier micro-op; place & route must emit programs
that keep to this (see ``testbench/rsn/switch_bench.py`` for the exact rule), if need be with a
``fence`` on the later micro-op, which holds it until every counted route has ended. Otherwise
this model and the RTL may legitimately disagree.
"""

from dataclasses import dataclass

from rsn.channels import Channel, UnitModel
from rsn.isa import (
    LINK_BEATS_BITS,
    NO_INPUT,
    SWITCH_INPUTS,
    SWITCH_OUTPUTS,
    IsaError,
    SwitchUop,
    decode,
    encode,
)

__all__ = ["SwitchModel", "SwitchUopError", "Route"]


class SwitchUopError(IsaError):
    """A switch micro-op that this switch cannot execute; the message says which field and why."""


@dataclass
class Route:
    input: int
    remaining: int          # beats still to carry; 0 for a static route, which never ends
    last: bool              # belongs to a micro-op marked ``last``


class SwitchModel(UnitModel):
    """The switch of a tile whose FU has ``n_fu_in`` inputs and ``n_fu_out`` outputs.

    Inputs: N, E, S, W, then the FU's outputs. Outputs: N, E, S, W, then the FU's inputs.
    ``beats[j]`` counts tokens pushed to output ``j``, modulo ``2**LINK_BEATS_BITS``. ``finished``
    becomes true once a ``last`` micro-op has issued and no counted route of an issued ``last``
    micro-op remains; a static route (``remaining == 0``) never ends and holds back neither
    ``finished`` nor ``busy``, as in the RTL.
    """

    def __init__(self, n_fu_in: int, n_fu_out: int):
        super().__init__()
        self.n_inputs = 4 + n_fu_out
        self.n_outputs = 4 + n_fu_in
        if not (self.n_inputs <= SWITCH_INPUTS and self.n_outputs <= SWITCH_OUTPUTS):
            raise ValueError(f"a switch has at most {SWITCH_INPUTS} inputs and {SWITCH_OUTPUTS} "
                             f"outputs, not {self.n_inputs} and {self.n_outputs}")
        self.routes: list[Route | None] = [None] * self.n_outputs
        self.delivered = [set() for _ in range(self.n_inputs)]
        self.beats = [0] * self.n_outputs
        self.issued = 0
        self._next_output = 0       # round-robin start, so no active output starves

    def load(self, uops):
        """Queue micro-ops (field dicts as for ``rsn.isa.encode``, or 64-bit bodies); refuse
        invalid ones at once. Dicts go through ``encode``, so a field out of range or a missing
        field (0) means what it would in an image."""
        checked = []
        for index, uop in enumerate(uops, start=len(self.uops) + self.issued):
            uop = decode(SwitchUop, uop if isinstance(uop, int) else encode(SwitchUop, uop))
            self.check(uop, index)
            checked.append(uop)
        super().load(checked)

    def check(self, uop: dict, index: int = 0):
        """Raise :class:`SwitchUopError` unless ``uop`` names only this switch's ports."""
        for output in range(SWITCH_OUTPUTS):
            if not uop["enable"] >> output & 1:
                continue
            if output >= self.n_outputs:
                raise SwitchUopError(
                    f"switch micro-op #{index}: enable bit {output} is set, but this switch has "
                    f"only {self.n_outputs} outputs (0..{self.n_outputs - 1})")
            chosen = uop["select"][output]
            if chosen == NO_INPUT or chosen >= self.n_inputs:
                what = "NO_INPUT" if chosen == NO_INPUT else f"input {chosen}"
                raise SwitchUopError(
                    f"switch micro-op #{index}: enabled output {output} selects {what}; this "
                    f"switch's inputs are 0..{self.n_inputs - 1}")

    @property
    def busy(self) -> bool:
        # A static route is a wire: it never ends and does not keep the switch busy (rsn.switch).
        return bool(self.uops) or any(route is not None and route.remaining for route in self.routes)

    def enabled_outputs(self, uop: dict) -> list[int]:
        return [j for j in range(self.n_outputs) if uop["enable"] >> j & 1]

    def step(self, inputs: list[Channel], outputs: list[Channel]) -> bool:
        assert len(inputs) == self.n_inputs and len(outputs) == self.n_outputs
        return self._issue() or self._move(inputs, outputs)

    def _issue(self) -> bool:
        """Issue the head micro-op if every output it names is idle and, for a fence, no counted
        route of the switch is left (a static route never ends and holds no fence back)."""
        if not self.uops:
            return False
        head = self.uops[0]
        targets = self.enabled_outputs(head)
        if any(self.routes[j] is not None for j in targets):
            return False
        if head["fence"] and any(route is not None and route.remaining for route in self.routes):
            return False
        self.uops.popleft()
        self.issued += 1
        for j in targets:
            self.routes[j] = Route(head["select"][j], head["beats"], bool(head["last"]))
        if head["last"] and not self._last_routes_pending():
            self.finished = True
        return True

    def _move(self, inputs, outputs) -> bool:
        for offset in range(self.n_outputs):
            j = (self._next_output + offset) % self.n_outputs
            route = self.routes[j]
            if route is None:
                continue
            source = inputs[route.input]
            if source.can_pop() and j not in self.delivered[route.input] and outputs[j].can_push():
                self._carry(j, route, source, outputs[j])
                self._next_output = (j + 1) % self.n_outputs
                return True
        return False

    def _carry(self, j: int, route: Route, source: Channel, sink: Channel):
        sink.push(source.peek())
        self.beats[j] = (self.beats[j] + 1) % (1 << LINK_BEATS_BITS)
        self.delivered[route.input].add(j)
        if route.remaining:
            route.remaining -= 1
            if route.remaining == 0:
                self._end(j, route)
        users = {out for out, other in enumerate(self.routes)
                 if other is not None and other.input == route.input}
        if users <= self.delivered[route.input]:
            source.pop()
            self.delivered[route.input].clear()

    def _end(self, j: int, route: Route):
        self.routes[j] = None
        if route.last and not self._last_routes_pending():
            self.finished = True

    def _last_routes_pending(self) -> bool:
        """Some counted route of an issued ``last`` micro-op has beats left."""
        return any(other is not None and other.last and other.remaining for other in self.routes)
