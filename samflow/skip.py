"""The compressed scanner's skip input (SAM's ``in_crd_skip``): hints from an intersecter.

An intersecter that steps past a coordinate of one side tells that side's scanner the other
side's coordinate: nothing below it can meet. A hint ``h`` moves the scanner to the first
coordinate ``>= h`` of its current fiber; a stop hint ends the fiber. Skipped coordinates are
never in the intersection, so the intersection does not depend on when a hint arrives, but the
scanner's own output does: a late hint finds the scanner past ``h`` already and changes nothing.

Two rules make the output depend on nothing but the order of events:

* **One hint per emission.** Before each token it emits inside a fiber, the scanner takes at most
  one hint that is on offer, and applies it; a hint queued behind it waits for the next token.
* **A hint stream has one stop per output stop.** The intersecter closes its hint fiber whenever
  it closes a fiber, so every stop the scanner emits (a fiber's own, a raised one, the stop after
  ``N``) owns one stop of the hint stream. A fiber that ended before its stop hint came leaves
  that many stops *owed*, and the hints up to them are discarded when they come: they belong
  to fibers already closed. The hint stream has no ``D``.

:func:`scan_with_hints` steps this in SAM's own timing, one cycle at a time (a token per input
per cycle at most, one output per cycle, a fiber's first coordinate in the cycle its reference
arrives, no latency), which is what the suite's recorded schedules describe. It also says, for
every hint, how many tokens the scanner had emitted when the hint arrived: replaying the hints
at those points of the scanner's progress gives the same output on any implementation that
keeps the two rules, whatever its latency (the RTL's lock-step run does this).
:func:`hinted_output_problem` checks an output against the rules for a schedule that was not
recorded (the RTL under random stalls).
"""

from collections import deque
from dataclasses import dataclass

from .models import MODELS, ModelError
from .tokens import is_data, is_stop, stop, stop_level

__all__ = ["HINTS", "HintedScan", "scan_with_hints", "arrivals_from_schedule", "hinted_output_problem"]

HINTS, REFS = "in_crd_skip", "in_ref"


@dataclass
class HintedScan:
    outputs: dict           # {"crd": [...], "ref": [...]}
    visible_after: list     # per hint: tokens on crd emitted before the cycle the hint arrived


def arrivals_from_schedule(schedule, port: str) -> list[int]:
    """The cycle each token of ``port`` arrives in, from a case's recorded schedule."""
    return [cycle for cycle, ports in enumerate(schedule) for name in ports if name == port]


def _asap(tokens) -> list[int]:
    """The suite's default feeding: a port's k-th token arrives in cycle k."""
    return list(range(len(tokens)))


class _Scanner:
    """One compressed scanner with a skip input, stepped a cycle at a time."""

    def __init__(self, memory):
        self.seg, self.crd_arr = memory["seg_arr"], memory["crd_arr"]
        self.refs, self.hints = deque(), deque()
        self.crd, self.ref = [], []
        self.in_fiber, self.position, self.end = False, 0, 0
        self.stop_taken = False     # the current fiber's stop hint has been taken
        self.owed = 0               # stops of the hint stream that belong to closed fibers
        self.taken_refs = 0

    def emit(self, crd, ref=None):
        self.crd.append(crd)
        self.ref.append(crd if ref is None else ref)

    def close(self, closing):
        self.emit(closing)
        self.in_fiber = False
        if not self.stop_taken:
            self.owed += 1

    def step(self):
        if not self.in_fiber and not self._start():
            return
        while self.owed and self.hints:
            if is_stop(self.hints.popleft()):
                self.owed -= 1
        if not self.owed and self.hints and not self.stop_taken:
            self._apply(self.hints.popleft())
        if self.position < self.end:
            self.emit(self.crd_arr[self.position], self.position)
            self.position += 1
        elif self.refs:     # the next reference says whether the closing stop is raised
            raised = is_stop(self.refs[0])
            self.close(stop(stop_level(self.refs.popleft()) + 1) if raised else "S0")

    def _start(self) -> bool:
        """Take the next reference; True when a fiber's first step belongs to this cycle."""
        if not self.refs:
            return False
        token = self.refs.popleft()
        self.taken_refs += 1
        if token == "D":
            self.emit("D")
            return False
        if is_stop(token):          # no fiber before it: an empty fiber, raised
            self.stop_taken = False
            self.close(stop(stop_level(token) + 1))
            return False
        self.in_fiber, self.stop_taken = True, False
        if token == "N":
            self.emit("N")
            self.position = self.end = 0
            return False
        if not (is_data(token) and 0 <= token < len(self.seg) - 1):
            raise ModelError(f"in_ref token {self.taken_refs - 1} {token!r}: reference outside the "
                             f"segment array (fibers 0..{len(self.seg) - 2})")
        self.position, self.end = self.seg[token], self.seg[token + 1]
        return True

    def _apply(self, hint):
        if is_stop(hint):
            self.position, self.stop_taken = self.end, True
        elif is_data(hint):
            while self.position < self.end and self.crd_arr[self.position] < hint:
                self.position += 1


