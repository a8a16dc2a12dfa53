"""Rule-judge agreement: the learned judge rules against gold on held-out tasks, with the gold hidden from them.

For each held-out task with gold of kind sparql, three probe answers are judged twice, by the gold judge and by
the rule judge (which sees only the task text, its type, its ontology and the answer): the gold's own results
(a right answer), the results less their last term, or "none" when there is one (an incomplete answer), and the
results plus one term of the ontology that is not among them (an answer with an extra term). A task is covered
when a rule applies to it. Figures:
- agreement: share of the covered probes on which both judges give the same verdict;
- precision / recall of the rule judge's "success" against gold's "success" over the covered probes;
- coverage: share of the held-out tasks with gold that a rule covers, and the same among the tasks whose task type
  (family) has a train task in the curriculum.
The probes are answers made from the gold, not an agent's: they measure the judge, not an agent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rdflib import Literal, URIRef

from ..rdfio import load_graph
from ..vocab import declared_ontology
from .curriculum import Curriculum, Task
from .judge_rules import RuleJudge
from .judging import judge_terms


@dataclass(frozen=True)
class Agreement:
    """The rule judge against gold over a curriculum's held-out tasks (see the module docstring)."""

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
        figures = {k: None if getattr(self, k) is None else round(getattr(self, k), 4)
                   for k in ("agreement", "precision", "recall", "coverage", "coverage_trained")}
        return {**asdict(self), **figures}


def rule_agreement(course: Curriculum, memory) -> Agreement:
    """The rule judge of `memory` against gold on the held-out tasks of `course` (gold hidden from the rules)."""
    trained = {t.task_type for t in course.train}
    counts, judge, graphs = Agreement().to_dict(), RuleJudge(memory), {}
    try:
        for task in course.holdout:
            if task.expect is None or task.expect.kind != "sparql" or course.ontology_for(task) is None:
                continue
            path = course.ontology_for(task)
            graph = graphs.setdefault(path, load_graph(path))
            _one(task, graph, judge, task.task_type in trained, counts)
    finally:
        judge.close()
    return Agreement(**{k: counts[k] for k in Agreement.__dataclass_fields__})


def _one(task: Task, graph, judge: RuleJudge, trained: bool, counts: dict) -> None:
    """Count one held-out task: its coverage and, when covered, its probes' verdicts."""
    counts["tasks"] += 1
    counts["trained_family"] += trained
    rules = judge.applicable(task.query, graph, task.task_type, declared_ontology(graph))
    if not rules:
        return
    counts["covered"] += 1
    counts["covered_trained"] += trained
    gold_terms = {t for row in graph.query(task.expect.gold) for t in row if t is not None}
    for answer in probes(gold_terms, graph):
        gold = judge_terms(answer, gold_terms, graph, task.query).success
        ruled = all(judge.verdict(r, answer, graph, task.query).success for r in rules)
        counts["probes"] += 1
        counts["agreed"] += gold == ruled
        counts["true_positive"] += gold and ruled
        counts["false_positive"] += ruled and not gold
        counts["false_negative"] += gold and not ruled


def probes(gold_terms: set, graph) -> list[str]:
    """The right, incomplete and extra-term answers made from a gold's results."""
    shown = sorted(_show(t) for t in gold_terms)
    extra = next((s for s in sorted({s for s in graph.subjects() if isinstance(s, URIRef)}, key=str)
                  if s not in gold_terms), None)
    incomplete = shown[:-1] if len(shown) > 1 else ["none"]
    return [", ".join(shown), ", ".join(incomplete)] + ([", ".join(shown + [_show(extra)])] if extra else [])


def _show(term) -> str:
    """A term as an answer names it: an IRI in angle brackets, a literal quoted."""
    return f"<{term}>" if isinstance(term, URIRef) else f'"{term}"' if isinstance(term, Literal) else str(term)
