"""Search on a SPARQL server: the retrieval definition and the text ranking run as SELECTs on the server, over the
index graph that gives them FTS5's statistics (postings.py) and the corpus statistics cached per memory version
(corpus.py).

Without text a search is the defining SELECT itself (retrieval.py). With text, one SELECT ranks the items it reads
by coordination level and FTS5's BM25 exactly as the embedded index does: with an ontology, task type, failure mode
or about term given, every applicable item; otherwise the items of a prefix of each word's impact-ordered postings,
read deeper until no unread item can outrank the k-th row (postings.Cut). Exceptions are then placed by
retrieval.place_exceptions. Each ranking request reads the memory version too, so a search costs one request while
the cache holds its words and ontology.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from ...vocab import ITEM, KINDS, OM, ontology_iri
from .. import lexical, retrieval
from ..retrieval import Scored, SearchQuery
from . import postings
from .client import Row, SparqlClient, iri, string, term, values_block
from .corpus import VERSION, Corpus, versions
from .layout import GRAPH_INDEX, GRAPH_ITEMS, IDX

INLINE_RULES = 64  # a memory with at most this many rules that have exceptions ranks their exceptions in one request

INDEX_ENTRY = f"?i {iri(IDX.length)} ?len . ?tf {iri(IDX.frequency)} ?f"  # a hit ?i ?tf ?tok: its length, its tf


class Weight(NamedTuple):
    """One token of a query word: the word's number in the query, the token and its IDF."""

    word: int
    token: str
    idf: float


class TextStats(NamedTuple):
    """The BM25 inputs of a text search: its tokens' weights and the average document length."""

    weights: tuple[Weight, ...]
    avgdl: float


