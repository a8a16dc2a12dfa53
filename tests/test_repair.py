"""repair(): the loop, the minimal-change rules, compile-then-reuse with memory, and transfer between shape sets (the
CLI: test_repair_cli.py; the W3C and SHACL-SPARQL suites case by case: test_repair_suites.py)."""

import json
from pathlib import Path

import pytest
from rdflib import Graph, Literal, Namespace
from rdflib.collection import Collection
from rdflib.namespace import RDF

from owl_memory import ItemSpec, Memory
from owl_memory.model import RepairDecision
from owl_memory.repair import repair
from owl_memory.repair.patch import Patch
from owl_memory.repair.plans import shape_key
from owl_memory.repair.registry import strategy, unregister
from owl_memory.vocab import SH
from owl_memory_bench.repair.suites import load_set
from owl_memory_bench.repair.transfer import transfer

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
    res = repair(HEAD + 'ex:a a ex:Person ; ex:age "42" .', SHAPES, keep_values=True)
    assert res.conforms and res.initial_violations == 2 and res.verify_iterations == 2
    assert (EX.a, EX.age, Literal(42)) in res.added and (EX.a, EX.name, Literal("")) in res.added
    assert res.removed == {(EX.a, EX.age, Literal("42"))}
    assert res.compiled_new == [] and res.compiled_reused == 0
    json.dumps(res.to_dict())


def test_the_smallest_change_set_wins_an_optional_bad_value_is_dropped():
    """ex:age is optional: dropping "42" (one triple) beats casting it (two); a required value is replaced."""
    res = repair(HEAD + 'ex:a a ex:Person ; ex:name "A" ; ex:age "42" .', SHAPES)
    assert res.conforms and res.removed == {(EX.a, EX.age, Literal("42"))} and not res.added
    assert [a.operator for a in res.operators_applied] == ["value.drop"]
    required = SHAPES.replace("sh:datatype xsd:integer .", "sh:datatype xsd:integer ; sh:minCount 1 .")
    res = repair(HEAD + 'ex:a a ex:Person ; ex:name "A" ; ex:age "42" .', required)
    assert res.conforms and res.added == {(EX.a, EX.age, Literal(42))}


def test_shallow_shapes_reverify_only_the_focus():
    res = repair(HEAD + 'ex:a a ex:Person ; ex:name "A" ; ex:age "42" . ex:b a ex:Person ; ex:name "B" .', SHAPES)
    assert res.conforms and res.scopes == ["full", "focus"]


def test_compile_then_reuse(memory):
    first = repair(_graph('ex:a a ex:Person ; ex:name "A" ; ex:age "42" .'), SHAPES, memory=memory, run_id="r1",
                   keep_values=True)
    assert first.conforms and len(first.compiled_new) == 1
    op = memory.get(first.compiled_new[0])
    assert op.kind == "RepairOperator" and op.signature == AGE_SIG
    assert op.action_schema.operator == "datatype.cast"
    assert op.verification_hook == "http://ex.org/PersonShape-age"
    episode = memory.get(op.grounded_by[0])
    assert episode.kind == "Episode" and episode.runs
    second = repair(_graph('ex:b a ex:Person ; ex:name "B" ; ex:age "7" .'), SHAPES, memory=memory, run_id="r2",
                    keep_values=True)
    summary = json.loads(json.dumps(second.to_dict()))
    assert second.conforms and summary["compiled_reused"] == 1 and summary["compiled_new"] == []
    assert summary["operators_applied"][0]["from_memory"] is True
    assert memory.get(op.id).success_count == 1


@pytest.fixture
def label_only():
    """A deliberately useless sh:datatype strategy, registered for one test: labels the value instead of fixing it
    (to test demotion)."""

    @strategy("test.label_only", SH.DatatypeConstraintComponent, bindings={})
    def _label_only(ctx, v):
        """Label the focus node."""
        return [Patch("test.label_only", frozenset({(v.focus, EX.note, Literal("looked at"))}),
                      frozenset(), frozenset({v.focus}))]

    yield
    unregister("test.label_only")


