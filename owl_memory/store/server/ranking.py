"""Search on a SPARQL server: the retrieval definition and the text ranking run as SELECTs on the server, over the
index graph that gives them FTS5's statistics.

Without text a search is the defining SELECT itself (retrieval.py). With text, each item has in the index graph its
document length (tokens of title, summary and tags plus one per key token, as FTS5 counts its `keys` column) and one
triple per distinct token, whose predicate idx:tfN carries the token's frequency N (lexical.py: SQLite's own FTS5
tokens), so one SELECT ranks by coordination level and FTS5's BM25 exactly as the embedded index does; exceptions are
then placed by retrieval.place_exceptions.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Identifier

from ...model import ItemSpec
from ...vocab import ITEM, KINDS, OM, ontology_iri
from .. import lexical, retrieval
from ..retrieval import KEYED, Scored, SearchQuery, normalized_key
from .client import Row, SparqlClient, iri, string, term, values_block
from .layout import GRAPH_INDEX, GRAPH_ITEMS, IDX

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
    """Searches of one memory on a SPARQL server, ranked on the server (retrieval.py's definition).

    Args:
        client: the memory's SPARQL client (anything with its select method).
    """

    def __init__(self, client: SparqlClient):
        self.client = client
        self._stats: tuple[frozenset[str], int, int, dict[str, int]] | None = None  # see _index_stats

    def search(self, query: SearchQuery) -> list[Scored]:
        """Up to query.k (id, score) rows, best first, ranked on the server (see retrieval.py's definition):
        without text by priority, confidence and id; with text by coordination level and BM25 first."""
        if query.ontology is not None and not query.stored_spelling:
            spellings = self._spellings(query.ontology)
            if len(spellings) < 2:  # one spelling stored (or none): the exact term, as an index serves it
                return self.search(replace(query, ontology=spellings[0], stored_spelling=True)) if spellings else []
        if not query.words:  # the definition itself, its bound values as a VALUES block of escaped terms
            bound = retrieval.bindings(query)
            _, rows = self.client.select(retrieval.defining_sparql(query, GRAPH_ITEMS, _values_row(bound)))
            return [Scored(str(r["item"])[len(ITEM):], 0.0) for r in rows]
        stats = self._text_stats(query.words)
        ranked = self._ranked_text(query, stats)
        rules = self._exceptions_of([r.id for r in ranked])
        if rules:
            found = self.ranked(query, len(rules), stats, only=sorted(rules))
            below = self._narrowing(rules, retrieval.unstated(query))
            ranked = retrieval.place_exceptions(ranked, [(r, rules[r.id]) for r in found], below)
        return ranked[: query.k]

    def _spellings(self, ontology: URIRef) -> list[URIRef]:
        """The spellings of an ontology the memory stores (its TargetOntology nodes equal to it normalized)."""
        bare = ontology_iri(ontology)
        _, rows = self.client.select(
            f"SELECT DISTINCT ?o WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ ?o a {iri(OM.TargetOntology)} "
            f"FILTER(STRSTARTS(STR(?o), {string(bare)})) }} }}")
        return sorted(o for r in rows if isinstance(o := r["o"], URIRef) and ontology_iri(o) == bare)

    def _ranked_text(self, query: SearchQuery, stats: TextStats) -> list[Scored]:
        """The query.k best text-ranked rows. Without applicability filters, ranking every item that matches a
        word scans most of a large memory, so the top coordination levels are ranked first: the items matching
        every query word, then those missing at most one (when _by_text scores that level); the full ranking runs
        only when they hold fewer than k applicable items. Same rows: a higher level outranks any score."""
        if _filtered(query, None, stats.weights):
            return self.ranked(query, query.k, stats)
        for candidates in _top_levels(stats.weights):
            _, found = self.client.select(candidates)
            ids = sorted(str(r["i"])[len(ITEM):] for r in found)
            rows = self.ranked(query, query.k, stats, only=ids) if ids else []
            if len(rows) >= query.k:
                return rows
        return self.ranked(query, query.k, stats)

    def ranked(self, query: SearchQuery, limit: int, stats: TextStats, only: list[str] | None = None) -> list[Scored]:
        """Text-ranked (id, score) rows of applicable, live items, from one SELECT on the server."""
        _, rows = self.client.select(_by_text(query, limit, only, stats))
        return scored(rows)

    def _text_stats(self, words: tuple[str, ...]) -> TextStats:
        """BM25 inputs of the query words: (word number, token, idf) of each token and the average document length."""
        terms = lexical.query_terms(words)
        toks = sorted({t for word in terms for t in word})
        if not toks:
            return TextStats((), 1.0)
        n, total, hits = self._index_stats(toks)
        weights = tuple(Weight(w, t, lexical.idf(n, hits[t])) for w, word in enumerate(terms)
                        for t in dict.fromkeys(word))
        return TextStats(weights, total / n if n else 1.0)

    def _index_stats(self, toks: list[str]) -> tuple[int, int, dict[str, int]]:
        """(items indexed, their total length, {token: items having it}), counted on the server (a scan of the
        index) once per index version: kept while no write changed the version read first (see new_index_version)."""
        _, rows = self.client.select(f"SELECT ?v WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ {iri(IDX.stats)} "
                                     f"{iri(IDX.version)} ?v }} }}")
        version = frozenset(str(r["v"]) for r in rows)
        if self._stats is None or self._stats[0] != version:
            _, rows = self.client.select(
                f"SELECT (COUNT(?i) AS ?n) (SUM(?len) AS ?total) WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ "
                f"?i {iri(IDX.length)} ?len }} }}")
            self._stats = (version, int(rows[0]["n"]), int(rows[0].get("total") or 0), {})
        _, n, total, known = self._stats
        missing = [t for t in toks if t not in known]
        if missing:
            _, rows = self.client.select(
                f"SELECT ?tok (COUNT(?i) AS ?hits) WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ "
                f"{values_block('tok', map(Literal, missing))} ?i ?tf ?tok }} }} GROUP BY ?tok")
            known.update(dict.fromkeys(missing, 0) | {str(r["tok"]): int(r["hits"]) for r in rows})
        return n, total, {t: known[t] for t in toks}

    def _exceptions_of(self, ids: list[str]) -> dict[str, str]:
        """{exception id: rule id} for the exceptions of the given rules."""
        if not ids:
            return {}
        _, rows = self.client.select(
            f"SELECT ?rule ?e WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {values_block('rule', [ITEM[i] for i in ids])} "
            f"?rule {iri(OM.hasException)} ?e }} }}")
        return {str(r["e"])[len(ITEM):]: str(r["rule"])[len(ITEM):] for r in rows}

    def _narrowing(self, rules: dict[str, str], properties: tuple[URIRef, ...]) -> set[str]:
        """Those exceptions (of {exception id: rule id}) with a value of one of `properties` their rule lacks."""
        if not rules or not properties:
            return set()
        pairs = " ".join(f"({iri(ITEM[e])} {iri(ITEM[r])})" for e, r in rules.items())
        _, rows = self.client.select(
            f"SELECT DISTINCT ?e WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ VALUES (?e ?rule) {{ {pairs} }} "
            f"{values_block('p', list(properties))} ?e ?p ?v FILTER NOT EXISTS {{ ?rule ?p ?v }} }} }}")
        return {str(r["e"])[len(ITEM):] for r in rows}


def index_triples(items: Sequence[tuple[ItemSpec, Graph]]) -> list[list[tuple[URIRef, URIRef, Identifier]]]:
    """The index-graph triples of each item: its length, and each distinct token as the object of the predicate
    idx:tfN (N its frequency), whose idx:frequency is declared beside it; one triple per token."""
    counted = lexical.term_counts((spec.title, spec.summary, " ".join(spec.tags)) for spec, _ in items)
    out = []
    for (spec, g), counts in zip(items, counted, strict=True):
        node = ITEM[spec.id]
        keys = {(p, normalized_key(p, o)) for s, p, o in g if s == node and p in KEYED}
        length = Literal(sum(counts.values()) + len(keys))
        triples: list[tuple[URIRef, URIRef, Identifier]] = [(node, IDX.length, length)]
        for f in sorted(set(counts.values())):
            triples.append((IDX[f"tf{f}"], IDX.frequency, Literal(f)))
        triples += [(node, IDX[f"tf{f}"], Literal(tok)) for tok, f in sorted(counts.items())]
        out.append(triples)
    return out


def new_index_version() -> str:
    """The update operations replacing the index version with a fresh one (concurrent writers may leave several
    values: any write still changes the set a reader compares)."""
    node = f"{iri(IDX.stats)} {iri(IDX.version)}"
    return (f"DELETE WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ {node} ?v }} }} ;\n"
            f"INSERT DATA {{ GRAPH {iri(GRAPH_INDEX)} {{ {node} {string(str(uuid.uuid4()))} }} }}")


def _applicable(query: SearchQuery, only: list[str] | None) -> str:
    """The items graph's patterns for applicable, live items (see applicable_patterns)."""
    return f"GRAPH {iri(GRAPH_ITEMS)} {{ {applicable_patterns(query, only)} }}"


def applicable_patterns(query: SearchQuery, only: list[str] | None) -> str:
    """Patterns that hold for applicable, live items (kind, ontology compared normalized, task type, failure mode,
    what it is about; not superseded, not archived), binding ?i, ?priority and ?confidence; every value escaped."""
    where = [values_block("i", [ITEM[i] for i in only])] if only else []
    kinds = ", ".join(term(k) for k in query.kinds or tuple(OM[k] for k in KINDS))
    where += [f"?i a ?kind FILTER(?kind IN ({kinds}))"]  # not VALUES: Oxigraph would start from every item
    if query.ontology is not None and query.stored_spelling:
        where.append(f"?i {iri(OM.appliesToOntology)} {term(query.ontology)} .")
    elif query.ontology is not None:
        where.append(f"FILTER EXISTS {{ ?i {iri(OM.appliesToOntology)} ?ontology . "
                     f"{retrieval.same_ontology('?ontology', term(Literal(ontology_iri(query.ontology))))} }}")
    for p, o in ((OM.appliesToTaskType, query.task_type), (OM.preventsFailureMode, query.failure_mode),
                 (OM.aboutClass, query.about_class), (OM.aboutProperty, query.about_property)):
        if o is not None:
            where.append(f"?i {iri(p)} {term(o)} .")
    where += [f"?i {iri(OM.priority)} ?priority ; {iri(OM.confidence)} ?confidence .",
              f"FILTER NOT EXISTS {{ ?newer {iri(OM.supersedes)} ?i }}",
              f"FILTER NOT EXISTS {{ ?i {iri(OM.archived)} true }}"]
    return " ".join(where)


def _by_text(query: SearchQuery, limit: int, only: list[str] | None, stats: TextStats) -> str:
    """The SELECT of a search with text: applicable items matching a query token, ranked (text_ranking)."""
    return text_ranking(_matches(query, only, stats.weights), stats.weights, limit, stats.avgdl)


def text_ranking(matches: str, weights: Sequence[Weight], limit: int, avgdl: float) -> str:
    """The text-ranking SELECT over `matches` (a pattern binding ?i ?priority ?confidence, and ?word ?idf ?f ?len
    per hit of a query token): by coordination level, then BM25 (summed over matched words, in millionths: an exact
    integer on the wire, as Virtuoso prints doubles to 6 digits; rounded as a decimal, as Oxigraph casts some whole
    doubles to the integer below), priority, confidence and id. IDFs are bound (SPARQL has no ln)."""
    if not weights:
        return "SELECT ?i ?rank WHERE { FILTER(false) }"
    n = len({w for w, _, _ in weights})
    level = f"IF(?m >= {n}, 2, IF(?m = {n - 1}, 1, 0))" if retrieval.second_level(n) else f"IF(?m >= {n}, 2, 0)"
    part = (f"?idf * ?f * {double(lexical.K1 + 1)} / (?f + {double(lexical.K1)} * "
            f"({double(1 - lexical.B)} + {double(lexical.B)} * ?len / {double(avgdl)}))")
    return (f"SELECT ?i ?rank WHERE {{ {{ SELECT ?i ?priority ?confidence (COUNT(DISTINCT ?word) AS ?m) "
            f"(SUM(?part) AS ?score) WHERE {{ {matches} BIND({part} AS ?part) }} "
            f"GROUP BY ?i ?priority ?confidence }} BIND({level} AS ?level) "
            f"BIND({iri(XSD.integer)}(ROUND({iri(XSD.decimal)}(?score) * 1000000)) AS ?rank) }} "
            f"ORDER BY DESC(?level) DESC(?rank) DESC(?priority) DESC(?confidence) ?i LIMIT {int(limit)}")


def _matches(query: SearchQuery, only: list[str] | None, weights: Sequence[Weight]) -> str:
    """Applicable live items joined with their index entries for the query tokens (?word ?tok ?idf ?f ?len).
    Two spellings of one pattern, to steer the server's planner: with an ontology, task type, failure mode or
    ids, the few applicable items come first and their tokens are filtered, each token's word and IDF bound by
    an expression (Oxigraph looks the tokens up per item, but would start from a VALUES block and scan every
    item having a token); otherwise, or when a token belongs to two words, the tokens come first."""
    by_token = {t: (w, x) for w, t, x in weights}
    if _filtered(query, only, weights):
        toks = ", ".join(string(t) for t in by_token)
        return (f"{_applicable(query, only)} GRAPH {iri(GRAPH_INDEX)} {{ ?i ?tf ?tok FILTER(?tok IN ({toks})) "
                f"{INDEX_ENTRY} }} BIND({_lookup(by_token, 0)} AS ?word) BIND({_lookup(by_token, 1)} AS ?idf)")
    rows = " ".join(f"({w} {string(t)} {double(x)})" for w, t, x in weights)
    return f"GRAPH {iri(GRAPH_INDEX)} {{ VALUES (?word ?tok ?idf) {{ {rows} }} ?i ?tf ?tok . {INDEX_ENTRY} }} " + \
        _applicable(query, only)


def _filtered(query: SearchQuery, only: list[str] | None, weights: Sequence[Weight]) -> bool:
    """Whether a text search starts from its applicable items (ids, ontology, task type or failure mode given, and
    no token in two words) rather than from the query tokens."""
    return len({t for _, t, _ in weights}) == len(weights) and bool(
        only or any(v is not None for v in (query.ontology, query.task_type, query.failure_mode, query.about_class,
                                            query.about_property)))


def _top_levels(weights: Sequence[Weight]) -> list[str]:
    """SELECTs of the items in the top coordination levels of a search of two words or more: those matching every
    word, then (when scored) those missing at most one; each word's postings read rarest word first."""
    words: dict[int, list[tuple[str, float]]] = {}
    for w, tok, x in weights:
        words.setdefault(w, []).append((tok, x))
    order = sorted(words, key=lambda w: -min(x for _, x in words[w]))
    if len(order) < 2:
        return []
    but_one = [[[w for w in order if w != out] for out in order]] if retrieval.second_level(len(order)) else []
    levels = [[order], *but_one]
    return [f"SELECT DISTINCT ?i WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ "
            + " UNION ".join(f"{{ {_every_word(words, group)} }}" for group in groups) + " } }"
            for groups in levels]


def _every_word(words: dict[int, list[tuple[str, float]]], group: list[int]) -> str:
    """Patterns binding ?i to the items having a token of every word in `group`."""
    parts = []
    for w in group:
        toks = [string(t) for t, _ in words[w]]
        parts.append(f"?i ?tf{w} {toks[0]} ." if len(toks) == 1 else f"VALUES ?tok{w} {{ {' '.join(toks)} }} "
                     f"?i ?tf{w} ?tok{w} .")
    return " ".join(parts)


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


def scored(rows: list[Row]) -> list[Scored]:
    """The (id, score) rows of a text-ranking SELECT's answer (scores in millionths)."""
    return [Scored(str(r["i"])[len(ITEM):], int(r["rank"]) / 1_000_000) for r in rows]

