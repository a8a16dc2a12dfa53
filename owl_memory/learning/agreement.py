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

from collections import Counter
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

from rdflib import Graph, Literal, URIRef
from rdflib.term import Identifier, Node

from ..adapters import sparql as sparql_text
from ..model import Agreement
from ..rdfio import load_graph
from ..vocab import declared_ontology
from .judge_rules import RuleJudge
from .judging import gold_query, judge_terms, select_terms
from .tasks import Curriculum, Task

if TYPE_CHECKING:
    from ..store import Memory


def rule_agreement(course: Curriculum, memory: Memory) -> Agreement:
    """The rule judge of `memory` against gold on the held-out tasks of `course` (gold hidden from the rules)."""
    trained = {t.task_type for t in course.train}
    counts: Counter[str] = Counter()
    graphs: dict[Path, Graph] = {}
    judge = RuleJudge(memory)
    try:
        for task in course.holdout:
            path = course.ontology_for(task)
            if task.expect is None or task.expect.kind != "sparql" or path is None:
                continue
            graph = graphs.setdefault(path, load_graph(path))
            _one(task, gold_query(task.expect), graph, judge, task.task_type in trained, counts)
    finally:
        judge.close()
    return Agreement(**{f.name: counts[f.name] for f in fields(Agreement)})


def _one(task: Task, gold_select: str, graph: Graph, judge: RuleJudge, trained: bool, counts: Counter[str]) -> None:
    """Count one held-out task: its coverage and, when covered, its probes' verdicts."""
    counts["tasks"] += 1
    counts["trained_family"] += trained
    rules = judge.applicable(task.query, graph, task.task_type, declared_ontology(graph))
    if not rules:
        return
    counts["covered"] += 1
    counts["covered_trained"] += trained
    gold_terms = select_terms(sparql_text.evaluate(graph, gold_select))
    for answer in probes(gold_terms, graph):
        gold = judge_terms(answer, gold_terms, graph, task.query).success
        ruled = all(judge.verdict(r, answer, graph, task.query).success for r in rules)
        counts["probes"] += 1
        counts["agreed"] += gold == ruled
        counts["true_positive"] += gold and ruled
        counts["false_positive"] += ruled and not gold
        counts["false_negative"] += gold and not ruled


def probes(gold_terms: set[Identifier], graph: Graph) -> list[str]:
    """The right, incomplete and extra-term answers made from a gold's results."""
    shown = sorted(_show(t) for t in gold_terms)
    extra = next((s for s in sorted({s for s in graph.subjects() if isinstance(s, URIRef)}, key=str)
                  if s not in gold_terms), None)
    incomplete = shown[:-1] if len(shown) > 1 else ["none"]
    return [", ".join(shown), ", ".join(incomplete)] + ([", ".join(shown + [_show(extra)])] if extra else [])


def _show(term: Node) -> str:
    """A term as an answer names it: an IRI in angle brackets, a literal quoted."""
    return f"<{term}>" if isinstance(term, URIRef) else f'"{term}"' if isinstance(term, Literal) else str(term)
