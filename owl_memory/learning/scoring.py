"""Scoring a file of recorded answers the way the TEXT2SPARQL Challenge does (`owl-memory score`).

The answers file is the challenge's own format: a JSON list of {qname, question, query} (other keys ignored; the
first answer of a qname counts, as in the challenge's evaluator). For every question of the questions file, in the
chosen language, the reference query and the answer's query run on the endpoint `--endpoint-map DATASET_ID=URL`
names, and set_metric.py scores the answer's values against the reference's. The queries are model-written: each
goes through the guard (parsed form: read-only SELECT or ASK, no SERVICE, no FROM) and the endpoint client's limits
(the judge's: 30 s, 20 MB, 10,000 rows per query); one refused or failing scores 0 with its reason in the row, as a
question without an answer does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..agent import EndpointClient, QueryResult, read_recorded
from ..errors import ConfigError, LoadError, OwlMemoryError, QueryRefused
from ..model.endpoints import EndpointGrant
from ..model.judgments import SetScores
from .curriculum import load_curriculum, map_endpoints
from .endpoint_judge import JUDGE_LIMITS, grant_of
from .set_metric import answer_values, reference_values, set_scores
from .tasks import Task


@dataclass(frozen=True)
class QuestionScore:
    """One question's scores.

    Args:
        qname: the challenge's key, "PREFIX:ID-LANG".
        scores: set_P, set_recall, set_F.
        answer_values, reference_values: how many values the answer's and the reference's results hold.
        reason: why the question scored 0 before any comparison (no answer, the answer's query refused or failed,
            the reference failed); "" when both queries ran.
    """

    qname: str
    scores: SetScores
    answer_values: int = 0
    reference_values: int = 0
    reason: str = ""

    def to_dict(self) -> dict:
        """{"qname", "set_P", "set_recall", "set_F", "answer_values", "reference_values", "reason"}."""
        return {"qname": self.qname, **self.scores.to_dict(), "answer_values": self.answer_values,
                "reference_values": self.reference_values, "reason": self.reason}


@dataclass(frozen=True)
class ScoreReport:
    """A scored answers file: the average over every question and one row per question, in the questions' order."""

    dataset: str
    endpoint: str
    average: SetScores
    questions: tuple[QuestionScore, ...]

    def to_dict(self) -> dict:
        """{"dataset", "endpoint", "average": {"set_P", "set_recall", "set_F"}, "questions": [...]}."""
        return {"dataset": self.dataset, "endpoint": self.endpoint, "average": self.average.to_dict(),
                "questions": [q.to_dict() for q in self.questions]}


def score_answers(questions: str | Path, answers: str | Path, endpoint_map, language: str = "en") -> ScoreReport:
    """Score the answers file against the questions file's references on the mapped endpoint."""
    course = load_curriculum(questions, language)
    target = course.dataset
    if not target:
        raise LoadError("not a TEXT2SPARQL questions file (a `dataset` with an `id` and a list of `questions`)",
                        source=str(questions))
    mapped, _ = map_endpoints(course, endpoint_map)
    grant = grant_of(mapped.tasks[0].expect) if mapped.tasks[0].expect else None
    if grant is None:
        raise ConfigError(f"no --endpoint-map entry for the dataset {target}: pass --endpoint-map {target}=URL "
                          "(e.g. http://127.0.0.1:7878/query)")
    given = read_answers(answers)
    rows = tuple(_score(task, given.get(task.id), grant) for task in mapped.tasks)
    return ScoreReport(target, grant.url, SetScores.mean(r.scores for r in rows), rows)


def read_answers(path: str | Path) -> dict[str, str]:
    """qname -> query of a challenge answers file (the first answer of each qname); LoadError for a bad file."""
    return read_recorded(path).by_id


def _score(task: Task, query: str | None, grant: EndpointGrant) -> QuestionScore:
    """One question: its reference and its answer run on the endpoint, the answer's values scored."""
    assert task.expect is not None  # every TEXT2SPARQL task has its reference
    client = EndpointClient([grant], JUDGE_LIMITS)
    reference, problem = _run(client, grant.url, str(task.expect.gold), "the reference")
    relevant = reference_values(reference)
    if not (query or "").strip():
        return QuestionScore(task.id, SetScores(), 0, len(relevant), problem or "no answer")
    got, failed = _run(client, grant.url, str(query), "the answer's query")
    values = answer_values(got)
    return QuestionScore(task.id, set_scores(values, relevant), len(values), len(relevant), problem or failed)


def _run(client: EndpointClient, url: str, query: str, what: str) -> tuple[QueryResult | None, str]:
    """A query's result, or None and why it did not run (refused by the guard, failed or cut on the endpoint)."""
    try:
        result = client.select(url, query)
    except OwlMemoryError as e:
        return None, f"{what} {'was refused' if isinstance(e, QueryRefused) else 'failed'}: " + \
            " ".join(str(e).split())[:200]
    return result, f"{what}'s rows were cut at {JUDGE_LIMITS.max_rows}" if result.truncated else ""
