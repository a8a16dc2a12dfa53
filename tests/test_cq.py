"""Competency questions: loading, deterministic ASK / SELECT evaluation, bound values, the symbolic proposer."""

from pathlib import Path

import pytest
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import XSD

from owl_memory.construction.cq import evaluate, evaluate_all, load_cqs
from owl_memory.construction.proposer import SymbolicProposer, property_constraints
from owl_memory.errors import LoadError
from owl_memory.repair.synth import generate

EX = Namespace("http://example.org/")
SPRINT1 = Path(__file__).resolve().parents[1] / "experiments" / "sprint1"
DATA = """@prefix ex: <http://example.org/> .
ex:kg1 a ex:KnowledgeGraph ; ex:status "active" ; ex:role "main" .
ex:kg2 a ex:KnowledgeGraph ; ex:status "revoked" .
"""
CQS = """
prefixes: {ex: "http://example.org/"}
cqs:
  - id: has-kg
    question: Is there an active knowledge graph?
    query: 'ASK { ?g a ex:KnowledgeGraph ; ex:status "active" }'
  - id: no-suspended
    query: 'ASK { ?g ex:status "suspended" }'
    expected: false
  - id: all-graphs
    query: 'SELECT ?g WHERE { ?g a ex:KnowledgeGraph }'
    expected: [{g: "ex:kg1"}, {g: "<http://example.org/kg2>"}]
  - id: count
    query: 'SELECT ?g ?s WHERE { ?g ex:status ?s }'
    expected: 2
  - id: bound
    query: 'ASK { ?g ex:status ?s }'
    bindings: {s: "suspended"}
    expected: false
"""


@pytest.fixture
def graph():
    """A tiny data graph."""
    return Graph().parse(data=DATA, format="turtle")


def test_load_and_evaluate(graph):
    cqs = load_cqs(CQS)
    assert [c.kind for c in cqs] == ["ASK", "ASK", "SELECT", "SELECT", "ASK"]
    results = evaluate_all(cqs, graph)
    assert [r.passed for r in results] == [True] * 5
    assert results[2].observed == 2 and results[0].to_dict()["observed"] is True


def test_select_rows_must_match_exactly(graph):
    cq = load_cqs({"prefixes": {"ex": str(EX)}, "cqs": [
        {"id": "rows", "query": "SELECT ?g WHERE { ?g ex:role ?r }", "expected": [{"g": "ex:kg2"}]}]})[0]
    assert not evaluate(cq, graph).passed
    graph.add((EX.kg2, EX.role, Literal("x")))
    assert not evaluate(cq, graph).passed  # kg1 is an extra row
    graph.remove((EX.kg1, EX.role, Literal("main")))
    assert evaluate(cq, graph).passed


def test_hostile_binding_is_a_value_not_query_text(graph):
    hostile = '"} ; DROP ALL ; ASK { ?x ?y "'
    cq = load_cqs({"prefixes": {"ex": str(EX)}, "cqs": [
        {"id": "h", "query": "ASK { ?g ex:status ?s }", "bindings": {"s": hostile}}]})[0]
    assert evaluate(cq, graph).observed is False
    graph.add((EX.kg3, EX.status, Literal(hostile)))
    assert evaluate(cq, graph).passed and len(graph) == 6


def test_evaluation_is_deterministic(graph):
    cqs = load_cqs(CQS)
    assert [r.to_dict() for r in evaluate_all(cqs, graph)] == [r.to_dict() for r in evaluate_all(cqs, graph)]


@pytest.mark.parametrize("text, message", [
    ("cqs: [{id: a}]", "needs at least `id:` and `query:`"),
    ("cqs: [{id: a, query: 'ASK {'}]", "invalid SPARQL"),
    ("cqs: [{id: a, query: 'CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }'}]", "write it as ASK or SELECT"),
    ("cqs: [{id: a, query: 'ASK {}'}, {id: a, query: 'ASK {}'}]", "duplicate"),
    ("cqs: [{id: a, query: 'ASK {}', colour: red}]", "unknown keys"),
    ("cqs: {id: a}", "`cqs:` list"),
    ("cqs: [{id: 'two words', query: 'ASK {}'}]", "not a slug"),
    ("cqs: [\n  - id: a\n  query: [", "invalid YAML"),
])
def test_bad_cq_files_raise_load_error(text, message):
    with pytest.raises(LoadError, match=message):
        load_cqs(text)


def test_missing_file(tmp_path):
    with pytest.raises(LoadError, match="no such file"):
        load_cqs(tmp_path / "nope.yaml")


