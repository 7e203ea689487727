"""Golden models of the stream primitives, written from their specifications.

Each model is the simple, obviously right way to state what a primitive promises; none of them
looks at how the hardware does it. Test benches feed them what they observe at the ports and
compare.
"""

from collections import deque

from .banked_memory import MemoryOp

__all__ = ["QueueModel", "RoundRobinModel", "BankedMemoryModel", "fork_outputs", "join_outputs",
           "merge_is_interleaving"]


class QueueModel:
    """A FIFO holding at most ``depth`` tokens.

    Specification of TokenQueue (and of SkidBuffer, a queue of depth 2): it accepts exactly when
    it holds fewer than ``depth`` tokens, delivers tokens in arrival order, and its ``level`` is
    the number of tokens accepted and not yet delivered.
    """

    def __init__(self, depth: int):
        self.depth = depth
        self._tokens = deque()

    @property
    def level(self) -> int:
        return len(self._tokens)

    def can_accept(self) -> bool:
        return len(self._tokens) < self.depth

    def push(self, token):
        if not self.can_accept():
            raise AssertionError(f"queue of depth {self.depth} accepted a token while full")
        self._tokens.append(token)

    def pop(self):
        if not self._tokens:
            raise AssertionError("queue delivered a token while empty")
        return self._tokens.popleft()


def fork_outputs(tokens, n: int) -> list[list]:
    """Every output of an N-way fork carries the whole input sequence."""
    return [list(tokens) for _ in range(n)]


def join_outputs(streams) -> list[tuple]:
    """A join pairs the k-th token of every input into its k-th output token."""
    return [tuple(group) for group in zip(*streams, strict=False)]


class RoundRobinModel:
    """Round-robin grant rule of the Arbiter.

    When a grant ends, the next goes to the first requesting input after the last granted one in
    cyclic order; before any grant, input 0 comes first. A grant lasts ``tuple_beats`` transfers.
    """

    def __init__(self, n: int, tuple_beats: int = 1):
        self.n = n
        self.tuple_beats = tuple_beats
        self.last = n - 1
        self.granted = None      # input holding a grant that has started transferring
        self.beats_done = 0

    def choose(self, requests) -> int | None:
        """The input to grant among ``requests`` (indices of valid inputs), or None."""
        if self.granted is not None:
            return self.granted
        for step in range(1, self.n + 1):
            candidate = (self.last + step) % self.n
            if candidate in requests:
                return candidate
        return None

    def transferred(self, source: int):
        """Account one output transfer that came from input ``source``."""
        if self.granted is not None and source != self.granted:
            raise AssertionError(
                f"input {source} transferred in the middle of input {self.granted}'s tuple")
        self.beats_done += 1
        if self.beats_done == self.tuple_beats:
            self.last, self.granted, self.beats_done = source, None, 0
        else:
            self.granted = source


def merge_is_interleaving(output, sources, inputs) -> bool:
    """True when ``output`` (tagged by ``sources``) keeps each input's tokens, in order, once."""
    split = [[] for _ in inputs]
    for token, source in zip(output, sources, strict=True):
        split[source].append(token)
    return split == [list(tokens) for tokens in inputs]


class BankedMemoryModel:
    """The shared data memory as a list of words and one set of held addresses per bank.

    Specification of BankedMemory, one request at a time in grant order: an address ``a`` is in
    range iff ``0 <= a < words`` and belongs to bank ``a % banks``; out of range is a fault that
    changes nothing. READ returns the word (all words start at 0), WRITE stores and returns 0.
    ACQUIRE returns 1 and holds the address if its bank does not hold it and holds fewer than
    ``lock_entries`` addresses, else returns 0 and changes nothing. RELEASE returns 1 and frees
    the address if its bank held it, else 0.
    """

    def __init__(self, words: int, banks: int, lock_entries: int):
        self.words, self.banks, self.lock_entries = words, banks, lock_entries
        self.data = [0] * words
        self.held = [set() for _ in range(banks)]

    def request(self, op, addr: int, data: int = 0) -> tuple[int, int]:
        """Apply one request; return its response ``(data, fault)``."""
        if not 0 <= addr < self.words:
            return 0, 1
        held = self.held[addr % self.banks]
        match MemoryOp(op):
            case MemoryOp.READ:
                return self.data[addr], 0
            case MemoryOp.WRITE:
                self.data[addr] = data
                return 0, 0
            case MemoryOp.ACQUIRE:
                if addr in held or len(held) >= self.lock_entries:
                    return 0, 0
                held.add(addr)
                return 1, 0
            case MemoryOp.RELEASE:
                if addr not in held:
                    return 0, 0
                held.remove(addr)
                return 1, 0
