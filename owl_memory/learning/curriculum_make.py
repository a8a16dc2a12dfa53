"""Curricula made from real ontologies (`owl-memory curriculum make`): tasks with SPARQL gold in families a procedure
carries across entities and ontologies, split by entity or by ontology, seeded and reproducible.

Every family lists its candidates over every ontology (its pattern with nothing bound); a question that repeats
another's text or gold is left out, and so is a transitive question whose answer is its direct one's. The split
holds entities (or whole ontologies) out; tasks are then picked one ontology after another, each giving its next
family's task in turn, every (ontology, family) group in seeded order, and a picked candidate becomes a task only
when its gold, run over its ontology, returns exactly the listed answers (never none) and the sparql judge accepts
those answers given back as an answer.
"""

from __future__ import annotations

import random
import re
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import replace
from itertools import islice
from pathlib import Path

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from ..adapters.sparql import evaluate
from ..errors import CurriculumError, LoadError, QueryFailed
from ..resources import DEPENDENCY_ONTOLOGIES, dependency_ontology
from ..vocab import local_name
from .families import FAMILIES, Family, OntologyView, groups, is_builtin, ordered, parse, view_of
from .generated import SPLITS, GeneratedCurriculum, GeneratedTask, MakeOptions, Source
from .judging import judge_terms, normalize, select_rows, select_terms


def make_curriculum(ontologies: Sequence[str | Path], options: MakeOptions | None = None) -> GeneratedCurriculum:
    """A curriculum made from `ontologies` (files, or names of ontologies installed packages ship: dcterms, ...)."""
    options = options or MakeOptions()
    check_options(options)
    families = select_families(options.families)
    sources = resolve_sources(ontologies)
    views = {s.name: view_of(s.name, parse(s.path)) for s in sources}
    offered, duplicates = candidates(views, families, options.max_answers)
    _check_coverage(offered, views, families, options.families)
    rng = random.Random(options.seed)
    train_pool, holdout_pool, held = split(offered, views, options, rng)
    checked = _Checker(views)
    train, holdout = _sample(train_pool, holdout_pool, options, rng, checked, list(views))
    rng.shuffle(train)
    name = options.id or f"{'+'.join(views)}-{options.split}-seed{options.seed}"
    return GeneratedCurriculum(name, sources, options, tuple(f.name for f in families),
                               tuple(train + [replace(t, split="holdout") for t in holdout]), tuple(held),
                               len(offered), duplicates, checked.dropped)


def check_options(options: MakeOptions) -> None:
    """CurriculumError for options no curriculum can be made with."""
    if options.split not in SPLITS:
        raise CurriculumError(f"--split must be one of {', '.join(SPLITS)}, got {options.split!r}")
    if options.tasks < 2:
        raise CurriculumError("--tasks must be at least 2 (one train and one holdout task)")
    if not 0 < options.holdout < 1:
        raise CurriculumError(f"--holdout is the held-out share, between 0 and 1 (exclusive); got {options.holdout}")
    if options.max_answers < 1:
        raise CurriculumError("--max-answers must be at least 1")
    if options.holdout_ontologies and options.split != "ontology":
        raise CurriculumError("--holdout-ontology goes with --split ontology")


def select_families(names: Sequence[str]) -> list[Family]:
    """The families named (family or group names), in registry order; every family for none."""
    known = groups()
    unknown = [n for n in names if n not in FAMILIES and n not in known]
    if unknown:
        every = ", ".join(f.name for f in ordered())
        raise CurriculumError(f"unknown task families {', '.join(unknown)}; known: {every} (or a group: "
                              f"{', '.join(known)})")
    wanted = {f for n in names for f in known.get(n, (n,))}
    return [f for f in ordered() if not names or f.name in wanted]


def resolve_sources(ontologies: Sequence[str | Path]) -> tuple[Source, ...]:
    """The ontologies as sources with unique names; the same file given twice counts once."""
    out: list[Source] = []
    for given in ontologies:
        s = _source(given)
        if any(o.path == s.path for o in out):
            continue
        name, n = s.name, 2
        while any(o.name == name for o in out):
            name, n = f"{s.name}-{n}", n + 1
        out.append(replace(s, name=name))
    if not out:
        raise CurriculumError(f"give at least one ontology: a file, or one of {', '.join(DEPENDENCY_ONTOLOGIES)}")
    return tuple(out)


def _source(given: str | Path) -> Source:
    """One ontology argument: an existing file, else the name of an ontology an installed package ships."""
    path = Path(given)
    if path.is_file():
        return Source(re.sub(r"[^\w.-]+", "-", path.stem) or "ontology", path.resolve())
    if str(given) in DEPENDENCY_ONTOLOGIES:
        package, inside = DEPENDENCY_ONTOLOGIES[str(given)]
        return Source(str(given), dependency_ontology(str(given)), package, inside)
    raise LoadError(f"no such ontology file; give a path or one of {', '.join(DEPENDENCY_ONTOLOGIES)}",
                    source=str(given))


# ---- candidates ---------------------------------------------------------------------------------------------------

