"""Judge rules bind questions as people write them (issue 37): a curriculum written the DUL way (a CURIE with the
conventional `dul:` prefix and the bare IRI in parentheses, while DUL binds its namespace to the empty prefix) leaves
a rule that judges its held-out question; held-out questions bind by IRI, CURIE or label, reworded up to the
documented normalization; a name two terms share names none."""

from pathlib import Path

import pytest
from dspy.utils import DummyLM
from rdflib import URIRef

from owl_memory import run
from owl_memory.learning import load_curriculum
from owl_memory.learning.judge_rules import bindings_for, compile_rule
from owl_memory.learning.mentions import Reader
from owl_memory.learning.train import train_curriculum
from owl_memory.model import RunConfig
from owl_memory.model.judge_rules import placeholder
from owl_memory.model.judgments import Expect
from owl_memory.rdfio import load_graph

DUL_FILE = Path(__file__).parent / "data" / "dul" / "dul-mini.ttl"
DUL = "http://www.loa-cnr.it/ontologies/DUL.owl#"
GOLD = "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX : <" + DUL + "> " \
       "SELECT ?c WHERE {{ :{} rdfs:subClassOf ?c }}"
P1 = URIRef(placeholder("p1"))


def question(name: str) -> str:
    """The DUL curriculum's question about a class: its `dul:` CURIE, then its bare IRI in parentheses."""
    return f"What is the direct superclass of dul:{name} ({DUL}{name})?"


def submit(answer: str) -> dict:
    """A scripted agent's one step: submit `answer`."""
    return {"reasoning": "a", "code": f"```python\nSUBMIT(answer={answer!r})\n```"}


@pytest.fixture(scope="module")
def reader():
    """The mentions reader of the DUL excerpt."""
    return Reader(load_graph(DUL_FILE))


@pytest.fixture(scope="module")
def rule(reader):
    """The rule the DUL curriculum's first train question compiles to."""
    return compile_rule(question("Organization"), Expect("sparql", GOLD.format("Organization")), reader.graph, reader)


def test_the_dul_drill_learns_a_rule_that_judges_the_holdout(memory, tmp_path):
    tasks = [("t1", "Organization", "train"), ("t2", "NaturalPerson", "train"), ("h1", "Person", "holdout")]
    lines = ["id: dul-drill", f"ontology: {{name: dul, path: '{DUL_FILE}'}}", "tasks:"]
    for id, name, split in tasks:
        lines.append(f"  - {{id: {id}, query: '{question(name)}', task_type: superclasses, split: {split}, "
                     f"expect: {{sparql: '{GOLD.format(name).replace('{{', '{').replace('}}', '}')}'}}}}")
    (tmp_path / "dul.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lm = DummyLM([submit(f"<{DUL}SocialAgent>"), submit("I do not know.")])  # the first train task right only
    summary = train_curriculum(load_curriculum(tmp_path / "dul.yaml"), memory,
                               RunConfig(lm=lm, trajectory_dir=tmp_path))
    assert summary.succeeded == 1 and len(summary.judge_rules.learned) == 1
    learned = memory.get(summary.judge_rules.learned[0]).action_schema
    assert learned.question == "What is the direct superclass of {p1}?"
    agreement = summary.judge_rules.agreement
    assert (agreement.tasks, agreement.covered, agreement.agreement) == (1, 1, 1.0)
    right = run(question("Person"), memory=memory, ontology=DUL_FILE, lm=DummyLM([submit(f"<{DUL}Agent>")]),
                learn=True, task_type="superclasses", trajectory_dir=tmp_path)
    assert right.judgment.judge == "rule" and right.judgment.success
    assert f"{{p1}} = {DUL}Person by CURIE dul: and IRI" in right.judgment.reason  # how the slot named its term
    wrong = run(question("Person"), memory=memory, ontology=DUL_FILE, lm=DummyLM([submit(f"<{DUL}Object>")]),
                learn=True, task_type="superclasses", trajectory_dir=tmp_path)
    assert wrong.judgment.judge == "rule" and not wrong.judgment.success


@pytest.mark.parametrize("text", [
    question("Person"),
    f"What is the direct superclass of {DUL}Person?",
    f"What is the direct superclass of <{DUL}Person>?",
    "What is the direct superclass of :Person?",
    f"PREFIX d: <{DUL}> What is the direct superclass of d:Person?",
    "what's the direct superclass of person",
    "Which are the direct superclasses of Person?",
])
def test_a_held_out_question_binds_as_people_write_it(rule, reader, text):
    assert bindings_for(rule, text, reader) == {P1: URIRef(DUL + "Person")}


@pytest.mark.parametrize("text", [
    "What is the direct superclass of Group?",  # the label of two classes
    "What is the direct superclass of Persona?",  # an Italian label: names are English or untagged
    "What is the direct superclass of dul:hasRole?",  # a property where the rule learned a class
    "What is the direct superclass of foaf:Person?",  # a conventional prefix, but no such term in the ontology
    "What is the direct subclass of dul:Person?",  # another question
    "What is the direct superclass of dul:Person } ?",
])
def test_a_question_that_does_not_fit_gets_no_binding(rule, reader, text):
    assert bindings_for(rule, text, reader) is None


def test_reordered_clauses_bind_the_same_slots(reader):
    learned = compile_rule("In DOLCE, what is the direct superclass of dul:Organization?",
                           Expect("sparql", GOLD.format("Organization")), reader.graph, reader)
    assert bindings_for(learned, "What is the direct superclass of Natural person, in DOLCE?", reader) == \
        {P1: URIRef(DUL + "NaturalPerson")}


def test_a_name_two_terms_share_names_none_and_the_rule_says_so(reader):
    assert reader.resolve("group").term is None and "names 2 terms" in reader.resolve("group").note
    ask = "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX : <" + DUL + "> " \
          "ASK { :Person rdfs:subClassOf :Agent . :Collective rdfs:subClassOf :SocialObject }"
    learned = compile_rule("Is dul:Person an agent and is Group a social object?", Expect("ask", ask), reader.graph,
                           reader)
    assert [p.name for p in learned.parameters] == ["p1", "p2", "p3"]  # Person, Agent, Social object
    assert f"<{DUL}Collective>" not in learned.template and ":Collective" in learned.template  # not lifted
    assert any("'Group' names 2 terms" in note for note in learned.notes)


def test_an_individual_binds_by_its_name_and_only_where_its_kind_fits():
    from owl_memory.learning import shipped_curriculum

    reader = Reader(load_graph(shipped_curriculum().parent / "library.ttl"))
    lib = "http://w3id.org/owl-memory/examples/library#"
    gold = f"PREFIX lib: <{lib}> SELECT ?p WHERE {{ lib:Manual lib:publishedBy ?p }}"
    published = compile_rule("Who published the book lib:Manual?", Expect("sparql", gold), reader.graph, reader)
    assert bindings_for(published, f"Who published the book <{lib}Economy>?", reader) == {P1: URIRef(lib + "Economy")}
    assert bindings_for(published, "Who published the book Charles Babbage?", reader) is None  # a person, no work
    authored = compile_rule("Which works did lib:Charles author?", Expect("sparql", f"PREFIX lib: <{lib}> SELECT ?w "
                            "WHERE { ?w lib:author lib:Charles }"), reader.graph, reader)
    assert bindings_for(authored, "Which works did Ms. Lovelace author?", reader) == {P1: URIRef(lib + "Ada")}
