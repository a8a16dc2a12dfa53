"""The SPARQL 1.1 server backend: a memory kept in any Query + Update server (Oxigraph, Virtuoso, GraphDB, ...).

Layout on the server (one memory per dataset):
- `GRAPH_ITEMS`: the memory ontology, items, links and PROV-O provenance (what embedded memory keeps in its
  quadstore);
- `GRAPH_PAYLOADS`: payloads, content-addressed (`<blob/SHA256>` with its kind, size and text); a window is cut
  on the server with SUBSTR, so no read transfers a whole payload;
- `GRAPH_INDEX`: text ranking statistics (text_index.py: FTS5's tokens and lengths, so BM25 is the embedded one) and
  an index version every item write replaces (readers keep the corpus statistics while it is unchanged);
- `GRAPH_USES`: one event node per `record_use`; a counter is the item's stored literal plus its events, so
  concurrent writers never lose a count on servers whose updates are only snapshot-isolated (Oxigraph).
Writes are SPARQL Update requests; an item is inserted only when no item with its id is stored, so adds are
idempotent by stable id. Reads inside `transaction()` see its pending writes.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from ..adapters import sparql as sparql_text
from ..errors import MemoryNotFound, UnknownItem
from ..model import Card, ItemSpec, Ref, UseCounts, Window, sha256
from ..resources import memory_ontology
from ..vocab import BLOB, ITEM, KINDS, OM
from . import retrieval, text_index
from .blobs import MAX_READ, REF_KINDS, ReadBudget, find_offsets
from .items import COUNTERS, ID
from .sparql_client import SparqlClient, iri, string, term
from .text_index import IDX

ONTOLOGY_IRI = "http://w3id.org/owl-memory"
GRAPH_ITEMS = URIRef("http://w3id.org/owl-memory/graph/items")
GRAPH_PAYLOADS = URIRef("http://w3id.org/owl-memory/graph/payloads")
GRAPH_USES = URIRef("http://w3id.org/owl-memory/graph/uses")
GRAPH_INDEX = URIRef("http://w3id.org/owl-memory/graph/index")
GRAPHS = (GRAPH_ITEMS, GRAPH_PAYLOADS, GRAPH_USES, GRAPH_INDEX)
SRV = Namespace("http://w3id.org/owl-memory/server#")  # payload and use-event terms of this backend
_KEY = re.compile(r"^sha256:[0-9a-f]{64}$")
_PLAIN = re.compile(r"[^\x00\ud800-\udfff]*")  # same rule as blobs.py: NUL or a lone surrogate -> wide form
_WIDE = "utf-32-le"
_KIND_VALUES = " ".join(iri(OM[k]) for k in KINDS)
INDEX_ENTRY = f"?i {iri(IDX.length)} ?len . ?tf {iri(IDX.frequency)} ?f"  # a hit ?i ?tf ?tok: its length, its tf


def _values(var: str, terms: Iterable) -> str:
    """A VALUES block binding ?var to escaped terms."""
    return f"VALUES ?{var} {{ {' '.join(term(t) for t in terms)} }}"


def _triples(g: Iterable) -> str:
    """Triples as SPARQL text, every term escaped."""
    return " ".join(f"{term(s)} {term(p)} {term(o)} ." for s, p, o in g)


class ServerPayloads:
    """Payloads in the server's payload graph: content-addressed, windows cut on the server.

    Args:
        client: the memory's SPARQL client.
        max_read: characters one read returns at most.
    """

    def __init__(self, client: SparqlClient, max_read: int = MAX_READ):
        self.client, self.max_read = client, max_read

    def put(self, text: str, kind: str = "content") -> Ref:
        """Store `text` (idempotent, keyed by sha256) and return its handle."""
        if kind not in REF_KINDS:
            raise ValueError(f"blob kind {kind!r} is not one of {', '.join(REF_KINDS)}")
        self.client.update(self.put_request(text, kind))
        sha = sha256(text)
        return Ref(f"sha256:{sha}", kind, len(text), sha)

    @staticmethod
    def put_request(text: str, kind: str) -> str:
        """The update that stores a payload unless its key is stored (plain text, or hex UTF-32 when it has a NUL
        or a lone surrogate, so windows stay exact)."""
        node = BLOB[sha256(text)]
        if _PLAIN.fullmatch(text):
            body = f"{iri(SRV.text)} {string(text)}"
        else:
            body = f"{iri(SRV.wide)} {string(text.encode(_WIDE, 'surrogatepass').hex())}"
        return (f"INSERT {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {iri(node)} {iri(SRV.kind)} {string(kind)} ; "
                f"{iri(SRV.size)} {len(text)} ; {body} }} }} WHERE {{ FILTER NOT EXISTS {{ "
                f"GRAPH {iri(GRAPH_PAYLOADS)} {{ {iri(node)} {iri(SRV.size)} ?size }} }} }}")

    def ref(self, key: str | Ref) -> Ref:
        """The handle stored under `key`; UnknownItem when there is none."""
        return self._window(key, 0, 0)[0]

    def read(self, key: str | Ref, start: int = 0, length: int | None = None,
             budget: ReadBudget | None = None) -> Window:
        """A window of at most max_read characters; charges `budget` when given."""
        k = key.key if isinstance(key, Ref) else str(key)
        wanted = self.max_read if length is None else max(0, int(length))
        n = min(wanted, self.max_read) if budget is None else min(budget.allow(k, wanted), self.max_read)
        ref, start, text = self._window(key, max(0, int(start)), n)
        if budget is not None:
            budget.charge(ref.key, len(text))
        return Window(text, start, start + len(text), ref.size)

    def load(self, key: str | Ref) -> str:
        """The whole payload, for library code only (graph versions, deltas); never hand it to a model."""
        ref = self.ref(key)
        return self._window(ref, 0, ref.size)[2]

    def find(self, key: str | Ref, pattern: str, limit: int = 20) -> list[int]:
        """Offsets (never text) where `pattern` occurs literally in the payload, at most `limit` of them; each
        offset is found on the server (STRBEFORE), one request per hit."""
        ref, hits, at = self.ref(key), [], 0
        node = iri(BLOB[ref.sha])
        while len(hits) < limit and pattern and at < ref.size:
            _, rows = self.client.select(
                f"SELECT ?before WHERE {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {node} {iri(SRV.text)} ?t }} "
                f"BIND(SUBSTR(?t, {at + 1}) AS ?rest) FILTER(CONTAINS(?rest, {string(pattern)})) "
                f"BIND(STRLEN(STRBEFORE(?rest, {string(pattern)})) AS ?before) }}")
            if not rows:
                if not hits and not _PLAIN.fullmatch(pattern):  # a wide payload: search it here
                    return find_offsets(self.load(ref), pattern, limit)
                break
            hits.append(at + int(rows[0]["before"]))
            at = hits[-1] + 1
        return hits or (find_offsets(self.load(ref), pattern, limit) if self._wide(ref) else [])

    def close(self) -> None:
        """Nothing of its own to release (the memory closes the client)."""

    def _wide(self, ref: Ref) -> bool:
        """Whether a payload is stored in the wide (hex UTF-32) form."""
        return self.client.ask(f"ASK {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {iri(BLOB[ref.sha])} {iri(SRV.wide)} ?h }} }}")

    def _window(self, key: str | Ref, start: int, n: int) -> tuple[Ref, int, str]:
        """(handle, clamped start, text of at most n characters from start), cut on the server in one request."""
        k = key.key if isinstance(key, Ref) else str(key)
        if not _KEY.match(k):
            raise UnknownItem(f"no payload under handle {k[:80]!r}; use a handle a tool returned")
        _, rows = self.client.select(
            f"SELECT ?kind ?size (SUBSTR(?t, {start + 1}, {n}) AS ?w) (SUBSTR(?h, {8 * start + 1}, {8 * n}) AS ?wh) "
            f"WHERE {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {iri(BLOB[k[7:]])} {iri(SRV.kind)} ?kind ; {iri(SRV.size)} ?size "
            f"OPTIONAL {{ {iri(BLOB[k[7:]])} {iri(SRV.text)} ?t }} "
            f"OPTIONAL {{ {iri(BLOB[k[7:]])} {iri(SRV.wide)} ?h }} }} }} "
            "ORDER BY ?kind LIMIT 1")
        if not rows:
            raise UnknownItem(f"no payload under handle {k[:80]!r}; use a handle a tool returned")
        row = rows[0]
        size = int(row["size"])
        text = str(row["w"]) if row.get("w") is not None else bytes.fromhex(str(row["wh"] or "")).decode(
            _WIDE, "surrogatepass")
        return Ref(k, str(row["kind"]), size, k[7:]), min(start, size), text


class SparqlServerBackend:
    """A memory in a SPARQL 1.1 server (see the module docstring for its layout).

    Args:
        url: the server's memory URL (see sparql_client.endpoints).
        max_read: characters one payload read returns at most.
        create: load the memory ontology when the server holds no memory yet; False raises MemoryNotFound.
        client: what answers the queries and updates (default: a SparqlClient for `url`; anything with its
            select / ask / construct / update / close methods, such as an in-process engine).
    """

    engine = "sparql"

    def __init__(self, url: str, max_read: int = MAX_READ, create: bool = True, client: SparqlClient | None = None):
        self.url = url
        self.client = client or SparqlClient(url)
        self.payloads = ServerPayloads(self.client, max_read)
        self._pending: list[tuple[str, object]] | None = None
        self._stats: tuple[frozenset, int, int, dict[str, int]] | None = None  # see _index_stats
        if not self.client.ask(f"ASK {{ GRAPH {iri(GRAPH_ITEMS)} {{ <{ONTOLOGY_IRI}> a {iri(OWL.Ontology)} }} }}"):
            if not create:
                raise MemoryNotFound(f"no memory at {url}; create one by writing to it (owl-memory add ... "
                                     f"--memory {url}) or copy one there with owl-memory copy")
            self._insert(memory_ontology())

    # ---- items ----
    def stored(self, ids: Iterable[str]) -> set[str]:
        """The ids among `ids` that are stored items."""
        wanted = [ITEM[i] for i in dict.fromkeys(ids) if isinstance(i, str) and ID.match(i)]
        if not wanted:
            return set()
        _, rows = self.client.select(
            f"SELECT DISTINCT ?i WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {_values('i', wanted)} ?i a ?k . "
            f"VALUES ?k {{ {_KIND_VALUES} }} }} }}")
        return {str(r["i"])[len(ITEM):] for r in rows}

    def write_items(self, items: Sequence[tuple[ItemSpec, Graph]]) -> None:
        """Store new, validated items: one update request for the payloads, then one for their triples and index
        entries (an item's rows only when no item with its id is stored yet) and a new index version (readers
        cache the ranking statistics per version). Two requests, not one: Oxigraph took ~40% longer on the items
        operation when the payload writes were pending in the same transaction."""
        if not items:
            return
        self.client.update(" ;\n".join(ServerPayloads.put_request(spec.content, "content") for spec, _ in items))
        self.client.update(f"{_insert_new(items, text_index.index_triples(items))} ;\n{_new_index_version()}")

    def describe(self, nodes: Iterable[URIRef]) -> Graph:
        """Every stored triple of the item nodes and the rdf:type triples of the other nodes (pending writes of
        an open transaction included)."""
        nodes = list(dict.fromkeys(nodes))
        items = [n for n in nodes if isinstance(n, URIRef) and str(n).startswith(str(ITEM))]
        others = [n for n in nodes if isinstance(n, URIRef) and n not in items]
        parts = []
        if items:
            parts.append(f"{{ {_values('s', items)} ?s ?p ?o }}")
        if others:
            parts.append(f"{{ {_values('s', others)} ?s a ?o BIND({iri(RDF.type)} AS ?p) }}")
        g = Graph(bind_namespaces="none")
        if parts:
            _, rows = self.client.select(
                f"SELECT ?s ?p ?o WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {' UNION '.join(parts)} }} }}")
            for r in rows:
                g.add((r["s"], r["p"], r["o"]))
        self._overlay(g, set(items), set(others))
        return self._with_uses(_declared_types(g), items)

    def cards(self, ids: Sequence[str]) -> list[Card]:
        """Search cards of stored items, in the order given."""
        if not ids:
            return []
        fields = [RDF.type, OM.title, OM.summary, OM.appliesToOntology, OM.priority, OM.confidence, OM.conflictsWith]
        _, rows = self.client.select(
            f"SELECT ?s ?p ?o WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {_values('s', [ITEM[i] for i in ids])} "
            f"{_values('p', fields)} ?s ?p ?o }} }}")
        by: dict[str, dict] = {}
        for r in rows:
            by.setdefault(str(r["s"])[len(ITEM):], {}).setdefault(r["p"], []).append(r["o"])
        return [_card(i, by.get(i, {})) for i in ids]

    def search(self, query) -> list[tuple[str, float]]:
        """Up to query.k (id, score) pairs, best first, ranked on the server (see retrieval.py's definition):
        without text by priority, confidence and id; with text by coordination level and BM25 first."""
        if not query.words:  # the definition itself, its bound values as a VALUES block of escaped terms
            bound = retrieval.bindings(query)
            _, rows = self.client.select(retrieval.defining_sparql(query, GRAPH_ITEMS, _values_row(bound)))
            return [(str(r["item"])[len(ITEM):], 0.0) for r in rows]
        stats = self._text_stats(query.words)
        rows = self._ranked_text(query, stats)
        rules = self._exceptions_of([i for i, _ in rows])
        if rules:
            found = self._ranked(query, len(rules), stats, only=sorted(rules))
            below = self._narrowing(rules, retrieval.unstated(query))
            rows = retrieval.place_exceptions(rows, [(r, rules[r[0]]) for r in found], below)
        return rows[: query.k]

    def _ranked_text(self, query, stats) -> list[tuple[str, float]]:
        """The query.k best text-ranked rows. Without applicability filters, ranking every item that matches a
        word scans most of a large memory, so the top coordination levels are ranked first: the items matching
        every query word, then those missing at most one (when _by_text scores that level); the full ranking runs
        only when they hold fewer than k applicable items. Same rows: a higher level outranks any score."""
        if _filtered(query, None, stats[0]):
            return self._ranked(query, query.k, stats)
        for candidates in _top_levels(stats[0]):
            _, found = self.client.select(candidates)
            ids = sorted(str(r["i"])[len(ITEM):] for r in found)
            rows = self._ranked(query, query.k, stats, only=ids) if ids else []
            if len(rows) >= query.k:
                return rows
        return self._ranked(query, query.k, stats)

    def _ranked(self, query, limit: int, stats, only: list[str] | None = None) -> list[tuple[str, float]]:
        """Text-ranked (id, score) rows of applicable, live items, from one SELECT on the server."""
        _, rows = self.client.select(_by_text(query, limit, only, *stats))
        return [(str(r["i"])[len(ITEM):], int(r["rank"]) / 1_000_000) for r in rows]

    def _text_stats(self, words) -> tuple[list, float]:
        """BM25 inputs of the query words: [(word number, token, idf)] and the average document length."""
        terms = text_index.query_terms(words)
        toks = sorted({t for word in terms for t in word})
        if not toks:
            return [], 1.0
        n, total, hits = self._index_stats(toks)
        weights = [(w, t, text_index.idf(n, hits[t])) for w, word in enumerate(terms) for t in dict.fromkeys(word)]
        return weights, (total / n if n else 1.0)

    def _index_stats(self, toks: list[str]) -> tuple[int, int, dict[str, int]]:
        """(items indexed, their total length, {token: items having it}), counted on the server (a scan of the
        index) once per index version: kept while no write changed the version read first (see write_items)."""
        _, rows = self.client.select(f"SELECT ?v WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ {iri(IDX.stats)} "
                                     f"{iri(IDX.version)} ?v }} }}")
        version = frozenset(str(r["v"]) for r in rows)
        if self._stats is None or self._stats[0] != version:
            _, rows = self.client.select(
                f"SELECT (COUNT(?i) AS ?n) (SUM(?len) AS ?total) WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ "
                f"?i {iri(IDX.length)} ?len }} }}")
            self._stats = (version, int(rows[0]["n"]), int(rows[0]["total"] or 0), {})
        _, n, total, known = self._stats
        missing = [t for t in toks if t not in known]
        if missing:
            _, rows = self.client.select(
                f"SELECT ?tok (COUNT(?i) AS ?hits) WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ "
                f"{_values('tok', map(Literal, missing))} ?i ?tf ?tok }} }} GROUP BY ?tok")
            known.update(dict.fromkeys(missing, 0) | {str(r["tok"]): int(r["hits"]) for r in rows})
        return n, total, {t: known[t] for t in toks}

    def _exceptions_of(self, ids: list[str]) -> dict[str, str]:
        """{exception id: rule id} for the exceptions of the given rules."""
        if not ids:
            return {}
        _, rows = self.client.select(
            f"SELECT ?rule ?e WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {_values('rule', [ITEM[i] for i in ids])} "
            f"?rule {iri(OM.hasException)} ?e }} }}")
        return {str(r["e"])[len(ITEM):]: str(r["rule"])[len(ITEM):] for r in rows}

    def _narrowing(self, rules: dict[str, str], properties: tuple) -> set[str]:
        """Those exceptions (of {exception id: rule id}) with a value of one of `properties` their rule lacks."""
        if not rules or not properties:
            return set()
        pairs = " ".join(f"({iri(ITEM[e])} {iri(ITEM[r])})" for e, r in rules.items())
        _, rows = self.client.select(
            f"SELECT DISTINCT ?e WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ VALUES (?e ?rule) {{ {pairs} }} "
            f"{_values('p', list(properties))} ?e ?p ?v FILTER NOT EXISTS {{ ?rule ?p ?v }} }} }}")
        return {str(r["e"])[len(ITEM):] for r in rows}

    def with_signature(self, signature: str) -> list[str]:
        """Ids of items carrying om:violationSignature `signature`, neither superseded nor archived."""
        _, rows = self.client.select(
            f"SELECT ?i WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ ?i {iri(OM.violationSignature)} {string(signature)} "
            f"FILTER NOT EXISTS {{ ?newer {iri(OM.supersedes)} ?i }} "
            f"FILTER NOT EXISTS {{ ?i {iri(OM.archived)} true }} }} }} ORDER BY ?i")
        return [str(r["i"])[len(ITEM):] for r in rows]

    def count(self) -> int:
        """Number of stored items (superseded and archived ones included)."""
        _, rows = self.client.select(
            f"SELECT (COUNT(DISTINCT ?i) AS ?n) WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ ?i a ?k . "
            f"VALUES ?k {{ {_KIND_VALUES} }} }} }}")
        return int(rows[0]["n"])

    # ---- updates ----
    def count_use(self, id: str, success: bool | None) -> UseCounts:
        """Record one use as its own event node (never lost under concurrent writers); returns the counters."""
        event = URIRef(f"urn:uuid:{uuid.uuid4()}")
        g = [(event, SRV.usesItem, ITEM[id])]
        if success is not None:
            g.append((event, SRV.succeeded, Literal(bool(success))))
        self.client.update(f"INSERT DATA {{ GRAPH {iri(GRAPH_USES)} {{ {_triples(g)} }} }}")
        return self.counters(id)

    def counters(self, id: str) -> UseCounts:
        """The counters of an item: stored literal plus recorded events."""
        g = self.describe([ITEM[id]])
        return UseCounts(**{k: int(g.value(ITEM[id], p) or 0) for k, p in COUNTERS.items()})

    def add_triples(self, g: Graph) -> None:
        """Insert the triples of `g`; present ones are left as they are (buffered inside a transaction)."""
        if len(g):
            self._send("add", g)

    def remove_triples(self, subject: URIRef, predicate: URIRef, obj=None) -> None:
        """Delete (subject, predicate, obj), or every value of (subject, predicate) when obj is None."""
        self._send("remove", (subject, predicate, obj))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Buffer the writes inside the block and send them as one update request (one server transaction);
        on any error nothing is sent."""
        if self._pending is not None:
            yield
            return
        self._pending = []
        try:
            yield
            ops, self._pending = self._pending, None
            if ops:
                self.client.update(" ;\n".join(_operation(kind, arg) for kind, arg in ops))
        finally:
            self._pending = None

    def others_changes(self) -> int | None:
        """None: a server does not say whether another client wrote, so every change is assumed
        (Backend.others_changes)."""
        return None

    # ---- whole memory ----
    def integrity(self) -> list[str]:
        """Nothing: a SPARQL server checks its own storage (Backend.integrity)."""
        return []

    def sparql(self, query: str, bindings: dict, limit: int) -> tuple[list[str], list[list], bool]:
        """Run a checked, read-only query on the server over the items graph only (payloads are out of reach):
        (column names, up to `limit` rows of rdflib terms or None, truncated?); ASK gives (["ask"], [[bool]]).
        Bindings travel as a trailing VALUES block of escaped terms."""
        text = query
        if bindings:
            names = [str(n) for n in bindings]
            row = " ".join(term(bindings[n]) for n in bindings)
            text += f"\nVALUES ({' '.join('?' + n for n in names)}) {{ ({row}) }}"
        graphs = {"default-graph-uri": str(GRAPH_ITEMS), "named-graph-uri": str(GRAPH_ITEMS)}
        if sparql_text.form(sparql_text.parse(query)) == "ASK":
            return ["ask"], [[self.client.ask(text, graphs)]], False
        columns, rows = self.client.select(text, graphs)
        return columns, [[r[c] for c in columns] for r in rows[:limit]], len(rows) > limit

    def all_triples(self) -> Graph:
        """The whole memory (ontology, items, links, provenance) with counters that include recorded uses."""
        g = self.client.construct(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ ?s ?p ?o }} }}")
        items = {s for s, _, k in g.triples((None, RDF.type, None)) if k in {OM[x] for x in KINDS}}
        return self._with_uses(_declared_types(g), items)

    def close(self) -> None:
        """Release the connection."""
        self.client.close()

    # ---- helpers ----
    def _insert(self, g: Graph) -> None:
        """Insert triples into the items graph now (a template, not INSERT DATA: Virtuoso refuses blank nodes in
        INSERT DATA, and the ontology has some)."""
        self.client.update(f"INSERT {{ GRAPH {iri(GRAPH_ITEMS)} {{ {_triples(g)} }} }} WHERE {{}}")

    def _send(self, kind: str, arg) -> None:
        """Send one write now, or buffer it when a transaction is open."""
        if self._pending is None:
            self.client.update(_operation(kind, arg))
        else:
            self._pending.append((kind, arg))

    def _overlay(self, g: Graph, items: set, others: set) -> None:
        """Apply an open transaction's pending writes to a described graph."""
        for kind, arg in self._pending or ():
            if kind == "add":
                for s, p, o in arg:
                    if s in items or (s in others and p == RDF.type):
                        g.add((s, p, o))
            else:
                g.remove(arg)

    def _with_uses(self, g: Graph, items) -> Graph:
        """Add each item's recorded use events to its counter literals in `g` (items: the item nodes)."""
        items = [i for i in items if (i, RDF.type, None) in g]
        if not items:
            return g
        _, rows = self.client.select(
            f"SELECT ?i (COUNT(?e) AS ?uses) (SUM(?win) AS ?wins) (SUM(?loss) AS ?losses) WHERE {{ "
            f"GRAPH {iri(GRAPH_USES)} {{ {_values('i', items)} ?e {iri(SRV.usesItem)} ?i "
            f"OPTIONAL {{ ?e {iri(SRV.succeeded)} ?ok }} }} BIND(IF(BOUND(?ok) && ?ok, 1, 0) AS ?win) "
            f"BIND(IF(BOUND(?ok) && !?ok, 1, 0) AS ?loss) }} GROUP BY ?i")
        for r in rows:
            added = {OM.useCount: int(r["uses"]), OM.successCount: int(r["wins"] or 0),
                     OM.failureCount: int(r["losses"] or 0)}
            for p, extra in added.items():
                base = int(g.value(r["i"], p) or 0)
                g.set((r["i"], p, Literal(base + extra, datatype=XSD.nonNegativeInteger)))
        return g


