"""What a run cost and leaked, measured on the LM's own call history and the toolbox's counters (the runner, the
LLM proposers and the agentic sprint all measure this way)."""

from __future__ import annotations

from dataclasses import fields

from ..model import RunMetrics
from .leakage import measure


def calls_before(lm) -> set:
    """Identities of the LM history entries that exist before a run."""
    return {id(e) for e in getattr(lm, "history", None) or []}


def calls_since(lm, before: set) -> list[dict]:
    """The LM history entries a run added (dspy keeps a bounded list, so identities are compared, not indexes)."""
    return [e for e in getattr(lm, "history", None) or [] if id(e) not in before]


def counts(calls: list[dict], iterations: int) -> dict:
    """Iterations, LM calls and prompt/completion tokens from LM history entries."""
    def tokens(key):
        return sum(int((c.get("usage") or {}).get(key) or 0) for c in calls)

    return {"iterations": iterations, "lm_calls": len(calls), "prompt_tokens": tokens("prompt_tokens"),
            "completion_tokens": tokens("completion_tokens")}


def run_metrics(box, calls: list[dict], given: list[str], iterations: int, seconds: float,
                stdout_chars: int = 0) -> RunMetrics:
    """One run's metrics: LM calls and tokens, the payload characters (every handle the tools handed out) found in
    the LM's messages beyond the texts the model was `given` and the vocabulary the tools showed, and the toolbox's
    counters."""
    payloads = [(ref.kind, box.load(ref)) for ref in box.payloads]
    leak = measure(calls, payloads, allowed=[*given, *sorted(box.vocabulary)])
    stats = box.stats
    return RunMetrics(**counts(calls, iterations), **leak, large_returns=stats["large_returns"],
                      max_window=stats["max_window"], max_return=stats["max_return"], stdout_chars=stdout_chars,
                      tool_calls=stats["tool_calls"], tool_errors=stats["tool_errors"], read_chars=box.budget.spent,
                      seconds=round(seconds, 3))


def summed(a: RunMetrics, b: RunMetrics) -> RunMetrics:
    """Two runs' metrics as one: counts and characters added (per payload kind too), largest values kept."""
    out = {}
    for f in fields(RunMetrics):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, dict):
            out[f.name] = {k: x.get(k, 0) + y.get(k, 0) for k in sorted({*x, *y})}
        else:
            out[f.name] = max(x, y) if f.name.startswith("max_") else round(x + y, 3)
    return RunMetrics(**out)
