"""What memory holds for the violations of one repair session, read once per violation signature.

A lookup reads every key memory may hold a compiled operator under for a violation: its concrete signature, its
abstract signatures (the last the component-and-role back-off) and the "follows:" keys of its component's strategies
(learned follow-ups). Each key is read at most once per session and kept; every use the session records updates the
kept counters, so the order and the demotions every later step reads are those memory holds, without reading it again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..compiled import decisions_in, follow_ups_in, follows_key
from ..model import FollowUp, Item, RepairDecision, Violation, best_first
from .registry import strategies_for
from .verification import abstract_signatures


@dataclass(frozen=True)
class Decision:
    """A compiled repair decision memory holds for a violation.

    Args:
        item: the RepairOperator item (its id, counters, demotion).
        decision: its action: the strategy and the choice it recorded.
        key: the signature or abstract key it is stored under.
        tier: 0 under the violation's concrete signature, 1 under an abstract key, 2 under the component-and-role
            back-off.
    """

    item: Item
    decision: RepairDecision
    key: str
    tier: int


class Recall:
    """The compiled operators one repair session reads, each violation signature looked up once.

    Args:
        memory: the memory compiled decisions and follow-ups are read from (None: nothing is held, nothing is read).
        shapes: the shapes graph of the session (abstract signatures read it).
    """

    def __init__(self, memory, shapes) -> None:
        """Nothing looked up yet."""
        self.memory, self.shapes = memory, shapes
        self.held: dict[str, list[Item]] = {}  # key -> compiled operators stored under it, best first
        self.where: dict[str, str] = {}  # item id -> the key it is held under
        self.looked: set[tuple] = set()  # the keys of every violation signature looked up
        self.lookups = 0  # violation signatures looked up in memory

    def decisions(self, v: Violation) -> list[Decision]:
        """The compiled decisions for `v`, best first per key: its concrete signature's, its abstract ones', the
        component-and-role back-off's."""
        keys = self._look_up(v)
        return [Decision(c, d, key, 0 if i == 0 else 2 if i == len(keys) - 1 else 1)
                for i, key in enumerate(keys) for c, d in decisions_in(self.held.get(key, []))]

    def follow_ups(self, v: Violation, operator: str) -> list[tuple[Item, FollowUp]]:
        """The learned, undemoted follow-ups stored for a patch of `operator` on `v` (under its first abstract key)."""
        keys = self._look_up(v)
        return follow_ups_in(self.held.get(follows_key(keys[1], operator), []))

    def learned(self, v: Violation, operator: str) -> bool:
        """True when the memory holds an undemoted decision by `operator` under one of `v`'s abstract keys that keep
        its value kind (not the back-off): what a descent may then use without a trial check."""
        return any(d.decision.operator == operator and not d.item.demoted for d in self.decisions(v) if d.tier == 1)

    def record(self, item: str, success: bool) -> None:
        """Count a use of a compiled item in memory, and keep its new counters (and its key's order) here."""
        counts = self.memory.record_use(item, success)
        key = self.where.get(item)
        if key is not None:
            self.held[key] = best_first(replace(c, counts=counts) if c.id == item else c for c in self.held[key])

    def _look_up(self, v: Violation) -> tuple[str, ...]:
        """`v`'s keys (concrete, then abstract), looked up in memory the first time its signature is met: every key
        not read before (its follow-up keys too) is read once and kept."""
        keys = (v.signature, *abstract_signatures(v, self.shapes))
        if self.memory is None or keys in self.looked:
            return keys
        self.looked.add(keys)
        self.lookups += 1
        for key in (*keys, *(follows_key(keys[1], op) for op in strategies_for(v.component))):
            if key and key not in self.held:
                self.held[key] = self.memory.by_signature(key)
                self.where.update({c.id: key for c in self.held[key]})
        return keys

