"""Transfer between shape forms: what a memory learned on property shapes repairs node shapes with fewer pySHACL runs;
the component-and-role back-off key, and a back-off decision that fails falling back to the library."""

from rdflib import Graph, Namespace
from rdflib.collection import Collection

from owl_memory import ItemSpec, Memory
from owl_memory.adapters.pyshacl import counting
from owl_memory.repair import repair
from owl_memory.repair.plans import shape_key
from owl_memory.repair.verification import abstract_signatures, verify
from owl_memory.vocab import SH

EX = Namespace("http://ex.org/")
HEAD = """@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
"""
AND_PROPERTY = HEAD + """ex:OrderShape a sh:NodeShape ; sh:targetClass ex:Order ; sh:property [ sh:path ex:address ;
    sh:and ( [ sh:property [ sh:path ex:street ; sh:minCount 1 ] ] [ sh:property [ sh:path ex:city ; sh:minCount 1 ] ] )
] ."""
AND_NODE = HEAD + """ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person ;
    sh:and ( [ sh:property [ sh:path ex:name ; sh:minCount 1 ] ]
             [ sh:property [ sh:path ex:email ; sh:minCount 1 ] ] ) ."""
EQUALS_PROPERTY = HEAD + """ex:DocShape a sh:NodeShape ; sh:targetClass ex:Doc ;
    sh:property [ sh:path ex:title ; sh:equals ex:label ] ."""
EQUALS_NODE = HEAD + "ex:SelfShape a sh:NodeShape ; sh:targetNode ex:r ; sh:equals ex:self ."
RECT = HEAD + """ex:RectShape a sh:NodeShape ; sh:targetClass ex:Rect ; sh:or (
    [ sh:property [ sh:path ex:height ; sh:minCount 1 ] ; sh:property [ sh:path ex:width ; sh:minCount 1 ] ]
    [ sh:property [ sh:path ex:area ; sh:minCount 1 ] ] ) ."""


def _graph(text: str) -> Graph:
    """Parse Turtle text with the test prefixes."""
    return Graph().parse(data=HEAD + text, format="turtle")


def _runs(data: str, shapes: str, memory) -> tuple:
    """(repair result, every pySHACL run it made) for one repair with `memory`."""
    with counting() as count:
        res = repair(_graph(data), shapes, memory=memory)
    return res, count.runs


def test_an_and_plan_learned_on_a_property_shape_repairs_an_unseen_node_shape_with_fewer_runs(tmp_path, fresh_memory):
    """sh:and over members that require values: trained on a property shape (an address missing its city), a memory
    repairs a node shape with other members (a person missing an email) by the re-derived plan, with no trial checks
    and nothing new to store: 2 pySHACL runs against the empty memory's 8; both conform."""
    case = "ex:p a ex:Person ; ex:name 'P' ."
    with Memory(fresh_memory(tmp_path / "empty")) as empty, Memory(fresh_memory(tmp_path / "trained")) as trained:
        learned = repair(_graph("ex:o a ex:Order ; ex:address ex:a . ex:a ex:street 'x' ."), AND_PROPERTY,
                         memory=trained)
        assert learned.conforms and learned.compiled_new
        cold, cold_runs = _runs(case, AND_NODE, empty)
        warm, warm_runs = _runs(case, AND_NODE, trained)
    assert cold.conforms and warm.conforms
    assert {t[1] for t in cold.added} == {t[1] for t in warm.added} == {EX.email}
    assert cold_runs <= 8 and cold.verify_iterations == 2 and cold.nested_checks <= 4  # runs: a cost, bounded
    assert (warm_runs, warm.verify_iterations, warm.nested_checks) == (2, 2, 0)
    assert warm.operators_applied[0].memory_key == "abstract:AndConstraintComponent|any|Node|-"
    assert warm.compiled_new == []


def test_the_back_off_key_carries_a_decision_to_another_kind_of_value(tmp_path, fresh_memory):
    """sh:equals learned on literal values of a property shape; a node shape's sh:equals judges an IRI (no key with
    a value kind matches): the component-and-role back-off finds the same strategy, so the trained memory stores
    nothing new: 2 runs against the empty memory's 4 (2 rounds + the item check of storing what it learned, a
    pySHACL run for each group of its nodes the same memory shapes target: 2)."""
    learned = "ex:d a ex:Doc ; ex:title 'A' ; ex:label 'A', 'B' ."
    case = "ex:r a ex:Thing ; ex:self ex:other ."
    v = verify(_graph(case), _graph(EQUALS_NODE)).violations[0]
    keys = abstract_signatures(v, _graph(EQUALS_NODE))
    assert keys[-1] == "abstract:EqualsConstraintComponent|any|any|-" and "Node" in keys[0]
    with Memory(fresh_memory(tmp_path / "empty")) as empty, Memory(fresh_memory(tmp_path / "trained")) as trained:
        assert repair(_graph(learned), EQUALS_PROPERTY, memory=trained).conforms
        assert not trained.by_signature(keys[1]) and trained.by_signature(keys[-1])
        cold, cold_runs = _runs(case, EQUALS_NODE, empty)
        warm, warm_runs = _runs(case, EQUALS_NODE, trained)
    assert cold.conforms and warm.conforms and warm.added == cold.added == {(EX.r, EX.self, EX.r)}
    assert cold_runs <= 4 and warm_runs == 2
    assert warm.operators_applied[0].memory_key == keys[-1] and warm.compiled_new == [] and cold.compiled_new


