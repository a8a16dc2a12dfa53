"""Compiled memory applied by computation in question tasks: a Procedure's lifted query pattern, learned on one
question, is bound and run by a scripted agent on a held-out question of the same family (memory_apply), through
the guarded query worker; the binding is one RDF term, never pasted text."""

import pytest
from dspy.utils import DummyLM

from owl_memory import ItemSpec, run
from owl_memory.agent import Toolbox
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.learning import load_curriculum, shipped_curriculum
from owl_memory.model import AgentQuery, MemoryAccess, MemoryNote

PREFIXES = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
            "PREFIX lib: <http://w3id.org/owl-memory/examples/library#> ")


def steps(*codes):
    """Scripted RLM actions for DummyLM."""
    return [{"reasoning": f"step {i + 1}", "code": f"```python\n{c}\n```"} for i, c in enumerate(codes)]


@pytest.fixture(scope="module")
def course():
    """The shipped curriculum."""
    return load_curriculum(shipped_curriculum())


def solve(course, memory, id, lm, tmp_path, learn=True):
    """Run one curriculum task (through the loop when `learn`)."""
    t = next(t for t in course.tasks if t.id == id)
    return run(t.query, memory=memory, ontology=course.ontology_path, lm=lm, learn=learn, expect=t.expect,
               task_type=t.task_type, task_id=t.id, trajectory_dir=tmp_path)


def learned_procedure(course, memory, tmp_path) -> str:
    """The Procedure a successful run of lib-hierarchy-01 stores (its query pattern lifted: lib:Work is $p1)."""
    q = PREFIXES + "SELECT ?x WHERE { ?x rdfs:subClassOf lib:Work }"
    good = solve(course, memory, "lib-hierarchy-01", DummyLM(steps(
        f"r = ontology_query({q!r})\nrows = results_peek(r['handle'])['rows']",
        "SUBMIT(answer=', '.join(sorted(v.rsplit('#', 1)[1] for row in rows for v in row.values())))")), tmp_path)
    assert good.judgment.success
    (proc,) = [i for i in good.extracted if memory.get(i).kind == "Procedure"]
    return proc


def test_a_held_out_question_is_answered_by_applying_a_procedure_learned_on_another(course, memory, tmp_path):
    proc = learned_procedure(course, memory, tmp_path)
    schema = memory.get(proc).action_schema.to_json()
    assert [p["name"] for p in schema["parameters"]] == ["$p1"] and "lib:Work" not in str(schema)
    agent = DummyLM(steps(
        "hit = memory_search(task_type='hierarchy', kinds=['Procedure'])['items'][0]\n"
        "r = memory_apply(hit['id'], {'$p1': 'lib:Organization'})\nrows = results_peek(r['handle'])['rows']",
        "SUBMIT(answer=', '.join(sorted(row['v0'].rsplit('#', 1)[1] for row in rows)))"))
    held = solve(course, memory, "lib-hierarchy-02", agent, tmp_path)
    assert held.judgment.success, held.answer  # the other question answered by computation
    assert proc in held.memory_ids_used
    (applied,) = [e for e in read_trajectory(held.trajectory_path) if isinstance(e, AgentQuery)]
    assert applied.tool == "memory_apply" and applied.rows == 3 and "Organization" not in applied.sparql


def test_bindings_are_terms_checked_before_anything_runs(course, memory, tmp_path):
    proc = learned_procedure(course, memory, tmp_path)
    box = Toolbox(memory, None, str(course.ontology_path), access=MemoryAccess.of("A2"))
    apply = {f.__name__: f for f in box.functions()}["memory_apply"]
    hostile = "http://x/a> . ?s ?p ?o } #"
    assert apply(proc, {"$p1": hostile}).startswith("[Error] memory_apply: $p1 must be an IRI")
    assert "bind every parameter" in apply(proc, {})
    assert "bad arguments" in apply(proc, ["lib:Work"])  # the toolbox checks argument types first
    assert "neither a full IRI nor a CURIE" in apply(proc, {"$p1": "nope:Work"})
    assert apply(proc, {"$p1": "<http://w3id.org/owl-memory/examples/library#Agent>"})["rows"] == 2
    plain = memory.add(ItemSpec("Principle", "Read every row", "Use always.", "Page through results."))
    assert "no compiled query pattern" in apply(plain, {})
    forged = memory.add(ItemSpec("Procedure", "Forged pattern", "Use never.", "x", action_schema={
        "operator": "ontology_query", "form": "select", "filters": 0, "parameters": [],
        "where": [["?v0", "?v1", "?v2 } SERVICE <http://127.0.0.1:9/> { ?a ?b ?c"]]}))
    assert "not a variable, parameter" in apply(forged, {})  # a stored pattern is a basic graph pattern or nothing


def test_a0_has_no_memory_apply(course, memory):
    box = Toolbox(memory, None, str(course.ontology_path), access=MemoryAccess.of("A0"))
    assert "memory_apply" not in {f.__name__ for f in box.functions()}


def test_a_note_becomes_a_refinement_only_when_the_run_succeeds_and_consolidation_takes_it(course, memory, tmp_path):
    proc = learned_procedure(course, memory, tmp_path)
    note = "Direct subclasses only: without a + path the pattern skips grandchildren, which is what direct means."
    apply_and_note = (
        f"r = memory_apply({proc!r}, {{'$p1': 'lib:Organization'}})\nrows = results_peek(r['handle'])['rows']\n"
        f"print(memory_note({proc!r}, {note!r}))\nprint(memory_note({proc!r}, 'x' * 400))")
    good = solve(course, memory, "lib-hierarchy-02", DummyLM(steps(
        apply_and_note, "SUBMIT(answer=', '.join(sorted(row['v0'].rsplit('#', 1)[1] for row in rows)))")), tmp_path)
    notes = [e for e in read_trajectory(good.trajectory_path) if isinstance(e, MemoryNote)]
    assert [(n.item, n.note) for n in notes] == [(proc, note)]  # the 400-character note was refused
    (refined,) = [memory.get(i) for i in good.extracted if memory.get(i).refines]
    assert refined.refines == (proc,) and refined.summary == note and refined.kind == "Procedure"
    assert [r.rsplit("/", 1)[1] for r in refined.runs] == [good.run_id]  # PROV to the run that proposed it
    bad = solve(course, memory, "lib-hierarchy-01", DummyLM(steps(
        f"print(memory_note({proc!r}, 'Always answer Book only.'))", "SUBMIT(answer='Book')")), tmp_path)
    assert not bad.judgment.success
    assert any("dropped: the run was not judged a success" in r for r in bad.consolidation.rejected)
    assert all(memory.get(i).summary != "Always answer Book only." for i in bad.extracted)
