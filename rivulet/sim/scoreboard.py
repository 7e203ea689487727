"""Scoreboards: each compares one primitive's observed ports with its golden model.

Per cycle they check what the specification fixes cycle by cycle (occupancy, readiness, grant
order, which outputs move together); at the end they compare whole sequences.
"""

from hw.golden import QueueModel, RoundRobinModel, fork_outputs, join_outputs, merge_is_interleaving

from .streams import ScoreboardError

__all__ = ["QueueChecker", "ForkChecker", "ArbiterChecker", "JoinChecker"]


def _expect(condition: bool, message: str):
    if not condition:
        raise ScoreboardError(message)


class QueueChecker:
    """TokenQueue and SkidBuffer: FIFO order, ``level`` exact, ready exactly when not full, and
    the latency of the queue's ``mode``: with ``fall_through`` (and ``registered`` up to depth
    2) every held token is on offer, with ``bypass`` an arriving one too."""

    def __init__(self, tokens, depth: int, has_level: bool, mode: str = "registered"):
        self.tokens, self.model, self.has_level = list(tokens), QueueModel(depth), has_level
        self.mode, self.received = mode, []

    def _check_offer(self, cycle, sample):
        if self.mode == "registered" and self.model.depth > 2:
            return      # a token spends a cycle in the memory before its read register
        offered = self.model.level > 0 or (self.mode == "bypass" and sample["i__valid"])
        _expect(sample["o__valid"] == int(offered),
                f"cycle {cycle}: o.valid is {sample['o__valid']} while holding {self.model.level} "
                f"(i.valid {sample['i__valid']}); a {self.mode} queue offers "
                + ("a held or arriving token" if self.mode == "bypass" else "every held token"))

    def on_cycle(self, cycle, sample, transfers):
        model = self.model
        if self.has_level:
            _expect(sample["level"] == model.level,
                    f"cycle {cycle}: level is {sample['level']}, the queue holds {model.level}")
            self._check_offer(cycle, sample)
        _expect(sample["i__ready"] == int(model.can_accept()),
                f"cycle {cycle}: i.ready is {sample['i__ready']} while holding {model.level} "
                f"of {model.depth}; ready must be high exactly when not full")
        arriving = transfers.get("i")
        if "o" in transfers and arriving is not None and model.level == 0 and self.mode == "bypass":
            model.push(arriving)                # passes straight through an empty queue
            arriving = None
        if "o" in transfers:
            _expect(model.level > 0, f"cycle {cycle}: delivered {transfers['o']:#x} while empty")
            expected = model.pop()
            _expect(transfers["o"] == expected,
                    f"cycle {cycle}: token #{len(self.received)} is {transfers['o']:#x}, "
                    f"expected {expected:#x}")
            self.received.append(transfers["o"])
        if arriving is not None:
            model.push(arriving)

    def complete(self):
        return len(self.received) >= len(self.tokens)

    def progress(self):
        return f"received {len(self.received)}/{len(self.tokens)}, holding {self.model.level}"

    def finish(self):
        _expect(self.received == self.tokens, "output sequence differs from the input sequence")


class ForkChecker:
    """Fork: every output carries the input sequence; timing per mode.

    Eager: output k takes the token the input currently offers, at most once; the input retires
    in the cycle the last output takes it. Lock-step: all outputs and the input move together.
    """

    def __init__(self, tokens, n: int, mode: str):
        self.tokens, self.n, self.mode = list(tokens), n, mode
        self.delivered = set()
        self.received = [[] for _ in range(n)]

    def on_cycle(self, cycle, sample, transfers):
        moved = {k for k in range(self.n) if f"o__{k}" in transfers}
        offered = sample["i__payload"] if sample["i__valid"] else None
        for k in sorted(moved):
            _expect(offered is not None, f"cycle {cycle}: o[{k}] transferred with no input offered")
            _expect(transfers[f"o__{k}"] == offered,
                    f"cycle {cycle}: o[{k}] carries {transfers[f'o__{k}']:#x}, input offers {offered:#x}")
            _expect(k not in self.delivered,
                    f"cycle {cycle}: o[{k}] took input token {offered:#x} a second time")
            self.received[k].append(offered)
        if self.mode == "lockstep":
            _expect(not moved or len(moved) == self.n,
                    f"cycle {cycle}: only outputs {sorted(moved)} moved in lock-step mode")
        self.delivered |= moved
        retired = "i" in transfers
        _expect(retired == (len(self.delivered) == self.n),
                f"cycle {cycle}: input {'retired' if retired else 'held'} with outputs "
                f"{sorted(self.delivered)} served; it must retire exactly when all {self.n} have")
        if retired:
            self.delivered = set()

    def complete(self):
        return all(len(r) >= len(self.tokens) for r in self.received)

    def progress(self):
        return "received " + ", ".join(f"o[{k}] {len(r)}" for k, r in enumerate(self.received))

    def finish(self):
        _expect(self.received == fork_outputs(self.tokens, self.n),
                "an output sequence differs from the input sequence")


