"""The SPARQL 1.1 server backend: a memory kept in any Query + Update server (Oxigraph, Virtuoso, GraphDB, ...).

The memory's named graphs are in layout.py, its payloads in payloads.py, its searches in ranking.py. Writes are SPARQL
Update requests; an item is inserted only when no item with its id is stored, so adds are idempotent by stable id.
Reads inside `transaction()` see its pending writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD
from rdflib.term import Identifier, Node

from ...adapters import sparql as sparql_text
from ...errors import MemoryNotFound
from ...model import Card, ItemSpec, UseCounts
from ...resources import memory_ontology
from ...vocab import ITEM, KINDS, OM
from ..backend import Backend, TermRows
from ..blobs import MAX_READ
from ..export import TBOX_IRI
from ..items import COUNTERS, ID, Rows, graph_of, kind_of
from ..retrieval import KEYED, Scored, SearchQuery
from ..sparql_terms import Checked, integer
from .client import SparqlClient, iri, string, term, values_block
from .corpus import new_version
from .layout import GRAPH_INDEX, GRAPH_ITEMS, GRAPH_USES, IDX, SRV
from .payloads import ServerPayloads
from .postings import index_triples
from .ranking import ServerSearch

_KIND_VALUES = " ".join(iri(OM[k]) for k in KINDS)
_KEYED, _STRING = {str(p) for p in KEYED}, str(XSD.string)
Pattern = tuple[URIRef, URIRef, Identifier | None]  # (s, p, o) to delete; o None: every value of (s, p)


class SparqlServerBackend(Backend):
    """A memory in a SPARQL 1.1 server (its named graphs: layout.py).

    Args:
        url: the server's memory URL (see client.endpoints).
        max_read: characters one payload read returns at most.
        create: load the memory ontology when the server holds no memory yet; False raises MemoryNotFound.
        client: what answers the queries and updates (default: a SparqlClient for `url`; anything with its
            select / ask / construct / update / close methods, such as an in-process engine).
    """

    engine = "sparql"

    def __init__(self, url: str, max_read: int = MAX_READ, create: bool = True, client: SparqlClient | None = None):
        self.url = self.location = url
        self.client = client or SparqlClient(url)
        self.payloads = ServerPayloads(self.client, max_read)
        self._pending: list[Graph | Pattern] | None = None  # an open transaction's writes: graphs to add, patterns
        self.searcher = ServerSearch(self.client)
        if not self.client.ask(f"ASK {{ GRAPH {iri(GRAPH_ITEMS)} {{ <{TBOX_IRI}> a {iri(OWL.Ontology)} }} }}"):
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
            f"SELECT DISTINCT ?i WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {values_block('i', wanted)} ?i a ?k . "
            f"VALUES ?k {{ {_KIND_VALUES} }} }} }}")
        return {str(r["i"])[len(ITEM):] for r in rows}

    def write_items(self, items: Sequence[tuple[ItemSpec, Rows]]) -> None:
        """Store new, validated items (the caller, under `transaction()`, left out stored ones): to a server with a
        Graph Store Protocol endpoint, one POST of N-Quads (payloads, triples, index entries) of the items still not
        stored when it is sent, and a new index version (readers cache the ranking statistics per version); else
        one update request for the payloads, then one for their triples and index entries (an item's rows only when
        no item with its id is stored yet)."""
        if not items:
            return
        keyed = [(spec, graph_of(r for r in rows if r[1] in _KEYED)) for spec, rows in items]  # what the index reads
        index = index_triples(keyed)
        if self.client.ends.store is None:
            self.client.update(" ;\n".join(ServerPayloads.put_request(spec.content, "content") for spec, _ in items))
            graphs = [(spec, graph_of(rows)) for spec, rows in items]
            self.client.update(f"{_insert_new(graphs, index)} ;\n{new_version()}")
            return
        quads = [ServerPayloads.put_quads(spec.content, "content") + own
                 for (spec, _), own in zip(items, _quads(items, index), strict=True)]
        # items another writer stored since the caller looked stay out (a POST adds whatever it holds: this check
        # leaves a window of one request, where the update's condition leaves none)
        meanwhile = self.stored(spec.id for spec, _ in items)
        # the batch lands with a new index version value beside the old ones (readers compare the set of values), so
        # no reader keeps statistics without it even if the update collapsing the values never runs
        fresh = f"{iri(IDX.stats)} {iri(IDX.version)} {string(str(uuid.uuid4()))} {iri(GRAPH_INDEX)} .\n"
        self.client.add_quads("".join(q for (spec, _), q in zip(items, quads, strict=True)
                                      if spec.id not in meanwhile) + fresh)
        self.client.update(new_version())

    def describe(self, nodes: Iterable[URIRef]) -> Graph:
        """Every stored triple of the item nodes and the rdf:type triples of the other nodes (pending writes of
        an open transaction included)."""
        nodes = list(dict.fromkeys(nodes))
        items = [n for n in nodes if isinstance(n, URIRef) and str(n).startswith(str(ITEM))]
        others = [n for n in nodes if isinstance(n, URIRef) and n not in items]
        parts = []
        if items:
            parts.append(f"{{ {values_block('s', items)} ?s ?p ?o }}")
        if others:
            parts.append(f"{{ {values_block('s', others)} ?s a ?o BIND({iri(RDF.type)} AS ?p) }}")
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
        fields = [RDF.type, OM.title, OM.summary, OM.appliesToOntology, OM.priority, OM.confidence, OM.conflictsWith,
                  OM.aboutClass, OM.aboutProperty]
        _, rows = self.client.select(
            f"SELECT ?s ?p ?o WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {values_block('s', [ITEM[i] for i in ids])} "
            f"{values_block('p', fields)} ?s ?p ?o }} }}")
        by: dict[str, dict[Node, list[Node]]] = {}
        for r in rows:
            by.setdefault(str(r["s"])[len(ITEM):], {}).setdefault(r["p"], []).append(r["o"])
        return [_card(i, by.get(i, {})) for i in ids]

    def search(self, query: SearchQuery) -> list[Scored]:
        """Up to query.k (id, score) rows, best first, ranked on the server (ranking.py)."""
        return self.searcher.search(query)

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
        g: list[tuple[URIRef, URIRef, Identifier]] = [(event, SRV.usesItem, ITEM[id])]
        if success is not None:
            g.append((event, SRV.succeeded, Literal(bool(success))))
        self.client.update(f"INSERT DATA {{ GRAPH {iri(GRAPH_USES)} {{ {_triples(g)} }} }}")
        return self.counters(id)

    def counters(self, id: str) -> UseCounts:
        """The counters of an item: stored literal plus recorded events."""
        g = self.describe([ITEM[id]])
        return UseCounts(**{k: integer(g.value(ITEM[id], p)) for k, p in COUNTERS.items()})

    def add_triples(self, g: Graph) -> None:
        """Insert the triples of `g`; present ones are left as they are (buffered inside a transaction)."""
        if len(g):
            self._send(g)

    def remove_triples(self, subject: URIRef, predicate: URIRef, obj: Identifier | None = None) -> None:
        """Delete (subject, predicate, obj), or every value of (subject, predicate) when obj is None."""
        self._send((subject, predicate, obj))

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
                self.client.update(" ;\n".join([*map(_operation, ops), new_version()]))
        finally:
            self._pending = None

    # ---- whole memory ----
    def sparql(self, query: Checked, bindings: Mapping[str, Identifier], limit: int) -> TermRows:
        """Run a checked, read-only query on the server over the items graph only (payloads are out of reach).
        Bindings travel as a trailing VALUES block of escaped terms."""
        text = query.text
        if bindings:
            names = [str(n) for n in bindings]
            row = " ".join(term(bindings[n]) for n in bindings)
            text += f"\nVALUES ({' '.join('?' + n for n in names)}) {{ ({row}) }}"
        graphs = {"default-graph-uri": str(GRAPH_ITEMS), "named-graph-uri": str(GRAPH_ITEMS)}
        if sparql_text.form(query.parsed) == "ASK":
            return TermRows(("ask",), ((self.client.ask(text, graphs),),), False)
        columns, rows = self.client.select(text, graphs)
        cells = tuple(tuple(r.get(c) for c in columns) for r in rows[:limit])
        return TermRows(tuple(columns), cells, len(rows) > limit)

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

    def _send(self, op: Graph | Pattern) -> None:
        """Send one write (a graph to add, a pattern to delete) now with a new memory version (searches cache what
        they read of the memory per version), or buffer it when a transaction is open."""
        if self._pending is None:
            self.client.update(f"{_operation(op)} ;\n{new_version()}")
        else:
            self._pending.append(op)

    def _overlay(self, g: Graph, items: set[URIRef], others: set[URIRef]) -> None:
        """Apply an open transaction's pending writes to a described graph."""
        for op in self._pending or ():
            if isinstance(op, Graph):
                for s, p, o in op:
                    if s in items or (s in others and p == RDF.type):
                        g.add((s, p, o))
            else:
                g.remove(op)

    def _with_uses(self, g: Graph, items: Iterable[Node]) -> Graph:
        """Add each item's recorded use events to its counter literals in `g` (items: the item nodes)."""
        items = [i for i in items if (i, RDF.type, None) in g]
        if not items:
            return g
        _, rows = self.client.select(
            f"SELECT ?i (COUNT(?e) AS ?uses) (SUM(?win) AS ?wins) (SUM(?loss) AS ?losses) WHERE {{ "
            f"GRAPH {iri(GRAPH_USES)} {{ {values_block('i', items)} ?e {iri(SRV.usesItem)} ?i "
            f"OPTIONAL {{ ?e {iri(SRV.succeeded)} ?ok }} }} BIND(IF(BOUND(?ok) && ?ok, 1, 0) AS ?win) "
            f"BIND(IF(BOUND(?ok) && !?ok, 1, 0) AS ?loss) }} GROUP BY ?i")
        for r in rows:
            added = {OM.useCount: int(r["uses"]), OM.successCount: int(r.get("wins") or 0),
                     OM.failureCount: int(r.get("losses") or 0)}
            for p, extra in added.items():
                base = integer(g.value(r["i"], p))
                g.set((r["i"], p, Literal(base + extra, datatype=XSD.nonNegativeInteger)))
        return g


