"""Extraction, consolidation, the bound, provenance and reasoning over a memory with compiled fields on every kind."""

import json
from datetime import datetime, timezone

import owlready2
import pytest
from rdflib import Graph

from owl_memory import ItemSpec, Memory
from owl_memory.learning import judge, load_curriculum, shipped_curriculum
from owl_memory.learning.consolidation import consolidate, similarity
from owl_memory.learning.extraction import RunRecord, extract, lift
from owl_memory.model import AgentQuery, CallArgs, Iteration, ToolCall, sha256
from owl_memory.provenance import FAILED_RUN_ITEMS, RunInfo, provenance_graph
from owl_memory.vocab import KINDS

LIB = "http://w3id.org/owl-memory/examples/library"
QUERY = ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX lib: <http://w3id.org/owl-memory/examples/"
         "library#> SELECT ?c WHERE { ?c rdfs:subClassOf lib:Work }")


@pytest.fixture(scope="module")
def course():
    """The shipped curriculum, its first task and its ontology graph."""
    c = load_curriculum(shipped_curriculum())
    return c, c.tasks[0], Graph().parse(c.ontology_path)


def record(course, memory, answer: str, run_id: str) -> RunRecord:
    """A run record whose trajectory shows one ontology_query call (stored as a blob)."""
    c, task, g = course
    code = f"r = ontology_query({QUERY!r})\nprint(results_peek(r['handle'], 10))"
    handle = "sha256:" + sha256(run_id)
    events = (Iteration(0, "", code, "3 rows", 6), ToolCall("ontology_query", CallArgs()),
              AgentQuery("ontology_query", "ontology", QUERY, sha256(QUERY), rows=3, handle=handle),
              ToolCall("results_peek", CallArgs(keyword={"handle": handle})))
    trace = memory.blobs.put("\n".join(json.dumps(e.to_dict()) for e in events) + run_id, "trace").key
    return RunRecord(task.query, task.task_type, LIB, answer, run_id, trace, events, g)


def judged(course, answer):
    """The judgment of an answer to the first task."""
    c, task, _ = course
    return judge(task.expect, answer, ontology=c.ontology_path, task=task.query)


def test_lift_makes_task_constants_parameters():
    schema = lift(QUERY, {"http://w3id.org/owl-memory/examples/library#Work"})
    recipe = schema.to_json()
    assert recipe["where"] == [["?v0", "rdfs:subClassOf", "$p1"]]
    assert recipe["parameters"] == [{"name": "$p1", "kind": "iri"}] and "Work" not in json.dumps(recipe)
    filtered = lift("SELECT ?w WHERE { ?w <http://x/year> ?y FILTER(?y < 1900) }", set())
    assert filtered.filters == 1 and filtered.to_json()["where"] == [["?v0", "<http://x/year>", "?v1"]]
    assert lift("not sparql", set()) is None


def test_failure_yields_an_antipattern_and_success_a_procedure(course, memory):
    bad = extract(record(course, memory, "Book, Article", "r1"), judged(course, "Book, Article"))
    (anti,) = bad.items
    assert anti.kind == "AntiPattern" and anti.failure_modes == ("missing-answer-terms",)
    assert anti.applies_to == (LIB,) and anti.task_types == ("hierarchy",)
    good = extract(record(course, memory, "Book, Article, Thesis", "r2"), judged(course, "Book, Article, Thesis"))
    (proc,) = good.items
    assert proc.kind == "Procedure" and proc.action_schema == anti.action_schema
    assert proc.verification_hook.startswith("judge sparql")
    for spec in (anti, proc):  # general items never copy the task's constants or its answer
        text = json.dumps(spec.to_dict())
        assert "Work" not in text and "Thesis" not in text and "Article" not in text


def test_contradiction_is_flagged_both_ways_and_search_shows_it(course, memory):
    bad = extract(record(course, memory, "Book", "r1"), judged(course, "Book")).items
    good = extract(record(course, memory, "Book, Article, Thesis", "r2"), judged(course, "Book, Article, Thesis")).items
    first, second = consolidate(memory, bad), consolidate(memory, good)
    assert first.counts().added == 1 and second.conflicts == [[good[0].id, bad[0].id]]
    assert memory.get(bad[0].id).conflicts_with == (good[0].id,)
    assert memory.get(good[0].id).conflicts_with == (bad[0].id,)
    hits = {h.id: h for h in memory.search(task_type="hierarchy")}
    assert hits[good[0].id].conflicts_with == (bad[0].id,)
    assert consolidate(memory, good).duplicates == [good[0].id]  # the same item again is an exact duplicate


