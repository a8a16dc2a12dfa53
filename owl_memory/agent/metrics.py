"""What a run cost and leaked, measured on the LM's own calls (model.LmCall, read off its history by adapters.dspy)
and the toolbox's counters (the runner, the LLM proposers and the agentic sprint all measure this way).

`lm_calls` and the token counts cover every LM call of a run; the sub-LM part of them is counted apart: a call is a
sub-LM call when it is a bare prompt (dspy.RLM's llm_query; dspy's adapter sends every RLM step and extraction as
chat messages), or any call of a separate sub-LM. Cost is what litellm
priced each call at from its local price map (LITELLM_LOCAL_MODEL_COST_MAP: no network); a call that used no tokens
costs 0 (a scripted LM), and a model missing from the map makes the run's cost unknown (None).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

from ..model import LmCall, LmUsage, RunMetrics
from .leakage import measure

SPENT = "owl_memory_spent"  # the attribute a failing run's exception carries its metrics and trajectory in


def run_metrics(box, calls: Sequence[LmCall], given: list[str], iterations: int, seconds: float,
                stdout_chars: int = 0, *, converged: bool = False, sub_calls: Sequence[LmCall] = ()) -> RunMetrics:
    """One run's metrics: LM calls and tokens (bare-prompt calls in `calls`, and `sub_calls`, the calls of a
    separate sub-LM, are also counted as sub-LM calls), cost, the payload characters (every handle the tools handed
    out) found in the LM's messages beyond the texts the model was `given` and the vocabulary the tools showed, and
    the toolbox's counters."""
    every, sub = [*calls, *sub_calls], [*(c for c in calls if c.bare_prompt), *sub_calls]
    payloads = [(ref.kind, box.load(ref)) for ref in box.payloads]
    leak = measure(every, payloads, allowed=[*given, *sorted(box.vocabulary)])
    used, sub_used, stats = LmUsage.of(every), LmUsage.of(sub), box.stats
    return RunMetrics(iterations=iterations, lm_calls=used.calls, prompt_tokens=used.prompt_tokens,
                      completion_tokens=used.completion_tokens, sub_lm_calls=sub_used.calls,
                      sub_prompt_tokens=sub_used.prompt_tokens, sub_completion_tokens=sub_used.completion_tokens,
                      converged=converged, cost_usd=used.cost_usd, prompt_chars=used.sent_chars, **leak,
                      large_returns=stats.large_returns, max_window=stats.max_window,
                      max_return=stats.max_return, stdout_chars=stdout_chars, tool_calls=stats.tool_calls,
                      tool_errors=stats.tool_errors, read_chars=box.budget.spent, seconds=round(seconds, 3),
                      constraint_violations=stats.constraint_violations)


def summed(a: RunMetrics, b: RunMetrics) -> RunMetrics:
    """Two runs' metrics as one: counts and characters added (per payload kind too), largest values kept, converged
    when both were, cost unknown when either is."""
    out: dict[str, object] = {}
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
    return RunMetrics.from_dict(out)


def note_spent(error: BaseException, metrics: RunMetrics, trajectory: Path) -> None:
    """Put on a failing run's exception what the run spent and where its trajectory is (then it is re-raised)."""
    setattr(error, SPENT, (metrics, trajectory))


def spent(error: BaseException) -> tuple[RunMetrics, Path] | None:
    """The metrics and trajectory a failing run noted on its exception, or None for any other exception."""
    return getattr(error, SPENT, None)
