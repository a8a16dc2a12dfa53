"""TEXT2SPARQL questions files as curricula (the format of the TEXT2SPARQL Challenge, e.g. CK25's questions.yml).

    dataset: {id: https://text2sparql.aksw.org/2025/corporate/, prefix: ck25,
              defaultNamespace: http://ld.company.org/prod-vocab/}
    questions:
      - id: 1
        question: {en: In which department is Ms. Brant?, de: ...}
        features: [SELECT]                 # ASK, COUNT, GROUP, ORDER, LIMIT, ...
        classes: [":Department", ":Employee"]
        properties: [":memberOf"]
        query: {sparql: "PREFIX pv: ... SELECT DISTINCT ?result WHERE { ... }"}

A file is recognized by its content (a `dataset` with an `id` and a list of `questions`), not by its name, and checked
against schemas/text2sparql-questions.schema.json. Each
question in the chosen language is a task whose id is the challenge's qname, "PREFIX:ID-LANG" (ck25:1-en), the key
every answers file and result set of the challenge uses. Its expect is the reference query written for the dataset
id, so `--endpoint-map DATASET_ID=URL` points the tasks at an endpoint serving the data (curriculum.map_endpoints)
and they are judged by running the reference there. Features become tags, and the task type (ask, aggregation or
select); classes and properties (":Name" expanded with defaultNamespace) are the task's about-terms. The split is
seeded: a seeded shuffle of the question ids holds HOLDOUT_SHARE of them out, the same for every language.
"""

from __future__ import annotations

import random
from pathlib import Path

from ..errors import LoadError
from ..model.judgments import Expect
from ..resources import schema_error
from .curriculum_make import share_of
from .tasks import Curriculum, Task

SCHEMA_NAME = "text2sparql-questions.schema.json"
HOLDOUT_SHARE = 0.2
AGGREGATES = {"COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP", "HAVING"}


def is_questions_file(data: object) -> bool:
    """Whether parsed YAML is a TEXT2SPARQL questions file: a `dataset` with an `id` and a list of `questions`."""
    return isinstance(data, dict) and isinstance(data.get("dataset"), dict) and bool(data["dataset"].get("id")) \
        and isinstance(data.get("questions"), list)


def task_type(features: tuple[str, ...]) -> str:
    """The task type of a question's features: ask (an ASK query), aggregation (COUNT, GROUP, AVG, ...) or select."""
    names = {f.upper() for f in features}
    return "ask" if "ASK" in names else "aggregation" if names & AGGREGATES else "select"


def load_questions(data: dict, path: Path, language: str = "en", seed: int = 0) -> Curriculum:
    """The questions in `language` as a curriculum of endpoint tasks, the file checked against
    schemas/text2sparql-questions.schema.json; LoadError naming what is wrong."""
    error = schema_error(SCHEMA_NAME, data)
    if error is not None:
        raise LoadError(f"not a valid TEXT2SPARQL questions file at {error}; schemas/{SCHEMA_NAME} lists the keys and "
                        "their types", source=str(path))
    dataset = data["dataset"]
    prefix, target = str(dataset.get("prefix") or "q"), str(dataset["id"])
    namespace = str(dataset.get("defaultNamespace") or "")
    questions = data["questions"]
    ids = [str(q["id"]) for q in questions]
    if len(set(ids)) != len(ids):
        raise LoadError(f"question ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}", source=str(path))
    held = _held_out(ids, seed)
    tasks = tuple(_task(q, qid, prefix, target, namespace, language, qid in held, path)
                  for q, qid in zip(questions, ids, strict=True))
    return Curriculum(f"{prefix}-{language}", prefix, None, tasks, dataset=target)


def _held_out(ids: list[str], seed: int) -> set[str]:
    """The question ids held out: a seeded shuffle's first HOLDOUT_SHARE (at least one, never all)."""
    if len(ids) < 2:
        return set()
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    return set(order[:share_of(len(ids), HOLDOUT_SHARE)])


def _task(q: dict, qid: str, prefix: str, target: str, namespace: str, language: str, held: bool,
          path: Path) -> Task:
    """One question (its form checked by the schema) as a task; LoadError when it lacks the language."""
    texts = q["question"]
    if not str(texts.get(language) or "").strip():
        raise LoadError(f"question {qid} has no {language!r} text (languages: {', '.join(sorted(texts))}); pick one "
                        "with --language", source=str(path))
    features = tuple(str(f) for f in q.get("features") or ())
    return Task(f"{prefix}:{qid}-{language}", " ".join(str(texts[language]).split()), features, task_type(features),
                Expect("query", str(q["query"]["sparql"]), target), "holdout" if held else "train",
                classes=_terms(q.get("classes"), namespace), properties=_terms(q.get("properties"), namespace))


def _terms(names, namespace: str) -> tuple[str, ...]:
    """Annotated class or property names as IRIs: ":Name" in the default namespace, full IRIs kept."""
    return tuple(namespace + n[1:] if n.startswith(":") else n for n in (str(x) for x in names or ()))
