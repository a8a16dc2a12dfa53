"""Recorded answers in the TEXT2SPARQL Challenge's format: a JSON list of {qname, question, query} (one system's
answers file), read once for `owl-memory score` and `--lm replay:PATH`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import LoadError

SUFFIX = " (SPARQL endpoint:"


@dataclass(frozen=True)
class Recorded:
    """The queries of an answers file, by qname and by question text (whitespace collapsed)."""

    path: Path
    by_id: dict[str, str]
    by_question: dict[str, str]

    def query(self, task_id: str | None, task: str) -> str | None:
        """The recorded query of `task_id`, else of the question `task` asks; None when the file has neither."""
        if task_id is not None and task_id in self.by_id:
            return self.by_id[task_id] or None
        return self.by_question.get(question_text(task))


def read_recorded(path: str | Path) -> Recorded:
    """The queries of a challenge answers file (the first answer of each qname, the first non-empty one of each
    question text); LoadError for a missing or malformed file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LoadError("no such answers file; pass the JSON list of {qname, question, query}",
                        source=str(path)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise LoadError(f"not JSON ({str(e)[:120]}); an answers file is a list of {{qname, question, query}}",
                        source=str(path)) from None
    if not isinstance(data, list) or not all(isinstance(a, dict) and isinstance(a.get("qname"), str) for a in data):
        raise LoadError("an answers file is a JSON list of {qname, question, query} objects", source=str(path))
    by_id: dict[str, str] = {}
    by_question: dict[str, str] = {}
    for a in data:
        query = str(a.get("query") or "")
        by_id.setdefault(a["qname"], query)
        if query.strip():
            by_question.setdefault(question_text(str(a.get("question") or "")), query)
    return Recorded(path, by_id, by_question)


def question_text(text: str) -> str:
    """A question's text as recorded questions are matched: whitespace collapsed, a curriculum's endpoint suffix cut."""
    return " ".join(text.split(SUFFIX, 1)[0].split())
