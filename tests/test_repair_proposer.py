"""The LM proposer as the repair loop's fallback: scripted DSPy LM, the same gate and verification, then compiled."""

import logging

import pytest
from dspy.utils import DummyLM
from rdflib import Graph, Literal, URIRef

from owl_memory.llm.repair_proposer import LLMRepairProposer
from owl_memory.repair import repair
from owl_memory.vocab import RDF

EX = "http://example.org/"
SHAPES = """@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
ex:PartShape a sh:NodeShape ; sh:targetClass ex:Part ;
  sh:property [ sh:path ex:code ; sh:minCount 1 ; sh:pattern "^(?=.*[0-9])(?=.*[A-Z])[A-Z0-9]{6}$" ] ."""
CODE = URIRef(EX + "code")


def data(node: str, code: str) -> Graph:
    """One part whose code breaks the look-ahead pattern (no library operator can derive a matching value)."""
    return Graph().parse(data=f'@prefix ex: <{EX}> . ex:{node} a ex:Part ; ex:code "{code}" .', format="turtle")


def answer(added: str, removed: str) -> dict:
    """A scripted RLM step: look at the data through a tool, then submit a change set as Turtle."""
    return {"reasoning": "Read the data, then swap the code.",
            "code": f"print(ontology_stats())\nSUBMIT(added={added!r}, removed={removed!r})"}


@pytest.fixture(scope="module")
def shapes():
    """The part shapes."""
    logging.getLogger("rdflib.term").setLevel(logging.CRITICAL)
    return Graph().parse(data=SHAPES, format="turtle")


def test_no_proposer_leaves_it_unrepaired_with_the_reason(shapes):
    """Off by default: without an LM the violation stays and says it needs the proposer."""
    res = repair(data("p1", "abc"), shapes)
    assert not res.conforms and res.lm_calls == 0 and "proposer" in next(iter(res.reasons.values()))


def test_proposer_change_set_verified_compiled_and_replayed_without_lm(shapes, memory):
    """The model's change set repairs the part; it is compiled, and a second part is repaired from memory alone."""
    lm = DummyLM([answer('ex:p1 ex:code "AB12CD" .', 'ex:p1 ex:code "abc" .')])
    first = repair(data("p1", "abc"), shapes, memory=memory, proposer=LLMRepairProposer(lm))
    assert first.conforms and first.lm_calls == 1 and first.proposed == 1 and first.compiled_new
    assert first.added == {(URIRef(EX + "p1"), CODE, Literal("AB12CD"))}
    assert first.removed == {(URIRef(EX + "p1"), CODE, Literal("abc"))}
    second = repair(data("p2", "xyz"), shapes, memory=memory)
    assert second.conforms and second.compiled_reused == 1 and second.lm_calls == 0
    assert (URIRef(EX + "p2"), CODE, Literal("AB12CD")) in second.graph
    assert (URIRef(EX + "p2"), CODE, Literal("xyz")) not in second.graph


def test_a_change_set_that_breaks_the_rules_or_fails_verification_is_dropped(shapes):
    """Deleting the target's type is refused by the minimal-change gate; a wrong value fails verification: the data
    comes back unchanged with the violation still reported, and the model is asked once per violation."""
    sneaky = answer("", "ex:p1 a ex:Part . ex:p1 ex:code \"abc\" .")
    wrong = answer('ex:p1 ex:code "still bad" .', 'ex:p1 ex:code "abc" .')
    for step in (sneaky, wrong):
        res = repair(data("p1", "abc"), shapes, proposer=LLMRepairProposer(DummyLM([step, step])))
        assert not res.conforms and res.lm_calls == 1 and not res.added and not res.removed
        assert (URIRef(EX + "p1"), RDF.type, URIRef(EX + "Part")) in res.graph


def test_unparsable_answer_changes_nothing(shapes):
    """Text that is not Turtle becomes an empty change set, not an exception."""
    res = repair(data("p1", "abc"), shapes, proposer=LLMRepairProposer(DummyLM([answer("ex:p1 :::", "")])))
    assert not res.conforms and res.proposed == 0 and res.lm_calls == 1 and not res.added


def test_cli_repair_with_lm_asks_the_model_through_its_provider(shapes, tmp_path, monkeypatch):
    """`owl-memory repair --lm M --api-base URL`: the model behind an OpenAI-compatible server fixes what no
    operator can, the repair is compiled, and a second run repairs another part from memory with no LM."""
    import json

    from click.testing import CliRunner
    from test_provider import ScriptedServer, action

    from owl_memory.cli import main

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    (tmp_path / "shapes.ttl").write_text(SHAPES, encoding="utf-8")
    for node, code in (("p1", "abc"), ("p2", "xyz")):
        data(node, code).serialize(tmp_path / f"{node}.ttl", format="turtle")
    step = answer('ex:p1 ex:code "AB12CD" .', 'ex:p1 ex:code "abc" .')
    args = ["--shapes", str(tmp_path / "shapes.ttl"), "--memory", str(tmp_path / "mem"), "--json"]
    with ScriptedServer([action(step["reasoning"], step["code"])]) as server:
        first = CliRunner().invoke(main, ["repair", str(tmp_path / "p1.ttl"), *args, "--lm", "openai/replay",
                                          "--api-base", server.base])
        asked = len(server.requests)
    assert first.exit_code == 0, first.output
    out = json.loads(first.stdout)
    assert out["conforms"] and out["lm_calls"] == 1 and out["proposed"] == 1 and out["compiled_new"] and asked == 1
    second = CliRunner().invoke(main, ["repair", str(tmp_path / "p2.ttl"), *args])
    assert second.exit_code == 0 and json.loads(second.stdout)["lm_calls"] == 0
    without = CliRunner().invoke(main, ["repair", str(tmp_path / "p1.ttl"), "--shapes", str(tmp_path / "shapes.ttl"),
                                        "--memory", str(tmp_path / "empty"), "--json"])
    assert without.exit_code == 1 and "proposer" in json.dumps(json.loads(without.stdout)["reasons"])
