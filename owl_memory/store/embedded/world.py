"""The graph file of an embedded memory (`memory.sqlite3`): created atomically, opened with its formats checked, an
older one upgraded on its first writable open, and the write transaction every change runs in."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rdflib import URIRef
from rdflib.namespace import OWL, PROV, RDF
from rdflib.term import Node

from ...adapters import owlready2 as quadstore
from ...errors import MemoryCorrupt, VersionMismatch
from ...resources import memory_ontology
from ...vocab import ITEM, KINDS, OM
from ..export import TBOX_IRI
from ..locking import WriteLock
from ..retrieval import normalized_key
from ..sqlite_files import BUGS, connect, typed_error
from . import postings
from .keys import key_token

# owl-memory's store format, kept in PRAGMA user_version (0: a memory made before it was recorded; 2: om_order holds
# filter-combination tokens and om_terms / om_docs / om_df the text postings, 3: om_df's item sets uncompressed,
# 4: item sets per (token, tf) and per document length instead of walk lists, 5: their delta tables; each built on
# the first writable open of an older memory, 4 -> 5 by adding the empty deltas; 6: ontology key tokens name the
# ontology's normalized IRI, vocab.ontology_iri, rewritten on the first writable open)
FORMAT = 6
ORDERED = 5  # the first format with every order, postings and delta table
# The retrieval index: words of title/summary/tags, key tokens of the item's kind and applicability links, and the
# immutable ranking fields, so one FTS5 query filters, scores and orders (see index.py).
_FTS = ("CREATE VIRTUAL TABLE IF NOT EXISTS om_fts USING fts5(title, summary, tags, keys, item UNINDEXED, "
        "priority UNINDEXED, confidence UNINDEXED, tokenize='unicode61')")
# How this process writes the graph file (WAL mode, set at creation): a commit is in the WAL when it returns, so a
# kill -9 loses nothing that returned, but it is not fsynced (a power loss or OS crash may drop the last commits, never
# corrupt the file; the blob file does the same); the WAL is copied back into the file every 3,000 pages of 32 KB
# (~70 adds at 100k items, ~42 pages each; not every ~24 as with SQLite's default 1,000) and then rewritten from its
# start, its file kept up to 128 MB (~3,000 pages and a commit): cut back to 64 MB, as before, the commit that cut it
# and the one that grew it past 64 MB again took 10-60 ms each (two more slow adds per checkpoint). Its page cache
# may grow to 64 MB (SQLite's default 2 MB made a bulk load past 100k items 1.5x slower: every insert into the
# quadstore's indexes read pages back); pages are cached only as they are read, so a small memory stays small.
_WRITER_PRAGMAS = ("PRAGMA synchronous=NORMAL", "PRAGMA wal_autocheckpoint=3000", "PRAGMA journal_size_limit=134217728",
                   "PRAGMA cache_size=-65536")
# How `create` writes the temporary graph file: no sync per commit and the rollback journal in memory (about 16
# fdatasyncs and a journal file less per new memory; the finished file is fsynced before its rename).
_CREATING_PRAGMAS = ("PRAGMA synchronous=OFF", "PRAGMA journal_mode=MEMORY")
NO_TERM = 0  # the id of a term a read-only memory made by an older owl-memory lacks: no storid is 0, so no row holds it
TERMS: list[URIRef] = [RDF.type] + [OM[n] for n in (
    "title", "summary", "scope", "confidence", "priority", "createdAt", "useCount", "successCount", "failureCount",
    "contentRef", "contentHash", "tag", "violationSignature", "actionSchema", "verificationHook",
    "appliesToOntology", "appliesToTaskType", "preventsFailureMode", "refines", "hasException", "supersedes",
    "conflictsWith", "groundedByEpisode", "derivedFromTrace", "archived", "TargetOntology", "TaskType", "FailureMode",
    "Run", "Trajectory", "aboutClass", "aboutProperty", *KINDS)] + [
    PROV.wasGeneratedBy, PROV.wasDerivedFrom, PROV.Activity, OWL.NamedIndividual]


class World:
    """An open graph file: its quadstore, the quadstore ids of the memory ontology's terms, and whether it has the
    order and postings tables (`ordered`; a read-only memory made before them has not).

    Args:
        path: the graph file (`memory.sqlite3`, made by `create`).
        read_only: open it for reading only (the memory's files or folder cannot be written).
        lock: the memory's inter-process write lock.
    """

    def __init__(self, path: Path, read_only: bool, lock: WriteLock):
        self.path, self.read_only, self.lock = path, read_only, lock
        self.quadstore = _open(path, read_only)
        self.db = self.quadstore.db
        for pragma in _WRITER_PRAGMAS * (not read_only):
            self.db.execute(pragma)
        self.context = self.quadstore.ontology_id(str(ITEM))  # the quadstore graph items are written into
        self.terms = self._term_ids()
        self.ordered = user_version(self.db) >= ORDERED
        self.normalized = user_version(self.db) >= FORMAT
        if not read_only:
            self._upgrade()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """One write transaction: the write lock (a bounded wait, then MemoryLocked naming the holder), then BEGIN
        IMMEDIATE, so reads inside the block see every commit of other processes; commits the block or rolls it
        back."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self.db.commit()
            except BaseException as e:
                self.db.rollback()
                if isinstance(e, sqlite3.DatabaseError) and not isinstance(e, BUGS):
                    raise typed_error(e, self.path) from e  # a full disk at the commit, a page damaged mid-write
                raise

    def close(self) -> None:
        """Close the quadstore and its connection."""
        self.quadstore.close()

    def _term_ids(self) -> dict[URIRef, int]:
        """The quadstore ids of the memory ontology's terms; those a memory made by an older owl-memory lacks are
        added on a writable open, and are NO_TERM (matching nothing) on a read-only one."""
        ids = {t: self.quadstore.storid(t) for t in TERMS}
        if None in ids.values() and not self.read_only:
            with self.writing():
                return {t: made_id(self.quadstore, t) for t in TERMS}
        return {t: NO_TERM if i is None else i for t, i in ids.items()}

    def _upgrade(self) -> None:
        """Bring a memory made by an older owl-memory up to date: the order and postings tables (built once, the
        format recorded)."""
        if not self.normalized:
            with self.writing():
                version = user_version(self.db)
                if self._normalize_keys() or version < 4:
                    postings.build(self.db, combination_skipped(self.terms))
                else:  # format 5 only added the (empty) delta tables
                    postings.create(self.db)
                self.db.execute(f"PRAGMA user_version = {FORMAT}")
            self.ordered = self.normalized = True

    def _normalize_keys(self) -> bool:
        """Rewrite the ontology key tokens of the index rows to name normalized IRIs (format 6); whether any
        changed (the order and postings tables are then rebuilt from them)."""
        prefix, changed = f"k{self.terms[OM.appliesToOntology]}x", []
        for rowid, keys in self.db.execute("SELECT rowid, keys FROM om_fts").fetchall():
            new = " ".join(sorted({self._normalized_token(t) if t.startswith(prefix) else t for t in keys.split()}))
            if new != keys:
                changed.append((new, rowid))
        self.db.executemany("UPDATE om_fts SET keys = ? WHERE rowid = ?", changed)
        return bool(changed)

    def _normalized_token(self, token: str) -> str:
        """An ontology key token naming the ontology's normalized IRI."""
        p, o = token[1:].split("x", 1)
        return key_token(int(p), made_id(self.quadstore, normalized_key(OM.appliesToOntology,
                                                                         self.quadstore.iri(int(o)))))


def create(path: Path) -> None:
    """Create the graph file atomically: built under a temporary name, renamed into place when complete.

    Call it holding the memory's write lock; leftovers of creators killed half-way are removed first. The temporary
    file is written without SQLite's syncs and journal file (_CREATING_PRAGMAS): nothing reads it before it is
    complete, fsynced once and renamed, so a crash half-way leaves only a leftover.
    """
    for stale in path.parent.glob(f".{path.name}.creating-*"):
        stale.unlink()
    tmp = path.with_name(f".{path.name}.creating-{os.getpid()}")
    db = connect(tmp, read_only=False)
    for pragma in _CREATING_PRAGMAS:
        db.execute(pragma)
    store = quadstore.new_world(tmp, db)
    store.db.execute(_FTS)
    postings.create(store.db)
    store.db.execute(f"PRAGMA user_version = {FORMAT}")
    store.ontology_id(str(ITEM))
    store.load_ntriples(str(TBOX_IRI), memory_ontology().serialize(format="nt", encoding="utf-8"))
    for t in TERMS:
        store.storid(t, True)
    store.commit()
    store.db.execute("PRAGMA journal_mode=WAL")
    store.close()  # the last connection checkpoints the WAL into the file
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.rename(tmp, path)
    _fsync_dir(path.parent)


def made_id(store: quadstore.Quadstore, iri: Node) -> int:
    """The quadstore id of an IRI, made when new."""
    found = store.storid(iri, True)
    assert found is not None  # storid(..., create=True) makes the id it does not find
    return found


def combination_skipped(terms: dict[URIRef, int]) -> tuple[int, ...]:
    """The quadstore ids of the properties whose key tokens take no part in filter combinations (keys.py)."""
    return terms[RDF.type], terms[OM.aboutClass], terms[OM.aboutProperty]


def user_version(db: sqlite3.Connection) -> int:
    """The owl-memory store format recorded in the graph file."""
    return db.execute("PRAGMA user_version").fetchone()[0]


def _open(path: Path, read_only: bool) -> quadstore.Quadstore:
    """Open an existing graph file as a non-exclusive World; typed errors for damage, locks and versions."""
    db = connect(path, read_only)
    try:
        _check_format(db, path)
        return quadstore.open_world(path, db)
    except sqlite3.DatabaseError as e:
        db.close()
        raise typed_error(e, path) from e
    except BaseException:
        db.close()
        raise


def _check_format(db: sqlite3.Connection, path: Path) -> None:
    """MemoryCorrupt when the file is no memory graph, VersionMismatch when it is a quadstore or owl-memory format this
    code does not read."""
    tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    needed = quadstore.TABLES | {"om_fts"}
    if not needed <= tables:
        raise MemoryCorrupt(f"{path} is an SQLite file but not an owl-memory graph (missing tables: "
                            f"{', '.join(sorted(needed - tables))}); point --memory at a memory folder")
    quadstore.check_version(db, path)
    fmt = user_version(db)
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
