"""SHACL-example corpora against endpoints: a folder of sh:SPARQLExecutable examples whose schema:target is pointed
at a loopback Oxigraph (real ontologies as named graphs) is a curriculum judged by running each reference query on
that endpoint; an unmapped target is never contacted (the structural judge decides)."""

import json

import pytest
from click.testing import CliRunner
from dspy.utils import DummyLM

from owl_memory.ablation.harness import ablate
from owl_memory.cli import main
from owl_memory.learning.curriculum import load_curriculum, map_endpoints
from owl_memory.learning.judging import judge
from owl_memory_bench.servers import ontology_endpoint

TARGET = "https://example.org/sparql/"
OWL = "http://www.w3.org/2002/07/owl#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
EXAMPLES = [("1", "classes", "skos"), ("2", "classes", "void"), ("3", "classes", "prof"),
            ("4", "object properties", "prof"), ("5", "classes", "skos")]  # every 5th example is held out
KIND = {"classes": "Class", "object properties": "ObjectProperty"}
EXAMPLE = """@prefix ex: <https://example.org/examples/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix schema: <https://schema.org/> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
ex:{n} a sh:SPARQLExecutable, sh:SPARQLSelectExecutable ;
    rdfs:comment "Which named {what} does the graph http://example.org/graphs/{graph} declare?" ;
    sh:select \"\"\"PREFIX owl: <http://www.w3.org/2002/07/owl#>
SELECT ?x WHERE {{ GRAPH <http://example.org/graphs/{graph}> {{ ?x a owl:{kind} FILTER isIRI(?x) }} }}\"\"\" ;
    schema:keywords "{what}" ;
    schema:target <{target}> .
"""
STEP_ONE = """# corpus step one
import re
url = endpoint_list()['endpoints'][0]['url']
graph = re.search(r'http://example[.]org/graphs/[a-z]+', task).group(0)
kind = 'ObjectProperty' if 'properties' in task else 'Class'
q = endpoint_query(url, 'SELECT ?x WHERE { GRAPH <' + graph + '> { ?x a <http://www.w3.org/2002/07/owl#' + kind +
                   '> FILTER isIRI(?x) } }')
found = ', '.join(r['x'] for r in results_peek(q['handle'], 20)['rows'])
print(q['rows'])"""


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory, shared_data):
    """Oxigraph with three real ontologies as named graphs; its query URL."""
    server = ontology_endpoint(tmp_path_factory.mktemp("endpoint"), shared_data)
    yield f"{server.url}/query"
    server.stop()


@pytest.fixture
def corpus(tmp_path):
    """A folder of five SHACL SPARQL examples targeting a remote endpoint name."""
    folder = tmp_path / "examples"
    folder.mkdir()
    for n, what, graph in EXAMPLES:
        (folder / f"{n}.ttl").write_text(EXAMPLE.format(n=n, what=what, graph=graph, kind=KIND[what], target=TARGET))
    return folder


def agent_lm():
    """A scripted agent for every task of the corpus: query the graph the task names on the listed endpoint."""
    return DummyLM({"# corpus step one": {"reasoning": "Answer.", "code": "SUBMIT(answer=found)"},
                    "": {"reasoning": "Query the endpoint.", "code": STEP_ONE}})


def test_targets_map_to_granted_endpoints(corpus, endpoint):
    course, grants = map_endpoints(load_curriculum(corpus), [f"https://example.org/sparql={endpoint}"])
    assert [g.examples for g in grants] == [5] and grants[0].url == endpoint
    assert all(t.expect.endpoint == f"{TARGET}={endpoint}" and t.query.endswith(f"(SPARQL endpoint: {endpoint})")
               for t in course.tasks)
    unmapped, _ = map_endpoints(load_curriculum(corpus), ["https://elsewhere.org/sparql=http://127.0.0.1:9/q"])
    assert [t.expect.endpoint for t in unmapped.tasks] == [TARGET] * 5


def test_answers_are_judged_on_the_endpoint(corpus, endpoint):
    course, _ = map_endpoints(load_curriculum(corpus), [f"{TARGET}={endpoint}"])
    task = course.tasks[0]
    right = judge(task.expect, f"{SKOS}Collection, {SKOS}Concept, {SKOS}ConceptScheme, {SKOS}OrderedCollection",
                  task=task.query)
    assert right.success and right.judge == "endpoint" and endpoint in right.reason
    assert judge(task.expect, "Collection, Concept, ConceptScheme and OrderedCollection", task=task.query).success
    wrong = judge(task.expect, f"{SKOS}Concept", task=task.query)
    assert not wrong.success and wrong.failure_mode == "missing-answer-terms"
    as_query = f"SELECT ?c WHERE {{ GRAPH ?g {{ ?c a <{OWL}Class> FILTER(STRSTARTS(STR(?c), '{SKOS}')) }} }}"
    assert judge(task.expect, as_query, task=task.query).success
    service = f"SELECT * WHERE {{ SERVICE <http://198.51.100.7/> {{ ?c a <{OWL}Class> }} }}"
    assert not judge(task.expect, service, task=task.query).success
    plain = load_curriculum(corpus).tasks[0]
    assert judge(plain.expect, f"{SKOS}Concept", task=plain.query).judge == "structural"