def test_failing_compiled_operator_is_demoted(memory, label_only):
    comp = SH.DatatypeConstraintComponent
    bad = memory.add(ItemSpec("RepairOperator", "Label datatype problems", "A bad operator for tests.", "label only",
                     signature=AGE_SIG, action_schema=RepairDecision("test.label_only", str(comp)),
                     verification_hook="http://ex.org/PersonShape-age", task_types=("shacl-repair",)))
    res = repair(_graph('ex:a a ex:Person ; ex:name "A" ; ex:age "42" .'), SHAPES, memory=memory)
    assert res.conforms and res.verify_iterations <= 4  # find, bad op fails, undo re-check, library op verifies
    assert (EX.a, EX.note, Literal("looked at")) not in res.graph, "a failed patch is undone"
    assert memory.get(bad).failure_count == 1
    ranked = [c.id for c in memory.by_signature(AGE_SIG)]
    assert ranked[-1] == bad and len(ranked) == 2


def test_each_violation_signature_is_looked_up_in_memory_once(memory, label_only, monkeypatch):
    """However many violations share a signature and however many rounds offer candidates for them, a repair reads
    memory once per signature: each key compiled operators may be stored under (the signature, its abstract keys,
    the follow-up keys of its strategies) once, and the uses it records reorder what it holds without a re-read."""
    bad = memory.add(ItemSpec("RepairOperator", "Label datatype problems", "A bad operator for tests.", "label only",
                     signature=AGE_SIG, action_schema=RepairDecision("test.label_only",
                                                                     str(SH.DatatypeConstraintComponent)),
                     verification_hook="http://ex.org/PersonShape-age", task_types=("shacl-repair",)))
    reads, read = [], memory.by_signature
    monkeypatch.setattr(memory, "by_signature", lambda key: reads.append(key) or read(key))
    people = " ".join(f'ex:p{i} a ex:Person ; ex:name "P" ; ex:age "{i}" .' for i in range(3))
    res = repair(_graph(people), SHAPES, memory=memory)
    assert res.conforms and res.verify_iterations == 4  # the bad operator fails on all three, then the library
    assert memory.get(bad).failure_count == 3 and res.compiled_reused == 3
    assert len(reads) == len(set(reads)) > 1, "no key is read twice"
    assert [k for k in reads if not k.startswith(("abstract:", "follows:"))] == [AGE_SIG]


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


def test_transfer_between_shipped_shapes_stays_under_its_ceiling():
    """Library mutations train a memory that cuts pySHACL runs per repaired clinic case (never below 2 each: the
    ceiling the benchmark prints), with as many cases repaired; counts, not seconds."""
    train, test = load_set("construction:library", None, 1), load_set("construction:clinic", None, 1)
    r = transfer(train, test)
    assert r["no_fewer_repaired"] and r["trained"]["repaired"] == len(test) == 7
    assert 1.2 < r["validation_ratio"] <= r["ratio_ceiling"], r


