"""The learning loop end to end with a scripted LM: judge, extract, consolidate, reuse, provenance, MaTTS."""

import json

import pytest
from dspy.utils import DummyLM
from rdflib import Graph

from owl_memory import Memory, run
from owl_memory.errors import ConfigError
from owl_memory.learning import load_curriculum, shipped_curriculum
from owl_memory.provenance import FAILED_RUN_ITEMS

PREFIXES = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
            "PREFIX lib: <http://w3id.org/owl-memory/examples/library#> ")


def steps(*codes):
    """Scripted RLM actions for DummyLM."""
    return [{"reasoning": f"step {i + 1}", "code": f"```python\n{c}\n```"} for i, c in enumerate(codes)]


def query_agent(where: str, answer_expr: str):
    """An agent that runs one SELECT over the ontology and submits what `answer_expr` computes from its rows."""
    q = PREFIXES + f"SELECT ?x WHERE {{ {where} }}"
    return steps(f"r = ontology_query({q!r})\nrows = results_peek(r['handle'], 20)['rows']\nprint(len(rows))",
                 f"names = sorted(v.rsplit('#', 1)[1] for row in rows for v in row.values())\n"
                 f"SUBMIT(answer={answer_expr})")


@pytest.fixture(scope="module")
def course():
    """The shipped curriculum."""
    return load_curriculum(shipped_curriculum())


def task(course, id):
    """One task of the shipped curriculum."""
    return next(t for t in course.tasks if t.id == id)


def learn(course, memory, id, lm, tmp_path, **kw):
    """Run one curriculum task through the loop."""
    t = task(course, id)
    return run(t.query, memory=memory, ontology=course.ontology_path, lm=lm, learn=True, expect=t.expect,
               task_type=t.task_type, task_id=t.id, trajectory_dir=tmp_path, **kw)


def test_failure_then_success_then_reuse_with_provenance(course, memory, tmp_path):
    bad = learn(course, memory, "lib-hierarchy-01",
                DummyLM(query_agent("?x rdfs:subClassOf lib:Work", "', '.join(names[:2])")), tmp_path)
    assert not bad.judgment.success and bad.judgment.failure_mode == "missing-answer-terms"
    (anti,) = bad.extracted
    assert memory.get(anti).kind == "AntiPattern" and memory.get(anti).failure_modes == ("missing-answer-terms",)
    assert bad.consolidation.added == [anti]

    good = learn(course, memory, "lib-hierarchy-02",
                 DummyLM(query_agent("?x rdfs:subClassOf lib:Organization", "', '.join(names)")), tmp_path)
    assert good.judgment.success
    (proc,) = good.extracted
    item = memory.get(proc)
    assert item.kind == "Procedure" and item.action_schema.to_json()["where"] == [["?v0", "rdfs:subClassOf", "$p1"]]
    assert good.consolidation.conflicts == [[proc, anti]]  # same pattern prescribed and forbidden
    assert item.runs == (f"http://w3id.org/owl-memory/run/{good.run_id}",)

    # the next task searches memory, reads the procedure, and uses it
    reuse = steps("hits = memory_search(task_type='hierarchy', kinds=['Procedure'])['items']\nprint(len(hits))",
                  "p = memory_get(hits[0]['id'])\nprint(p['action_schema']['where'])") + \
        query_agent("?x rdfs:subClassOf lib:Work", "', '.join(names)")
    third = learn(course, memory, "lib-hierarchy-01", DummyLM(reuse), tmp_path)
    assert third.judgment.success and third.memory_usage[0].memory_id == proc
    assert third.memory_usage[0].rank == 1 and third.memory_usage[0].score == 0.0
    counters = memory.get(proc)
    assert counters.use_count == 1 and counters.success_count == 1

    g = Graph().parse(memory.export(tmp_path / "m.ttl"))
    assert memory.validate().conforms
    used = g.query("PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX om: <http://w3id.org/owl-memory#> "
                   "SELECT ?run ?rank WHERE { ?run prov:qualifiedUsage ?u . ?u prov:entity ?i ; om:rank ?rank }",
                   initBindings={"i": __import__("rdflib").URIRef(f"http://w3id.org/owl-memory/item/{proc}")})
    assert [(str(r.run).rsplit("/", 1)[-1], int(r.rank)) for r in used] == [(third.run_id, 1)]
    assert list(g.query(FAILED_RUN_ITEMS)) == []  # no failed run used an item
    for i in (anti, proc):  # every item traces back to the run and the trajectory that run generated
        rows = g.query("PREFIX prov: <http://www.w3.org/ns/prov#> SELECT ?t WHERE { ?i prov:wasGeneratedBy ?r ; "
                       "prov:wasDerivedFrom ?t . ?t prov:wasGeneratedBy ?r }",
                       initBindings={"i": __import__("rdflib").URIRef(f"http://w3id.org/owl-memory/item/{i}")})
        assert len(list(rows)) == 1


