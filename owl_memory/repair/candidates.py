"""Candidate patches for one violation, in the order a repair tries them: compiled decisions from memory replayed
first (concrete signature, then abstract keys, then the back-off), then the library (compiled strategies without a
recorded choice first), then the proposer; each also offered with the learned follow-ups that apply to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from ..model import RepairDecision, Violation
from ..model.operators import canonical
from .cascade import with_follow_ups
from .context import Context
from .patch import Candidate, Patch
from .proposed import proposed_patch
from .recall import Decision, Recall
from .registry import iter_candidates, ranked, ranked_candidates, run_strategy, strategies_for

if TYPE_CHECKING:
    from ..store import Memory


class Candidates:
    """Where one repair session's candidates come from, and what it noted on the way: violations whose replay ran
    trial checks, proposer calls.

    Args:
        recall: what memory holds for the session's violations (read once per signature).
        protected: the triples no patch may remove, now (a patch extended by follow-ups that would is not offered).
        proposer: asked once per violation when nothing else is left (None: off).
        memory: what the proposer's tools read (the session's memory).
    """

    def __init__(self, recall: Recall, protected: Callable[[], set], proposer=None,
                 memory: Memory | None = None) -> None:
        """Nothing replayed or proposed yet."""
        self.recall, self.protected, self.proposer, self.memory = recall, protected, proposer, memory
        self.searched: set = set()  # keys of violations whose compiled decisions' replay ran trial checks
        self.asked: set = set()
        self.proposed = self.lm_calls = 0

    def of(self, ctx: Context, v: Violation) -> Iterator[Candidate]:
        """The candidates for `v`, lazily, in the order to try them."""
        return self._extended(ctx, v, self._ordered(ctx, v, self.recall.decisions(v)))

    def _extended(self, ctx: Context, v: Violation, ordered) -> Iterator[Candidate]:
        """Each candidate trimmed to real changes, preceded by its form with learned follow-ups (when any apply)."""
        g = ctx.graph
        for p, d in ordered:
            p = Patch(p.operator, frozenset(t for t in p.added if t not in g),
                      frozenset(t for t in p.removed if t in g), p.touches, p.choice)
            item, key = (d.item.id, d.key) if d is not None else (None, None)
            longer, used = with_follow_ups(ctx, v, p, self.recall.follow_ups(v, p.operator))
            if used and not longer.removed & self.protected():
                yield Candidate(v, longer, item, key, tuple(used))
            yield Candidate(v, p, item, key)

    def _ordered(self, ctx: Context, v: Violation, compiled: list[Decision]) -> Iterator[tuple[Patch, Decision | None]]:
        """(patch, the compiled decision it replays or None) lazily: compiled decisions with a recorded choice replayed
        (undemoted, smallest first; the abstract signatures' only when the concrete one's give nothing, the
        component-and-role back-off only when those give nothing either), ranked by cost with the library's cheap
        candidates (those found with no trial check), a replay first on ties, so memory never makes a repair
        dearer; then the library with the strategies of compiled decisions without a choice first (run once: a
        replay without a hint is the library strategy itself)."""
        seen: set = set()
        hinted = [d for d in compiled if d.decision.choice is not None]
        replays = self._replays(ctx, v, hinted)
        plain: dict[str, Decision] = {}
        for d in sorted((d for d in compiled if d not in hinted), key=lambda d: d.item.demoted):
            plain.setdefault(d.decision.operator, d)
        prefer = [op for op in plain if op in strategies_for(v.component)]
        if replays:
            merged: list[tuple] = [(rank, 0, i, q, d) for i, (p, d) in enumerate(replays)
                                   for rank, q in ranked(ctx, [p])]
            merged += [(rank, 1, i, p, plain.get(p.operator))
                       for i, (rank, p) in enumerate(ranked_candidates(ctx, v, prefer, cheap=True))]
            for *_, p, found in sorted(merged, key=lambda x: x[:3]):
                if p.fingerprint not in seen:
                    seen.add(p.fingerprint)
                    yield p, found
        for p in iter_candidates(ctx, v, prefer):
            if p.fingerprint not in seen:
                yield p, plain.get(p.operator)
        yield from ((p, None) for p in self._proposal(ctx, v))

    def _replays(self, ctx: Context, v: Violation, hinted: list[Decision]) -> list[tuple[Patch, Decision]]:
        """(patch, compiled decision) of the first tier of compiled decisions whose replay gives anything, in the
        order to try them (recorded choice, undemoted, smallest first)."""
        seen: set = set()
        for tier in (0, 1, 2):
            found = []
            for rank, d in enumerate(x for x in hinted if x.tier == tier):
                checks = ctx.nested_checks.count
                replayed = _replayed(ctx, v, d.decision)
                if ctx.nested_checks.count > checks:
                    self.searched.add(v.key)
                for i, p in enumerate(replayed):
                    if p.fingerprint not in seen:
                        seen.add(p.fingerprint)
                        recorded = canonical(p.choice) == canonical(d.decision.choice)
                        found.append(((not recorded, d.item.demoted, p.size, rank, i), p, d))
            if found:
                return [(p, d) for _, p, d in sorted(found, key=lambda x: x[0])]
        return []

    def _proposal(self, ctx: Context, v: Violation) -> list[Patch]:
        """The proposer's change set for `v` as a patch, asked once per violation and only when one is configured."""
        if self.proposer is None or v.key in self.asked:
            return []
        self.asked.add(v.key)
        calls = self.proposer.calls
        change = self.proposer.propose_repair([v], ctx.graph, ctx.shapes, self.memory)
        self.lm_calls += self.proposer.calls - calls
        p = proposed_patch(v, change)
        self.proposed += p is not None
        return [p] if p is not None else []


def _replayed(ctx: Context, v: Violation, decision: RepairDecision) -> list[Patch]:
    """Patches of a compiled strategy with its recorded choice as the hint (a compiled plan runs no checks)."""
    if decision.operator not in strategies_for(v.component):
        return []
    return run_strategy(decision.operator, replace(ctx, hint=decision.choice), v)
