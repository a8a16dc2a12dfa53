"""The embedded backend: owlready2's SQLite quadstore (items, links, provenance, FTS5 index) plus a blob file.

Every SQL statement on the quadstore and every owlready2 internal of the package lives in this file, except the
upkeep of the order and postings tables (postings.py), which this file runs inside its write transactions.
"""

from __future__ import annotations

import functools
import io
import operator
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import owlready2
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import OWL, PROV, RDF, XSD

from ..errors import MemoryCorrupt, MemoryNotFound, MemoryReadOnly, VersionMismatch
from ..model import Card, ItemSpec, UseCounts
from ..resources import memory_ontology
from ..vocab import ITEM, KINDS, OM
from . import postings, retrieval, topk
from .backend import Backend
from .blobs import MAX_READ, BlobStore
from .items import COUNTERS
from .locking import WriteLock
from .sqlite_files import connect, integrity_check, typed_error, typed_reads

ONTOLOGY_IRI = "http://w3id.org/owl-memory"
# owl-memory's store format, kept in PRAGMA user_version (0: a memory made before it was recorded; 2: om_order holds
# filter-combination tokens and om_terms / om_docs / om_df the text postings, 3: om_df's item sets uncompressed,
# 4: item sets per (token, tf) and per document length instead of walk lists, 5: their delta tables; each built on
# the first writable open of an older memory, 4 -> 5 by adding the empty deltas)
FORMAT = 5
QUADSTORE_FORMAT = 12  # owlready2's quadstore version (its `store` table) this code reads and writes
_TABLES = {"store", "resources", "objs", "datas", "om_fts"}
# The retrieval index: words of title/summary/tags, key tokens of the item's kind and applicability links, and the
# immutable ranking fields, so one FTS5 query filters, scores and orders (see retrieval.py).
_FTS = ("CREATE VIRTUAL TABLE IF NOT EXISTS om_fts USING fts5(title, summary, tags, keys, item UNINDEXED, "
        "priority UNINDEXED, confidence UNINDEXED, tokenize='unicode61')")
_TEXT_WEIGHTS = "1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0"  # bm25 weights: title, summary, tags count; keys do not
# How this process writes the graph file (WAL mode, set at creation): a commit is in the WAL when it returns, so a
# kill -9 loses nothing that returned, but it is not fsynced (a power loss or OS crash may drop the last commits, never
# corrupt the file; the blob file does the same); the WAL is copied back into the file every 3,000 pages of 32 KB
# (~70 adds at 100k items, ~42 pages each; not every ~24 as with SQLite's default 1,000) and then rewritten from its
# start, its file kept up to 128 MB (~3,000 pages and a commit): cut back to 64 MB, as before, the commit that cut it
# and the one that grew it past 64 MB again took 10-60 ms each (two more slow adds per checkpoint).
_WRITER_PRAGMAS = ("PRAGMA synchronous=NORMAL", "PRAGMA wal_autocheckpoint=3000", "PRAGMA journal_size_limit=134217728")
# An item is live when nothing supersedes it and it is not archived (parameters: om:supersedes, om:archived ids).
_LIVE = ("NOT EXISTS (SELECT 1 FROM objs x WHERE x.o = {item} AND x.p = ?) AND "
         "NOT EXISTS (SELECT 1 FROM datas a WHERE a.s = {item} AND a.p = ? AND a.o = 'true')")


