"""Deterministic retrieval: the SPARQL that defines a search, and the ranking that computes it through an index.

**Definition without text** (`defining_sparql`, one SELECT; filter values are bound, never pasted): the items
that apply (every given filter holds: om:appliesToOntology an IRI equal to ?ontology once both lose any trailing #
or /, om:appliesToTaskType ?taskType, om:preventsFailureMode ?failureMode, om:aboutClass ?aboutClass,
om:aboutProperty ?aboutProperty; the kind is one of the given kinds, or any kind), that no item supersedes
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

**The ranking** (`rank`) computes that result through a typed index (`Index`: rows of applicable, live items in
the orders above, the exceptions of rules and which of them narrow their rule): it pages through the rows of a
search without text and groups each rule with its exceptions; it takes a text search's top k from the index, or
ranks it one coordination level (or one word) at a time, then places exceptions. Control goes one way: the ranking
asks, the index answers (embedded/index.py on FTS5 and its own tables; a SPARQL server ranks on the server,
server/ranking.py, and shares `place_exceptions`).
"""
from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence, Set
from dataclasses import dataclass, replace
from typing import NamedTuple, Protocol, TypeVar

from rdflib import Graph, URIRef
from rdflib.namespace import RDF
from rdflib.query import ResultRow
from rdflib.term import Node

from ..errors import ConfigError
from ..model import normalize_kind
from ..vocab import ITEM, KINDS, OM, ontology_iri
from .items import IRI, failure_mode_iri, task_type_iri

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_K = 50
MAX_TOKENS = 32
APPLICABILITY = (OM.appliesToOntology, OM.appliesToTaskType, OM.preventsFailureMode)
ABOUT = (OM.aboutClass, OM.aboutProperty)  # what an item is about: filters, never conditions an exception narrows
KEYED = (RDF.type, *APPLICABILITY, *ABOUT)


@dataclass(frozen=True)
class SearchQuery:
    """A search request in backend-neutral terms: filter IRIs (None: no filter; the ontology normalized), kind class
    IRIs (any one), the query's word tokens and the result count."""

    words: tuple[str, ...] = ()
    ontology: URIRef | None = None
    task_type: URIRef | None = None
    failure_mode: URIRef | None = None
    kinds: tuple[URIRef, ...] = ()
    k: int = 5
    about_class: URIRef | None = None
    about_property: URIRef | None = None
    stored_spelling: bool = False  # the ontology is the one spelling of it the memory stores: compare it exactly
    about: URIRef | None = None  # a class or property IRI: alignment.followed searches it as each, in turn


def search_query(text: str | None = None, ontology: str | None = None, task_type: str | None = None,
                 failure_mode: str | None = None, kinds: str | Iterable[str] | None = None, k: int = 5,
                 about_class: str | None = None, about_property: str | None = None,
                 about: str | None = None) -> SearchQuery | None:
    """Normalize `Memory.search` arguments (the ontology kept as given: every backend compares it without a trailing
    # or /, vocab.ontology_iri); None when a filter can match nothing (an ontology or term that is no IRI;
    `check_filters` says which)."""
    iris = {"ontology": ontology, "about_class": about_class, "about_property": about_property, "about": about}
    if ontology and not IRI.match(ontology_iri(ontology)) or any(v and not IRI.match(str(v)) for v in iris.values()):
        return None
    names = [kinds] if isinstance(kinds, str) else list(kinds or ())
    terms = {name: URIRef(str(v)) if v else None for name, v in iris.items()}
    return SearchQuery(words(text), terms["ontology"], task_type_iri(task_type) if task_type else None,
                       failure_mode_iri(failure_mode) if failure_mode else None,
                       tuple(OM[normalize_kind(n)] for n in names), max(0, min(int(k), MAX_K)),
                       terms["about_class"], terms["about_property"], about=terms["about"])


def check_filters(**iris: str | None) -> None:
    """ConfigError naming the first given filter (name=value) that is no IRI (the CLI's and tools' edge check)."""
    for name, value in iris.items():
        if value and not IRI.match(ontology_iri(value) if name == "ontology" else str(value)):
            raise ConfigError(f"{name} must be an IRI such as http://purl.org/dc/terms/ (no spaces, quotes, <, >), "
                              f"got {str(value)[:80]!r}")


@dataclass(frozen=True)
class IndexQuery:
    """A search in an index's own terms: its keys (quadstore ids, embedded) of the filters, kinds and unstated
    applicability properties, the words and the result count."""

    filters: tuple[tuple[int, int], ...]  # (property, object) pairs: every one must hold
    kinds: tuple[tuple[int, int], ...]  # (rdf:type, kind class) pairs: any one must hold
    words: tuple[str, ...]  # lower-case word tokens of the text
    k: int
    need: int = 0  # how many of the words an item must contain (0: all)
    unstated: tuple[int, ...] = ()  # the applicability properties the query states no value for


