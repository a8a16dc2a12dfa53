"""Ablation records: one line of DIR/results.jsonl per (condition, repeat, phase, checkpoint, task), and the summary.

A checkpoint `c` is the holdout evaluation after `train_seen` train tasks (checkpoint 0: before any training).
Train records carry the checkpoint they lead up to. The 95% interval of holdout success is Student's t over the
repeats' success rates when there are two or more repeats, else Wilson's score interval over the pooled outcomes.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..errors import LoadError

PHASES = ("train", "holdout")
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


@dataclass(frozen=True)
class Record:
    """One task run inside an ablation (one line of results.jsonl).

    Args:
        condition: A0..A4 (or a named config such as E3).
        repeat: 0-based repeat index.
        phase: train (learning on) or holdout (memory frozen).
        checkpoint: holdout checkpoint index (train records: the checkpoint they lead up to).
        train_seen: train tasks streamed before this holdout checkpoint (train records: before this task).
        task_id, split: the curriculum task.
        success, judge: the judgment.
        iterations, lm_calls, prompt_tokens, completion_tokens, tool_calls: cost of the run.
        payload_chars_in_history, large_returns: leakage measured on the LM's history.
        memory_ids_used: items the run read or was given.
        extracted: item ids the learning loop stored from this run (always empty in holdout).
        memory_items: items in the condition's memory after the run.
        seconds: wall time of the run.
        validations: pySHACL validations (construction tasks), else None.
        compiled_reused: compiled operators from memory the run applied (construction tasks).
        conflicts: conflict links the learning loop recorded for this run.
        exceptions_used: items used that are exceptions (scope exception).
        error: the exception's type and message when the run failed.
    """

    condition: str
    repeat: int
    phase: str
    checkpoint: int
    train_seen: int
    task_id: str
    split: str
    success: bool
    judge: str
    iterations: int = 0
    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: int = 0
    payload_chars_in_history: int = 0
    large_returns: int = 0
    memory_ids_used: tuple[str, ...] = ()
    extracted: tuple[str, ...] = ()
    memory_items: int = 0
    seconds: float = 0.0
    validations: int | None = None
    compiled_reused: int = 0
    conflicts: int = 0
    exceptions_used: int = 0
    error: str | None = None

    @property
    def key(self) -> tuple:
        """What identifies the run inside an ablation (used to resume)."""
        return (self.condition, self.repeat, self.phase, self.checkpoint, self.task_id)

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        d = asdict(self)
        d["memory_ids_used"], d["extracted"] = list(self.memory_ids_used), list(self.extracted)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Record:
        """The record a to_dict() wrote (unknown keys ignored)."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["memory_ids_used"] = tuple(kw.get("memory_ids_used", ()))
        kw["extracted"] = tuple(kw.get("extracted", ()))
        return cls(**kw)


def append_record(path: Path, record: Record) -> None:
    """Append one record as a JSON line and flush it to disk (a killed ablation keeps every finished task)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
        f.flush()


def trim_torn(path: Path) -> None:
    """Drop a last line without its newline (a write cut by a kill), so appends start on a fresh line."""
    p = Path(path)
    if not p.exists():
        return
    data = p.read_bytes()
    if data and not data.endswith(b"\n"):
        p.write_bytes(data[:data.rfind(b"\n") + 1])


def read_records(path: Path) -> list[Record]:
    """Every complete record in results.jsonl (a torn last line from a kill is ignored)."""
    if not Path(path).exists():
        return []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        try:
            out.append(Record.from_dict(json.loads(line)))
        except (json.JSONDecodeError, TypeError) as e:
            if n < len(lines):
                raise LoadError(f"results line is not a record: {e}", source=str(path), line=n) from e
    return out


def interval(rates: list[float], successes: int, n: int) -> tuple[float, float]:
    """95% interval: Student's t over per-repeat rates (2+ repeats), else Wilson over pooled outcomes."""
    if len(rates) >= 2:
        m = sum(rates) / len(rates)
        sd = math.sqrt(sum((r - m) ** 2 for r in rates) / (len(rates) - 1))
        h = _T975.get(len(rates) - 1, 1.96) * sd / math.sqrt(len(rates))
        return max(0.0, m - h), min(1.0, m + h)
    if n == 0:
        return 0.0, 0.0
    z, p = 1.96, successes / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + z * z / n)), min(1.0, (centre + half) / (1 + z * z / n))


