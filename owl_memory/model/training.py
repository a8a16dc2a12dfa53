"""What training reports (learning/train.py makes it, `owl-memory train` prints it or writes `to_dict()` for --json):
each curriculum task's trip through the learning loop (`TrainedTask`), and the totals with the judge rules learned and
their agreement with gold on the held-out tasks (`TrainSummary`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .consolidation import ConsolidationFigures, Report
from .judgments import Judgment, SetScores
from .runs import AnswerQuery, MemoryUse

AGREEMENT_FIGURES = ("agreement", "precision", "recall", "coverage", "coverage_trained")


@dataclass(frozen=True)
class Agreement:
    """The rule judge against gold over a curriculum's held-out tasks (learning/agreement.py: probe answers made from
    each task's gold, judged by both).

    Args:
        tasks: held-out tasks with gold of kind sparql; covered: those a rule applies to.
        trained_family, covered_trained: the same, among tasks whose task type has a train task.
        probes: probe answers judged on covered tasks; agreed: those both judges gave the same verdict.
        true_positive, false_positive, false_negative: the rule judge's "success" against gold's.
    """

    tasks: int = 0
    covered: int = 0
    trained_family: int = 0
    covered_trained: int = 0
    probes: int = 0
    agreed: int = 0
    true_positive: int = 0
    false_positive: int = 0
    false_negative: int = 0

    @property
    def agreement(self) -> float | None:
        """Share of covered probes where rule judge and gold agree (None without any)."""
        return self.agreed / self.probes if self.probes else None

    @property
    def precision(self) -> float | None:
        """Of the probes the rule judge passed, the share gold passed."""
        passed = self.true_positive + self.false_positive
        return self.true_positive / passed if passed else None

    @property
    def recall(self) -> float | None:
        """Of the covered probes gold passed, the share the rule judge passed."""
        gold = self.true_positive + self.false_negative
        return self.true_positive / gold if gold else None

    @property
    def coverage(self) -> float | None:
        """Share of held-out tasks with gold that a rule covers."""
        return self.covered / self.tasks if self.tasks else None

    @property
    def coverage_trained(self) -> float | None:
        """The same, among tasks whose family has a train task."""
        return self.covered_trained / self.trained_family if self.trained_family else None

    def to_dict(self) -> dict:
        """JSON-compatible form: the counts and the figures (rounded to 4 places)."""
        figures = {k: None if (v := getattr(self, k)) is None else round(v, 4) for k in AGREEMENT_FIGURES}
        return {**asdict(self), **figures}


@dataclass(frozen=True)
class RuleCounts:
    """How often judge rules judged a gold run beside gold, and how often they agreed with it (their use and success
    counters)."""

    judged: int = 0
    agreed: int = 0

    def to_dict(self) -> dict[str, int]:
        """JSON form: {judged, agreed}."""
        return asdict(self)


@dataclass(frozen=True)
class LearnedRules:
    """The judge rules a training left in memory: their ids, their agreement with gold while training (in this
    training or an earlier one on the same memory), and on the curriculum's held-out tasks."""

    learned: tuple[str, ...] = ()
    in_training: RuleCounts = RuleCounts()
    agreement: Agreement = Agreement()

    def to_dict(self) -> dict:
        """JSON form: {learned, in_training, agreement}."""
        return {"learned": list(self.learned), "in_training": self.in_training.to_dict(),
                "agreement": self.agreement.to_dict()}


@dataclass(frozen=True)
class TrainedTask:
    """One curriculum task through the learning loop: what its run learned, or the error that stopped it.

    Args:
        id: the task's id in its curriculum.
        error: the exception's type and message when the run (the LM or the interpreter) failed; the fields below
            then keep their defaults.
        answer: the run's answer (its first 200 characters).
        run_id: the run's id.
        judgment: the judge's verdict (None when the run failed).
        extracted: ids of the items the run's extraction left in memory.
        consolidation: what consolidation did with them (`figures` counts it).
        memories_used: the memory items the run used, with rank and score.
        iterations: the RLM's iterations.
        judge_rules: ids of the JudgeRule items the run's gold compiled.
        answer_query: the SPARQL that produced the answer (RunResult.answer_query).
        injected_ref: blob key of the text A1 or A3 injected (RunResult.injected_ref).
    """

    id: str
    error: str | None = None
    answer: str = ""
    run_id: str = ""
    judgment: Judgment | None = None
    extracted: tuple[str, ...] = ()
    consolidation: Report = field(default_factory=Report)
    memories_used: tuple[MemoryUse, ...] = ()
    iterations: int = 0
    judge_rules: tuple[str, ...] = ()
    answer_query: AnswerQuery | None = None
    injected_ref: str | None = None

    @property
    def success(self) -> bool | None:
        """The judgment's verdict; None when the run failed."""
        return None if self.judgment is None else self.judgment.success

    @property
    def figures(self) -> ConsolidationFigures:
        """The run's consolidation figures."""
        return self.consolidation.counts()

    def to_dict(self) -> dict:
        """JSON form: {id, success: null, error} for a failed run, else the run's answer, judgment, items and
        figures."""
        if self.judgment is None:
            return {"id": self.id, "success": None, "error": self.error}
        return {"id": self.id, "success": self.success, "answer": self.answer, "run_id": self.run_id,
                "judgment": self.judgment.to_dict(), "extracted": list(self.extracted),
                "consolidation": self.consolidation.to_dict(), "figures": self.figures.to_dict(),
                "memories_used": [u.to_dict() for u in self.memories_used], "iterations": self.iterations,
                "judge_rules": list(self.judge_rules),
                "answer_query": self.answer_query.to_dict() if self.answer_query else None,
                "injected_ref": self.injected_ref}


@dataclass(frozen=True)
class TrainSummary:
    """A training over one curriculum split: every task in order, the memory's size after it and the judge rules.

    Args:
        curriculum: the curriculum's id.
        tasks: one TrainedTask per task run, in order.
        items: items in the memory afterwards.
        judge_rules: the judge rules learned and their agreement with gold.
    """

    curriculum: str
    tasks: tuple[TrainedTask, ...] = ()
    items: int = 0
    judge_rules: LearnedRules = LearnedRules()

    @property
    def ran(self) -> int:
        """Tasks run."""
        return len(self.tasks)

    @property
    def succeeded(self) -> int:
        """Tasks judged a success."""
        return sum(t.success is True for t in self.tasks)

    @property
    def errors(self) -> int:
        """Tasks whose run failed."""
        return sum(t.error is not None for t in self.tasks)

    @property
    def consolidation(self) -> ConsolidationFigures:
        """The per-run consolidation figures summed over the tasks."""
        return sum((t.figures for t in self.tasks), ConsolidationFigures())

    @property
    def set_scores(self) -> SetScores | None:
        """The TEXT2SPARQL set scores averaged over the tasks (a failed run or one without them counts 0); None when
        no task was judged on an endpoint."""
        scores = [t.judgment.scores if t.judgment else None for t in self.tasks]
        return SetScores.mean(scores) if any(scores) else None

    def to_dict(self) -> dict:
        """JSON form (`owl-memory train --json`): the counts, the summed figures, judge rules, the average set
        scores (tasks judged on an endpoint), and every task."""
        scored = self.set_scores
        return {"curriculum": self.curriculum, "ran": self.ran, "succeeded": self.succeeded, "errors": self.errors,
                "consolidation": self.consolidation.to_dict(), "items": self.items,
                "judge_rules": self.judge_rules.to_dict(), **({"set_scores": scored.to_dict()} if scored else {}),
                "tasks": [t.to_dict() for t in self.tasks]}
