"""The report's tables as typed values, written as HTML (the page), CSV and LaTeX (DIR/tables/<name>.csv, .tex: a
booktabs tabular to \\input into a paper).

Success rates and their 95% intervals read as percentages ("50% [24–76%]"); a metric no condition has (no RLM run
converged or not, no cost known, ...) is left out rather than shown as a column of dashes.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from html import escape

from .summary import Summary

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "→": r"$\to$", "–": "--",
          "≥": r"$\geq$", "<": r"$<$", ">": r"$>$"}


@dataclass(frozen=True)
class Table:
    """One table: a file name, a caption, a header and rows of cells (numbers or text; None for none)."""

    name: str
    caption: str
    head: tuple[str, ...]
    rows: tuple[tuple, ...]

    def html(self) -> str:
        """An HTML table with its caption."""
        cells = "".join(f"<th>{escape(h)}</th>" for h in self.head)
        body = "".join("<tr>" + "".join(f"<td>{escape(cell(v))}</td>" for v in r) + "</tr>" for r in self.rows)
        return f"<table><caption>{escape(self.caption)}</caption><tr>{cells}</tr>{body}</table>"

    def csv(self) -> str:
        """CSV text: a header line, then the rows (numbers unrounded, empty cells for none)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.head)
        writer.writerows([["" if v is None else v for v in r] for r in self.rows])
        return buf.getvalue()

    def latex(self) -> str:
        """A booktabs table environment (caption and label included)."""
        spec = "l" + "r" * (len(self.head) - 1)
        lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{tex(self.caption)}}}",
                 rf"\label{{tab:{self.name}}}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
                 " & ".join(tex(h) for h in self.head) + r" \\", r"\midrule"]
        lines += [" & ".join(tex(cell(v)) for v in r) + r" \\" for r in self.rows]
        return "\n".join([*lines, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


def cell(v) -> str:
    """A cell's text: – for none, 3 significant digits for a float."""
    if v is None:
        return "–"
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def tex(text: str) -> str:
    """Text with LaTeX's special characters escaped."""
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


def percent(mean: float, low: float | None = None, high: float | None = None) -> str:
    """A rate as a percentage, with its 95% interval when given: 50% [24–76%]."""
    text = f"{100 * mean:.0f}%"
    return text if low is None or high is None else f"{text} [{100 * low:.0f}–{100 * high:.0f}%]"


def tables(summary: Summary) -> list[Table]:
    """Every table of the report that has rows."""
    found = [conditions_table(summary), checkpoints_table(summary), agent_table(summary), criteria_table(summary)]
    return [t for t in found if t.rows]


def conditions_table(summary: Summary) -> Table:
    """One row per condition: outcome, cost, leakage, memory; a column only when some condition has a value there
    that is not zero or unknown."""
    conds = summary.conditions
    columns = [("runs", lambda c: c.runs), ("errors", lambda c: c.errors),
               ("final holdout", lambda c: percent(c.holdout[-1].mean, c.holdout[-1].low, c.holdout[-1].high)
                if c.holdout else None),
               ("gain", lambda c: c.memory_growth.success_gain)]
    optional = [("final set_F", lambda c: c.holdout[-1].set_F if c.holdout else None),
                ("pass@k", lambda c: ", ".join(f"@{k} {percent(v)}" for k, v in c.pass_at_k.items()) or None),
                ("converged", lambda c: None if c.converged_rate is None else percent(c.converged_rate)),
                ("tokens/task", lambda c: c.tokens_per_task), ("LM calls/task", lambda c: c.lm_calls_per_task),
                ("sub-LM calls/task", lambda c: c.sub_lm_calls_per_task),
                ("cost/task (USD)", lambda c: c.cost_usd_per_task),
                ("iterations/task", lambda c: c.iterations_per_task),
                ("tool calls/task", lambda c: c.tool_calls_per_task),
                ("payload chars (mean)", lambda c: c.leakage.payload_chars_in_history_mean),
                ("large returns", lambda c: c.leakage.large_returns), ("max window", lambda c: c.max_window),
                ("stdout chars/task", lambda c: c.stdout_chars_per_task),
                ("items start→end", lambda c: f"{c.memory_growth.items_start:g}→{c.memory_growth.items_end:g}"),
                ("active items (end)", lambda c: c.active_items_end),
                ("dedup rate", lambda c: c.dedup_rate), ("conflicts", lambda c: c.conflicts),
                ("exception use", lambda c: c.exception_use), ("own items filtered", lambda c: c.filtered)]
    kept = columns + [(h, f) for h, f in optional if any(f(c) not in (None, 0, 0.0) for c in conds.values())]
    return Table("conditions", "Per condition: holdout success at the last checkpoint (95% interval), its TEXT2SPARQL "
                 "set_F (endpoint-judged tasks), pass@k over repeats, convergence, cost, leakage and memory",
                 ("condition", *(h for h, _ in kept)),
                 tuple((n, *(f(c) for _, f in kept)) for n, c in conds.items()))


def checkpoints_table(summary: Summary) -> Table:
    """One row per condition and holdout checkpoint."""
    rows = tuple((n, h.checkpoint, h.train_seen, percent(h.mean, h.low, h.high), h.repeats, h.tasks, h.memory_items,
                  h.iterations, h.validations or None) for n, c in summary.conditions.items() for h in c.holdout)
    return Table("checkpoints", "Holdout checkpoints: success (95% interval) after each number of train tasks",
                 ("condition", "checkpoint", "train seen", "success [95%]", "repeats", "tasks", "memory items",
                  "iterations", "validations"), rows)


def agent_table(summary: Summary) -> Table:
    """Construction tasks run by a model: verify runs, deltas and undos per task."""
    conds = summary.conditions
    if not any(c.verify_runs_per_task for c in conds.values()):
        return Table("construction_agent", "", (), ())
    return Table("construction_agent", "Construction agent: SHACL verify runs, deltas applied and undone per task",
                 ("condition", "verify runs/task", "verify runs/holdout task", "deltas/task", "undos/task",
                  "tokens/task"),
                 tuple((n, c.verify_runs_per_task, c.holdout_verify_runs_per_task, c.deltas_per_task,
                        c.undos_per_task, c.tokens_per_task) for n, c in conds.items()))


def criteria_table(summary: Summary) -> Table:
    """The success criteria: met, not met or not measurable, with the numbers."""
    return Table("criteria", "Success criteria of the layer experiments", ("criterion", "status", "numbers"),
                 tuple((c.name, c.status, c.detail) for c in summary.criteria))