@pytest.mark.parametrize("pattern", [
    "^z[0-9a-f]{64}$", "^(SPARQL\\.(Query|Update)|Validation)$", "^[a-z0-9\\-]+/v[0-9]+\\.[0-9]+\\.[0-9]+$",
    "^https?://(creativecommons\\.org|opensource\\.org)", "^[A-Za-z0-9]+MSP$", "^[^abc]\\d+x*$", "\\w+@\\w+\\.org",
])
def test_pattern_examples_match(pattern):
    import re

    text = generate(pattern)
    assert text is not None and re.search(pattern, text)


def test_symbolic_proposer_answers_every_sprint1_cq():
    graph = Graph().parse(SPRINT1 / "vocabulary.ttl")
    shapes = Graph().parse(SPRINT1 / "shapes.ttl")
    cqs = load_cqs(SPRINT1 / "cqs.yaml")
    proposer = SymbolicProposer("http://w3id.org/owl-memory/sprint1/data/")
    assert not any(r.passed for r in evaluate_all(cqs, graph))
    for cq in cqs:
        proposal = proposer.propose(cq, graph, shapes)
        assert proposal.passes and proposal.added, proposal.note
        for t in proposal.added:
            graph.add(t)
    assert all(r.passed for r in evaluate_all(cqs, graph))
    hashes = list(graph.objects(URIRef("http://w3id.org/owl-memory/sprint1/data/kg1"),
                                URIRef("http://w3id.org/owl-memory/sprint1/vocab#hasCanonicalHash")))
    assert len(hashes) == 1 and str(hashes[0]).startswith("z") and len(hashes[0]) == 65
    token = next(graph.objects(URIRef("http://w3id.org/owl-memory/sprint1/data/prof1"),
                               URIRef("http://www.w3.org/ns/dx/prof/hasToken")))
    assert token.datatype == XSD.token


def test_proposer_reuses_existing_values_and_is_deterministic(graph):
    cq = load_cqs({"prefixes": {"ex": str(EX)}, "cqs": [
        {"id": "r", "query": 'ASK { ex:kg2 ex:status ?s ; ex:role ?r . FILTER(?r = "metadata") }'}]})[0]
    a = SymbolicProposer().propose(cq, graph, Graph())
    b = SymbolicProposer().propose(cq, graph, Graph())
    assert a.passes and a.to_dict() == b.to_dict()
    assert a.added == [(EX.kg2, EX.role, Literal("metadata"))]


def test_proposer_handles_select_with_expected_rows(graph):
    cq = load_cqs({"prefixes": {"ex": str(EX)}, "cqs": [
        {"id": "s", "query": "SELECT ?g WHERE { ?g ex:owner ex:me }", "expected": [{"g": "ex:kg9"}]}]})[0]
    p = SymbolicProposer().propose(cq, graph, Graph())
    assert p.passes and p.added == [(EX.kg9, EX.owner, EX.me)]


def test_proposer_says_when_it_cannot(graph):
    cq = load_cqs({"prefixes": {"ex": str(EX)}, "cqs": [
        {"id": "v", "query": "ASK { ex:kg1 ?p ex:nowhere }"},
        {"id": "f", "query": "ASK { ex:kg1 ex:n ?n . FILTER(?n > 5 && ?n < 3) }"}]})
    p = SymbolicProposer().propose(cqs := cq[0], graph, Graph())
    assert not p.passes and "predicate" in p.note and cqs.id == "v"
    q = SymbolicProposer().propose(cq[1], graph, Graph())
    assert not q.passes and not q.added


def test_property_constraints_read_shapes():
    shapes = Graph().parse(SPRINT1 / "shapes.ttl")
    vocab = Graph().parse(SPRINT1 / "vocabulary.ttl")
    c = property_constraints(shapes, vocab, URIRef("http://w3id.org/owl-memory/sprint1/vocab#hasStatus"))
    assert [str(x) for x in c.in_values] == ["active", "deprecated", "revoked", "suspended"] and c.literal


def test_proposer_fills_min_count_violations_repair_hands_back():
    from owl_memory.repair.verification import verify

    shapes = Graph().parse(data="""@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
        ex:S a sh:NodeShape ; sh:targetClass ex:Thing ;
            sh:property [ sh:path ex:refersTo ; sh:minCount 3 ] , [ sh:path ex:state ; sh:minCount 1 ;
                          sh:in ( "a" "b" ) ] .""", format="turtle")
    graph = Graph().parse(data="@prefix ex: <http://example.org/> . ex:t a ex:Thing ; ex:refersTo ex:x .",
                          format="turtle")
    proposer = SymbolicProposer("http://example.org/new/")
    added = proposer.propose_for_violations(verify(graph, shapes).violations, graph, shapes)
    assert (EX.t, EX.state, Literal("a")) in added and len(added) == 3
    assert {o for _, p, o in added if p == EX.refersTo} == {URIRef("http://example.org/new/t-refersTo-1"),
                                                           URIRef("http://example.org/new/t-refersTo-2")}
    for t in added:
        graph.add(t)
    assert verify(graph, shapes).conforms
