"""Conformance read off the data (repair.conformance) agrees with pySHACL on every shape it claims to read."""

from hypothesis import HealthCheck, given, settings, strategies as st
from rdflib import Graph, Literal, Namespace
from rdflib.collection import Collection
from rdflib.namespace import RDF, RDFS

from owl_memory.repair.conformance import read, readable
from owl_memory.repair.context import Context
from owl_memory.repair.verification import NestedChecks
from owl_memory.vocab import SH

EX = Namespace("http://ex.org/")
NODES = [EX.a, EX.b, EX.c, Literal(1), Literal("x")]
CLASSES = [EX.C, EX.D, EX.E]  # D rdfs:subClassOf C
PREDICATES = [EX.p, EX.q]


@st.composite
def data(draw):
    """A small data graph: typed nodes (a subclass among the types) and p / q edges to nodes and literals."""
    g = Graph()
    g.add((EX.D, RDFS.subClassOf, EX.C))
    for s in NODES[:3]:
        for c in draw(st.sets(st.sampled_from(CLASSES), max_size=2)):
            g.add((s, RDF.type, c))
        for p in PREDICATES:
            for o in draw(st.sets(st.sampled_from(NODES), max_size=3)):
                g.add((s, p, o))
    return g


@st.composite
def shapes(draw):
    """A node shape the reader claims: maybe a sh:class, and property shapes on p / q with counts, a value, a class,
    a list, a sh:node to a shape of one count."""
    g, shape = Graph(), EX.S
    g.add((shape, RDF.type, SH.NodeShape))
    if draw(st.booleans()):
        g.add((shape, SH["class"], draw(st.sampled_from(CLASSES))))
    for i in range(draw(st.integers(1, 2))):
        ps = EX[f"ps{i}"]
        g.add((shape, SH.property, ps))
        g.add((ps, SH.path, draw(st.sampled_from(PREDICATES))))
        if draw(st.booleans()):
            g.add((ps, SH.minCount, Literal(draw(st.integers(0, 2)))))
        if draw(st.booleans()):
            g.add((ps, SH.maxCount, Literal(draw(st.integers(0, 2)))))
        if draw(st.booleans()):
            g.add((ps, SH.hasValue, draw(st.sampled_from(NODES))))
        if draw(st.booleans()):
            g.add((ps, SH["class"], draw(st.sampled_from(CLASSES))))
        if draw(st.integers(0, 3)) == 0:  # values must conform to a small shape of their own
            inner, ips = EX[f"inner{i}"], EX[f"ips{i}"]
            g.add((ps, SH.node, inner))
            g.add((inner, SH.property, ips))
            g.add((ips, SH.path, draw(st.sampled_from(PREDICATES))))
            g.add((ips, draw(st.sampled_from([SH.minCount, SH.maxCount])), Literal(draw(st.integers(0, 1)))))
        if draw(st.booleans()):
            head = EX[f"list{i}"]
            Collection(g, head, draw(st.lists(st.sampled_from(NODES), min_size=1, max_size=3, unique=True)))
            g.add((ps, SH["in"], head))
    return g


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data(), shapes(), st.sampled_from(NODES))
def test_reading_agrees_with_pyshacl(g, s, node):
    assert readable(s, EX.S)
    assert read(g, s, node, EX.S) == (not NestedChecks(s).violations(g, node, EX.S))


def test_shapes_beyond_the_reader_go_to_pyshacl():
    """A datatype, a complex path or sh:deactivated is not read: Context.conforms runs one nested check for it."""
    g = Graph().parse(data="@prefix ex: <http://ex.org/> . ex:a ex:p 1 .", format="turtle")
    for extra in ("sh:datatype xsd:string", "sh:deactivated true"):
        s = Graph().parse(data=f"""@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
            @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
            ex:S sh:property [ sh:path ex:p ; sh:minCount 1 ; {extra} ] .""", format="turtle")
        ctx = Context(g, s)
        assert not readable(s, EX.S)
        assert ctx.conforms(EX.a, EX.S) is (extra.startswith("sh:deactivated")) and ctx.checks.count == 1
    inverse = Graph().parse(data="""@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
        ex:S sh:property [ sh:path [ sh:inversePath ex:p ] ; sh:minCount 1 ] .""", format="turtle")
    assert not readable(inverse, EX.S)
    loop = Graph().parse(data="""@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
        ex:S sh:property [ sh:path ex:p ; sh:node ex:S ] .""", format="turtle")
    assert not readable(loop, EX.S), "a shape reached again through sh:node"


def _whole_run(g: Graph, s: Graph, node, shape) -> set:
    """pySHACL's whole run (advanced mode) of the shapes with their targets removed and `shape` targeting `node`:
    each result as (focus, path, component, value)."""
    import pyshacl

    t = Graph()
    for triple in s:
        if triple[1] not in (SH.targetClass, SH.targetNode):
            t.add(triple)
    t.add((shape, SH.targetNode, node))
    report = pyshacl.validate(g, shacl_graph=t, advanced=True, inference="none")[1]
    return {(report.value(r, SH.focusNode), report.value(r, SH.resultPath),
             report.value(r, SH.sourceConstraintComponent), report.value(r, SH.value))
            for r in report.subjects(RDF.type, SH.ValidationResult)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data(), shapes(), st.sampled_from(NODES), st.sampled_from([None, EX.C, EX.D]))
def test_a_nested_check_is_pyshacls_run_of_that_shape_alone(g, s, node, target):
    """One node against one shape, each other target ignored, finds what pySHACL's whole run finds when that shape
    is the only one with a target (here: the node shape, or a value shape it refers to by sh:node)."""
    if target is not None:
        s.add((EX.S, SH.targetClass, target))
    for shape in (EX.S, *s.objects(None, SH.node)):
        found = {(v.focus, v.path, v.component, v.value) for v in NestedChecks(s).violations(g, node, shape)}
        assert found == _whole_run(g, s, node, shape)


def test_a_nested_check_applies_the_shapes_rules_first():
    """Shapes with a SHACL-AF rule: the rule's inferred triple counts in a nested check, as in pySHACL's run."""
    g = Graph().parse(data="@prefix ex: <http://ex.org/> . ex:a ex:q 1 .", format="turtle")
    s = Graph().parse(data="""@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
        ex:S a sh:NodeShape ; sh:property [ sh:path ex:p ; sh:minCount 1 ] ;
          sh:rule [ a sh:TripleRule ; sh:subject sh:this ; sh:predicate ex:p ; sh:object ex:b ] .""", format="turtle")
    assert NestedChecks(s).violations(g, EX.a, EX.S) == []
    s.remove((None, SH.rule, None))
    assert [v.component for v in NestedChecks(s).violations(g, EX.a, EX.S)] == [SH.MinCountConstraintComponent]
