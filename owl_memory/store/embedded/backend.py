"""The embedded backend: one memory directory with owlready2's SQLite quadstore (items, links, provenance and the
retrieval index, `memory.sqlite3`) and a blob file (`blobs.sqlite3`).

It puts together the graph file (world.py: opening, formats, upgrades, the write transaction), the items in it
(items.py) and the retrieval index (index.py, which `retrieval.rank` asks); owlready2's internals stay in
adapters/owlready2.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.query import ResultRow
from rdflib.term import Identifier

from ...errors import MemoryNotFound
from ...model import Card, ItemSpec, UseCounts
from .. import retrieval
from ..backend import Backend, Cell, TermRows
from ..blobs import MAX_READ, BlobStore
from ..items import Rows
from ..locking import WriteLock
from ..sparql_terms import Checked
from ..sqlite_files import integrity_check, typed_reads
from . import postings, world
from .index import EmbeddedIndex
from .items import Items


def _graph_file(backend: QuadstoreBackend) -> Path:
    """The graph file of an embedded memory (what its typed errors name)."""
    return backend.path / "memory.sqlite3"


@typed_reads(_graph_file)
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
    payloads: BlobStore  # the blob file (its integrity is checked with the graph file's)

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
                    world.create(graph_file)
        files = (path, graph_file, path / "blobs.sqlite3")
        self.path, self.location = path, str(path)
        self.read_only = not all(os.access(f, os.W_OK) for f in files if f.exists())
        self.payloads = BlobStore(path / "blobs.sqlite3", max_read, read_only=self.read_only)
        self.world = world.World(graph_file, self.read_only, self.lock)
        self.quadstore, self.db = self.world.quadstore, self.world.db
        self.items, self.index = Items(self.world), EmbeddedIndex(self.world)
        self._rdflib: Graph | None = None  # the live rdflib view sparql() queries, made on first use
        self.closed = False

    # ---- Backend: items ----
    def stored(self, ids: Iterable[str]) -> set[str]:
        """The ids among `ids` that are stored items (a kind among their types)."""
        return self.items.stored(ids)

    def write_items(self, items: Sequence[tuple[ItemSpec, Rows]]) -> None:
        """Payloads first, in one commit (a crash before the graph commit leaves orphan blobs only), then every
        item's triples and index rows in one transaction, a few statements for the whole batch."""
        self.payloads.put_many([spec.content for spec, _ in items], "content")
        with self.transaction():
            ids = self.items.memo()
            self.items.insert_rows([row for _, rows in items for row in rows], ids)
            self.index.write(items, ids)

    def describe(self, nodes: Iterable[URIRef]) -> Graph:
        """Stored triples of the item nodes, rdf:type triples of the other nodes."""
        return self.items.describe(nodes)

    def cards(self, ids: Sequence[str]) -> list[Card]:
        """Search cards, in the order of `ids`, read straight from the quadstore tables (three queries for all)."""
        return self.items.cards(ids)

    def search(self, query: retrieval.SearchQuery) -> list[retrieval.Scored]:
        """Ranked (id, score) results: the ranking of retrieval.py asking the embedded index."""
        q = self.index.query(query)
        return [] if q is None else [retrieval.Scored(r.id, r.score) for r in retrieval.rank(self.index, q)]

    def with_signature(self, signature: str) -> list[str]:
        """Ids of live items with this violation signature (one indexed lookup on the data table)."""
        return self.items.with_signature(signature)

    def count(self) -> int:
        """Items stored, counted on the retrieval index."""
        return self.index.count()

    # ---- Backend: updates ----
    def count_use(self, id: str, success: bool | None) -> UseCounts:
        """Increment the counters in place (typed xsd:nonNegativeInteger values stay typed)."""
        return self.items.count_use(id, success)

    def add_triples(self, g: Graph) -> None:
        """Insert the triples of `g`."""
        self.items.insert(g)

    def remove_triples(self, subject: URIRef, predicate: URIRef, obj: Identifier | None = None) -> None:
        """Delete (subject, predicate, obj), or every value of (subject, predicate)."""
        self.items.remove(subject, predicate, obj)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction of this process, serialized with every other process's writes (re-entrant: an inner
        block joins the outer one); see world.World.writing. The kept item sets of the index follow its commit."""
        self.require_writable()
        if self.depth:
            yield from self._joined()
            return
        with self.world.writing(), postings.recording(self.db) as marks:
            before = self.index.state()
            yield from self._joined()
        self.index.committed(before, marks)

    def _joined(self) -> Iterator[None]:
        """Run the transaction's block one level deeper."""
        self.depth += 1
        try:
            yield
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
    def sparql(self, query: Checked, bindings: Mapping[str, Identifier], limit: int) -> TermRows:
        """Run a checked query's parsed form with rdflib's engine over a live view of the quadstore (no copy)."""
        if self._rdflib is None:
            self._rdflib = self.quadstore.rdflib_graph()
        result = self._rdflib.query(query.parsed, initBindings=bindings)
        if result.type == "ASK":
            return TermRows(("ask",), ((bool(result.askAnswer),),), False)
        columns = tuple(str(v) for v in result.vars or ())
        rows: list[tuple[Cell, ...]] = []
        for row in result:
            assert isinstance(row, ResultRow)  # a SELECT (an ASK returned above) iterates its rows
            if len(rows) == limit:
                return TermRows(columns, tuple(rows), True)
            rows.append(tuple(row))
        return TermRows(columns, tuple(rows), False)

    def all_triples(self) -> Graph:
        """The whole store (ontology and items) as an rdflib Graph."""
        return self.items.all_triples()

    def close(self) -> None:
        """Close the World and the blob file (every write was committed by its transaction; a second close does
        nothing)."""
        if self.closed:
            return
        self.world.close()
        self.payloads.close()
        self.closed = True