@cache
def _integer_ranges() -> dict:
    """{property: datatype} for memory-ontology properties whose range is a derived integer type."""
    derived = {XSD.nonNegativeInteger, XSD.positiveInteger, XSD.nonPositiveInteger, XSD.negativeInteger, XSD.long,
               XSD.int, XSD.short, XSD.byte, XSD.unsignedLong, XSD.unsignedInt, XSD.unsignedShort, XSD.unsignedByte}
    return {p: r for p, r in memory_ontology().subject_objects(RDFS.range) if r in derived}


def _declared_types(g: Graph) -> Graph:
    """Give xsd:integer values of memory-ontology properties back their declared integer type (servers such as
    Oxigraph store every derived integer type as xsd:integer)."""
    for p, dt in _integer_ranges().items():
        for s, o in list(g.subject_objects(p)):
            if isinstance(o, Literal) and o.datatype == XSD.integer:
                g.remove((s, p, o))
                g.add((s, p, Literal(str(o), datatype=dt)))
    return g


def _applicable(query, only: list[str] | None) -> str:
    """The items graph's patterns for applicable, live items (see applicable_patterns)."""
    return f"GRAPH {iri(GRAPH_ITEMS)} {{ {applicable_patterns(query, only)} }}"


def applicable_patterns(query, only: list[str] | None) -> str:
    """Patterns that hold for applicable, live items (kind, ontology, task type, failure mode; not superseded, not
    archived), binding ?i, ?priority and ?confidence; every value escaped."""
    where = [_values("i", [ITEM[i] for i in only])] if only else []
    kinds = ", ".join(term(k) for k in query.kinds or tuple(OM[k] for k in KINDS))
    where += [f"?i a ?kind FILTER(?kind IN ({kinds}))"]  # not VALUES: Oxigraph would start from every item
    for p, o in ((OM.appliesToOntology, query.ontology), (OM.appliesToTaskType, query.task_type),
                 (OM.preventsFailureMode, query.failure_mode)):
        if o is not None:
            where.append(f"?i {iri(p)} {term(o)} .")
    where += [f"?i {iri(OM.priority)} ?priority ; {iri(OM.confidence)} ?confidence .",
              f"FILTER NOT EXISTS {{ ?newer {iri(OM.supersedes)} ?i }}",
              f"FILTER NOT EXISTS {{ ?i {iri(OM.archived)} true }}"]
    return " ".join(where)