class Ranked(NamedTuple):
    """One ranked row of an index: its key of the item (a quadstore id, embedded), the item's id and score."""

    key: int
    id: str
    score: float


class Match(NamedTuple):
    """An item holding one query word: its key, id, exact (unrounded) score for the word, priority and confidence."""

    key: int
    id: str
    score: float
    priority: int
    confidence: float


class Scored(NamedTuple):
    """One search result as a backend returns it: the item's id and its score."""

    id: str
    score: float


class Index(Protocol):
    """What the ranking below asks of an index (embedded/index.py answers it from its FTS5, order and postings tables).

    Every row it gives is of an applicable item (every one of q.filters, one of q.kinds when given) that is live
    (neither superseded nor archived). The index answers questions; it never calls the ranking back.
    """

    def top_text(self, q: IndexQuery) -> list[Ranked] | None:
        """The q.k best rows of a text search in the text ranking's order (coordination level, BM25 rounded to 6
        places, priority, confidence, id), before exceptions are placed; None when the index cannot tell them
        cheaply (the ranking then asks `ranked` and `matches`)."""

    def ranked(self, q: IndexQuery, limit: int, only: Sequence[int] | None = None, offset: int = 0) -> list[Ranked]:
        """Up to `limit` rows (-1: all) from `offset` of the items holding q.need (0: all) of q.words, by BM25 score
        rounded to 6 places (0.0 without words) DESC, priority DESC, confidence DESC, id ASC; only the items whose
        keys are in `only`, when given."""

    def matches(self, q: IndexQuery, word: str) -> list[Match]:
        """Every item holding `word`, with its exact BM25 score for that word alone (scores of several words add up
        to the score of the whole query)."""

    def exceptions_of(self, keys: list[int]) -> dict[int, int]:
        """{exception key: rule key} for the exceptions (om:hasException) of the given rules."""

    def rules_of(self, keys: list[int]) -> dict[int, int]:
        """{exception key: rule key} for those of the given items that are exceptions of a rule."""

    def narrowing(self, exceptions: dict[int, int], properties: tuple[int, ...]) -> set[int]:
        """Those exceptions (of {exception: rule}) with a value on one of `properties` that their rule lacks."""


def normalized_key(p: Node, o: Node) -> Node:
    """The object an index key names for the link (item, p, o): an ontology's normalized IRI (vocab.ontology_iri,
    so every spelling of one ontology shares a key), any other object as it is."""
    return URIRef(ontology_iri(o)) if p == OM.appliesToOntology else o


def unstated(q: SearchQuery) -> tuple[URIRef, ...]:
    """The applicability properties the query states no value for (an exception narrowing its rule on one of them
    does not win over the rule)."""
    return tuple(p for p, v in zip(APPLICABILITY, (q.ontology, q.task_type, q.failure_mode), strict=True) if v is None)


def words(text: str | None) -> tuple[str, ...]:
    """The distinct lower-case word tokens of a text (at most MAX_TOKENS)."""
    return tuple(dict.fromkeys(w.lower() for w in _WORD.findall(text or "")))[:MAX_TOKENS]


def rank(index: Index, q: IndexQuery) -> list[Ranked]:
    """Up to q.k rows, best first, exceptions next to the rules they refine."""
    if not q.words:
        return _grouped(index, q)
    rows = index.top_text(q)
    if rows is None:  # a memory without item sets, a word FTS5 splits, too many rows: FTS5 ranks (same order)
        rows = _by_level_in_python(index, q) if q.filters or q.kinds else _by_level_in_fts(index, q)
    rules = index.exceptions_of([r.key for r in rows])
    if rules:
        found = index.ranked(replace(q, need=1), len(rules), only=sorted(rules))
        rows = place_exceptions(rows, [(r, rules[r.key]) for r in found], index.narrowing(rules, q.unstated))
    return rows[: q.k]


