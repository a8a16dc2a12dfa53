"""DIR/report.html from DIR/results.jsonl and DIR/summary.json: one self-contained page (inline SVG, no script).

It answers "which condition learned, at what token cost, with how much leakage": holdout success over
checkpoints with 95% intervals, tokens and iterations per task, payload characters in the LM history, memory
size vs success, and the tables behind them.
"""

from __future__ import annotations

import json
import os
import tempfile
from html import escape
from pathlib import Path

from ..errors import ConfigError
from .records import read_records
from .summary import ConditionSummary, Summary, summarize
from .svg import Series, bar_chart, line_chart

RESULTS, SUMMARY, REPORT = "results.jsonl", "summary.json", "report.html"
CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}.plots{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #ddd;padding:6px}figcaption{font-size:12px;color:#555;max-width:560px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}.lead li{margin:4px 0}"""


def _load(out: Path) -> tuple[list, Summary]:
    """Records and summary of an ablation folder (summary recomputed when summary.json is missing)."""
    results = out / RESULTS
    if not results.is_file():
        raise ConfigError(f"{out} has no {RESULTS}: run `owl-memory ablate CURRICULUM.yaml --out {out}` first")
    records = read_records(results)
    path = out / SUMMARY
    summary = Summary.from_dict(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else \
        summarize(records)
    return records, summary


def _curve(conds: dict[str, ConditionSummary], x_key: str, y_key: str = "mean", band: bool = True) -> list[Series]:
    """One series per condition over its holdout checkpoints (x and y: Checkpoint fields)."""
    out = []
    for name, c in conds.items():
        pts = tuple((float(getattr(h, x_key)), float(getattr(h, y_key)), float(h.low if band else getattr(h, y_key)),
                     float(h.high if band else getattr(h, y_key))) for h in c.holdout)
        if pts:
            out.append(Series(name, pts))
    return out


def figures(summary: Summary) -> list[tuple[str, str]]:
    """(svg, caption) for every plot of the report."""
    conds, names = summary.conditions, list(summary.conditions)
    figs = [
        (line_chart("holdout-success", "Holdout success over checkpoints", _curve(conds, "train_seen"),
                    "train tasks seen", "holdout success", y_max=1.0),
         "Share of holdout tasks judged successful at each checkpoint (memory frozen), mean over repeats; "
         "shaded and bars: 95% interval; conditions sit a few pixels apart so equal values stay visible."),
        (bar_chart("tokens-per-task", "Tokens per task", names,
                   {"prompt": [conds[n].prompt_tokens_per_task for n in names],
                    "completion": [conds[n].completion_tokens_per_task for n in names]}, "tokens"),
         "Mean prompt and completion tokens per run (train and holdout)."),
        (bar_chart("iterations-per-task", "Iterations and tool calls per task", names,
                   {"iterations": [conds[n].iterations_per_task for n in names],
                    "tool calls": [conds[n].tool_calls_per_task for n in names]}, "per task"),
         "Mean agent iterations (construction: verify iterations) and tool calls per run."),
        (bar_chart("payload-chars", "Payload characters in the LM history", names,
                   {"mean": [conds[n].leakage.payload_chars_in_history_mean for n in names],
                    "max": [conds[n].leakage.payload_chars_in_history_max for n in names]}, "characters"),
         "Characters of payload (prompt, memory content, query rows) found in the messages sent to the LM."),
        (line_chart("memory-vs-success", "Memory size vs holdout success", _curve(conds, "memory_items"),
                    "items in memory", "holdout success", y_max=1.0),
         "Each point is one checkpoint: how big the condition's memory was and how well it did."),
    ]
    if any(h.validations for c in conds.values() for h in c.holdout):
        figs.append((line_chart("holdout-validations", "pySHACL validations per holdout task",
                                _curve(conds, "train_seen", "validations", band=False),
                                "train tasks seen", "validations"),
                     "Mean pySHACL validations a holdout construction task needed at each checkpoint."))
    return figs


def _table(head: list[str], rows: list[list]) -> str:
    """An HTML table."""
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(v))}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><tr>{cells}</tr>{body}</table>"


def _cell(v) -> str:
    """A table cell's text."""
    if v is None:
        return "–"
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def tables(summary: Summary) -> str:
    """The summary and per-checkpoint tables."""
    conds = summary.conditions
    main = _table(["condition", "runs", "errors", "final holdout", "gain", "tokens/task", "iterations/task",
                   "tool calls/task", "payload chars (mean)", "large returns", "items start→end", "dedup rate",
                   "conflicts", "exception use"],
                  [[n, c.runs, c.errors, c.holdout[-1].mean if c.holdout else None, c.memory_growth.success_gain,
                    c.tokens_per_task, c.iterations_per_task, c.tool_calls_per_task,
                    c.leakage.payload_chars_in_history_mean, c.leakage.large_returns,
                    f"{c.memory_growth.items_start:g}→{c.memory_growth.items_end:g}", c.dedup_rate, c.conflicts,
                    c.exception_use] for n, c in conds.items()])
    rows = [[n, h.checkpoint, h.train_seen, h.mean, f"[{h.low:.3g}, {h.high:.3g}]", h.repeats, h.tasks,
             h.memory_items, h.iterations, h.validations] for n, c in conds.items() for h in c.holdout]
    per = _table(["condition", "checkpoint", "train seen", "success", "95% interval", "repeats", "tasks",
                  "memory items", "iterations", "validations"], rows)
    agent = ""
    if any(c.verify_runs_per_task for c in conds.values()):  # construction tasks run by a model
        agent = "<h2>Construction agent</h2>" + _table(
            ["condition", "verify runs/task", "verify runs/holdout task", "deltas/task", "undos/task", "tokens/task"],
            [[n, c.verify_runs_per_task, c.holdout_verify_runs_per_task, c.deltas_per_task, c.undos_per_task,
              c.tokens_per_task] for n, c in conds.items()])
    return f"<h2>Conditions</h2>{main}<h2>Holdout checkpoints</h2>{per}{agent}"


