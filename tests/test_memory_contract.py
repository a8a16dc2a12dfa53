"""The memory contract, run on every backend: embedded quadstore, a real Oxigraph server on loopback and, opt-in
(OWL_MEMORY_VIRTUOSO=1, marker `virtuoso`), Virtuoso open source from the OS packages."""

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from owl_memory import ItemSpec, Memory
from owl_memory.errors import InvalidItem, UnknownItem
from owl_memory.vocab import OM, PROV

BIG = "".join(f"line {n}: bind the values, never paste them; " for n in range(200))
HOSTILE = ['"} ; DROP ALL ; INSERT DATA { <a> <b> "c" } #', "\\u0022 }", "'''\"\"\"", "<http://x> . }", "a\nb\r\tc",
           "\x00nul", "emoji 😀 and ñ", "?s ?p ?o", "# comment", "\\"]


SERVERS = {"oxigraph": "server_url", "virtuoso": "virtuoso_url"}


@pytest.fixture(params=["embedded", "oxigraph", pytest.param("virtuoso", marks=pytest.mark.virtuoso)])
def memory(request, tmp_path, fresh_memory):
    """A fresh memory on each backend, closed after the test."""
    location = fresh_memory(tmp_path / "mem") if request.param == "embedded" else \
        request.getfixturevalue(SERVERS[request.param])
    with Memory(location) as m:
        yield m


def rule(title="Bind values never paste", content=BIG, **kw) -> ItemSpec:
    """A valid Principle."""
    kw.setdefault("applies_to", ("http://purl.org/dc/terms/",))
    return ItemSpec("Principle", title, "Use when a query takes user text.", content, **kw)


def test_add_is_idempotent_by_stable_id(memory):
    i = memory.add(rule())
    assert memory.add(rule()) == i and len(memory) == 1
    assert memory.get(i).title == "Bind values never paste"


def test_hostile_strings_round_trip_exactly(memory):
    for n, text in enumerate(HOSTILE):
        clean = "".join(ch for ch in text if ch.isprintable())
        spec = ItemSpec("Principle", f"Hostile case {n}", f"Use when {clean}", text, tags=(f"tag{n}", clean[:60]),
                        signature=text, applies_to=("http://purl.org/dc/terms/",))
        i = memory.add(spec)
        got = memory.get(i)
        assert got.signature == text and got.summary == f"Use when {clean}"
        assert list(got.tags) == sorted({f"tag{n}", clean[:60]} - {""})
        assert memory.window(i, 0, 100).text == text[:100]
    assert len(memory) == len(HOSTILE)
    assert memory.validate().conforms


def test_hostile_search_text_and_filters_are_harmless(memory):
    i = memory.add(rule())
    for text in HOSTILE:
        memory.search(text)
        assert memory.search(ontology=text) == [] and memory.search(task_type=text) == []
    assert [h.id for h in memory.search(ontology="http://purl.org/dc/terms/")] == [i]


def test_get_has_metadata_never_content(memory):
    i = memory.add(rule(task_types=("Query Writing",), failure_modes=("pasted text",), tags=("sparql",),
                        provenance={"run": "run-1", "derived_from": "sha256:" + "a" * 64}))
    got = memory.get(i)
    assert got.size == len(BIG) and "content" not in got.to_dict() and BIG[:50] not in repr(got)
    assert got.task_types == ("query-writing",) and got.failure_modes == ("pasted-text",)
    assert got.runs == ("http://w3id.org/owl-memory/run/run-1",)
    assert got.archived is False and got.use_count == 0


@pytest.mark.parametrize("bad", ["nope", "0" * 16, "'; DROP", None])
def test_unknown_ids_are_unknown_item(memory, bad):
    with pytest.raises(UnknownItem):
        memory.get(bad)


def test_window_is_capped_and_exact(memory):
    i = memory.add(rule())
    w = memory.window(i, 10, 10_000)
    assert w.text == BIG[10:10 + memory.max_read] and w.size == len(BIG)
    assert memory.window(i, len(BIG) + 5, 10).text == ""


