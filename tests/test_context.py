"""Context layers L0/L1/L3: computed from the ontology, memory and a guide, bounded, deterministic, in the run."""

import json
from pathlib import Path

import pytest
from dspy.utils import DummyLM

from owl_memory import ItemSpec
from owl_memory.agent.context import build, guide_summary, inputs, parse_layers, schema_card, sense_card
from owl_memory.agent.runner import run
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.errors import ConfigError
from owl_memory.model import Iteration, RunStart
from owl_memory.rdfio import load_graph

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "experiments" / "curricula" / "library.ttl"
TTL = """@prefix ex: <http://example.org/zoo#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<http://example.org/zoo> a owl:Ontology ; rdfs:label "Zoo" .
ex:Animal a owl:Class . ex:Keeper a owl:Class ; owl:disjointWith ex:Animal .
ex:Lion a owl:Class ; rdfs:subClassOf ex:Animal ,
  [ a owl:Restriction ; owl:onProperty ex:keptBy ; owl:maxCardinality 1 ] .
ex:keptBy a owl:ObjectProperty , owl:FunctionalProperty ; rdfs:domain ex:Animal ; rdfs:range ex:Keeper .
ex:name a owl:DatatypeProperty ; rdfs:domain ex:Animal ; rdfs:range xsd:string .
ex:leo a ex:Lion . ex:kim a ex:Keeper . ex:leo ex:keptBy ex:kim .
ex:LionShape a sh:NodeShape ; sh:targetClass ex:Lion ;
  sh:property [ sh:path ex:name ; sh:minCount 1 ; sh:datatype xsd:string ] .
"""


def test_sense_card_is_computed_from_the_graph():
    card = sense_card(load_graph(TTL)).text
    assert "<http://example.org/zoo>" in card and '"Zoo"' in card
    assert "3 classes, 2 properties, 2 individuals" in card
    assert "ex: <http://example.org/zoo#>" in card
    assert "Top classes: ex:Animal," in card  # the most mentioned class comes first
    assert "ex:keptBy" in card


def test_schema_card_lists_anti_patterns_restrictions_and_shapes(memory):
    memory.add(ItemSpec("AntiPattern", "Never type a keeper as an animal", "Seen in run 12.", "details",
                        applies_to=("http://example.org/zoo",)))
    card = schema_card(load_graph(TTL), memory).text
    lines = card.splitlines()
    assert lines[:2] == ["Schema constraints (L1):", "Anti-patterns:"]
    assert "- [memory] Never type a keeper as an animal" in lines
    assert "- do not type one node as both ex:Animal and ex:Keeper (disjoint)" in lines
    assert "- ex:keptBy is functional: at most one value per subject" in lines
    assert "- ex:Lion: at most 1 ex:keptBy" in lines
    assert "- ex:Lion: ex:name min 1 xsd:string" in lines
    assert "ex:keptBy (ex:Animal -> ex:Keeper)" in card
    assert "[memory]" not in schema_card(load_graph(TTL)).text  # no memory, no memory items


def test_guide_summary_keeps_headings_and_first_sentences():
    guide = "# Querying\n\nAlways bind prefixes. Then more detail here.\n\n## Types\n\nUse xsd:date. Not strings."
    assert guide_summary(guide).text.splitlines() == [
        "Guide summary (L3):", "Querying:", "- Always bind prefixes.", "Types:", "- Use xsd:date."]


@pytest.mark.parametrize("bound", [40, 120, 300, 600])
def test_every_layer_stays_within_its_bound_and_is_deterministic(bound):
    graph = load_graph(LIBRARY)
    guide = "\n\n".join(f"Rule {i}: keep the answer short and exact. More." for i in range(60))
    first = build("L0,L1,L3", graph, guide=guide, bounds={"L0": bound, "L1": bound, "L3": bound})
    again = build(["L3", "L1", "L0"], load_graph(LIBRARY), guide=guide, bounds={"L0": bound, "L1": bound, "L3": bound})
    assert [layer.name for layer in first] == ["L0", "L1", "L3"]
    assert all(len(layer.text) <= bound for layer in first)
    assert first == again
    assert first[2].dropped > 0  # 60 rules do not fit


def test_large_real_ontology_fits_its_bounds(shared_data):
    graph = load_graph(shared_data / "ontologies" / "prov-o.ttl")
    l0, l1 = build(["L0", "L1"], graph)
    assert len(l0.text) <= 600 and len(l1.text) <= 1000
    assert "prov:Entity" in l0.text
    assert "do not type one node as both prov:Activity and prov:Entity (disjoint)" in l1.text


def test_bad_layer_requests_say_what_to_do():
    with pytest.raises(ConfigError, match="L2, memory text in the prompt, is condition A1"):
        parse_layers("L0,L2")
    with pytest.raises(ConfigError, match="pass ontology=PATH"):
        build(["L0"], None)
    with pytest.raises(ConfigError, match="pass guide=PATH"):
        build(["L3"], load_graph(TTL))
    with pytest.raises(ConfigError, match="does not exist"):
        build(["L3"], None, guide="missing-guide.md")


def test_runner_shows_each_layer_whole_as_an_input_variable(tmp_path, memory):
    lm = DummyLM([{"reasoning": "look", "code": "print(schema_constraints.splitlines()[2])"},
                  {"reasoning": "done", "code": "SUBMIT(answer='ok')"}])
    r = run("Which classes are disjoint?", memory=memory, ontology=TTL, lm=lm, condition="A2", layers="L0,L1",
            trajectory_dir=tmp_path)
    first = "\n".join(m["content"] for m in lm.history[0]["messages"] if m["role"] == "user")
    for name, text in inputs(build(["L0", "L1"], load_graph(TTL), memory)).items():
        assert f"Variable: `{name}`" in first
        assert all(line in first for line in text.splitlines())  # the whole layer is in the preview
    iteration = next(e for e in read_trajectory(r.trajectory_path) if isinstance(e, Iteration))
    assert "do not type one node as both ex:Animal and ex:Keeper" in iteration.output
    assert r.metrics.payload_chars_in_history == 0
    start = next(e for e in read_trajectory(r.trajectory_path) if isinstance(e, RunStart))
    assert [layer.name for layer in start.config.layers] == ["L0", "L1"]
    plain = DummyLM([{"reasoning": "done", "code": "SUBMIT(answer='ok')"}])
    run("Which classes are disjoint?", ontology=TTL, lm=plain, condition="A0", trajectory_dir=tmp_path)
    assert "Ontology sense card" not in json.dumps([e["messages"] for e in plain.history])


def test_bounds_above_the_preview_size_are_refused():
    with pytest.raises(ConfigError, match="between 1 and 1000"):
        build(["L0"], load_graph(TTL), bounds={"L0": 5000})