class ServerSearch:
    """Searches of one memory on a SPARQL server, ranked on the server (retrieval.py's definition): one request,
    the ranking with the memory's version, while the corpus cache (corpus.py) holds what it needs; a version other
    than the cache's means a write came between them, and the search runs again on fresh statistics.

    Args:
        client: the memory's SPARQL client (anything with its select method).
    """

    def __init__(self, client: SparqlClient):
        self.client = client
        self.corpus = Corpus(client)
        self._lock = threading.Lock()  # one search at a time reads and fills the cache (threads share a memory)

    def search(self, query: SearchQuery) -> list[Scored]:
        """Up to query.k (id, score) rows, best first, ranked on the server (see retrieval.py's definition):
        without text by priority, confidence and id; with text by coordination level and BM25 first."""
        with self._lock:
            for _ in range(3):  # each new version seen drops the cache: another write in between is rare
                found, seen = self._search(query)
                if self.corpus.current(seen):
                    break
            return found

    def _search(self, query: SearchQuery) -> tuple[list[Scored], frozenset[str] | None]:
        """The search's rows and the memory version they were read at (None: read from the cache alone)."""
        terms = lexical.query_terms(query.words) if query.words else []
        seen = self.corpus.read(sorted({t for word in terms for t in word}),
                                None if query.stored_spelling else query.ontology)
        if query.ontology is not None and not query.stored_spelling:
            spellings = self.corpus.spellings[ontology_iri(query.ontology)]
            if len(spellings) < 2:  # one spelling stored (or none): the exact term, as an index serves it
                if not spellings:
                    return [], seen
                query = replace(query, ontology=spellings[0], stored_spelling=True)
        if not query.words:  # the definition itself, its bound values as a VALUES block of escaped terms
            bound = f"{{ {VERSION} }}{_values_row(retrieval.bindings(query))}"
            _, rows = self.client.select(retrieval.defining_sparql(query, GRAPH_ITEMS, bound, also=" ?v"))
            return [Scored(str(r["item"])[len(ITEM):], 0.0) for r in rows], versions(rows)
        stats = self._text_stats(terms)
        if not stats.weights:
            return [], seen
        top = self.ranked_text(query, stats, terms)
        return self._placed(query, stats, top), top.version

    def ranked_text(self, query: SearchQuery, stats: TextStats, terms: list[tuple[str, ...]]) -> Top:
        """The query.k best text-ranked rows and the version read: a filtered search ranks its few applicable items;
        any other reads prefixes of the words' impact-ordered postings, deeper until the answer is exact."""
        if _filtered(query, stats.weights) or not _one_token_each(stats.weights, terms):
            return self.top(query, stats, _matches(query, stats.weights))  # few items, or split words
        shares = [self.corpus.df(t) / max(self.corpus.items, 1) for _, t, _ in stats.weights]
        how = postings.plan(shares, query.k, self.corpus.items, bool(query.kinds))
        words = [(t, x, self.corpus.buckets[t]) for _, t, x in stats.weights]
        while True:  # a prefix of every bucket is the whole list, and exact
            cut = postings.cut(words, stats.avgdl, how)
            top = self.top(query, stats, _prefix_matches(query, cut, stats.weights))
            levels = [(h.level, h.rank / 1_000_000) for h in top.hits]
            if cut.exact(levels, query.k):
                return top
            if not how.floors and len(levels) >= query.k:  # k rows found: read just enough to prove them
                how = postings.floored(words, stats.avgdl, levels, query.k)
            else:
                how = how.deeper()

    def top(self, query: SearchQuery, stats: TextStats, matches: str) -> Top:
        """The query.k best text-ranked rows of `matches` (see text_ranking) and the memory version they were read
        at, in one SELECT; with the exceptions of every rule when the memory has at most INLINE_RULES rules."""
        parts = [text_ranking(matches, stats.weights, query.k, stats.avgdl), VERSION]
        inline = 0 < len(self.corpus.rules) <= INLINE_RULES
        if inline:
            parts.append(_exceptions(query, stats.weights, sorted(self.corpus.rules)))
        _, rows = self.client.select("SELECT * WHERE { " + " UNION ".join(f"{{ {p} }}" for p in parts) + " }")
        found = [Hit(str(r["i"])[len(ITEM):], int(r["level"]), int(r["rank"]), int(r["priority"]),
                     float(r["confidence"])) for r in rows if r.get("rank") is not None]
        exceptions = exception_rows([r for r in rows if r.get("e") is not None], stats) if inline else None
        return Top(sorted(found, key=_order), exceptions, versions(rows))

    def _placed(self, query: SearchQuery, stats: TextStats, top: Top) -> list[Scored]:
        """The first query.k text-ranked rows with the applicable exceptions of their rules placed next to them
        (retrieval.place_exceptions); one more request when a row is a rule with exceptions the ranking did not
        read."""
        ranked = [Scored(h.id, h.rank / 1_000_000) for h in top.hits]
        rules = {h.id for h in top.hits if h.id in self.corpus.rules}
        if rules:
            exceptions = top.exceptions
            if exceptions is None:
                exceptions = exception_rows(self.client.select(_exceptions(query, stats.weights, sorted(rules)))[1],
                                            stats)
            found = sorted((e for e in exceptions if e.rule in rules), key=_order)
            placed = [(Scored(e.id, e.rank / 1_000_000), e.rule) for e in found]
            ranked = retrieval.place_exceptions(ranked, placed, {e.id for e in found if e.below})
        return ranked[: query.k]

    def _text_stats(self, terms: list[tuple[str, ...]]) -> TextStats:
        """BM25 inputs of the query words (each word's tokens): (word number, token, idf) of each token held by
        some item and the average document length, from the corpus cache."""
        n = self.corpus.items
        weights = tuple(Weight(w, t, lexical.idf(n, self.corpus.df(t))) for w, word in enumerate(terms)
                        for t in dict.fromkeys(word))
        return TextStats(weights, self.corpus.avgdl)


class ExceptionRow(NamedTuple):
    """An applicable, live exception of a ranked row's item that holds a query word: its id, its rule's id, its
    coordination level, score in millionths, priority and confidence, and whether it narrows its rule on an
    applicability property the query leaves open (it then goes below the rule)."""

    id: str
    rule: str
    level: int
    rank: int
    priority: int
    confidence: float
    below: bool


