"""Progress of a running ablation, task by task with an ETA, on a terminal: a thread counts the records the jobs'
part files hold (every worker appends one per finished task) and rewrites one status line on stderr.

The ETA is the mean wall time of the tasks finished in this session times the tasks left (records resumed from an
earlier session count as done but not in the mean).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

EVERY = 1.0  # seconds between updates


def records_in(part: Path) -> int:
    """Complete records a part file holds (0 before it exists)."""
    try:
        return part.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def last_record(parts: list[Path]) -> dict:
    """The newest complete record among the part files ({} when there is none)."""
    files = [p for p in parts if p.exists() and records_in(p)]
    if not files:
        return {}
    newest = max(files, key=lambda p: p.stat().st_mtime)
    lines = newest.read_bytes().splitlines()
    try:
        return json.loads(lines[-1]) if lines and newest.read_bytes().endswith(b"\n") else {}
    except json.JSONDecodeError:
        return {}


def duration(seconds: float) -> str:
    """A short human duration: 42s, 3m05s, 1h02m."""
    s = int(max(0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def status_line(done: int, planned: int, fresh: int, elapsed: float, last: dict) -> str:
    """One progress line: count and share done, the last task finished, elapsed time and ETA."""
    share = 100 * done // planned if planned else 100
    where = f" · last: {last['condition']}-r{last['repeat']} {last['phase']} {last['task_id']}" if last else ""
    eta = f" · ETA {duration(elapsed / fresh * (planned - done))}" if fresh else ""
    return f"[{done}/{planned}] {share}%{where} · {duration(elapsed)} elapsed{eta}"


class Progress:
    """Reports an ablation's progress on `stream` (stderr) while inside a `with` block, if `enabled`.

    Args:
        parts: the jobs' part files.
        planned: records the whole ablation writes.
        enabled: None: only when the stream is a terminal.
        stream: where the line goes (stderr by default).
    """

    def __init__(self, parts: list[Path], planned: int, enabled: bool | None = None, stream=None):
        self.parts, self.planned, self.stream = parts, planned, stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.start_count, self.started = 0, 0.0

    def __enter__(self):
        if self.enabled:
            self.start_count, self.started = self.count(), time.monotonic()
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.show(final=True)

    def count(self) -> int:
        """Records written so far."""
        return sum(records_in(p) for p in self.parts)

    def show(self, final: bool = False) -> None:
        """Rewrite the status line (a newline after the last one)."""
        done = self.count()
        line = status_line(done, self.planned, done - self.start_count, time.monotonic() - self.started,
                           last_record(self.parts))
        self.stream.write("\r\x1b[2K" + line + ("\n" if final else ""))
        self.stream.flush()

    def _loop(self) -> None:
        """Update every EVERY seconds until stopped."""
        while not self._stop.wait(EVERY):
            self.show()
