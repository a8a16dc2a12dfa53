"""Deterministic retrieval: one FTS5 query filters by applicability, scores the words and orders the items.

Each item has one row in the `om_fts` index: the words of its title, summary and tags; key tokens for its kind
and applicability links (`k<property id>x<object id>`, quadstore ids); and its priority, confidence and id.
A search is a single MATCH expression (keys AND words) passed as a bound parameter: user text reaches it only
as quoted word tokens, filter values only as quadstore ids, so no user text is ever parsed as query syntax.

Ranking by coordination level: items containing all the query words first, then (for 3 to 6 words) items
containing all but one, then items containing any; within a level, FTS5 bm25 over title, summary and tags,
then priority, confidence and id. A lower level is only queried when the levels above give fewer than k
items. Superseded items are excluded live (from the graph), and an exception is moved just above the rule it
refines when that rule is in the results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import combinations

from rdflib import URIRef
from rdflib.namespace import RDF

from ..vocab import OM
from .items import IRI, failure_mode_iri, normalize_kind, task_type_iri

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_K = 50
MAX_TOKENS = 32
KEYED = (RDF.type, OM.appliesToOntology, OM.appliesToTaskType, OM.preventsFailureMode)


@dataclass(frozen=True)
class SearchQuery:
    """A search request in backend-neutral terms: filter IRIs (None: no filter), kind class IRIs (any one),
    the query's word tokens and the result count."""

    words: tuple[str, ...] = ()
    ontology: URIRef | None = None
    task_type: URIRef | None = None
    failure_mode: URIRef | None = None
    kinds: tuple[URIRef, ...] = ()
    k: int = 5


def search_query(text=None, ontology=None, task_type=None, failure_mode=None, kinds=None,
                 k: int = 5) -> SearchQuery | None:
    """Normalize `Memory.search` arguments; None when a filter can match nothing (an ontology that is no IRI)."""
    if ontology and not IRI.match(str(ontology)):
        return None
    names = [kinds] if isinstance(kinds, str) else list(kinds or ())
    return SearchQuery(words(text), URIRef(str(ontology)) if ontology else None,
                       task_type_iri(task_type) if task_type else None,
                       failure_mode_iri(failure_mode) if failure_mode else None,
                       tuple(OM[normalize_kind(n)] for n in names), max(0, min(int(k), MAX_K)))


@dataclass(frozen=True)
class FtsQuery:
    """A search in the embedded index's terms: quadstore ids of the filters and kinds, words, result count."""

    filters: tuple  # ((property storid, object storid), ...): every one must hold
    kinds: tuple  # ((rdf:type storid, kind class storid), ...): any one must hold
    words: tuple  # lower-case word tokens of the text
    k: int
    need: int = 0  # how many of the words an item must contain (0: all)


def words(text: str | None) -> tuple:
    """The distinct lower-case word tokens of a text (at most MAX_TOKENS)."""
    return tuple(dict.fromkeys(w.lower() for w in _WORD.findall(text or "")))[:MAX_TOKENS]


def key_token(p: int, o: int) -> str:
    """The index token that stands for the link (item, p, o)."""
    return f"k{p}x{o}"


def match_expression(q: FtsQuery) -> str | None:
    """The FTS5 MATCH text of a query: key tokens AND quoted words; None when there is neither."""
    parts = [f'"{key_token(p, o)}"' for p, o in q.filters]
    if q.kinds:
        parts.append("(" + " OR ".join(f'"{key_token(p, o)}"' for p, o in q.kinds) + ")")
    keys = f"keys : ({' AND '.join(parts)})" if parts else ""
    need = q.need or len(q.words)
    groups = [" AND ".join(f'"{w}"' for w in c) for c in combinations(q.words, need)] if q.words else []
    text = f"{{title summary tags}} : ({' OR '.join(f'({g})' for g in groups)})" if groups else ""
    return " AND ".join(x for x in (keys, text) if x) or None


def rank(fts, q: FtsQuery) -> list[tuple[int, str, float]]:
    """Up to q.k (item storid, id, score), best first, exceptions just above the rules they refine."""
    rows = _by_level_in_python(fts, q) if q.words and (q.filters or q.kinds) else _by_level_in_fts(fts, q)
    rules = fts.exceptions_of([r[0] for r in rows])
    if rules:
        found = _ranked(fts, replace(q, need=1 if q.words else 0), len(rules), only=sorted(rules))
        rows = _exceptions_first(rows, [(*r, rules[r[0]]) for r in found])
    return rows[: q.k]


def _by_level_in_fts(fts, q: FtsQuery) -> list[tuple]:
    """Top q.k rows, one FTS5 query per coordination level until k are found (large candidate sets)."""
    rows: list = []
    for need in _levels(len(q.words)):
        if len(rows) >= q.k:
            break
        seen = {r[0] for r in rows}
        rows += [r for r in _ranked(fts, replace(q, need=need), q.k + len(rows)) if r[0] not in seen]
    return rows[: q.k]


def _by_level_in_python(fts, q: FtsQuery) -> list[tuple]:
    """Top q.k rows for small, filtered candidate sets: one cheap keys-AND-word query per word.

    FTS5 bm25 is a sum over the query's phrases, so the per-word scores add up to the score of the whole query;
    the number of words an item matched is its coordination level.
    """
    hits: dict[int, list] = {}
    for w in q.words:
        for s, item, score, prio, conf in _ranked(fts, replace(q, words=(w,)), -1, ranks=True):
            h = hits.setdefault(s, [0, 0.0, item, prio, conf])
            h[0], h[1] = h[0] + 1, h[1] + score
    best = sorted(hits.items(), key=lambda x: (-x[1][0], -round(x[1][1], 6), -x[1][3], -x[1][4], x[1][2]))
    return [(s, h[2], round(h[1], 6)) for s, h in best[: q.k]]


def _levels(n: int) -> list[int]:
    """Coordination levels to query for n words: all, all but one (3 to 6 words), any."""
    if n <= 1:
        return [0]
    return [n] + ([n - 1] if 3 <= n <= 6 else []) + [1]


def _exceptions_first(rows: list, exceptions: list) -> list:
    """Put each exception (storid, id, score, rule) just above its rule in the ranked rows."""
    moved = {e[0] for e in exceptions}
    order = [r for r in rows if r[0] not in moved]
    for e in exceptions:
        at = next((i for i, r in enumerate(order) if r[0] == e[3]), None)
        if at is not None:
            order.insert(at, e[:3])
    return order


def _ranked(fts, q: FtsQuery, limit: int, only: list | None = None, ranks: bool = False) -> list[tuple]:
    """Ranked (storid, id, score[, priority, confidence]) rows of applicable, live items (fts.fts_ranked)."""
    return fts.fts_ranked(match_expression(q), limit, only=only, scored=bool(q.words), ranks=ranks)
