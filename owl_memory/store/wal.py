"""Copying the graph file's WAL back into the file on a thread of its own, off the writer's commits.

A commit appends its pages to the WAL (it is durable there: nothing of it is lost when the process dies); SQLite
copies the WAL back into the file once it holds the writer's autocheckpoint limit of pages (`wal_autocheckpoint`),
inside the commit that reaches it, and starts the WAL over at the next write. That copy writes every page changed
since the last one and waits for two fsyncs: at 100k items ~3,000 pages, 90-150 ms, in one add of every ~70. A
Checkpointer copies the WAL from START pages on, after each commit, on its own connection and thread (a PASSIVE
checkpoint: it never blocks the writer, and it releases the GIL while SQLite works), so when the writer reaches its
limit there is little or nothing left to copy; SQLite's own checkpoint stays the one that starts the WAL over, and the
bound on its size when the thread falls behind.
"""

from __future__ import annotations

import sqlite3
import struct
import threading
from pathlib import Path

START = 2000  # WAL pages from which each commit wakes the thread (the writer's own limit is 3,000, quadstore.py)


class Checkpointer:
    """Checkpoints one WAL-mode SQLite file on a thread started on first need; `close` stops and joins it."""

    def __init__(self, path: Path) -> None:
        self.path, self.shm = path, path.with_name(path.name + "-shm")
        self.wake, self.stopping = threading.Event(), False
        self.thread: threading.Thread | None = None

    def committed(self) -> None:
        """A write of this process committed: wake the thread once the WAL holds START pages or more."""
        if self.stopping or wal_pages(self.shm) < START:
            return
        if self.thread is None or not self.thread.is_alive():
            self.thread = threading.Thread(target=self._run, name="owl-memory-checkpoint", daemon=True)
            self.thread.start()
        self.wake.set()

    def close(self) -> None:
        """Stop the thread (after the checkpoint it is running, if any) and wait for it."""
        self.stopping = True
        self.wake.set()
        if self.thread is not None:
            self.thread.join()

    def _run(self) -> None:
        """Checkpoint once per wake until stopped; an SQLite error ends the thread (the writer's own checkpoints go
        on)."""
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA synchronous=NORMAL")
            while True:
                self.wake.wait()
                self.wake.clear()
                if self.stopping:
                    return
                db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:
            return
        finally:
            db.close()


def wal_pages(shm: Path) -> int:
    """Pages in the WAL now, read from its index (the -shm file: mxFrame, a native-order u32 at byte 16 of the
    header SQLite's walformat documents); 0 when it cannot be read."""
    try:
        with open(shm, "rb") as f:
            head = f.read(20)
    except OSError:
        return 0
    return struct.unpack_from("=I", head, 16)[0] if len(head) == 20 else 0