class Hit(NamedTuple):
    """One text-ranked row: the item's id, coordination level, score in millionths, priority and confidence."""

    id: str
    level: int
    rank: int
    priority: int
    confidence: float


class Top(NamedTuple):
    """What a ranking request read: its rows best first, the exceptions of every rule (None: not read) and the
    memory version."""

    hits: list[Hit]
    exceptions: list[ExceptionRow] | None
    version: frozenset[str]


def _order(h: Hit | ExceptionRow) -> tuple[int, int, int, float, str]:
    """The text ranking's order: level, score, priority, confidence DESC, id ASC."""
    return -h.level, -h.rank, -h.priority, -h.confidence, h.id


def _applicable(query: SearchQuery) -> str:
    """The items graph's patterns for applicable, live items (see applicable_patterns)."""
    return f"GRAPH {iri(GRAPH_ITEMS)} {{ {applicable_patterns(query)} }}"


def applicable_patterns(query: SearchQuery, var: str = "i") -> str:
    """Patterns that hold for applicable, live items (kind, ontology compared normalized, task type, failure mode,
    what it is about; not superseded, not archived), binding ?i, ?priority and ?confidence (for another `var`:
    ?var, ?varPriority, ?varConfidence); every value escaped."""
    i = f"?{var}"
    pri, conf = ("?priority", "?confidence") if var == "i" else (f"{i}Priority", f"{i}Confidence")
    kinds = ", ".join(term(k) for k in query.kinds or tuple(OM[k] for k in KINDS))
    where = [f"{i} a {i}Kind FILTER({i}Kind IN ({kinds}))"]  # not VALUES: Oxigraph would start from every item
    if query.ontology is not None and query.stored_spelling:
        where.append(f"{i} {iri(OM.appliesToOntology)} {term(query.ontology)} .")
    elif query.ontology is not None:
        where.append(f"FILTER EXISTS {{ {i} {iri(OM.appliesToOntology)} {i}Ontology . "
                     f"{retrieval.same_ontology(f'{i}Ontology', term(Literal(ontology_iri(query.ontology))))} }}")
    for p, o in ((OM.appliesToTaskType, query.task_type), (OM.preventsFailureMode, query.failure_mode),
                 (OM.aboutClass, query.about_class), (OM.aboutProperty, query.about_property)):
        if o is not None:
            where.append(f"{i} {iri(p)} {term(o)} .")
    where += [f"{i} {iri(OM.priority)} {pri} ; {iri(OM.confidence)} {conf} .",
              f"FILTER NOT EXISTS {{ {i}Newer {iri(OM.supersedes)} {i} }}",
              f"FILTER NOT EXISTS {{ {i} {iri(OM.archived)} true }}"]
    return " ".join(where)


def text_ranking(matches: str, weights: Sequence[Weight], limit: int, avgdl: float) -> str:
    """The text-ranking SELECT over `matches` (a pattern binding ?i ?priority ?confidence, and ?word ?idf ?f ?len
    per hit of a query token): by coordination level, then BM25 (summed over matched words, in millionths: an exact
    integer on the wire, as Virtuoso prints doubles to 6 digits; rounded as a decimal, as Oxigraph casts some whole
    doubles to the integer below), priority, confidence and id. IDFs are bound (SPARQL has no ln)."""
    if not weights:
        return "SELECT ?i ?rank ?level ?priority ?confidence WHERE { FILTER(false) }"
    n = len({w for w, _, _ in weights})
    level = f"IF(?m >= {n}, 2, IF(?m = {n - 1}, 1, 0))" if retrieval.second_level(n) else f"IF(?m >= {n}, 2, 0)"
    part = (f"?idf * ?f * {double(lexical.K1 + 1)} / (?f + {double(lexical.K1)} * "
            f"({double(1 - lexical.B)} + {double(lexical.B)} * ?len / {double(avgdl)}))")
    return (f"SELECT ?i ?rank ?level ?priority ?confidence WHERE {{ {{ SELECT ?i ?priority ?confidence "
            f"(COUNT(DISTINCT ?word) AS ?m) (SUM(?part) AS ?score) WHERE {{ {matches} BIND({part} AS ?part) }} "
            f"GROUP BY ?i ?priority ?confidence }} BIND({level} AS ?level) "
            f"BIND({iri(XSD.integer)}(ROUND({iri(XSD.decimal)}(?score) * 1000000)) AS ?rank) }} "
            f"ORDER BY DESC(?level) DESC(?rank) DESC(?priority) DESC(?confidence) ?i LIMIT {int(limit)}")


