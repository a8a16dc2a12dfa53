"""Instance data built from shapes, the mutation catalogue that breaks it, and the repair loop on the result."""

import logging
from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef

from owl_memory.errors import InstanceError
from owl_memory.repair import repair, target_nodes
from owl_memory.repair.verification import verify
from owl_memory.vocab import RDF
from owl_memory_bench.repair.instances import NAMESPACE, build_instances
from owl_memory_bench.repair.mutation_sets import REALWORLD, mutation_cases
from owl_memory_bench.repair.mutations import KINDS, MULTI, combined, mutations
from owl_memory_bench.repair.scoring import by_kind, run_all
from owl_memory_bench.repair.suites import load_set

EX = "http://example.org/library#"
SHAPES = Path(__file__).parent / "data" / "library_shapes.ttl"


@pytest.fixture(scope="module")
def shapes():
    """The small library shapes in tests/data."""
    logging.getLogger("rdflib.term").setLevel(logging.CRITICAL)
    return Graph().parse(SHAPES)


@pytest.fixture(scope="module")
def built(shapes):
    """Instance data built from the library shapes."""
    return build_instances(shapes)


def test_built_data_conforms_and_fills_every_property(shapes, built):
    """pySHACL accepts the data; a book and a person exist, the book's values meet their datatype and pattern."""
    g = built.graph
    assert verify(g, shapes).conforms
    assert built.roots == (EX + "Book", EX + "Person") and built.skipped == ()
    book = next(g.subjects(RDF.type, URIRef(EX + "Book")))
    isbn = g.value(book, URIRef(EX + "isbn"))
    assert isinstance(isbn, Literal) and str(isbn).startswith(("978-", "979-")) and len(str(isbn)) == 14
    assert g.value(book, URIRef(EX + "published")).datatype == URIRef("http://www.w3.org/2001/XMLSchema#date")
    assert (g.value(book, URIRef(EX + "author")), RDF.type, URIRef(EX + "Person")) in g
    assert g.value(book, URIRef(EX + "format")) == URIRef(EX + "Hardcover")


def test_every_edit_kind_violates_and_the_loop_repairs_it(shapes, built):
    """Each kind of the catalogue applies here, breaks conformance, and is repaired without losing a target."""
    found = mutations(built.graph, shapes)
    assert {m.kind for m in found} == set(KINDS)
    before = target_nodes(built.graph, shapes)
    for m in found:
        broken = m.apply(built.graph)
        assert not verify(broken, shapes).conforms, m.name
        res = repair(broken, shapes)
        assert res.conforms, (m.name, res.reasons)
        assert before <= target_nodes(res.graph, shapes), m.name
    assert len(built.graph) == len(build_instances(shapes).graph)  # apply() never edits the input


def test_combined_edits_are_independent_deterministic_and_all_repaired(shapes, built):
    """A multi-edit graph holds several independent edits of distinct kinds (same draw for the same seed), each one
    violating on its own; the loop repairs the whole graph, losing no target."""
    found = mutations(built.graph, shapes)
    breaks = lambda m: not verify(m.apply(built.graph), shapes).conforms  # noqa: E731
    drawn = combined(found, 3, 4, seed=5, violates=breaks)
    assert drawn == combined(found, 3, 4, seed=5, violates=breaks) and len(drawn) == 4
    assert drawn != combined(found, 3, 4, seed=6, violates=breaks)
    for m in drawn:
        assert m.kind == MULTI and len(m.parts) == 3 and len({p.kind for p in m.parts}) == 3, m.name
        assert len({(p.focus, p.shape) for p in m.parts}) == 3 and all(breaks(p) for p in m.parts)
        assert m.added == frozenset().union(*(p.added for p in m.parts))
        broken = m.apply(built.graph)
        assert len(verify(broken, shapes).violations) >= 3
        res = repair(broken, shapes)
        assert res.conforms and target_nodes(built.graph, shapes) <= target_nodes(res.graph, shapes), m.name


def test_contradictory_shapes_raise_instance_error():
    """Shapes nothing can satisfy give a typed error naming what is left, not a non-conforming graph."""
    bad = Graph().parse(data="""
        @prefix ex: <http://example.org/x#> . @prefix sh: <http://www.w3.org/ns/shacl#> .
        @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
        ex:S a sh:NodeShape ; sh:targetClass ex:Thing ;
            sh:property [ sh:path ex:p ; sh:minCount 1 ; sh:datatype xsd:integer ; sh:in ( "a" ) ] .""",
                        format="turtle")
    with pytest.raises(InstanceError, match="no conforming instance"):
        build_instances(bad)


