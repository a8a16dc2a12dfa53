"""The SQLite files of an embedded memory: connections, typed errors for damage and locks, integrity checks."""

from __future__ import annotations

import functools
import sqlite3
import types
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import quote

from ..errors import DiskFull, LoadError, MemoryCorrupt, MemoryLocked, MemoryReadOnly
from .locking import lock_wait

Isolation = Literal["DEFERRED", "EXCLUSIVE", "IMMEDIATE"] | None  # sqlite3's isolation levels (None: autocommit)
Files = TypeVar("Files")  # a class whose methods read an SQLite file (typed_reads)


def connect(path: Path, read_only: bool, isolation_level: Isolation = "DEFERRED") -> sqlite3.Connection:
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
    assert last is not None  # the loop ran at least once, and every pass that did not return set it
    raise typed_error(last, path) from last


SQLITE_FULL = 13  # SQLite's primary result code for "database or disk is full"


def typed_error(e: sqlite3.DatabaseError, path: Path) -> Exception:
    """The typed error an SQLite failure on a memory file stands for: a full disk, locked, read-only, unreadable or
    damaged."""
    text = str(e)
    if getattr(e, "sqlite_errorcode", None) == SQLITE_FULL or "disk is full" in text:
        return DiskFull(f"the disk holding {path} is full (SQLite: {text}); free space and retry: nothing was lost, "
                        "the write was rolled back")
    if "locked" in text or "busy" in text:
        return MemoryLocked(f"{path} is locked by another process that opened it exclusively (an older owl-memory, "
                            f"or another SQLite tool); close that process and retry ({text})")
    if "readonly" in text or "read-only" in text:
        return MemoryReadOnly(f"{path} cannot be written (SQLite: {text}); the memory is read-only: copy it somewhere "
                              "writable to change it")
    if isinstance(e, sqlite3.OperationalError) and "unable to open" in text:
        return LoadError(f"cannot open the memory graph ({text}); check the file's permissions", source=str(path))
    return MemoryCorrupt(f"{path} is damaged (SQLite: {text}); restore the memory folder from a backup")


BUGS = (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError)  # our mistakes, not the file's


def typed_reads(path_of: Callable[[Files], Path]) -> Callable[[type[Files]], type[Files]]:
    """Class decorator: an SQLite failure inside any public method (a page damaged mid-read, a lock) leaves it as
    the typed error of the file `path_of(self)` (see typed_error), never as a raw sqlite3 exception."""

    def wrap(method: Callable[..., object]) -> Callable[..., object]:
        """The method, translating SQLite failures."""
        @functools.wraps(method)
        def guarded(self: Files, *args: object, **kwargs: object) -> object:
            try:
                return method(self, *args, **kwargs)
            except BUGS:
                raise
            except sqlite3.DatabaseError as e:
                raise typed_error(e, path_of(self)) from e
        return guarded

    def decorate(cls: type[Files]) -> type[Files]:
        """cls with every public method wrapped."""
        for name, value in list(vars(cls).items()):
            if isinstance(value, types.FunctionType) and not name.startswith("_"):
                setattr(cls, name, wrap(value))
        return cls

    return decorate


def integrity_check(db: sqlite3.Connection) -> list[str]:
    """SQLite's integrity check: [] when the file is sound, else up to 20 of its messages."""
    try:
        rows = [r[0] for r in db.execute("PRAGMA integrity_check(20)")]
    except sqlite3.DatabaseError as e:
        return [str(e)]
    return [] if rows == ["ok"] else rows