def test_narrower_contradiction_becomes_an_exception_that_refines_the_rule(memory):
    schema = {"operator": "ontology_query", "form": "select", "where": [["?v0", "rdfs:subClassOf", "$p1"]]}
    rule = ItemSpec("Procedure", "Hierarchy questions: one subclass pattern", "Use for hierarchy questions.",
                    "Run the direct subClassOf pattern.", task_types=("hierarchy",), action_schema=schema)
    consolidate(memory, [rule])
    narrow = ItemSpec("AntiPattern", "Direct subclasses miss indirect ones here", "Use on this ontology.",
                      "Here the question wants the closure.", applies_to=(LIB,), task_types=("hierarchy",),
                      failure_modes=("missing-answer-terms",), action_schema=schema)
    report = consolidate(memory, [narrow])
    (exc, general), = report.exceptions
    assert general == rule.id and memory.get(exc).scope == "exception" and memory.get(exc).refines == (rule.id,)
    assert memory.get(rule.id).exceptions == (exc,)
    stated = memory.search(task_type="hierarchy", ontology=LIB, failure_mode="missing-answer-terms")
    assert stated[0].id == exc  # its narrower applicability holds: it comes first
    assert [h.id for h in memory.search(task_type="hierarchy")][:2] == [rule.id, exc]  # not known to hold


def test_near_duplicates_merge_with_counters_and_both_provenance_chains(memory):
    a = ItemSpec("Principle", "Declare every prefix before querying", "Use before any SPARQL query you write.",
                 "Declare PREFIX lines.", provenance={"run": "r1", "derived_from": "sha256:" + "a" * 64})
    b = ItemSpec("Principle", "Declare every prefix before querying", "Use before every SPARQL query you write.",
                 "Always declare the PREFIX lines you use.",
                 provenance={"run": "r2", "derived_from": "sha256:" + "b" * 64})
    assert similarity(f"{a.title} {a.summary}", f"{b.title} {b.summary}") >= 0.8
    consolidate(memory, [a])
    memory.record_use(a.id, True)
    report = consolidate(memory, [b])
    assert report.merged == [[a.id, b.id]] and report.added == []
    kept, gone = memory.get(a.id), memory.get(b.id)
    assert kept.supersedes == (b.id,) and gone.archived and kept.success_count == 1
    assert [s.rsplit("/", 1)[-1] for s in kept.derived_from] == ["a" * 64]
    assert [s.rsplit("/", 1)[-1] for s in gone.derived_from] == ["b" * 64]  # both chains kept
    assert [h.id for h in memory.search("prefix")] == [a.id]
    assert similarity("declare prefixes", "count rows") == 0.0


def test_a_strictly_better_near_duplicate_supersedes_an_item_that_never_succeeded(memory):
    old = ItemSpec("Principle", "Declare every prefix before querying", "Use before any SPARQL query you write.",
                   "Declare PREFIX lines.", confidence=0.5)
    sure = ItemSpec("Principle", "Declare every prefix before querying", "Use before every SPARQL query you write.",
                    "Always declare the PREFIX lines you use.", confidence=0.7)
    consolidate(memory, [old])
    memory.record_use(old.id, False)
    report = consolidate(memory, [sure])
    assert report.merged == [[old.id, sure.id]]
    assert memory.get(old.id).archived and not memory.get(sure.id).archived  # the new, more confident item won
    assert memory.get(sure.id).failure_count == 1  # counters move with it
    assert [h.id for h in memory.search("prefix")] == [sure.id]
    proven = ItemSpec("Principle", "Read every result row before answering", "Use after any query that answers.",
                      "Page through the rows.", confidence=0.5)
    surer = ItemSpec("Principle", "Read every result row before answering", "Use after every query that answers.",
                     "Page through all the rows.", confidence=0.9)
    consolidate(memory, [proven])
    memory.record_use(proven.id, True)
    assert consolidate(memory, [surer]).merged == [[proven.id, surer.id]]
    assert memory.get(surer.id).archived and not memory.get(proven.id).archived  # a success is never superseded


