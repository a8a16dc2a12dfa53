"""owlready2's internals behind one module: opening a World on a graph file, the IRI <-> storid mapping, and every SQL
statement on its quadstore tables (`resources`, `objs`, `datas`, `store`).

The embedded memory keeps its items in an owlready2 World and reads and writes the quadstore's tables directly (one
statement where owlready2's object layer would load every entity), so it depends on owlready2's quadstore format
(QUADSTORE_FORMAT); a version bump of owlready2 touches this file only.
"""

from __future__ import annotations

import io
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import owlready2
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import XSD

from ..errors import VersionMismatch

QUADSTORE_FORMAT = 12  # owlready2's quadstore version (its `store` table) this code reads and writes
TABLES = frozenset({"store", "resources", "objs", "datas"})
_CHUNK = 500  # IRIs looked up in one statement (SQLite's limit on bound parameters is far above it)
# An item is live when nothing supersedes it and it is not archived (parameters: om:supersedes, om:archived ids).
_LIVE = ("NOT EXISTS (SELECT 1 FROM objs x WHERE x.o = {item} AND x.p = ?) AND "
         "NOT EXISTS (SELECT 1 FROM datas a WHERE a.s = {item} AND a.p = ? AND a.o = 'true')")


def live_condition(item: str) -> str:
    """SQL condition: no (newer, om:supersedes, item) link and no (item, om:archived, true) value for `item` (an SQL
    expression giving a storid); its parameters are the storids of om:supersedes and om:archived, in that order."""
    return _LIVE.format(item=item)


def new_world(path: Path, db: sqlite3.Connection) -> Quadstore:
    """A new World on the empty SQLite file at `path` (non-exclusive) over the connection `db` (opened by the caller),
    for a graph file being created."""
    return Quadstore(owlready2.World(filename=str(path), exclusive=False, connection=db))


def open_world(path: Path, db: sqlite3.Connection) -> Quadstore:
    """The existing graph file at `path` as a non-exclusive World over the connection `db` (opened by the caller)."""
    # owlready2's read_only flag only skips its statistics rewrite on open (a write, which would wait for other
    # processes' writers); the memory's own writes run in its write transactions.
    world = owlready2.World(filename=str(path), exclusive=False, read_only=True, lock=threading.RLock(), connection=db)
    db.commit()  # ends the implicit transaction of owlready2's per-connection TEMP table
    return Quadstore(world)


def check_version(db: sqlite3.Connection, path: Path) -> None:
    """VersionMismatch when the file holds a quadstore of a version this owlready2 does not read."""
    (store,) = db.execute("SELECT version FROM store").fetchone()
    if store != QUADSTORE_FORMAT:
        raise VersionMismatch(f"{path} is an owlready2 quadstore of version {store}; this owl-memory (owlready2 "
                              f"{owlready2.VERSION}) reads version {QUADSTORE_FORMAT}: export it with the "
                              "owl-memory that wrote it (owl-memory export) and load the export here")