@typed_reads(lambda backend: backend.path / "memory.sqlite3")
class QuadstoreBackend(Backend):
    """One memory directory: `memory.sqlite3` (owlready2 World with the FTS5 index) and `blobs.sqlite3`.

    Many processes may open one memory: the World is opened non-exclusive, every read is a fresh SQLite read (no
    cache can hide another process's commit), and writes run inside `transaction()`, which holds the memory's
    inter-process write lock (`write.lock`).

    Args:
        path: the memory directory; created when missing (atomically: the graph file is renamed into place last).
        max_read: characters one payload read returns at most.
        create: False to raise MemoryNotFound instead of creating a missing memory.
    """

    engine = "fts5"

    def __init__(self, path: str | Path, max_read: int = MAX_READ, create: bool = True):
        path = Path(path)
        graph_file, self.lock, self.depth = path / "memory.sqlite3", WriteLock(path / "write.lock"), 0
        if not graph_file.exists():
            if not create:
                raise MemoryNotFound(f"no memory at {path}: check --memory, or create one with a command that "
                                     "writes (owl-memory add, run, sprint)")
            path.mkdir(parents=True, exist_ok=True)
            with self.lock:
                if not graph_file.exists():
                    BlobStore(path / "blobs.sqlite3").close()
                    _create_graph(graph_file)
        self.path, self.read_only = path, not all(os.access(f, os.W_OK) for f in (path, graph_file))
        self.payloads = BlobStore(path / "blobs.sqlite3", max_read, read_only=self.read_only)
        self.world = _open_world(graph_file, self.read_only)
        self.db = self.world.graph.db
        for pragma in _WRITER_PRAGMAS * (not self.read_only):
            self.db.execute(pragma)
        self.items = self.world.get_ontology(str(ITEM))
        self.decoded = postings.Decoded()  # item sets a text search decoded, kept while the memory is unchanged
        self.sid = {t: self.storid(t) for t in (RDF.type, *_TERMS)}
        if None in self.sid.values() and not self.read_only:
            with self.transaction():  # a memory made before a term joined the ontology: add the missing ones
                self.sid = {t: self.storid(t, True) for t in self.sid}
        self.ordered = _user_version(self.db) >= FORMAT
        if not self.ordered and not self.read_only:
            with self.transaction():  # a memory made before the order and postings tables: build them
                self._build_accelerator()
            self.ordered = True
        # the property ids a search card reads (looked up once: rdflib builds a new term per attribute access)
        self.card_terms = tuple(self.sid[t] for t in (OM.title, OM.summary, OM.priority, OM.confidence, RDF.type,
                                                      OM.appliesToOntology, OM.conflictsWith))
        self._rdflib = None
        self.closed = False

    # ---- Backend: items ----
    def stored(self, ids: Iterable[str]) -> set[str]:
        """The ids among `ids` that are stored items (a kind among their types)."""
        kinds = {self.sid[OM[k]] for k in KINDS}
        out = set()
        for i in ids:
            s = self.storid(ITEM[i])
            if s is not None and any(o in kinds for o in self._objects(s, self.sid[RDF.type])):
                out.add(i)
        return out

    def write_items(self, items: Sequence[tuple[ItemSpec, Graph]]) -> None:
        """Payloads first (a crash before the graph commit leaves orphan blobs only), then triples and index rows."""
        for spec, _ in items:
            self.payloads.put(spec.content, "content")
        with self.transaction():
            docs, ids = [], {}
            for spec, g in items:
                self._insert(g, ids)
                docs.append(self._index(spec, g, ids))
            if self.ordered:
                postings.add(self.db, docs)
                postings.fold_when_due(self.db)

    def describe(self, nodes: Iterable[URIRef]) -> Graph:
        """Stored triples of the item nodes, rdf:type triples of the other nodes."""
        g = Graph(bind_namespaces="none")
        for node in nodes:
            s = self.storid(node) if isinstance(node, URIRef) else None
            if s is not None:
                g += self._triples(s, None if str(node).startswith(str(ITEM)) else RDF.type)
        return g

    def cards(self, ids: Sequence[str]) -> list[Card]:
        """Search cards, in the order of `ids`, read straight from the quadstore tables (three queries for all)."""
        if not ids:
            return []
        title, summary, priority, confidence, *linked = self.card_terms
        prefix, marks = str(ITEM), ", ".join("?" * len(ids))
        node = dict(self.db.execute(f"SELECT iri, storid FROM resources WHERE iri IN ({marks})",
                                    [prefix + i for i in ids]).fetchall())
        nodes = [node[prefix + i] for i in ids]
        one: dict[int, dict[int, object]] = {n: {} for n in nodes}
        for n, p, o in self.db.execute(f"SELECT s, p, o FROM datas WHERE s IN ({marks}) AND p IN (?, ?, ?, ?)",
                                       [*nodes, title, summary, priority, confidence]):
            one[n].setdefault(p, o)
        links: dict[tuple[int, int], list[str]] = {}
        for n, p, o in self.db.execute(f"SELECT x.s, x.p, r.iri FROM objs x JOIN resources r ON r.storid = x.o "
                                       f"WHERE x.s IN ({marks}) AND x.p IN (?, ?, ?)", [*nodes, *linked]):
            links.setdefault((n, p), []).append(o)
        kind, ontology, conflicts = linked
        out = []
        for i, n in zip(ids, nodes, strict=True):
            values, kinds = one[n], [o.rsplit("#", 1)[-1] for o in links.get((n, kind), ())]
            out.append(Card(i, next((k for k in sorted(kinds) if k in KINDS), None), values[title], values[summary],
                            tuple(sorted(links.get((n, ontology), ()))), int(values.get(priority, 0)),
                            float(values[confidence]), tuple(sorted(_item_ids(links.get((n, conflicts), ()))))))
        return out

    def search(self, query: retrieval.SearchQuery) -> list[tuple[str, float]]:
        """Ranked (id, score) pairs through the FTS5 accelerator (retrieval.rank)."""
        q = self._fts_query(query)
        return [] if q is None else [(i, score) for _, i, score in retrieval.rank(self, q)]

    def _fts_query(self, query: retrieval.SearchQuery) -> retrieval.FtsQuery | None:
        """The quadstore-id form of a search; None when a filter names something never stored."""
        filters = []
        for p, o in ((OM.appliesToOntology, query.ontology), (OM.appliesToTaskType, query.task_type),
                     (OM.preventsFailureMode, query.failure_mode)):
            if o is not None:
                oid = self.storid(o)
                if oid is None:
                    return None
                filters.append((self.sid[p], oid))
        kinds = tuple((self.sid[RDF.type], self.sid[k]) for k in query.kinds)
        unstated = tuple(self.sid[p] for p in retrieval.unstated(query))
        return retrieval.FtsQuery(tuple(filters), kinds, query.words, query.k, unstated=unstated)

    def with_signature(self, signature: str) -> list[str]:
        """Ids of live items with this violation signature (one indexed lookup on the data table)."""
        rows = self.db.execute(
            "SELECT r.iri FROM datas d JOIN resources r ON r.storid = d.s WHERE d.p = ? AND d.o = ? "
            "AND d.s NOT IN (SELECT o FROM objs WHERE p = ?) "
            "AND d.s NOT IN (SELECT s FROM datas WHERE p = ? AND o = ?)",
            (self.sid[OM.violationSignature], str(signature), self.sid[OM.supersedes], self.sid[OM.archived],
             "true")).fetchall()
        return sorted(_item_ids(iri for (iri,) in rows))

    def count(self) -> int:
        """Items stored, counted on the index's row-size table (15x faster than counting FTS rows)."""
        return self.db.execute("SELECT count(*) FROM om_fts_docsize").fetchone()[0]

    # ---- Backend: updates ----
    def count_use(self, id: str, success: bool | None) -> UseCounts:
        """Increment the counters in place (typed xsd:nonNegativeInteger values stay typed)."""
        s = self.storid(ITEM[id])
        bumps = {"use_count": 1, "success_count": int(success is True), "failure_count": int(success is False)}
        out = {}
        for key, prop in COUNTERS.items():
            p = self.sid[prop]
            row = self.db.execute("SELECT o FROM datas WHERE s = ? AND p = ?", (s, p)).fetchone()
            out[key] = int(row[0] if row else 0) + bumps[key]
            if row is None:
                self._insert([(ITEM[id], prop, Literal(out[key], datatype=XSD.nonNegativeInteger))])
            elif bumps[key]:
                self.db.execute("UPDATE datas SET o = ? WHERE s = ? AND p = ?", (out[key], s, p))
        return UseCounts(**out)

    def add_triples(self, g: Graph) -> None:
        """Insert the triples of `g`."""
        self._insert(g)

    def remove_triples(self, subject: URIRef, predicate: URIRef, obj=None) -> None:
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

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction of this process, serialized with every other process's writes (re-entrant).

        Takes the memory's write lock (a bounded wait, then MemoryLocked naming the holder), then BEGIN IMMEDIATE,
        so reads inside the block see every commit of other processes; commits the block or rolls it back.
        """
        if self.read_only:
            raise MemoryReadOnly(f"the memory at {self.path} is read-only (its files or folder cannot be written); "
                                 "copy it somewhere writable to change it")
        with self.lock, postings.recording(self.db) as marks:
            outer = self.depth == 0
            if outer:
                self.db.execute("BEGIN IMMEDIATE")
                before = self._state()
            self.depth += 1
            try:
                yield
            except BaseException:
                if outer:
                    self.db.rollback()
                raise
            else:
                if outer:
                    self.db.commit()
                    self.decoded.follow(before, marks, self._state())  # the kept item sets take its changes
            finally:
                self.depth -= 1

    def others_changes(self) -> int | None:
        """SQLite's data_version: it changes when another connection (any process) commits to the graph file."""
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def integrity(self) -> list[str]:
        """SQLite's integrity check of both files: [] when sound, else 'file: message' lines."""
        return ([f"memory.sqlite3: {m}" for m in integrity_check(self.db)]
                + [f"blobs.sqlite3: {m}" for m in self.payloads.integrity()])

    # ---- Backend: whole memory ----
    def sparql(self, query, bindings: dict, limit: int) -> tuple[list[str], list[list], bool]:
        """Run a checked query with rdflib's engine over a live view of the quadstore (no copy)."""
        if self._rdflib is None:
            self._rdflib = self.world.as_rdflib_graph()
        result = self._rdflib.query(query, initBindings=bindings)
        if result.type == "ASK":
            return ["ask"], [[bool(result.askAnswer)]], False
        columns = [str(v) for v in result.vars]
        rows = []
        for row in result:
            if len(rows) == limit:
                return columns, rows, True
            rows.append(list(row))
        return columns, rows, False

    def all_triples(self) -> Graph:
        """The whole store (ontology and items) as an rdflib Graph."""
        g = Graph()
        g.bind("om", OM)
        g.bind("item", ITEM)
        for s, p, o in self.db.execute("SELECT s, p, o FROM objs"):
            g.add((self.iri(s), self.iri(p), self.iri(o)))
        for s, p, o, d in self.db.execute("SELECT s, p, o, d FROM datas"):
            g.add((self.iri(s), self.iri(p), self._literal(o, d)))
        return g

    def close(self) -> None:
        """Close the World and the blob file (every write was committed by its transaction; a second close does
        nothing)."""
        if self.closed:
            return
        self.world.close()
        self.payloads.close()
        self.closed = True

    # ---- FTS5 accelerator primitives (retrieval.rank calls these) ----
    def fts_ranked(self, expr: str | None, limit: int, only: list | None = None, scored: bool = False,
                   ranks: bool = False, offset: int = 0, exact: bool = False) -> list[tuple]:
        """Ranked (storid, id, score[, priority, confidence]) rows of live index rows matching `expr` (scores rounded
        to 6 places, or `exact` for summing)."""
        where, params = [], []
        if expr:
            where.append("om_fts MATCH ?")
            params.append(expr)
        if only:
            where.append(f"rowid IN ({', '.join('?' * len(only))})")
            params.extend(only)
        where.append(_LIVE.format(item="om_fts.rowid"))
        params += [self.sid[OM.supersedes], self.sid[OM.archived]]
        bm25 = f"-bm25(om_fts, {_TEXT_WEIGHTS})"
        score = (bm25 if exact else f"round({bm25}, 6)") if scored else "0.0"
        columns = ", priority, confidence" if ranks else ""
        sql = (f"SELECT rowid, item, {score} AS score{columns} FROM om_fts WHERE {' AND '.join(where)} "
               "ORDER BY score DESC, priority DESC, confidence DESC, item ASC LIMIT ? OFFSET ?")
        return self.db.execute(sql, [*params, limit, offset]).fetchall()

    def key_ranked(self, token: str | None, any_of: Sequence[str], limit: int, offset: int = 0) -> list[tuple] | None:
        """(storid, id, 0.0) rows of live items holding `token` (None: every item) and one of `any_of`, in
        (priority, confidence, id) order: the token's rows are walked in that order (its index), so the query stops
        at `limit`; None when this memory has no order table (use fts_ranked)."""
        if not self.ordered:
            return None
        where, params = self._admits("o.s", None, any_of)
        sql = (f"SELECT o.s, o.item, 0.0 FROM om_order o INDEXED BY om_order_walk WHERE o.token = ? AND {where} "
               "ORDER BY o.priority DESC, o.confidence DESC, o.item ASC LIMIT ? OFFSET ?")
        return self.db.execute(sql, [token or postings.ALL, *params, limit, offset]).fetchall()

    def top_text(self, q: retrieval.FtsQuery) -> list[tuple] | None:
        """The k best text rows through the postings (topk.py); None when they cannot serve the query."""
        if not self.ordered or not all(w.isascii() and w.isalnum() for w in q.words):
            return None  # non-ASCII or split words: their FTS5 tokens are not the words themselves
        with self._snapshot() as own:  # statistics, bitmaps and rows from one state of the memory
            self.decoded.use(self._state() if own else None)
            return topk.ranked(self, q.words, retrieval.filter_token(q.filters),
                               [retrieval.key_token(p, o) for p, o in q.kinds], q.k)

    def _state(self) -> tuple[int, int]:
        """The graph file's state as this connection sees it: (data_version: moves when another connection commits,
        total_changes: moves with this connection's own writes)."""
        return self.others_changes(), self.db.total_changes

    @contextmanager
    def _snapshot(self) -> Iterator[bool]:
        """A read transaction around the block (unless one is open; yields whether it opened one): other processes'
        commits stay out of it."""
        if self.db.in_transaction:
            yield False
            return
        self.db.execute("BEGIN")
        try:
            yield True
        finally:
            self.db.rollback()

    def text_stats(self, terms: Sequence[str]) -> tuple[int, float, dict[str, list[tuple[int, int, int]]]]:
        """FTS5's BM25 statistics: its row count and average document length (every column, from its averages
        record); and each token's (tf, number of items, item set) rows, one per frequency it has in some item (the
        sets decoded: bit s set for storid s)."""
        rows, size = self.decoded.get(["averages"], self._averages)["averages"]
        sets = self.decoded.get([("om_df", t) for t in terms], self._term_sets)
        return rows, size / rows if rows else 0.0, {t: sets["om_df", t] for t in terms}

    def _averages(self, _: list) -> dict[str, tuple[int, int]]:
        """{"averages": (rows, summed document length of every column)} from FTS5's averages record."""
        (block,) = self.db.execute("SELECT block FROM om_fts_data WHERE id = 1").fetchone() or (b"",)
        rows, *sizes = postings.varints(block) or [0]
        return {"averages": (rows, sum(sizes))}

    def _term_sets(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[int, int, int]]]:
        """The decoded (tf, n, items) rows of the om_df keys ("om_df", term)."""
        out: dict[tuple[str, str], list] = {key: [] for key in keys}
        terms = [t for _, t in keys]
        for t, tf, n, items in postings.item_sets(self.db, "om_df", f"term IN ({', '.join('?' * len(terms))})", terms):
            out["om_df", t].append((tf, n, postings.bitmap(items)))
        return out

    def holders(self, terms: Sequence[str]) -> int:
        """The items holding one of `terms` (the union of their item sets) as an int whose bit s is set for storid s;
        each term's union kept with its sets."""
        def load(keys: list) -> dict:
            sets = self.decoded.get([("om_df", t) for _, t in keys], self._term_sets)
            return {("any", t): functools.reduce(operator.or_, (items for _, _, items in sets["om_df", t]), 0)
                    for _, t in keys}
        return functools.reduce(operator.or_, self.decoded.get([("any", t) for t in terms], load).values(), 0)

    def doc_lengths(self) -> list[int]:
        """The document lengths some item has, shortest first."""
        return self.decoded.get(["lengths"], lambda _: {
            "lengths": sorted(dl for (dl,) in postings.sizes(self.db, "om_dl"))})["lengths"]

    def length_items(self, dl: int) -> int:
        """The items of document length `dl` as an int whose bit s is set for storid s."""
        def load(_: list) -> dict:
            rows = postings.item_sets(self.db, "om_dl", "dl = ?", [dl])
            return {("om_dl", dl): postings.bitmap(rows[0][-1]) if rows else 0}
        return self.decoded.get([("om_dl", dl)], load)["om_dl", dl]

    def order_walk(self, token: str | None) -> sqlite3.Cursor:
        """A lazy cursor over the storids of the items, live or not, holding `token` (None: every item), in
        (priority DESC, confidence DESC, id) order."""
        return self.db.execute("SELECT s FROM om_order INDEXED BY om_order_walk WHERE token = ? "
                               "ORDER BY priority DESC, confidence DESC, item", (token or postings.ALL,))

    def docs(self, items: Sequence[int], token: str | None = None, any_of: Sequence[str] = ()) -> list[tuple]:
        """(storid, dl, priority, confidence, id, "token:tf ...") of those `items` that are live, hold `token` (None:
        any) and one of `any_of`."""
        where, params = self._admits("d.s", token, any_of)
        return self.db.execute(f"SELECT d.s, d.dl, d.priority, d.confidence, d.item, d.terms FROM om_docs d WHERE "
                               f"d.s IN ({', '.join('?' * len(items))}) AND {where}", [*items, *params]).fetchall()

    def token_items(self, token: str, limit: int) -> list[int]:
        """Up to `limit` storids of the items, live or not, holding `token`."""
        return [s for (s,) in self.db.execute("SELECT s FROM om_order WHERE token = ? LIMIT ?", (token, limit))]

    def _admits(self, item: str, token: str | None, any_of: Sequence[str]) -> tuple[str, list]:
        """SQL condition and parameters: the item (an SQL expression) is live, holds `token` and one of `any_of`."""
        where, params = [], []
        if token:
            where.append(f"EXISTS (SELECT 1 FROM om_order f WHERE f.s = {item} AND f.token = ?)")
            params.append(token)
        if any_of:
            where.append(f"EXISTS (SELECT 1 FROM om_order f WHERE f.s = {item} AND f.token IN "
                         f"({', '.join('?' * len(any_of))}))")
            params += any_of
        where.append(_LIVE.format(item=item))
        return " AND ".join(where), [*params, self.sid[OM.supersedes], self.sid[OM.archived]]

    def exceptions_of(self, items: list[int]) -> dict[int, int]:
        """{exception storid: rule storid} for the exceptions of the given rules."""
        return self._has_exception(items, "s")

    def rules_of(self, items: list[int]) -> dict[int, int]:
        """{exception storid: rule storid} for those of the given items that are exceptions of a rule."""
        return self._has_exception(items, "o")

    def narrowing(self, exceptions: dict[int, int], properties: tuple) -> set[int]:
        """Those exceptions (of {exception: rule}) with a value of one of `properties` that their rule lacks."""
        if not exceptions or not properties:
            return set()
        pairs = ", ".join("(?, ?)" for _ in exceptions)
        rows = self.db.execute(
            f"WITH pair(e, r) AS (VALUES {pairs}) SELECT DISTINCT pair.e FROM pair JOIN objs x ON x.s = pair.e "
            f"WHERE x.p IN ({', '.join('?' * len(properties))}) AND NOT EXISTS "
            "(SELECT 1 FROM objs y WHERE y.s = pair.r AND y.p = x.p AND y.o = x.o)",
            [*(v for pair in exceptions.items() for v in pair), *properties])
        return {e for (e,) in rows}

    def _has_exception(self, items: list[int], side: str) -> dict[int, int]:
        """{exception: rule} of the om:hasException links whose rule ("s") or exception ("o") is in `items`."""
        if not items:
            return {}
        rows = self.db.execute(f"SELECT o, s FROM objs WHERE p = ? AND {'s' if side == 's' else 'o'} IN "
                               f"({', '.join('?' * len(items))})", [self.sid[OM.hasException], *items]).fetchall()
        return dict(rows)

    def _build_accelerator(self) -> None:
        """(Re)build the order and postings tables (once, for a memory made before them) and record the format."""
        version = _user_version(self.db)
        if version >= FORMAT:
            return
        if version == 4:  # format 5 only adds the (empty) delta tables
            postings.create(self.db)
        else:
            postings.build(self.db, self.sid[RDF.type])
        self.db.execute(f"PRAGMA user_version = {FORMAT}")

    def _index(self, spec: ItemSpec, g: Graph, ids: dict) -> tuple:
        """(Re)write the retrieval index and order rows of an item (its rowid is the item's quadstore id), drop its
        old postings; returns the row `postings.add` takes (`ids`: see _id)."""
        s, keyed = self._id(ITEM[spec.id], ids), {self.sid[p] for p in retrieval.KEYED}
        keys = " ".join(sorted({retrieval.key_token(self._id(p, ids), self._id(o, ids)) for x, p, o in g
                                if x == ITEM[spec.id] and self._id(p, ids) in keyed}))
        self.db.execute("DELETE FROM om_fts WHERE rowid = ?", (s,))
        self.db.execute("INSERT INTO om_fts(rowid, title, summary, tags, keys, item, priority, confidence) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (s, spec.title, spec.summary, " ".join(spec.tags), keys, spec.id, spec.priority,
                         spec.confidence))
        if self.ordered:
            postings.replace(self.db, s, keys, spec.id, spec.priority, spec.confidence, self.sid[RDF.type])
        return s, keys, spec.id, spec.priority, spec.confidence, (spec.title, spec.summary, " ".join(spec.tags))

    # ---- quadstore tables ----
    def storid(self, iri, create: bool = False) -> int | None:
        """The quadstore id of an IRI; None when unknown and not created."""
        return self.world._abbreviate(str(iri), create)

    def iri(self, storid: int) -> URIRef | BNode:
        """The rdflib term of a quadstore id."""
        return BNode(f"b{-storid}") if storid < 0 else URIRef(self.world._unabbreviate(storid))

    def _insert(self, triples: Iterable[tuple], ids: dict | None = None) -> None:
        """Insert triples (object IRI or Literal), two statements for all; a triple already present is left as it is
        (`ids`: see _id)."""
        ids, c = {} if ids is None else ids, self.items.storid
        objs, datas = [], []
        for s, p, o in triples:
            si, pi = self._id(s, ids), self._id(p, ids)
            if isinstance(o, Literal):
                datas.append((c, si, pi, _stored(o), self._id(o.datatype or XSD.string, ids)))
            else:
                objs.append((c, si, pi, self._id(o, ids)))
        self.db.executemany("INSERT OR IGNORE INTO datas (c, s, p, o, d) VALUES (?, ?, ?, ?, ?)", datas)
        self.db.executemany("INSERT OR IGNORE INTO objs (c, s, p, o) VALUES (?, ?, ?, ?)", objs)

    def _id(self, term, ids: dict) -> int:
        """The quadstore id of an IRI, created when new; looked up once per `ids` dict (a write's memo), the ontology's
        own terms not at all (self.sid)."""
        found = ids.get(term) or self.sid.get(term)
        if found is None:
            found = ids[term] = self.storid(term, True)
        return found

    def _objects(self, s: int, p: int) -> list[int]:
        """Object ids of (s, p)."""
        return [o for (o,) in self.db.execute("SELECT o FROM objs WHERE s = ? AND p = ?", (s, p))]

    def _terms(self, storids: list[int]) -> list:
        """rdflib terms of quadstore ids, sorted."""
        return sorted(self.iri(o) for o in storids)

    def _values(self, s: int) -> dict[int, list]:
        """Data values of s by property id, as Python values."""
        out: dict[int, list] = {}
        for p, o in self.db.execute("SELECT p, o FROM datas WHERE s = ?", (s,)):
            out.setdefault(p, []).append(o)
        return out

    def _triples(self, s: int, p: URIRef | None = None) -> Graph:
        """The triples with subject s (and predicate p when given), as an rdflib Graph."""
        g, pid = Graph(bind_namespaces="none"), None if p is None else self.storid(p)
        for pi, o in self.db.execute("SELECT p, o FROM objs WHERE s = ?", (s,)):
            if pid in (None, pi):
                g.add((self.iri(s), self.iri(pi), self.iri(o)))
        for pi, o, d in self.db.execute("SELECT p, o, d FROM datas WHERE s = ?", (s,)):
            if pid in (None, pi):
                g.add((self.iri(s), self.iri(pi), self._literal(o, d)))
        return g

    def _literal(self, o, d) -> Literal:
        """An rdflib Literal from an owlready2 (value, datatype-or-language) pair."""
        if isinstance(d, str):
            return Literal(o, lang=d.lstrip("@") or None)
        dt = self.iri(d) if d else XSD.string
        return Literal(o) if dt == XSD.string else Literal(o, datatype=dt)  # RDF 1.1: plain == xsd:string