def test_counts_over_required_values_and_target_nodes_are_built():
    """Shapes in the style of real governance files: a count of 3 on a predicate two other shapes each require one
    value of, a required value on a shape with no count, and a shape targeting a class IRI by sh:targetNode. The
    built data gives 3 distinct values, the required ones among them, and the targeted IRI what its shape asks."""
    shapes = Graph().parse(data="""
        @prefix ex: <http://example.org/x#> . @prefix sh: <http://www.w3.org/ns/shacl#> .
        @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
        ex:Base a sh:NodeShape ; sh:targetClass ex:Profile ;
            sh:property [ sh:path ex:conformsTo ; sh:minCount 1 ] ;
            sh:property [ sh:path ex:title ; sh:datatype xsd:string ; sh:minCount 1 ; sh:maxCount 1 ] .
        ex:Standards a sh:NodeShape ; sh:targetClass ex:Profile ;
            sh:property [ sh:path ex:conformsTo ; sh:hasValue ex:RDF ] ;
            sh:property [ sh:path ex:conformsTo ; sh:hasValue ex:PROF ] ;
            sh:property [ sh:path ex:conformsTo ; sh:minCount 3 ] ;
            sh:property [ sh:path ex:algorithm ; sh:hasValue "RDFC-1.0" ] .
        ex:Findable a sh:NodeShape ; sh:targetNode ex:Profile ;
            sh:property [ sh:path ex:title ; sh:minCount 1 ] .""", format="turtle")
    built = build_instances(shapes)
    g, x = built.graph, "http://example.org/x#"
    assert verify(g, shapes).conforms and built.roots == (x + "Profile",)
    node = next(g.subjects(RDF.type, URIRef(x + "Profile")))
    standards = set(g.objects(node, URIRef(x + "conformsTo")))
    assert len(standards) == 3 and {URIRef(x + "RDF"), URIRef(x + "PROF")} <= standards
    assert g.value(node, URIRef(x + "algorithm")) == Literal("RDFC-1.0")
    assert g.value(URIRef(x + "Profile"), URIRef(x + "title")) is not None


def test_patterned_iris_dates_nested_and_alternative_classes_are_built():
    """A did: and an https: IRI from their patterns, typed dates, a value of a class no shape describes, a nested
    sh:node, sh:or over classes, and 2 distinct strings for a count of 2 (before: the same empty string twice)."""
    shapes = Graph().parse(data="""
        @prefix ex: <http://example.org/s#> . @prefix sh: <http://www.w3.org/ns/shacl#> .
        @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
        ex:AssetShape a sh:NodeShape ; sh:targetClass ex:Asset ;
          sh:property [ sh:path ex:id ; sh:nodeKind sh:IRI ; sh:pattern "^did:example:[0-9a-f]{8}$" ; sh:minCount 1 ] ;
          sh:property [ sh:path ex:homepage ; sh:nodeKind sh:IRI ; sh:pattern "^https://" ; sh:minCount 1 ] ;
          sh:property [ sh:path ex:created ; sh:datatype xsd:date ; sh:minCount 1 ; sh:maxCount 1 ] ;
          sh:property [ sh:path ex:creator ; sh:class ex:Agent ; sh:minCount 1 ] ;
          sh:property [ sh:path ex:owner ; sh:or ( [ sh:class ex:Person ] [ sh:class ex:Org ] ) ; sh:minCount 1 ] ;
          sh:property [ sh:path ex:contact ; sh:node ex:ContactShape ; sh:minCount 1 ] ;
          sh:property [ sh:path ex:tag ; sh:datatype xsd:string ; sh:minCount 2 ; sh:maxLength 10 ] .
        ex:ContactShape a sh:NodeShape ;
          sh:property [ sh:path ex:mbox ; sh:nodeKind sh:IRI ; sh:pattern "^mailto:" ; sh:minCount 1 ] .""",
                           format="turtle")
    g, x = build_instances(shapes).graph, "http://example.org/s#"
    assert verify(g, shapes).conforms
    node = next(g.subjects(RDF.type, URIRef(x + "Asset")))
    value = lambda s, p: g.value(s, URIRef(x + p))  # noqa: E731
    assert str(value(node, "id")).startswith("did:example:") and str(value(node, "homepage")).startswith("https://")
    assert value(node, "created").datatype == URIRef("http://www.w3.org/2001/XMLSchema#date")
    assert (value(node, "creator"), RDF.type, URIRef(x + "Agent")) in g
    assert {URIRef(x + "Person"), URIRef(x + "Org")} & set(g.objects(value(node, "owner"), RDF.type))
    assert str(value(value(node, "contact"), "mbox")).startswith("mailto:")
    assert len(set(g.objects(node, URIRef(x + "tag")))) == 2