@pytest.mark.shared_data
def test_w3c_property_to_node_transfer_counts_and_its_ceiling(shared_data):
    """The W3C pair of issue 11: trained on the property folder, the node folder costs 53 pySHACL runs against the
    empty memory's 59 (an item check is a run per group of its nodes the same memory shapes target), as many cases
    repaired (9). Two cases conform as loaded (a file the data folder lacks: nothing to repair) and are left out; 11
    cases no arm repairs cost 1 run each, so the floor is 29 runs and no memory could beat 2.04x. The trained memory
    saves 6 of the 30 runs above the floor: equals-001 replays what it learned, and and-002 descends into its members
    with 4 trial checks, not 8. Since repair takes the cheapest change set of the whole case, property/node-001 drops
    the link to its incomplete node (1 triple) instead of filling the node's counts (2), so the property folder no
    longer teaches filling a count on a plain predicate: or-001 checks its members in both arms (issue 26; this pair
    saved 18 of 30 before), and xone-001 reads its members' counts off the data (no trial check in either arm)."""
    r = transfer(load_set("w3c:property", shared_data), load_set("w3c:node", shared_data))
    assert r["left_out"] == ["node/qualified-001", "node/xone-duplicate"] and r["cases"] == 20
    assert r["empty"]["validations"] <= 59 and r["trained"]["validations"] <= 53  # pySHACL runs: a cost, bounded
    assert r["empty"]["repaired"] == r["trained"]["repaired"] == 9 and r["no_fewer_repaired"]
    assert r["unrepaired_cases"] == 11 and r["ratio_ceiling"] == 2.036
    assert r["headroom_saved"] == 0.2, "6 of the 30 runs above the floor saved"
    assert r["trained"]["nested_validations"] <= 12 and r["trained"]["item_checks"] <= 12
    runs = {x["case"]: (x["empty"]["validations"], x["trained"]["validations"]) for x in r["rows"]}
    bounds = {"node/and-002": (12, 8), "node/or-001": (12, 12), "node/equals-001": (4, 2), "node/xone-001": (4, 4)}
    assert all(runs[case][0] <= empty and runs[case][1] <= trained for case, (empty, trained) in bounds.items()), runs


def test_a_trained_memory_repairs_several_violations_of_unseen_shapes_in_one_batch_with_fewer_runs(
        tmp_path, fresh_memory):
    """Trained on library-shape graphs, a memory repairs a clinic graph with several independent violations by its
    abstract operators, every fix in one round verified once, and stores nothing new: fewer pySHACL runs than an
    empty memory, which must store what it learned (an item check); both results conform."""
    from owl_memory import Memory
    from owl_memory.adapters.pyshacl import counting

    case = load_set("construction:clinic:multi", None, 1)[0]
    with Memory(fresh_memory(tmp_path / "empty")) as empty, Memory(fresh_memory(tmp_path / "trained")) as trained:
        for c in load_set("construction:library:multi", None, 1):
            assert repair(c.data, c.shapes, memory=trained).conforms
        runs, results = [], []
        for m in (empty, trained):
            with counting() as count:
                results.append(repair(case.data, case.shapes, memory=m))
            runs.append(count.runs)
    cold, warm = results
    assert cold.initial_violations >= 3 and cold.conforms and warm.conforms
    assert warm.verify_iterations == cold.verify_iterations == 2, "one batch of fixes, verified once"
    assert warm.compiled_reused >= 3 and warm.compiled_new == [] and cold.compiled_new
    assert runs[1] == 2 < runs[0], runs


def test_a_batch_with_a_failing_trusted_fix_falls_back_and_still_repairs(memory):
    """Two violations fixed from memory in one batch; one stored plan is wrong: the round keeps the good fix, undoes
    the bad one, demotes it, and the library repairs that violation in the next round."""
    first = repair(_graph('ex:a a ex:Person ; ex:name "A" ; ex:age "42" .'), SHAPES, memory=memory, keep_values=True)
    assert first.conforms and len(first.compiled_new) == 1
    shapes = _graph(RECT.replace(HEAD, "") + SHAPES.replace(HEAD, ""))
    bad = _width_only_plan(memory, shapes)
    data = _graph('ex:r a ex:Rect . ex:b a ex:Person ; ex:name "B" ; ex:age "7" .')
    res = repair(data, shapes, memory=memory, keep_values=True)
    assert res.initial_violations == 2 and res.conforms
    assert [(o.operator, o.from_memory) for o in res.operators_applied] == \
        [("datatype.cast", True), ("or.satisfy_branch", False)]
    assert memory.get(bad).failure_count == 1 and memory.get(first.compiled_new[0]).success_count == 1
    assert (EX.b, EX.age, Literal(7)) in res.graph and {t[1] for t in res.added} >= {EX.area}
    assert (EX.r, EX.width, None) not in res.graph, "the failed plan's value is undone"


