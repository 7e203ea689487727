"""Memory ordering, as RipTide's compiler orders it: an order edge only between two accesses
that may alias and of which at least one stores.

* Different arrays never alias; two accesses of one array may. An array that is never stored
  needs no order at all, and neither does an array whose only access site is one STORE (one
  node performs its stores in order).
* Every other array ("tokened") has two pseudo-variables per scope, flowing through regions
  like variables (CARRY, INVARIANT, STEER, MERGE): ``tok``, the done token of the last store,
  which a load waits for, and ``acc``, ``tok`` joined with every load since, which a store waits
  for. A store sets both to its done token. Both start as "nothing to wait for".
* Waiting is an ORDER on the load's index or the store's value (on its index when the value is
  a constant), never a LOAD/STORE sync slot, since the fabric's memory PEs have none. A load's
  done token is its loaded word (port 0), the one the lowering accepts for a bank's LDST pair.
* Redundant edges are pruned: an access that already depends on the token it would wait for
  (its index was computed from an earlier load, say) gets no ORDER, a join with "nothing" is the
  other side, and a load after loads with no store between waits on nothing new.
* An atomic block's accesses wait for the ACQUIRE's grant, and its RELEASE waits for the join of
  the block's ``acc`` tokens. An array accessed only inside atomic blocks of a scope keeps its
  tokens inside each block: the lock, not program order, orders blocks on one address (so a
  word must always be guarded by the same address). In a serial task every array it touches is
  tokened and keeps flowing, so the invocation's final tokens say when it has finished.
"""

from dataclasses import dataclass, field

from ripple_core.builder import Ref
from ripple_core.ops import BINARY

from .analysis import acc, memory_sites, tok
from .values import STATIC, Const

__all__ = ["MemoryPlan", "plan_memory"]

_TRANSPARENT = {"ORDER", "SELECT", "STEER", "LOAD", "STORE", "ACQUIRE", "RELEASE", "ID"}


@dataclass
class MemoryPlan:
    tokened: set = field(default_factory=set)
    atomic_only: set = field(default_factory=set)

    @property
    def flowing(self) -> set:
        return self.tokened - self.atomic_only


def plan_memory(stmts, names: dict, arrays, *, serial_task: bool = False) -> MemoryPlan:
    plan = MemoryPlan()
    for array, entry in memory_sites(stmts, names, arrays).items():
        sites = entry["loads"] + entry["stores"]
        if (entry["stores"] and sites >= 2) or entry["inside"] or serial_task:
            plan.tokened.add(array)
        if entry["inside"] and not entry["outside"] and not serial_task:
            plan.atomic_only.add(array)
    return plan


class MemoryLowering:
    """The token rules above, on the compiler's builder (mixed into the compiler)."""

    def _inputs_of(self, node: str):
        pending = self.b._pending
        while self._indexed < len(pending):
            name, raw = pending[self._indexed]
            self._raw[name] = raw
            self._indexed += 1
        return self._raw.get(node, ())

    def _op(self, name: str):
        node = self.b.graph.nodes.get(name)
        return node.op if node is not None else None       # a TASK exists only after build

    def after(self, value, token) -> bool:
        """True if a token of ``value`` can only exist once ``token`` of the same activation (or
        the event it forwards, for a STEERed token) has happened: ``value`` is computed from it
        through operators that take all their inputs, or through a MERGE both of whose sides are."""
        if not isinstance(value, Ref) or not isinstance(token, Ref):
            return False
        targets = {token}
        while self._op(token.node) == "STEER":
            token = self._inputs_of(token.node)[1]
            if not isinstance(token, Ref):
                break
            targets.add(token)
        memo: dict = {}
        budget = [96]

        def reaches(ref):
            if ref in targets:
                return True
            if ref in memo or budget[0] <= 0:
                return memo.get(ref, False)
            budget[0] -= 1
            memo[ref] = False
            op = self._op(ref.node)
            inputs = [src for src in self._inputs_of(ref.node) if isinstance(src, Ref)]
            if op in _TRANSPARENT or op in BINARY:
                memo[ref] = any(reaches(src) for src in inputs)
            elif op == "MERGE" and len(inputs) == 3:
                memo[ref] = reaches(inputs[1]) and reaches(inputs[2])
            return memo[ref]
        return reaches(value)

    def wait(self, region, value, token):
        """``value`` as a token that comes no earlier than ``token``."""
        if isinstance(token, Const) or token is None:
            return value
        if self.after(value, token):
            return value
        return self.b.order(self.token(region, value), token)

    def join(self, region, a, b):
        if isinstance(a, STATIC):
            return b
        if isinstance(b, STATIC) or a == b or self.after(a, b):
            return a
        if self.after(b, a):
            return b
        return self.b.order(a, b)

    def load(self, region, array: str, index):
        index = self.token(region, index)
        if array in self.plan.tokened:
            index = self.wait(region, index, region.read(tok(array)))
        word = self.b.load(self.b.array(array), index)
        if array in self.plan.tokened:
            region.write(acc(array), self.join(region, region.read(acc(array)), word))
        return word

    def store(self, region, array: str, index, value):
        if isinstance(index, STATIC) and isinstance(value, STATIC):
            index = self.token(region, index)
        if array in self.plan.tokened:
            before = region.read(acc(array))
            if not (self.after(index, before) or self.after(value, before)):
                if isinstance(value, Ref):
                    value = self.wait(region, value, before)
                else:
                    index = self.wait(region, self.token(region, index), before)
        done = self.b.store(self.b.array(array), self.slot(index), self.slot(value))
        if array in self.plan.tokened:
            region.write(tok(array), done)
            region.write(acc(array), done)
        return done

    def enter_atomic(self, region, grant, arrays):
        """Make every access of ``arrays`` inside the block wait for ``grant``."""
        for array in sorted(arrays):
            if array in self.plan.atomic_only:
                region.env[tok(array)] = grant
                region.env[acc(array)] = grant
            else:
                region.write(tok(array), self.join(region, region.read(tok(array)), grant))
                region.write(acc(array), self.join(region, region.read(acc(array)), grant))

    def block_effects(self, region, grant, arrays):
        sync = grant
        for array in sorted(arrays):
            sync = self.join(region, region.read(acc(array)), sync)
        return sync

    def leave_atomic(self, region, released, arrays):
        for array in sorted(arrays):
            if array in self.plan.atomic_only:
                region.forget(tok(array))
                region.forget(acc(array))
            else:
                region.write(tok(array), released)
                region.write(acc(array), released)