@pytest.mark.shared_data
def test_fabric_mutations_repaired_per_kind(shared_data):
    """Knowledge Fabric core shapes (not a shapes file the repairer was built against): the node shape whose SPARQL
    target selects no ?this is left out and named; two cases of each of the 7 edit kinds (wrong_class: the two
    sh:class properties) are repaired, none larger than the inverse edit, no target lost."""
    cases = mutation_cases("fabric", shared_data / REALWORLD["fabric"], per_kind=2)
    assert cases[0].shapes_left_out == (":GraphDIDShape (its SPARQL target selects ?resource but not ?this)",)
    rows = run_all(cases)["rows"]
    assert {k: (v["cases"], v["repaired"], v["target_deletions"]) for k, v in by_kind(rows).items()} == \
        {k: (2, 2, 0) for k in KINDS}
    assert all(r["delta"] <= c.witness for r, c in zip(rows, cases, strict=True)), rows


@pytest.mark.slow
@pytest.mark.shared_data
def test_dcat_ap_mutations_repaired_per_kind(shared_data):
    """DCAT-AP: the built data conforms, and two cases of every applicable edit kind are all repaired."""
    cases = mutation_cases("dcat", shared_data / REALWORLD["dcat"], per_kind=2)
    assert {c.kind for c in cases} >= {"remove_required", "retype_literal", "add_surplus", "wrong_class",
                                          "wrong_node_kind"}
    rates = by_kind(run_all(cases)["rows"])
    assert all(k["rate"] == 1.0 and k["target_deletions"] == 0 for k in rates.values()), rates


PREDICATE_TARGETS = """
    @prefix ex: <http://example.org/t#> . @prefix sh: <http://www.w3.org/ns/shacl#> .
    @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
    ex:Authored a sh:NodeShape ; sh:targetSubjectsOf ex:author ;
        sh:property [ sh:path ex:title ; sh:datatype xsd:string ; sh:minCount 1 ; sh:maxCount 1 ] ;
        sh:property [ sh:path ex:author ; sh:nodeKind sh:IRI ; sh:maxCount 1 ] .
    ex:Author a sh:NodeShape ; sh:targetObjectsOf ex:author ; sh:class ex:Person ;
        sh:property [ sh:path ex:name ; sh:datatype xsd:string ; sh:minCount 1 ; sh:maxCount 1 ] ;
        sh:property [ sh:path ex:status ; sh:in ( "active" "retired" ) ; sh:minCount 1 ] .
    ex:Named a sh:NodeShape ; sh:targetObjectsOf ex:label ; sh:datatype xsd:string ; sh:maxLength 20 .
    ex:Labelled a sh:NodeShape ; sh:targetSubjectsOf ex:label ;
        sh:property [ sh:path ex:label ; sh:minCount 1 ; sh:maxCount 1 ; sh:pattern "^L" ] ."""


def test_subjects_of_and_objects_of_targets_get_roots_and_edits():
    """Shapes targeting only subjects / objects of a predicate (before: InstanceError, no mutations): every node shape
    gets a root, the data conforms, the subject root's value is what the object shape asks (an ex:Person with a name
    and a listed status), a literal object root meets its datatype and the subject's pattern, and the catalogue edits
    a focus of each target kind, never adding a target node (no repair could remove it); every edit that violates is
    repaired without losing a target."""
    shapes, t = Graph().parse(data=PREDICATE_TARGETS, format="turtle"), "http://example.org/t#"
    built = build_instances(shapes)
    g = built.graph
    assert verify(g, shapes).conforms and built.skipped == ()
    assert built.roots == tuple(t + s for s in ("Author", "Authored", "Labelled", "Named"))
    author = g.value(URIRef(NAMESPACE + "Authored-author"), URIRef(t + "author"))
    assert (author, RDF.type, URIRef(t + "Person")) in g and g.value(author, URIRef(t + "status")) == Literal("active")
    assert g.value(URIRef(NAMESPACE + "Named-label"), URIRef(t + "label")) == Literal("L")
    found = mutations(g, shapes)
    focus = {(m.kind, m.focus) for m in found}
    assert {("retype_literal", author), ("outside_in", author), ("add_surplus", URIRef(NAMESPACE + "Authored-author"))
            } <= focus  # objects of ex:author, subjects of ex:author
    targets = target_nodes(g, shapes)
    for m in found:
        assert target_nodes(m.apply(g), shapes) <= targets, m.name  # undoing it deletes no target
        if not verify(m.apply(g), shapes).conforms:
            res = repair(m.apply(g), shapes)
            assert res.conforms and target_nodes(m.apply(g), shapes) <= target_nodes(res.graph, shapes), m.name


