"""Judge rules: learned from gold in the loop, traced to their runs, judging held-out tasks without gold (bound,
never pasted), counted against gold, and carried by packs."""

import pytest
from dspy.utils import DummyLM
from rdflib import Literal, URIRef

from owl_memory import run
from owl_memory.adapters import sparql as sparql_text
from owl_memory.adapters.sparql_binding import bind_terms
from owl_memory.learning import load_curriculum, shipped_curriculum
from owl_memory.learning.families import view_of
from owl_memory.learning.judge_rules import RuleJudge, bindings_for, compile_rule
from owl_memory.model import JudgeRule, Parameter
from owl_memory.model.judge_rules import placeholder
from owl_memory.model.judgments import Expect
from owl_memory.rdfio import load_graph

LIB = "http://w3id.org/owl-memory/examples/library#"
PREFIXES = f"PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX lib: <{LIB}> "
RULES_TRACED = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?rule ?run ?task WHERE {
  ?rule a om:JudgeRule ; om:actionSchema ?schema ; prov:wasGeneratedBy ?run ; prov:wasDerivedFrom ?trajectory .
  ?run a om:Run ; om:taskId ?task . ?trajectory a om:Trajectory ; prov:wasGeneratedBy ?run .
} ORDER BY ?task"""
DECIDED = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX om: <http://w3id.org/owl-memory#>
SELECT ?rule ?success WHERE { ?j a om:Judgment ; om:judge "rule" ; om:decidedByRule ?rule ; om:success ?success }"""


def answering(answer: str):
    """A scripted agent that submits `answer` at once."""
    return DummyLM([{"reasoning": "answer", "code": f"```python\nSUBMIT(answer={answer!r})\n```"}])


@pytest.fixture(scope="module")
def course():
    """The shipped curriculum."""
    return load_curriculum(shipped_curriculum())


@pytest.fixture(scope="module")
def graph(course):
    """The shipped curriculum's ontology."""
    return load_graph(course.ontology_path)


def task(course, id):
    """One task of the shipped curriculum."""
    return next(t for t in course.tasks if t.id == id)


def learn(course, memory, tmp_path, text, answer, *, expect=None, task_type="lookup", task_id=None):
    """One run through the learning loop with a scripted agent submitting `answer`."""
    return run(text, memory=memory, ontology=course.ontology_path, lm=answering(answer), learn=True, expect=expect,
               task_type=task_type, task_id=task_id, trajectory_dir=tmp_path, judge_rules=True)


def test_a_gold_run_leaves_a_judge_rule_traced_to_its_run(course, memory, tmp_path):
    t = task(course, "lib-lookup-01")
    r = learn(course, memory, tmp_path, t.query, "lib:Economy, lib:Passages", expect=t.expect, task_id=t.id)
    assert r.judgment.success and len(r.judge_rules) == 1
    rule = memory.get(r.judge_rules[0])
    assert rule.kind == "JudgeRule" and isinstance(rule.action_schema, JudgeRule)
    assert rule.action_schema.question == "Which works did {p1} author?"
    assert placeholder("p1") in rule.action_schema.template and "Charles" not in rule.action_schema.template
    rows = memory.sparql(RULES_TRACED).rows
    assert [(str(row[0]).rsplit("/", 1)[-1], str(row[2])) for row in rows] == [(rule.id, "lib-lookup-01")]


def test_a_failed_gold_run_compiles_no_rule(course, memory, tmp_path):
    t = task(course, "lib-lookup-01")
    r = learn(course, memory, tmp_path, t.query, "lib:Manual", expect=t.expect, task_id=t.id)
    assert not r.judgment.success and r.judge_rules == ()


def test_a_held_out_task_without_gold_is_judged_by_the_rule_named_in_its_record(course, memory, tmp_path):
    t = task(course, "lib-lookup-01")
    rule = learn(course, memory, tmp_path, t.query, "lib:Economy, lib:Passages", expect=t.expect).judge_rules[0]
    right = learn(course, memory, tmp_path, "Which works did lib:Grace author?", "lib:Compiler, lib:Manual")
    assert right.judgment.judge == "rule" and right.judgment.success and right.judgment.rules == (rule,)
    assert rule in right.judgment.reason
    wrong = learn(course, memory, tmp_path, "Which works did lib:Grace author?", "lib:Economy")
    assert wrong.judgment.judge == "rule" and not wrong.judgment.success
    assert wrong.judgment.failure_mode == "extra-answer-terms" or wrong.judgment.missing
    decided = {(str(r[0]).rsplit("/", 1)[-1], bool(r[1])) for r in memory.sparql(DECIDED).rows}
    assert decided == {(rule, True), (rule, False)}