def _by_text(query, limit: int, only: list[str] | None, weights: list, avgdl: float) -> str:
    """The SELECT of a search with text: applicable items matching a query token, ranked (text_ranking)."""
    return text_ranking(_matches(query, only, weights), weights, limit, avgdl)


def text_ranking(matches: str, weights: list, limit: int, avgdl: float) -> str:
    """The text-ranking SELECT over `matches` (a pattern binding ?i ?priority ?confidence, and ?word ?idf ?f ?len
    per hit of a query token): by coordination level, then BM25 (summed over matched words, in millionths: an exact
    integer on the wire, as Virtuoso prints doubles to 6 digits; rounded as a decimal, as Oxigraph casts some whole
    doubles to the integer below), priority, confidence and id. IDFs are bound (SPARQL has no ln)."""
    if not weights:
        return "SELECT ?i ?rank WHERE { FILTER(false) }"
    n = len({w for w, _, _ in weights})
    level = f"IF(?m >= {n}, 2, IF(?m = {n - 1}, 1, 0))" if retrieval.second_level(n) else f"IF(?m >= {n}, 2, 0)"
    part = (f"?idf * ?f * {double(text_index.K1 + 1)} / (?f + {double(text_index.K1)} * "
            f"({double(1 - text_index.B)} + {double(text_index.B)} * ?len / {double(avgdl)}))")
    return (f"SELECT ?i ?rank WHERE {{ {{ SELECT ?i ?priority ?confidence (COUNT(DISTINCT ?word) AS ?m) "
            f"(SUM(?part) AS ?score) WHERE {{ {matches} BIND({part} AS ?part) }} "
            f"GROUP BY ?i ?priority ?confidence }} BIND({level} AS ?level) "
            f"BIND({iri(XSD.integer)}(ROUND({iri(XSD.decimal)}(?score) * 1000000)) AS ?rank) }} "
            f"ORDER BY DESC(?level) DESC(?rank) DESC(?priority) DESC(?confidence) ?i LIMIT {int(limit)}")


