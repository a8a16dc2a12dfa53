"""Curricula: a YAML file (experiments/README.md has the format) or a folder of UniProt-style SHACL SPARQL
examples, as typed tasks.

YAML:
    id: library_v1
    ontology: {name: library, path: library.ttl}      # path relative to the YAML file
    tasks:
      - {id: t1, query: "...", tags: [hierarchy], task_type: hierarchy, expect: {sparql: "SELECT ..."},
         split: train}                                # split: train | holdout (default train)

An ontology entry may name a file inside an installed package instead ({name: dcterms, package: owlready2,
path: ontos/dcterms.owl}). Several ontologies: `ontologies: [{name, path}, ...]`, and each task names its own with
`ontology: NAME` (a task without one uses the top-level `ontology`).

A TEXT2SPARQL questions file (learning/text2sparql.py) is recognized by its content and read the same way: its
questions are query tasks written for its dataset id, which `map_endpoints` maps like a schema:target.

A folder of `sh:SPARQLExecutable` examples (rdfs:comment = the question, sh:select / sh:ask = the reference,
schema:target = the endpoint, schema:keywords = tags) becomes tasks whose expect is `{query, endpoint}`. Such a
folder is a task corpus: `map_endpoints` points its targets at endpoints the user names (a mirror, a local copy),
and a mapped task is judged by running its reference query there (learning/endpoint_judge.py); an unmapped one is
judged structurally against the reference, since its endpoint may not be contacted.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import Path

import yaml
from rdflib import Graph, Namespace
from rdflib.namespace import RDF, RDFS, SH

from ..errors import ConfigError, LoadError
from ..model.endpoints import EndpointGrant, normalize_url, parse_grants
from ..model.judgments import Expect
from ..rdfio import load_graph
from ..resources import package_file, schema_error
from .judging import check_expect
from .tasks import Curriculum, Task
from .text2sparql import is_questions_file, load_questions

SCHEMA = Namespace("https://schema.org/")
SCHEMA_NAME = "curriculum.schema.json"
_TAG = re.compile(r"<[^>]+>")


def load_curriculum(source: str | Path, language: str = "en", seed: int = 0,
                    ontology: str | Path | None = None) -> Curriculum:
    """A curriculum from a YAML file (a curriculum, or a TEXT2SPARQL questions file: its questions in `language`,
    split by `seed`) or from a folder of SHACL SPARQL examples; LoadError names what is wrong. `ontology`: a local
    copy of an endpoint corpus's vocabulary, given to its tasks' ontology tools and layers (ConfigError for a
    curriculum that names its own ontology)."""
    course = _loaded(Path(source), language, seed)
    if ontology is None:
        return course
    if course.ontologies:
        raise ConfigError(f"curriculum {course.id} names its own ontology; --ontology gives an endpoint corpus (a "
                          "TEXT2SPARQL questions file, a folder of SHACL examples) a local copy of its vocabulary")
    path = Path(ontology).resolve()
    if not path.is_file():
        raise LoadError("no such ontology file; pass the endpoint's vocabulary as Turtle, RDF/XML or N-Triples",
                        source=str(ontology))
    return replace(course, ontology_name=path.stem, ontology_path=path, ontologies={path.stem: path})


def _loaded(path: Path, language: str, seed: int) -> Curriculum:
    """The curriculum of a file or folder, as load_curriculum reads it."""
    if path.is_dir():
        return load_examples(path)
    if not path.is_file():
        raise LoadError("no such curriculum file or folder; pass a .yaml file or a folder of .ttl examples",
                        source=str(path))
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise LoadError(f"not valid YAML: {str(e).splitlines()[0]}", source=str(path),
                        line=mark.line + 1 if mark else None) from e
    return load_questions(data, path, language, seed) if is_questions_file(data) else _from_mapping(data, path)


def _from_mapping(data, path: Path) -> Curriculum:
    """Build a Curriculum from parsed YAML, checked against schemas/curriculum.schema.json, then every reference."""
    error = schema_error(SCHEMA_NAME, data)
    if error is not None:
        raise LoadError(f"not a valid curriculum at {error}; schemas/{SCHEMA_NAME} lists the keys and their types",
                        source=str(path))
    top, more = data.get("ontology") or {}, data.get("ontologies") or []
    resolved = [_ontology(o, path) for o in ([top] if top.get("path") else []) + more]
    ontologies = dict(resolved)
    main = resolved[0] if top.get("path") or len(resolved) == 1 else None  # what tasks naming none run over
    tasks = tuple(_task(t, path) for t in data["tasks"])
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise LoadError(f"task ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}", source=str(path))
    for t in tasks:
        _check_ontology(t, ontologies, main is not None, path)
    name = main[0] if main else str(top.get("name") or "+".join(ontologies))
    return Curriculum(str(data["id"]), name, main[1] if main else None, tasks, ontologies)


def _ontology(entry, path: Path) -> tuple[str, Path]:
    """One ontology entry ({name, path} or {name, package, path}) as (name, resolved file); LoadError when missing."""
    try:
        file = package_file(entry["package"], entry["path"]) if entry.get("package") else \
            (path.parent / entry["path"]).resolve()
    except ConfigError as e:
        raise LoadError(f"ontology {entry.get('name') or entry['path']}: {e}", source=str(path)) from e
    if not file.is_file():
        where = f"inside package {entry['package']}" if entry.get("package") else "relative to the curriculum"
        raise LoadError(f"ontology path {entry['path']!r} does not exist ({where})", source=str(path))
    return str(entry.get("name") or file.stem), file


def _check_ontology(task: Task, ontologies: dict, has_default: bool, path: Path) -> None:
    """LoadError when a task names an unknown ontology, or names none where the curriculum has no default."""
    if task.ontology and task.ontology not in ontologies:
        raise LoadError(f"task {task.id}: ontology {task.ontology!r} is not one of the curriculum's "
                        f"({', '.join(ontologies) or 'none'})", source=str(path))
    if not task.ontology and not has_default and len(ontologies) > 1:
        raise LoadError(f"task {task.id}: name its ontology (one of {', '.join(ontologies)})", source=str(path))


def _task(t: dict, path: Path) -> Task:
    """One task of a YAML curriculum (its form checked by the schema); LoadError naming the task."""
    tags = tuple(str(x) for x in t.get("tags") or ())
    split = str(t.get("split") or "train")
    block = dict(t.get("expect") or {})
    try:
        expect = check_expect(block) if block else None
    except ConfigError as e:
        raise LoadError(f"task {t['id']}: {e}", source=str(path)) from e
    return Task(str(t["id"]), str(t["query"]), tags, str(t.get("task_type") or (tags[0] if tags else "general")),
                expect, split, str(t.get("ontology") or ""))


def load_examples(folder: str | Path, holdout_every: int = 5) -> Curriculum:
    """A curriculum from a folder of UniProt-style SHACL SPARQL examples (every Nth task, sorted by id, held out)."""
    folder = Path(folder)
    g = Graph()
    for f in sorted(folder.glob("*.ttl")):
        g += load_graph(f)
    tasks = []
    for n, ex in enumerate(sorted(g.subjects(RDF.type, SH.SPARQLExecutable), key=str), 1):
        tasks.append(_example(g, ex, n, holdout_every))
    if not tasks:
        raise LoadError("no sh:SPARQLExecutable examples in this folder", source=str(folder))
    return Curriculum(folder.name, folder.name, None, tuple(t for t in tasks if t is not None))


def _example(g: Graph, ex, n: int, holdout_every: int) -> Task | None:
    """One example as a task: question from rdfs:comment, reference from sh:select or sh:ask."""
    question = g.value(ex, RDFS.comment)
    reference = g.value(ex, SH.select) or g.value(ex, SH.ask)
    if question is None or reference is None:
        return None
    tags = tuple(sorted(str(k) for k in g.objects(ex, SCHEMA.keywords)))
    endpoint = g.value(ex, SCHEMA.target)
    expect = Expect("query", str(reference), str(endpoint) if endpoint is not None else None)
    text = " ".join(html.unescape(_TAG.sub("", str(question))).split())
    return Task(str(ex).rstrip("/").rsplit("/", 1)[-1], text, tags, "sparql-authoring", expect,
                "holdout" if n % holdout_every == 0 else "train")


def map_endpoints(course: Curriculum, grants) -> tuple[Curriculum, tuple[EndpointGrant, ...]]:
    """The curriculum with each query task whose endpoint a grant names (its TARGET, or its URL) pointed at that
    grant's URL: its expect's endpoint becomes "TARGET=URL" (judged there) and its question names the URL; and the
    grants with the number of tasks each serves."""
    grants = parse_grants(grants)
    served = [_grant_for(t, grants) for t in course.tasks]
    counted = tuple(replace(g, examples=served.count(g) if g.target else None) for g in grants)
    return replace(course, tasks=tuple(map_task(t, grants) for t in course.tasks)), counted


def map_task(task: Task, grants) -> Task:
    """The task pointed at the grant that names its endpoint (see map_endpoints); the task itself when none does."""
    grant, gold = _grant_for(task, parse_grants(grants)), task.expect
    if grant is None or gold is None or "=" in str(gold.endpoint):
        return task
    expect = replace(gold, endpoint=f"{gold.endpoint}={grant.url}",
                     services=tuple(dict.fromkeys(f"{g.target}={g.url}" if g.target else g.url
                                                  for g in parse_grants(grants))))
    return replace(task, query=f"{task.query} (SPARQL endpoint: {grant.url})", expect=expect)


def _grant_for(task: Task, grants: tuple[EndpointGrant, ...]) -> EndpointGrant | None:
    """The grant that names a query task's endpoint (by target, or by URL; a trailing / ignored), or None."""
    if task.expect is None or task.expect.kind != "query" or not task.expect.endpoint:
        return None
    try:
        key = normalize_url(task.expect.endpoint).rstrip("/")
    except ConfigError:
        return None
    return next((g for g in grants if key in {(g.target or "").rstrip("/"), g.url.rstrip("/")}), None)


def shipped_curriculum() -> Path:
    """The curriculum the project ships (experiments/curricula/library.yaml)."""
    from ..resources import shipped

    return shipped("curricula", "library.yaml")
