"""repair(): the loop, the minimal-change rules, compile-then-reuse with memory, the CLI and the W3C Core set."""

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rdflib import Graph, Literal, Namespace
from rdflib.namespace import RDF

from owl_memory.cli import main
from owl_memory.operators import REGISTRY, STRATEGIES, Patch
from owl_memory.repair import repair, shape_triples
from owl_memory.vocab import SH

EX = Namespace("http://ex.org/")
HEAD = """@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
SHAPES = HEAD + """ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person ;
    sh:property ex:PersonShape-age , ex:PersonShape-name .
ex:PersonShape-age sh:path ex:age ; sh:datatype xsd:integer .
ex:PersonShape-name sh:path ex:name ; sh:minCount 1 ; sh:datatype xsd:string .
"""
AGE_SIG = "DatatypeConstraintComponent|http://ex.org/PersonShape-age|<http://ex.org/age>|Literal:plain"


def _graph(text: str) -> Graph:
    """Parse Turtle text with the test prefixes."""
    return Graph().parse(data=HEAD + text, format="turtle")


def test_repair_reaches_conformance_without_memory():
    res = repair(HEAD + 'ex:a a ex:Person ; ex:age "42" .', SHAPES)
    assert res.conforms and res.initial_violations == 2 and res.verify_iterations == 2
    assert (EX.a, EX.age, Literal(42)) in res.added and (EX.a, EX.name, Literal("")) in res.added
    assert res.removed == {(EX.a, EX.age, Literal("42"))}
    assert res.compiled_new == [] and res.compiled_reused == 0
    json.dumps(res.to_dict())


def test_shallow_shapes_reverify_only_the_focus():
    res = repair(HEAD + 'ex:a a ex:Person ; ex:name "A" ; ex:age "42" . ex:b a ex:Person ; ex:name "B" .', SHAPES)
    assert res.conforms and res.scopes == ["full", "focus"]


def test_compile_then_reuse(memory):
    first = repair(_graph('ex:a a ex:Person ; ex:name "A" ; ex:age "42" .'), SHAPES, memory=memory, run_id="r1")
    assert first.conforms and len(first.compiled_new) == 1
    op = memory.get(first.compiled_new[0])
    assert op["kind"] == "RepairOperator" and op["signature"] == AGE_SIG
    assert op["action_schema"]["operator"] == "datatype.cast"
    assert op["verification_hook"] == "http://ex.org/PersonShape-age"
    episode = memory.get(op["grounded_by"][0])
    assert episode["kind"] == "Episode" and episode["provenance"]["run"]
    second = repair(_graph('ex:b a ex:Person ; ex:name "B" ; ex:age "7" .'), SHAPES, memory=memory, run_id="r2")
    summary = json.loads(json.dumps(second.to_dict()))
    assert second.conforms and summary["compiled_reused"] == 1 and summary["compiled_new"] == []
    assert summary["operators_applied"][0]["from_memory"] is True
    assert memory.get(op["id"])["success_count"] == 1


def _label_only(ctx, v):
    """A deliberately useless strategy: labels the value instead of fixing it (to test demotion)."""
    return [Patch("test.label_only", frozenset({(v["focus"], EX.note, Literal("looked at"))}),
                  frozenset(), frozenset({v["focus"]}))]


def test_failing_compiled_operator_is_demoted(memory, monkeypatch):
    comp = SH.DatatypeConstraintComponent
    monkeypatch.setitem(STRATEGIES, "test.label_only", (comp, {}, _label_only))
    monkeypatch.setitem(REGISTRY, comp, REGISTRY[comp] + ["test.label_only"])
    bad = memory.add("RepairOperator", "Label datatype problems", "A bad operator for tests.", "label only",
                     signature=AGE_SIG, action_schema={"operator": "test.label_only", "choice": None},
                     verification_hook="http://ex.org/PersonShape-age", task_types=("shacl-repair",))
    res = repair(_graph('ex:a a ex:Person ; ex:name "A" ; ex:age "42" .'), SHAPES, memory=memory)
    assert res.conforms and res.verify_iterations == 4  # find, bad op fails, undo re-check, library op verifies
    assert (EX.a, EX.note, Literal("looked at")) not in res.graph, "a failed patch is undone"
    assert memory.get(bad)["failure_count"] == 1
    ranked = [c["id"] for c in memory.by_signature(AGE_SIG)]
    assert ranked[-1] == bad and len(ranked) == 2


def test_never_removes_a_target_class_type():
    text = "ex:a a ex:Person ; ex:name \"A\" .\n" + \
           "ex:Closed a sh:NodeShape ; sh:targetClass ex:Person ; sh:closed true ; sh:property [ sh:path ex:name ] ."
    g = _graph(text)
    res = repair(g, g)
    assert not res.conforms and (EX.a, RDF.type, EX.Person) in res.graph and not res.removed
    assert "minimal-change" in " ".join(res.reasons.values())


def test_never_makes_a_focus_node_disappear():
    data = _graph("ex:a ex:z 1 .")
    shapes = _graph("ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:closed true ; sh:property [ sh:path ex:p ] .")
    res = repair(data, shapes)
    assert not res.conforms and (EX.a, EX.z, Literal(1)) in res.graph


def test_protected_triples_stay():
    text = "ex:a ex:p 1, 2 .\nex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:maxCount 1 ] ."
    g = _graph(text)
    assert repair(g, g).removed == {(EX.a, EX.p, Literal(2))}
    res = repair(g, g, protected={(EX.a, EX.p, Literal(2))})
    assert not res.conforms and (EX.a, EX.p, Literal(2)) in res.graph


def test_fixed_term_is_reported_not_faked():
    text = "ex:S a sh:NodeShape ; sh:targetNode 42 ; sh:datatype xsd:string ."
    g = _graph(text)
    res = repair(g, g)
    assert not res.conforms and not res.added and not res.removed
    assert "fixed term" in list(res.reasons.values())[0]


def test_cli_repair_same_file_keeps_shapes(tmp_path):
    path = tmp_path / "both.ttl"
    path.write_text(HEAD + 'ex:a a ex:Person ; ex:age "42" .\n' + SHAPES.replace(HEAD, ""), encoding="utf-8")
    out = tmp_path / "fixed.ttl"
    result = CliRunner().invoke(main, ["repair", str(path), "--shapes", str(path), "--memory",
                                       str(tmp_path / "mem"), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["conforms"] and len(summary["compiled_new"]) == 2
    before, after = Graph().parse(path), Graph().parse(out)
    assert shape_triples(before) <= set(after)
    assert len(after) == len(before) + summary["added"] - summary["removed"]
    again = CliRunner().invoke(main, ["repair", str(path), "--shapes", str(path), "--memory", str(tmp_path / "mem"),
                                      "--json"])
    assert json.loads(again.output.strip().splitlines()[-1])["compiled_reused"] == 2


def test_cli_repair_exit_codes(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://ex.org/> .\nex:a ex:b .\n", encoding="utf-8")
    stuck = tmp_path / "stuck.ttl"
    stuck.write_text(HEAD + "ex:S a sh:NodeShape ; sh:targetNode 42 ; sh:datatype xsd:string .", encoding="utf-8")
    mem = str(tmp_path / "mem")
    assert CliRunner().invoke(main, ["repair", str(bad), "--shapes", str(bad), "--memory", mem]).exit_code == 2
    res = CliRunner().invoke(main, ["repair", str(stuck), "--shapes", str(stuck), "--memory", mem])
    assert res.exit_code == 1 and "fixed term" in res.output
    assert CliRunner().invoke(main, ["repair", "--help"]).exit_code == 0


def _benchmark():
    """The benchmark module (benchmarks/ is not a package)."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "repair.py"
    spec = importlib.util.spec_from_file_location("repair_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.shared_data
def test_w3c_core_cases(shared_data, memory):
    bench = _benchmark()
    cold = bench.run_all(shared_data / "shacl-w3c-core", memory)
    s = cold["summary"]
    assert s["cases"] == 65
    assert s["repaired_share"] >= 0.95 and s["target_deletions"] == 0
    for row in cold["rows"]:
        assert row["conforms"] or row["impossible"] or (row["missing"] and row["initial"] == 0), row
    warm = bench.run_all(shared_data / "shacl-w3c-core", memory)["summary"]
    assert warm["repaired"] == s["repaired"] and warm["reused_operators"] > s["reused_operators"]
    assert warm["compiled"] == 0 and warm["verify_iterations"] <= s["verify_iterations"]


def test_deleting_the_data_a_shape_targets_is_not_a_repair():
    text = "ex:a ex:p 1 .\nex:S a sh:NodeShape ; sh:targetSubjectsOf ex:p ; " \
           "sh:property [ sh:path ex:p ; sh:maxCount 0 ] ."
    g = _graph(text)
    res = repair(g, g)
    assert not res.conforms and (EX.a, EX.p, Literal(1)) in res.graph and not res.removed
