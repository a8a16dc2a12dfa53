"""DIR/report.html from DIR/results.jsonl and DIR/summary.json: one self-contained page (inline SVG, no script),
plus every figure as its own SVG file (DIR/figures/<id>.svg) and every table as CSV and LaTeX (DIR/tables/).

It answers "which condition learned, at what cost, with how much leakage, and do the success criteria hold":
holdout success over checkpoints with 95% intervals, cost in tokens and money, convergence, leakage, memory size
vs success, pass@k, the criteria, and the tables behind them.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from ..errors import ConfigError
from ..model import Quota
from ..rdfio import check_output, output_folder, write_text
from .figures import figures
from .records import read_records
from .summary import ConditionSummary, Summary, summarize
from .svg import standalone
from .tables import tables

RESULTS, SUMMARY, REPORT = "results.jsonl", "summary.json", "report.html"
FIGURES, TABLES = "figures", "tables"
DEFAULT_QUOTA = Quota().to_json()
CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}.plots{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #ddd;padding:6px}figcaption{font-size:12px;color:#555;max-width:560px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}.lead li{margin:4px 0}
caption{caption-side:top;text-align:left;font-size:13px;color:#555;padding:4px 0}.note{font-size:13px;color:#555}"""


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
    last = {n: v for n, c in conds.items() if c.holdout and (v := c.holdout[-1].validations)}
    if not last:
        return ""
    best = min(last, key=lambda n: last[n])
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
    k = arm.get("k")
    parts = [arm.get("condition", "") + (f" (k={k})" if k not in (None, DEFAULT_QUOTA) else "")] + \
        list(arm.get("layers") or ())
    said = " + ".join(p for p in parts if p)
    return arm.get("name", "") if said == arm.get("name") else f"{arm.get('name', '')} = {said}"


def render(summary: Summary, records: list) -> str:
    """The whole page as one string."""
    meta = {**{k: v for k, v in summary.settings.items() if k != "conditions"}, "records": summary.records}
    figs, left_out = figures(summary)
    plots = "".join(f"<figure>{svg}<figcaption>{escape(cap)}</figcaption></figure>" for _, svg, cap in figs)
    missing = (f"<p class='note'>No panel for metrics no condition has: {escape('; '.join(left_out))}.</p>"
               if left_out else "")
    shown = "".join(f"<h2>{escape(t.caption.split(':')[0])}</h2>{t.html()}" for t in tables(summary))
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>owl-memory ablation</title>"
            f"<style>{CSS}</style></head><body><h1>owl-memory ablation: {escape(str(meta.get('curriculum', '')))}"
            f"</h1><p class='meta'>{_meta(meta)}</p>{headline(summary)}{_criteria(summary)}<h2>Plots</h2>"
            f"<div class='plots'>{plots}</div>{missing}{shown}<p>{len(records)} records in {RESULTS}; figures as "
            f"SVG in {FIGURES}/, tables as CSV and LaTeX in {TABLES}/.</p></body></html>")


def _criteria(summary: Summary) -> str:
    """The success criteria as a list (those whose arms the ablation ran; none: nothing)."""
    if not summary.criteria:
        return ""
    items = "".join(f"<li>{escape(c.name)}: <b>{escape(c.status)}</b> ({escape(c.detail)})</li>"
                    for c in summary.criteria)
    return f"<h2>Success criteria</h2><ul class='lead'>{items}</ul>"


def build_report(out: str | Path) -> Path:
    """Write DIR/report.html (atomically), DIR/figures/*.svg and DIR/tables/*.csv, *.tex from DIR/results.jsonl and
    DIR/summary.json; returns the page's path."""
    out = Path(out)
    records, summary = _load(out)
    pages = [(out / REPORT, render(summary, records))]
    pages += [(out / FIGURES / f"{chart_id}.svg", standalone(svg)) for chart_id, svg, _ in figures(summary)[0]]
    pages += [(out / TABLES / f"{t.name}.{kind}", text) for t in tables(summary)
              for kind, text in (("csv", t.csv()), ("tex", t.latex()))]
    for folder in (out / FIGURES, out / TABLES):
        output_folder(folder)
    for path, _ in pages:  # every target checked before the first is written
        check_output(path)
    for path, text in pages:
        write_text(text, path)
    return out / REPORT
