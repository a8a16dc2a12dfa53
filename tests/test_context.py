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
    assert "3 classes, 2 properties (1 object, 1 datatype, 0 annotation), 2 individuals" in card
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


def test_sense_card_states_what_the_header_says_and_none_for_what_it_does_not(shared_data):
    fabio = sense_card(load_graph(shared_data / "ontologies" / "fabio.ttl")).text.splitlines()
    assert "Preferred prefix: fabio: <http://purl.org/spar/fabio/>; imports: <http://purl.org/spar/frbr>; " \
           "VoID subsets: none" in fabio
    assert "Formalism: OWL, RDFS; labels: rdfs:label (365 terms); descriptions: rdfs:comment (366 terms)" in fabio
    assert any(line.startswith("Size: 2151 triples, 260 classes, 104 properties (31 object, 67 datatype, 12 "
                               "annotation)") for line in fabio)
    skos = sense_card(load_graph(shared_data / "ontologies" / "skos.ttl")).text
    assert "Description: An RDF vocabulary for describing the basic structure and content of concept schemes" in skos
    assert "descriptions: skos:definition (32 terms)" in skos
    shapes = sense_card(load_graph(shared_data / "ontologies" / "dcat-ap-SHACL.ttl")).text
    assert "SHACL" in next(line for line in shapes.splitlines() if line.startswith("Formalism:"))
    zoo = sense_card(load_graph(TTL)).text.splitlines()
    assert "Description: none" in zoo and "Preferred prefix: none; imports: none; VoID subsets: none" in zoo


def test_schema_card_gives_sparql_hints_from_the_axioms_present(shared_data):
    skos = schema_card(load_graph(shared_data / "ontologies" / "skos.ttl")).text.splitlines()
    assert "- skos:broaderTransitive+ follows the transitive skos:broaderTransitive through every step" in skos
    assert "- (skos:related|^skos:related) for the symmetric skos:related" in skos
    assert "- (skos:broader|^skos:narrower): skos:broader is the inverse of skos:narrower" in skos
    fabio = schema_card(load_graph(shared_data / "ontologies" / "fabio.ttl")).text.splitlines()
    assert "- frbr:realization/frbr:embodiment for hasManifestation (its property chain)" in fabio
    assert "- (+10 more disjoint pairs)" in fabio  # a long list is counted, not spelled out
    library = schema_card(load_graph(LIBRARY)).text.splitlines()
    assert "- (lib:author|lib:supervisor): lib:supervisor is a subproperty of lib:author (no inference here)" in library
    assert library[1] == "SPARQL hints:" and library[2].startswith("- rdfs:subClassOf+ for indirect superclasses")
    assert "Object properties: lib:author, lib:memberOf, lib:cites, lib:holds, lib:publishedBy, lib:supervisor" \
        in library
    assert "Datatype properties: lib:title, lib:year" in library
    assert any(line.startswith("Individuals by class: lib:Person: lib:Ada, lib:Alan") for line in library)
    assert "SPARQL hints:" not in schema_card(load_graph(TTL)).text  # the zoo states none of those axioms


def test_schema_card_reads_schema_org_domain_and_range_includes():
    graph = load_graph("""@prefix schema: <https://schema.org/> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
schema:author a rdf:Property ; schema:domainIncludes schema:CreativeWork , schema:Rating ;
  schema:rangeIncludes schema:Person , schema:Organization .""")
    assert "schema:author (schema:CreativeWork|schema:Rating -> schema:Organization|schema:Person)" in \
        schema_card(graph).text


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
    assert '<http://www.w3.org/ns/prov#> version <http://www.w3.org/ns/prov-20130430> "W3C PROVenance' in l0.text
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


def test_context_command_prints_what_each_layer_and_a1_would_show(tmp_path):
    from click.testing import CliRunner

    from owl_memory import Memory
    from owl_memory.cli import main

    mem = tmp_path / "m"
    with Memory(mem) as m:
        m.add(ItemSpec("Procedure", "Find direct subclasses with rdfs:subClassOf", "Ask for ?c rdfs:subClassOf X.",
                       "- SELECT ?c WHERE { ?c rdfs:subClassOf lib:Work }",
                       applies_to=("http://w3id.org/owl-memory/examples/library",)))
    runner = CliRunner()
    text = runner.invoke(main, ["context", str(LIBRARY), "--layers", "L0,L1"])
    assert text.exit_code == 0, text.output
    expected = build(["L0", "L1"], load_graph(LIBRARY))
    assert text.output.splitlines()[0] == f"== L0 (ontology_card): {len(expected[0].text)} of 600 characters, " \
                                          f"{expected[0].dropped} left out"
    assert expected[0].text in text.output and expected[1].text in text.output
    shown = runner.invoke(main, ["context", str(LIBRARY), "--layers", "L0", "--budgets", "L0=200,L2=600",
                                 "--task", "Which classes are direct subclasses of lib:Work?", "--memory", str(mem),
                                 "--json"])
    assert shown.exit_code == 0, shown.output
    l0, l2 = json.loads(shown.output)
    assert (l0["layer"], l0["bound"], l0["chars"] <= 200) == ("L0", 200, True)
    assert (l2["layer"], l2["field"], l2["bound"]) == ("L2", "task", 600)
    assert "Find direct subclasses with rdfs:subClassOf" in l2["text"] and l2["chars"] == len(l2["text"])
    lonely = runner.invoke(main, ["context", str(LIBRARY), "--task", "Which classes?"])
    assert lonely.exit_code == 2 and "pass --memory PATH" in lonely.output
    missing = runner.invoke(main, ["context", str(LIBRARY), "--memory", str(tmp_path / "none")])
    assert missing.exit_code == 2 and not (tmp_path / "none").exists()  # a read never creates a memory