def candidates(views: dict[str, OntologyView], families: list[Family], max_answers: int) -> tuple[list, int]:
    """Every distinct candidate task over every ontology (sorted, stable ids) and how many repeats were left out."""
    out: list[GeneratedTask] = []
    seen: set[tuple] = set()
    ids: set[str] = set()
    duplicates = 0
    for view in views.values():
        listed: dict[str, dict[tuple, frozenset]] = {}  # each family's candidates over this view, listed once
        for family in families:
            for task in _offered(view, family, max_answers, listed):
                question = normalize(task.question)  # the same question of another ontology with the same answer too
                keys = {(view.name, question), (view.name, task.gold), (question, task.gold, task.answers)}
                if keys & seen:
                    duplicates += 1
                    continue
                seen |= keys
                out.append(replace(task, id=_unique(task.id, ids)))
    return out, duplicates


def _offered(view: OntologyView, family: Family, max_answers: int,
             listed: dict[str, dict[tuple, frozenset]]) -> Iterator[GeneratedTask]:
    """The candidates one family offers over one ontology, in the order of their bound terms (`listed` keeps what
    each family lists over it: a family that is another's contrast is listed once)."""
    for f in (family, FAMILIES[family.contrast]) if family.contrast else (family,):
        if f.name not in listed:
            listed[f.name] = _listed(view, f)
    contrast = listed[family.contrast] if family.contrast else {}
    for bound, answers in sorted(listed[family.name].items(), key=lambda kv: [str(t) for t in kv[0]]):
        b = dict(zip(family.binds, bound, strict=True))
        about = tuple(sorted(str(t) for v in family.about for t in (answers if v == "answer" else (b[v],))))
        if any(is_builtin(URIRef(a)) for a in about) or (not family.count and len(answers) > max_answers):
            continue
        if (family.keep and not family.keep(view, b, answers)) or contrast.get(bound) == answers:
            continue
        gold = sorted(answers, key=str) if not family.count else [Literal(len(answers), datatype=XSD.integer)]
        yield GeneratedTask(f"{view.name}-{family.name}-{_slug(bound)}", view.name, family.name, family.group,
                            family.ask(view, b), family.gold(b), about, tuple(gold))


def _listed(view: OntologyView, family: Family) -> dict[tuple, frozenset]:
    """Bound terms (in the family's order) -> their answers over one ontology; blank-node bindings left out."""
    out: dict[tuple, set] = {}
    for row in select_rows(evaluate(view.graph, family.candidates_query())):
        *bound, answer = row
        if answer is not None and all(t is not None and not isinstance(t, BNode) for t in bound):
            out.setdefault(tuple(bound), set()).add(answer)
    return {k: frozenset(v) for k, v in out.items()}


def _slug(bound: tuple) -> str:
    """An id part from bound terms: their local names (a literal's text), joined."""
    parts = [re.sub(r"[^A-Za-z0-9]+", "-", local_name(t) if isinstance(t, URIRef) else str(t)).strip("-")[:40]
             for t in bound]
    return "-".join(p or "x" for p in parts)


def _unique(id: str, taken: set) -> str:
    """`id`, or `id-2`, `id-3`, ... when it is taken; recorded as taken."""
    out, n = id, 2
    while out in taken:
        out, n = f"{id}-{n}", n + 1
    taken.add(out)
    return out


def _check_coverage(offered: list, views: dict, families: list[Family], named: Sequence[str]) -> None:
    """CurriculumError for an ontology no family finds anything in, or a named family that finds nothing."""
    found = {t.family for t in offered}
    for n in named:
        members = groups().get(n, (n,))
        if not found & set(members):
            needs = "; or ".join(FAMILIES[m].needs for m in members)
            raise CurriculumError(f"family {n} finds nothing in {', '.join(views)}: it needs {needs}; "
                                  "leave it out of --families or add an ontology that has it")
    which = f"families {', '.join(f.name for f in families)}" if named else "any family"
    for name, view in views.items():
        if not any(t.ontology == name for t in offered):
            raise CurriculumError(f"{name} gives no task for {which}: {_inventory(view)}; pick other families or "
                                  "another ontology")


def _inventory(view: OntologyView) -> str:
    """What an ontology holds, in words (classes, properties, labelled terms)."""
    g = view.graph
    classes = {s for k in (OWL.Class, RDFS.Class) for s in g.subjects(RDF.type, k) if isinstance(s, URIRef)}
    kinds = (RDF.Property, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty)
    properties = {s for k in kinds for s in g.subjects(RDF.type, k) if isinstance(s, URIRef)}
    return f"it has {len(classes)} classes, {len(properties)} properties and {len(view.labels)} labelled terms"


# ---- split and sampling -------------------------------------------------------------------------------------------