def _matches(query: SearchQuery, weights: Sequence[Weight]) -> str:
    """Applicable live items joined with their index entries for the query tokens (?word ?tok ?idf ?f ?len).
    Two spellings of one pattern, to steer the server's planner: with an ontology, task type, failure mode or
    about term, the few applicable items come first and their tokens are filtered, each token's word and IDF bound by
    an expression (Oxigraph looks the tokens up per item, but would start from a VALUES block and scan every
    item having a token); otherwise, or when a token belongs to two words, the tokens come first."""
    by_token = {t: (w, x) for w, t, x in weights}
    if _filtered(query, weights):
        toks = ", ".join(string(t) for t in by_token)
        return (f"{_applicable(query)} GRAPH {iri(GRAPH_INDEX)} {{ ?i ?tf ?tok FILTER(?tok IN ({toks})) "
                f"{INDEX_ENTRY} }} BIND({_lookup(by_token, 0)} AS ?word) BIND({_lookup(by_token, 1)} AS ?idf)")
    rows = " ".join(f"({w} {string(t)} {double(x)})" for w, t, x in weights)
    return f"GRAPH {iri(GRAPH_INDEX)} {{ VALUES (?word ?tok ?idf) {{ {rows} }} ?i ?tf ?tok . {INDEX_ENTRY} }} " + \
        _applicable(query)


def _prefix_matches(query: SearchQuery, cut: postings.Cut, weights: Sequence[Weight]) -> str:
    """The applicable items holding a posting of the cut's prefix (read with bound patterns, bucket by bucket;
    with cut.conjunctive only those holding every token) or, with cut.every, all the cut's words, with their index
    entries for every query token (?word ?idf ?f ?len bound as in _matches), one row per item and word. Each
    source is one flat pattern in this order, so Oxigraph joins it left to right by bound items (a source in a
    group or subquery of its own made it scan every applicable item)."""
    by_token = {t: (w, x) for w, t, x in weights}
    toks = ", ".join(string(t) for t in by_token)
    rest = (f"{_applicable(query)} GRAPH {iri(GRAPH_INDEX)} {{ ?i ?tf ?tok FILTER(?tok IN ({toks})) "
            f"{INDEX_ENTRY} }} BIND({_lookup(by_token, 0)} AS ?word) BIND({_lookup(by_token, 1)} AS ?idf)")
    pairs = " ".join(f"({string(t)} {iri(b)})" for t, b in cut.pairs)
    held = " ".join(f"?i ?b{n + 1} {string(t)} ." for n, t in enumerate(by_token)) if cut.conjunctive else ""
    sources = [f"VALUES (?tok0 ?b0) {{ {pairs} }} ?i ?b0 ?tok0 . {held}"] if cut.pairs else []
    if cut.every:
        sources.append(" ".join(f"?i ?b{n + 1} {string(t)} ." for n, t in enumerate(cut.every)))
    union = " UNION ".join(f"{{ GRAPH {iri(GRAPH_INDEX)} {{ {src} }} {rest} }}" for src in sources) or "FILTER(false)"
    return f"{{ SELECT DISTINCT ?i ?priority ?confidence ?word ?idf ?f ?len WHERE {{ {union} }} }}"


