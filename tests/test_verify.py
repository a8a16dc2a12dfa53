"""verify(): compact summaries, stable signatures, capped focus nodes, report handles, focus-scoped re-verify."""

import pytest
from rdflib import BNode, Graph, Namespace
from rdflib.namespace import RDFS

from owl_memory.errors import ConfigError, LoadError
from owl_memory.repair.verification import delta_focus, focus_is_sound, path_text, verify
from owl_memory.store.blobs import BlobStore

EX = Namespace("http://ex.org/")
HEAD = """@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
SHAPES = HEAD + """ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person ;
    sh:property [ sh:path ex:age ; sh:datatype xsd:integer ; sh:maxCount 1 ] ;
    sh:property [ sh:path ex:name ; sh:minCount 1 ] .
"""
DATA = HEAD + """ex:p1 a ex:Person ; ex:name "Ann" ; ex:age 30 .
ex:p2 a ex:Person ; ex:age "old" .
ex:p3 a ex:Person ; ex:name "Bo" ; ex:age 1, 2 .
"""


def test_summary_counts_and_signatures():
    r = verify(DATA, SHAPES)
    assert not r.conforms and r.violation_count == 3 and r.scope == "full"
    assert r.signatures == {
        "DatatypeConstraintComponent|_|<http://ex.org/age>|Literal:plain": 1,
        "MaxCountConstraintComponent|_|<http://ex.org/age>|none": 1,
        "MinCountConstraintComponent|_|<http://ex.org/name>|none": 1,
    }
    assert r.focus_nodes == ["http://ex.org/p2", "http://ex.org/p3"]
    assert {v.message != "" for v in r.violations} == {True}
    assert r.to_dict()["report_ref"] is None


def test_conforming_graph():
    r = verify(HEAD + 'ex:p1 a ex:Person ; ex:name "Ann" .', SHAPES)
    assert r.conforms and r.violation_count == 0 and r.signatures == {} and r.focus_nodes == []


def test_signatures_have_no_blank_node_ids_and_are_stable():
    a = verify(DATA, SHAPES).signatures
    b = verify(Graph().parse(data=DATA, format="turtle"), Graph().parse(data=SHAPES, format="turtle")).signatures
    assert a == b
    assert not any("_:" in s or "/.well-known/genid" in s for s in a)


def test_focus_nodes_are_capped():
    data = HEAD + "\n".join(f"ex:x{i} a ex:Person ." for i in range(30))
    r = verify(data, SHAPES, max_focus=5)
    assert r.violation_count == 30 and len(r.focus_nodes) == 5


def test_report_goes_to_blob_store(tmp_path):
    store = BlobStore(tmp_path / "blobs.sqlite3", max_read=64)
    r = verify(DATA, SHAPES, blobs=store)
    assert r.report_ref.kind == "report" and r.report_ref.size > 64
    assert len(store.read(r.report_ref).text) == 64
    assert "ValidationReport" in store.load(r.report_ref)
    assert "ValidationReport" not in repr(r.report_ref)
    store.close()


def test_focus_scope_when_sound_full_otherwise():
    r = verify(DATA, SHAPES, focus={EX.p2})
    assert r.scope == "focus" and r.focus_nodes == ["http://ex.org/p2"]
    nested = SHAPES + "ex:PersonShape sh:property [ sh:path ex:knows ; sh:node ex:PersonShape ] ."
    assert verify(DATA, nested, focus={EX.p2}).scope == "full"
    assert verify(DATA, SHAPES, focus={BNode()}).scope == "full"
    assert verify(DATA, SHAPES, focus=set()).scope == "full"


def test_focus_verify_agrees_with_full_after_a_delta():
    g = Graph().parse(data=DATA, format="turtle")
    shapes = Graph().parse(data=SHAPES, format="turtle")
    before = verify(g, shapes)
    added = {(EX.p2, EX.name, EX.someName)}
    for t in added:
        g.add(t)
    near = delta_focus(g, added, set()) | {EX.p2}
    scoped, full = verify(g, shapes, focus=near), verify(g, shapes)
    kept = [v for v in before.violations if v.focus not in near]
    assert scoped.scope == "focus"
    assert sorted(v.signature for v in kept + scoped.violations) == sorted(v.signature for v in full.violations)


def test_delta_touching_class_hierarchy_needs_full_run():
    g = Graph()
    assert delta_focus(g, {(EX.A, RDFS.subClassOf, EX.B)}, set()) is None
    assert focus_is_sound(Graph(), {EX.a}) is True


def test_shapes_graph_is_not_modified():
    shapes = Graph().parse(data=SHAPES, format="turtle")
    n = len(shapes)
    verify(DATA, shapes)
    assert len(shapes) == n


def test_path_text():
    g = Graph().parse(data=HEAD + """ex:s sh:path ( ex:a [ sh:inversePath ex:b ] [ sh:zeroOrMorePath ex:c ] ) .
        ex:t sh:path [ sh:alternativePath ( ex:a ex:b ) ] .""", format="turtle")
    assert path_text(g, g.value(EX.s, g.namespace_manager.expand_curie("sh:path"))) == \
        "(<http://ex.org/a>/^<http://ex.org/b>/(<http://ex.org/c>)*)"
    assert path_text(g, g.value(EX.t, g.namespace_manager.expand_curie("sh:path"))) == \
        "(<http://ex.org/a>|<http://ex.org/b>)"


def test_bad_inputs_raise_typed_errors():
    with pytest.raises(ConfigError, match="inference"):
        verify(DATA, SHAPES, inference="magic")
    with pytest.raises(LoadError, match=":2: cannot parse"):
        verify("@prefix ex: <http://ex.org/> .\nex:a ex:b .\n", SHAPES)
    with pytest.raises(LoadError, match="not valid SHACL"):
        verify(DATA, HEAD + 'ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:minCount "x" .')


@pytest.mark.parametrize("select, error", [
    ("SELECT ?person WHERE { ?person a <http://ex.org/Person> }", "selects \\?person but not \\?this"),
    ("SELECT ?this WHERE { ?this a ", "does not parse"),
])
def test_a_sparql_target_that_does_not_select_this_is_a_load_error(select, error):
    """pySHACL reads a SPARQL target's focus nodes from ?this: without it, a typed error naming the fix."""
    target = f'ex:S a sh:NodeShape ; sh:target [ a sh:SPARQLTarget ; sh:select "{select}" ] ; sh:closed false .'
    with pytest.raises(LoadError, match=error):
        verify(DATA, HEAD + target)


