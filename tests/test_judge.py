"""Deterministic judges on gold and wrong answers; the structural judge; the LLM judge through a scripted LM."""

import re

import dspy
import pytest
from click.testing import CliRunner
from rdflib import Graph

from owl_memory.cli import main
from owl_memory.errors import ConfigError, LoadError
from owl_memory.learning import judge, judge_structural, load_curriculum, shipped_curriculum
from owl_memory.model.judgments import Expect, Judgment

PROV_SUBCLASSES = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX prov: <http://www.w3.org/ns/prov#> "
                   "SELECT ?c WHERE { ?c rdfs:subClassOf prov:Entity }")
TASK = "What are the direct subclasses of prov:Entity?"


@pytest.fixture
def prov(shared_data):
    """The real PROV-O ontology."""
    return shared_data / "ontologies" / "prov-o.ttl"


@pytest.mark.shared_data
@pytest.mark.parametrize("answer, ok", [
    ("Bundle, Collection, Plan", True),
    ("The subclasses of prov:Entity are prov:Bundle, prov:Collection and prov:Plan.", True),
    (["http://www.w3.org/ns/prov#Bundle", "prov:Collection", "Plan"], True),
    ("Bundle, Collection", False),                       # recall 2/3
    ("Bundle, Collection, Plan, Activity", False),       # precision 3/4
    ("I do not know", False),
])
def test_sparql_judge_over_prov_o(prov, answer, ok):
    j = judge({"sparql": PROV_SUBCLASSES}, answer, ontology=prov, task=TASK)
    assert j.success is ok and j.judge == "sparql" and j.confidence == "high"
    assert "precision" in j.reason and "recall" in j.reason
    if answer == "Bundle, Collection":
        assert j.missing == ("http://www.w3.org/ns/prov#Plan",) and "recall 0.67" in j.reason
    if answer == "Bundle, Collection, Plan, Activity":
        assert "precision 0.75" in j.reason


def test_answer_judge_normalizes_and_matches_sets():
    assert judge({"answer": "2"}, " 2. ").success
    assert not judge({"answer": "2"}, "3").success
    assert judge({"answer": ["Ada Lovelace", "Alan Turing"]}, "alan turing and Ada  Lovelace").success
    j = judge({"answer": ["Ada Lovelace", "Alan Turing"]}, "Ada Lovelace")
    assert not j.success and j.missing == ("alan turing",)


def test_ask_judge_reads_the_graph_the_run_produced():
    onto = shipped_curriculum().parent / "library.ttl"
    ask = ("PREFIX lib: <http://w3id.org/owl-memory/examples/library#> "
           "ASK { lib:NewBook a lib:Book ; lib:author lib:Ada }")
    produced = ("@prefix lib: <http://w3id.org/owl-memory/examples/library#> . "
                "lib:NewBook a lib:Book ; lib:author lib:Ada .")
    assert judge({"ask": ask}, produced, ontology=onto).success
    assert not judge({"ask": ask}, "no graph here", ontology=onto).success


def test_shacl_judge(tmp_path):
    shapes = tmp_path / "s.ttl"
    shapes.write_text("@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://ex.org/> . "
                      "ex:S a sh:NodeShape ; sh:targetClass ex:Book ; sh:property [ sh:path ex:title ; "
                      "sh:minCount 1 ] .", encoding="utf-8")
    good = "@prefix ex: <http://ex.org/> . ex:b a ex:Book ; ex:title \"T\" ."
    assert judge({"shacl": str(shapes)}, good).success
    j = judge({"shacl": str(shapes)}, "@prefix ex: <http://ex.org/> . ex:b a ex:Book .")
    assert not j.success and "1 violation" in j.reason


REF = """PREFIX up: <http://purl.uniprot.org/core/> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?protein ?label WHERE { ?protein a up:Protein ; up:encodedIn ?o . OPTIONAL { ?o rdfs:label ?label }
FILTER(?label != "x") }"""


def test_structural_judge_is_blind_to_variable_names_only():
    renamed = REF.replace("?protein", "?p").replace("?label", "?name").replace("?o", "?place")
    j = judge_structural(renamed, REF, "https://sparql.uniprot.org/sparql/")
    assert j.success and "was not queried" in j.reason and j.judge == "structural"
    assert not judge_structural(REF.replace("up:encodedIn", "up:organism"), REF).success
    assert not judge_structural(REF.replace('"x"', '"y"'), REF).success  # filters count
    assert not judge_structural("this is not SPARQL", REF).success


@pytest.mark.shared_data
def test_uniprot_examples_folder_is_a_curriculum(shared_data):
    c = load_curriculum(shared_data / "ontologies" / "uniprot-examples")
    assert len(c.tasks) == 62  # 63 files; one example has no sh:select / sh:ask reference
    t = next(t for t in c.tasks if t.id == "100_uniprot_organelles_or_plasmids")
    assert t.query.startswith("List the proteins encoded by a gene") and "<em>" not in t.query
    assert t.tags == ("chromosome", "list") and t.expect.endpoint == "https://sparql.uniprot.org/sparql/"
    assert judge(t.expect, t.expect.gold.replace("?protein", "?x")).success


def test_shipped_curriculum_has_gold_that_runs():
    c = load_curriculum(shipped_curriculum())
    assert c.id == "library_v1" and len(c.tasks) >= 12 and c.holdout and c.train
    g = Graph().parse(c.ontology_path)
    for t in c.tasks:
        assert t.expect, t.id
        if t.expect.kind == "sparql":
            assert len(g.query(t.expect.gold)) >= 1, t.id


