"""What memory holds for the violations of one repair session, read once per violation signature.

A violation's lookup reads the keys its compiled decisions may be stored under: its concrete signature and its
abstract signatures (the last the component-and-role back-off); the "follows:" key of learned follow-ups after a
strategy is read the first time a patch of that strategy is offered for it. Each key is read at most once per
session and kept; every use the session records updates the kept counters, so the order and the demotions every later
step reads are those memory holds, without reading it again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rdflib import Graph

from ..compiled import decisions_in, follow_ups_in, follows_key
from ..model import FollowUp, Item, RepairDecision, Violation, best_first
from .verification import abstract_signatures

if TYPE_CHECKING:
    from ..store import Memory


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

    def __init__(self, memory: Memory | None, shapes: Graph) -> None:
        """Nothing looked up yet."""
        self.memory, self.shapes = memory, shapes
        self.held: dict[str, list[Item]] = {}  # key -> compiled operators stored under it, best first
        self.where: dict[str, str] = {}  # item id -> the key it is held under

    def decisions(self, v: Violation) -> list[Decision]:
        """The compiled decisions for `v`, best first per key: its concrete signature's, its abstract ones', the
        component-and-role back-off's."""
        keys = self._keys(v)
        return [Decision(c, d, key, 0 if i == 0 else 2 if i == len(keys) - 1 else 1)
                for i, key in enumerate(keys) for c, d in decisions_in(self._read(key))]

    def follow_ups(self, v: Violation, operator: str) -> list[tuple[Item, FollowUp]]:
        """The learned, undemoted follow-ups stored for a patch of `operator` on `v` (under its first abstract key)."""
        return follow_ups_in(self._read(follows_key(self._keys(v)[1], operator)))

    def learned(self, v: Violation, operator: str) -> bool:
        """True when the memory holds an undemoted decision by `operator` under one of `v`'s abstract keys that keep
        its value kind (not the back-off): what a descent may then use without a trial check."""
        return any(d.operator == operator and not c.demoted
                   for key in self._keys(v)[1:-1] for c, d in decisions_in(self._read(key)))

    def record(self, item: str, success: bool) -> None:
        """Count a use of a compiled item in memory, and keep its new counters (and its key's order) here."""
        assert self.memory is not None  # only items read from a memory are held, and so used
        counts = self.memory.record_use(item, success)
        key = self.where.get(item)
        if key is not None:
            self.held[key] = best_first(replace(c, counts=counts) if c.id == item else c for c in self.held[key])

    def _keys(self, v: Violation) -> tuple[str, ...]:
        """The keys `v`'s compiled decisions may be stored under: its concrete signature, then its abstract ones."""
        return (v.signature, *abstract_signatures(v, self.shapes))

    def _read(self, key: str) -> list[Item]:
        """The compiled operators stored under `key`, best first: read in memory once, then kept ([] without
        memory, or for a violation that has no concrete signature, such as one a descent builds from a shape)."""
        if key not in self.held:
            self.held[key] = self.memory.by_signature(key) if self.memory is not None and key else []
            self.where.update({c.id: key for c in self.held[key]})
        return self.held[key]
