"""The construction tools a model builds an ontology with: both call styles, caps, minimal-change refusals, undo, the
ontology tools over the working graph, and every mistake a model makes as an "[Error] …" that changes nothing."""

import json
from pathlib import Path

import pytest
from rdflib import RDF, Literal, URIRef

from owl_memory.agent.tools import MAX_RETURN, dumps
from owl_memory.construction.compiled_answers import cq_signature
from owl_memory.construction.session import ConstructionSession
from owl_memory.construction.sprint import run_sprint
from owl_memory.construction.sprint_file import load_sprint
from owl_memory.construction.tools import session_tools
from owl_memory.construction.workspace import graph_text
from owl_memory.model import Construction, MemoryAccess

ROOT = Path(__file__).resolve().parents[1]
SPRINT1 = ROOT / "experiments" / "sprint1" / "sprint.yaml"
KF = "http://w3id.org/owl-memory/sprint1/vocab#"
EX = "http://w3id.org/owl-memory/sprint1/data/"
HASH = "z" + "0" * 64
KG1 = f'ex:kg1 a kf:KnowledgeGraph ; kf:hasCanonicalHash "{HASH}" ; kf:hasStatus "active" ; kf:hasRole "main" .'


def tools_of(session, memory=None, condition="A2") -> dict:
    """The session's tools by name."""
    return {t.name: t for t in session_tools(session, memory, MemoryAccess.of(condition))}


@pytest.fixture
def sprint1(memory):
    """A construction session over sprint 1 and its tools."""
    session = ConstructionSession(load_sprint(SPRINT1), memory)
    return session, tools_of(session, memory)


def is_error(value) -> bool:
    """An "[Error] …" observation."""
    return isinstance(value, str) and value.startswith("[Error]")


def test_both_call_styles_and_every_return_within_the_cap(sprint1):
    session, t = sprint1
    status = t["cq_status"]()
    assert status["passed"] == 0 and status["total"] == 5
    assert [c["signature"] for c in status["cqs"]] == [cq_signature(c) for c in session.sprint.cqs]
    by_position = t["cq_check"]("cq1-knowledge-graph")
    assert by_position == t["cq_check"](cq_id="cq1-knowledge-graph") and "ASK" in by_position["query"]
    applied = t["workspace_apply"](KG1)
    assert applied["added"] == 4 and applied["cqs_passed"] == 1 and applied["delta"].startswith("sha256:")
    again = t["workspace_apply"](added=KG1.replace("active", "revoked"), removed='ex:kg1 kf:hasStatus "active" .')
    assert (again["added"], again["removed"]) == (1, 1)
    assert (URIRef(EX + "kg1"), URIRef(KF + "hasStatus"), Literal("revoked")) in session.ws.working
    stats = t["workspace_stats"]()
    assert stats["version"] == session.ws.head.key and stats["deltas_applied"] == 2 and stats["prefixes"]["kf"] == KF
    for value in (status, by_position, applied, again, stats, t["workspace_verify"]()):
        assert len(dumps(value)) <= MAX_RETURN


def test_undo_reverts_exactly_and_refuses_twice(sprint1):
    session, t = sprint1
    seed = graph_text(session.ws.working)
    first = t["workspace_apply"](KG1)["delta"]
    middle = graph_text(session.ws.working)
    second = t["workspace_apply"]('ex:ds1 a kf:KnowledgeDataset ; kf:hasMember ex:kg1 .')["delta"]
    undone = t["workspace_undo"](second)
    assert undone["undone"] == second and graph_text(session.ws.working) == middle
    assert is_error(t["workspace_undo"](second)) and "undone already" in t["workspace_undo"](delta=second)
    t["workspace_undo"](first)
    assert graph_text(session.ws.working) == seed and session.results[0].passed is False
    redo = t["workspace_undo"](undone["delta"])  # undoing the undo brings the dataset back
    assert redo["added"] == 2 and session.counts.deltas_undone == 3
    version = t["workspace_undo"](session.ws.versions[0].key)
    assert is_error(version) and "version handle" in version


@pytest.mark.parametrize("added, removed, said", [
    ("ex:kg1 kf:hasStatus ; .", "", "not valid Turtle at line 1"),
    ("ex:kg1 foaf:knows ex:kg2 .", "", "declared for you"),
    ('ex:kg1 kf:hasMember [ kf:hasRole "main" ] .', "", "blank nodes"),
    ("", "", "both empty"),
    ("", "ex:kg1 kf:hasRole 'nowhere' .", "not in the working graph"),
    (KG1, KG1, "both added and removed"),
    ("x" * 20_001, "", "at most 20000"),
    (["ex:a", "ex:b"], "", "must be a string"),
])
def test_bad_turtle_is_an_error_and_changes_nothing(sprint1, added, removed, said):
    session, t = sprint1
    before = (graph_text(session.ws.working), len(session.ws.versions))
    message = t["workspace_apply"](added, removed)
    assert is_error(message) and said in message, message
    assert "x" * 40 not in message and (graph_text(session.ws.working), len(session.ws.versions)) == before