def test_a_failing_back_off_decision_is_demoted_and_the_library_repairs(memory):
    """The only decision the memory holds for an sh:or is under the back-off key, and its plan misses a constraint:
    it is replayed first (no trial checks), fails verification, is undone and demoted; the library then repairs in
    the next round, and the result conforms."""
    shapes = _graph(RECT)
    branch0 = list(Collection(shapes, shapes.value(EX.RectShape, SH["or"])))[0]
    width = next(ps for ps in shapes.objects(branch0, SH.property) if (ps, SH.path, EX.width) in shapes)
    plan = {"kind": "descend", "shape": shape_key(shapes, branch0),
            "steps": [[shape_key(shapes, width), "minCount.add_values", "none", None]]}  # forgets ex:height
    data = _graph("ex:r a ex:Rect .")
    key = abstract_signatures(verify(data, shapes).violations[0], shapes)[-1]
    assert key == "abstract:OrConstraintComponent|any|any|-"
    bad = memory.add(ItemSpec("RepairOperator", "Fill only the width", "A back-off plan that misses a constraint.",
                              "width only", signature=key, task_types=("shacl-repair",),
                              verification_hook="http://ex.org/RectShape",
                              action_schema={"operator": "or.satisfy_branch", "choice": {"branch": 0, "plan": plan}}))
    res = repair(data, shapes, memory=memory)
    assert res.conforms and res.verify_iterations <= 4 and res.nested_checks > 0  # find, bad, undone, good
    assert memory.get(bad).failure_count == 1 and memory.get(bad).success_count == 0
    assert [(o.operator, o.from_memory) for o in res.operators_applied] == [("or.satisfy_branch", False)]


COUNTS = HEAD + """ex:ItemShape a sh:NodeShape ; sh:targetClass ex:Item ;
    sh:property [ sh:path ex:code ; sh:minCount 1 ] ; sh:property [ sh:path ex:tag ; sh:maxCount 1 ] ."""
AND_COUNTS = HEAD + """ex:Base a sh:NodeShape ; sh:property [ sh:path ex:label ; sh:minCount 1 ] .
ex:BoxShape a sh:NodeShape ; sh:targetClass ex:Box ;
    sh:and ( ex:Base [ sh:property [ sh:path ex:label ; sh:maxCount 1 ] ] ) ."""


def test_recording_a_use_of_a_reused_operator_costs_no_pyshacl_run_and_the_memory_still_validates(memory):
    """Issue 11, Deliver 7: a counter update is not a shape change. A rerun that reuses its compiled operator costs
    its verify rounds and nothing more (no item check), the operator's success count rises, and every item of the
    memory still conforms to the memory's shapes."""
    data = "ex:d a ex:Doc ; ex:title 'A' ; ex:label 'A', 'B' ."
    assert repair(_graph(data), EQUALS_PROPERTY, memory=memory).compiled_new
    res, runs = _runs(data, EQUALS_PROPERTY, memory)
    assert res.conforms and res.compiled_reused == 1 and res.compiled_new == []
    assert runs == res.verify_iterations == 2 and res.nested_checks == 0
    op = next(o for o in memory.by_signature(res.operators_applied[0].signature) if o.success_count)
    with counting() as count:
        assert memory.record_use(op.id, True).success_count == 2
    assert count.runs == 0
    assert memory.validate().conforms


def test_a_descent_into_members_of_counts_uses_what_the_memory_learned_at_top_level_with_no_trial_check(
        tmp_path, fresh_memory):
    """sh:minCount and sh:maxCount learned at the top level (an item missing its code, one with two tags) are what an
    sh:and over members holding those counts needs: the trained memory derives the member repair from the shapes with
    no trial check (2 pySHACL runs: find, confirm); the empty memory finds the members' violations by trial checks.
    Both drop the same surplus label."""
    case = "ex:b a ex:Box ; ex:label 'x', 'y' ."
    with Memory(fresh_memory(tmp_path / "empty")) as empty, Memory(fresh_memory(tmp_path / "trained")) as trained:
        for data in ("ex:i a ex:Item ; ex:tag 't' .", "ex:j a ex:Item ; ex:code 'c' ; ex:tag 't', 'u' ."):
            assert repair(_graph(data), COUNTS, memory=trained).conforms
        cold, cold_runs = _runs(case, AND_COUNTS, empty)
        warm, warm_runs = _runs(case, AND_COUNTS, trained)
    assert cold.conforms and warm.conforms and len(warm.removed) == 1 and warm.removed == cold.removed
    assert cold.nested_checks <= 4 and warm.nested_checks == 0
    assert cold_runs <= 8 and warm_runs <= 4, "the trained run stores the new sh:and decision: one item check, 2 runs"


def test_a_member_with_a_constraint_the_memory_has_not_learned_is_still_checked(tmp_path, fresh_memory):
    """The same sh:and when the memory learned only sh:minCount (no maxCount repair seen): the member's sh:maxCount
    has no learned strategy, so the descent falls back to trial checks, as the empty memory does."""
    case = "ex:b a ex:Box ; ex:label 'x', 'y' ."
    with Memory(fresh_memory(tmp_path / "trained")) as trained:
        assert repair(_graph("ex:i a ex:Item ; ex:tag 't' ."), COUNTS, memory=trained).conforms
        warm, _ = _runs(case, AND_COUNTS, trained)
    assert warm.conforms and 0 < warm.nested_checks <= 4