def split(offered: list[GeneratedTask], views: dict[str, OntologyView], options: MakeOptions,
          rng: random.Random) -> tuple[list[GeneratedTask], list[GeneratedTask], list[str]]:
    """(train candidates, holdout candidates, what is held out): by entity or by ontology."""
    if options.split == "ontology":
        names = _held_ontologies(list(views), options, rng)
        return [t for t in offered if t.ontology not in names], [t for t in offered if t.ontology in names], names
    entities = sorted({e for t in offered for e in t.about})
    if len(entities) < 2:
        raise CurriculumError(f"--split entity needs at least two entities to keep apart; the tasks name "
                              f"{len(entities)}: add an ontology or families, or use --split ontology")
    rng.shuffle(entities)
    held = set(entities[:share_of(len(entities), options.holdout)])
    train = [t for t in offered if not held & set(t.about)]
    return train, [t for t in offered if t.about and set(t.about) <= held], sorted(held)


def _held_ontologies(names: list[str], options: MakeOptions, rng: random.Random) -> list[str]:
    """The ontologies held out: the ones named, else a seeded pick of the holdout share (at least one, not all)."""
    if len(names) < 2:
        raise CurriculumError("--split ontology holds whole ontologies out: give at least two ontologies")
    if options.holdout_ontologies:
        unknown = [h for h in options.holdout_ontologies if h not in names]
        if unknown or set(options.holdout_ontologies) >= set(names):
            raise CurriculumError(f"--holdout-ontology must name some, not all, of {', '.join(names)}; "
                                  f"got {', '.join(options.holdout_ontologies)}")
        return sorted(set(options.holdout_ontologies))
    order = list(names)
    rng.shuffle(order)
    return sorted(order[:share_of(len(names), options.holdout)])


def share_of(n: int, share: float) -> int:
    """round(n * share), at least 1 and at most n - 1."""
    return min(n - 1, max(1, round(n * share)))


def _sample(train_pool: list, holdout_pool: list, options: MakeOptions, rng: random.Random, checked,
            order: list[str]) -> tuple[list, list]:
    """The checked tasks: the holdout share from the holdout pool, the rest from the train pool (each pool filling
    in for the other when it runs out); CurriculumError when there are too few."""
    if options.tasks > len(train_pool) + len(holdout_pool):
        raise CurriculumError(_too_many(options, len(train_pool), len(holdout_pool), "at most"))
    trains, holdouts = _round_robin(train_pool, rng, checked, order), _round_robin(holdout_pool, rng, checked, order)
    holdout = list(islice(holdouts, share_of(options.tasks, options.holdout)))
    train = list(islice(trains, options.tasks - len(holdout)))
    holdout += list(islice(holdouts, options.tasks - len(holdout) - len(train)))
    if len(train) + len(holdout) < options.tasks or not train or not holdout:  # both pools are used up here
        raise CurriculumError(_too_many(options, len(train), len(holdout), "only") + (
            f" ({checked.dropped} candidates were left out: their gold or the judge could not read their answers)"
            if checked.dropped else ""))
    return train, holdout


def _too_many(options: MakeOptions, train: int, holdout: int, bound: str) -> str:
    """The message for a request the ontologies cannot fill: how many tasks they give, per split."""
    if not train or not holdout:
        return (f"the {options.split} split leaves no {'train' if not train else 'holdout'} task: "
                f"{train} train and {holdout} holdout tasks are possible; add ontologies or families")
    return (f"--tasks {options.tasks} is more than these ontologies and families give: {bound} {train + holdout} "
            f"tasks ({train} train, {holdout} holdout with this split); ask for --tasks {train + holdout} or fewer, "
            "or add ontologies or families")


def _round_robin(pool: list, rng: random.Random, checked, order: list[str]) -> Iterator[GeneratedTask]:
    """The pool's tasks that pass the checks: one ontology after another, each giving its next family's task in
    turn, every (ontology, family) group in seeded order."""
    families = [f.name for f in ordered()]
    groups_of: dict[tuple, list] = {}
    for t in pool:
        groups_of.setdefault((order.index(t.ontology), families.index(t.family)), []).append(t)
    for key in sorted(groups_of):
        rng.shuffle(groups_of[key])
    per_ontology = [_rotate([(t for t in groups_of[k] if checked(t)) for k in sorted(groups_of) if k[0] == o])
                    for o in sorted({k[0] for k in groups_of})]
    return _rotate(per_ontology)


def _rotate(streams: list[Iterator]) -> Iterator:
    """The next item of each stream in turn, until every stream is used up."""
    queue = deque(streams)
    while queue:
        stream = queue.popleft()
        for item in stream:
            yield item
            queue.append(stream)
            break


class _Checker:
    """Checks a candidate before it becomes a task: its gold returns exactly the listed answers over its ontology,
    and the sparql judge (its part after the gold ran) accepts those answers given back. Counts what it drops."""

    def __init__(self, views: dict[str, OntologyView]):
        self.views, self.dropped = views, 0

    def __call__(self, task: GeneratedTask) -> bool:
        """True when the task's gold and the judge agree with its listed answers."""
        graph = self.views[task.ontology].graph
        try:
            got = select_terms(evaluate(graph, task.gold))
        except QueryFailed:  # a gold that does not run (an IRI that is not one, say) makes no task
            got = set()
        ok = bool(got) and got == set(task.answers) and \
            judge_terms(task.answer_text(), got, graph, task.question).success
        self.dropped += not ok
        return ok
