"""Learning-loop store primitives: link, archive / restore, record_use, payloads, write_graph."""

import pytest
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from owl_memory import InvalidItem, ItemSpec, UnknownItem
from owl_memory.vocab import ITEM, OM, PROV, RUN

PROV_O = "http://www.w3.org/ns/prov#"


def two(memory):
    """Two stored Principles about PROV-O."""
    a = memory.add(ItemSpec("Principle", "Prefer wasDerivedFrom", "Use when modelling lineage.", "a",
                            applies_to=[PROV_O], priority=2))
    b = memory.add(ItemSpec("Principle", "Prefer wasRevisionOf", "Use when modelling versions.", "b",
                            applies_to=[PROV_O], priority=1))
    return a, b


def test_conflicts_are_written_both_ways_and_shown_in_get_and_search(memory):
    a, b = two(memory)
    memory.link(a, "conflictsWith", b)
    assert memory.get(a).conflicts_with == (b,) and memory.get(b).conflicts_with == (a,)
    assert {h.id: h.conflicts_with for h in memory.search(ontology=PROV_O)} == {a: (b,), b: (a,)}
    assert memory.validate().conforms


def test_an_exception_cannot_be_linked_to_a_second_rule(memory):
    a, b = two(memory)
    exc = memory.add(ItemSpec("Principle", "Bundles use hadMember", "Use when the entity is a bundle.", "c",
                              applies_to=[PROV_O], scope="exception", refines=b, priority=0))
    with pytest.raises(InvalidItem, match="refines: at most one"):
        memory.link(exc, "refines", a)
    assert memory.get(exc).refines == (b,) and [h.id for h in memory.search(ontology=PROV_O)] == [a, exc, b]


def test_bad_links_are_refused_and_change_nothing(memory):
    a, b = two(memory)
    with pytest.raises(InvalidItem, match="unknown relation"):
        memory.link(a, "likes", b)
    with pytest.raises(UnknownItem):
        memory.link(a, "refines", "0123456789abcdef")
    with pytest.raises(InvalidItem, match="itself"):
        memory.link(a, "conflictsWith", a)
    ep = memory.add(ItemSpec("Episode", "One run", "Records a run.", "t", provenance={"run": "r1"}))
    memory.link(a, "groundedByEpisode", ep)
    with pytest.raises(InvalidItem, match="groundedByEpisode"):
        memory.link(a, "groundedByEpisode", b)  # b is no Episode: the shapes refuse it, nothing is kept
    assert memory.get(a).grounded_by == (ep,)


def test_archive_takes_an_item_out_of_retrieval_and_restore_brings_it_back(memory):
    a, b = two(memory)
    memory.archive(a)
    assert [h.id for h in memory.search(ontology=PROV_O)] == [b]
    assert memory.get(a).archived is True and len(memory) == 2 and memory.validate().conforms
    memory.restore(a)
    assert [h.id for h in memory.search(ontology=PROV_O)] == [a, b] and memory.get(a).archived is False


def test_archived_operators_are_not_found_by_signature(memory):
    op = memory.add(ItemSpec("RepairOperator", "Add the type", "Use for sh:class.", "x", signature="Class|a|b",
                             action_schema={"operator": "add_type"}, verification_hook="ASK {}"))
    assert [o.id for o in memory.by_signature("Class|a|b")] == [op]
    memory.archive(op)
    assert memory.by_signature("Class|a|b") == []


def test_record_use_counts_typed_and_leaves_the_item_valid(memory):
    a, _ = two(memory)
    assert memory.record_use(a, True).to_dict() == {"use_count": 1, "success_count": 1, "failure_count": 0}
    assert memory.record_use(a, False).to_dict() == {"use_count": 2, "success_count": 1, "failure_count": 1}
    assert memory.record_use(a).to_dict() == {"use_count": 3, "success_count": 1, "failure_count": 1}
    g = memory.to_graph()
    assert g.value(ITEM[a], OM.useCount) == Literal(3, datatype=XSD.nonNegativeInteger)
    assert memory.validate().conforms
    with pytest.raises(UnknownItem):
        memory.record_use("0123456789abcdef")


def test_payloads_are_stored_and_read_in_windows(memory):
    ref = memory.put_payload("x" * 2000, "trace")
    w = memory.payload_window(ref, 100, 5000)
    assert w.start == 100 and len(w.text) == memory.max_read and w.size == 2000


def test_write_graph_adds_validated_provenance_and_refuses_item_edits(memory):
    a, _ = two(memory)
    g = Graph()
    run = RUN["r-7"]
    g.add((run, RDF.type, OM.Run))
    g.add((run, PROV.used, ITEM[a]))
    memory.write_graph(g)
    assert (run, PROV.used, ITEM[a]) in memory.to_graph()
    bad = Graph()
    bad.add((ITEM[a], OM.priority, Literal(9)))
    with pytest.raises(InvalidItem, match="does not change items"):
        memory.write_graph(bad)
    blank = Graph()
    blank.add((URIRef("http://ex.org/j"), PROV.wasAssociatedWith, BNode()))
    with pytest.raises(InvalidItem, match="blank nodes"):
        memory.write_graph(blank)
    assert memory.get(a).priority == 2
