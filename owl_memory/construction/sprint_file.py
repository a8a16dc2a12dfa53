"""Sprint files: a sprint's YAML (seed ontology, SHACL shapes, competency questions, namespace, baseline policy and
budget) read into a Sprint with every path resolved, and the graphs it names merged."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from rdflib import Graph

from ..datadir import data_dir
from ..errors import ConfigError, LoadError
from ..rdfio import load_graph, read_text
from ..resources import schema_error, shipped
from .cq import load_cqs

SCHEMA_NAME = "sprint.schema.json"
_DATA_VAR = re.compile(r"\$\{OWL_MEMORY_DATA\}|\$OWL_MEMORY_DATA\b")


@dataclass(frozen=True)
class Sprint:
    """A sprint definition, read from YAML with every path resolved.

    Args:
        name: short name, used in tags and item titles.
        ontology: seed ontology files (merged into the base graph).
        shapes: SHACL shape files (merged into the shapes graph).
        cqs: the competency questions.
        namespace: IRI prefix for nodes the proposer mints.
        baseline: "exclude" (pre-existing violations are not the sprint's) or "repair".
        max_steps: propose / verify / repair steps at most.
        max_repair_rounds: rounds one repair call may take.
    """

    name: str
    ontology: list
    shapes: list
    cqs: list
    namespace: str
    description: str = ""
    baseline: str = "exclude"
    max_steps: int = 20
    max_repair_rounds: int = 10
    source: str = ""


def default_sprint() -> Path:
    """The shipped sprint 1 (experiments/sprint1, installed as owl_memory.sprint1)."""
    return shipped("sprint1", "sprint.yaml")


def load_sprint(path: str | Path) -> Sprint:
    """Read a sprint YAML; relative paths resolve against its folder, ${OWL_MEMORY_DATA} against the data dir."""
    path = Path(path)
    try:
        data = yaml.safe_load(read_text(path, "sprint file"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise LoadError(f"invalid YAML: {getattr(e, 'problem', e)}", source=str(path),
                        line=mark.line + 1 if mark else None) from e
    _check_keys(data, path)
    folder, name = path.resolve().parent, slug(str(data.get("name") or path.parent.name))
    budget = data.get("budget") or {}
    cqs_source = data["cqs"]
    cqs = load_cqs(_resolve(cqs_source, folder) if isinstance(cqs_source, str) else cqs_source)
    return Sprint(name=name, ontology=[_resolve(p, folder) for p in _as_list(data["ontology"])],
                  shapes=[_resolve(p, folder) for p in _as_list(data.get("shapes"))], cqs=cqs,
                  namespace=str(data.get("namespace") or f"http://w3id.org/owl-memory/sprint/{name}/"),
                  description=str(data.get("description") or ""), baseline=str(data.get("baseline", "exclude")),
                  max_steps=int(budget.get("max_steps", 20)),
                  max_repair_rounds=int(budget.get("max_repair_rounds", 10)), source=str(path))


def repair_sprint(name: str, data: str | Path, shapes: str | Path) -> Sprint:
    """A repair case as a sprint without competency questions: done when the data conforms (every violation
    counts)."""
    return Sprint(name=slug(name), ontology=[Path(data)], shapes=[Path(shapes)], cqs=[],
                  namespace=f"http://w3id.org/owl-memory/sprint/{slug(name)}/",
                  description="Repair the data until it conforms to the shapes.", baseline="repair", source=str(data))


def _check_keys(data: object, path: Path) -> None:
    """LoadError naming the first place the sprint file breaks schemas/sprint.schema.json, in one line."""
    error = schema_error(SCHEMA_NAME, data)
    if error is not None:
        raise LoadError(f"not a valid sprint file at {error}; schemas/{SCHEMA_NAME} lists the keys and their types",
                        source=str(path))


def _as_list(value) -> list:
    """A value or list of values as a list."""
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _resolve(text: str, folder: Path) -> Path:
    """A sprint path: ${OWL_MEMORY_DATA} substituted (ConfigError when that folder is absent), relative to folder."""
    text = str(text)
    if _DATA_VAR.search(text):
        text = _DATA_VAR.sub(lambda _: str(data_dir(required=True)), text)
    p = Path(os.path.expanduser(text))
    p = p if p.is_absolute() else folder / p
    if not p.exists():
        raise ConfigError(f"sprint file {p} not found; fix the path in the sprint YAML (relative paths start at "
                          f"{folder})")
    return p


def slug(text: str) -> str:
    """A name without whitespace (titles stay within 10 words)."""
    return "-".join(text.split()) or "sprint"


def merged(paths: list) -> Graph:
    """One graph holding every file of a list (namespace bindings kept, the first file's where two differ)."""
    g = Graph(bind_namespaces="none")
    for p in paths:
        part = load_graph(p)
        for prefix, ns in part.namespaces():
            g.bind(prefix, ns, override=False)
        g += part
    return g
