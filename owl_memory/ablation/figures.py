"""The report's figures: (id, svg, caption) for every plot whose metric the ablation has.

A panel whose numbers are all zero or unknown for every condition (tokens of the symbolic construction agent,
payload characters where nothing leaked, cost of a scripted run, pass@k with one repeat ...) is left out, and the
page names what it left out. Task counts and memory sizes are drawn on integer ticks.
"""

from __future__ import annotations

from .summary import ConditionSummary, Summary
from .svg import Series, bar_chart, line_chart


def _curve(conds: dict[str, ConditionSummary], x_key: str, y_key: str = "mean", band: bool = True) -> list[Series]:
    """One series per condition over its holdout checkpoints (x and y: Checkpoint fields)."""
    out = []
    for name, c in conds.items():
        pts = tuple((float(getattr(h, x_key)), float(getattr(h, y_key)), float(h.low if band else getattr(h, y_key)),
                     float(h.high if band else getattr(h, y_key))) for h in c.holdout)
        if pts:
            out.append(Series(name, pts))
    return out


def _bars(conds: dict[str, ConditionSummary], measures: dict) -> dict[str, list[float]]:
    """{measure: [value per condition]} for bar charts (None read as 0)."""
    return {label: [float(get(c) or 0) for c in conds.values()] for label, get in measures.items()}


def _has(bars: dict[str, list[float]]) -> bool:
    """True when some bar is not zero."""
    return any(v for vs in bars.values() for v in vs)


def figures(summary: Summary) -> tuple[list[tuple[str, str, str]], list[str]]:
    """([(id, svg, caption)], [titles of panels left out because no condition has their metric])."""
    conds, names = summary.conditions, list(summary.conditions)
    figs, left_out = [], []
    curve = _curve(conds, "train_seen")
    figs.append(("holdout-success", line_chart(
        "holdout-success", "Holdout success over checkpoints", curve, "train tasks seen", "holdout success",
        y_max=1.0, integer_x=True),
        "Share of holdout tasks judged successful at each checkpoint (memory frozen), mean over repeats; "
        "shaded and bars: 95% interval; conditions sit a few pixels apart so equal values stay visible."))
    for chart_id, title, measures, unit, caption in _bar_specs():
        bars = _bars(conds, measures)
        if _has(bars):
            figs.append((chart_id, bar_chart(chart_id, title, names, bars, unit), caption))
        else:
            left_out.append(title)
    figs.append(("memory-vs-success", line_chart(
        "memory-vs-success", "Memory size vs holdout success", _curve(conds, "memory_items"), "items in memory",
        "holdout success", y_max=1.0, integer_x=True),
        "Each point is one checkpoint: how big the condition's memory was and how well it did."))
    figs += _optional_lines(conds, left_out)
    return figs, left_out


def _bar_specs() -> list[tuple]:
    """(id, title, {measure: getter}, unit, caption) of every bar chart."""
    return [
        ("tokens-per-task", "Tokens per task", {"prompt": lambda c: c.prompt_tokens_per_task,
                                                "completion": lambda c: c.completion_tokens_per_task,
                                                "sub-LM": lambda c: c.sub_tokens_per_task}, "tokens",
         "Mean prompt and completion tokens per run (train and holdout; every LM call), and the llm_query part."),
        ("iterations-per-task", "Iterations and tool calls per task",
         {"iterations": lambda c: c.iterations_per_task, "tool calls": lambda c: c.tool_calls_per_task}, "per task",
         "Mean agent iterations (construction: verify iterations) and tool calls per run."),
        ("convergence", "Runs that converged", {"all runs": lambda c: c.converged_rate,
                                                "holdout": lambda c: c.holdout_converged_rate}, "share",
         "Share of runs that ended by SUBMIT before their iteration limit (not by forced extraction)."),
        ("cost-per-task", "Cost per task", {"USD": lambda c: c.cost_usd_per_task}, "US dollars",
         "Mean money per run by litellm's local price map (a scripted LM costs nothing)."),
        ("payload-chars", "Payload characters in the LM history",
         {"mean": lambda c: c.leakage.payload_chars_in_history_mean,
          "max": lambda c: c.leakage.payload_chars_in_history_max}, "characters",
         "Characters of payload (prompt, memory content, query rows) found in the messages sent to the LM."),
        ("returns-and-output", "Large returns, longest window, REPL output",
         {"large returns": lambda c: c.leakage.large_returns, "max window": lambda c: c.max_window,
          "stdout chars/task": lambda c: c.stdout_chars_per_task}, "count / characters",
         "Tool returns above 1,000 characters (all runs), the longest window text read, and REPL output per run."),
    ]


def _optional_lines(conds: dict[str, ConditionSummary], left_out: list[str]) -> list[tuple[str, str, str]]:
    """pass@k (with two or more repeats) and validations (construction) when the ablation has them."""
    out = []
    passes = [Series(n, tuple((float(k), v, v, v) for k, v in sorted(c.pass_at_k.items(), key=lambda kv: int(kv[0]))))
              for n, c in conds.items() if len(c.pass_at_k) > 1]
    if passes:
        out.append(("pass-at-k", line_chart("pass-at-k", "pass@k over repeats (last checkpoint)", passes, "k",
                                            "pass@k", y_max=1.0, integer_x=True),
                    "Chance that one of k repeats solves a holdout task (unbiased estimate, last checkpoint)."))
    else:
        left_out.append("pass@k over repeats (one repeat)")
    if any(h.validations for c in conds.values() for h in c.holdout):
        out.append(("holdout-validations", line_chart(
            "holdout-validations", "pySHACL validations per holdout task",
            _curve(conds, "train_seen", "validations", band=False), "train tasks seen", "validations",
            integer_x=True), "Mean pySHACL validations a holdout construction task needed at each checkpoint."))
    return out