def _matches(query, only: list[str] | None, weights: list) -> str:
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


def _filtered(query, only: list[str] | None, weights: list) -> bool:
    """Whether a text search starts from its applicable items (ids, ontology, task type or failure mode given, and
    no token in two words) rather than from the query tokens."""
    return len({t for _, t, _ in weights}) == len(weights) and bool(
        only or query.ontology is not None or query.task_type is not None or query.failure_mode is not None)


def _top_levels(weights: list) -> list[str]:
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


def _every_word(words: dict, group: list[int]) -> str:
    """Patterns binding ?i to the items having a token of every word in `group`."""
    parts = []
    for w in group:
        toks = [string(t) for t, _ in words[w]]
        parts.append(f"?i ?tf{w} {toks[0]} ." if len(toks) == 1 else f"VALUES ?tok{w} {{ {' '.join(toks)} }} "
                     f"?i ?tf{w} ?tok{w} .")
    return " ".join(parts)


def _lookup(by_token: dict, field: int) -> str:
    """An expression giving ?tok's word number (field 0) or IDF (field 1): nested IFs over the query tokens."""
    expr = "0"
    for tok, values in reversed(by_token.items()):
        value = values[field] if field == 0 else double(values[field])
        expr = f"IF(?tok = {string(tok)}, {value}, {expr})"
    return expr