def _triples(g: Iterable[tuple[Node, Node, Node]]) -> str:
    """Triples as SPARQL text, every term escaped."""
    return " ".join(f"{term(s)} {term(p)} {term(o)} ." for s, p, o in g)


@cache
def _integer_ranges() -> dict[Node, URIRef]:
    """{property: datatype} for memory-ontology properties whose range is a derived integer type."""
    derived = {XSD.nonNegativeInteger, XSD.positiveInteger, XSD.nonPositiveInteger, XSD.negativeInteger, XSD.long,
               XSD.int, XSD.short, XSD.byte, XSD.unsignedLong, XSD.unsignedInt, XSD.unsignedShort, XSD.unsignedByte}
    return {p: r for p, r in memory_ontology().subject_objects(RDFS.range) if isinstance(r, URIRef) and r in derived}


def _declared_types(g: Graph) -> Graph:
    """Give xsd:integer values of memory-ontology properties back their declared integer type (servers such as
    Oxigraph store every derived integer type as xsd:integer)."""
    for p, dt in _integer_ranges().items():
        for s, o in list(g.subject_objects(p)):
            if isinstance(o, Literal) and o.datatype == XSD.integer:
                g.remove((s, p, o))
                g.add((s, p, Literal(str(o), datatype=dt)))
    return g


