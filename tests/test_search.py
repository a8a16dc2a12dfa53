"""Retrieval contract: ids + metadata only, applicability filters, determinism, exceptions, hostile text."""

import pytest

from owl_memory import ItemSpec, Memory

PROV_O = "http://www.w3.org/ns/prov#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
KEYS = {"id", "kind", "title", "summary", "applies_to", "priority", "confidence", "score", "conflicts_with"}
SECRET = "BAIT-7f3a-payload-never-returned "


def fill(m: Memory) -> dict:
    """A small memory over two ontologies, three task types and three kinds; returns ids by name."""
    ids = {}
    specs = [
        ("prov_rule", "Principle", "Use prov:wasDerivedFrom for lineage", PROV_O, "modelling", 5, 0.9),
        ("prov_proc", "Procedure", "Answer lineage questions with property paths", PROV_O, "cq-answering", 1, 0.8),
        ("prov_anti", "AntiPattern", "Never query lineage without a LIMIT", PROV_O, "cq-answering", 2, 0.6),
        ("skos_rule", "Principle", "Use skos:broader for lineage of concepts", SKOS, "modelling", 3, 0.7),
        ("skos_proc", "Procedure", "Walk skos:narrower transitively", SKOS, "cq-answering", 0, 0.5),
    ]
    for name, kind, title, onto, task, prio, conf in specs:
        ids[name] = m.add(ItemSpec(kind, title, f"Use when {task} over {onto}.", SECRET * 50 + name, applies_to=[onto],
                          task_types=[task], failure_modes=["missing-limit"] if kind == "AntiPattern" else [],
                          priority=prio, confidence=conf))
    return ids


def test_results_carry_exactly_the_contract_keys_and_no_payload(memory):
    fill(memory)
    hits = memory.search("lineage")
    assert hits and all(set(h.to_dict()) == KEYS for h in hits)
    assert SECRET.strip() not in repr(hits)
    assert len({h.id for h in hits}) == len(hits)


def test_applicability_filters(memory):
    ids = fill(memory)
    assert {h.id for h in memory.search(ontology=PROV_O, k=10)} == {ids["prov_rule"], ids["prov_proc"],
                                                                       ids["prov_anti"]}
    assert [h.id for h in memory.search(ontology=PROV_O, task_type="cq-answering", kinds=["Procedure"])] == [
        ids["prov_proc"]]
    assert [h.id for h in memory.search(failure_mode="missing-limit")] == [ids["prov_anti"]]
    assert {h.kind for h in memory.search(kinds=["principle", "anti_pattern"], k=10)} == {"Principle",
                                                                                           "AntiPattern"}


def test_unknown_filters_return_nothing(memory):
    fill(memory)
    assert memory.search(ontology="http://never.seen/onto#") == []
    assert memory.search(task_type="never-seen") == []
    assert memory.search("lineage", ontology="urn:x") == []


def test_ranking_text_then_priority_then_confidence_then_id(memory):
    ids = fill(memory)
    no_text = memory.search(ontology=PROV_O, k=10)
    assert [h.id for h in no_text] == [ids["prov_rule"], ids["prov_anti"], ids["prov_proc"]]
    hits = memory.search("skos narrower transitively", k=10)
    assert hits[0].id == ids["skos_proc"] and hits[0].score > hits[-1].score


def test_k_bounds(memory):
    fill(memory)
    assert len(memory.search(k=2)) == 2
    assert memory.search(k=0) == []
    assert len(memory.search(k=10 ** 6)) == 5


def test_deterministic_across_reopen(tmp_path, fresh_memory):
    with Memory(fresh_memory(tmp_path / "m")) as m:
        fill(m)
        queries = [dict(text="lineage"), dict(ontology=PROV_O), dict(task_type="cq-answering", k=10),
                   dict(text="use skos", kinds=["Principle"])]
        first = [m.search(**q) for q in queries]
        assert first == [m.search(**q) for q in queries]
    with Memory(tmp_path / "m") as m:
        assert first == [m.search(**q) for q in queries]