def test_minimal_change_rules_refuse_seed_and_target_removals(sprint1):
    session, t = sprint1
    t["workspace_apply"](KG1)
    before = graph_text(session.ws.working)
    seed = t["workspace_apply"]("", "kf:KnowledgeGraph a owl:Class .")
    target = t["workspace_apply"]("", "ex:kg1 a kf:KnowledgeGraph .")
    assert is_error(seed) and "protected" in seed and is_error(target) and "protected" in target
    assert graph_text(session.ws.working) == before and session.counts.refused == 2
    same = t["workspace_apply"](KG1)
    assert is_error(same) and "already" in same


def test_a_change_that_stops_a_node_being_a_target_is_refused(memory, tmp_path):
    shapes = ("@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .\n"
              "ex:S a sh:NodeShape ; sh:targetSubjectsOf ex:status ; sh:property [ sh:path ex:label ; "
              "sh:minCount 1 ] .\n")
    session = ConstructionSession(tiny(tmp_path, shapes), memory)
    t = tools_of(session, memory)
    t["workspace_apply"]('ex:t1 ex:status "on" .')
    refused = t["workspace_apply"]("", 'ex:t1 ex:status "on" .')
    assert is_error(refused) and "stop being targets" in refused
    assert (URIRef("http://example.org/t1"), URIRef("http://example.org/status"), Literal("on")) in session.ws.working


def test_baseline_nodes_are_left_alone(memory, tmp_path):
    shapes = ("@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .\n"
              "ex:F a sh:NodeShape ; sh:targetNode ex:Thing ; sh:property [ sh:path ex:label ; sh:minCount 1 ] .\n")
    session = ConstructionSession(tiny(tmp_path, shapes), memory)
    t = tools_of(session, memory)
    dodge = t["workspace_apply"]('ex:Thing ex:label "a label on the class itself" .')
    assert is_error(dodge) and "baseline" in dodge
    check = t["workspace_verify"]()
    assert check["conforms"] and check["baseline_excluded"] == 1


def test_verify_and_repair_through_candidates(sprint1):
    session, t = sprint1
    t["workspace_apply"]('ex:vc1 a kf:VerifiableCredential ; kf:attestsIntegrity ex:kg1 .')
    assert is_error(t["repair_candidates"]("anything")) and "verif" in t["repair_candidates"]("anything")
    check = t["workspace_verify"]()
    assert not check["conforms"] and check["report"].startswith("sha256:")
    assert t["handle_window"](check["report"], 0, 100)["text"]  # the report is read through handle_window
    issued = next(s for s in check["signatures"] if "issued" in s)
    offered = t["repair_candidates"](issued)["candidates"]
    assert offered and offered[0]["source"] == "library" and offered[0]["id"].startswith("c")
    outcome = t["repair_apply"](offered[0]["id"], focus="ex:vc1")
    assert outcome["verified"] and outcome["applied_to"] == 1 and outcome["remaining"] == 0
    assert is_error(t["repair_apply"]("c999")) and is_error(t["repair_candidates"]("Nope|x|y|z"))
    assert is_error(t["repair_apply"](offered[0]["id"]))  # nothing of that signature is open any more
    t["workspace_undo"](outcome["delta"])  # back to the verified version: its verification is known again
    assert t["repair_candidates"](issued)["candidates"]


def test_the_repair_tools_look_each_signature_up_in_memory_once_per_session(memory, monkeypatch):
    """repair_candidates and repair_apply, called again and again through a session, read what memory compiled for
    a violation signature once: no key is read twice, and the concrete keys read are the signatures repaired."""
    run_sprint(SPRINT1, memory)  # compiles the repairs sprint 1 needs
    session = ConstructionSession(load_sprint(SPRINT1), memory)
    t = tools_of(session, memory)
    reads, read = [], memory.by_signature
    monkeypatch.setattr(memory, "by_signature", lambda key: reads.append(key) or read(key))
    t["workspace_apply"]('ex:vc1 a kf:VerifiableCredential ; kf:attestsIntegrity ex:kg1 .')
    signatures = list(t["workspace_verify"]()["signatures"])
    for signature in signatures:
        offered = t["repair_candidates"](signature)["candidates"]
        assert offered and offered[0]["source"] == "memory"
        assert t["repair_candidates"](signature)["candidates"] == offered
        assert t["repair_apply"](offered[0]["id"])["verified"]
    assert len(signatures) > 1 and t["workspace_verify"]()["conforms"]
    assert len(reads) == len(set(reads)), "no key is read twice"
    assert sorted(k for k in reads if not k.startswith(("abstract:", "follows:"))) == sorted(signatures)