def _quads(items: Sequence[tuple[ItemSpec, Rows]], index: list[list[tuple[URIRef, URIRef, Identifier]]]) -> list[str]:
    """Each item's N-Quads: its rows (items graph) and index entries (index graph); each term spelled once per
    batch."""
    known: dict[str, str] = {}
    spelled: dict[Identifier, str] = {}  # index terms (tokens, tf predicates) repeat a lot

    def text(value: str) -> str:
        """An IRI as N-Quads text, looked up in this batch's cache."""
        return known[value] if value in known else known.setdefault(value, iri(value))

    def node(t: Identifier) -> str:
        """An index term as N-Quads text, spelled once per batch."""
        return spelled[t] if t in spelled else spelled.setdefault(t, term(t))

    graph, indexed, out = iri(GRAPH_ITEMS), iri(GRAPH_INDEX), []
    for (_, rows), extra in zip(items, index, strict=True):
        lines = []
        for s, p, o, d in rows:
            obj = text(str(o)) if d is None else string(str(o)) if d == _STRING else f"{string(str(o))}^^{text(d)}"
            lines.append(f"{text(s)} {text(p)} {obj} {graph} .\n")
        lines += [f"{node(a)} {node(p)} {node(o)} {indexed} .\n" for a, p, o in extra]
        out.append("".join(lines))
    return out