def _create_graph(path: Path) -> None:
    """Create the graph file atomically: built under a temporary name, renamed into place when complete.

    Call it holding the memory's write lock; leftovers of creators killed half-way are removed first.
    """
    for stale in path.parent.glob(f".{path.name}.creating-*"):
        stale.unlink()
    tmp = path.with_name(f".{path.name}.creating-{os.getpid()}")
    world = owlready2.World(filename=str(tmp), exclusive=False)
    db = world.graph.db
    db.execute(_FTS)
    postings.create(db)
    db.execute(f"PRAGMA user_version = {FORMAT}")
    world.get_ontology(str(ITEM))
    nt = memory_ontology().serialize(format="nt", encoding="utf-8")
    world.get_ontology(ONTOLOGY_IRI).load(fileobj=io.BytesIO(nt), format="ntriples")
    for t in (RDF.type, *_TERMS):
        world._abbreviate(str(t), True)
    world.graph.commit()
    db.execute("PRAGMA journal_mode=WAL")
    world.close()  # the last connection checkpoints the WAL into the file
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.rename(tmp, path)
    _fsync_dir(path.parent)


def _open_world(path: Path, read_only: bool) -> owlready2.World:
    """Open an existing graph file as a non-exclusive World; typed errors for damage, locks and versions."""
    db = connect(path, read_only)
    try:
        _check_format(db, path)
        # owlready2's read_only flag only skips its statistics rewrite on open (a write, which would wait for other
        # processes' writers); this module's own writes go through MemoryGraph.transaction.
        world = owlready2.World(filename=str(path), exclusive=False, read_only=True, lock=threading.RLock(),
                                connection=db)
        db.commit()  # ends the implicit transaction of owlready2's per-connection TEMP table
        return world
    except sqlite3.DatabaseError as e:
        db.close()
        raise typed_error(e, path) from e
    except BaseException:
        db.close()
        raise