def test_the_same_file_parsed_twice_gives_the_same_cases():
    """Blank-node labels differ from one parse to the next; the built data, the mutations (names and order) and the
    seeded multi-edit draw do not."""
    runs = []
    for _ in range(2):
        shapes = Graph().parse(SHAPES)
        g = build_instances(shapes).graph
        found = mutations(g, shapes)
        breaks = lambda m, g=g, shapes=shapes: not verify(m.apply(g), shapes).conforms  # noqa: E731
        runs.append((sorted(g), [m.name for m in found], [m.name for m in combined(found, 3, 4, 5, breaks)],
                     {str(b) for b in shapes.subjects() if not isinstance(b, URIRef)}))
    assert runs[0][:3] == runs[1][:3] and len(runs[0][1]) > 10
    assert runs[0][3] and not runs[0][3] & runs[1][3]  # the blank nodes did get other labels


def test_any_shapes_file_is_a_mutation_set_of_the_benchmark(tmp_path):
    """The repair benchmark's "shapes:PATH" set: a shapes file it never saw gives broken cases (single edits, and 3
    edits each with ":multi"); a missing file, a file holding no shapes, or shapes no edit applies to (a subject root
    chosen from the shape's sh:in, no property shape) stop with a message naming the file."""
    path = tmp_path / "mine.ttl"
    path.write_text(PREDICATE_TARGETS, encoding="utf-8")
    cases = load_set(f"shapes:{path}", tmp_path, per_kind=1)
    assert {c.kind for c in cases} == {"remove_required", "retype_literal", "add_surplus", "outside_in"}
    assert all(c.name.startswith("shapes:mine.ttl/") and not verify(c.data, c.shapes).conforms
               for c in cases)
    multi = load_set(f"shapes:{path}:multi", tmp_path, per_kind=1)
    assert len(multi) == 2 and all(c.kind == MULTI and c.name.count("+") == 2 for c in multi)
    with pytest.raises(SystemExit, match="not found"):
        load_set(f"shapes:{tmp_path / 'absent.ttl'}", tmp_path)
    (tmp_path / "data.ttl").write_text("<urn:a> <urn:p> <urn:b> .", encoding="utf-8")
    with pytest.raises(SystemExit, match="holds no SHACL shapes"):
        load_set(f"shapes:{tmp_path / 'data.ttl'}", tmp_path)
    listed = tmp_path / "listed.ttl"  # W3C targets/multipleTargets-001's shape: a subject root must be a listed IRI
    listed.write_text("@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/l#> .\n"
                      "ex:S a sh:NodeShape ; sh:targetSubjectsOf ex:p, ex:q ; sh:in ( ex:a ex:b ) .", encoding="utf-8")
    built = build_instances(Graph().parse(listed))
    assert built.roots == ("http://example.org/l#S",) and set(built.graph.subjects()) == {URIRef("http://example.org/l#a")}
    with pytest.raises(SystemExit, match="no edit of the mutation catalogue breaks"):  # it has no property shape
        load_set(f"shapes:{listed}", tmp_path)


def test_implicit_class_and_target_node_shapes_get_edits_too():
    """Edits are made at the nodes every target kind reaches, not only sh:targetClass: an instance of a class that is
    its own shape, and an IRI named by sh:targetNode (before: class targets only). A class whose shape lists its
    instances (W3C targets/targetClassImplicit-001) gets a listed one (before: none, so the class was skipped)."""
    shapes = Graph().parse(data="""
        @prefix ex: <http://example.org/k#> . @prefix sh: <http://www.w3.org/ns/shacl#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
        ex:Person a rdfs:Class, sh:NodeShape ;
            sh:property [ sh:path ex:name ; sh:datatype xsd:string ; sh:minCount 1 ] .
        ex:Home a sh:NodeShape ; sh:targetNode ex:home ; sh:property [ sh:path ex:city ; sh:minCount 1 ] .
        ex:Listed a rdfs:Class, sh:NodeShape ; sh:in ( ex:only ) .""", format="turtle")
    built, k = build_instances(shapes), "http://example.org/k#"
    found = {(m.kind, m.focus) for m in mutations(built.graph, shapes)}
    assert built.roots == (k + "Listed", k + "Person")
    assert (URIRef(k + "only"), RDF.type, URIRef(k + "Listed")) in built.graph
    assert {("remove_required", URIRef(NAMESPACE + "Person")), ("remove_required", URIRef(k + "home"))} <= found
