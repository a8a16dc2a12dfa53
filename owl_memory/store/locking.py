"""The write lock of an embedded memory: one writing process at a time, a bounded wait, the holder named.

An advisory `flock` on `<memory>/write.lock`; the holder writes its pid, command and start time into the file so a
waiter that gives up can say what holds the lock. The kernel drops the lock when the holder dies (kill -9
included), so a crashed writer never leaves the memory locked.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from ..errors import MemoryLocked

LOCK_WAIT_S = 30.0  # default bounded wait for the write lock; OWL_MEMORY_LOCK_WAIT overrides it (seconds)


def lock_wait() -> float:
    """Seconds a writer waits for the write lock: $OWL_MEMORY_LOCK_WAIT, else LOCK_WAIT_S."""
    try:
        return max(0.0, float(os.environ.get("OWL_MEMORY_LOCK_WAIT", LOCK_WAIT_S)))
    except ValueError:
        return LOCK_WAIT_S


class WriteLock:
    """A re-entrant, inter-process write lock on one memory directory.

    Args:
        path: the lock file (`<memory>/write.lock`); created when missing.
        wait: seconds to wait for another process before raising MemoryLocked (default: lock_wait()).
    """

    def __init__(self, path: str | Path, wait: float | None = None):
        self.path, self.wait = Path(path), lock_wait() if wait is None else wait
        self.depth = 0
        self.fd: int | None = None  # the lock file's descriptor while this process holds the lock

    def __enter__(self) -> WriteLock:
        """Take the lock (or join this process's hold on it)."""
        if self.depth == 0:
            self.fd = self._acquire()
        self.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        """Release the lock when the outermost block ends."""
        self.depth -= 1
        if self.depth == 0:
            fd, self.fd = self.fd, None
            assert fd is not None  # set by the __enter__ that raised the depth from 0
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _acquire(self) -> int:
        """Take the lock within the bounded wait, record this process as holder, return the file descriptor."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline, pause = time.monotonic() + self.wait, 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise MemoryLocked(f"the memory at {self.path.parent} is being written by {self.holder()}; "
                                       f"waited {self.wait:g} s (set OWL_MEMORY_LOCK_WAIT to wait longer, "
                                       "or retry when that process is done)") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
        me = f"pid {os.getpid()} ({' '.join(sys.argv)[:120]}) since {datetime.now(timezone.utc):%H:%M:%S} UTC"
        os.ftruncate(fd, 0)
        os.pwrite(fd, me.encode("utf-8", "replace"), 0)
        return fd

    def holder(self) -> str:
        """Who holds the lock, as its holder wrote it: 'pid N (command) since T'."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        return text or "another process (it has not written its pid yet)"
