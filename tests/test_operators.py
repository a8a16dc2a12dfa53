"""Each repair operator on a minimal graph: the library picks it, the result conforms, the delta is the expected one."""

import pytest
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDF, XSD

from owl_memory.repair import repair, shape_triples
from owl_memory.repair.registry import REGISTRY, STRATEGIES, strategies_for
from owl_memory.repair.synth import generate
from owl_memory.vocab import SH

EX = Namespace("http://ex.org/")
HEAD = """@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
"""
PROP = "ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; {} ] .\n"

# (id, turtle holding data and shapes, strategy expected, triples expected added, triples expected removed)
CASES = [
    ("class-add-type", "ex:a ex:p ex:b ." + PROP.format("sh:class ex:C"), "class.add_type",
     {(EX.b, RDF.type, EX.C)}, set()),
    ("class-link-instance", 'ex:a ex:p "x" . ex:c1 a ex:C .' + PROP.format("sh:class ex:C"), "class.link_instance",
     {(EX.a, EX.p, EX.c1)}, {(EX.a, EX.p, Literal("x"))}),
    ("datatype-cast", 'ex:a ex:p "5" .' + PROP.format("sh:datatype xsd:integer"), "datatype.cast",
     {(EX.a, EX.p, Literal("5", datatype=XSD.integer))}, {(EX.a, EX.p, Literal("5"))}),
    ("datatype-convert", 'ex:a ex:p "2.0"^^xsd:decimal .' + PROP.format("sh:datatype xsd:integer"),
     "datatype.convert", {(EX.a, EX.p, Literal("2", datatype=XSD.integer))}, None),
    ("nodekind", 'ex:a ex:p "http://ex.org/z" .' + PROP.format("sh:nodeKind sh:IRI"), "nodeKind.convert",
     {(EX.a, EX.p, EX.z)}, {(EX.a, EX.p, Literal("http://ex.org/z"))}),
    ("mincount", "ex:a ex:q 1 ." + PROP.format("sh:minCount 1 ; sh:datatype xsd:string"), "minCount.add_values",
     {(EX.a, EX.p, Literal(""))}, set()),
    ("mincount-in", "ex:a ex:q 1 ." + PROP.format("sh:minCount 1 ; sh:in ( ex:red ex:blue )"),
     "minCount.add_values", {(EX.a, EX.p, EX.red)}, set()),
    ("maxcount", 'ex:a ex:p 1, "x" .' + PROP.format("sh:maxCount 1 ; sh:datatype xsd:integer"),
     "maxCount.drop_surplus", set(), {(EX.a, EX.p, Literal("x"))}),
    ("minlength", 'ex:a ex:p "ab" .' + PROP.format("sh:minLength 4"), "minLength.pad",
     {(EX.a, EX.p, Literal("abxx"))}, {(EX.a, EX.p, Literal("ab"))}),
    ("maxlength", 'ex:a ex:p "abcdef"@en .' + PROP.format("sh:maxLength 3"), "maxLength.truncate",
     {(EX.a, EX.p, Literal("abc", lang="en"))}, {(EX.a, EX.p, Literal("abcdef", lang="en"))}),
    ("pattern", 'ex:a ex:p "xyz" .' + PROP.format('sh:pattern "^A[0-9]{2}$"'), "pattern.generate",
     {(EX.a, EX.p, Literal("A00"))}, {(EX.a, EX.p, Literal("xyz"))}),
    ("in", "ex:a ex:p ex:x ." + PROP.format("sh:in ( ex:y ex:z )"), "in.pick_listed",
     {(EX.a, EX.p, EX.y)}, {(EX.a, EX.p, EX.x)}),
    ("hasvalue", "ex:a ex:q 1 ." + PROP.format("sh:hasValue ex:v"), "hasValue.add_value",
     {(EX.a, EX.p, EX.v)}, set()),
    ("min-inclusive", "ex:a ex:p 3 ." + PROP.format("sh:minInclusive 5"), "range.clamp",
     {(EX.a, EX.p, Literal(5))}, {(EX.a, EX.p, Literal(3))}),
    ("max-exclusive", "ex:a ex:p 10 ." + PROP.format("sh:maxExclusive 10"), "range.clamp",
     {(EX.a, EX.p, Literal(9))}, {(EX.a, EX.p, Literal(10))}),
    ("min-exclusive-date", 'ex:a ex:p "2020-01-01"^^xsd:date .' + PROP.format('sh:minExclusive "2020-01-01"^^xsd:date'),
     "range.clamp", {(EX.a, EX.p, Literal("2020-01-02", datatype=XSD.date))}, None),
    ("languagein", 'ex:a ex:p "hi"@de .' + PROP.format('sh:languageIn ( "en" "fr" )'), "languageIn.retag",
     {(EX.a, EX.p, Literal("hi", lang="en"))}, {(EX.a, EX.p, Literal("hi", lang="de"))}),
    ("uniquelang", 'ex:a ex:p "a"@en, "b"@en, "c"@fr .' + PROP.format("sh:uniqueLang true"),
     "uniqueLang.drop_duplicates", set(), {(EX.a, EX.p, Literal("b", lang="en"))}),
    ("equals", "ex:a ex:p 1 ; ex:q 2 ." + PROP.format("sh:equals ex:q"), "equals.align",
     {(EX.a, EX.p, Literal(2)), (EX.a, EX.q, Literal(1))}, set()),
    ("disjoint", "ex:a ex:p 1 ; ex:q 1 ." + PROP.format("sh:disjoint ex:q"), "disjoint.drop_shared",
     set(), {(EX.a, EX.p, Literal(1))}),
    ("lessthan", "ex:a ex:p 5 ; ex:q 3 ." + PROP.format("sh:lessThan ex:q"), "lessThan.adjust",
     {(EX.a, EX.p, Literal(2))}, {(EX.a, EX.p, Literal(5))}),
    ("lessthanorequals", "ex:a ex:p 5 ; ex:q 3 ." + PROP.format("sh:lessThanOrEquals ex:q"), "lessThan.adjust",
     {(EX.a, EX.p, Literal(3))}, {(EX.a, EX.p, Literal(5))}),
    ("closed", "ex:a ex:p 1 ; ex:z 2 .\nex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:closed true ; "
               "sh:property [ sh:path ex:p ] .", "closed.drop_property", set(), {(EX.a, EX.z, Literal(2))}),
    # pySHACL reports the sh:node failure's sh:detail too: repairing it directly makes the sh:node result moot
    ("node", "ex:a ex:p ex:b . ex:b ex:q 1 ." + PROP.format("sh:node ex:N") +
     "ex:N a sh:NodeShape ; sh:property [ sh:path ex:name ; sh:minCount 1 ; sh:datatype xsd:string ] .",
     "minCount.add_values", {(EX.b, EX.name, Literal(""))}, set()),
    ("node-literal", 'ex:a ex:p "7" .' + PROP.format("sh:node [ sh:datatype xsd:integer ]"), "node.descend",
     {(EX.a, EX.p, Literal(7))}, {(EX.a, EX.p, Literal("7"))}),
    ("and", "ex:a ex:r 1 .\nex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:and ( "
            "[ sh:property [ sh:path ex:p ; sh:minCount 1 ; sh:in ( ex:x ) ] ] "
            "[ sh:property [ sh:path ex:q ; sh:minCount 1 ; sh:in ( ex:y ) ] ] ) .", "and.descend",
     {(EX.a, EX.p, EX.x), (EX.a, EX.q, EX.y)}, set()),
    ("or", "ex:a ex:r 1 .\nex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:or ( "
           "[ sh:property [ sh:path ex:p ; sh:minCount 2 ; sh:datatype xsd:string ] ] "
           "[ sh:property [ sh:path ex:q ; sh:minCount 1 ; sh:hasValue ex:y ] ] ) .", "or.satisfy_branch",
     {(EX.a, EX.q, EX.y)}, set()),
    ("xone", "ex:a ex:p 1 ; ex:q 1 .\nex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:xone ( "
             "[ sh:property [ sh:path ex:p ; sh:minCount 1 ] ] [ sh:property [ sh:path ex:q ; sh:minCount 1 ] ] ) .",
     "xone.satisfy_one", set(), {(EX.a, EX.q, Literal(1))}),
    ("not", 'ex:a ex:p 42, "ok" .' + PROP.format("sh:not [ sh:datatype xsd:integer ]"), "not.break",
     {(EX.a, EX.p, Literal("42"))}, {(EX.a, EX.p, Literal(42))}),
    ("qualified-min", "ex:a ex:p ex:b . ex:t1 a ex:Thumb ." +
     PROP.format("sh:qualifiedValueShape [ sh:class ex:Thumb ] ; sh:qualifiedMinCount 1"),
     "qualified.add_conforming", {(EX.a, EX.p, EX.t1)}, set()),
    # no sh:class to find candidates by: an existing node holding the value the qualified shape requires is linked
    ("qualified-min-by-value", "ex:a ex:p ex:b . ex:r1 ex:role ex:v ." +
     PROP.format("sh:qualifiedValueShape [ sh:property [ sh:path ex:role ; sh:hasValue ex:v ] ] ; "
                 "sh:qualifiedMinCount 1"), "qualified.add_conforming", {(EX.a, EX.p, EX.r1)}, set()),
    # another shape on the path requires ex:x, which is there: the second value must be another one
    ("mincount-distinct", "ex:a ex:p ex:x .\nex:S a sh:NodeShape ; sh:targetNode ex:a ; "
                          "sh:property [ sh:path ex:p ; sh:hasValue ex:x ] , [ sh:path ex:p ; sh:minCount 2 ] .",
     "minCount.add_values", None, set()),
    ("qualified-max", "ex:a ex:p ex:t1, ex:t2 . ex:t1 a ex:Thumb . ex:t2 a ex:Thumb ." +
     PROP.format("sh:qualifiedValueShape [ sh:class ex:Thumb ] ; sh:qualifiedMaxCount 1"),
     "qualified.drop_surplus", set(), {(EX.a, EX.p, EX.t2)}),
]