def _insert_new(items: Sequence[tuple[ItemSpec, Graph]],
                index: list[list[tuple[URIRef, URIRef, Identifier]]]) -> str:
    """The update operation inserting each item's triples (items graph) and index entries (index graph) unless an
    item with its id is stored; each item's IRI and each IRI term is escaped once per batch."""
    known: dict[URIRef, str] = {}

    def text(t: Node) -> str:
        """A term as SPARQL text, IRIs looked up in this batch's cache."""
        if type(t) is URIRef:
            return known[t] if t in known else known.setdefault(t, iri(t))
        return term(t)

    graphs = (iri(GRAPH_ITEMS), iri(GRAPH_INDEX))
    rows = []
    for (spec, g), extra in zip(items, index, strict=True):
        item = text(ITEM[spec.id])
        parts: tuple[Iterable[tuple[Node, Node, Node]], ...] = (g, extra)
        for graph, triples in zip(graphs, parts, strict=True):
            rows += [f"({item} {graph} {text(a)} {text(p)} {text(o)})" for a, p, o in triples]
    return (f"INSERT {{ GRAPH ?g {{ ?s ?p ?o }} }} WHERE {{ VALUES (?item ?g ?s ?p ?o) {{ {' '.join(rows)} }} "
            f"OPTIONAL {{ GRAPH {iri(GRAPH_ITEMS)} {{ ?item a ?stored }} }} FILTER(!BOUND(?stored)) }}")


def _operation(op: Graph | Pattern) -> str:
    """One update operation on the items graph: insert a graph's triples, or delete a (s, p[, o]) pattern."""
    if isinstance(op, Graph):
        return f"INSERT DATA {{ GRAPH {iri(GRAPH_ITEMS)} {{ {_triples(op)} }} }}"
    s, p, o = op
    obj = "?o" if o is None else term(o)
    return f"DELETE WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ {term(s)} {term(p)} {obj} }} }}"


def _card(i: str, v: dict[Node, list[Node]]) -> Card:
    """The search card of one item from its values by predicate."""
    return Card(i, kind_of(i, map(str, v.get(RDF.type, []))), str(v[OM.title][0]), str(v[OM.summary][0]),
                tuple(sorted(str(o) for o in v.get(OM.appliesToOntology, []))),
                int(str(v[OM.priority][0])) if OM.priority in v else 0, float(str(v[OM.confidence][0])),
                tuple(sorted(str(o)[len(ITEM):] for o in v.get(OM.conflictsWith, []))),
                *(tuple(sorted(str(o) for o in v.get(p, []))) for p in (OM.aboutClass, OM.aboutProperty)))
