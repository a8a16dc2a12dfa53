"""Running an ablation's jobs: serially, or in a pool of spawned worker processes that a Ctrl-C, a SIGTERM or an
exception stops together.

While jobs run, SIGTERM raises `Stopped` (a KeyboardInterrupt) in the main process, as Ctrl-C raises
KeyboardInterrupt; the pool is then terminated. Each worker ignores SIGINT (the main process decides) and turns SIGTERM
into SystemExit, so it unwinds: dspy shuts its interpreter subprocess down and query workers are killed on the way
out. Nothing is left running and no worker waits forever for a task that will never come.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing import get_context

POLL = 0.5  # seconds between checks of a running pool


class Stopped(KeyboardInterrupt):
    """The ablation was asked to stop by SIGTERM (handled as Ctrl-C is: workers stopped, what finished is kept)."""


def run_all(jobs: list, run_job: Callable, parallel: bool) -> None:
    """Run `run_job(job)` for every job, in spawned processes when `parallel`; SIGTERM stops them as Ctrl-C does."""
    with _sigterm_raises():
        if not parallel:
            for job in jobs:
                run_job(job)
            return
        pool = get_context("spawn").Pool(min(len(jobs), os.cpu_count() or 1), initializer=_worker_signals)
        try:
            pending = pool.map_async(run_job, jobs, chunksize=1)
            while not pending.ready():
                pending.wait(POLL)
            pending.get()  # re-raises a worker's exception here
        except BaseException:
            pool.terminate()
            pool.join()
            raise
        # Done: each worker takes its stop sentinel and exits. terminate() here would take the task queue's read lock
        # for good and leave a worker that was reaching for its sentinel blocked on it.
        pool.close()
        pool.join()


@contextlib.contextmanager
def _sigterm_raises():
    """While inside, SIGTERM raises Stopped in the main thread (elsewhere: no change)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop(signum, frame) -> None:
    """SIGTERM handler of the main process."""
    raise Stopped(f"stopped by signal {signum}")


def _worker_signals() -> None:
    """Pool initializer: ignore Ctrl-C (the main process stops the pool), exit cleanly on SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
