"""A generated curriculum as typed values (its sources, options, tasks and counts) and as the YAML file
`load_curriculum` reads, with a header that says how it was made and how its tasks split."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from rdflib import URIRef

from ..vocab import local_name

SPLITS = ("entity", "ontology")


@dataclass(frozen=True)
class Source:
    """One ontology a curriculum is made from.

    Args:
        name: its short name in the curriculum (ids, the tasks' `ontology`).
        path: the file, resolved.
        package: the installed package that ships it ("" for a file of the user's).
        inside: its path inside that package.
    """

    name: str
    path: Path
    package: str = ""
    inside: str = ""

    def entry(self, folder: Path) -> dict:
        """The curriculum's ontology entry: inside its package, else relative to `folder` (the YAML's)."""
        if self.package:
            return {"name": self.name, "package": self.package, "path": self.inside}
        return {"name": self.name, "path": Path(os.path.relpath(self.path, folder)).as_posix()}


@dataclass(frozen=True)
class MakeOptions:
    """How to make a curriculum.

    Args:
        families: family or group names to use; () for every family.
        split: entity (holdout tasks ask about entities no train task names) or ontology (holdout tasks come from
            ontologies no train task uses).
        tasks: how many tasks in all.
        seed: the seed of every random choice (same seed, same ontologies: the same file).
        holdout: the share of tasks (and of entities or ontologies) held out.
        max_answers: list questions with more answers than this are left out (counts are not capped).
        holdout_ontologies: with split ontology, the names of the ontologies to hold out; () lets the seed pick.
        id: the curriculum's id; "" for one made of the names, split and seed.
    """

    families: tuple[str, ...] = ()
    split: str = "entity"
    tasks: int = 200
    seed: int = 0
    holdout: float = 0.25
    max_answers: int = 15
    holdout_ontologies: tuple[str, ...] = ()
    id: str = ""


@dataclass(frozen=True)
class GeneratedTask:
    """One generated task: a question, its gold SELECT and the answers that gold returns.

    Args:
        id: stable across runs (ontology, family and bound terms).
        ontology: the name of its ontology.
        family: its family (also its task type).
        group: its family's group.
        question: the question in words.
        gold: the SELECT with bound values that the sparql judge runs over the ontology.
        about: the IRIs the question asks about (the entity split keeps them apart).
        answers: the gold's result terms, sorted (a count's one number).
        split: train or holdout.
    """

    id: str
    ontology: str
    family: str
    group: str
    question: str
    gold: str
    about: tuple[str, ...]
    answers: tuple
    split: str = "train"

    def answer_text(self) -> str:
        """The gold answer as an agent would give it: web IRIs in angle brackets (other IRIs by their local name),
        texts quoted, numbers bare."""
        return ", ".join(_said(a) for a in self.answers)

    def to_dict(self, several: bool) -> dict:
        """The task's entry in the curriculum YAML (`several`: name its ontology)."""
        own = {"ontology": self.ontology} if several else {}
        return {"id": self.id, "query": self.question, "tags": [self.family, self.group], "task_type": self.family,
                "expect": {"sparql": self.gold}, "split": self.split, **own}


def _said(term) -> str:
    """One answer term as an agent would write it."""
    if isinstance(term, URIRef):
        return f"<{term}>" if str(term).startswith(("http://", "https://")) else local_name(term)
    return str(term) if isinstance(term.toPython(), int | float) else f'"{term}"'


@dataclass(frozen=True)
class GeneratedCurriculum:
    """A curriculum made from ontologies.

    Args:
        id: its id.
        sources: the ontologies, in the order given.
        options: how it was made.
        families: the families it used, in registry order.
        tasks: train tasks in stream order, then holdout tasks.
        held_out: the ontology names (split ontology) or entity IRIs (split entity) held out.
        candidates: how many distinct tasks the families offered before sampling.
        duplicates: candidates left out as equivalent to another (same question or same gold).
        dropped: sampled candidates left out because their gold or the judge disagreed with the listing.
    """

    id: str
    sources: tuple[Source, ...]
    options: MakeOptions
    families: tuple[str, ...]
    tasks: tuple[GeneratedTask, ...]
    held_out: tuple[str, ...] = ()
    candidates: int = 0
    duplicates: int = 0
    dropped: int = 0

    def split_counts(self) -> dict[str, int]:
        """Tasks per split."""
        return {s: sum(t.split == s for t in self.tasks) for s in ("train", "holdout")}

    def family_counts(self) -> dict[str, dict[str, int]]:
        """Family -> tasks per split (every family used, zeros included)."""
        return {f: {s: sum(t.family == f and t.split == s for t in self.tasks) for s in ("train", "holdout")}
                for f in self.families}

    def summary(self) -> dict:
        """What was made, JSON-compatible (the YAML's `generated` block plus the id and task count)."""
        return {"id": self.id, "tasks": len(self.tasks), **self._generated()}

    def _generated(self) -> dict:
        """The `generated` block: how the curriculum was made and how its tasks split."""
        o = self.options
        held = {"ontologies": list(self.held_out)} if o.split == "ontology" else {"entities": len(self.held_out)}
        return {"by": "owl-memory curriculum make", "ontologies": [s.name for s in self.sources], "split": o.split,
                "seed": o.seed, "holdout": o.holdout, "max_answers": o.max_answers, "held_out": held,
                "candidates": self.candidates, "duplicates": self.duplicates, "dropped": self.dropped,
                "splits": self.split_counts(), "families": self.family_counts()}

    def to_yaml(self, folder: Path) -> str:
        """The curriculum file's text; ontology paths relative to `folder` (where it will be written)."""
        several = len(self.sources) > 1
        entries = [s.entry(folder) for s in self.sources]
        data = {"id": self.id, **({"ontologies": entries} if several else {"ontology": entries[0]}),
                "generated": self._generated(), "tasks": [t.to_dict(several) for t in self.tasks]}
        body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1 << 16, default_flow_style=None)
        return "\n".join(self._header(folder)) + "\n" + body

    def _header(self, folder: Path) -> list[str]:
        """Comment lines: what was made, what the split holds apart, the command that makes it again."""
        o, n = self.options, self.split_counts()
        names = ", ".join(s.name for s in self.sources)
        apart = (f"holdout tasks come from {', '.join(self.held_out)}, an ontology no train task uses"
                 if o.split == "ontology" else
                 f"{len(self.held_out)} entities are held out: holdout tasks ask only about them, no train task "
                 "names them")
        return [f"# Made by `owl-memory curriculum make` from {names}: {len(self.tasks)} tasks, {n['train']} train "
                f"and {n['holdout']} holdout (seed {o.seed}).",
                f"# Split {o.split}: {apart}. Per family and split: `generated.families` below.",
                f"# Make it again (from this file's folder): {self.command(folder)}"]

    def command(self, folder: Path) -> str:
        """The command line that makes this curriculum again, run from `folder`."""
        o = self.options
        parts = ["owl-memory curriculum make", *(s.name if s.package else s.entry(folder)["path"]
                                                 for s in self.sources),
                 f"--split {o.split}", f"--tasks {o.tasks}", f"--seed {o.seed}"]
        parts += [f"--families {','.join(o.families)}"] if o.families else []
        parts += [f"--holdout {o.holdout}"] if o.holdout != MakeOptions.holdout else []
        parts += [f"--max-answers {o.max_answers}"] if o.max_answers != MakeOptions.max_answers else []
        parts += [f"--holdout-ontology {h}" for h in o.holdout_ontologies]
        parts += [f"--id {o.id}"] if o.id else []
        return " ".join([*parts, "--out FILE"])