def test_malformed_extractor_output_is_recorded_and_the_run_goes_on(course, memory, tmp_path):
    extractor = DummyLM([{"reasoning": "r", "drafts": "not a list at all"}])
    r = learn(course, memory, "lib-schema-01", DummyLM(query_agent("lib:author rdfs:domain ?x", "names[0]")),
              tmp_path, extract_lm=extractor)
    assert r.judgment.success and r.extracted  # the rule-based item stands in
    assert any("extractor failed" in x for x in r.consolidation.rejected)
    assert memory.validate().conforms


def test_llm_extractor_items_are_checked_on_their_parsed_form(course, memory, tmp_path):
    drafts = [{"kind": "Procedure", "title": "Read domains with one pattern", "summary": "Use for schema questions.",
               "content": "Query rdfs:domain of the property named in the question."},
              {"kind": "AntiPattern", "title": "Wrong kind for a success", "summary": "x", "content": "y"},
              {"kind": "Procedure", "title": "Mentions author", "summary": "Use for author.", "content": "author"},
              "not a dict",
              {"kind": "Principle", "title": "a title far too long for the shapes to accept as one item title",
               "summary": "Use when shapes reject it.", "content": "- x"}]
    extractor = DummyLM([{"reasoning": "r", "drafts": json.dumps(drafts)}])
    r = learn(course, memory, "lib-schema-01", DummyLM(query_agent("lib:author rdfs:domain ?x", "names[0]")),
              tmp_path, extract_lm=extractor)
    (i,) = r.extracted
    assert memory.get(i).title == "Read domains with one pattern" and "llm-extracted" in memory.get(i).tags
    rejected = " ".join(r.consolidation.rejected)
    assert "not AntiPattern" in rejected and "copies a task-specific string (author)" in rejected
    assert "draft 4" in rejected
    assert "title: exactly one, 1 to 10 words" in rejected  # the shapes refused it at commit; nothing half-written
    assert memory.validate().conforms and len(memory) == 1


def test_matts_parallel_self_contrast_and_sequential_refinement(course, memory, tmp_path):
    lm = DummyLM(query_agent("?x rdfs:subClassOf lib:Work", "', '.join(names[:1])") +
                 query_agent("?x rdfs:subClassOf+ lib:Work", "', '.join(names)") +
                 query_agent("?x rdfs:subClassOf lib:Work", "', '.join(names)"))
    r = learn(course, memory, "lib-hierarchy-01", lm, tmp_path, matts="parallel:3")
    assert r.judgment.success
    items = {memory.get(i).failure_modes[0] if memory.get(i).failure_modes else "ok": memory.get(i)
             for i in r.extracted}
    assert sorted(items) == ["extra-answer-terms", "missing-answer-terms", "ok"]  # + path: extra terms
    assert items["ok"].kind == "Procedure" and items["ok"].action_schema.to_json()["where"] == [
        ["?v0", "rdfs:subClassOf", "$p1"]]
    # self-contrast: the rollout that ran the succeeding pattern and still failed did not fail by its pattern
    same, other = items["missing-answer-terms"], items["extra-answer-terms"]
    assert same.action_schema is None and "the same pattern succeeded" in memory.window(same.id).text
    assert other.action_schema.where != items["ok"].action_schema.where  # the + path is forbidden
    assert "succeeded with" in memory.window(other.id).text and "subClassOf" in memory.window(other.id).text
    assert r.consolidation.conflicts == []  # nothing learned from one task contradicts itself
    seq = DummyLM(query_agent("?x rdfs:subClassOf lib:Organization", "names[0]") +
                  query_agent("?x rdfs:subClassOf lib:Organization", "', '.join(names)") +
                  query_agent("?x rdfs:subClassOf lib:Organization", "'never reached'"))
    r2 = learn(course, memory, "lib-hierarchy-02", seq, tmp_path, matts="sequential:3")
    assert r2.judgment.success and "A previous attempt answered" in seq.history[-1]["messages"][-1]["content"]
    with pytest.raises(ConfigError, match="parallel:K or sequential:K"):
        learn(course, memory, "lib-hierarchy-02", seq, tmp_path, matts="both:2")


def test_learning_needs_a_memory(course, tmp_path):
    with pytest.raises(ConfigError, match="needs a memory"):
        run("q", lm=DummyLM([]), learn=True, expect={"answer": "x"})


def test_an_empty_expect_is_no_gold_and_the_llm_judges(course, memory, tmp_path):
    verdict = {"reasoning": "r", "success": "True", "reason": "the answer names the domain", "confidence": "low"}
    t, lm = task(course, "lib-schema-01"), DummyLM([*steps("SUBMIT(answer='Work')"), verdict])
    r = run(t.query, memory=memory, ontology=course.ontology_path, lm=lm, learn=True, expect={}, judge_rules=True,
            task_type=t.task_type, trajectory_dir=tmp_path)
    assert r.judgment.judge == "llm" and r.judgment.success and r.judge_rules == ()