def _mean(values) -> float:
    """Mean of a list, 0.0 when empty."""
    values = list(values)
    return round(sum(values) / len(values), 3) if values else 0.0


def _holdout(records: list[Record]) -> list[dict]:
    """Holdout success per checkpoint: mean over repeats, 95% interval, mean memory size."""
    by_cp = defaultdict(list)
    for r in records:
        by_cp[r.checkpoint].append(r)
    rows = []
    for cp in sorted(by_cp):
        rs, per = by_cp[cp], defaultdict(list)
        for r in rs:
            per[r.repeat].append(r.success)
        rates = [sum(v) / len(v) for v in per.values()]
        low, high = interval(rates, sum(r.success for r in rs), len(rs))
        rows.append({"checkpoint": cp, "train_seen": rs[0].train_seen, "mean": round(_mean(rates), 4),
                     "low": round(low, 4), "high": round(high, 4), "repeats": len(per), "tasks": len(rs),
                     "memory_items": _mean(r.memory_items for r in rs),
                     "iterations": _mean(r.iterations for r in rs),
                     "validations": _mean(r.validations for r in rs if r.validations is not None)})
    return rows


def _condition(records: list[Record]) -> dict:
    """One condition's summary over all its records."""
    hold = [r for r in records if r.phase == "holdout"]
    train = [r for r in records if r.phase == "train"]
    curve = _holdout(hold)
    extracted = sum(len(r.extracted) for r in train)
    distinct = len({i for r in train for i in r.extracted})
    first, last = (curve[0], curve[-1]) if curve else ({}, {})
    growth = (last.get("memory_items", 0) - first.get("memory_items", 0)) if curve else 0
    gain = (last.get("mean", 0) - first.get("mean", 0)) if curve else 0
    return {
        "holdout": curve, "runs": len(records), "errors": sum(r.error is not None for r in records),
        "train_success": _mean(r.success for r in train),
        "tokens_per_task": _mean(r.prompt_tokens + r.completion_tokens for r in records),
        "prompt_tokens_per_task": _mean(r.prompt_tokens for r in records),
        "completion_tokens_per_task": _mean(r.completion_tokens for r in records),
        "iterations_per_task": _mean(r.iterations for r in records),
        "holdout_iterations_per_task": _mean(r.iterations for r in hold),
        "holdout_validations_per_task": _mean(r.validations for r in hold if r.validations is not None),
        "tool_calls_per_task": _mean(r.tool_calls for r in records),
        "holdout_compiled_reused_per_task": _mean(r.compiled_reused for r in hold),
        "leakage": {"payload_chars_in_history_mean": _mean(r.payload_chars_in_history for r in records),
                    "payload_chars_in_history_max": max((r.payload_chars_in_history for r in records), default=0),
                    "large_returns": sum(r.large_returns for r in records)},
        "memory_growth": {"items_start": first.get("memory_items", 0), "items_end": last.get("memory_items", 0),
                          "success_gain": round(gain, 4),
                          "gain_per_100_items": round(100 * gain / growth, 4) if growth else None},
        "dedup_rate": round(1 - distinct / extracted, 4) if extracted else None,
        "conflicts": sum(r.conflicts for r in records),
        "exception_use": sum(r.exceptions_used for r in records),
    }


def summarize(records: list[Record], meta: dict | None = None) -> dict:
    """The ablation summary: per condition holdout curve, cost, leakage, growth vs gain, dedup, conflicts."""
    by_cond = defaultdict(list)
    for r in records:
        by_cond[r.condition].append(r)
    return {**(meta or {}), "records": len(records),
            "conditions": {c: _condition(rs) for c, rs in sorted(by_cond.items())}}