def _check_format(db: sqlite3.Connection, path: Path) -> None:
    """VersionMismatch when the file is a quadstore or owl-memory format this code does not read."""
    tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not _TABLES <= tables:
        raise MemoryCorrupt(f"{path} is an SQLite file but not an owl-memory graph (missing tables: "
                            f"{', '.join(sorted(_TABLES - tables))}); point --memory at a memory folder")
    (store,) = db.execute("SELECT version FROM store").fetchone()
    (fmt,) = db.execute("PRAGMA user_version").fetchone()
    if store != QUADSTORE_FORMAT:
        raise VersionMismatch(f"{path} is an owlready2 quadstore of version {store}; this owl-memory (owlready2 "
                              f"{owlready2.VERSION}) reads version {QUADSTORE_FORMAT}: export it with the "
                              "owl-memory that wrote it (owl-memory export) and load the export here")
    if fmt > FORMAT:
        raise VersionMismatch(f"{path} has owl-memory store format {fmt}, newer than the format {FORMAT} this "
                              "owl-memory reads; upgrade owl-memory (pip install -U owl-memory)")


def _fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stored(o: Literal):
    """The value owlready2's data table holds for a literal: numbers as numbers, everything else as its text."""
    v = o.toPython()
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else str(o)


def _user_version(db: sqlite3.Connection) -> int:
    """The owl-memory store format recorded in the graph file."""
    return db.execute("PRAGMA user_version").fetchone()[0]


def _item_ids(iris: Iterable) -> list[str]:
    """Item ids of item IRIs (other IRIs dropped)."""
    return [str(i)[len(str(ITEM)):] for i in iris if str(i).startswith(str(ITEM))]


_TERMS = [OM[n] for n in (
    "title", "summary", "scope", "confidence", "priority", "createdAt", "useCount", "successCount", "failureCount",
    "contentRef", "contentHash", "tag", "violationSignature", "actionSchema", "verificationHook",
    "appliesToOntology", "appliesToTaskType", "preventsFailureMode", "refines", "hasException", "supersedes",
    "conflictsWith", "groundedByEpisode", "derivedFromTrace", "archived", "TargetOntology", "TaskType", "FailureMode",
    "Run", "Trajectory", *KINDS)] + [PROV.wasGeneratedBy, PROV.wasDerivedFrom, PROV.Activity, OWL.NamedIndividual]
