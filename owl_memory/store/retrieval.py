"""Deterministic retrieval: the SPARQL that defines a search, and the FTS5 accelerator that runs it embedded.

**Definition without text** (`defining_sparql`, one SELECT; filter values are bound, never pasted): the items
that apply (every given filter holds: om:appliesToOntology ?ontology, om:appliesToTaskType ?taskType,
om:preventsFailureMode ?failureMode; the kind is one of the given kinds, or any kind), that no item supersedes
and that are not archived. They are ordered in groups: an applicable exception whose rule (the item that
om:hasException it) also applies and is live belongs to its rule's group, every other item leads its own group.
Groups are ordered by the leader's priority DESC, confidence DESC, id ASC. Inside a group an exception comes
before its rule exactly when its narrower applicability holds: every applicability property (ontology, task type,
failure mode) on which it has a value its rule lacks is stated in the query (a stated filter the exception
passes is then its own value). Otherwise its condition is not known to hold, and it comes just after the rule.
So a group is: the winning exceptions, the rule, the other exceptions (each part by priority DESC, confidence
DESC, id ASC). The first k rows are the result. Every backend
returns exactly these ids in this order (tests/test_retrieval.py runs the SELECT on rdflib over an export and
compares it with the embedded accelerator for every query shape).

**Text ranking** (a query with words): words are the distinct lower-case `\\w+` runs of the text (at most 32).
Candidates are the items the definition above admits whose title, summary or tags contain at least one word
(FTS5 unicode61 tokens: case- and diacritic-insensitive). They are ranked by coordination level: items with
all the words first, then (for 3 to 6 words) items with all but one, then items with any; within a level by
Okapi BM25 (k1 = 1.2, b = 0.75; SQLite FTS5's `bm25()` over title, summary and tags with weight 1 each, so
document length counts those columns' tokens; the score is the sum over the matched words, rounded to 6
places); then priority DESC, confidence DESC, id ASC. Finally each applicable exception of a rule in the
results is moved next to its rule (just above it when its narrower applicability holds, as above, else just
below it; `place_exceptions`), and the list is cut to k. A backend without BM25 statistics must compute
them over the same fields to return the same order.

**The embedded accelerator**: each item has one row in the `om_fts` index: the words of its title, summary and
tags; key tokens for its kind and applicability links (`k<property id>x<object id>`, quadstore ids); and its
priority, confidence and id. FTS5 MATCH expressions (keys AND words) are passed as bound parameters: user text
reaches them only as quoted word tokens, filter values only as quadstore ids. A search without text walks the
`om_order` table (one row per key token and item, one per combination of links on 2 or 3 applicability properties,
and `*` for every item, indexed in priority, confidence, id order): the one token of its filters, in that order,
each row checked for a kind, up to k, so it never sorts every match. A search with text ranks through the item
sets of postings.py (topk.py: the items holding each word token tf times, the items of each document length; FTS5's
own statistics and bm25 formula): items of one tf signature and length share a score, so whole cells of equal score
are taken best first and only the rows that can enter the top k are read. A word FTS5 would fold or split (not ASCII
letters and digits) or a search that would read too many rows hands the search to FTS5 itself (`bm25()`, one query per
level), with the same result. A read-only memory made before store format 4 searches through FTS5 alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import combinations, product

from rdflib import URIRef
from rdflib.namespace import RDF

from ..model import normalize_kind
from ..vocab import ITEM, KINDS, OM
from .items import IRI, failure_mode_iri, task_type_iri

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_K = 50
MAX_TOKENS = 32
APPLICABILITY = (OM.appliesToOntology, OM.appliesToTaskType, OM.preventsFailureMode)
KEYED = (RDF.type, *APPLICABILITY)


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
    unstated: tuple = ()  # storids of the applicability properties the query states no value for


def unstated(q: SearchQuery) -> tuple[URIRef, ...]:
    """The applicability properties the query states no value for (an exception narrowing its rule on one of them
    does not win over the rule)."""
    return tuple(p for p, v in zip(APPLICABILITY, (q.ontology, q.task_type, q.failure_mode), strict=True) if v is None)


def words(text: str | None) -> tuple:
    """The distinct lower-case word tokens of a text (at most MAX_TOKENS)."""
    return tuple(dict.fromkeys(w.lower() for w in _WORD.findall(text or "")))[:MAX_TOKENS]


def key_token(p: int, o: int) -> str:
    """The index token that stands for the link (item, p, o)."""
    return f"k{p}x{o}"


def filter_token(filters: tuple) -> str | None:
    """The one order-table token of a query's filters ((property, object) storid pairs, all to hold): the key
    token of a single filter, the combination token of several, None without filters."""
    return "+".join(sorted(key_token(p, o) for p, o in filters)) or None


def filter_combinations(keys: list[str], kind_property: int) -> list[str]:
    """The combination tokens of an item's key tokens: one per choice of one link on each of 2 or 3 different
    applicability properties (the kind's rdf:type tokens take no part), as filter_token names them."""
    by_property: dict[str, list[str]] = {}
    for token in keys:
        p = token[1:].split("x", 1)[0]
        if p != str(kind_property):
            by_property.setdefault(p, []).append(token)
    groups = list(by_property.values())
    return ["+".join(sorted(choice)) for r in range(2, len(groups) + 1) for chosen in combinations(groups, r)
            for choice in product(*chosen)]


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
    """Up to q.k (item storid, id, score), best first, exceptions next to the rules they refine."""
    if not q.words:
        return _grouped(fts, q)
    rows = fts.top_text(q)
    if rows is None:  # a memory without item sets, a word FTS5 splits, too many rows: FTS5 ranks (same order)
        rows = _by_level_in_python(fts, q) if q.filters or q.kinds else _by_level_in_fts(fts, q)
    rules = fts.exceptions_of([r[0] for r in rows])
    if rules:
        found = _ranked(fts, replace(q, need=1), len(rules), only=sorted(rules))
        rows = place_exceptions(rows, [(r, rules[r[0]]) for r in found], fts.narrowing(rules, q.unstated))
    return rows[: q.k]


def _grouped(fts, q: FtsQuery) -> list[tuple]:
    """No text: walk the live applicable rows in (priority, confidence, id) order, each rule with its applicable
    live exceptions around it (winning ones before, the others after), each such exception shown only there (the
    definition's groups)."""
    out: list = []
    offset, page = 0, max(2 * q.k, 16)
    while len(out) < q.k:
        rows = _ranked(fts, q, page, offset=offset)
        ids = [r[0] for r in rows]
        parents = fts.rules_of(ids)
        live = {r[0] for r in _ranked(fts, q, len(parents), only=sorted(set(parents.values())))} if parents else set()
        children = fts.exceptions_of(ids)
        below = fts.narrowing(children, q.unstated)
        kids: dict[tuple[int, bool], list] = {}
        for e in _ranked(fts, q, len(children), only=sorted(children)) if children else []:
            kids.setdefault((children[e[0]], e[0] in below), []).append(e)
        for r in rows:
            out += kids.get((r[0], False), [])
            if parents.get(r[0]) not in live:
                out.append(r)
            out += kids.get((r[0], True), [])
        if len(rows) < page:
            break
        offset += page
    return out[: q.k]


def _by_level_in_fts(fts, q: FtsQuery) -> list[tuple]:
    """Top q.k rows, one FTS5 query per coordination level until k are found (large candidate sets)."""
    rows: list = []
    for need in levels(len(q.words)):
        if len(rows) >= q.k:
            break
        seen = {r[0] for r in rows}
        rows += [r for r in _ranked(fts, replace(q, need=need), q.k + len(rows)) if r[0] not in seen]
    return rows[: q.k]


def _by_level_in_python(fts, q: FtsQuery) -> list[tuple]:
    """Top q.k rows for small, filtered candidate sets: one cheap keys-AND-word query per word.

    FTS5 bm25 is a sum over the query's phrases, so the per-word scores add up to the score of the whole query;
    the number of words an item matched gives its coordination level.
    """
    hits: dict[int, list] = {}
    for w in q.words:
        for s, item, score, prio, conf in _ranked(fts, replace(q, words=(w,)), -1, ranks=True, exact=True):
            h = hits.setdefault(s, [0, 0.0, item, prio, conf])
            h[0], h[1] = h[0] + 1, h[1] + score
    n = len(q.words)
    best = sorted(hits.items(), key=lambda x: (-level(x[1][0], n), -round(x[1][1], 6), -x[1][3], -x[1][4], x[1][2]))
    return [(s, h[2], round(h[1], 6)) for s, h in best[: q.k]]


def second_level(n: int) -> bool:
    """Whether a search of n words ranks the items missing one word between those with all and the rest."""
    return 3 <= n <= 6


def level(matched: int, n: int) -> int:
    """Coordination level of an item that matched `matched` of n words: 2 all, 1 all but one (3 to 6 words), 0 any."""
    return 2 if matched >= n else 1 if second_level(n) and matched == n - 1 else 0


def levels(n: int) -> list[int]:
    """How many of n words each coordination level needs, best first: all, all but one (3 to 6 words), one."""
    return [n] + ([n - 1] if second_level(n) else []) + ([1] if n > 1 else [])


def place_exceptions(rows: list, exceptions: list, below: set) -> list:
    """Text results with exceptions next to their rules: each (exception row, rule key) goes just above the rule's
    row, or just below it when its key is in `below` (it narrows the rule on an unstated property); rows are
    tuples keyed by their first value, exceptions keep their ranked order on each side (one logic, every backend)."""
    moved = {row[0] for row, _ in exceptions}
    sides: dict[tuple, list] = {}
    for row, rule in exceptions:
        sides.setdefault((rule, row[0] in below), []).append(row)

    def around(row: tuple, seen: frozenset) -> list:
        """`row` with its exceptions (and theirs) around it; `seen` guards against om:hasException cycles."""
        if row[0] in seen:
            return []
        seen |= {row[0]}
        return ([x for e in sides.get((row[0], False), []) for x in around(e, seen)] + [row]
                + [x for e in sides.get((row[0], True), []) for x in around(e, seen)])

    return [x for r in rows if r[0] not in moved for x in around(r, frozenset())]


def _ranked(fts, q: FtsQuery, limit: int, only: list | None = None, ranks: bool = False,
            offset: int = 0, exact: bool = False) -> list[tuple]:
    """Ranked (storid, id, score[, priority, confidence]) rows of applicable, live items (fts.key_ranked without
    text: it walks the one order token of the filters and stops at `limit`; else fts.fts_ranked, also for a memory
    without the order table); `exact` scores are summed by the caller and rounded once, as the definition says."""
    if not q.words and only is None and not ranks:
        rows = fts.key_ranked(filter_token(q.filters), [key_token(p, o) for p, o in q.kinds], limit, offset)
        if rows is not None:
            return rows
    return fts.fts_ranked(match_expression(q), limit, only=only, scored=bool(q.words), ranks=ranks, offset=offset,
                          exact=exact)


# ---- the defining SPARQL ----
_PREFIX = "PREFIX om: <http://w3id.org/owl-memory#>\n"
_FILTERS = (("ontology", "om:appliesToOntology"), ("taskType", "om:appliesToTaskType"),
            ("failureMode", "om:preventsFailureMode"))


def bindings(q: SearchQuery) -> dict:
    """The values the defining query binds: {ontology, taskType, failureMode} for the filters given."""
    values = {"ontology": q.ontology, "taskType": q.task_type, "failureMode": q.failure_mode}
    return {name: v for name, v in values.items() if v is not None}


def defining_sparql(q: SearchQuery, graph: URIRef | None = None, values: str = "") -> str:
    """The one SELECT that defines the applicability part of a search (its filter values are bound, see
    `bindings`); with LIMIT k for a search without text, unlimited (the text candidates) otherwise. `graph`:
    match in that named graph instead of the default graph (a server keeping items in a named graph); `values`:
    a VALUES block of escaped terms put first in the pattern, for a server that takes no separate bindings."""
    bound = bindings(q)
    kinds = ", ".join(f"<{k}>" for k in (q.kinds or tuple(OM[k] for k in KINDS)))

    def applies(var: str) -> str:
        """Patterns: `var` is of one of the kinds, has every bound filter value, is neither superseded nor archived."""
        links = "".join(f" ; {prop} ?{name}" for name, prop in _FILTERS if name in bound)
        return (f"?{var} a ?{var}Kind{links} . FILTER(?{var}Kind IN ({kinds}))\n"
                f"    FILTER NOT EXISTS {{ ?{var}Newer om:supersedes ?{var} }}\n"
                f"    FILTER NOT EXISTS {{ ?{var} om:archived true }}")

    where, end = (f"GRAPH <{graph}> {{", "  }\n") if graph is not None else ("", "")
    return (f"{_PREFIX}SELECT ?item WHERE {{{where}{values}\n"
            f"  ?item om:priority ?priority ; om:confidence ?confidence .\n  {applies('item')}\n"
            "  OPTIONAL { ?rule om:hasException ?item ; om:priority ?rulePriority ; om:confidence ?ruleConfidence }\n"
            f"  BIND(IF(BOUND(?rule), EXISTS {{\n    {applies('rule')}\n  }}, false) AS ?grouped)\n"
            "  BIND(IF(?grouped, ?rulePriority, ?priority) AS ?groupPriority)\n"
            "  BIND(IF(?grouped, ?ruleConfidence, ?confidence) AS ?groupConfidence)\n"
            "  BIND(IF(?grouped, STR(?rule), STR(?item)) AS ?group)\n"
            f"  BIND(IF(?grouped, IF({_wins(unstated(q))}, 0, 2), 1) AS ?slot)\n"
            f"{end}}}\nORDER BY DESC(?groupPriority) DESC(?groupConfidence) ?group ?slot "
            "DESC(?priority) DESC(?confidence) STR(?item)" + ("" if q.words else f"\nLIMIT {int(q.k)}"))


def _wins(open_properties: tuple) -> str:
    """The SPARQL condition "the exception ?item narrows ?rule on none of these (unstated) properties"."""
    if not open_properties:
        return "true"
    props = ", ".join(f"<{p}>" for p in open_properties)
    return ("NOT EXISTS { ?item ?narrowedBy ?narrowValue . "
            f"FILTER(?narrowedBy IN ({props})) FILTER NOT EXISTS {{ ?rule ?narrowedBy ?narrowValue }} }}")


def run_defining(graph, q: SearchQuery) -> list[str]:
    """Item ids the defining SELECT returns on an rdflib graph (any store rdflib can query)."""
    rows = graph.query(defining_sparql(q), initBindings=bindings(q))
    return [str(r[0])[len(str(ITEM)):] for r in rows]
