"""The wall time local work runs under: QueryTimeout raised inside a block past its seconds (local SPARQL
evaluation, a validation whose shapes run SPARQL), on whichever thread runs it. rdflib's evaluator is Python, so
the stop lands between two of its steps. On the main thread a real-time timer signal raises it; on any other thread
(a library user's worker, a web server's request thread) a timer thread asks the interpreter to raise it in the
working thread at its next step (CPython's asynchronous exception), and takes the request back if the block ended
first.
"""

from __future__ import annotations

import ctypes
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import QueryTimeout


def _message(seconds: float) -> str:
    return f"the query ran past the wall-time limit of {seconds:g} s; narrow the query or add LIMIT"


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """QueryTimeout inside the block past `seconds` of wall time, on any thread; limits nest."""
    if threading.current_thread() is threading.main_thread():
        with _by_signal(seconds):
            yield
    else:
        with _by_timer_thread(seconds):
            yield


@contextmanager
def _by_signal(seconds: float) -> Iterator[None]:
    def stop(signum, frame):
        raise QueryTimeout(_message(seconds))
    previous = signal.signal(signal.SIGALRM, stop)
    outer = signal.setitimer(signal.ITIMER_REAL, seconds)[0]  # an enclosing limit's time left, restored below
    try:
        yield
    finally:
        elapsed = seconds - signal.setitimer(signal.ITIMER_REAL, 0)[0]
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - elapsed, 0.001))


@contextmanager
def _by_timer_thread(seconds: float) -> Iterator[None]:
    message = _message(seconds)

    class Stopped(QueryTimeout):  # raised by class in the working thread, so it carries its message itself
        def __init__(self) -> None:
            super().__init__(message)

    worker = ctypes.c_ulong(threading.get_ident())
    lock = threading.Lock()
    state = {"inside": True, "fired": False}

    def fire() -> None:
        with lock:
            if state["inside"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(worker, ctypes.py_object(Stopped))

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except Stopped:
        raise QueryTimeout(message) from None
    finally:
        with lock:
            state["inside"] = False
            timer.cancel()
            if state["fired"]:  # fired as the block ended: take back a stop not yet delivered
                ctypes.pythonapi.PyThreadState_SetAsyncExc(worker, None)
