"""Repair by general mechanisms (issue 26): every sh:flags letter pySHACL reads, new and retyped nodes completed with
what their own shapes require, every target kind (SPARQL targets too) kept as a target, sequence paths that repeat a
predicate. Each on cases written for it; the held-out rate is tests/test_repair_heldout.py."""

import re

import pytest
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDF, XSD

from owl_memory.adapters import pyshacl as shacl
from owl_memory.repair import repair, target_nodes
from owl_memory.repair.cost import change_cost
from owl_memory.repair.verification import re_flags, verify
from owl_memory_bench.repair.instances import build_instances

EX = Namespace("http://example.org/")
HEAD = """@prefix ex: <http://example.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
"""


def _g(text: str) -> Graph:
    """Data and shapes in one graph, with the test prefixes."""
    return Graph().parse(data=HEAD + text, format="turtle")


def _pyshacl_matches(pattern: str, flags: str, text: str) -> bool:
    """Whether pySHACL finds `text` to match `pattern` with `flags` (one node, one property shape)."""
    g = Graph()
    g.add((EX.a, EX.p, Literal(text)))
    shapes = _g(f"ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; "
                f"sh:pattern {Literal(pattern).n3()} ; sh:flags {Literal(flags).n3()} ] .")
    return shacl.validate(g, shacl_graph=shapes)[0]


@pytest.mark.parametrize("flags", ["", "i", "m", "im", "I", "M", "iM", "s", "x", "q", "smix"])
@pytest.mark.parametrize("pattern, text", [
    ("^point\\(", "POINT(1 2)"), ("^POINT \\($", "srid=4326\nPOINT ("), ("^a.b$", "a\nb"), ("^a b$", "ab"),
    ("^[a-z]+$", "Geo"), ("^x$", "y\nx\nz")])
def test_the_repairer_reads_sh_flags_as_pyshacl_does(flags, pattern, text):
    """i and m (either case) change the match; s, x, q and any other letter are ignored, as pySHACL ignores them."""
    assert bool(re.search(pattern, text, re_flags(flags))) == _pyshacl_matches(pattern, flags, text)


def test_a_multiline_geometry_is_repaired_by_trimming_its_own_text():
    """With "m" the pattern holds at any line; the leading spaces of the bad value are trimmed (derived, not new)."""
    g = _g('ex:g1 a ex:Geometry ; ex:wkt "  POINT (1 2)" .\n'
           'ex:g2 a ex:Geometry ; ex:wkt "SRID=4326\\nPOINT (3 4)" .\n'
           'ex:S a sh:NodeShape ; sh:targetClass ex:Geometry ; sh:property [ sh:path ex:wkt ; sh:minCount 1 ; '
           'sh:pattern "^POINT \\\\([0-9 ]+\\\\)$" ; sh:flags "m" ] .')
    assert verify(g, g).violation_count == 1, "g2 conforms under m"
    res = repair(g, g)
    assert res.conforms and res.added == {(EX.g1, EX.wkt, Literal("POINT (1 2)"))}
    assert res.changes[0].changes[-1].origin == 'derived from "  POINT (1 2)": trimmed'


def test_a_case_blind_pattern_keeps_a_value_whose_case_differs_and_copies_none():
    """Flags "I": a lower-case keyword conforms; a required bad value gets a new text that says it is synthetic,
    never the other geometry's value."""
    g = _g('ex:g1 a ex:Geometry ; ex:wkt "point(1 2)" .\nex:g2 a ex:Geometry ; ex:wkt "LINESTRING 1 2" .\n'
           'ex:S a sh:NodeShape ; sh:targetClass ex:Geometry ; sh:property [ sh:path ex:wkt ; sh:minCount 1 ; '
           'sh:pattern "^(POINT|LINESTRING)\\\\s*\\\\(.*\\\\)$" ; sh:flags "I" ] .')
    res = repair(g, g)
    new = {o for s, _, o in res.added if s == EX.g2}
    assert res.conforms and Literal("point(1 2)") not in new and len(new) == 1
    assert "synthetic" in str(next(iter(new))).lower() and res.changes[0].changes[-1].origin == "synthetic"