@pytest.mark.parametrize("text, message", [
    ("id: x\n", "'tasks' is a required property"),
    ("id: x\ntasks: 5\n", "tasks: 5 is not of type 'array'"),
    ("id: x\ntasks:\n  - {id: a}\n", "tasks.0: 'query' is a required property"),
    ("id: x\ntasks:\n  - {id: a, query: '   '}\n", "tasks.0.query: '   ' does not match"),
    ("id: x\ntasks:\n  - {id: a, query: q, tags: 5}\n", "tasks.0.tags: 5 is not of type 'array'"),
    ("id: x\ntasks:\n  - {id: a, query: q, colour: red}\n", "'colour' was unexpected"),
    ("id: x\ntasks:\n  - {id: a, query: q, expect: {sparql: 7}}\n", "tasks.0.expect.sparql: 7 is not of type"),
    ("id: x\nontology: lib.ttl\ntasks: []\n", "ontology: 'lib.ttl' is not of type 'object'"),
    ("- a\n", "(top level): ['a'] is not of type 'object'"),
])
def test_a_bad_curriculum_is_one_line_naming_the_key(tmp_path, text, message):
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(LoadError, match=re.escape(message)):
        load_curriculum(tmp_path / "c.yaml")
    done = CliRunner().invoke(main, ["train", str(tmp_path / "c.yaml"), "--lm", "scripted",
                                     "--memory", str(tmp_path / "m")])
    assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1, done.output
    assert not (tmp_path / "m").exists()  # nothing written, not even a new memory folder


def test_bad_curricula_fail_at_load_with_the_task_named(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("id: x\ntasks:\n  - {id: a, query: q, expect: {sparql: 'SELEC nothing'}}\n", encoding="utf-8")
    with pytest.raises(LoadError, match="task a: expect.sparql is not valid SPARQL"):
        load_curriculum(bad)
    bad.write_text("id: x\ntasks:\n  - {id: a, query: q, split: test}\n", encoding="utf-8")
    with pytest.raises(LoadError, match=r"tasks.0.split: 'test' is not one of \['train', 'holdout'\]"):
        load_curriculum(bad)
    bad.write_text("id: x\ntasks: [\n", encoding="utf-8")
    with pytest.raises(LoadError, match="not valid YAML"):
        load_curriculum(bad)


def test_a_gold_of_the_wrong_query_form_is_refused_not_crashed_on(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("id: x\ntasks:\n  - {id: a, query: q, expect: {sparql: 'ASK { ?s ?p ?o }'}}\n", encoding="utf-8")
    with pytest.raises(LoadError, match="task a: expect.sparql must be a query of form SELECT, got ASK"):
        load_curriculum(bad)
    bad.write_text("id: x\ntasks:\n  - {id: a, query: q, expect: {ask: 'SELECT ?s { ?s ?p ?o }'}}\n", encoding="utf-8")
    with pytest.raises(LoadError, match="expect.ask must be a query of form ASK, got SELECT"):
        load_curriculum(bad)
    ontology = shipped_curriculum().parent / "library.ttl"
    with pytest.raises(LoadError, match="form is ASK, not SELECT"):  # an Expect built in code, not loaded
        judge(Expect("sparql", "ASK { ?s ?p ?o }"), "yes", ontology=ontology)
    with pytest.raises(ConfigError, match="must be a SPARQL query string, got tuple"):
        judge(Expect("sparql", ("a", "b")), "a, b", ontology=ontology)


def test_llm_judge_through_a_scripted_lm():
    lm = dspy.utils.DummyLM([{"reasoning": "r", "success": "True", "reason": "the evidence lists all three",
                              "confidence": "Medium"}])
    j = judge(None, "Bundle, Collection, Plan", task=TASK, lm=lm, evidence="tool ontology_describe -> 3 subclasses")
    assert j == Judgment(True, "the evidence lists all three", "medium", "llm", ())
    with pytest.raises(ConfigError, match="no gold"):
        judge(None, "x")


@pytest.mark.shared_data
@pytest.mark.parametrize("answer", ["unknown", "", "Bundle, Collection, Plan"])
def test_a_gold_that_returns_no_rows_judges_no_answer(prov, answer):
    typo = PROV_SUBCLASSES.replace("prov:Entity", "prov:Entiti")
    j = judge({"sparql": typo}, answer, ontology=prov, task=TASK)
    assert not j.success and j.failure_mode == "empty-gold" and j.confidence == "low"
    assert "returned no rows" in j.reason and "expect.empty" in j.reason


@pytest.mark.shared_data
@pytest.mark.parametrize("answer, ok", [("There are none.", True), ("Plan", False)])
def test_a_task_whose_expected_answer_is_nothing_says_so_with_empty(prov, answer, ok):
    none = PROV_SUBCLASSES.replace("prov:Entity", "prov:Bundle")  # prov:Bundle has no subclasses
    j = judge({"sparql": none, "empty": True}, answer, ontology=prov, task="Subclasses of prov:Bundle?")
    assert j.success is ok and j.failure_mode in ("", "extra-answer-terms")
    assert Expect.from_dict({"sparql": none, "empty": True}).to_dict() == {"sparql": none, "empty": True}
    with pytest.raises(ConfigError, match="expect.empty is true or false"):
        Expect.from_dict({"sparql": none, "empty": "yes"})
