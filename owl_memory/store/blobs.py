"""Payloads behind handles: a content-addressed SQLite blob store with capped reads and read budgets."""

from __future__ import annotations

import re
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CapExceeded, UnknownItem
from ..model.handles import Ref, Window, sha256
from .locking import lock_wait
from .sqlite_files import connect, integrity_check, typed_error, typed_reads

MAX_READ = 512
_PLAIN = re.compile(r"[^\x00\ud800-\udfff]*")  # no NUL, no lone surrogate: SQLite text keeps it exactly
_WIDE = "utf-32-le"
REF_KINDS = ("prompt", "ontology", "trace", "window", "report", "delta", "results", "content")

# A window: characters of a text row, 4-byte units of a wide (UTF-32) row.
_WINDOW = ("SELECT CASE typeof(data) WHEN 'text' THEN substr(data, ?, ?) ELSE substr(data, ?, ?) END "
           "FROM blobs WHERE key = ?")


def _stored(text: str) -> str | bytes:
    """How a payload is stored: SQLite text when it is plain, else UTF-32 bytes (one 4-byte unit per character).

    SQLite's substr stops at a NUL in text and sqlite3 cannot encode lone surrogates, so such payloads are stored
    as bytes whose byte offsets are 4 x character offsets: windows stay exact and cost only the window.
    """
    return text if _PLAIN.fullmatch(text) else text.encode(_WIDE, "surrogatepass")


def _text(value: str | bytes) -> str:
    """A stored payload (or a window of it) back as the exact str that was put."""
    return value if isinstance(value, str) else value.decode(_WIDE, "surrogatepass")


@dataclass
class ReadBudget:
    """A run's read allowance: characters in all, reads per handle and the per-read cap.

    Args:
        total_chars: characters all reads of the run may return together.
        reads_per_handle: reads allowed on any one handle.
        max_read: characters one read may return.
    """

    total_chars: int = 20_000
    reads_per_handle: int = 64
    max_read: int = MAX_READ
    spent: int = field(default=0, init=False)  # characters returned so far
    reads: dict[str, int] = field(default_factory=dict, init=False)  # reads so far by handle key
    largest: int = field(default=0, init=False)  # the most characters one read returned

    def allow(self, key: str, wanted: int) -> int:
        """Characters a read of `wanted` on `key` may return; raises CapExceeded when the budget is spent."""
        if self.reads.get(key, 0) >= self.reads_per_handle:
            raise CapExceeded(f"read limit of {self.reads_per_handle} reads on this handle reached; "
                              "search for what you need instead of paging through everything")
        left = self.total_chars - self.spent
        if left <= 0:
            raise CapExceeded(f"read budget of {self.total_chars} characters is spent; answer with what you have")
        return max(0, min(wanted, self.max_read, left))

    def charge(self, key: str, chars: int) -> None:
        """Record a read of `chars` characters on `key`."""
        self.spent += chars
        self.reads[key] = self.reads.get(key, 0) + 1
        self.largest = max(self.largest, chars)


