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
* Where tok also comes after acc they happen together, and one variable serves both: the MERGE
  of tok after an if whose decider (or tok, side by side) comes after acc, and one CARRY in a loop
  whose pair coincides on entry and on the back edge (or that loads nothing of the array and
  whose decider comes after acc). No wait changes, and tokens of different arrays never mix.
* An atomic block's accesses wait for the ACQUIRE's grant, and its RELEASE waits for the join of
  the block's ``acc`` tokens. An array accessed only inside atomic blocks of a scope keeps its
  tokens inside each block: the lock, not program order, orders blocks on one address (so a
  word must always be guarded by the same address). In a serial task every array it touches is
  tokened and keeps flowing, so the invocation's final tokens say when it has finished.
"""

from dataclasses import dataclass, field

from ripple_core.builder import Ref
from ripple_core.graph import Input
from ripple_core.ops import BINARY

from .analysis import acc, memory_sites, tok
from .values import STATIC, Const

__all__ = ["MemoryPlan", "plan_memory", "token_array"]

_TRANSPARENT = {"ORDER", "SELECT", "STEER", "LOAD", "STORE", "ACQUIRE", "RELEASE", "ID", "STREAM", "QUEUE"}


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


def token_array(name) -> str | None:
    """The array of a memory pseudo-variable (``tok``/``acc``), None for any other name."""
    if isinstance(name, str) and name.startswith(("@tok:", "@acc:")):
        return name[5:]
    return None


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
        """True if a token of ``value`` can only exist once ``token`` of the same activation has
        happened. ``value`` is after ``token`` if it is computed from it through operators that take
        all their inputs (a STREAM's outputs come after its start), through the value an INVARIANT
        repeats, or through a MERGE whose decider is, or both of whose sides are. A STEERed
        ``token`` stands for the event it forwards and an ORDER (a join) for both its inputs, so
        ``value`` may instead be after each of those."""
        budget = [256]
        return isinstance(value, Ref) and self._after(value, token, budget)

    def _after(self, value, token, budget) -> bool:
        if isinstance(token, Input):
            return True                 # a slot is there from the start: nothing to wait for
        if not isinstance(token, Ref) or budget[0] <= 0:
            return False
        if self._reaches(value, token, budget):
            return True
        op, inputs = self._op(token.node), self._inputs_of(token.node)
        if op == "STEER" and isinstance(inputs[1], Ref):
            return self._after(value, inputs[1], budget)
        if op == "ORDER":
            return all(self._after(value, source, budget) for source in inputs[:2])
        return False

    def _reaches(self, value, target, budget) -> bool:
        memo: dict = {}

        def reaches(ref):
            if ref == target:
                return True
            if not isinstance(ref, Ref) or ref in memo or budget[0] <= 0:
                return memo.get(ref, False)
            budget[0] -= 1
            memo[ref] = False
            op, inputs = self._op(ref.node), self._inputs_of(ref.node)
            if op in _TRANSPARENT or op in BINARY:
                memo[ref] = any(reaches(src) for src in inputs)
            elif op == "INVARIANT":
                memo[ref] = reaches(inputs[1])
            elif op == "MERGE":
                memo[ref] = reaches(inputs[0]) or (reaches(inputs[1]) and reaches(inputs[2]))
            return memo[ref]
        return reaches(value)

    def same_token(self, last, since) -> bool:
        """``last`` (an array's tok) can stand for ``since`` (its acc) too: they are one value, or
        ``last`` already comes after ``since``. Since acc never comes before tok, the two then
        happen together, and one variable serves loads and stores without changing any wait."""
        if last is since or last == since:
            return True
        if isinstance(last, STATIC) and isinstance(since, STATIC):
            return last.key() == since.key()
        return self.after(last, since)

    def loop_pairs(self, region, carried, stmts) -> tuple[dict, set]:
        """Arrays whose tok and acc a loop may carry as one CARRY, as {array: initial value}: those
        whose tok stands for acc on entry, and those the loop (``stmts``: its test and body) never
        loads. The latter, returned again as the second set, start from acc, which is sound (a
        later token) and costs nothing once the loop's decider is known to come after acc: tok is
        read only after the loop, by then past the decider. The caller checks that."""
        sites = memory_sites(stmts, self.src.names, self.plan.flowing)
        pairs, pending = {}, set()
        for array in sorted(self.plan.flowing):
            if tok(array) not in carried or acc(array) not in carried:
                continue
            last, since = region.read(tok(array)), region.read(acc(array))
            if self.same_token(last, since):
                pairs[array] = last
            elif not sites.get(array, {}).get("loads"):
                pairs[array] = since
                pending.add(array)
        return pairs, pending

    def branch_pairs(self, decider, names, sides) -> set:
        """Arrays whose acc after an if may be the MERGE of its tok: on each side, acc is tok, or
        tok or the decider (which the MERGE waits for) already comes after acc."""
        found = set()
        for name in names:
            array = token_array(name)
            if name != acc(array) or tok(array) not in names:
                continue
            if all(self.same_token(side.read(tok(array)), side.read(name))
                   or self.after(decider, side.read(name)) for side in sides):
                found.add(array)
        return found

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
        region.done = region.done or done
        return done

    def enter_atomic(self, region, grant, arrays):
        """Make every access of ``arrays`` inside the block wait for ``grant``."""
        for array in sorted(arrays):
            if array in self.plan.atomic_only:
                region.env[tok(array)] = grant
                region.env[acc(array)] = grant
            else:
                last, since = region.read(tok(array)), region.read(acc(array))
                joined = self.join(region, last, grant)
                region.write(tok(array), joined)
                region.write(acc(array), joined if since is last else self.join(region, since, grant))

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