def _exceptions(query: SearchQuery, weights: Sequence[Weight], rules: list[str]) -> str:
    """The applicable, live exceptions of the rules that hold a query token: their priority, confidence, postings
    of the query tokens (?eb ?etok) and whether they narrow the rule on an applicability property the query leaves
    open (?below)."""
    toks = ", ".join(string(t) for t in dict.fromkeys(t for _, t, _ in weights))
    open_ = retrieval.unstated(query)
    below = (f"EXISTS {{ ?e ?np ?nv FILTER(?np IN ({', '.join(iri(p) for p in open_)})) "
             f"FILTER NOT EXISTS {{ ?i ?np ?nv }} }}") if open_ else "false"
    return (f"SELECT ?i ?e ?ePriority ?eConfidence ?below ?eb ?etok WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ "
            f"{values_block('i', [ITEM[r] for r in rules])} ?i {iri(OM.hasException)} ?e . "
            f"{applicable_patterns(query, 'e')} BIND({below} AS ?below) }} "
            f"GRAPH {iri(GRAPH_INDEX)} {{ ?e ?eb ?etok FILTER(?etok IN ({toks})) }} }}")


def exception_rows(rows: list[Row], stats: TextStats) -> list[ExceptionRow]:
    """The exceptions of an _exceptions answer, scored here from their postings as text_ranking scores on the
    server (postings.bm25 computes the server's double)."""
    found: dict[tuple[str, str], tuple[Row, dict[str, tuple[int, int]]]] = {}
    for r in rows:
        if (fl := postings.parse_bucket(r["eb"])) is not None:
            key = (str(r["i"])[len(ITEM):], str(r["e"])[len(ITEM):])
            found.setdefault(key, (r, {}))[1][str(r["etok"])] = fl
    n = len({w for w, _, _ in stats.weights})
    out = []
    for (rule, e), (r, held) in found.items():
        matched = {w for w, t, _ in stats.weights if t in held}
        score = sum(postings.bm25(x, *held[t], stats.avgdl) for _, t, x in stats.weights if t in held)
        out.append(ExceptionRow(e, rule, retrieval.level(len(matched), n), millionths(score), int(r["ePriority"]),
                                float(r["eConfidence"]), str(r["below"]) in ("true", "1")))
    return out


def millionths(score: float) -> int:
    """A score in millionths, rounded as text_ranking rounds on the server (half up, from the decimal)."""
    return int((Decimal(repr(score)) * 1_000_000).to_integral_value(ROUND_HALF_UP))


def _one_token_each(weights: Sequence[Weight], terms: Sequence[tuple[str, ...]]) -> bool:
    """Whether every query word is one token, no token in two words (the words whose postings a prefix reads)."""
    return len(weights) == len(terms) == len({t for _, t, _ in weights})


def _filtered(query: SearchQuery, weights: Sequence[Weight]) -> bool:
    """Whether a text search starts from its applicable items (ontology, task type, failure mode or an about term
    given, and no token in two words) rather than from the query tokens."""
    return len({t for _, t, _ in weights}) == len(weights) and any(
        v is not None for v in (query.ontology, query.task_type, query.failure_mode, query.about_class,
                                query.about_property))


def _lookup(by_token: dict[str, tuple[int, float]], field: int) -> str:
    """An expression giving ?tok's word number (field 0) or IDF (field 1): nested IFs over the query tokens."""
    expr = "0"
    for tok, values in reversed(by_token.items()):
        value = values[field] if field == 0 else double(values[field])
        expr = f"IF(?tok = {string(tok)}, {value}, {expr})"
    return expr


def double(x: float) -> str:
    """A float as an xsd:double SPARQL literal."""
    return format(float(x), ".17e")


def _values_row(bound: dict[str, URIRef]) -> str:
    """A one-row VALUES block binding the given variables to escaped terms ("" when there are none)."""
    if not bound:
        return ""
    return f" VALUES ({' '.join('?' + n for n in bound)}) {{ ({' '.join(term(v) for v in bound.values())}) }}"