def test_deleting_the_data_a_shape_targets_is_not_a_repair():
    text = "ex:a ex:p 1 .\nex:S a sh:NodeShape ; sh:targetSubjectsOf ex:p ; " \
           "sh:property [ sh:path ex:p ; sh:maxCount 0 ] ."
    g = _graph(text)
    res = repair(g, g)
    assert not res.conforms and (EX.a, EX.p, Literal(1)) in res.graph and not res.removed


RECT = HEAD + """ex:RectShape a sh:NodeShape ; sh:targetClass ex:Rect ; sh:or (
    [ sh:property [ sh:path ex:height ; sh:minCount 1 ] ; sh:property [ sh:path ex:width ; sh:minCount 1 ] ]
    [ sh:property [ sh:path ex:area ; sh:minCount 1 ] ] ) .
"""
OR_SIG = "OrConstraintComponent|http://ex.org/RectShape|-|IRI"


def _width_only_plan(memory, shapes) -> str:
    """Store a wrong compiled plan for RectShape's sh:or (its first branch, filling ex:width and forgetting
    ex:height); returns its id."""
    branch0 = list(Collection(shapes, shapes.value(EX.RectShape, SH["or"])))[0]
    width = next(ps for ps in shapes.objects(branch0, SH.property) if (ps, SH.path, EX.width) in shapes)
    plan = {"kind": "descend", "shape": shape_key(shapes, branch0),
            "steps": [[shape_key(shapes, width), "minCount.add_values", "none", None]]}  # forgets ex:height
    return memory.add(ItemSpec("RepairOperator", "Fill only the width", "A plan that misses a constraint.",
                               "width only", signature=OR_SIG, task_types=("shacl-repair",),
                               verification_hook="http://ex.org/RectShape",
                               action_schema={"operator": "or.satisfy_branch", "choice": {"branch": 0, "plan": plan}}))


def test_compiled_or_branch_replays_without_trial_checks(memory):
    first = repair(_graph("ex:r1 a ex:Rect ; ex:height 3 ."), RECT, memory=memory, run_id="r1")
    assert first.conforms and first.nested_checks > 0 and [(t[0], t[1]) for t in first.added] == [(EX.r1, EX.width)]
    assert first.validations == first.verify_iterations + first.nested_checks
    choice = memory.get(first.compiled_new[0]).action_schema.choice
    assert choice["branch"] == 0 and choice["plan"]["kind"] == "descend"
    assert "_:" not in json.dumps(choice) and "genid" not in json.dumps(choice), "no blank node ids in a plan"
    second = repair(_graph("ex:r2 a ex:Rect ; ex:height 5 ."), RECT, memory=memory, run_id="r2")
    assert second.conforms and second.nested_checks == 0 and second.compiled_reused >= 1
    assert [(t[0], t[1]) for t in second.added] == [(EX.r2, EX.width)]
    assert second.to_dict()["validations"] == second.verify_iterations == 2


def test_compiled_choices_per_node_keep_deltas_minimal(memory):
    data = "ex:r1 a ex:Rect ; ex:height 3 . ex:r2 a ex:Rect ."
    first = repair(_graph(data), RECT, memory=memory)
    assert first.conforms and len(first.compiled_new) == 2  # r1 takes branch 0 (width), r2 branch 1 (area)
    second = repair(_graph(data.replace("r1", "r3").replace("r2", "r4")), RECT, memory=memory)
    assert second.conforms and second.nested_checks == 0 and len(second.added) == len(first.added) == 2
    assert {t[1] for t in second.added} == {EX.width, EX.area}


def test_failing_compiled_plan_is_demoted_then_the_library_repairs(memory):
    shapes = _graph(RECT.replace(HEAD, ""))
    bad = _width_only_plan(memory, shapes)
    res = repair(_graph("ex:r a ex:Rect ."), shapes, memory=memory)
    assert res.conforms and memory.get(bad).failure_count == 1
    assert {t[1] for t in res.added} == {EX.area}, "the failed patch is undone; the library picks the smallest branch"
    assert res.nested_checks > 0


