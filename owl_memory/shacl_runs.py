"""The one place the package runs pySHACL, so every run is counted (repair rounds, trial checks, item checks)."""

from __future__ import annotations

import threading

_RUNS = [0]
_LOCK = threading.Lock()


def validate(data, **kwargs):
    """pyshacl.validate(data, **kwargs), counted; pySHACL is imported on first use (0.5 s of imports)."""
    import pyshacl

    with _LOCK:
        _RUNS[0] += 1
    return pyshacl.validate(data, **kwargs)


def runs() -> int:
    """pySHACL runs this process has made so far (read it before and after to count a span)."""
    return _RUNS[0]