def _grouped(index: Index, q: IndexQuery) -> list[Ranked]:
    """No text: walk the live applicable rows in (priority, confidence, id) order, each rule with its applicable
    live exceptions around it (winning ones before, the others after), each such exception shown only there (the
    definition's groups)."""
    out: list[Ranked] = []
    offset, page = 0, max(2 * q.k, 16)
    while len(out) < q.k:
        rows = index.ranked(q, page, offset=offset)
        keys = [r.key for r in rows]
        parents = index.rules_of(keys)
        live = {r.key for r in index.ranked(q, len(parents), only=sorted(set(parents.values())))} if parents else set()
        children = index.exceptions_of(keys)
        below = index.narrowing(children, q.unstated)
        kids: dict[tuple[int, bool], list[Ranked]] = {}
        for e in index.ranked(q, len(children), only=sorted(children)) if children else []:
            kids.setdefault((children[e.key], e.key in below), []).append(e)
        for r in rows:
            out += kids.get((r.key, False), [])
            if parents.get(r.key) not in live:
                out.append(r)
            out += kids.get((r.key, True), [])
        if len(rows) < page:
            break
        offset += page
    return out[: q.k]


def _by_level_in_fts(index: Index, q: IndexQuery) -> list[Ranked]:
    """Top q.k rows, one index query per coordination level until k are found (large candidate sets)."""
    rows: list[Ranked] = []
    for need in levels(len(q.words)):
        if len(rows) >= q.k:
            break
        seen = {r.key for r in rows}
        rows += [r for r in index.ranked(replace(q, need=need), q.k + len(rows)) if r.key not in seen]
    return rows[: q.k]


def _by_level_in_python(index: Index, q: IndexQuery) -> list[Ranked]:
    """Top q.k rows for small, filtered candidate sets: one cheap query per word.

    BM25 is a sum over the query's words, so the per-word scores add up to the score of the whole query; the number
    of words an item matched gives its coordination level.
    """
    hits: dict[int, _Words] = {}
    for w in q.words:
        for m in index.matches(q, w):
            h = hits.get(m.key) or _Words(0, 0.0, m)
            hits[m.key] = _Words(h.matched + 1, h.score + m.score, m)
    n = len(q.words)
    best = sorted(hits.items(), key=lambda x: (-level(x[1].matched, n), -round(x[1].score, 6), -x[1].match.priority,
                                               -x[1].match.confidence, x[1].match.id))
    return [Ranked(s, h.match.id, round(h.score, 6)) for s, h in best[: q.k]]


class _Words(NamedTuple):
    """An item's words so far in a per-word ranking: how many of the query's it holds, their summed score, one match
    (its id, priority and confidence)."""

    matched: int
    score: float
    match: Match


def second_level(n: int) -> bool:
    """Whether a search of n words ranks the items missing one word between those with all and the rest."""
    return 3 <= n <= 6


def level(matched: int, n: int) -> int:
    """Coordination level of an item that matched `matched` of n words: 2 all, 1 all but one (3 to 6 words), 0 any."""
    return 2 if matched >= n else 1 if second_level(n) and matched == n - 1 else 0


def levels(n: int) -> list[int]:
    """How many of n words each coordination level needs, best first: all, all but one (3 to 6 words), one."""
    return [n] + ([n - 1] if second_level(n) else []) + ([1] if n > 1 else [])


Row = TypeVar("Row", bound=tuple)


def place_exceptions(rows: Sequence[Row], exceptions: Sequence[tuple[Row, Hashable]],
                     below: Set[Hashable]) -> list[Row]:
    """Text results with exceptions next to their rules: each (exception row, rule key) goes just above the rule's
    row, or just below it when its key is in `below` (it narrows the rule on an unstated property); rows are
    tuples keyed by their first value (Ranked by key, Scored by id), exceptions keep their ranked order on each side
    (one logic, every backend)."""
    moved = {row[0] for row, _ in exceptions}
    sides: dict[tuple[Hashable, bool], list[Row]] = {}
    for row, rule in exceptions:
        sides.setdefault((rule, row[0] in below), []).append(row)

    def around(row: Row, seen: frozenset[Hashable]) -> list[Row]:
        """`row` with its exceptions (and theirs) around it; `seen` guards against om:hasException cycles."""
        if row[0] in seen:
            return []
        seen |= {row[0]}
        return ([x for e in sides.get((row[0], False), []) for x in around(e, seen)] + [row]
                + [x for e in sides.get((row[0], True), []) for x in around(e, seen)])

    return [x for r in rows if r[0] not in moved for x in around(r, frozenset())]


# ---- the defining SPARQL ----
_PREFIX = "PREFIX om: <http://w3id.org/owl-memory#>\n"
_FILTERS = (("taskType", "om:appliesToTaskType"), ("failureMode", "om:preventsFailureMode"),
            ("aboutClass", "om:aboutClass"), ("aboutProperty", "om:aboutProperty"))
TRAILING = '"[#/]+$"'  # what vocab.ontology_iri strips, as a SPARQL REPLACE pattern