def test_a_plan_learned_on_other_shapes_is_re_derived_for_these_not_replayed(memory):
    """Blank shapes share a signature; a plan that filled the first shapes' required values is applied to the second
    shapes as its rule (fill what this branch requires), never as steps naming the first shapes; no trial check."""
    shape = "[] a sh:NodeShape ; sh:targetNode ex:{n} ; sh:or ( [ sh:property [ sh:path ex:{a} ; sh:minCount 1 ] ] " \
            "[ sh:property [ sh:path ex:{b} ; sh:minCount 1 ] ] ) ."
    first = _graph("ex:x ex:z 1 .\n" + shape.format(n="x", a="p", b="q"))
    res1 = repair(first, first, memory=memory)
    assert res1.conforms and len(res1.compiled_new) == 1 and res1.nested_checks > 0
    second = _graph("ex:y ex:z 1 .\n" + shape.format(n="y", a="r", b="s"))
    res2 = repair(second, second, memory=memory)
    sig = res2.operators_applied[0].signature
    assert sig == memory.get(res1.compiled_new[0]).signature == "OrConstraintComponent|_|-|IRI"
    assert res2.conforms and res2.nested_checks == 0 and res2.operators_applied[0].from_memory
    assert {t[1] for t in res2.added} == {EX.r}, "the first branch's required value, on these shapes"
    assert memory.get(res1.compiled_new[0]).success_count == 1


def test_a_plan_whose_steps_name_other_shapes_is_not_applied_to_new_ones(memory):
    """A plan with a step other than filling a required value (here a surplus value dropped) fits only its shapes:
    on other shapes the library repairs with trial checks, and the plan is not counted as used."""
    shape = "[] a sh:NodeShape ; sh:targetNode ex:{n} ; sh:and ( [ sh:property [ sh:path ex:{a} ; sh:maxCount 1 ] ] ) ."
    first = _graph("ex:x ex:p 1, 2 .\n" + shape.format(n="x", a="p"))
    res1 = repair(first, first, memory=memory)
    assert res1.conforms and len(res1.compiled_new) == 1
    steps = memory.get(res1.compiled_new[0]).action_schema.choice["steps"]
    assert [s[1] for s in steps] == ["maxCount.drop_surplus"]
    second = _graph("ex:y ex:q 1, 2 .\n" + shape.format(n="y", a="q"))
    res2 = repair(second, second, memory=memory)
    assert res2.conforms and res2.nested_checks > 0 and not res2.operators_applied[0].from_memory
    assert memory.get(res1.compiled_new[0]).use_count == 0


def test_decisions_transfer_to_unseen_shapes_by_abstract_signature(memory):
    """What worked on one shape is tried first, by its abstract signature, on a shape never seen before."""
    trained = repair(_graph('ex:a a ex:Person ; ex:name "A" ; ex:age "42" .'), SHAPES, memory=memory, keep_values=True)
    assert trained.conforms and trained.compiled_reused == 0
    other = HEAD + """ex:CarShape a sh:NodeShape ; sh:targetClass ex:Car ;
        sh:property [ sh:path ex:seats ; sh:datatype xsd:integer ] ."""
    res = repair(_graph('ex:c a ex:Car ; ex:seats "4" .'), other, memory=memory, keep_values=True)
    assert res.conforms and res.compiled_reused == 1
    assert res.operators_applied[0].from_memory and res.operators_applied[0].operator == "datatype.cast"
    abstract = memory.by_signature("abstract:DatatypeConstraintComponent|predicate|Literal:plain|datatype")
    assert abstract and abstract[0].success_count == 1
    assert res.compiled_new == [], "the abstract operator replays it as it is: no redundant item, no item check"
    assert memory.by_signature("abstract:DatatypeConstraintComponent|any|Literal:plain|datatype")

