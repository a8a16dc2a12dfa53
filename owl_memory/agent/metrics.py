"""What a run cost and leaked, measured on the LM's own call history and the toolbox's counters (the runner, the
LLM proposers and the agentic sprint all measure this way).

`lm_calls` and the token counts cover every LM call of a run; the sub-LM part of them is counted apart: a call is a
sub-LM call when it is a bare prompt (dspy.RLM's llm_query; dspy's adapter sends every RLM step and extraction as
chat messages), or any call of a separate sub-LM. Cost is what litellm
priced each call at from its local price map (LITELLM_LOCAL_MODEL_COST_MAP: no network); a call that used no tokens
costs 0 (a scripted LM), and a model missing from the map makes the run's cost unknown (None).
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from ..model import RunMetrics
from .leakage import measure

SPENT = "owl_memory_spent"  # the attribute a failing run's exception carries its metrics and trajectory in


def calls_before(lm) -> set:
    """Identities of the LM history entries that exist before a run."""
    return {id(e) for e in getattr(lm, "history", None) or []}


def calls_since(lm, before: set) -> list[dict]:
    """The LM history entries a run added (dspy keeps a bounded list, so identities are compared, not indexes)."""
    return [e for e in getattr(lm, "history", None) or [] if id(e) not in before]


def is_sub_call(call: dict) -> bool:
    """True for a bare-prompt call (llm_query from the model's code), False for a formatted RLM step."""
    return call.get("messages") is None and call.get("prompt") is not None


def _tokens(calls: list[dict], key: str) -> int:
    """Tokens of one kind the calls report in their usage."""
    return sum(int((c.get("usage") or {}).get(key) or 0) for c in calls)


def counts(calls: list[dict], iterations: int) -> dict:
    """Iterations, LM calls and prompt/completion tokens from LM history entries."""
    return {"iterations": iterations, "lm_calls": len(calls), "prompt_tokens": _tokens(calls, "prompt_tokens"),
            "completion_tokens": _tokens(calls, "completion_tokens")}


def sub_counts(calls: list[dict]) -> dict:
    """Sub-LM calls (llm_query) and their prompt/completion tokens."""
    return {"sub_lm_calls": len(calls), "sub_prompt_tokens": _tokens(calls, "prompt_tokens"),
            "sub_completion_tokens": _tokens(calls, "completion_tokens")}


def cost(calls: list[dict]) -> float | None:
    """US dollars the calls cost by litellm's price map; None when a call that used tokens was not priced."""
    total = 0.0
    for c in calls:
        used = _tokens([c], "prompt_tokens") + _tokens([c], "completion_tokens")
        if c.get("cost") is None and used:
            return None
        total += float(c.get("cost") or 0.0)
    return round(total, 6)


def sent_chars(calls: list[dict]) -> int:
    """Characters of the messages (or bare prompts) sent in the calls."""
    def size(c):
        messages = c.get("messages") or []
        return len(c.get("prompt") or "") + sum(len(str(m.get("content") or "")) for m in messages
                                                if isinstance(m, dict))
    return sum(size(c) for c in calls)


def run_metrics(box, calls: list[dict], given: list[str], iterations: int, seconds: float,
                stdout_chars: int = 0, *, converged: bool = False, sub_calls: list[dict] = ()) -> RunMetrics:
    """One run's metrics: LM calls and tokens (bare-prompt calls in `calls`, and `sub_calls`, the calls of a
    separate sub-LM, are also counted as sub-LM calls), cost, the payload characters (every handle the tools handed
    out) found in the LM's messages beyond the texts the model was `given` and the vocabulary the tools showed, and
    the toolbox's counters."""
    every, sub = [*calls, *sub_calls], [*(c for c in calls if is_sub_call(c)), *sub_calls]
    payloads = [(ref.kind, box.load(ref)) for ref in box.payloads]
    leak = measure(every, payloads, allowed=[*given, *sorted(box.vocabulary)])
    stats = box.stats
    return RunMetrics(**counts(every, iterations), **sub_counts(sub),
                      converged=converged, cost_usd=cost(every), prompt_chars=sent_chars(every), **leak,
                      large_returns=stats.large_returns, max_window=stats.max_window,
                      max_return=stats.max_return, stdout_chars=stdout_chars, tool_calls=stats.tool_calls,
                      tool_errors=stats.tool_errors, read_chars=box.budget.spent, seconds=round(seconds, 3),
                      constraint_violations=stats.constraint_violations)


def summed(a: RunMetrics, b: RunMetrics) -> RunMetrics:
    """Two runs' metrics as one: counts and characters added (per payload kind too), largest values kept, converged
    when both were, cost unknown when either is."""
    out = {}
    for f in fields(RunMetrics):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, dict):
            out[f.name] = {k: x.get(k, 0) + y.get(k, 0) for k in sorted({*x, *y})}
        elif isinstance(x, bool):
            out[f.name] = x and y
        elif x is None or y is None:
            out[f.name] = None
        else:
            out[f.name] = max(x, y) if f.name.startswith("max_") else round(x + y, 6 if f.name == "cost_usd" else 3)
    return RunMetrics(**out)


def note_spent(error: BaseException, metrics: RunMetrics, trajectory: Path) -> None:
    """Put on a failing run's exception what the run spent and where its trajectory is (then it is re-raised)."""
    setattr(error, SPENT, (metrics, trajectory))


def spent(error: BaseException) -> tuple[RunMetrics, Path] | None:
    """The metrics and trajectory a failing run noted on its exception, or None for any other exception."""
    return getattr(error, SPENT, None)
