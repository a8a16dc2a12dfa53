"""Ontology construction sprints: sprint 1 offline, the fabric sprint on real data, reruns from memory, CLI."""

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from dspy.utils import DummyLM
from rdflib import Literal, URIRef

from owl_memory.cli import main
from owl_memory.construction.compiled_answers import answer_delta, cq_signature
from owl_memory.construction.sprint import SprintRun, run_sprint
from owl_memory.construction.sprint_file import default_sprint, load_sprint
from owl_memory.construction.workspace import graph_text
from owl_memory.errors import ConfigError, LoadError
from owl_memory.llm.proposer import LLMProposer

ROOT = Path(__file__).resolve().parents[1]
SPRINT1 = ROOT / "experiments" / "sprint1" / "sprint.yaml"
FABRIC = ROOT / "experiments" / "sprint-fabric" / "sprint.yaml"
JSON_KEYS = {"cqs_passed", "cqs_total", "conforms", "verify_iterations", "lm_calls", "compiled_reused"}
TINY_VOCAB = """@prefix ex: <http://example.org/> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:ontology a owl:Ontology .
ex:status a owl:DatatypeProperty .
"""
TINY_SHAPES = """@prefix ex: <http://example.org/> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
ex:ThingShape a sh:NodeShape ; sh:targetClass ex:Thing ;
    sh:property [ sh:path ex:status ; sh:minCount 1 ; sh:in ( "on" "off" ) ] .
ex:FixedShape a sh:NodeShape ; sh:targetNode ex:Thing ;
    sh:property [ sh:path ex:label ; sh:minCount 1 ] .
"""
TINY_CQS = """prefixes: {ex: "http://example.org/"}
cqs:
  - id: thing
    question: Is there a thing t1?
    query: 'ASK { ex:t1 a ex:Thing }'
"""