def test_a_reference_cut_at_the_row_cap_says_so(corpus, endpoint):
    from owl_memory.learning.endpoint_judge import judge_on_endpoint
    from owl_memory.learning.judging import term_sets
    from owl_memory.model.endpoints import EndpointLimits

    task = map_endpoints(load_curriculum(corpus), [f"{TARGET}={endpoint}"])[0].tasks[0]
    verdict = judge_on_endpoint(f"{SKOS}Collection", task.expect, task.query, term_sets,
                                EndpointLimits(max_rows=1, requests=2))
    assert verdict.judge == "endpoint" and verdict.confidence == "low" and "cut at 1" in verdict.reason


def test_a_down_endpoint_fails_the_judgment_not_the_run(corpus):
    course, _ = map_endpoints(load_curriculum(corpus), [f"{TARGET}=http://127.0.0.1:9/query"])
    verdict = judge(course.tasks[0].expect, "anything", task="q")
    assert not verdict.success and verdict.failure_mode == "reference-failed"


def test_a_corpus_ablation_judges_on_the_endpoint(corpus, endpoint, tmp_path):
    summary = ablate(corpus, "A0,A2", out=tmp_path / "out", lm=agent_lm(), parallel=False, max_iters=4,
                     endpoint_map=[f"{TARGET}={endpoint}"])
    records = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert records and {r["judge"] for r in records} == {"endpoint"} and all(r["success"] for r in records)
    assert {name: c["holdout"][-1]["mean"] for name, c in summary.to_dict()["conditions"].items()} == \
        {"A0": 1.0, "A2": 1.0}


def test_ablate_endpoint_map_from_the_command_line(corpus, endpoint, tmp_path):
    out = CliRunner().invoke(main, ["ablate", str(corpus), "--conditions", "A2", "--lm", "scripted", "--serial",
                                    "--endpoint-map", f"{TARGET}={endpoint}", "--out", str(tmp_path / "o"), "--json"])
    assert out.exit_code == 0, out.output
    records = [json.loads(line) for line in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    assert {r["judge"] for r in records} == {"endpoint"} and not any(r["success"] for r in records)
    bad = CliRunner().invoke(main, ["ablate", str(corpus), "--lm", "scripted", "--endpoint-map", "=http://h/q",
                                    "--out", str(tmp_path / "b")])
    assert bad.exit_code == 2 and "TARGET=URL" in bad.output


def test_uniprot_examples_map_to_a_loopback_copy(shared_data, endpoint):
    course = load_curriculum(shared_data / "ontologies" / "uniprot-examples")
    assert {t.expect.endpoint.rstrip("/") for t in course.tasks} == {"https://sparql.uniprot.org/sparql"}
    mapped, grants = map_endpoints(course, [f"https://sparql.uniprot.org/sparql={endpoint}"])
    assert grants[0].examples == len(course.tasks) == 62  # targets written with and without a trailing / alike
    federated = next(t for t in mapped.tasks if "SERVICE" in t.expect.gold)
    verdict = judge(federated.expect, "anything", task=federated.query)
    assert verdict.failure_mode == "reference-failed" and "SERVICE is not allowed" in verdict.reason
    local = next(t for t in mapped.tasks if t.id == "2")  # bacterial taxa: runs on the copy, which holds no taxa
    verdict = judge(local.expect, "none", task=local.query)  # a reference that answers nothing judges nothing
    assert verdict.judge == "endpoint" and not verdict.success and verdict.failure_mode == "empty-gold"
    assert endpoint in verdict.reason and "returned no rows" in verdict.reason


def test_uniprot_federated_examples_run_when_every_endpoint_they_join_is_mapped(shared_data, endpoint):
    rhea = "https://sparql.rhea-db.org/sparql"
    course = load_curriculum(shared_data / "ontologies" / "uniprot-examples")
    joins_rhea = [t for t in course.tasks if t.expect.gold.count("SERVICE") == t.expect.gold.count(f"<{rhea}>") > 0]
    assert len(joins_rhea) >= 3
    mapped, _ = map_endpoints(course, [f"https://sparql.uniprot.org/sparql={endpoint}", f"{rhea}={endpoint}"])
    for task in (t for t in mapped.tasks if t.id in {j.id for j in joins_rhea}):
        verdict = judge(task.expect, "anything", task=task.query)
        # the reference ran on the copies (which hold no UniProt data: it answers nothing, or a count of 0)
        assert verdict.judge == "endpoint" and verdict.failure_mode != "reference-failed", verdict


def test_an_ask_reference_is_judged_on_the_endpoint(endpoint):
    from owl_memory.model.judgments import Expect

    expect = Expect("query", f"ASK {{ GRAPH ?g {{ <{SKOS}Concept> a <{OWL}Class> }} }}", f"{TARGET}={endpoint}")
    assert judge(expect, "Yes.", task="q").success and not judge(expect, "no", task="q").success
    assert judge(expect, f"ASK {{ GRAPH ?g {{ <{SKOS}Collection> a <{OWL}Class> }} }}", task="q").success
    assert not judge(expect, f"ASK {{ GRAPH ?g {{ <{SKOS}Nothing> a <{OWL}Class> }} }}", task="q").success