def double(x: float) -> str:
    """A float as an xsd:double SPARQL literal."""
    return format(float(x), ".17e")


def _values_row(bound: dict) -> str:
    """A one-row VALUES block binding the given variables to escaped terms ("" when there are none)."""
    if not bound:
        return ""
    return f" VALUES ({' '.join('?' + n for n in bound)}) {{ ({' '.join(term(v) for v in bound.values())}) }}"


def _insert_new(items: Sequence[tuple[ItemSpec, Graph]], index: list[list[tuple]]) -> str:
    """The update operation inserting each item's triples (items graph) and index entries (index graph) unless an
    item with its id is stored; each item's IRI and each IRI term is escaped once per batch."""
    known: dict[URIRef, str] = {}

    def text(t) -> str:
        """A term as SPARQL text, IRIs looked up in this batch's cache."""
        if type(t) is URIRef:
            return known[t] if t in known else known.setdefault(t, iri(t))
        return term(t)

    graphs = (iri(GRAPH_ITEMS), iri(GRAPH_INDEX))
    rows = []
    for (spec, g), extra in zip(items, index, strict=True):
        item = text(ITEM[spec.id])
        for graph, triples in zip(graphs, (g, extra), strict=True):
            rows += [f"({item} {graph} {text(a)} {text(p)} {text(o)})" for a, p, o in triples]
    return (f"INSERT {{ GRAPH ?g {{ ?s ?p ?o }} }} WHERE {{ VALUES (?item ?g ?s ?p ?o) {{ {' '.join(rows)} }} "
            f"OPTIONAL {{ GRAPH {iri(GRAPH_ITEMS)} {{ ?item a ?stored }} }} FILTER(!BOUND(?stored)) }}")


