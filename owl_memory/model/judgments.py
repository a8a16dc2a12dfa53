"""Judgments: the gold a run is judged against, and a judge's verdict on it (read by the learning loop, provenance,
ablations and the run result)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import fmean

from ..errors import ConfigError

CONFIDENCES = ("high", "medium", "low")
SET_METRICS = ("set_P", "set_recall", "set_F")


@dataclass(frozen=True)
class SetScores:
    """The TEXT2SPARQL Challenge's per-question scores: set precision, recall and F1 of the answer's values against
    the reference's (learning/set_metric.py computes them as the challenge's evaluator does).

    Args:
        set_P: answer values that are reference values, over the answer's values (0 for none).
        set_recall: reference values the answer gives, over the reference's values (0 for none).
        set_F: their harmonic mean (0 when both are 0).
    """

    set_P: float = 0.0  # noqa: N815 - the challenge's own names
    set_recall: float = 0.0
    set_F: float = 0.0  # noqa: N815

    def to_dict(self) -> dict:
        """{"set_P", "set_recall", "set_F"}."""
        return {"set_P": self.set_P, "set_recall": self.set_recall, "set_F": self.set_F}

    @classmethod
    def from_dict(cls, d: dict) -> SetScores:
        """Inverse of to_dict."""
        return cls(float(d["set_P"]), float(d["set_recall"]), float(d["set_F"]))

    @classmethod
    def mean(cls, scores: Iterable[SetScores | None]) -> SetScores:
        """The mean of each metric over every question, None (unanswered, not run) counting 0; all 0 for none."""
        rows = [s or cls() for s in scores]
        if not rows:
            return cls()
        return cls(*(fmean(getattr(s, name) for s in rows) for name in SET_METRICS))


@dataclass(frozen=True)
class Judgment:
    """A judge's verdict on one run.

    Args:
        success: whether the run achieved the task.
        reason: one or two sentences (deterministic judges give precision and recall).
        confidence: high | medium | low.
        judge: which judge decided (sparql, answer, ask, shacl, structural, rule, llm, error).
        missing: expected items the answer lacks (at most 10).
        failure_mode: how a failed run failed (missing-answer-terms, extra-answer-terms, wrong-answer, ...);
            empty on success. Extraction files AntiPatterns under it.
        rules: ids of the JudgeRule items that decided (judge "rule"), in the order they ran.
        scores: the TEXT2SPARQL set scores, when the judge ran the task's reference on an endpoint (None otherwise).
    """

    success: bool
    reason: str
    confidence: str = "high"
    judge: str = "answer"
    missing: tuple[str, ...] = field(default_factory=tuple)
    failure_mode: str = ""
    rules: tuple[str, ...] = ()
    scores: SetScores | None = None

    def to_dict(self) -> dict:
        """JSON-compatible form ("rules" only when judge rules decided, set_P / set_recall / set_F only with
        scores)."""
        return {"success": self.success, "reason": self.reason, "confidence": self.confidence, "judge": self.judge,
                "missing": list(self.missing), "failure_mode": self.failure_mode,
                **({"rules": list(self.rules)} if self.rules else {}),
                **(self.scores.to_dict() if self.scores else {})}

    @classmethod
    def from_dict(cls, d: dict) -> Judgment:
        """Inverse of to_dict."""
        return cls(bool(d["success"]), str(d["reason"]), str(d.get("confidence", "high")), str(d.get("judge", "")),
                   tuple(d.get("missing") or ()), str(d.get("failure_mode") or ""), tuple(d.get("rules") or ()),
                   SetScores.from_dict(d) if "set_F" in d else None)


EXPECT_KINDS = ("sparql", "answer", "ask", "shacl", "query")
EXPECT_OPTIONS = ("endpoint", "empty")  # keys an expect block may hold beside its one kind
EMPTY_GOLD = "empty-gold"  # the failure mode of a run whose gold query returned nothing (nothing is learned from it)
ITERATION_CAP = "iteration-cap"  # the failure mode of a run that reached its iteration cap without SUBMIT


@dataclass(frozen=True)
class Expect:
    """The gold a deterministic judge checks a run against (a task's `expect` block).

    Args:
        kind: sparql (a gold SELECT over the task's ontology), answer (a string, or a list matched as a set), ask
            (an ASK query over the run's graph), shacl (a shapes file) or query (a reference query judged by
            structure).
        gold: the query, answer (a tuple for a list) or shapes file of that kind.
        endpoint: the SPARQL endpoint a reference query was written for (kind query), when known.
        empty: the task's expected answer is nothing (`empty: true`): a gold query that returns no rows then
            judges an answer naming nothing a success. Without it such a gold judges nothing (failure mode
            empty-gold, with a warning: a gold that answers nothing is usually a typo).
        services: the endpoints (all the run's grants: "URL" or "TARGET=URL") a reference query may federate to
            with SERVICE; one naming a mapped TARGET runs on its URL.
    """

    kind: str
    gold: object
    endpoint: str | None = None
    empty: bool = False
    services: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """JSON-compatible form: {kind: gold}, the endpoint when there is one, empty when it is true."""
        gold = list(self.gold) if isinstance(self.gold, tuple) else self.gold
        return {self.kind: gold, **({"endpoint": self.endpoint} if self.endpoint is not None else {}),
                **({"empty": True} if self.empty else {})}

    @classmethod
    def from_dict(cls, d: dict) -> Expect:
        """An expect block: the first kind of EXPECT_KINDS it holds; ConfigError for unknown keys or no kind."""
        unknown = set(d) - set(EXPECT_KINDS) - set(EXPECT_OPTIONS)
        if unknown:
            raise ConfigError(f"unknown expect keys {sorted(unknown)}; use one of {', '.join(EXPECT_KINDS)}")
        kind = next((k for k in EXPECT_KINDS if k in d), None)
        if kind is None:
            raise ConfigError(f"expect needs one of {', '.join(EXPECT_KINDS)}, got {sorted(d)}")
        if not isinstance(d.get("empty", False), bool):
            raise ConfigError(f"expect.empty is true or false, got {d['empty']!r}")
        gold = tuple(d[kind]) if isinstance(d[kind], list | tuple) else d[kind]
        return cls(kind, gold, None if d.get("endpoint") is None else str(d["endpoint"]), bool(d.get("empty")))