def test_the_bound_archives_the_least_useful_on_every_write(tmp_path, fresh_memory):
    with Memory(fresh_memory(tmp_path / "m"), max_items=3) as m:
        ids = [m.add(ItemSpec("Principle", f"Rule number {i}", "Use when testing.", f"c{i}")) for i in range(3)]
        m.record_use(ids[0], True)
        m.record_use(ids[1], False)  # the least useful: one failure
        m.record_use(ids[2], True)
        report = consolidate(m, [ItemSpec("Principle", "Rule number 3", "Use when testing.", "c3")])
        assert report.archived == [ids[1]] and m.get(ids[1]).archived
        m.add_many([ItemSpec("Principle", "Rule number 4", "Use when testing.", "c4")])
        assert len(m.search(k=50)) == 3 and len(m) == 5  # archived, never deleted
    with Memory(tmp_path / "m") as m:  # the bound is persisted
        assert m.max_items == 3
        m.restore(ids[1])  # restoring is a write too: the least useful other item makes room
        assert not m.get(ids[1]).archived and len(m.search(k=50)) == 3 and len(m.forgotten) == 1
    from owl_memory.store.copy import copy_memory

    small = fresh_memory(tmp_path / "small")
    with Memory(tmp_path / "m") as src, Memory(small, max_items=2) as dst:  # a copy is a write too
        assert len(copy_memory(src, dst).archived) == 1 and len(dst.search(k=50)) == 2 and len(dst) == 5


def test_malformed_items_are_rejected_without_corrupting_memory(memory):
    bad = ItemSpec("Procedure", "this title has far too many words to pass the shape check ok", "Use.", "x")
    good = ItemSpec("Procedure", "A fine title", "Use when fine.", "y")
    report = consolidate(memory, [bad, good])
    assert len(report.rejected) == 1 and "title" in report.rejected[0] and report.added == [good.id]
    assert memory.validate().conforms and len(memory) == 1


def test_provenance_answers_which_items_failed_runs_used_and_validates(course, memory, tmp_path):
    proc = extract(record(course, memory, "Book, Article, Thesis", "r1"), judged(course, "Book, Article, Thesis"))
    consolidate(memory, proc.items)
    item = proc.items[0].id
    now = datetime.now(timezone.utc)
    for run_id, answer in (("r1", "Book, Article, Thesis"), ("r2", "Book")):
        info = RunInfo(run_id, "dummy", "A2", now, now, LIB, "lib-hierarchy-01", "task", proc.items[0].provenance[
            "derived_from"], ((item, 1, 2.5),) if run_id == "r2" else ())
        memory.write_graph(provenance_graph(info, judged(course, answer)))
    out = memory.export(tmp_path / "m.ttl")
    g = Graph().parse(out)
    rows = list(g.query(FAILED_RUN_ITEMS))
    assert [(str(r.item).rsplit("/", 1)[-1], str(r.run).rsplit("/", 1)[-1], int(r.rank)) for r in rows] == \
        [(item, "r2", 1)]
    assert memory.validate().conforms
    traced = g.query("PREFIX prov: <http://www.w3.org/ns/prov#> SELECT ?run ?trace WHERE { ?i prov:wasGeneratedBy "
                     "?run ; prov:wasDerivedFrom ?trace . ?trace prov:wasGeneratedBy ?run }", initBindings={
                         "i": __import__("rdflib").URIRef(f"http://w3id.org/owl-memory/item/{item}")})
    assert len(list(traced)) == 1  # the item traces back to its run and the trajectory that run generated


@pytest.mark.slow
def test_hermit_finds_a_memory_with_compiled_fields_on_every_kind_consistent(tmp_path, fresh_memory):
    with Memory(fresh_memory(tmp_path / "m")) as m:
        ep = m.add(ItemSpec("Episode", "One run", "Use as grounding.", "ep", provenance={"run": "r1"}))
        for kind in KINDS:
            if kind != "Episode":
                m.add(ItemSpec(kind, f"A {kind} item", "Use when testing.", f"c {kind}", grounded_by=(ep,),
                               signature="sh:MinCountConstraintComponent|p|iri", action_schema={"operator": "x"},
                               verification_hook="ASK { ?s ?p ?o }"))
        m.export(tmp_path / "m.ttl")
    Graph().parse(tmp_path / "m.ttl").serialize(tmp_path / "m.nt", format="nt")
    world = owlready2.World()
    world.get_ontology(f"file://{tmp_path}/m.nt").load()
    owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)  # raises when inconsistent
    assert len(list(world.inconsistent_classes())) == 0


def test_merge_sums_both_items_counters_into_the_survivor(memory):
    from owl_memory.learning.consolidation import merge

    keep = memory.add(ItemSpec("Principle", "Declare every prefix", "Use before a query.", "keep"))
    drop = memory.add(ItemSpec("Principle", "Declare all prefixes", "Use before a query.", "drop"))
    for i, outcome in ((keep, True), (drop, True), (drop, False), (drop, None)):
        memory.record_use(i, outcome)
    merge(memory, keep, drop)
    kept, gone = memory.get(keep), memory.get(drop)
    assert (kept.use_count, kept.success_count, kept.failure_count) == (4, 2, 1)
    assert gone.archived and kept.supersedes == (drop,)