def test_no_rule_applies_falls_back_to_the_llm_judge_and_says_so(course, memory, tmp_path):
    t = task(course, "lib-lookup-01")
    learn(course, memory, tmp_path, t.query, "lib:Economy, lib:Passages", expect=t.expect)
    lm = DummyLM([{"reasoning": "answer", "code": "```python\nSUBMIT(answer='lib:Manual')\n```"},
                  {"reasoning": "r", "success": "True", "reason": "the rows support it", "confidence": "low"}])
    r = run("Which works cite lib:Notes?", memory=memory, ontology=course.ontology_path, lm=lm, learn=True,
            task_type="lookup", trajectory_dir=tmp_path)
    assert r.judgment.judge == "llm" and r.judgment.rules == ()
    assert r.judgment.reason.startswith("no judge rule applied; ")


def test_gold_runs_count_each_rules_agreement(course, memory, tmp_path):
    t1, t2 = task(course, "lib-lookup-01"), task(course, "lib-lookup-02")
    rule = learn(course, memory, tmp_path, t1.query, "lib:Economy, lib:Passages", expect=t1.expect).judge_rules[0]
    learn(course, memory, tmp_path, t2.query, "lib:Compiler, lib:Manual", expect=t2.expect)  # gold success, rule agrees
    learn(course, memory, tmp_path, t2.query, "lib:Economy", expect=t2.expect)  # gold failure, rule agrees
    counts = memory.get(rule).counts
    assert (counts.use_count, counts.success_count, counts.failure_count) == (2, 2, 0)


@pytest.mark.parametrize("hostile", ['x" } SERVICE <http://evil.example/> { ?s ?p ?o', "a\n} ; DROP ALL ; {",
                                     "'}) UNION { ?w ?p ?o }"])
def test_hostile_values_are_bound_not_pasted(graph, hostile):
    expect = Expect("sparql", PREFIXES + 'SELECT ?w WHERE { ?w rdfs:label ?l FILTER(STR(?l) = "Notes") }')
    rule = compile_rule('Which work is labelled "Notes"?', expect, graph)
    assert rule is not None and rule.parameters == (Parameter("p1", "literal"),)
    bound = bindings_for(rule, f'Which work is labelled "{hostile}"?', view_of("lib", graph))
    assert bound == {URIRef(placeholder("p1")): Literal(" ".join(hostile.split()).strip("\"'"))}  # spaces collapsed
    query = bind_terms(sparql_text.check_read_only(rule.template), bound)
    before = sparql_text.patterns(sparql_text.parse(rule.template))[0]
    assert sparql_text.patterns(query)[0] == before and list(graph.query(query)) == []


def test_a_slot_that_names_no_single_term_makes_the_rule_not_apply(graph):
    expect = Expect("sparql", PREFIXES + "SELECT ?w WHERE { ?w lib:author lib:Charles }")
    rule = compile_rule("Which works did lib:Charles author?", expect, graph)
    view = view_of("lib", graph)
    assert bindings_for(rule, "Which works did lib:Grace author?", view) == {URIRef(placeholder("p1")):
                                                                               URIRef(LIB + "Grace")}
    assert bindings_for(rule, "Which works did lib:Grace } author?", view) is None
    assert bindings_for(rule, "Which works did <http://x> } SERVICE <http://y> { author?", view) is None
    assert bindings_for(rule, "Which works cite lib:Grace?", view) is None


def test_a_rule_judge_without_rules_applies_none(memory, graph):
    assert RuleJudge(memory).judge("Which works did lib:Grace author?", "lib:Compiler", graph, "lookup", None) is None