@pytest.mark.parametrize("shape", [
    'ex:S a sh:NodeShape ; sh:target [ a sh:SPARQLTarget ; sh:select "SELECT ?this WHERE { ?this a zz:P }" ] .',
    'ex:S a sh:NodeShape ; sh:targetNode ex:p1 ; sh:sparql [ sh:select "SELECT $this WHERE { $this zz:n ?x }" ] .',
])
def test_an_undeclared_prefix_in_a_sparql_query_is_a_load_error_naming_the_shape(shape):
    """rdflib raises a bare Exception for it: a typed error naming the shape, the prefix and where to declare it."""
    with pytest.raises(LoadError, match=r"query of <http://ex.org/S> uses the prefix zz: .* sh:prefixes"):
        verify(DATA, HEAD + shape)


def test_a_pattern_python_cannot_compile_is_a_load_error_naming_the_shape():
    """SHACL patterns are XPath regexes; pySHACL compiles them with Python's re, which lacks \\p{Lu}: a typed error
    naming the pattern, the property shape and a rewrite, not re.error from inside pySHACL."""
    shape = 'ex:S a sh:NodeShape ; sh:targetNode ex:p1 ; sh:property [ sh:path ex:name ; sh:pattern "^\\\\p{Lu}" ] .'
    with pytest.raises(LoadError, match=r"sh:pattern .*p\{Lu\}.* of the property shape on <http://ex.org/name> of "
                                        r"<http://ex.org/S> .*bad escape .* \[A-Z\]"):
        verify(DATA, HEAD + shape)


def test_a_declared_prefix_in_a_sparql_query_runs():
    """The same constraint with the prefix declared through sh:prefixes validates (ex:p1 has no ex:n: conforms)."""
    shape = ('ex:S a sh:NodeShape ; sh:targetNode ex:p1 ; sh:sparql [ sh:prefixes ex:decl ; '
             'sh:select "SELECT $this WHERE { $this zz:n ?x }" ] . ex:decl sh:declare [ sh:prefix "zz" ; '
             'sh:namespace "http://ex.org/"^^<http://www.w3.org/2001/XMLSchema#anyURI> ] .')
    assert verify(DATA, HEAD + shape).conforms


def test_sparql_targets_that_select_this_run():
    """?this selected plainly, as an alias, or by SELECT *: the target's focus nodes are validated."""
    for pattern in ("SELECT ?this WHERE { ?this a P }", "SELECT (?p AS ?this) WHERE { ?p a P }",
                    "SELECT * WHERE { ?this a P }"):
        select = pattern.replace(" P ", " <http://ex.org/Person> ")
        shape = (f'ex:S a sh:NodeShape ; sh:target [ a sh:SPARQLTarget ; sh:select "{select}" ] ; '
                 "sh:property [ sh:path ex:name ; sh:minCount 1 ] .")
        assert verify(DATA, HEAD + shape).violation_count == 1, pattern  # ex:p2 has no name


def test_inference_rdfs_sees_subclasses():
    data = HEAD + "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n" \
                  "ex:Student rdfs:subClassOf ex:Person . ex:s1 a ex:Student ."
    assert verify(data, SHAPES, inference="rdfs").violation_count == 1


def test_violations_are_typed_and_round_trip_through_json():
    import json

    from owl_memory.model import Violation
    from owl_memory.repair.verification import abstract_signature

    shapes = Graph().parse(data=HEAD + "ex:S a sh:NodeShape ; sh:targetNode ex:a ; "
                           "sh:property [ sh:path ( ex:p ex:q ) ; sh:datatype xsd:integer ] .", format="turtle")
    data = Graph().parse(data=HEAD + 'ex:a ex:p ex:b . ex:b ex:q "x" .', format="turtle")
    (v,) = verify(data, shapes).violations
    back = Violation.from_dict(json.loads(json.dumps(v.to_dict())))
    assert back.focus == v.focus and back.value == v.value and back.signature == v.signature
    assert back.component == v.component and back.path_text == v.path_text == "(<http://ex.org/p>/<http://ex.org/q>)"
    assert abstract_signature(v, shapes) == "abstract:DatatypeConstraintComponent|sequence|Literal:plain|datatype"