def test_a_bounded_memory_stays_bounded_through_the_loop(course, tmp_path, fresh_memory):
    with Memory(fresh_memory(tmp_path / "m"), max_items=1) as m:
        learn(course, m, "lib-schema-01", DummyLM(query_agent("lib:author rdfs:domain ?x", "names[0]")), tmp_path)
        r = learn(course, m, "lib-schema-02", DummyLM(query_agent("lib:publishedBy rdfs:range ?x", "names[0]")),
                  tmp_path)
        assert len(m.search(k=50)) == 1 and len(m) == 2 and r.consolidation.archived


def test_two_items_both_ranked_first_get_one_usage_each(course, memory, tmp_path):
    from owl_memory import ItemSpec

    a = memory.add(ItemSpec("Procedure", "Query subclasses", "Use when listing subclasses.", "- query",
                            task_types=["hierarchy"]))
    b = memory.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "- bind"))
    agent = steps(f"x = memory_get({a!r})\ny = memory_search('query takes user text')['items']\nprint(len(y))") + \
        query_agent("?x rdfs:subClassOf lib:Work", "', '.join(names)")
    r = learn(course, memory, "lib-hierarchy-01", DummyLM(agent), tmp_path, condition="A3")  # hint ranks a first
    assert {(u.memory_id, u.rank) for u in r.memory_usage} >= {(a, 1), (b, 1)}
    g = Graph().parse(memory.export(tmp_path / "m.ttl"))
    assert memory.validate().conforms
    rows = g.query("PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX om: <http://w3id.org/owl-memory#> "
                   "SELECT ?i ?rank WHERE { ?run prov:qualifiedUsage ?u . ?u prov:entity ?i ; om:rank ?rank }")
    ranks = {str(row.i).rsplit("/", 1)[-1]: int(row.rank) for row in rows}
    assert ranks[a] == 1 and ranks[b] == 1


def test_at_most_three_items_per_run_and_the_cap_is_configurable(course, memory, tmp_path):
    topics = ("prefixes", "row limits", "language tags", "optional joins", "blank nodes")
    drafts = [{"kind": "Principle", "title": f"Check {t} first", "summary": f"Use when a query touches {t}.",
               "content": f"- look at {t} before answering"} for t in topics]
    agent = query_agent("lib:author rdfs:domain ?x", "names[0]")
    r = learn(course, memory, "lib-schema-01", DummyLM(agent), tmp_path,
              extract_lm=DummyLM([{"reasoning": "r", "drafts": json.dumps(drafts)}]))
    assert len(r.extracted) == 3 and len(memory) == 3  # five valid drafts, three stored
    one = learn(course, memory, "lib-schema-01", DummyLM(agent), tmp_path, max_extract=1,
                extract_lm=DummyLM([{"reasoning": "r", "drafts": json.dumps(drafts[::-1])}]))
    assert len(one.extracted) == 1 and memory.get(one.extracted[0]).title == "Check blank nodes first"
    with pytest.raises(ConfigError, match="max_extract"):
        learn(course, memory, "lib-schema-01", DummyLM(agent), tmp_path, max_extract=-1)


def test_without_gold_the_llm_judge_and_the_extractor_see_bounded_evidence_never_the_trace(course, memory, tmp_path):
    noisy = steps(*(f"print('marker-{i} ' + 'x' * 3500)" for i in range(6)), "SUBMIT(answer='Work')")
    verdict = {"reasoning": "r", "success": "True", "reason": "the outline shows the domain", "confidence": "low"}
    lm = DummyLM([*noisy, verdict])
    drafts = [{"kind": "Principle", "title": "Read the schema axiom", "summary": "Use for schema questions.",
               "content": "- query the axiom"}]
    extractor = DummyLM([{"reasoning": "r", "drafts": json.dumps(drafts)}])
    t = task(course, "lib-schema-01")
    r = run(t.query, memory=memory, ontology=course.ontology_path, lm=lm, learn=True, task_type=t.task_type,
            trajectory_dir=tmp_path, extract_lm=extractor)
    assert r.judgment.judge == "llm" and r.judgment.success and r.judgment.confidence == "low"
    trace = r.trajectory_path.read_text(encoding="utf-8")
    assert trace.count("x" * 3000) == 6  # the trace holds every output in full
    for prompt in (json.dumps(lm.history[-1]["messages"]), json.dumps(extractor.history[-1]["messages"])):
        assert "marker-0" in prompt and "marker-5" in prompt  # every step is outlined
        assert "x" * 200 not in prompt and len(prompt) < 12_000  # but clipped: never the whole trace
    assert [memory.get(i).title for i in r.extracted] == ["Read the schema axiom"]