class Quadstore:
    """One World's quadstore: IRIs and their storids, triples in and out of its tables, the reads the memory makes.

    Args:
        world: the owlready2 World (see new_world, open_world).
    """

    def __init__(self, world: owlready2.World):
        self.world, self.db = world, world.graph.db

    # ---- the World ----
    def ontology_id(self, iri: str) -> int:
        """The storid of the ontology (the quadstore's graph) named `iri`, made when new."""
        return self.world.get_ontology(iri).storid

    def load_ntriples(self, iri: str, data: bytes) -> None:
        """Load N-Triples into the ontology named `iri`."""
        self.world.get_ontology(iri).load(fileobj=io.BytesIO(data), format="ntriples")

    def commit(self) -> None:
        """Commit the World's pending writes."""
        self.world.graph.commit()

    def rdflib_graph(self) -> Graph:
        """A live, read-only rdflib view of the quadstore (no copy), for rdflib's SPARQL engine."""
        from owlready2.rdflib_store import TripleLiteRDFlibStore

        class LookupOnly(TripleLiteRDFlibStore):
            """owlready2's rdflib store, except that a pattern naming an IRI the quadstore has never stored matches
            nothing: owlready2's own store would add the IRI to `resources` (a write, outside any transaction, and
            refused on a read-only memory) just to look it up."""

            def triples(self, triple_pattern, context=None):
                """The matching triples; none when the pattern names an unknown IRI or datatype."""
                named = [t for t in triple_pattern if isinstance(t, URIRef)]
                named += [t.datatype for t in triple_pattern if isinstance(t, Literal) and t.datatype]
                if any(self.triplelite._abbreviate(str(t), False) is None for t in named):
                    return
                yield from super().triples(triple_pattern, context)

        return LookupOnly(self.world).main_graph

    def prepare_sparql(self, text: str):
        """owlready2's native SPARQL engine: the prepared query (its `execute_raw(params)` gives storid rows)."""
        return self.world.prepare_sparql(text)

    def close(self) -> None:
        """Close the World and its connection."""
        self.world.close()

    # ---- IRIs and storids ----
    def storid(self, iri, create: bool = False) -> int | None:
        """The quadstore id of an IRI; None when unknown and not created."""
        return self.world._abbreviate(str(iri), create)

    def iri(self, storid: int) -> URIRef | BNode:
        """The rdflib term of a quadstore id."""
        return BNode(f"b{-storid}") if storid < 0 else URIRef(self.world._unabbreviate(storid))

    def term_id(self, term, ids: dict) -> int:
        """The quadstore id of an IRI, made when new; looked up once per `ids` (a write's memo, which its caller may
        seed with terms it knows)."""
        found = ids.get(term)
        if found is None:
            made = self.storid(term, True)
            assert made is not None  # create=True makes the id it does not find
            found = ids[term] = made
        return found

    def made_ids(self, iris: Iterable[str], ids: dict) -> None:
        """Add the storid of each IRI (text) among `iris` to `ids` (a write's memo keyed by IRI text), making the new
        ones at once: owlready2's resource counter moved once and one executemany, not two statements per IRI."""
        wanted = [i for i in dict.fromkeys(iris) if i not in ids]
        for at in range(0, len(wanted), _CHUNK):
            ids.update(self.node_ids(wanted[at: at + _CHUNK]))
        missing = [i for i in wanted if i not in ids]
        if missing:
            self.db.execute("UPDATE store SET current_resource = current_resource + ?", (len(missing),))
            (last,) = self.db.execute("SELECT current_resource FROM store").fetchone()
            made = dict(zip(missing, range(last - len(missing) + 1, last + 1), strict=True))
            self.db.executemany("INSERT INTO resources VALUES (?, ?)", [(n, i) for i, n in made.items()])
            ids.update(made)

    def typed(self, nodes: Sequence[int], type_id: int, classes: Sequence[int]) -> set[int]:
        """Those of `nodes` with an rdf:type (`type_id`) among `classes`, in one query per 500 nodes."""
        out: set[int] = set()
        kinds = ", ".join("?" * len(classes))
        for at in range(0, len(nodes), _CHUNK):
            chunk = nodes[at: at + _CHUNK]
            out.update(s for (s,) in self.db.execute(
                f"SELECT DISTINCT s FROM objs WHERE p = ? AND o IN ({kinds}) AND s IN ({', '.join('?' * len(chunk))})",
                [type_id, *classes, *chunk]))
        return out

    def node_ids(self, iris: Sequence[str]) -> dict[str, int]:
        """{IRI: storid} of those `iris` that are stored, in one query."""
        marks = ", ".join("?" * len(iris))
        return dict(self.db.execute(f"SELECT iri, storid FROM resources WHERE iri IN ({marks})", list(iris)))

    # ---- triples ----
    def insert(self, triples: Iterable[tuple], context: int, ids: dict) -> None:
        """Insert triples (object IRI or Literal) into the graph `context`, two statements for all; a triple already
        present is left as it is (`ids`: see term_id)."""
        objs, datas = [], []
        for s, p, o in triples:
            si, pi = self.term_id(s, ids), self.term_id(p, ids)
            if isinstance(o, Literal):
                datas.append((context, si, pi, _stored(o), self.term_id(o.datatype or XSD.string, ids)))
            else:
                objs.append((context, si, pi, self.term_id(o, ids)))
        self.db.executemany("INSERT OR IGNORE INTO datas (c, s, p, o, d) VALUES (?, ?, ?, ?, ?)", datas)
        self.db.executemany("INSERT OR IGNORE INTO objs (c, s, p, o) VALUES (?, ?, ?, ?)", objs)

    def insert_rows(self, rows: Iterable[tuple], context: int, ids: dict) -> None:
        """Insert (subject, predicate, object, datatype) rows of IRI texts and values (store.items.Row: datatype None
        for an IRI object) into the graph `context`; every IRI they name is in `ids` already (made_ids)."""
        objs, datas = [], []
        for s, p, o, d in rows:
            if d is None:
                objs.append((context, ids[s], ids[p], ids[o]))
            else:
                datas.append((context, ids[s], ids[p], o, ids[d]))
        self.db.executemany("INSERT OR IGNORE INTO datas (c, s, p, o, d) VALUES (?, ?, ?, ?, ?)", datas)
        self.db.executemany("INSERT OR IGNORE INTO objs (c, s, p, o) VALUES (?, ?, ?, ?)", objs)

    def remove(self, subject: URIRef, predicate: URIRef, obj=None) -> None:
        """Delete (subject, predicate, obj), or every value of (subject, predicate)."""
        si, pi = self.storid(subject), self.storid(predicate)
        if si is None or pi is None:
            return
        if obj is None:
            self.db.execute("DELETE FROM datas WHERE s = ? AND p = ?", (si, pi))
            self.db.execute("DELETE FROM objs WHERE s = ? AND p = ?", (si, pi))
        elif isinstance(obj, Literal):
            self.db.execute("DELETE FROM datas WHERE s = ? AND p = ? AND o = ?", (si, pi, _stored(obj)))
        elif self.storid(obj) is not None:
            self.db.execute("DELETE FROM objs WHERE s = ? AND p = ? AND o = ?", (si, pi, self.storid(obj)))

    def objects(self, s: int, p: int) -> list[int]:
        """Object ids of (s, p)."""
        return [o for (o,) in self.db.execute("SELECT o FROM objs WHERE s = ? AND p = ?", (s, p))]

    def value(self, s: int, p: int):
        """The first data value of (s, p) as owlready2 stores it (a number or a text), None when there is none."""
        row = self.db.execute("SELECT o FROM datas WHERE s = ? AND p = ?", (s, p)).fetchone()
        return None if row is None else row[0]

    def set_value(self, s: int, p: int, value) -> None:
        """Replace the data value of (s, p) in place (its datatype stays)."""
        self.db.execute("UPDATE datas SET o = ? WHERE s = ? AND p = ?", (value, s, p))

    def triples(self, s: int, p: URIRef | None = None) -> Graph:
        """The triples with subject s (and predicate p when given), as an rdflib Graph."""
        g, pid = Graph(bind_namespaces="none"), None if p is None else self.storid(p)
        for pi, o in self.db.execute("SELECT p, o FROM objs WHERE s = ?", (s,)):
            if pid in (None, pi):
                g.add((self.iri(s), self.iri(pi), self.iri(o)))
        for pi, o, d in self.db.execute("SELECT p, o, d FROM datas WHERE s = ?", (s,)):
            if pid in (None, pi):
                g.add((self.iri(s), self.iri(pi), self._literal(o, d)))
        return g

    def all_triples(self) -> Iterator[tuple]:
        """Every triple of the quadstore as rdflib terms."""
        for s, p, o in self.db.execute("SELECT s, p, o FROM objs"):
            yield self.iri(s), self.iri(p), self.iri(o)
        for s, p, o, d in self.db.execute("SELECT s, p, o, d FROM datas"):
            yield self.iri(s), self.iri(p), self._literal(o, d)

    # ---- reads of the memory ----
    def data_rows(self, nodes: Sequence[int], properties: Sequence[int]) -> list[tuple[int, int, object]]:
        """(s, p, value) of the data values of `nodes` on `properties`."""
        marks, props = ", ".join("?" * len(nodes)), ", ".join("?" * len(properties))
        return self.db.execute(f"SELECT s, p, o FROM datas WHERE s IN ({marks}) AND p IN ({props})",
                               [*nodes, *properties]).fetchall()

    def link_rows(self, nodes: Sequence[int], properties: Sequence[int]) -> list[tuple[int, int, str]]:
        """(s, p, object IRI) of the links of `nodes` on `properties`."""
        marks, props = ", ".join("?" * len(nodes)), ", ".join("?" * len(properties))
        return self.db.execute(f"SELECT x.s, x.p, r.iri FROM objs x JOIN resources r ON r.storid = x.o "
                               f"WHERE x.s IN ({marks}) AND x.p IN ({props})", [*nodes, *properties]).fetchall()

    def live_with_value(self, p: int, value: str, supersedes: int, archived: int) -> list[str]:
        """IRIs of the subjects holding data value `value` on p that nothing supersedes and that are not archived
        (one indexed lookup on the data table)."""
        rows = self.db.execute(
            "SELECT r.iri FROM datas d JOIN resources r ON r.storid = d.s WHERE d.p = ? AND d.o = ? "
            "AND d.s NOT IN (SELECT o FROM objs WHERE p = ?) "
            "AND d.s NOT IN (SELECT s FROM datas WHERE p = ? AND o = ?)",
            (p, value, supersedes, archived, "true")).fetchall()
        return [iri for (iri,) in rows]

    def links(self, p: int, nodes: list[int], side: str) -> dict[int, int]:
        """{object: subject} of the p links whose subject ("s") or object ("o") is among `nodes`."""
        if not nodes:
            return {}
        rows = self.db.execute(f"SELECT o, s FROM objs WHERE p = ? AND {'s' if side == 's' else 'o'} IN "
                               f"({', '.join('?' * len(nodes))})", [p, *nodes]).fetchall()
        return dict(rows)

    def narrowing(self, pairs: dict[int, int], properties: Sequence[int]) -> set[int]:
        """The keys of {node: other} holding a link on one of `properties` that their `other` node lacks."""
        values = ", ".join("(?, ?)" for _ in pairs)
        rows = self.db.execute(
            f"WITH pair(e, r) AS (VALUES {values}) SELECT DISTINCT pair.e FROM pair JOIN objs x ON x.s = pair.e "
            f"WHERE x.p IN ({', '.join('?' * len(properties))}) AND NOT EXISTS "
            "(SELECT 1 FROM objs y WHERE y.s = pair.r AND y.p = x.p AND y.o = x.o)",
            [*(v for pair in pairs.items() for v in pair), *properties])
        return {e for (e,) in rows}

    def _literal(self, o, d) -> Literal:
        """An rdflib Literal from an owlready2 (value, datatype-or-language) pair."""
        if isinstance(d, str):
            return Literal(o, lang=d.lstrip("@") or None)
        dt = self.iri(d) if d else XSD.string
        return Literal(o) if dt == XSD.string else Literal(o, datatype=dt)  # RDF 1.1: plain == xsd:string


def _stored(o: Literal):
    """The value owlready2's data table holds for a literal: numbers as numbers, everything else as its text."""
    v = o.toPython()
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else str(o)