def test_exception_ranks_above_the_rule_it_refines(memory):
    ids = fill(memory)
    exc = memory.add(ItemSpec("Principle", "Lineage of bundles uses prov:hadMember", "Use when the entity is a bundle.",
                     "x", applies_to=[PROV_O], task_types=["modelling"], scope="exception",
                     refines=ids["prov_rule"], priority=0, confidence=0.1))
    order = [h.id for h in memory.search(ontology=PROV_O, k=10)]
    assert order.index(exc) == order.index(ids["prov_rule"]) - 1
    assert [h.id for h in memory.search(ontology=PROV_O, k=1)] == [exc]
    assert memory.get(ids["prov_rule"]).exceptions == (exc,)


def test_superseded_item_is_never_returned(memory):
    ids = fill(memory)
    newer = memory.add(ItemSpec("Principle", "Use prov:wasDerivedFrom or prov:wasRevisionOf",
                                "Use when modelling lineage.",
                       "y", applies_to=[PROV_O], task_types=["modelling"], priority=5, confidence=0.9))
    memory.supersede(ids["prov_rule"], newer)
    for q in (dict(), dict(text="lineage wasDerivedFrom"), dict(ontology=PROV_O, k=50), dict(kinds=["Principle"])):
        assert ids["prov_rule"] not in {h.id for h in memory.search(**q)}


HOSTILE = ['"', "'", '"; DROP TABLE objs; --', "} UNION { ?s ?p ?o }", "?x", "<http://evil.org/x>",
           "\x00", "a\x00b", "NEAR(a b)", "title:lineage", "lineage*", "^^", "A" * 5000, "lineage " * 700,
           "\\u0022) }", "'''", '"""', "-- comment", "\n\r\t", "🙂 lineage"]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_is_harmless(memory, text):
    ids = fill(memory)
    hits = memory.search(text, k=10)
    assert all(set(h.to_dict()) == KEYS for h in hits)
    assert memory.search(ontology=text) == [] and memory.search(task_type=text) == []
    assert memory.search(failure_mode=text, kinds=["AntiPattern"]) == []
    assert len(memory) == 5 and memory.get(ids["prov_rule"]).title


def test_items_with_all_the_words_rank_first_then_items_with_some(memory):
    both = memory.add(ItemSpec("Principle", "Close the shape", "Use when a node shape must be closed.", "a"))
    one = memory.add(ItemSpec("Principle", "Shape shape shape", "Use when shape shape shape.", "b"))
    neither = memory.add(ItemSpec("Principle", "Unrelated advice", "Use when nothing else applies.", "c"))
    ids = [h.id for h in memory.search("closed shape", k=10)]
    assert ids[:2] == [both, one] and neither not in ids


def test_filters_combine_with_text(memory):
    ids = fill(memory)
    hits = memory.search("lineage", ontology=SKOS, kinds=["Principle"])
    assert [h.id for h in hits] == [ids["skos_rule"]]
    assert memory.search("lineage", ontology=SKOS, kinds=["AntiPattern"]) == []


def test_coordination_levels_all_then_all_but_one_then_any(memory):
    three = memory.add(ItemSpec("Procedure", "Repair closed node shapes", "Use when repairing.", "a"))
    two = memory.add(ItemSpec("Procedure", "Node shapes overview", "Use when reading.", "b"))
    one = memory.add(ItemSpec("Procedure", "Closed world notes", "Use when reading.", "c"))
    assert [h.id for h in memory.search("closed node shapes", k=10)] == [three, two, one]


def test_a_score_has_the_scale_the_reference_documents(tmp_path, fresh_memory):
    """docs/reference.md, "What a score means": FTS5's bm25, so a word in half the items or more weighs 1e-6."""
    with Memory(fresh_memory(tmp_path / "m")) as m:
        only = m.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "x"))
        assert [(h.id, h.score) for h in m.search("bind values never paste")] == [(only, 4e-06)]
        assert [h.score for h in m.search()] == [0.0]
        m.add(ItemSpec("Principle", "Limit every query", "Use when a query may return many rows.", "y"))
        m.add(ItemSpec("Principle", "Declare prefixes first", "Use when writing SPARQL.", "z"))
        assert 0.5 < m.search("bind values")[0].score < 2  # among items that lack the words: about 1
