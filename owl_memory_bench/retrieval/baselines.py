"""The retrieval benchmark's baselines: the defining SELECT on rdflib (with the SPARQL server backend's own text
search, run by rdflib in process) and on owlready2's native SPARQL engine over the memory's quadstore."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path

from rdflib import Dataset, Literal
from rdflib.namespace import XSD
from rdflib.plugins.sparql.operators import default_cast, register_custom_function

from owl_memory import ItemSpec
from owl_memory.adapters.owlready2 import Quadstore
from owl_memory.store import retrieval
from owl_memory.store.server.client import string
from owl_memory.store.server.layout import GRAPH_INDEX, GRAPH_ITEMS
from owl_memory.store.server.postings import index_triples
from owl_memory.store.server.ranking import (
    INDEX_ENTRY,
    ServerSearch,
    TextStats,
    Top,
    applicable_patterns,
    double,
)
from owl_memory.vocab import ITEM, KINDS as ALL_KINDS, OM

BASELINES = ("rdflib", "owlready2")
_PREFIX = "PREFIX om: <http://w3id.org/owl-memory#>\n"


def native_sparql(q: retrieval.SearchQuery) -> tuple[str, list[str]]:
    """The defining SELECT in owlready2's SPARQL dialect (``??n`` parameters; the rule's applicability as an
    OPTIONAL, since owlready2 cannot compile EXISTS inside BIND) and its parameter IRIs in order."""
    kinds = ", ".join(f"<{k}>" for k in (q.kinds or tuple(OM[k] for k in ALL_KINDS)))
    params = [v for v in (q.ontology, q.task_type, q.failure_mode) if v is not None]
    props = [p for p, v in zip(retrieval.APPLICABILITY, (q.ontology, q.task_type, q.failure_mode), strict=True) if v]
    links = "".join(f" ; <{p}> ??{n + 1}" for n, p in enumerate(props))
    open_props = ", ".join(f"<{p}>" for p in retrieval.unstated(q))

    def applies(v: str) -> str:
        """`v` is of one of the kinds, has every parameter value, is neither superseded nor archived."""
        return (f"?{v} a ?{v}Kind{links} . FILTER(?{v}Kind IN ({kinds})) "
                f"FILTER NOT EXISTS {{ ?{v}Newer om:supersedes ?{v} }} FILTER NOT EXISTS {{ ?{v} om:archived true }}")

    narrow = (f"OPTIONAL {{ ?item ?narrowedBy ?narrowValue . FILTER(?narrowedBy IN ({open_props})) "
              "FILTER NOT EXISTS { ?rule ?narrowedBy ?narrowValue } }\n" if open_props else "")
    return (f"{_PREFIX}SELECT DISTINCT ?item WHERE {{\n ?item om:priority ?priority ; om:confidence ?confidence . "
            f"{applies('item')}\n OPTIONAL {{ ?rule om:hasException ?item ; om:priority ?rulePriority ; "
            f"om:confidence ?ruleConfidence . {applies('rule')} }}\n {narrow}"
            " BIND(IF(BOUND(?rule), ?rulePriority, ?priority) AS ?groupPriority)\n"
            " BIND(IF(BOUND(?rule), ?ruleConfidence, ?confidence) AS ?groupConfidence)\n"
            " BIND(IF(BOUND(?rule), STR(?rule), STR(?item)) AS ?group)\n"
            f" BIND(IF(BOUND(?rule), {'IF(BOUND(?narrowValue), 2, 0)' if open_props else '0'}, 1) AS ?slot)\n}}\n"
            "ORDER BY DESC(?groupPriority) DESC(?groupConfidence) ?group ?slot DESC(?priority) DESC(?confidence) "
            f"STR(?item) LIMIT {q.k}"), [str(v) for v in params]


class Native:
    """The defining SELECT on owlready2's native SPARQL engine, over the open memory's own quadstore."""

    def __init__(self, store: Quadstore):
        """Wrap an embedded memory's quadstore (`Memory.backend.quadstore`); queries are prepared once per text."""
        self.store, self.prepared = store, {}

    def search(self, shape: str, kw: dict) -> list[str]:
        """Item ids of one query without text, best first."""
        text, params = native_sparql(retrieval.search_query(**kw))
        if text not in self.prepared:
            self.prepared[text] = self.store.prepare_sparql(text)
        rows = self.prepared[text].execute_raw([self.store.storid(v) for v in params])
        return [str(self.store.iri(r[0]))[len(str(ITEM)):] for r in rows]


