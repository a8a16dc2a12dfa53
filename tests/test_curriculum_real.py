"""`owl-memory curriculum make` on real ontologies of ../shared/data (PROV-O, SKOS, the SPAR family, BIBO, UniProt
core, schema.org with a task cap): every gold answers over its ontology, the judge accepts the gold given back and
refuses a wrong answer, the splits hold, the same seed makes the same file, and every family finds tasks somewhere."""

import json

import pytest
from click.testing import CliRunner
from rdflib import URIRef

from owl_memory.cli import main
from owl_memory.learning import judge, load_curriculum
from owl_memory.learning.curriculum_make import candidates, make_curriculum, select_families
from owl_memory.learning.families import FAMILIES, parse, view_of
from owl_memory.learning.generated import MakeOptions
from owl_memory.rdfio import load_graph

pytestmark = pytest.mark.shared_data
JUDGED = ("prov-o.ttl", "skos.ttl", "fabio.ttl", "cito.ttl", "bibo.owl", "doco.ttl")  # tasks judged one by one
ONTOLOGIES = (*JUDGED, "uniprot-core.ttl")


def path(shared_data, name: str):
    """An ontology file of the shared data."""
    return shared_data / "ontologies" / name


def agent_answer(graph, gold: str) -> str:
    """The gold's answer as an agent would write it: CURIEs where the ontology binds a prefix, texts, numbers."""
    terms = sorted({t for row in graph.query(gold) for t in row if t is not None}, key=str)
    return "; ".join(graph.namespace_manager.normalizeUri(t) if isinstance(t, URIRef) else str(t) for t in terms)


@pytest.mark.parametrize("name", JUDGED)
def test_tasks_from_a_real_ontology_have_gold_the_judge_reads(shared_data, tmp_path, name):
    out = tmp_path / "c.yaml"
    result = CliRunner().invoke(main, ["curriculum", "make", str(path(shared_data, name)), "--tasks", "24",
                                       "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["tasks"] == 24 and summary["splits"] == {"train": 18, "holdout": 6}
    assert summary["dropped"] == 0 and sum(1 for n in summary["families"].values() if sum(n.values())) >= 12
    course, graph = load_curriculum(out), load_graph(path(shared_data, name))
    for t in course.tasks:
        right = agent_answer(graph, t.expect.gold)
        assert right, t.id  # the gold answers
        assert judge(t.expect, right, ontology=graph, task=t.query).success, (t.id, right)
        assert not judge(t.expect, "I could not find it.", ontology=graph, task=t.query).success, t.id


@pytest.mark.slow
def test_the_entity_split_holds_on_several_real_ontologies(shared_data):
    made = make_curriculum([path(shared_data, n) for n in ("prov-o.ttl", "skos.ttl", "fabio.ttl")],
                           MakeOptions(tasks=90, seed=7))
    train = {e for t in made.tasks if t.split == "train" for e in t.about}
    holdout = [t for t in made.tasks if t.split == "holdout"]
    assert len(holdout) == 22 and all(t.about and not set(t.about) & train for t in holdout)
    assert {t.ontology for t in holdout} == {"prov-o", "skos", "fabio"}  # each ontology has held-out entities


@pytest.mark.slow
def test_the_ontology_split_holds_whole_ontologies_out_and_train_judges_on_each_tasks_own(shared_data, tmp_path):
    files = [str(path(shared_data, n)) for n in ("skos.ttl", "prov-o.ttl", "cito.ttl")]
    out = tmp_path / "o.yaml"
    result = CliRunner().invoke(main, ["curriculum", "make", *files, "--split", "ontology", "--holdout-ontology",
                                       "prov-o", "--families", "hierarchy,schema", "--tasks", "60", "--out", str(out)])
    assert result.exit_code == 0, result.output
    course = load_curriculum(out)
    assert {t.ontology for t in course.holdout} == {"prov-o"} and {t.ontology for t in course.train} == {"skos", "cito"}
    assert len(course.holdout) == 15 and course.ontology_path is None
    trained = CliRunner().invoke(main, ["train", str(out), "--split", "holdout", "--limit", "4", "--lm", "scripted",
                                        "--memory", str(tmp_path / "m"), "--json"])
    assert trained.exit_code == 0, trained.output
    prov = load_graph(course.ontologies["prov-o"])
    for row, task in zip(json.loads(trained.stdout)["tasks"], course.holdout, strict=False):
        gold = sorted(str(t) for r in prov.query(task.expect.gold) for t in r)
        assert row["judgment"]["missing"] == gold[:10], task.id  # judged over PROV-O, the task's own ontology


def test_the_same_seed_makes_the_same_file(shared_data, tmp_path):
    texts = [make_curriculum([path(shared_data, "cito.ttl"), path(shared_data, "doco.ttl")],
                             MakeOptions(tasks=30, seed=11, split="ontology")).to_yaml(tmp_path) for _ in range(2)]
    assert texts[0] == texts[1] and "ontology: cito" in texts[0] and "ontology: doco" in texts[0]


def test_every_family_finds_tasks_in_the_real_ontologies(shared_data):
    views = {n: view_of(n, parse(path(shared_data, n))) for n in ONTOLOGIES}
    offered, _ = candidates(views, select_families(()), 15)
    per_family = {f: sum(t.family == f for t in offered) for f in FAMILIES}
    assert all(n >= 3 for n in per_family.values()), per_family
    assert len(offered) >= 4000


@pytest.mark.slow
def test_schema_org_with_a_task_cap(shared_data):
    made = make_curriculum([path(shared_data, "schemaorg-current-https.ttl")],
                           MakeOptions(tasks=20, max_answers=10, seed=2))
    graph = parse(path(shared_data, "schemaorg-current-https.ttl"))
    assert made.candidates > 5000 and len(made.tasks) == 20 and made.dropped == 0
    assert {t.family for t in made.tasks} >= {"domain", "range", "superclasses", "comment", "subclass-count"}
    for t in made.tasks:
        assert {x for row in graph.query(t.gold) for x in row} == set(t.answers), t.id