def _new_index_version() -> str:
    """The update operations replacing the index version with a fresh one (concurrent writers may leave several
    values: any write still changes the set a reader compares)."""
    node = f"{iri(IDX.stats)} {iri(IDX.version)}"
    return (f"DELETE WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ {node} ?v }} }} ;\n"
            f"INSERT DATA {{ GRAPH {iri(GRAPH_INDEX)} {{ {node} {string(str(uuid.uuid4()))} }} }}")


def _operation(kind: str, arg) -> str:
    """One update operation on the items graph: insert a graph's triples, or delete a (s, p[, o]) pattern."""
    if kind == "add":
        return f"INSERT DATA {{ GRAPH {iri(GRAPH_ITEMS)} {{ {_triples(arg)} }} }}"
    s, p, o = arg
    obj = "?o" if o is None else term(o)
    return f"DELETE WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {term(s)} {term(p)} {obj} }} }}"


def _card(i: str, v: dict) -> Card:
    """The search card of one item from its values by predicate."""
    kinds = [str(t).rsplit("#", 1)[-1] for t in v.get(RDF.type, [])]
    return Card(i, next((k for k in kinds if k in KINDS), None), str(v[OM.title][0]), str(v[OM.summary][0]),
                tuple(sorted(str(o) for o in v.get(OM.appliesToOntology, []))),
                int(v[OM.priority][0]) if OM.priority in v else 0, float(v[OM.confidence][0]),
                tuple(sorted(str(o)[len(ITEM):] for o in v.get(OM.conflictsWith, []))))
