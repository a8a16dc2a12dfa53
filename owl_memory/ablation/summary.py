"""The ablation summary (DIR/summary.json): per condition, the holdout curve with 95% intervals, cost, leakage,
memory growth vs gain, dedup rate, conflicts and exception use.

The 95% interval of holdout success is Student's t over the repeats' success rates when there are two or more
repeats, else Wilson's score interval over the pooled outcomes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from .records import Record

_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


@dataclass(frozen=True)
class Checkpoint:
    """Holdout results at one checkpoint: success (mean over repeats, 95% interval) and mean costs.

    Args:
        checkpoint, train_seen: which checkpoint, after how many train tasks.
        mean, low, high: holdout success and its 95% interval.
        repeats, tasks: repeats and holdout runs behind it.
        memory_items, iterations, validations: means over its runs (validations: construction tasks only).
    """

    checkpoint: int
    train_seen: int
    mean: float
    low: float
    high: float
    repeats: int
    tasks: int
    memory_items: float
    iterations: float
    validations: float


@dataclass(frozen=True)
class Leakage:
    """Payload that reached the LM history: mean and largest characters per run, and large tool returns."""

    payload_chars_in_history_mean: float
    payload_chars_in_history_max: int
    large_returns: int


@dataclass(frozen=True)
class MemoryGrowth:
    """Memory size and holdout success from the first to the last checkpoint (gain per 100 items: None without
    growth)."""

    items_start: float
    items_end: float
    success_gain: float
    gain_per_100_items: float | None


@dataclass(frozen=True)
class ConditionSummary:
    """One condition (arm) over all its records: its holdout curve, mean costs per task, leakage, growth vs gain,
    dedup rate (None when it extracted nothing), conflicts and exception use; for construction tasks run by a model,
    its SHACL verify runs (all tasks and holdout), deltas applied and deltas undone per task."""

    holdout: tuple[Checkpoint, ...]
    runs: int
    errors: int
    train_success: float
    tokens_per_task: float
    prompt_tokens_per_task: float
    completion_tokens_per_task: float
    iterations_per_task: float
    holdout_iterations_per_task: float
    holdout_validations_per_task: float
    tool_calls_per_task: float
    holdout_compiled_reused_per_task: float
    leakage: Leakage
    memory_growth: MemoryGrowth
    dedup_rate: float | None
    conflicts: int
    exception_use: int
    verify_runs_per_task: float = 0.0
    holdout_verify_runs_per_task: float = 0.0
    deltas_per_task: float = 0.0
    undos_per_task: float = 0.0

    def to_dict(self) -> dict:
        """JSON-compatible form (a condition of summary.json)."""
        return asdict(self) | {"holdout": [asdict(h) for h in self.holdout]}

    @classmethod
    def from_dict(cls, d: dict) -> ConditionSummary:
        """The condition a to_dict() wrote."""
        return cls(**d | {"holdout": tuple(Checkpoint(**h) for h in d["holdout"]), "leakage": Leakage(**d["leakage"]),
                          "memory_growth": MemoryGrowth(**d["memory_growth"])})


@dataclass(frozen=True)
class Summary:
    """An ablation's summary.

    Args:
        settings: what the run was asked (curriculum, kind, task counts, arms, budgets ...), shown as written.
        records: how many records it summarizes.
        conditions: condition (arm) name -> its summary, in name order.
    """

    settings: dict = field(default_factory=dict)
    records: int = 0
    conditions: dict[str, ConditionSummary] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-compatible form (summary.json): the settings, then `records` and `conditions`."""
        return {**self.settings, "records": self.records,
                "conditions": {n: c.to_dict() for n, c in self.conditions.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> Summary:
        """The summary a to_dict() wrote (every other key is a setting)."""
        settings = {k: v for k, v in d.items() if k not in ("records", "conditions")}
        return cls(settings, int(d.get("records", 0)),
                   {n: ConditionSummary.from_dict(c) for n, c in d.get("conditions", {}).items()})


def summarize(records: list[Record], settings: dict | None = None) -> Summary:
    """The ablation summary of some records (`settings`: what the run was asked, kept as given)."""
    by_cond = defaultdict(list)
    for r in records:
        by_cond[r.condition].append(r)
    return Summary(dict(settings or {}), len(records), {c: _condition(rs) for c, rs in sorted(by_cond.items())})


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


def _holdout(records: list[Record]) -> tuple[Checkpoint, ...]:
    """Holdout success per checkpoint: mean over repeats, 95% interval, mean memory size."""
    by_cp = defaultdict(list)
    for r in records:
        by_cp[r.checkpoint].append(r)
    return tuple(_checkpoint(cp, by_cp[cp]) for cp in sorted(by_cp))


def _checkpoint(cp: int, rs: list[Record]) -> Checkpoint:
    """One checkpoint's holdout runs summed up."""
    per = defaultdict(list)
    for r in rs:
        per[r.repeat].append(r.success)
    rates = [sum(v) / len(v) for v in per.values()]
    low, high = interval(rates, sum(r.success for r in rs), len(rs))
    return Checkpoint(cp, rs[0].train_seen, round(_mean(rates), 4), round(low, 4), round(high, 4), len(per), len(rs),
                      _mean(r.memory_items for r in rs), _mean(r.iterations for r in rs),
                      _mean(r.validations for r in rs if r.validations is not None))


def _condition(runs: list[Record]) -> ConditionSummary:
    """One condition's summary over all its records."""
    hold = [r for r in runs if r.phase == "holdout"]
    train = [r for r in runs if r.phase == "train"]
    curve = _holdout(hold)
    return ConditionSummary(
        curve, len(runs), sum(r.error is not None for r in runs), _mean(r.success for r in train),
        _mean(r.prompt_tokens + r.completion_tokens for r in runs), _mean(r.prompt_tokens for r in runs),
        _mean(r.completion_tokens for r in runs), _mean(r.iterations for r in runs),
        _mean(r.iterations for r in hold), _mean(r.validations for r in hold if r.validations is not None),
        _mean(r.tool_calls for r in runs), _mean(r.compiled_reused for r in hold),
        Leakage(_mean(r.payload_chars_in_history for r in runs),
                max((r.payload_chars_in_history for r in runs), default=0), sum(r.large_returns for r in runs)),
        _growth(curve), _dedup_rate(train), sum(r.conflicts for r in runs), sum(r.exceptions_used for r in runs),
        _mean(r.verify_runs for r in runs), _mean(r.verify_runs for r in hold), _mean(r.deltas for r in runs),
        _mean(r.undos for r in runs))


def _growth(curve: tuple[Checkpoint, ...]) -> MemoryGrowth:
    """Memory size and holdout success from the first to the last checkpoint."""
    if not curve:
        return MemoryGrowth(0, 0, 0, None)
    first, last = curve[0], curve[-1]
    growth, gain = last.memory_items - first.memory_items, last.mean - first.mean
    return MemoryGrowth(first.memory_items, last.memory_items, round(gain, 4),
                        round(100 * gain / growth, 4) if growth else None)


def _dedup_rate(train: list[Record]) -> float | None:
    """The share of extracted item ids that repeat an id extracted before (None when nothing was extracted)."""
    extracted = sum(len(r.extracted) for r in train)
    distinct = len({i for r in train for i in r.extracted})
    return round(1 - distinct / extracted, 4) if extracted else None