class Endpoint:
    """The SPARQL client methods the server's search calls (client.SparqlClient's), answered in process by
    rdflib over a Dataset: the server backend's own queries, with no HTTP and no server."""

    def __init__(self, ds: Dataset):
        """Answer queries and updates over `ds` (with xsd:decimal casting doubles as SPARQL does)."""
        self.ds = ds
        register_custom_function(XSD.decimal, _decimal_cast, raw=True, override=True)

    def select(self, query: str, graphs: dict | None = None) -> tuple[list[str], list[dict]]:
        """(variable names, rows as {name: term}) of a SELECT."""
        result = self.ds.query(query)
        names = [str(v) for v in result.vars]
        return names, [dict(zip(names, row, strict=True)) for row in result]

    def ask(self, query: str, graphs: dict | None = None) -> bool:
        """The boolean of an ASK."""
        return bool(self.ds.query(query).askAnswer)

    def update(self, request: str) -> None:
        """Run a SPARQL Update request."""
        self.ds.update(request)

    def close(self) -> None:
        """Nothing to close."""


class RdflibSearch(ServerSearch):
    """The SPARQL server backend's text search (its statistics, exception queries and ranking SELECT: same tokens,
    BM25 and order) run by rdflib in process, over every posting of the query tokens (no prefixes: rdflib reads
    them all as fast). The ranking SELECT's matches are spelled as a UNION of one flat pattern per query token (the
    token's hits, then their applicability): rdflib evaluates a flat pattern by bound variables, and joins the
    server's spelling (two GRAPH groups) as a cross product: 900 x 1,000 compatibility checks for one query at 1k
    items."""

    def ranked_text(self, query: retrieval.SearchQuery, stats: TextStats, terms: list[tuple[str, ...]]) -> Top:
        """The text-ranked rows of applicable, live items, from one SELECT on rdflib."""
        hits = " UNION ".join(
            f"{{ ?i ?tf {string(tok)} . {INDEX_ENTRY} . {applicable_patterns(query)} BIND({w} AS ?word) "
            f"BIND({double(x)} AS ?idf) }}" for w, tok, x in stats.weights)
        return self.top(query, stats, f"{{ {hits} }}")


def _decimal_cast(e, ctx) -> Literal:
    """xsd:decimal(x) as SPARQL casts a double (rdflib 7.6 refuses one whose lexical form has an exponent, such as a
    BM25 score of 9.9e-07); every other cast as rdflib does it. rdflib hands a cast its argument evaluated."""
    x = e.expr[0] if len(e.expr) == 1 else None
    if isinstance(x, Literal) and x.datatype in (XSD.double, XSD.float):
        return Literal(Decimal(repr(float(x.toPython()))), datatype=XSD.decimal)
    return default_cast(e, ctx)


def rdflib_dataset(nt: Path, specs: list[ItemSpec]) -> Dataset:
    """The memory as a SPARQL server holds it, in an rdflib Dataset whose default graph is the union of its named
    graphs: the exported triples (items graph) and the text index of the items (index graph, server/ranking.py)."""
    ds = Dataset(default_union=True)
    items = ds.graph(GRAPH_ITEMS)
    items.parse(str(nt), format="nt")
    index = ds.graph(GRAPH_INDEX)
    own = [(spec, [(ITEM[spec.id], p, o) for p in retrieval.KEYED for o in items.objects(ITEM[spec.id], p)])
           for spec in specs]
    for triples in index_triples(own):
        for t in triples:
            index.add(t)
    return ds


class Baseline:
    """rdflib over the same triples in memory: the defining SELECT for shapes without text (exactly
    retrieval.run_defining, over the items graph), the SPARQL server backend's text search for text shapes
    (RdflibSearch); values bound by initBindings or escaped."""

    def __init__(self, ds: Dataset):
        """Wrap the Dataset of rdflib_dataset."""
        self.graph, self.server = ds.graph(GRAPH_ITEMS), RdflibSearch(Endpoint(ds))

    def search(self, shape: str, kw: dict) -> list[str]:
        """Item ids of one query, best first."""
        # the generated memory stores one spelling of each ontology: the definition's exact-term form (same rows),
        # the one a server runs then (the general form compares every stored ontology IRI without # or /)
        q = replace(retrieval.search_query(**kw), stored_spelling=True)
        if "text" not in shape:
            return retrieval.run_defining(self.graph, q)
        return [r.id for r in self.server.search(q)]


