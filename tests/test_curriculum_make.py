"""`owl-memory curriculum make` on DC Terms (shipped inside owlready2) and on tiny odd ontologies: the shipped
curriculum is what the command makes, every gold answers, the judge accepts the gold and refuses a wrong answer,
the entity split keeps entities apart, bad input is refused in one line with exit 2, and a generated curriculum
runs through `train` and `ablate` with the scripted stand-in."""

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from rdflib import Literal, URIRef

from owl_memory.cli import main
from owl_memory.errors import CurriculumError, LoadError
from owl_memory.learning import judge, load_curriculum
from owl_memory.learning.curriculum_make import candidates, make_curriculum, select_families
from owl_memory.learning.families import FAMILIES, groups, view_of
from owl_memory.learning.generated import MakeOptions
from owl_memory.rdfio import load_graph
from owl_memory.resources import dependency_ontology, shipped
from owl_memory.vocab import local_name

SHIPPED = shipped("curricula", "dcterms.yaml")
DCTERMS = "http://purl.org/dc/terms/"


def make(args: list[str]):
    """Run `owl-memory curriculum make ARGS`; the click result."""
    return CliRunner().invoke(main, ["curriculum", "make", *args])


def gold_terms(graph, gold: str) -> set:
    """The terms a gold SELECT returns, run with rdflib directly."""
    return {t for row in graph.query(gold) for t in row if t is not None}


def said(graph, term) -> str:
    """A term as an agent would write it: a CURIE when the ontology binds a prefix, a text as it is, a number bare."""
    if isinstance(term, URIRef):
        return graph.namespace_manager.normalizeUri(term)
    return str(term)


def values_iris(gold: str) -> set[str]:
    """The IRIs a gold query binds in its first VALUES block."""
    block = re.search(r"VALUES \([^)]*\) \{ \((.*?)\) \}", gold).group(1)
    return set(re.findall(r"<([^>]+)>", block))


@pytest.fixture(scope="module")
def course():
    """The shipped DC Terms curriculum."""
    return load_curriculum(SHIPPED)


@pytest.fixture(scope="module")
def dcterms():
    """DC Terms as a graph."""
    return load_graph(dependency_ontology("dcterms"))


@pytest.mark.slow
def test_the_shipped_dcterms_curriculum_is_what_the_command_makes(tmp_path):
    first = make(["dcterms", "--split", "entity", "--tasks", "300", "--seed", "0", "--out", str(tmp_path / "a.yaml")])
    assert first.exit_code == 0, first.output
    assert (tmp_path / "a.yaml").read_text(encoding="utf-8") == SHIPPED.read_text(encoding="utf-8")


def test_the_seed_decides_the_file(tmp_path):
    texts = []
    for n, seed in enumerate(("4", "4", "5")):
        assert make(["dcterms", "--tasks", "24", "--seed", seed, "--out", str(tmp_path / f"{n}.yaml")]).exit_code == 0
        texts.append((tmp_path / f"{n}.yaml").read_text(encoding="utf-8"))
    assert texts[0] == texts[1] != texts[2]


def test_the_shipped_curriculum_has_a_few_hundred_tasks_with_gold_that_answers(course, dcterms):
    assert course.id == "dcterms-entity-seed0" and len(course.tasks) == 300
    assert len(course.train) == 225 and len(course.holdout) == 75
    assert course.ontology_path == dependency_ontology("dcterms")
    for t in course.tasks:
        assert t.expect.kind == "sparql" and t.task_type in FAMILIES and t.tags[0] == t.task_type
        assert gold_terms(dcterms, t.expect.gold), t.id
    assert len({t.task_type for t in course.tasks}) >= 18


def test_the_header_reports_counts_per_family_and_split(course):
    text = SHIPPED.read_text(encoding="utf-8")
    assert text.startswith("# Made by `owl-memory curriculum make` from dcterms: 300 tasks, 225 train and 75 holdout")
    generated = yaml.safe_load(text)["generated"]
    assert generated["splits"] == {"train": 225, "holdout": 75} and generated["split"] == "entity"
    for family, n in generated["families"].items():
        assert n["train"] == sum(t.task_type == family and t.split == "train" for t in course.tasks), family
        assert n["holdout"] == sum(t.task_type == family and t.split == "holdout" for t in course.tasks), family