def tiny_sprint(folder: Path, cqs: str = TINY_CQS, baseline: str = "exclude") -> Path:
    """A one-CQ sprint in `folder` whose shapes have a pre-existing violation (sh:targetNode ex:Thing)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.ttl").write_text(TINY_VOCAB)
    (folder / "shapes.ttl").write_text(TINY_SHAPES)
    (folder / "cqs.yaml").write_text(cqs)
    (folder / "sprint.yaml").write_text(f"name: tiny\nontology: vocab.ttl\nshapes: [shapes.ttl]\ncqs: cqs.yaml\n"
                                        f"namespace: http://example.org/\nbaseline: {baseline}\n")
    return folder / "sprint.yaml"


def test_sprint1_passes_offline_and_rerun_uses_compiled_answers(memory):
    first = run_sprint(SPRINT1, memory)
    assert (first.cqs_passed, first.cqs_total, first.conforms, first.conforms_full) == (5, 5, True, True)
    assert first.lm_calls == 0 and first.compiled_new >= 5 and first.stuck == ()
    second = run_sprint(SPRINT1, memory)
    assert (second.cqs_passed, second.conforms, second.lm_calls) == (5, True, 0)
    assert second.compiled_cq_reused == 5 and second.proposals == 0
    assert first.verify_iterations >= 5 * second.verify_iterations, (first, second)
    documented = re.search(r"^\| sprint1: verify iterations, first run → rerun \| (\d+) → (\d+) \|",
                           (ROOT / "docs" / "measurements.md").read_text(encoding="utf-8"), re.M)
    assert documented and (first.verify_iterations, second.verify_iterations) == tuple(map(int, documented.groups()))
    ops = memory.by_signature(cq_signature(load_sprint(SPRINT1).cqs[0]))
    assert ops and ops[0].kind == "RepairOperator" and ops[0].success_count == 1
    assert ops[0].action_schema.operator == "apply_delta"
    assert memory.blobs.ref(ops[0].action_schema.delta).kind == "delta"


def test_sprint1_summary_is_json_and_undo_is_exact(memory):
    run = SprintRun(SPRINT1, memory)
    summary = run.run().to_dict()
    assert JSON_KEYS <= set(summary) and json.loads(json.dumps(summary)) == summary
    ws = run.ws
    assert summary["head"] == ws.head.key and summary["versions"] == len(ws.versions) >= 3
    final, middle = graph_text(ws.working), graph_text(ws.load_version(2))
    ws.undo(0)
    assert graph_text(ws.working) == graph_text(ws.base)
    ws.undo(2)
    assert graph_text(ws.working) == middle
    ws.undo(summary["head"])
    assert graph_text(ws.working) == final


def test_shipped_sprint1_has_the_promised_shapes():
    from rdflib import Graph
    from rdflib.namespace import RDF, SH

    spec = load_sprint(default_sprint())
    shapes = Graph().parse(spec.shapes[0])
    assert len(set(shapes.subjects(RDF.type, SH.NodeShape))) >= 10
    used = {p for p in shapes.predicates() if str(p).startswith(str(SH))}
    components = {SH.pattern, SH["in"], SH["class"], SH.datatype, SH.minCount, SH.maxCount, SH.node,
                  SH.nodeKind, SH.minLength, SH.hasValue, SH.qualifiedValueShape}
    assert components <= used and len(spec.cqs) == 5


def test_fabric_sprint_on_the_real_vocabulary(memory, shared_data, monkeypatch):
    monkeypatch.setenv("OWL_MEMORY_DATA", str(shared_data))
    first = run_sprint(FABRIC, memory)
    assert (first.cqs_passed, first.cqs_total, first.conforms) == (5, 5, True)
    assert first.baseline.violations == 5 and first.conforms_full is False
    second = run_sprint(FABRIC, memory)
    assert (second.cqs_passed, second.conforms, second.lm_calls) == (5, True, 0)
    assert first.verify_iterations >= 5 * second.verify_iterations


def test_fabric_sprint_without_data_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setenv("OWL_MEMORY_DATA", str(tmp_path / "absent"))
    with pytest.raises(ConfigError, match="OWL_MEMORY_DATA"):
        load_sprint(FABRIC)


def test_baseline_violations_are_reported_and_left_alone(memory, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative paths resolve against the YAML's folder, not the working directory
    run = SprintRun(tiny_sprint(tmp_path / "s"), memory)
    summary = run.run()
    assert summary.cqs_passed == 1 and summary.conforms and not summary.conforms_full
    assert summary.baseline.violations == 1 and summary.violations == 0
    assert not set(run.ws.working.triples((URIRef("http://example.org/Thing"), None, None)))
    assert (URIRef("http://example.org/t1"), URIRef("http://example.org/status"), Literal("on")) in run.ws.working


def test_baseline_repair_policy_counts_every_violation(memory, tmp_path):
    run = SprintRun(tiny_sprint(tmp_path / "s", baseline="repair"), memory)
    summary = run.run()
    assert summary.baseline.policy == "repair" and summary.baseline.resolved == 1
    assert summary.conforms and summary.conforms_full
    assert set(run.ws.working.triples((URIRef("http://example.org/Thing"), None, None)))


def test_unanswerable_cq_fails_cleanly(memory, tmp_path):
    cqs = TINY_CQS + "  - id: impossible\n    query: 'ASK { ex:t1 ?p ex:nowhere }'\n"
    summary = run_sprint(tiny_sprint(tmp_path / "s", cqs=cqs), memory)
    assert summary.cqs_passed == 1 and summary.stuck == ("impossible",) and summary.conforms
    spec = load_sprint(tmp_path / "s" / "sprint.yaml")
    assert [memory.by_signature(cq_signature(cq)) for cq in spec.cqs] == [[], []]  # only a finished sprint compiles


OK = "ontology: v.ttl\ncqs: c.yaml\n"


@pytest.mark.parametrize("text, error, message", [
    ("name: x\n", LoadError, "'ontology' is a required property"),
    (OK + "colour: red\n", LoadError, "'colour' was unexpected"),
    (OK + "baseline: maybe\n", LoadError, "baseline: 'maybe' is not one of"),
    ("ontology: [\n", LoadError, "invalid YAML"),
    ("ontology: missing.ttl\ncqs: c.yaml\n", ConfigError, "not found"),
    (OK + "namespace: 7\n", LoadError, "namespace: 7 is not of type 'string'"),
    (OK + "namespace: http://ex.org/my data/\n", LoadError, "namespace: 'http://ex.org/my data/' does not match"),
    (OK + "namespace: http://ex.org/data\n", LoadError, "namespace: 'http://ex.org/data' does not match"),
    (OK + "budget: 12\n", LoadError, "budget: 12 is not of type 'object'"),
    (OK + "budget: {max_steps: many}\n", LoadError, "budget.max_steps: 'many' is not of type 'integer'"),
    (OK + "budget: {max_steps: 0}\n", LoadError, "budget.max_steps: 0 is less than the minimum of 1"),
    (OK + "budget: {max_repair_rounds: -3}\n", LoadError, "budget.max_repair_rounds: -3 is less than the minimum"),
    ("ontology: 5\ncqs: c.yaml\n", LoadError, "ontology: 5 is not valid"),
    ("- a\n- b\n", LoadError, "is not of type 'object'"),
])
def test_bad_sprint_files(tmp_path, text, error, message):
    (tmp_path / "sprint.yaml").write_text(text)
    with pytest.raises(error, match=re.escape(message)):
        load_sprint(tmp_path / "sprint.yaml")


def test_a_bad_sprint_file_is_one_line_and_exit_2_and_makes_no_memory(tmp_path):
    (tmp_path / "sprint.yaml").write_text(OK + "budget: {max_steps: many}\n")
    for agent in ([], ["--agent", "--lm", "scripted"]):
        done = CliRunner().invoke(main, ["sprint", str(tmp_path / "sprint.yaml"), *agent,
                                         "--memory", str(tmp_path / "m")])
        assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1, done.output
        assert "budget.max_steps" in done.output and not (tmp_path / "m").exists()


def _llm_answer(turtle: str) -> dict:
    """A scripted RLM step: look at the ontology through a tool, then submit Turtle."""
    return {"reasoning": "Check the ontology, then add the thing.",
            "code": f"print(ontology_stats())\nSUBMIT(turtle={turtle!r})"}


def test_llm_proposer_through_dspy_rlm_then_rerun_needs_no_lm(memory, tmp_path):
    path = tiny_sprint(tmp_path / "s")
    lm = DummyLM([_llm_answer('ex:t1 a ex:Thing ; ex:status "off" .')])
    first = run_sprint(path, memory, proposer=LLMProposer(lm, namespace=load_sprint(path).namespace))
    assert first.cqs_passed == 1 and first.conforms and first.lm_calls == 1
    run = SprintRun(path, memory)
    assert (URIRef("http://example.org/t1"), URIRef("http://example.org/status"), Literal("off")) \
        not in run.ws.working
    second = run.run()
    assert second.lm_calls == 0 and second.compiled_cq_reused == 1 and second.cqs_passed == 1
    assert (URIRef("http://example.org/t1"), URIRef("http://example.org/status"), Literal("off")) in run.ws.working


def test_llm_proposer_falls_back_to_symbolic_on_a_bad_answer(memory, tmp_path):
    lm = DummyLM([_llm_answer("this is not turtle ::: ")])
    path = tiny_sprint(tmp_path / "s")
    summary = run_sprint(path, memory, proposer=LLMProposer(lm, namespace=load_sprint(path).namespace))
    assert summary.cqs_passed == 1 and summary.lm_calls >= 1


def test_cli_sprint_json_and_exit_codes(tmp_path):
    runner = CliRunner()
    mem = str(tmp_path / "mem")
    ok = runner.invoke(main, ["sprint", str(SPRINT1), "--memory", mem, "--json"])
    assert ok.exit_code == 0, ok.output
    out = json.loads(ok.stdout.strip().splitlines()[-1])
    assert JSON_KEYS <= set(out) and out["cqs_passed"] == out["cqs_total"] == 5 and out["conforms"]
    again = runner.invoke(main, ["sprint", "--memory", mem])
    assert again.exit_code == 0 and "5/5 CQs" in again.stdout
    cqs = TINY_CQS + "  - id: impossible\n    query: 'ASK { ex:t1 ?p ex:nowhere }'\n"
    failing = runner.invoke(main, ["sprint", str(tiny_sprint(tmp_path / "s", cqs=cqs)), "--memory", mem, "--json"])
    assert failing.exit_code == 1 and json.loads(failing.stdout.strip().splitlines()[-1])["cqs_passed"] == 1
    bad = runner.invoke(main, ["sprint", str(tmp_path / "nope.yaml"), "--memory", mem])
    assert bad.exit_code == 2 and "no such sprint file" in bad.output
    assert runner.invoke(main, ["sprint", "--help"]).exit_code == 0


def test_new_cqs_on_the_same_shapes_reuse_compiled_repairs(memory, tmp_path):
    run_sprint(SPRINT1, memory)
    folder = tmp_path / "variant"
    folder.mkdir()
    text = (SPRINT1.parent / "cqs.yaml").read_text().replace("vc1", "vc2").replace("svc1", "svc2")
    (folder / "cqs.yaml").write_text(text)
    spec = SPRINT1.read_text().replace("vocabulary.ttl", str(SPRINT1.parent / "vocabulary.ttl"))
    (folder / "sprint.yaml").write_text(spec.replace("shapes.ttl", str(SPRINT1.parent / "shapes.ttl")))
    summary = run_sprint(folder / "sprint.yaml", memory)
    assert summary.cqs_passed == 5 and summary.conforms
    assert summary.compiled_cq_reused == 3 and summary.compiled_repair_reused >= 2 and summary.proposals == 2


def test_a_compiled_answer_with_a_lost_delta_is_skipped_and_demoted(memory):
    run_sprint(SPRINT1, memory)
    op = memory.by_signature(cq_signature(load_sprint(SPRINT1).cqs[0]))[0]
    lost = replace(op, action_schema=replace(op.action_schema, delta="sha256:" + "0" * 64))
    assert answer_delta(memory, lost) is None
    assert memory.get(op.id).failure_count == 1


def test_a_cq_that_fights_the_shapes_stops_after_max_proposals(memory, tmp_path):
    from owl_memory.construction.sprint import MAX_PROPOSALS

    cqs = TINY_CQS.replace("ASK { ex:t1 a ex:Thing }", 'ASK { ex:t1 a ex:Thing ; ex:status \\"maybe\\" }')
    cqs = cqs.replace("'ASK", '"ASK').replace("}'", '}"')
    summary = run_sprint(tiny_sprint(tmp_path / "s", cqs=cqs), memory)
    assert summary.stuck == ("thing",) and summary.cqs_passed == 0 and summary.conforms
    assert summary.proposals == MAX_PROPOSALS and summary.compiled_cq_reused == 0