class ArbiterChecker:
    """Arbiter: each output transfer is one input's transfer, granted in round-robin order."""

    def __init__(self, inputs, n: int, tuple_beats: int):
        self.inputs, self.n = [list(tokens) for tokens in inputs], n
        self.model = RoundRobinModel(n, tuple_beats)
        self.offer = None          # input whose token is on offer at the output, while untaken
        self.output, self.sources = [], []
        self.waiting = {}          # input -> grants to others since it started requesting

    def on_cycle(self, cycle, sample, transfers):
        requests = {k for k in range(self.n) if sample[f"i__{k}__valid"]}
        moved_inputs = [k for k in range(self.n) if f"i__{k}" in transfers]
        if sample["o__valid"]:
            expected = self.offer if self.offer is not None else self.model.choose(requests)
            _expect(sample["grant"] == expected,
                    f"cycle {cycle}: granted input {sample['grant']} with requests "
                    f"{sorted(requests)}; round-robin after input {self.model.last} gives {expected}")
        elif self.model.granted is None:
            _expect(not requests, f"cycle {cycle}: inputs {sorted(requests)} request, output idle")
        if "o" not in transfers:
            _expect(not moved_inputs, f"cycle {cycle}: inputs {moved_inputs} moved, output did not")
            self.offer = sample["grant"] if sample["o__valid"] else None
            return
        source = sample["grant"]
        _expect(moved_inputs == [source],
                f"cycle {cycle}: output moved from input {source}, inputs {moved_inputs} moved")
        _expect(transfers["o"] == transfers[f"i__{source}"],
                f"cycle {cycle}: output carries {transfers['o']:#x}, input {source} sent "
                f"{transfers[f'i__{source}']:#x}")
        self._account_fairness(cycle, requests, source)
        self.model.transferred(source)
        self.offer = None
        self.output.append(transfers["o"])
        self.sources.append(source)

    def _account_fairness(self, cycle, requests, source):
        if self.model.granted is not None:      # mid-tuple beats are not new grants
            return
        for k in requests - {source}:
            self.waiting[k] = self.waiting.get(k, 0) + 1
            _expect(self.waiting[k] <= self.n - 1,
                    f"cycle {cycle}: input {k} has waited {self.waiting[k]} grants (limit {self.n - 1})")
        self.waiting.pop(source, None)

    def complete(self):
        return len(self.output) >= sum(len(tokens) for tokens in self.inputs)

    def progress(self):
        return f"output {len(self.output)}/{sum(len(t) for t in self.inputs)} tokens"

    def finish(self):
        _expect(merge_is_interleaving(self.output, self.sources, self.inputs),
                "the output is not an in-order interleaving of the inputs")


class JoinChecker:
    """Join: the output moves exactly when all inputs do, carrying all their payloads."""

    def __init__(self, inputs, n: int, width: int):
        self.inputs, self.n, self.width = [list(tokens) for tokens in inputs], n, width
        self.output = []

    def pack(self, group) -> int:
        """Element k of the output array occupies bits [k*width, (k+1)*width)."""
        return sum(token << (k * self.width) for k, token in enumerate(group))

    def on_cycle(self, cycle, sample, transfers):
        moved = [k for k in range(self.n) if f"i__{k}" in transfers]
        if "o" in transfers:
            _expect(len(moved) == self.n, f"cycle {cycle}: output moved, only inputs {moved} did")
            group = tuple(transfers[f"i__{k}"] for k in range(self.n))
            _expect(transfers["o"] == self.pack(group),
                    f"cycle {cycle}: output {transfers['o']:#x} != packed inputs {group}")
            self.output.append(group)
        else:
            _expect(not moved, f"cycle {cycle}: inputs {moved} moved without an output token")

    def complete(self):
        return len(self.output) >= min(len(tokens) for tokens in self.inputs)

    def progress(self):
        return f"output {len(self.output)} tokens"

    def finish(self):
        _expect(self.output == join_outputs(self.inputs), "output tuples differ from the inputs")
