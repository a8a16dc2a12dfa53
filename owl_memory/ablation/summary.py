"""The ablation summary (DIR/summary.json): per condition, the holdout curve with 95% intervals, pass@k over the
repeats, convergence, cost in tokens and money (main and sub-LM apart), leakage (payload in the history, large
returns, max window, stdout characters), memory growth vs gain, dedup rate, conflicts and exception use; and the
seeds' success criteria (criteria.py) as met, not met or not measurable.

The 95% interval of holdout success is Student's t over the repeats' success rates when there are two or more
repeats, else Wilson's score interval over the pooled outcomes. pass@k is over the holdout tasks of the last
checkpoint: for a task run n times with c successes, the unbiased 1 - C(n-c, k) / C(n, k), averaged over the tasks
run at least k times (k = 1 ... repeats).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from .criteria import Criterion, criteria
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
        set_P, set_recall, set_F: the TEXT2SPARQL set scores averaged over its runs (a run without them counts 0),
            None when no run was judged on an endpoint.
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
    set_P: float | None = None  # noqa: N815 - the challenge's own names
    set_recall: float | None = None
    set_F: float | None = None  # noqa: N815


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
    its SHACL verify runs (all tasks and holdout), deltas applied and deltas undone per task; the share of runs that
    converged (all, holdout; None when no run is an RLM run), pass@k at the last checkpoint ({"1": ..., "2": ...}),
    LM calls (all, and the llm_query part) and sub-LM tokens per task, money per task and in all (None when a model
    was unpriced), the longest window read, REPL output and characters sent per task, the items A1 left out
    because the task itself had made them, and the active items (retrievable) at the last checkpoint."""

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
    converged_rate: float | None = None
    holdout_converged_rate: float | None = None
    pass_at_k: dict[str, float] = field(default_factory=dict)
    lm_calls_per_task: float = 0.0
    sub_lm_calls_per_task: float = 0.0
    sub_tokens_per_task: float = 0.0
    cost_usd_per_task: float | None = 0.0
    cost_usd_total: float | None = 0.0
    max_window: int = 0
    stdout_chars_per_task: float = 0.0
    prompt_chars_per_task: float = 0.0
    filtered: int = 0
    active_items_end: float = 0.0

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
    criteria: tuple[Criterion, ...] = ()

    def to_dict(self) -> dict:
        """JSON-compatible form (summary.json): the settings, then `records`, `conditions` and `criteria`."""
        return {**self.settings, "records": self.records,
                "conditions": {n: c.to_dict() for n, c in self.conditions.items()},
                "criteria": [c.to_dict() for c in self.criteria]}

    @classmethod
    def from_dict(cls, d: dict) -> Summary:
        """The summary a to_dict() wrote (every other key is a setting)."""
        settings = {k: v for k, v in d.items() if k not in ("records", "conditions", "criteria")}
        conditions = {n: ConditionSummary.from_dict(c) for n, c in d.get("conditions", {}).items()}
        return cls(settings, int(d.get("records", 0)), conditions,
                   tuple(Criterion(**c) for c in d.get("criteria", ())) or criteria(conditions))


def summarize(records: list[Record], settings: dict | None = None) -> Summary:
    """The ablation summary of some records (`settings`: what the run was asked, kept as given)."""
    by_cond = defaultdict(list)
    for r in records:
        by_cond[r.condition].append(r)
    conditions = {c: _condition(rs) for c, rs in sorted(by_cond.items())}
    return Summary(dict(settings or {}), len(records), conditions, criteria(conditions))


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
                      _mean(r.validations for r in rs if r.validations is not None), **_set_means(rs))


def _set_means(rs: list[Record]) -> dict[str, float]:
    """The mean set scores of runs judged on an endpoint (a run without scores counts 0); none when none was."""
    if all(r.set_F is None for r in rs):
        return {}
    return {name: round(sum(getattr(r, name) or 0.0 for r in rs) / len(rs), 4)
            for name in ("set_P", "set_recall", "set_F")}


def _condition(runs: list[Record]) -> ConditionSummary:
    """One condition's summary over all its records."""
    hold = [r for r in runs if r.phase == "holdout"]
    train = [r for r in runs if r.phase == "train"]
    curve = _holdout(hold)
    mean_cost, total_cost = _costs([r.cost_usd for r in runs])
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
        _mean(r.undos for r in runs), _rate(r.converged for r in runs), _rate(r.converged for r in hold),
        pass_at_k(hold), _mean(r.lm_calls for r in runs), _mean(r.sub_lm_calls for r in runs),
        _mean(r.sub_prompt_tokens + r.sub_completion_tokens for r in runs),
        mean_cost, total_cost, max((r.max_window for r in runs), default=0),
        _mean(r.stdout_chars for r in runs), _mean(r.prompt_chars for r in runs),
        sum(len(r.memory_ids_filtered) for r in runs),
        _mean(r.active_items for r in hold if r.checkpoint == max(h.checkpoint for h in hold)) if hold else 0.0)


def _costs(costs: list[float | None]) -> tuple[float | None, float | None]:
    """Mean and total money the runs cost (0.0 without runs); both None when a run's model is not priced."""
    priced = [c for c in costs if c is not None]
    if len(priced) < len(costs):
        return None, None
    return (round(sum(priced) / len(priced), 6) if priced else 0.0), round(sum(priced), 6)


def _rate(flags) -> float | None:
    """The share of True among the flags that are not None (None when every one is None)."""
    known = [f for f in flags if f is not None]
    return round(sum(known) / len(known), 4) if known else None


def pass_at_k(holdout: list[Record]) -> dict[str, float]:
    """pass@k for k = 1 ... the most repeats of a task, over the holdout tasks of the last checkpoint."""
    if not holdout:
        return {}
    last = max(r.checkpoint for r in holdout)
    runs = defaultdict(list)
    for r in holdout:
        if r.checkpoint == last:
            runs[r.task_id].append(r.success)
    out = {}
    for k in range(1, max(len(v) for v in runs.values()) + 1):
        tasks = [v for v in runs.values() if len(v) >= k]
        out[str(k)] = round(sum(1 - math.comb(len(v) - sum(v), k) / math.comb(len(v), k) for v in tasks)
                            / len(tasks), 4)
    return out


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
