"""The typed tasks every curriculum loader makes (curriculum.py: YAML and SHACL-example folders, text2sparql.py:
TEXT2SPARQL questions files) and the harness, the trainer and the scorer read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..model.judgments import Expect


@dataclass(frozen=True)
class Task:
    """One curriculum task.

    Args:
        id: unique within the curriculum.
        query: the question the agent gets.
        tags: free tags; the first one is the task type when task_type is not given.
        task_type: what kind of task it is (hierarchy, lookup, ...), used for applicability.
        expect: gold for the deterministic judges (kind sparql, answer, ask, shacl or query), None for none.
        split: train or holdout.
        ontology: the name of the task's own ontology (a key of the curriculum's `ontologies`); "" for the
            curriculum's one ontology.
        classes, properties: IRIs of the classes and properties the task is about, when its source annotates them
            (a TEXT2SPARQL question's `classes` and `properties`).
    """

    id: str
    query: str
    tags: tuple[str, ...] = ()
    task_type: str = "general"
    expect: Expect | None = None
    split: str = "train"
    ontology: str = ""
    classes: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """JSON-compatible form."""
        return {"id": self.id, "query": self.query, "tags": list(self.tags), "task_type": self.task_type,
                "expect": self.expect.to_dict() if self.expect else {}, "split": self.split,
                **({"ontology": self.ontology} if self.ontology else {}),
                **({"classes": list(self.classes)} if self.classes else {}),
                **({"properties": list(self.properties)} if self.properties else {})}


@dataclass(frozen=True)
class Curriculum:
    """A named list of tasks over one ontology, over several (each task names its own), or over a remote endpoint
    (no local ontology).

    Args:
        id: the curriculum's id (recorded in provenance).
        ontology_name: short name of the ontology (names joined by "+" when there are several).
        ontology_path: the ontology file, resolved; None for endpoint-only corpora and for several ontologies.
        tasks: the tasks in order.
        ontologies: every ontology by name -> its file, resolved (the one of `ontology_path` included).
        dataset: the dataset id a TEXT2SPARQL questions file's tasks were written for ("" for other curricula).
    """

    id: str
    ontology_name: str
    ontology_path: Path | None
    tasks: tuple[Task, ...]
    ontologies: Mapping[str, Path] = field(default_factory=dict)
    dataset: str = ""

    def ontology_for(self, task: Task) -> Path | None:
        """The ontology file `task` runs over: its own when it names one, else the curriculum's."""
        return self.ontologies[task.ontology] if task.ontology else self.ontology_path

    @property
    def train(self) -> list[Task]:
        """Tasks of the train split, in order."""
        return [t for t in self.tasks if t.split == "train"]

    @property
    def holdout(self) -> list[Task]:
        """Tasks of the holdout split, in order."""
        return [t for t in self.tasks if t.split == "holdout"]
