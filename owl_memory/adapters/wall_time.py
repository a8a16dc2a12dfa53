"""The wall time local work runs under: a real-time timer that raises QueryTimeout inside a block (local SPARQL
evaluation, a validation whose shapes run SPARQL). rdflib's evaluator is Python, so the signal lands between two
steps. Only the main thread gets signals: work on other threads (the agent's tools) runs in a QueryWorker process
with its own limits.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import QueryTimeout


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """QueryTimeout inside the block past `seconds` of wall time (on the main thread; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise QueryTimeout(f"the query ran past the wall-time limit of {seconds:g} s; narrow the query or add LIMIT")
    previous = signal.signal(signal.SIGALRM, stop)
    outer = signal.setitimer(signal.ITIMER_REAL, seconds)[0]  # an enclosing limit's time left, restored below
    try:
        yield
    finally:
        elapsed = seconds - signal.setitimer(signal.ITIMER_REAL, 0)[0]
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - elapsed, 0.001))