@pytest.mark.parametrize("text,operator,added,removed", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_operator_repairs_minimal_graph(text, operator, added, removed):
    g = Graph().parse(data=HEAD + text, format="turtle")
    shapes_before = shape_triples(g)
    res = repair(g, g, keep_values=True)  # the value-keeping operators (by default an optional bad value is dropped)
    assert res.conforms, res.to_dict()
    assert operator in [a.operator for a in res.operators_applied]
    assert res.added == added if added is not None else True
    assert removed is None or res.removed == removed
    assert shapes_before <= set(res.graph), "shape triples must never change"
    assert len(g) == len(Graph().parse(data=HEAD + text, format="turtle")), "the input graph is not modified"


def test_every_core_component_has_a_strategy():
    core = ["Class", "Datatype", "NodeKind", "MinCount", "MaxCount", "MinLength", "MaxLength", "Pattern", "In",
            "HasValue", "MinInclusive", "MinExclusive", "MaxInclusive", "MaxExclusive", "LanguageIn", "UniqueLang",
            "Equals", "Disjoint", "LessThan", "LessThanOrEquals", "Closed", "Node", "QualifiedMinCount",
            "QualifiedMaxCount", "And", "Or", "Xone", "Not"]
    for name in core:
        assert strategies_for(SH[f"{name}ConstraintComponent"]), name
    assert all(n in STRATEGIES for names in REGISTRY.values() for n in names)


@pytest.mark.parametrize("pattern", ["^A[0-9]{2}$", "^(foo|bar)-\\d+$", "[a-z]+@[a-z]+\\.org", "^\\w{3}$", "^B"])
def test_generate_matches_pattern(pattern):
    import re

    text = generate(pattern)
    assert text is not None and re.search(pattern, text)


def test_pattern_not_derivable_is_left_unrepaired():
    text = HEAD + 'ex:a ex:p "x" .' + PROP.format('sh:pattern "^(?=a)b"')
    g = Graph().parse(data=text, format="turtle")
    res = repair(g, g, keep_values=True)
    assert not res.conforms
    assert any("proposer" in why or "failed" in why for why in res.reasons.values())


def test_fresh_values_are_deterministic():
    text = HEAD + "ex:a ex:q 1 ." + PROP.format("sh:minCount 1 ; sh:class ex:C")
    g = Graph().parse(data=text, format="turtle")
    a, b = repair(g, g), repair(g, g)
    assert a.added == b.added and a.conforms
    assert any(isinstance(o, URIRef) and str(o).startswith("urn:owl-memory:new:") for _, _, o in a.added)


@pytest.mark.parametrize("pattern, expected", [
    ("^https?://", "http://example.org/svc1-endpoint"),
    ("^https?://(creativecommons\\.org|opensource\\.org)/", "http://creativecommons.org/svc1-endpoint"),
    ("^urn:x:[0-9]+$", "urn:x:0"),
])
def test_iris_from_patterns_are_completed_only_where_the_pattern_allows(pattern, expected):
    from owl_memory.repair.synth import generate_iri

    assert generate_iri(pattern, "", "svc1-endpoint") == expected


@pytest.mark.parametrize("text, operator, added, removed", [
    # an existing node already reaches a value along the rest of the sequence: one link (a new chain would be two)
    ("ex:a ex:q 1 . ex:n ex:r 5 .\nex:S a sh:NodeShape ; sh:targetNode ex:a ; "
     "sh:property [ sh:path ( ex:p ex:r ) ; sh:minCount 1 ] .", "minCount.link_existing", {(EX.a, EX.p, EX.n)}, set()),
    # an optional bad value: dropping it (one triple) is smaller than any replacement (two)
    ('ex:a ex:p "abc" .' + PROP.format("sh:datatype xsd:integer"), "value.drop", set(),
     {(EX.a, EX.p, Literal("abc"))}),
    ('ex:a ex:p "abc" .' + PROP.format('sh:in ( "x" "y" )'), "value.drop", set(), {(EX.a, EX.p, Literal("abc"))}),
])
def test_the_smallest_change_set_is_taken_by_default(text, operator, added, removed):
    """Candidates are tried smallest change set first; keep_values=True never drops an offending value (nor puts a
    datatype's placeholder in place of "abc": that one is left, and the data does not conform)."""
    g = Graph().parse(data=HEAD + text, format="turtle")
    res = repair(g, g)
    assert res.conforms and [a.operator for a in res.operators_applied] == [operator]
    assert res.added == added and res.removed == removed
    kept = repair(g, g, keep_values=True)
    assert "value.drop" not in [a.operator for a in kept.operators_applied]
    if "xsd:integer" in text:  # no integer keeps "abc": it is left
        assert not kept.conforms and (EX.a, EX.p, Literal("abc")) in kept.graph
    else:
        assert kept.conforms


def test_a_required_value_is_not_dropped():
    """The shape's own sh:minCount needs the value: it is replaced, not dropped."""
    g = Graph().parse(data=HEAD + 'ex:a ex:p "abc" .' + PROP.format("sh:datatype xsd:integer ; sh:minCount 1"),
                      format="turtle")
    res = repair(g, g)
    assert res.conforms and res.added == {(EX.a, EX.p, Literal("0", datatype=XSD.integer))}
    assert [a.operator for a in res.operators_applied] == ["datatype.convert"]  # the datatype's default
    kept = repair(g, g, keep_values=True)  # keeping values, the placeholder never takes the user's text's place
    assert not kept.conforms and kept.added == set() and (EX.a, EX.p, Literal("abc")) in kept.graph


def test_the_registry_holds_typed_strategies_filled_by_the_decorator():
    """Every entry is a Strategy under its own id; an id is registered once; the views cannot be written."""
    from owl_memory.repair.registry import Strategy, strategy

    assert all(isinstance(s, Strategy) and s.name == name for name, s in STRATEGIES.items())
    assert STRATEGIES["class.add_type"].component == SH.ClassConstraintComponent
    assert STRATEGIES["range.clamp"].component is None and len(STRATEGIES["range.clamp"].components) == 4
    with pytest.raises(ValueError, match="already exists"):
        strategy("class.add_type", SH.ClassConstraintComponent, bindings={})(lambda ctx, v: [])
    with pytest.raises(TypeError):
        STRATEGIES["x"] = STRATEGIES["class.add_type"]