def test_ontology_tools_read_the_working_graph(sprint1):
    session, t = sprint1
    classes = t["ontology_classes"]()["total"]
    assert t["ontology_query"](f"ASK {{ <{EX}kg1> ?p ?o }}") == {"ask": False}
    t["workspace_apply"]('ex:NewKind a owl:Class . ' + KG1)
    assert t["ontology_classes"]()["total"] == classes + 1
    assert t["ontology_query"](f"ASK {{ <{EX}kg1> ?p ?o }}") == {"ask": True}
    service = t["ontology_query"]("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
    assert is_error(service) and "SERVICE" in service


def test_relative_iris_resolve_under_the_sprint_namespace_not_the_working_directory(sprint1):
    session, t = sprint1
    t["workspace_apply"]("<kg7> a kf:KnowledgeGraph .")
    assert (URIRef(EX + "kg7"), RDF.type, URIRef(KF + "KnowledgeGraph")) in session.ws.working
    assert not any(str(x).startswith("file:") for triple in session.ws.working for x in triple)


def test_wrong_prefix_is_named_as_unseen_terms(sprint1):
    _, t = sprint1
    wrong = "http://w3id.org/owl-memory/sprint1/vocab/"  # a slash where the vocabulary has a hash
    out = t["workspace_apply"](f"@prefix kf: <{wrong}> .\nex:kg9 a kf:KnowledgeGraph .")
    assert out["unseen_terms"] == [wrong + "KnowledgeGraph"] and "prefix" in out["note"]


def test_a_large_verification_is_capped_and_a4_gets_it_whole(memory, tmp_path):
    props = " ;\n".join(f"sh:property [ sh:path ex:p{i:02d} ; sh:minCount 1 ]" for i in range(60))
    shapes = ("@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .\n"
              f"ex:LongShapeNameForManySignatures a sh:NodeShape ; sh:targetClass ex:Thing ;\n{props} .\n")
    session = ConstructionSession(tiny(tmp_path, shapes), memory)
    t = tools_of(session, memory)
    t["workspace_apply"](" ".join(f"ex:t{i} a ex:Thing ." for i in range(30)))
    capped = t["workspace_verify"]()
    assert len(dumps(capped)) <= MAX_RETURN and capped["truncated"]
    assert capped["violation_count"] == 60 * 30
    assert capped["signatures_total"] == 60 and capped["focus_nodes_total"] == 30
    whole = tools_of(session, memory, "A4")["workspace_verify"]()
    assert len(whole["signatures"]) == 60 and len(whole["focus_nodes"]) == 30
    assert "sh:focusNode" in whole["report_text"]


def test_a0_gets_no_compiled_answers_a2_does(memory):
    run_sprint(SPRINT1, memory)
    spec = load_sprint(SPRINT1)
    signature = cq_signature(spec.cqs[0])
    a0 = ConstructionSession(spec, memory, use_memory=False)
    assert tools_of(a0, memory, "A0")["repair_candidates"](signature)["candidates"] == []
    a2 = ConstructionSession(spec, memory)
    t = tools_of(a2, memory)
    offered = t["repair_candidates"](signature)["candidates"]
    assert [c["source"] for c in offered] == ["memory"] and offered[0]["operator"] == "apply_delta"
    outcome = t["repair_apply"](offered[0]["id"])
    assert outcome["verified"] and a2.results[0].passed and a2.counts.compiled_verified == 1
    assert t["repair_candidates"](signature)["candidates"] == []  # it passes now: nothing to offer


def test_construction_events_in_a_trajectory_hold_no_cq_text(sprint1):
    session, _ = sprint1
    seen = []
    t = {x.name: x for x in session_tools(session)}
    t["cq_status"]._box.observer = seen.append
    t["cq_check"]("cq1-knowledge-graph")
    step = next(e for e in seen if isinstance(e, Construction))
    assert step.tool == "cq_check" and "query" not in step.result and "question" not in step.result
    assert json.loads(json.dumps(step.to_dict())) == step.to_dict()


def tiny(folder: Path, shapes: str):
    """A sprint with one CQ (ex:t1 is a thing) over a one-property vocabulary and the given shapes."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.ttl").write_text("@prefix ex: <http://example.org/> . @prefix owl: "
                                      "<http://www.w3.org/2002/07/owl#> .\nex:o a owl:Ontology .\n")
    (folder / "shapes.ttl").write_text(shapes)
    (folder / "cqs.yaml").write_text("prefixes: {ex: 'http://example.org/'}\ncqs:\n  - id: thing\n"
                                     "    query: 'ASK { ex:t1 ?p ?o }'\n")
    (folder / "sprint.yaml").write_text("name: tiny\nontology: vocab.ttl\nshapes: shapes.ttl\ncqs: cqs.yaml\n"
                                        "namespace: http://example.org/\n")
    return load_sprint(folder / "sprint.yaml")
