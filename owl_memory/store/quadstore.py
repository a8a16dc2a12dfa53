"""The memory KG: an owlready2 World on one SQLite file, with the FTS5 index in the same transaction."""

from __future__ import annotations

import io
from pathlib import Path

import owlready2
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import OWL, PROV, RDF, XSD

from ..errors import LoadError
from ..resources import memory_ontology
from ..vocab import ITEM, KINDS, OM

ONTOLOGY_IRI = "http://w3id.org/owl-memory"
# The retrieval index: words of title/summary/tags, key tokens of the item's kind and applicability links, and the
# immutable ranking fields, so one FTS5 query filters, scores and orders (see retrieval.py).
_FTS = ("CREATE VIRTUAL TABLE IF NOT EXISTS om_fts USING fts5(title, summary, tags, keys, item UNINDEXED, "
        "priority UNINDEXED, confidence UNINDEXED, tokenize='unicode61')")


class MemoryGraph:
    """Triples of memory items in an owlready2 quadstore; reads go straight to its SQLite tables.

    Args:
        path: the SQLite file of the World; created (with the memory ontology loaded) when missing.
    """

    def __init__(self, path: str | Path):
        fresh = not Path(path).exists()
        try:
            self.world = owlready2.World(filename=str(path))
        except Exception as e:
            raise LoadError(f"cannot open the memory graph: {e}; is another process using it?", source=str(path)) from e
        self.db = self.world.graph.db
        self.db.commit()
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(_FTS)
        self.items = self.world.get_ontology(str(ITEM))
        if fresh or not self.world.get_ontology(ONTOLOGY_IRI).loaded:
            self._load_tbox()
        self.sid = {t: self.world._abbreviate(str(t)) for t in (RDF.type, *_TERMS)}
        self.commit()

    def _load_tbox(self) -> None:
        """Load the memory ontology into the World (once, when the memory is created)."""
        nt = memory_ontology().serialize(format="nt", encoding="utf-8")
        self.world.get_ontology(ONTOLOGY_IRI).load(fileobj=io.BytesIO(nt), format="ntriples")

    def storid(self, iri: str, create: bool = False) -> int | None:
        """The quadstore id of an IRI; None when unknown and not created."""
        return self.world._abbreviate(str(iri), create)

    def iri(self, storid: int) -> URIRef | BNode:
        """The rdflib term of a quadstore id."""
        return BNode(f"b{-storid}") if storid < 0 else URIRef(self.world._unabbreviate(storid))

    def add(self, s: URIRef, p: URIRef, o) -> None:
        """Insert one triple (object IRI or Literal); a triple already present is left as it is."""
        si, pi = self.storid(s, True), self.storid(p, True)
        if isinstance(o, Literal):
            v = o.toPython()
            v = v if isinstance(v, (int, float)) and not isinstance(v, bool) else str(o)
            self.db.execute("INSERT OR IGNORE INTO datas (c, s, p, o, d) VALUES (?, ?, ?, ?, ?)",
                            (self.items.storid, si, pi, v, self.storid(o.datatype or XSD.string, True)))
        else:
            self.db.execute("INSERT OR IGNORE INTO objs (c, s, p, o) VALUES (?, ?, ?, ?)",
                            (self.items.storid, si, pi, self.storid(o, True)))

    def remove(self, s: URIRef, p: URIRef) -> None:
        """Delete every value of (s, p)."""
        si, pi = self.storid(s), self.storid(p)
        if si is not None and pi is not None:
            self.db.execute("DELETE FROM datas WHERE s = ? AND p = ?", (si, pi))
            self.db.execute("DELETE FROM objs WHERE s = ? AND p = ?", (si, pi))

    def objects(self, s: int, p: int) -> list:
        """Object terms of (s, p), sorted, as rdflib terms."""
        rows = self.db.execute("SELECT o FROM objs WHERE s = ? AND p = ?", (s, p)).fetchall()
        return sorted(self.iri(o) for (o,) in rows)

    def values(self, s: int) -> dict[int, list]:
        """Data values of s by property id, as Python values."""
        out: dict[int, list] = {}
        for p, o in self.db.execute("SELECT p, o FROM datas WHERE s = ?", (s,)):
            out.setdefault(p, []).append(o)
        return out

    def triples(self, s: int, p: URIRef | None = None) -> Graph:
        """The triples with subject s (and predicate p when given), as an rdflib Graph."""
        g, pid = Graph(bind_namespaces="none"), None if p is None else self.storid(p)
        for pi, o in self.db.execute("SELECT p, o FROM objs WHERE s = ?", (s,)):
            if pid in (None, pi):
                g.add((self.iri(s), self.iri(pi), self.iri(o)))
        for pi, o, d in self.db.execute("SELECT p, o, d FROM datas WHERE s = ?", (s,)):
            if pid in (None, pi):
                g.add((self.iri(s), self.iri(pi), _literal(self, o, d)))
        return g

    def to_rdflib(self) -> Graph:
        """The whole store (ontology and items) as an rdflib Graph, for export and full validation."""
        g = Graph()
        g.bind("om", OM)
        g.bind("item", ITEM)
        for s, p, o in self.db.execute("SELECT s, p, o FROM objs"):
            g.add((self.iri(s), self.iri(p), self.iri(o)))
        for s, p, o, d in self.db.execute("SELECT s, p, o, d FROM datas"):
            g.add((self.iri(s), self.iri(p), _literal(self, o, d)))
        return g

    def index_item(self, s: int, item: str, title: str, summary: str, tags: str, keys: str, priority: int,
                   confidence: float) -> None:
        """(Re)write the retrieval index row of item s; its rowid is the item's quadstore id."""
        self.db.execute("DELETE FROM om_fts WHERE rowid = ?", (s,))
        self.db.execute("INSERT INTO om_fts(rowid, title, summary, tags, keys, item, priority, confidence) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (s, title, summary, tags, keys, item, priority, confidence))

    def commit(self) -> None:
        """Make every write so far durable."""
        self.world.graph.commit()

    def rollback(self) -> None:
        """Drop every write since the last commit."""
        self.db.rollback()

    def close(self) -> None:
        """Commit and close the World."""
        self.commit()
        self.world.close()


def _literal(graph: MemoryGraph, o, d) -> Literal:
    """An rdflib Literal from an owlready2 (value, datatype-or-language) pair."""
    if isinstance(d, str):
        return Literal(o, lang=d.lstrip("@") or None)
    dt = graph.iri(d) if d else XSD.string
    return Literal(o) if dt == XSD.string else Literal(o, datatype=dt)  # RDF 1.1: plain == xsd:string


_TERMS = [OM[n] for n in (
    "title", "summary", "scope", "confidence", "priority", "createdAt", "useCount", "successCount", "failureCount",
    "contentRef", "contentHash", "tag", "violationSignature", "actionSchema", "verificationHook",
    "appliesToOntology", "appliesToTaskType", "preventsFailureMode", "refines", "hasException", "supersedes",
    "conflictsWith", "groundedByEpisode", "derivedFromTrace", "TargetOntology", "TaskType", "FailureMode", "Run",
    "Trajectory", *KINDS)] + [PROV.wasGeneratedBy, PROV.wasDerivedFrom, PROV.Activity, OWL.NamedIndividual]