def bindings(q: SearchQuery) -> dict[str, URIRef]:
    """The values the defining query binds: {ontology, taskType, failureMode, aboutClass, aboutProperty} for the
    filters given."""
    values = {"ontology": q.ontology, "taskType": q.task_type, "failureMode": q.failure_mode,
              "aboutClass": q.about_class, "aboutProperty": q.about_property}
    return {name: v for name, v in values.items() if v is not None}


def same_ontology(stored: str, given: str) -> str:
    """The SPARQL condition "the ontology term `stored` names the ontology `given`": both compared without trailing
    # or / (vocab.ontology_iri)."""
    return f"FILTER(REPLACE(STR({stored}), {TRAILING}, \"\") = REPLACE(STR({given}), {TRAILING}, \"\"))"


def defining_sparql(q: SearchQuery, graph: URIRef | None = None, values: str = "", also: str = "") -> str:
    """The one SELECT that defines the applicability part of a search (its filter values are bound, see
    `bindings`); with LIMIT k for a search without text, unlimited (the text candidates) otherwise. With
    q.stored_spelling the ontology is matched as the exact term (the same rows when it is the one spelling stored,
    and an index serves it); `graph`:
    match in that named graph instead of the default graph (a server keeping items in a named graph); `values`:
    a VALUES block of escaped terms put first in the pattern, for a server that takes no separate bindings (or any
    pattern joined first); `also`: more variables to project (" ?v", bound by `values`)."""
    bound = bindings(q)
    kinds = ", ".join(f"<{k}>" for k in (q.kinds or tuple(OM[k] for k in KINDS)))

    def applies(var: str) -> str:
        """Patterns: `var` is of one of the kinds, has every bound filter value, is neither superseded nor archived."""
        links = "".join(f" ; {prop} ?{name}" for name, prop in _FILTERS if name in bound)
        onto = (" ; om:appliesToOntology ?ontology ." if q.stored_spelling else
                f" . FILTER EXISTS {{ ?{var} om:appliesToOntology ?{var}Ontology . "
                f"{same_ontology(f'?{var}Ontology', '?ontology')} }}") if "ontology" in bound else " ."
        return (f"?{var} a ?{var}Kind{links}{onto} FILTER(?{var}Kind IN ({kinds}))\n"
                f"    FILTER NOT EXISTS {{ ?{var}Newer om:supersedes ?{var} }}\n"
                f"    FILTER NOT EXISTS {{ ?{var} om:archived true }}")

    where, end = (f"GRAPH <{graph}> {{", "  }\n") if graph is not None else ("", "")
    return (f"{_PREFIX}SELECT ?item{also} WHERE {{{where}{values}\n"
            f"  ?item om:priority ?priority ; om:confidence ?confidence .\n  {applies('item')}\n"
            "  OPTIONAL { ?rule om:hasException ?item ; om:priority ?rulePriority ; om:confidence ?ruleConfidence }\n"
            f"  BIND(IF(BOUND(?rule), EXISTS {{\n    {applies('rule')}\n  }}, false) AS ?grouped)\n"
            "  BIND(IF(?grouped, ?rulePriority, ?priority) AS ?groupPriority)\n"
            "  BIND(IF(?grouped, ?ruleConfidence, ?confidence) AS ?groupConfidence)\n"
            "  BIND(IF(?grouped, STR(?rule), STR(?item)) AS ?group)\n"
            f"  BIND(IF(?grouped, IF({_wins(unstated(q))}, 0, 2), 1) AS ?slot)\n"
            f"{end}}}\nORDER BY DESC(?groupPriority) DESC(?groupConfidence) ?group ?slot "
            "DESC(?priority) DESC(?confidence) STR(?item)" + ("" if q.words else f"\nLIMIT {int(q.k)}"))


def _wins(open_properties: tuple[URIRef, ...]) -> str:
    """The SPARQL condition "the exception ?item narrows ?rule on none of these (unstated) properties"."""
    if not open_properties:
        return "true"
    props = ", ".join(f"<{p}>" for p in open_properties)
    return ("NOT EXISTS { ?item ?narrowedBy ?narrowValue . "
            f"FILTER(?narrowedBy IN ({props})) FILTER NOT EXISTS {{ ?rule ?narrowedBy ?narrowValue }} }}")


def run_defining(graph: Graph, q: SearchQuery) -> list[str]:
    """Item ids the defining SELECT returns on an rdflib graph (any store rdflib can query)."""
    rows = graph.query(defining_sparql(q), initBindings=bindings(q))
    return [str(r[0])[len(str(ITEM)):] for r in rows if isinstance(r, ResultRow)]  # a SELECT: every row is one