def headline(summary: Summary) -> str:
    """Three sentences: which condition learned most, what it cost, how much leaked (ties named, none said so)."""
    conds = summary.conditions
    if not conds:
        return "<p>No records yet.</p>"
    cost = {n: (c.tokens_per_task, c.iterations_per_task) for n, c in conds.items()}
    leak = {n: c.leakage.payload_chars_in_history_mean for n, c in conds.items()}
    cheap, leaky = _tied(cost, min), _tied(leak, max)
    leaked = (f"Most leakage: <b>{_names(leaky)}</b> ({leak[leaky[0]]:g} payload characters per run in the LM "
              "history)." if leak[leaky[0]] > 0 else "No payload characters reached the LM history in any condition.")
    return ("<ul class='lead'>"
            f"<li>{_learned(conds)}</li>"
            f"<li>Cheapest: <b>{_names(cheap)}</b> ({cost[cheap[0]][0]:g} tokens and "
            f"{cost[cheap[0]][1]:g} iterations per task).</li>"
            f"<li>{leaked}</li>" + _validations_line(conds) + "</ul>")


def _learned(conds: dict[str, ConditionSummary]) -> str:
    """Who learned most: the largest rise in holdout success, else the largest fall in holdout iterations."""
    gain = {n: c.memory_growth.success_gain for n, c in conds.items()}
    best = _tied(gain, max)
    g = conds[best[0]].memory_growth
    if gain[best[0]] > 0:
        return (f"Learned most: <b>{_names(best)}</b> (holdout success {g.success_gain:+.3g} from first to last "
                f"checkpoint, memory {g.items_start:g} → {g.items_end:g} items).")
    ends = {n: (c.holdout[0], c.holdout[-1]) for n, c in conds.items() if c.holdout}
    drop = {n: first.iterations - last.iterations for n, (first, last) in ends.items()}
    flat = f"holdout success did not rise from the first to the last checkpoint (best change {gain[best[0]]:+.3g})"
    if not drop or max(drop.values()) <= 0:
        return f"No condition learned: {flat}, nor did any need fewer iterations per holdout task."
    fewer = _tied(drop, max)
    first, last = ends[fewer[0]]
    checks = f", pySHACL validations {first.validations:g} → {last.validations:g}" if first.validations else ""
    return (f"Learned most: <b>{_names(fewer)}</b>, in cost: {flat}, but its holdout tasks needed fewer iterations "
            f"({first.iterations:g} → {last.iterations:g} per task{checks}; memory "
            f"{first.memory_items:g} → {last.memory_items:g} items).")


def _tied(values: dict, pick) -> list[str]:
    """The names whose value is the best one (`pick` is max or min), in order."""
    top = pick(values.values())
    return [n for n, v in values.items() if v == top]


def _names(names: list[str]) -> str:
    """Names for the page, tied ones joined."""
    return escape(", ".join(names))


def _validations_line(conds: dict[str, ConditionSummary]) -> str:
    """Construction ablations: who needed the fewest pySHACL validations per holdout task at the last checkpoint."""
    last = {n: c.holdout[-1].validations for n, c in conds.items() if c.holdout and c.holdout[-1].validations}
    if not last:
        return ""
    best = min(last, key=last.get)
    others = ", ".join(f"{escape(n)} {v:g}" for n, v in last.items() if n != best)
    return (f"<li>Fewest pySHACL validations per holdout task at the last checkpoint: <b>{escape(best)}</b> "
            f"({last[best]:g}; {others}).</li>")


def _meta(meta: dict) -> str:
    """The run's settings as one line of key: value pairs (arms as `name = condition + layers`)."""
    def text(k, v):
        if k == "arms" and isinstance(v, list):
            return "; ".join(_arm(a) for a in v)
        return v if isinstance(v, str) else json.dumps(v, default=str)

    return " · ".join(f"{escape(str(k))}: <b>{escape(text(k, v))}</b>" for k, v in meta.items())


def _arm(arm: dict) -> str:
    """One arm in words: its name, and its condition and context layers when they say more than the name."""
    k = arm.get("k", 1)
    parts = [arm.get("condition", "") + (f" (k={k})" if k != 1 else "")] + list(arm.get("layers") or ())
    said = " + ".join(p for p in parts if p)
    return arm.get("name", "") if said == arm.get("name") else f"{arm.get('name', '')} = {said}"


def render(summary: Summary, records: list) -> str:
    """The whole page as one string."""
    meta = {**{k: v for k, v in summary.settings.items() if k != "conditions"}, "records": summary.records}
    plots = "".join(f"<figure>{svg}<figcaption>{escape(cap)}</figcaption></figure>" for svg, cap in figures(summary))
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>owl-memory ablation</title>"
            f"<style>{CSS}</style></head><body><h1>owl-memory ablation: {escape(str(meta.get('curriculum', '')))}"
            f"</h1><p class='meta'>{_meta(meta)}</p>{headline(summary)}<h2>Plots</h2>"
            f"<div class='plots'>{plots}</div>{tables(summary)}<p>{len(records)} records in {RESULTS}.</p>"
            "</body></html>")


def build_report(out: str | Path) -> Path:
    """Write DIR/report.html (atomically) from DIR/results.jsonl and DIR/summary.json; returns its path."""
    out = Path(out)
    records, summary = _load(out)
    page = render(summary, records)
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".report-", suffix=".html")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(page)
    os.chmod(tmp, 0o644)
    os.replace(tmp, out / REPORT)
    return out / REPORT
