"""The construction workspace: versions and deltas as handles, exact undo."""

import json

import pytest
from rdflib import BNode, Graph, Literal, Namespace, URIRef

from owl_memory.construction.workspace import SUMMARY_CHARS, Workspace, graph_text, parse_lines
from owl_memory.errors import InvalidItem, UnknownItem
from owl_memory.store.blobs import BlobStore

EX = Namespace("http://example.org/")
SEED = """@prefix ex: <http://example.org/> .
ex:a ex:p ex:b ; ex:label "A \\"quoted\\"\\nline"@en ; ex:node [ ex:q 1 ] .
"""


@pytest.fixture
def ws(tmp_path):
    """A workspace on a plain blob store, seeded with a tiny graph holding a blank node."""
    store = BlobStore(tmp_path / "blobs.sqlite3")
    yield Workspace(store, SEED, "@prefix sh: <http://www.w3.org/ns/shacl#> .")
    store.close()


def test_versions_and_deltas_are_handles(ws):
    assert ws.head.kind == "ontology" and len(ws.versions) == 1
    delta = ws.apply([(EX.c, EX.p, EX.d)], [(EX.a, EX.p, EX.b)], note="swap")
    assert delta.ref.kind == "delta" and (delta.added, delta.removed) == (1, 1)
    assert delta.parent == ws.versions[0].key and delta.child == ws.head.key
    assert "+1 -1 triples (swap)" in delta.summary and "<http://example.org/c>" in delta.summary
    added, removed = ws.delta_triples(delta)
    assert set(added) == {(EX.c, EX.p, EX.d)} and set(removed) == {(EX.a, EX.p, EX.b)}
    assert "A \\\"quoted" not in repr(ws.head) and "size=" in repr(ws.head)


def test_no_change_makes_no_version(ws):
    assert ws.apply([(EX.a, EX.p, EX.b)]) is None
    assert len(ws.versions) == 1


def test_undo_restores_the_exact_graph_blank_nodes_included(ws):
    v0 = set(ws.working)
    ws.apply([(EX.x, EX.p, Literal("x"))])
    v1 = set(ws.working)
    ws.apply([(BNode("fresh"), EX.p, EX.x)], [t for t in ws.working if t[1] == EX.node])
    assert set(ws.working) != v1
    ws.undo(1)
    assert set(ws.working) == v1
    ws.undo(ws.versions[0])
    assert set(ws.working) == v0 and graph_text(ws.working) == graph_text(ws.base)
    assert any(isinstance(s, BNode) for s, _, _ in ws.working)
    assert len(ws.versions) == 5 and ws.head.key == ws.versions[0].key


def test_undo_by_key_and_bad_versions(ws):
    ws.apply([(EX.x, EX.p, EX.y)])
    ws.undo(ws.versions[0].key)
    assert (EX.x, EX.p, EX.y) not in ws.working
    with pytest.raises(UnknownItem):
        ws.undo(42)
    with pytest.raises(InvalidItem):
        ws.undo(ws.deltas[0].ref.key)
    with pytest.raises(UnknownItem):
        ws.undo("sha256:" + "0" * 64)


def test_version_text_is_canonical(ws):
    g = Graph().parse(data=SEED, format="turtle")
    h = parse_lines(graph_text(g).splitlines())
    assert set(g) == set(h) and graph_text(g) == graph_text(h)


def test_base_is_never_modified(ws):
    before = set(ws.base)
    ws.apply([(EX.z, EX.p, EX.z)], list(ws.working))
    assert set(ws.base) == before and len(ws.working) == 1
    assert ws.changed_nodes() >= {EX.z, EX.a}


def test_summary_is_capped(ws):
    many = [(URIRef(f"http://example.org/{'long' * 20}{i}"), EX.p, EX.o) for i in range(50)]
    delta = ws.apply(many)
    assert len(delta.summary) <= SUMMARY_CHARS and delta.added == 50
    payload = json.loads(ws.blobs.load(delta.ref))
    assert len(payload["added"]) == 50 and payload["summary"] == delta.summary


def test_workspace_on_a_memory(memory):
    ws = Workspace(memory, SEED)
    ws.apply([(EX.m, EX.p, EX.n)])
    assert memory.blobs.ref(ws.head).kind == "ontology"
    assert len(ws.shapes) == 0