def small_course(tmp_path):
    """Three lookup tasks of the shipped curriculum's kind: two to train on, one held out."""
    import shutil

    shutil.copy(shipped_curriculum().parent / "library.ttl", tmp_path / "library.ttl")
    gold = PREFIXES + "SELECT ?w WHERE {{ ?w lib:author lib:{} }}"
    tasks = [("t1", "Charles", "train"), ("t2", "Grace", "train"), ("h1", "Charles", "holdout")]
    lines = ["id: small", "ontology: {name: library, path: library.ttl}", "tasks:"]
    for id, who, split in tasks:
        lines.append(f"  - {{id: {id}, query: 'Which works did lib:{who} author?', task_type: lookup, "
                     f"split: {split}, expect: {{sparql: \"{gold.format(who)}\"}}}}")
    (tmp_path / "small.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_curriculum(tmp_path / "small.yaml")


def test_training_learns_rules_and_reports_their_agreement(memory, tmp_path):
    from owl_memory.learning.train import train_curriculum
    from owl_memory.model import RuleCounts, RunConfig

    def submit(answer):
        return {"reasoning": "a", "code": f"```python\nSUBMIT(answer={answer!r})\n```"}

    lm = DummyLM({"lib:Charles": submit("lib:Economy, lib:Passages"), "lib:Grace": submit("lib:Compiler, lib:Manual")})
    summary = train_curriculum(small_course(tmp_path), memory, RunConfig(lm=lm, trajectory_dir=tmp_path))
    assert summary.succeeded == 2 and len(summary.judge_rules.learned) == 1
    assert summary.judge_rules.in_training == RuleCounts(judged=1, agreed=1)
    agreement = summary.judge_rules.agreement
    assert (agreement.tasks, agreement.covered, agreement.probes) == (1, 1, 3)
    assert agreement.agreement == agreement.precision == agreement.recall == agreement.coverage == 1.0
    rule = memory.get(summary.judge_rules.learned[0])
    assert rule.counts.success_count == 1 and rule.counts.failure_count == 0  # the second run agreed with gold
    assert len(memory.sparql(RULES_TRACED).rows) == 1


def test_a_task_whose_lm_fails_is_an_error_row_and_training_goes_on(memory, tmp_path):
    from owl_memory.learning.train import train_curriculum
    from owl_memory.model import ConsolidationFigures, RunConfig

    lm = DummyLM([{"reasoning": "a", "code": "```python\nSUBMIT(answer='lib:Economy, lib:Passages')\n```"}])
    summary = train_curriculum(small_course(tmp_path), memory, RunConfig(lm=lm, trajectory_dir=tmp_path))
    assert (summary.ran, summary.succeeded, summary.errors) == (2, 1, 1)  # the second task found the LM out of answers
    failed = summary.to_dict()["tasks"][1]
    assert set(failed) == {"id", "success", "error"} and failed["id"] == "t2" and failed["success"] is None
    assert summary.consolidation == summary.tasks[0].figures != ConsolidationFigures()  # the error adds nothing


def test_a_deliberately_wrong_rule_lowers_agreement(memory, tmp_path):
    from owl_memory import ItemSpec
    from owl_memory.learning.agreement import rule_agreement

    course = small_course(tmp_path)
    t = course.train[0]
    learn(course, memory, tmp_path, t.query, "lib:Economy, lib:Passages", expect=t.expect.to_dict())
    assert rule_agreement(course, memory).agreement == 1.0
    wrong = JudgeRule("select", PREFIXES + f"SELECT ?w WHERE {{ ?w lib:cites <{placeholder('p1')}> }}",
                      (Parameter("p1", "iri"),), "Which works did {p1} author?")
    memory.add(ItemSpec("JudgeRule", "A wrong lookup rule", "Use to judge lookups (deliberately wrong).",
                        "wrong rule", task_types=("lookup",), action_schema=wrong))
    worse = rule_agreement(course, memory)
    assert worse.covered == 1 and worse.agreement < 1.0 and worse.recall == 0.0


def test_packs_carry_judge_rules(memory, tmp_path, fresh_memory):
    from owl_memory import Memory
    from owl_memory.learning.packs import export_pack, import_pack

    course = load_curriculum(shipped_curriculum())
    t = task(course, "lib-lookup-01")
    rule = learn(course, memory, tmp_path, t.query, "lib:Economy, lib:Passages", expect=t.expect).judge_rules[0]
    assert export_pack(memory, tmp_path / "rules.jsonl", kind="JudgeRule") == 1
    with Memory(fresh_memory(tmp_path / "other")) as other:
        assert import_pack(other, tmp_path / "rules.jsonl").added == (rule,)
        assert other.get(rule).action_schema == memory.get(rule).action_schema
        judge = RuleJudge(other)
        verdict = judge.judge("Which works did lib:Grace author?", "lib:Compiler, lib:Manual",
                              load_graph(course.ontology_path), "lookup", memory.get(rule).applies_to[0])
        judge.close()
        assert verdict.success and verdict.rules == (rule,)


def test_an_ask_rule_judges_the_runs_graph(course, memory, tmp_path):
    turtle = f"@prefix lib: <{LIB}> . lib:{{}} lib:cites lib:{{}} ."
    expect = {"ask": PREFIXES + "ASK { lib:Manual lib:cites lib:Economy }"}
    first = learn(course, memory, tmp_path, "State that lib:Manual cites lib:Economy, in Turtle.",
                  turtle.format("Manual", "Economy"), expect=expect, task_type="edit")
    rule = memory.get(first.judge_rules[0]).action_schema
    assert rule.check == "ask" and rule.question == "State that {p1} cites {p2}, in Turtle."
    right = learn(course, memory, tmp_path, "State that lib:Passages cites lib:Compiler, in Turtle.",
                  turtle.format("Passages", "Compiler"), task_type="edit")
    wrong = learn(course, memory, tmp_path, "State that lib:Passages cites lib:Compiler, in Turtle.",
                  turtle.format("Compiler", "Passages"), task_type="edit")
    assert right.judgment.judge == wrong.judgment.judge == "rule"
    assert right.judgment.success and not wrong.judgment.success


def test_a_rule_the_guard_refuses_does_not_decide(course, memory, graph):
    from owl_memory import ItemSpec

    template = f"SELECT ?w WHERE {{ SERVICE <http://evil.example/> {{ ?w ?p <{placeholder('p1')}> }} }}"
    hostile = JudgeRule("select", template, (Parameter("p1", "iri"),), "Which works did {p1} author?")
    memory.add(ItemSpec("JudgeRule", "A hostile lookup rule", "Use to judge lookups.", "hostile",
                        task_types=("lookup",), action_schema=hostile))
    judge = RuleJudge(memory)
    assert judge.judge("Which works did lib:Grace author?", "lib:Compiler", graph, "lookup", None) is None
    judge.close()


def test_a_long_task_gets_no_rule_in_bounded_time(graph):
    import time

    expect = Expect("sparql", PREFIXES + "SELECT ?w WHERE { ?w lib:author lib:Charles . ?w lib:cites lib:Notes }")
    rule = compile_rule("Which works did lib:Charles author that cite lib:Notes?", expect, graph)
    assert [p.name for p in rule.parameters] == ["p1", "p2"]
    started = time.perf_counter()
    assert bindings_for(rule, "Which works did " + "x " * 50_000 + "author?", view_of("lib", graph)) is None
    assert time.perf_counter() - started < 1


def test_a_rule_over_builtin_terms_only_transfers_to_another_ontology(course, memory, tmp_path):
    from owl_memory.resources import shipped

    t = task(course, "lib-hierarchy-01")
    learned = learn(course, memory, tmp_path, t.query, "lib:Book, lib:Article, lib:Thesis", expect=t.expect,
                    task_type="hierarchy")
    assert learned.judgment.success and memory.get(learned.judge_rules[0]).applies_to == ()
    other = shipped("ontology", "owl-memory.ttl")
    subclasses = {str(s) for s in load_graph(other).subjects(
        URIRef("http://www.w3.org/2000/01/rdf-schema#subClassOf"), URIRef("http://w3id.org/owl-memory#MemoryItem"))}
    answer = ", ".join(f"<{s}>" for s in sorted(subclasses))
    r = run("What are the direct subclasses of om:MemoryItem?", memory=memory, ontology=other, lm=answering(answer),
            learn=True, task_type="hierarchy", trajectory_dir=tmp_path)
    assert r.judgment.judge == "rule" and r.judgment.success and r.judgment.rules == learned.judge_rules


def test_a_number_the_task_names_is_a_parameter_and_its_slot_must_hold_a_number(course, graph):
    t = task(course, "lib-filter-01")
    rule = compile_rule(t.query, t.expect, graph)
    assert rule.question == "Which works appeared before the year {p1}?" and "1900" not in rule.template
    view = view_of("lib", graph)
    assert bindings_for(rule, "Which works appeared before the year 1850?", view)[URIRef(placeholder("p1"))] == \
        Literal(1850)
    assert bindings_for(rule, "Which works appeared before the year 1850 || true?", view) is None
