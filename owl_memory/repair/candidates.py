"""Candidate patches for one violation, in the order the loop tries them: compiled decisions from memory replayed
first (concrete signature, then abstract keys, then the back-off), then the library (compiled strategies without a
recorded choice first), then the proposer; each also offered with the learned follow-ups that apply to it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from rdflib import Graph

from ..compiled import repair_decisions
from ..model import Item, RepairDecision
from ..model.operators import canonical
from .cascade import with_follow_ups
from .context import Context
from .patch import Patch
from .proposed import proposed_patch
from .registry import iter_candidates, ranked, ranked_candidates, run_strategy, strategies_for
from .verification import Violation, abstract_signatures


def fingerprint(p: Patch) -> tuple:
    """A patch's identity: its strategy and its triples."""
    return (p.operator, tuple(sorted(" ".join(n.n3() for n in t) for t in p.added)),
            tuple(sorted(" ".join(n.n3() for n in t) for t in p.removed)))


class Candidates:
    """Where one repair run's candidate patches come from, and what it noted on the way: the key each compiled item
    was found under, violations whose replay ran trial checks, follow-ups folded into a patch, proposer calls.

    Args:
        memory: the memory compiled decisions and follow-ups are read from (None: the library alone).
        shapes: the shapes graph of the run.
        protected: triples no patch may remove (a patch extended by follow-ups that would is not offered).
        proposer: asked once per violation when nothing else is left (None: off).
    """

    def __init__(self, memory, shapes: Graph, protected: set, proposer=None) -> None:
        """Nothing found, asked or proposed yet."""
        self.memory, self.shapes, self.protected, self.proposer = memory, shapes, protected, proposer
        self.found: dict = {}  # compiled item id -> (tier: 0 concrete, 1 abstract, 2 back-off; the key it is under)
        self.searched: set = set()  # keys of violations whose compiled decisions' replay ran trial checks
        self.follow_ids: dict = {}  # fingerprint of an extended patch -> follow-up operator ids it used
        self.known: dict = {}
        self.asked: set = set()
        self.proposed = self.lm_calls = 0

    def of(self, ctx: Context, v: Violation) -> Iterator[tuple[Patch, str | None]]:
        """(patch, compiled item id or None) for `v`, lazily, in the order to try them."""
        return self._extended(ctx, v, self._ordered(ctx, v, self._compiled(v)))

    def memory_key(self, item: str) -> str:
        """The signature or abstract key a compiled item was found under."""
        return self.found[item][1]

    def follow_ups_in(self, p: Patch) -> list[str]:
        """Ids of the learned follow-ups folded into a patch offered by `of`."""
        return self.follow_ids.get(fingerprint(p), [])

    def _extended(self, ctx: Context, v: Violation, ordered):
        """Each candidate trimmed to real changes, preceded by its form with learned follow-ups (when any apply)."""
        g = ctx.graph
        for p, item in ordered:
            p = Patch(p.operator, frozenset(t for t in p.added if t not in g),
                      frozenset(t for t in p.removed if t in g), p.touches, p.choice)
            longer, used = with_follow_ups(self.memory, ctx, v, p)
            if used and not longer.removed & self.protected:
                self.follow_ids[fingerprint(longer)] = used
                yield longer, item
            yield p, item

    def _ordered(self, ctx: Context, v: Violation, compiled: list[Item]):
        """(patch, compiled item id or None) lazily: compiled decisions with a recorded choice replayed (undemoted,
        smallest first; the abstract signatures' only when the concrete one's give nothing, the component-and-role
        back-off only when those give nothing either), ranked by cost with the library's cheap candidates (those
        found with no trial check), a replay first on ties, so memory never makes a repair dearer; then the library
        with the strategies of compiled decisions without a choice first (run once: a replay without a hint is the
        library strategy itself)."""
        seen: set = set()
        hinted = [c for c in compiled if c.action_schema.choice is not None]
        replays = self._replays(ctx, v, hinted)
        plain: dict = {}
        for c in sorted((c for c in compiled if c not in hinted), key=lambda c: c.demoted):
            plain.setdefault(c.action_schema.operator, c.id)
        prefer = [op for op in plain if op in strategies_for(v.component)]
        if replays:
            merged = [(rank, 0, i, q, item) for i, (p, item) in enumerate(replays) for rank, q in ranked(ctx, [p])]
            merged += [(rank, 1, i, p, plain.get(p.operator))
                       for i, (rank, p) in enumerate(ranked_candidates(ctx, v, prefer, cheap=True))]
            for *_, p, item in sorted(merged, key=lambda x: x[:3]):
                if fingerprint(p) not in seen:
                    seen.add(fingerprint(p))
                    yield p, item
        for p in iter_candidates(ctx, v, prefer):
            if fingerprint(p) not in seen:
                yield p, plain.get(p.operator)
        yield from ((p, None) for p in self._proposal(ctx.graph, v))

    def _replays(self, ctx: Context, v: Violation, hinted: list[Item]) -> list[tuple[Patch, str]]:
        """(patch, compiled item id) of the first tier of compiled decisions whose replay gives anything, in the
        order to try them (recorded choice, undemoted, smallest first)."""
        seen: set = set()
        for tier in (0, 1, 2):
            found = []
            for rank, c in enumerate(x for x in hinted if self.found[x.id][0] == tier):
                checks = ctx.checks.count
                replayed = _replayed(ctx, v, c.action_schema)
                if ctx.checks.count > checks:
                    self.searched.add(v.key)
                for i, p in enumerate(replayed):
                    if fingerprint(p) not in seen:
                        seen.add(fingerprint(p))
                        recorded = canonical(p.choice) == canonical(c.action_schema.choice)
                        found.append(((not recorded, c.demoted, p.size, rank, i), p, c.id))
            if found:
                return [(p, item) for _, p, item in sorted(found, key=lambda x: x[0])]
        return []

    def _proposal(self, g: Graph, v: Violation) -> list[Patch]:
        """The proposer's change set for `v` as a patch, asked once per violation and only when one is configured."""
        if self.proposer is None or v.key in self.asked:
            return []
        self.asked.add(v.key)
        calls = self.proposer.calls
        change = self.proposer.propose_repair([v], g, self.shapes, self.memory)
        self.lm_calls += self.proposer.calls - calls
        p = proposed_patch(v, change)
        self.proposed += p is not None
        return [p] if p is not None else []

    def _compiled(self, v: Violation) -> list[Item]:
        """Compiled decisions for a violation, best first: its concrete signature's, then its abstract ones' (each
        id's tier noted: the last abstract key, component and role alone, is the back-off read last)."""
        keys, out = [v.signature, *abstract_signatures(v, self.shapes)], []
        for i, key in enumerate(keys):
            found, tier = repair_decisions(self.memory, key), 0 if i == 0 else 2 if i == len(keys) - 1 else 1
            self.found.update({c.id: (tier, key) for c in found})
            out += found
        return out

    def learned(self, v: Violation, operator: str) -> bool:
        """True when the memory holds an undemoted decision by `operator` under one of `v`'s abstract keys that keep
        its value kind (not the back-off): what a descent may then use without a trial check (read once per run)."""
        keys = tuple(abstract_signatures(v, self.shapes)[:-1])
        if (keys, operator) not in self.known:
            self.known[keys, operator] = any(c.action_schema.operator == operator and not c.demoted
                                             for k in keys for c in repair_decisions(self.memory, k))
        return self.known[keys, operator]


def _replayed(ctx: Context, v: Violation, decision: RepairDecision) -> list[Patch]:
    """Patches of a compiled strategy with its recorded choice as the hint (a compiled plan runs no checks)."""
    if decision.operator not in strategies_for(v.component):
        return []
    return run_strategy(decision.operator, replace(ctx, hint=decision.choice), v)