def test_learned_follow_up_prevents_a_round_on_another_ontology(tmp_path, fresh_memory):
    """A cascade learned on the library shapes (nodeKind fix, then a class violation on the new IRI) is applied
    before verifying on the clinic shapes: one verification round fewer, same repaired graph conformance."""
    from owl_memory import Memory

    cur = Path(__file__).resolve().parents[1] / "experiments" / "construction"
    clinic = (cur / "clinic.data.ttl", cur / "clinic.shapes.ttl")
    cold = repair(*clinic, keep_values=True)  # keeping values, the literal is converted, not dropped
    with Memory(fresh_memory(tmp_path / "m")) as m:
        repair(cur / "library.data.ttl", cur / "library.shapes.ttl", memory=m, keep_values=True)
        key = "follows:abstract:NodeKindConstraintComponent|predicate|Literal|class|nodeKind.convert"
        follows = m.by_signature(key)
        assert [f.action_schema.operator for f in follows] == ["class.add_type"]
        warm = repair(*clinic, memory=m, keep_values=True)
    assert cold.conforms and warm.conforms and warm.prevented == 1
    assert warm.verify_iterations == cold.verify_iterations - 1




def test_a_node_level_decision_transfers_to_a_property_shape(memory):
    """The path-form-free abstract key carries a decision from a node shape to a property shape."""
    node = HEAD + "ex:S a sh:NodeShape ; sh:targetObjectsOf ex:owner ; sh:class ex:Person ."
    assert repair(_graph("ex:c ex:owner ex:bob ."), node, memory=memory).conforms
    prop = HEAD + "ex:T a sh:NodeShape ; sh:targetClass ex:Car ; sh:property [ sh:path ex:driver ; " \
                  "sh:class ex:Person ] ."
    res = repair(_graph("ex:c a ex:Car ; ex:driver ex:ann ."), prop, memory=memory)
    assert res.conforms and res.operators_applied[0].from_memory
    assert res.operators_applied[0].operator == "class.add_type"


def _forbidding(cls: str, prop: str) -> str:
    """Shapes whose SPARQL constraint forbids `prop` on instances of `cls` (one result per value, with its path)."""
    return HEAD + f"""ex:S a sh:NodeShape ; sh:targetClass {cls} ; sh:sparql [ sh:select \"\"\"
    SELECT $this ?path ?value WHERE {{ $this ?path ?value . FILTER (?path = {prop}) }}
\"\"\" ] ."""


def test_a_sparql_constraint_forbidding_a_property_drops_every_value_at_the_focus():
    """The query reports each label as its own result: each result's change drops its own value (one trial check
    each: a change that clears its result and leaves only results already reported), so both go, and the node
    keeps its type and stays a target."""
    shapes = _forbidding("ex:Thing", "<http://www.w3.org/2000/01/rdf-schema#label>")
    data = HEAD + '@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\nex:a a ex:Thing ; rdfs:label "x", "y" .'
    res = repair(data, shapes)
    assert res.conforms and not res.added and res.nested_checks <= 2
    assert {(s.n3(), o.n3()) for s, _, o in res.removed} == {("<http://ex.org/a>", '"x"'), ("<http://ex.org/a>", '"y"')}


def test_a_sparql_decision_transfers_to_another_shape_with_no_trial_check(memory, tmp_path, fresh_memory):
    """Learned on labels of ex:Thing, the decision (drop the triple on the result path holding the reported value)
    repairs notes of ex:Doc, another shape over other data, by computation; an empty memory tries it first."""
    learned = repair(HEAD + 'ex:a a ex:Thing ; ex:label "x" .', _forbidding("ex:Thing", "<http://ex.org/label>"),
                     memory=memory)
    assert learned.conforms and learned.nested_checks <= 1 and learned.compiled_new
    shapes, data = _forbidding("ex:Doc", "<http://ex.org/note>"), HEAD + 'ex:d a ex:Doc ; ex:note "n" ; ex:title "t" .'
    with Memory(fresh_memory(tmp_path / "empty")) as empty:
        cold = repair(data, shapes, memory=empty)
    warm = repair(data, shapes, memory=memory)
    assert cold.conforms and warm.conforms and cold.removed == warm.removed
    assert [(s.n3(), o.n3()) for s, _, o in warm.removed] == [("<http://ex.org/d>", '"n"')]
    assert cold.nested_checks <= 1 and warm.nested_checks == 0 and warm.compiled_reused == 1