def test_holdout_tasks_bind_no_entity_a_train_task_binds(course):
    train = set().union(*(values_iris(t.expect.gold) for t in course.train))
    for t in course.holdout:
        assert not values_iris(t.expect.gold) & train, t.id


def test_the_entity_split_keeps_every_asked_about_entity_on_one_side():
    made = make_curriculum(["dcterms"], MakeOptions(tasks=120, seed=3))
    train = {e for t in made.tasks if t.split == "train" for e in t.about}
    holdout = [t for t in made.tasks if t.split == "holdout"]
    assert holdout and all(t.about and not set(t.about) & train for t in holdout)
    assert set(made.held_out) >= {e for t in holdout for e in t.about}


@pytest.mark.parametrize("family", ["range", "superproperties", "labelled", "label", "definition", "subclass-count",
                                    "term-count", "all-superproperties", "properties-with-range"])
def test_the_judge_accepts_the_gold_answer_and_refuses_a_wrong_one(course, dcterms, family):
    task = next(t for t in course.tasks if t.task_type == family)
    terms = sorted(gold_terms(dcterms, task.expect.gold), key=str)
    right = ", ".join(said(dcterms, t) for t in terms)
    assert judge(task.expect, right, ontology=dcterms, task=task.query).success, (task.id, right)
    wrong = str(int(terms[0].toPython()) + 1) if isinstance(terms[0], Literal) and terms[0].isnumeric() else \
        '"no such text"' if isinstance(terms[0], Literal) else right + ", dcterms:Location"
    verdict = judge(task.expect, wrong, ontology=dcterms, task=task.query)
    assert not verdict.success and verdict.judge == "sparql", (task.id, wrong)
    assert not judge(task.expect, "unknown", ontology=dcterms, task=task.query).success


def test_a_label_whose_words_are_term_names_is_read_as_the_label(dcterms):
    gold = f"SELECT ?l WHERE {{ <{DCTERMS}accessRights> <http://www.w3.org/2000/01/rdf-schema#label> ?l }}"
    task = "What is the label (rdfs:label) of dcterms:accessRights?"
    assert judge({"sparql": gold}, "Access Rights", ontology=dcterms, task=task).success  # "Rights" is dcterms:rights
    assert not judge({"sparql": gold}, "Rights", ontology=dcterms, task=task).success


def test_questions_name_terms_by_label_and_never_paste_iris_into_gold(course):
    ranges = [t for t in course.tasks if t.task_type == "range"]
    assert any('"Date Created"' in t.query for t in ranges)
    for t in course.tasks:
        assert "<http" not in t.query or t.task_type == "label", t.query
        assert re.search(r"VALUES \(", t.expect.gold), t.id


