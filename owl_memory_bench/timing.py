"""Latency measurement for the benchmarks: one call timed with the garbage collector paused, percentile summaries."""

from __future__ import annotations

import gc
import statistics
import time


def timed(fn, *args, **kwargs):
    """(result, milliseconds) of one call, the garbage collector paused during it as timeit pauses it (every engine
    alike: a collection that the allocations of one engine's query set off would land in another's timing)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        t = time.perf_counter()
        out = fn(*args, **kwargs)
        return out, (time.perf_counter() - t) * 1000
    finally:
        if was_on:
            gc.enable()


def pct(xs: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of xs."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def summary_ms(xs: list[float]) -> dict:
    """p50/p95/max/mean of a list of milliseconds."""
    return {"p50": round(pct(xs, 50), 3), "p95": round(pct(xs, 95), 3), "max": round(max(xs), 3),
            "mean": round(statistics.fmean(xs), 3), "n": len(xs)}