def scan_with_hints(memory, inputs, arrivals=None) -> HintedScan:
    """The compressed scanner with its skip input in SAM's timing. ``arrivals`` maps ``in_ref``
    and ``in_crd_skip`` to each token's arrival cycle (default: the k-th token in cycle k)."""
    refs, hints = list(inputs[REFS]), list(inputs.get(HINTS, []))
    arrivals = arrivals or {}
    ref_cycles = list(arrivals.get(REFS) or _asap(refs))
    hint_cycles = list(arrivals.get(HINTS) or _asap(hints))
    scanner = _Scanner(memory)
    visible_after, next_ref, next_hint, cycle = [], 0, 0, 0
    limit = max([0, *ref_cycles, *hint_cycles]) + 2 * (len(refs) + len(memory["crd_arr"])) + 16
    while not scanner.crd or scanner.crd[-1] != "D":
        while next_ref < len(refs) and ref_cycles[next_ref] <= cycle:
            scanner.refs.append(refs[next_ref])
            next_ref += 1
        while next_hint < len(hints) and hint_cycles[next_hint] <= cycle:
            scanner.hints.append(hints[next_hint])
            visible_after.append(len(scanner.crd))
            next_hint += 1
        scanner.step()
        cycle += 1
        if cycle > limit:
            raise ModelError(f"in_ref: the stream ended before its 'D' (after {scanner.taken_refs} tokens)")
    visible_after += [len(scanner.crd)] * (len(hints) - len(visible_after))     # arrive after the end
    return HintedScan({"crd": scanner.crd, "ref": scanner.ref}, visible_after)


def _fibers(tokens, key=lambda token: token):
    """Split a stream at its stops and ``D``: [(the tokens of a fiber, the stop or D after them)],
    and the tokens after the last of them."""
    fibers, current = [], []
    for token in tokens:
        if not (is_stop(key(token)) or key(token) == "D"):
            current.append(token)
        else:
            fibers.append((current, token))
            current = []
    return fibers, current


def _first_at_or_above(whole, position: int, hint) -> int:
    while position < len(whole) and whole[position][0] < hint:
        position += 1
    return position


def _fiber_problem(whole, kept, hints) -> str:
    """'' if some order of taking ``hints`` (one per emission, in order, each taken or still
    waiting) makes the fiber ``whole`` come out as ``kept``; the states are (position, hints
    taken), followed through every kept pair and then the fiber's close."""
    if any(crd == "N" for crd, _ in whole):        # an N fiber: no coordinate to skip
        return "" if kept == whole else f"the fiber of an N reference gave {kept}"
    states = {(0, 0)}
    for k, pair in enumerate(kept):
        following = set()
        for position, taken in states:
            if position < len(whole) and whole[position] == pair:
                following.add((position + 1, taken))
            if taken < len(hints) and is_data(hints[taken]):
                jumped = _first_at_or_above(whole, position, hints[taken])
                if jumped < len(whole) and whole[jumped] == pair:
                    following.add((jumped + 1, taken + 1))
        if not following:
            return f"{pair} (kept token {k}) cannot follow the tokens before it under hints {hints}"
        states = following
    for position, taken in states:
        if position == len(whole) or (taken < len(hints) and (
                is_stop(hints[taken]) or _first_at_or_above(whole, position, hints[taken]) == len(whole))):
            return ""
    left = [whole[position][0] for position, _ in sorted(states)][:1]
    return f"the fiber closes before coordinate {left[0]}, which no hint of {hints} passes"


def hinted_output_problem(memory, inputs, outputs) -> str:
    """'' if ``outputs`` is what the scanner may give for ``inputs`` under some arrival timing of
    its hints, else the first thing that breaks the rules: the control tokens must be those of the
    scan without hints, and each fiber what its hints can leave of it (:func:`_fiber_problem`)."""
    full = MODELS["rd_scan_compressed"]({}, memory, {REFS: inputs[REFS], HINTS: []})[0]
    crd, ref = outputs.get("crd", []), outputs.get("ref", [])
    if len(crd) != len(ref):
        return f"crd has {len(crd)} tokens and ref {len(ref)}"
    for k, (c, r) in enumerate(zip(crd, ref, strict=True)):
        if is_data(c) != is_data(r) or (not is_data(c) and c != r):
            return f"crd and ref disagree at token {k}: {c!r} and {r!r}"

    def coordinate(pair):
        return pair[0]
    full_fibers, _ = _fibers(list(zip(full["crd"], full["ref"], strict=True)), coordinate)
    got_fibers, rest = _fibers(list(zip(crd, ref, strict=True)), coordinate)
    controls = [closing[0] for _, closing in full_fibers]
    got_controls = [closing[0] for _, closing in got_fibers]
    if got_controls != controls or rest:
        return f"control tokens {got_controls} (+{len(rest)} after them), expected {controls}"
    hint_fibers, _ = _fibers(inputs.get(HINTS, []))
    for k, ((kept, _), (whole, _)) in enumerate(zip(got_fibers, full_fibers, strict=True)):
        hints = [*hint_fibers[k][0], hint_fibers[k][1]] if k < len(hint_fibers) else []
        problem = _fiber_problem(whole, kept, hints)
        if problem:
            return f"fiber {k}: {problem}"
    return ""