MEMBERS = """ex:OrgShape a sh:NodeShape ; sh:targetClass ex:Org ;
    sh:property [ sh:path ex:member ; sh:minCount 1 ; sh:class ex:Person ] .
ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person ;
    sh:property [ sh:path ex:name ; sh:minCount 1 ; sh:datatype xsd:string ] ;
    sh:property [ sh:path ex:worksAt ; sh:minCount 1 ; sh:class ex:Site ] .
ex:SiteShape a sh:NodeShape ; sh:targetClass ex:Site ; sh:property [ sh:path ex:city ; sh:minCount 1 ] .
"""


def test_a_new_member_gets_what_its_own_shapes_require_in_the_same_round():
    """The new Person needs a name and a Site, and the new Site a city: one patch, verified once."""
    g = _g("ex:o a ex:Org .\n" + MEMBERS)
    res = repair(g, g)
    assert res.conforms and res.verify_iterations == 2
    member = next(o for s, p, o in res.added if p == EX.member)
    site = next(o for s, p, o in res.added if (s, p) == (member, EX.worksAt))
    assert {(member, RDF.type, EX.Person), (site, RDF.type, EX.Site)} <= res.added
    assert any(s == site and p == EX.city for s, p, _ in res.added)


def test_completion_stops_on_shapes_that_require_themselves_forever():
    """Every Person needs a parent Person: completion is bounded, the loop ends, nothing hangs."""
    g = _g("ex:a a ex:Person .\nex:S a sh:NodeShape ; sh:targetClass ex:Person ; "
           "sh:property [ sh:path ex:parent ; sh:minCount 1 ; sh:class ex:Person ] .")
    res = repair(g, g, max_rounds=3)
    assert res.verify_iterations <= 4 and len(res.added) < 200


def test_a_target_of_an_objects_of_target_is_typed_and_completed_never_dropped():
    """Dropping the link would end the object's being a target; typing it is cheap (it had no type) and its name
    comes in the same patch."""
    g = _g('ex:a ex:author ex:b .\nex:S a sh:NodeShape ; sh:targetObjectsOf ex:author ; sh:class ex:Agent ; '
           "sh:property [ sh:path ex:name ; sh:minCount 1 ; sh:datatype xsd:string ] .")
    res = repair(g, g)
    assert res.conforms and not res.removed and res.verify_iterations == 2
    assert (EX.b, RDF.type, EX.Agent) in res.added and any(p == EX.name for _, p, _ in res.added)


SPARQL_TARGET = """ex:PaidShape a sh:NodeShape ; sh:target [ a sh:SPARQLTarget ; sh:select \"\"\"
    PREFIX ex: <http://example.org/>
    SELECT ?this WHERE { ?this a ex:Bill ; ex:state "settled" . }\"\"\" ] ;
  sh:property [ sh:path ex:settledOn ; sh:maxCount 0 ] , [ sh:path ex:state ; sh:maxCount 0 ] .
"""


def test_a_sparql_target_is_a_target_the_repair_keeps():
    """The only change that conforms would stop the SPARQL target selecting the node: no repair, nothing lost."""
    g = _g('ex:b1 a ex:Bill ; ex:state "settled" .\n' + SPARQL_TARGET)
    assert target_nodes(g, g) == {EX.b1}
    res = repair(g, g)
    assert not res.conforms and not res.removed


def test_a_sparql_target_gets_an_instance_root():
    """The instance builder makes a node the target selects and gives it what the shape asks."""
    shapes = _g(SPARQL_TARGET.replace("sh:maxCount 0 ] , [ sh:path ex:state ; sh:maxCount 0 ]",
                                      "sh:minCount 1 ; sh:datatype xsd:date ]"))
    built = build_instances(shapes)
    assert built.roots == ("http://example.org/PaidShape",)
    root = URIRef("urn:owl-memory:instance:PaidShape-selected")
    assert (root, EX.state, Literal("settled")) in built.graph and (root, EX.settledOn, None) in built.graph