class PayloadStore(ABC):
    """Content-addressed payloads behind handles (`Ref`); reads return capped windows, never whole payloads.

    Every backend has one (`Memory.blobs`); tools, runs and workspaces read and write payloads through it.
    """

    max_read: int

    @abstractmethod
    def put(self, text: str, kind: str = "content") -> Ref:
        """Store `text` (idempotent, keyed by sha256) and return its handle."""

    @abstractmethod
    def ref(self, key: str | Ref) -> Ref:
        """The handle stored under `key`; UnknownItem when there is none."""

    @abstractmethod
    def read(self, key: str | Ref, start: int = 0, length: int | None = None,
             budget: ReadBudget | None = None) -> Window:
        """A window of at most max_read characters; charges `budget` when given."""

    @abstractmethod
    def load(self, key: str | Ref) -> str:
        """The whole payload, for library code only (graph versions, deltas); never hand it to a model."""

    @abstractmethod
    def find(self, key: str | Ref, pattern: str, limit: int = 20) -> list[int]:
        """Offsets (never text) where `pattern` occurs literally in the payload, at most `limit` of them."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""


def _blob_file(store: BlobStore) -> Path:
    """The SQLite file of a blob store (what its typed errors name)."""
    return store.path


@typed_reads(_blob_file)
class BlobStore(PayloadStore):
    """The embedded payload store: one SQLite file (WAL); reads are capped and return windows.

    Args:
        path: the SQLite file; created when missing (unless read_only).
        max_read: characters one read returns at most.
        read_only: open without writing anything (a memory on a read-only disk or folder); `put` then fails.
    """

    def __init__(self, path: str | Path, max_read: int = MAX_READ, read_only: bool = False):
        self.path, self.max_read = Path(path), max_read
        if read_only:
            self.db = connect(self.path, read_only=True, isolation_level=None)
            return
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=lock_wait())
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, kind TEXT, size INTEGER, "
                            "data TEXT)")
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise typed_error(e, self.path) from e

    def put(self, text: str, kind: str = "content") -> Ref:
        """Store `text` (idempotent) and return its handle."""
        self.put_many([text], kind)
        sha = sha256(text)
        return Ref(f"sha256:{sha}", kind, len(text), sha)

    def put_many(self, texts: Sequence[str], kind: str = "content") -> None:
        """Store many texts (idempotent) in one commit."""
        if kind not in REF_KINDS:
            raise ValueError(f"blob kind {kind!r} is not one of {', '.join(REF_KINDS)}")
        rows = [(f"sha256:{sha256(t)}", kind, len(t), _stored(t)) for t in texts]
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", rows)

    def ref(self, key: str | Ref) -> Ref:
        """The handle stored under `key`; UnknownItem when there is none."""
        key = key.key if isinstance(key, Ref) else str(key)
        row = self.db.execute("SELECT kind, size FROM blobs WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise UnknownItem(f"no payload under handle {key[:80]!r}; use a handle a tool returned")
        return Ref(key, row[0], row[1], key.removeprefix("sha256:"))

    def read(self, key: str | Ref, start: int = 0, length: int | None = None,
             budget: ReadBudget | None = None) -> Window:
        """A window of at most max_read characters; charges `budget` when given."""
        ref = self.ref(key)
        start = min(max(0, int(start)), ref.size)
        wanted = self.max_read if length is None else max(0, int(length))
        n = min(wanted, self.max_read) if budget is None else min(budget.allow(ref.key, wanted), self.max_read)
        (text,) = self.db.execute(_WINDOW, (start + 1, n, 4 * start + 1, 4 * n, ref.key)).fetchone()
        text = _text(text)
        if budget is not None:
            budget.charge(ref.key, len(text))
        return Window(text, start, start + len(text), ref.size)

    def load(self, key: str | Ref) -> str:
        """The whole payload, for library code (graph versions, undo); never hand it to a model."""
        ref = self.ref(key)
        return _text(self.db.execute("SELECT data FROM blobs WHERE key = ?", (ref.key,)).fetchone()[0])

    def find(self, key: str | Ref, pattern: str, limit: int = 20) -> list[int]:
        """Offsets (never text) where `pattern` occurs literally in the payload, at most `limit` of them."""
        return find_offsets(self.load(key), pattern, limit)

    def integrity(self) -> list[str]:
        """SQLite's integrity check of the blob file: [] when sound, else its messages."""
        return integrity_check(self.db)

    def close(self) -> None:
        """Close the SQLite connection."""
        self.db.close()


def find_offsets(data: str, pattern: str, limit: int) -> list[int]:
    """Offsets where `pattern` occurs literally in `data` (overlapping ones too), at most `limit` of them."""
    hits: list[int] = []
    i = -1
    while len(hits) < limit and pattern:
        i = data.find(pattern, i + 1)
        if i < 0:
            break
        hits.append(i)
    return hits