def test_every_family_and_group_name_is_accepted_and_unknown_ones_are_listed(tmp_path):
    result = make(["dcterms", "--families", "hierarchy,rnage", "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "CurriculumError: unknown task families rnage; known: subclasses" in result.output
    assert all(name in result.output for name in FAMILIES) and all(g in result.output for g in groups())
    assert not (tmp_path / "x.yaml").exists()


@pytest.mark.parametrize("args, message", [
    (["dcterms", "--tasks", "5000"], "--tasks 5000 is more than these ontologies and families give: at most 444 tasks"),
    (["dcterms", "--families", "disjoint"], "family disjoint finds nothing in dcterms: it needs a class declared "
                                            "disjoint"),
    (["dcterms", "--split", "ontology"], "give at least two ontologies"),
    (["dcterms", "dc", "--split", "ontology", "--holdout-ontology", "skos"], "--holdout-ontology must name some"),
    (["dcterms", "--holdout-ontology", "dc"], "--holdout-ontology goes with --split ontology"),
    (["dcterms", "--split", "random"], "--split must be one of entity, ontology"),
    (["dcterms", "--tasks", "1"], "--tasks must be at least 2"),
    (["dcterms", "--holdout", "1"], "--holdout is the held-out share"),
    (["nowhere.ttl"], "LoadError: nowhere.ttl: no such ontology file; give a path or one of dcterms"),
])
def test_bad_requests_are_refused_in_one_line_with_exit_2(tmp_path, args, message):
    result = make([*args, "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "x.yaml").exists()


def test_an_unparsable_or_empty_ontology_is_refused(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://example.org/> .\nex:a ex:b", encoding="utf-8")
    result = make([str(bad), "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and "LoadError" in result.output and "bad.ttl" in result.output
    empty = tmp_path / "empty.ttl"
    empty.write_text("@prefix ex: <http://example.org/> .\n", encoding="utf-8")
    result = make([str(empty), "--out", str(tmp_path / "x.yaml"), "--json"])
    error = json.loads(result.output)
    assert result.exit_code == 2 and error["error"] == "CurriculumError"
    assert error["message"].startswith("empty gives no task for any family: it has 0 classes, 0 properties")


@pytest.mark.parametrize("name, text, message", [
    ("o.owl", '<?xml version="1.0"?>\n<Ontology xmlns="http://www.w3.org/2002/07/owl#" ontologyIRI="http://e.org/o">'
              '<Declaration><Class IRI="#A"/></Declaration></Ontology>', "this is OWL/XML, which rdflib does not read"),
    ("o.owl", "@prefix ex: <http://e.org/> .\nex:A a ex:B .\n", "the file looks like turtle, not xml"),
    ("o.ttl", '[{"@id": "http://e.org/A", "@type": ["http://e.org/B"]}]', "the file looks like json-ld, not turtle"),
])
def test_a_file_in_another_syntax_than_its_suffix_says_is_refused_with_the_fix(tmp_path, name, text, message):
    """Every command reads an ontology by its suffix, so a curriculum over a misnamed file would fail at run time."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    result = make([str(tmp_path / name), "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and f"LoadError: {tmp_path / name}: {message}" in result.output, result.output


TINY = """@prefix : <{base}> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:Animal a owl:Class ; rdfs:label "Thing"@en . :Plant a owl:Class ; rdfs:label "Thing"@en .
:Dog a owl:Class ; rdfs:subClassOf :Animal ; rdfs:label "Chien"@fr . :Cat a owl:Class ; rdfs:subClassOf :Animal .
:Puppy a owl:Class ; rdfs:subClassOf :Dog ; rdfs:comment "A young dog." .
:Oak a owl:Class ; rdfs:subClassOf :Plant ; owl:disjointWith :Animal .
:eats a owl:ObjectProperty ; rdfs:domain :Animal ; rdfs:range [ owl:unionOf (:Animal :Plant) ] .
"""


@pytest.mark.parametrize("base", ["http://example.org/zoo#", "urn:zoo:"])
def test_odd_ontologies_make_tasks_the_judge_can_read(tmp_path, base):
    """Labels shared by two terms or in French only, a union range, urn: IRIs."""
    path = tmp_path / "zoo.ttl"
    path.write_text(TINY.format(base=base), encoding="utf-8")
    made = make_curriculum([path], MakeOptions(tasks=14, seed=1, holdout=0.3))
    assert len(made.tasks) == 14 and made.dropped == 0
    graph = load_graph(path)
    for t in made.tasks:
        assert gold_terms(graph, t.gold) == set(t.answers), t.id
        assert judge({"sparql": t.gold}, t.answer_text(), ontology=graph, task=t.question).success, t.id
        assert t.family in ("label", "labelled") or '"Thing"' not in t.question, t.question  # a shared label
    view = view_of("zoo", graph)
    (eats,) = [t for t in candidates({"zoo": view}, select_families(["range"]), 15)[0]]
    assert eats.question == 'Which classes or datatypes make up the range of the property "eats"?'
    assert {local_name(a) for a in eats.answers} == {"Animal", "Plant"}  # the union's members


def test_a_generated_curriculum_runs_through_train_and_ablate(tmp_path):
    out = tmp_path / "dc.yaml"
    assert make(["dcterms", "--tasks", "8", "--seed", "2", "--out", str(out)]).exit_code == 0
    course = load_curriculum(out)
    assert len(course.train) == 6 and len(course.holdout) == 2
    trained = CliRunner().invoke(main, ["train", str(out), "--lm", "scripted", "--memory", str(tmp_path / "m"),
                                        "--json"])
    assert trained.exit_code == 0, trained.output
    summary = json.loads(trained.stdout)
    assert summary["ran"] == 6 and all(t["judgment"]["judge"] == "sparql" for t in summary["tasks"])
    ablated = CliRunner().invoke(main, ["ablate", str(out), "--conditions", "A0,A2", "--lm", "scripted",
                                        "--holdout-every", "6", "--serial", "--out", str(tmp_path / "runs")])
    assert ablated.exit_code == 0, ablated.output
    done = json.loads((tmp_path / "runs" / "summary.json").read_text())
    assert done["curriculum"] == course.id and done["holdout_tasks"] == 2


def test_an_ontology_split_curriculum_runs_through_ablate_each_task_over_its_own_ontology(tmp_path):
    out = tmp_path / "two.yaml"
    made = make(["dcterms", "dcmitype", "--split", "ontology", "--holdout-ontology", "dcmitype", "--tasks", "10",
                 "--seed", "3", "--out", str(out)])
    assert made.exit_code == 0, made.output
    course = load_curriculum(out)
    assert {t.ontology for t in course.holdout} == {"dcmitype"} and "dcmitype" not in {t.ontology for t in course.train}
    ablated = CliRunner().invoke(main, ["ablate", str(out), "--conditions", "A0,A2", "--lm", "scripted",
                                        "--holdout-every", str(len(course.train)), "--serial", "--out",
                                        str(tmp_path / "runs")])
    assert ablated.exit_code == 0, ablated.output
    records = [json.loads(line) for line in (tmp_path / "runs" / "results.jsonl").read_text().splitlines()]
    assert records and all(r["judge"] == "sparql" and not r.get("error") for r in records), records[:2]


def test_load_curriculum_reads_several_ontologies_and_refuses_an_unknown_one(tmp_path):
    onto = dependency_ontology("dcmitype")
    text = ("id: two\nontologies:\n  - {name: dcterms, package: owlready2, path: ontos/dcterms.owl}\n"
            f"  - {{name: types, path: {onto}}}\ntasks:\n  - {{id: a, query: q, ontology: types}}\n"
            "  - {id: b, query: q, ontology: dcterms, split: holdout}\n")
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    c = load_curriculum(tmp_path / "c.yaml")
    assert c.ontology_path is None and c.ontology_name == "dcterms+types"
    assert [c.ontology_for(t) for t in c.tasks] == [onto, dependency_ontology("dcterms")]
    assert c.tasks[0].to_dict()["ontology"] == "types"
    (tmp_path / "c.yaml").write_text(text.replace("ontology: types", "ontology: skos"), encoding="utf-8")
    with pytest.raises(LoadError, match="task a: ontology 'skos' is not one of the curriculum's"):
        load_curriculum(tmp_path / "c.yaml")
    (tmp_path / "c.yaml").write_text(text.replace(", ontology: types", ""), encoding="utf-8")
    with pytest.raises(LoadError, match="task a: name its ontology"):
        load_curriculum(tmp_path / "c.yaml")
    (tmp_path / "c.yaml").write_text(f"id: one\nontologies: [{{path: {onto}}}]\ntasks: [{{id: a, query: q}}]\n",
                                     encoding="utf-8")
    assert load_curriculum(tmp_path / "c.yaml").ontology_path == onto  # one ontology is every task's
    (tmp_path / "c.yaml").write_text(text.replace("package: owlready2", "package: no_such_package"), encoding="utf-8")
    with pytest.raises(LoadError, match="package 'no_such_package' is not installed"):
        load_curriculum(tmp_path / "c.yaml")


def test_the_library_api_refuses_what_the_command_refuses():
    with pytest.raises(CurriculumError, match="at most"):
        make_curriculum(["dcterms"], MakeOptions(tasks=10_000))


def test_every_family_and_group_is_documented_and_the_help_names_the_groups():
    docs = (Path(__file__).resolve().parents[1] / "docs" / "agents.md").read_text(encoding="utf-8")
    section = docs.split("### Curricula from real ontologies", 1)[1]
    for group, members in groups().items():
        row = next(line for line in section.splitlines() if line.startswith(f"| {group} |"))
        assert all(f"`{name}`" in row for name in members), (group, members)
    help_text = " ".join(CliRunner().invoke(main, ["curriculum", "make", "--help"]).output.split())
    assert "groups: " + ", ".join(groups()) in help_text
