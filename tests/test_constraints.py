"""Constraint items in use: the runner checks the agent's parsed queries against them; a violation is noted in the
tool's return (the query still runs), written to the trajectory and counted in the run's metrics and provenance."""

import json

import pytest
from dspy.utils import DummyLM

from owl_memory import ItemSpec, run
from owl_memory.agent.constraints import violations
from owl_memory.errors import InvalidItem
from owl_memory.learning import shipped_curriculum
from owl_memory.model import QueryConstraint

LIB = "http://w3id.org/owl-memory/examples/library#"
QUERY = f"PREFIX lib: <{LIB}> SELECT ?w WHERE {{ ?w lib:author lib:Charles }}"
VIOLATIONS = """PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?run ?n WHERE { ?run a om:Run ; om:constraintViolations ?n }"""
ONTOLOGY = shipped_curriculum().parent / "library.ttl"


def agent(query: str):
    """A scripted agent that runs `query`, prints what the tool returned, then submits."""
    return DummyLM([{"reasoning": "query", "code": f"```python\nr = ontology_query({query!r})\nprint(r)\n```"},
                    {"reasoning": "done", "code": "```python\nSUBMIT(answer='lib:Economy')\n```"}])


def constraint(memory, requirement, value="", applies_to=()):
    """Store one Constraint item with a query constraint."""
    return memory.add(ItemSpec("Constraint", f"Queries here: {requirement}", "Use for every query on the ontology.",
                               f"{requirement} {value}", applies_to=applies_to,
                               action_schema=QueryConstraint(requirement, value)))


def test_a_violation_is_noted_recorded_and_counted(memory, tmp_path):
    needs_limit = constraint(memory, "needs-limit")
    forbidden = constraint(memory, "forbids-predicate", LIB + "author")
    r = run("Which works did lib:Charles author?", memory=memory, ontology=ONTOLOGY, lm=agent(QUERY),
            trajectory_dir=tmp_path, learn=True, expect={"answer": "lib:Economy"})
    events = [json.loads(x) for x in r.trajectory_path.read_text().splitlines()]
    seen = [e for e in events if e.get("event") == "constraint_violation"]
    assert sorted(e["constraint"] for e in seen) == sorted([needs_limit, forbidden])
    output = next(e["output"] for e in events if e.get("event") == "iteration")
    assert f"constraint {needs_limit} violated: the query needs a LIMIT" in output and "'rows': 2" in output
    assert r.metrics.constraint_violations == 2 and r.metrics.tool_errors == 0
    assert [int(row[1]) for row in memory.sparql(VIOLATIONS).rows] == [2]


def test_a_query_that_keeps_the_constraints_is_not_flagged(memory, tmp_path):
    constraint(memory, "needs-limit")
    r = run("Which works did lib:Charles author?", memory=memory, ontology=ONTOLOGY, lm=agent(QUERY + " LIMIT 5"),
            trajectory_dir=tmp_path)
    assert r.metrics.constraint_violations == 0
    assert '"event": "constraint_violation"' not in r.trajectory_path.read_text()


def test_constraints_of_other_ontologies_and_a0_runs_are_not_checked(memory, tmp_path):
    constraint(memory, "needs-limit", applies_to=("http://example.org/other",))
    r = run("q", memory=memory, ontology=ONTOLOGY, lm=agent(QUERY), trajectory_dir=tmp_path)
    assert r.metrics.constraint_violations == 0
    constraint(memory, "forbids-predicate", LIB + "author")
    r = run("q", memory=memory, ontology=ONTOLOGY, lm=agent(QUERY), trajectory_dir=tmp_path, condition="A0")
    assert r.metrics.constraint_violations == 0


def test_requirements_are_read_on_the_parsed_form():
    rules = [("a", QueryConstraint("needs-from-graph")), ("b", QueryConstraint("forbids-predicate", LIB + "cites"))]
    assert violations(f"SELECT * FROM <{LIB}g> WHERE {{ ?s <{LIB}author> ?o }}", rules) == []
    assert [v[0] for v in violations(f"SELECT * WHERE {{ ?s (<{LIB}author>|^<{LIB}cites>)+ ?o }}", rules)] == \
        ["a", "b"]
    assert violations("SELECT * WHERE { # no query", rules) == []  # the guard refuses it, with its own message
    with pytest.raises(InvalidItem):
        QueryConstraint("forbids-predicate", "not an iri")


def test_a_graph_pattern_keeps_needs_from_graph_and_a_variable_graph_does_not():
    rules = [("a", QueryConstraint("needs-from-graph"))]
    assert violations(f"SELECT * WHERE {{ GRAPH <{LIB}g> {{ ?s ?p ?o }} }}", rules) == []
    assert [v[0] for v in violations("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", rules)] == ["a"]


def test_a_constraint_applies_whatever_the_spelling_of_the_ontology_iri(memory, tmp_path):
    constraint(memory, "needs-limit", applies_to=(LIB,))  # the ontology declares its IRI without the trailing #
    r = run("q", memory=memory, ontology=ONTOLOGY, lm=agent(QUERY), trajectory_dir=tmp_path)
    assert r.metrics.constraint_violations == 1


def test_a_constraint_stored_at_task_1_is_acted_on_at_task_61_by_an_agent(memory, tmp_path):
    needs_limit = constraint(memory, "needs-limit", applies_to=("http://w3id.org/owl-memory/examples/library",))
    memory.add_many([ItemSpec("Principle", f"Lesson of task {n}", f"Use for task family {n % 7}.", f"Task {n} taught "
                              f"lesson {n}.", applies_to=("http://w3id.org/owl-memory/examples/library",),
                              provenance={"run": f"run-{n}"})
                     for n in range(2, 62)])  # sixty later tasks each leave an item (delayed recall: distractors)
    lm = DummyLM([
        {"reasoning": "query", "code": f"```python\nr = ontology_query({QUERY!r})\nprint(r)\n```"},
        {"reasoning": "the memory's constraint says LIMIT", "code":
         "```python\nif any('needs a LIMIT' in c for c in r.get('constraints', [])):\n"
         f"    r = ontology_query({QUERY + ' LIMIT 10'!r})\nprint(r)\n```"},
        {"reasoning": "done", "code": "```python\nSUBMIT(answer='lib:Economy')\n```"}])
    r = run("Which works did lib:Charles author? (task 61)", memory=memory, ontology=ONTOLOGY, lm=lm,
            trajectory_dir=tmp_path)
    events = [json.loads(x) for x in r.trajectory_path.read_text().splitlines()]
    queries = [e["sparql"] for e in events if e.get("event") == "agent_query"]
    assert [e["constraint"] for e in events if e.get("event") == "constraint_violation"] == [needs_limit]
    assert queries == [QUERY, QUERY + " LIMIT 10"]  # recalled after 60 tasks' writes, and acted on
    assert r.metrics.constraint_violations == 1
