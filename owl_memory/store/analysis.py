"""What a memory's own records say about its items, for a person curating it (`owl-memory analyze`).

Over the active items (not archived, not superseded):
- never used: useCount 0;
- always failing: used and judged, never a success (successCount 0, failureCount >= 1);
- conflicting: pairs linked by om:conflictsWith, both active;
- stale: created more than `stale_days` ago and no better than a coin (forgetting.usefulness below 0.5 once the age
  term is left out: more failures than successes, or never judged);
and the superseded chains, newest first (an item, what it supersedes, what that superseded, ...).
Each list is counted whole and its ids given up to LISTED.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .forgetting import age_days

if TYPE_CHECKING:
    from .memory import Memory

LISTED = 50
_ACTIVE = """PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?i ?u ?s ?f ?c WHERE {
  ?i om:useCount ?u ; om:successCount ?s ; om:failureCount ?f ; om:createdAt ?c .
  FILTER NOT EXISTS { ?i om:archived true } FILTER NOT EXISTS { ?x om:supersedes ?i }
} ORDER BY ?i LIMIT 1000 OFFSET %d"""
_LINKS = """PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?a ?b WHERE { ?a om:%s ?b } ORDER BY ?a ?b LIMIT 1000 OFFSET %d"""


@dataclass(frozen=True)
class Finding:
    """One kind of finding: how many items (or pairs, or chains) and the first LISTED of them."""

    count: int
    ids: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """JSON form."""
        return {"count": self.count, "ids": list(self.ids)}


@dataclass(frozen=True)
class Analysis:
    """A memory analysed: its active items and each finding."""

    active: int
    never_used: Finding
    always_failing: Finding
    conflicting: Finding
    superseded: Finding
    stale: Finding

    def to_dict(self) -> dict:
        """JSON form."""
        return {"active": self.active, **{k: getattr(self, k).to_dict() for k in
                                          ("never_used", "always_failing", "conflicting", "superseded", "stale")}}


def analyze(memory: Memory, stale_days: float = 90.0) -> Analysis:
    """The findings of the module docstring over `memory`."""
    rows = _paged(memory, _ACTIVE)
    ids = [_id(r[0]) for r in rows]
    active = set(ids)
    never = [_id(i) for i, u, s, f, c in rows if int(u) == 0]
    failing = [_id(i) for i, u, s, f, c in rows if int(s) == 0 and int(f) >= 1]
    stale = [_id(i) for i, u, s, f, c in rows
             if age_days(str(c)) > stale_days and (int(s) + 1) / (int(s) + int(f) + 2) <= 0.5]
    pairs = sorted({tuple(sorted((_id(a), _id(b)))) for a, b in _paged(memory, _LINKS, "conflictsWith")
                    if _id(a) in active and _id(b) in active})
    chains = _chains([(_id(a), _id(b)) for a, b in _paged(memory, _LINKS, "supersedes")])
    return Analysis(len(ids), _found(never), _found(failing), _found([f"{a}<>{b}" for a, b in pairs]),
                    _found([">".join(c) for c in chains]), _found(stale))


def _paged(memory: Memory, query: str, *args: str) -> list[tuple]:
    """Every row of a paged query (its last %d is the offset)."""
    out: list[tuple] = []
    while True:
        rows = memory.sparql(query % (*args, len(out))).rows
        out += rows
        if len(rows) < 1000:
            return out


def _chains(links: list[tuple[str, str]]) -> list[list[str]]:
    """Superseded chains from (newer, older) links: each starts at an item nothing supersedes."""
    older = dict(links)
    superseded = set(older.values())
    chains = []
    for head in sorted(n for n in older if n not in superseded):
        chain, seen = [head], {head}
        while chain[-1] in older and older[chain[-1]] not in seen:
            chain.append(older[chain[-1]])
            seen.add(chain[-1])
        chains.append(chain)
    return chains


def _found(ids: list[str]) -> Finding:
    """A finding of these ids (counted whole, listed up to LISTED)."""
    return Finding(len(ids), tuple(ids[:LISTED]))


def _id(iri: object) -> str:
    """An item id from its IRI."""
    return str(iri).rsplit("/", 1)[-1]