def test_payloads_with_nul_and_lone_surrogates_window_exactly(memory):
    text = "ab\x00c\ud800d😀e" * 20
    ref = memory.put_payload(text, "trace")
    for start, length in ((0, 7), (3, 5), (7, 40), (139, 10)):
        assert memory.payload_window(ref, start, length).text == text[start:start + length]
    assert memory.blobs.find(ref, "😀e", 3) == [6, 14, 22]


def test_search_filters_order_and_exceptions(memory):
    dc, prov = "http://purl.org/dc/terms/", "http://www.w3.org/ns/prov#"
    low = memory.add(rule("Low rule", "a", priority=1, task_types=("qa",)))
    high = memory.add(rule("High rule", "b", priority=5, task_types=("qa",)))
    other = memory.add(rule("Prov rule", "c", applies_to=(prov,)))
    exc = memory.add(rule("Low rule exception", "d", scope="exception", refines=low, task_types=("qa",)))
    assert [h.id for h in memory.search(ontology=dc, task_type="QA")] == [high, exc, low]
    assert [h.id for h in memory.search(ontology=prov)] == [other]
    assert memory.search(ontology=dc, kinds=["antipattern"]) == []
    assert [h.id for h in memory.search(ontology=dc, task_type="qa", k=1)] == [high]


def test_superseded_and_archived_items_leave_retrieval(memory):
    old = memory.add(rule("Old rule", "a"))
    new = memory.add(rule("New rule", "b"))
    gone = memory.add(rule("Archived rule", "c", priority=9))
    memory.supersede(old, new)
    memory.archive(gone)
    assert [h.id for h in memory.search(ontology="http://purl.org/dc/terms/")] == [new]
    assert memory.get(gone).archived is True and len(memory) == 3
    memory.restore(gone)
    assert memory.search(ontology="http://purl.org/dc/terms/")[0].id == gone


def test_conflicts_are_written_both_ways(memory):
    a, b = memory.add(rule("Rule a", "a")), memory.add(rule("Rule b", "b"))
    memory.link(a, "conflictsWith", b)
    assert memory.get(a).conflicts_with == (b,) and memory.get(b).conflicts_with == (a,)
    with pytest.raises(InvalidItem):
        memory.link(a, "dropsTable", b)


def test_record_use_counts(memory):
    i = memory.add(rule())
    memory.record_use(i, True)
    memory.record_use(i, False)
    counts = memory.record_use(i)
    assert counts.to_dict() == {"use_count": 3, "success_count": 1, "failure_count": 1}
    assert memory.get(i).counts == counts
    assert memory.validate([i]).conforms


def test_write_graph_adds_provenance_and_refuses_items(memory):
    run = URIRef("http://w3id.org/owl-memory/run/r9")
    g = Graph()
    g.add((run, RDF.type, OM.Run))
    g.add((run, PROV.startedAtTime, Literal("2026-01-01T00:00:00Z", datatype=XSD.dateTime)))  # RunShape: typed
    memory.write_graph(g)
    assert (run, RDF.type, OM.Run) in memory.to_graph()
    i = memory.add(rule())
    bad = Graph()
    bad.add((URIRef(f"http://w3id.org/owl-memory/item/{i}"), OM.title, Literal("x")))
    with pytest.raises(InvalidItem):
        memory.write_graph(bad)


def test_invalid_item_stores_nothing(memory):
    with pytest.raises(InvalidItem):
        memory.add(rule(confidence=3.0))
    assert len(memory) == 0


def test_by_signature_finds_live_operators(memory):
    op = ItemSpec("RepairOperator", "Fix datatype", "Use when a literal has the wrong datatype.", "x",
                  signature="sh:DatatypeConstraintComponent|ex:p|literal", action_schema={"op": "cast"},
                  verification_hook="ASK { ?s ?p ?o }")
    i = memory.add(op)
    assert [it.id for it in memory.by_signature(op.signature)] == [i]
    memory.archive(i)
    assert memory.by_signature(op.signature) == []