@pytest.mark.parametrize("shape, data, cost", [
    ("sh:minCount 1", "ex:a ex:knows ex:b .", 1),  # a second step from the first value
    ("sh:class ex:Person", "ex:a ex:knows ex:b . ex:b ex:knows ex:c .", 1),  # the grand-value typed (it had none)
    ("sh:maxCount 1", "ex:a ex:knows ex:b , ex:c . ex:b ex:knows ex:d . ex:c ex:knows ex:e .", 1),  # one link dropped
    ("sh:datatype xsd:integer ; sh:minCount 1", 'ex:a ex:knows ex:b . ex:b ex:knows "7" .', 2),  # cast where it is
])
def test_a_sequence_path_repeating_a_predicate_is_repaired_at_the_least_cost(shape, data, cost):
    """ex:knows/ex:knows: values are walked two steps, linked by the missing step, dropped or replaced on the last."""
    g = _g(data + "\nex:S a sh:NodeShape ; sh:targetNode ex:a ; "
           f"sh:property [ sh:path ( ex:knows ex:knows ) ; {shape} ] .")
    res = repair(g, g)
    assert res.conforms and change_cost(g, res.added, res.removed) == cost, res.changes


def test_a_repeated_predicate_sequence_does_not_take_the_focus_for_its_own_value():
    """A self-loop makes the focus its own value at two steps: a minCount 2 needs one more distinct value."""
    g = _g("ex:a ex:p ex:a .\nex:S a sh:NodeShape ; sh:targetNode ex:a ; "
           "sh:property [ sh:path ( ex:p ex:p ) ; sh:minCount 2 ] .")
    res = repair(g, g)
    assert res.conforms and (EX.a, EX.p, EX.a) in res.graph and len(res.added) == 1


def test_keep_values_derives_and_never_puts_a_placeholder_in_place_of_the_users_text():
    """Trimming and re-casing keep the offending value's content; a value no rule derives ("x" as an integer) is
    left and the reason says so, never replaced by the datatype's 0; a converted number is kept."""
    g = _g('ex:a ex:code " ab-12 " ; ex:lang "FR" ; ex:n "x" ; ex:m "42.0" .\nex:S a sh:NodeShape ; '
           'sh:targetNode ex:a ; sh:property [ sh:path ex:code ; sh:pattern "^[A-Z]{2}-[0-9]+$" ] , '
           '[ sh:path ex:lang ; sh:in ( "fr" "de" ) ] , [ sh:path ex:n ; sh:datatype xsd:integer ] , '
           '[ sh:path ex:m ; sh:datatype xsd:integer ] .')
    res = repair(g, g, keep_values=True)
    origins = {c.text.split()[1]: c.origin for grp in res.changes for c in grp.changes if c.sign == "+"}
    assert {(EX.a, EX.code, Literal("AB-12")), (EX.a, EX.lang, Literal("fr"))} <= res.added
    assert origins["ex:code"] == 'derived from " ab-12 ": trimmed, upper-cased'
    assert origins["ex:lang"].startswith('derived from "FR"') and "ex:n" not in origins
    assert (EX.a, EX.m, Literal("42", datatype=XSD.integer)) in res.added
    assert not res.conforms and (EX.a, EX.n, Literal("x")) in res.graph
    (left,) = res.unrepaired
    assert "ex:n" in left or "/n>" in left
    assert "keeping values forbids dropping it" in res.reasons[left]


def test_a_value_is_replaced_on_a_subjects_of_target_whose_only_triple_it_is():
    """Dropping the bad value would end the node's being a target; a replacement keeps it (the node stays)."""
    g = _g('ex:s ex:srid "!" .\nex:S a sh:NodeShape ; sh:targetSubjectsOf ex:srid ; sh:property [ sh:path ex:srid ; '
           'sh:pattern "^EPSG:[0-9]+$" ; sh:flags "I" ] .')
    res = repair(g, g)
    assert res.conforms and res.added == {(EX.s, EX.srid, Literal("EPSG:0"))} and target_nodes(res.graph, g) == {EX.s}
