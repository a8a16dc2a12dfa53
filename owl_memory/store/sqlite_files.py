"""The SQLite files of an embedded memory: connections, typed errors for damage and locks, integrity checks."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..errors import LoadError, MemoryCorrupt, MemoryLocked
from .locking import lock_wait


def connect(path: Path, read_only: bool, isolation_level: str | None = "DEFERRED") -> sqlite3.Connection:
    """An SQLite connection that has read the schema (so a non-SQLite file fails here); read-only when asked.

    A read-only WAL file whose folder cannot be written has no shared-memory file to use: it is opened immutable.
    """
    uri = f"file:{quote(str(path))}"
    last: sqlite3.DatabaseError | None = None
    for options in (["?mode=ro", "?immutable=1"] if read_only else [""]):
        db = sqlite3.connect(uri + options, uri=True, isolation_level=isolation_level, timeout=lock_wait(),
                             check_same_thread=False)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.DatabaseError as e:
            db.close()
            last = e
    raise typed_error(last, path) from last


def typed_error(e: sqlite3.DatabaseError, path: Path) -> Exception:
    """The typed error an SQLite failure on a memory file stands for: locked, damaged, or unreadable."""
    text = str(e)
    if "locked" in text or "busy" in text:
        return MemoryLocked(f"{path} is locked by another process that opened it exclusively (an older owl-memory, "
                            f"or another SQLite tool); close that process and retry ({text})")
    if isinstance(e, sqlite3.OperationalError) and "unable to open" in text:
        return LoadError(f"cannot open the memory graph ({text}); check the file's permissions", source=str(path))
    return MemoryCorrupt(f"{path} is damaged (SQLite: {text}); restore the memory folder from a backup")


def integrity_check(db: sqlite3.Connection) -> list[str]:
    """SQLite's integrity check: [] when the file is sound, else up to 20 of its messages."""
    try:
        rows = [r[0] for r in db.execute("PRAGMA integrity_check(20)")]
    except sqlite3.DatabaseError as e:
        return [str(e)]
    return [] if rows == ["ok"] else rows
