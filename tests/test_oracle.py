"""The repairability oracle: minimal repair sizes, proofs of no repair within the bound, and its rules."""

from rdflib import Graph

from owl_memory.repair import repair
from owl_memory_bench.repair.oracle import oracle

HEAD = """@prefix ex: <http://ex.org/> . @prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""


def _g(text: str) -> Graph:
    """Parse Turtle with the test prefixes."""
    return Graph().parse(data=HEAD + text, format="turtle")


def test_missing_value_needs_one_triple():
    shapes = _g("ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:minCount 1 ] .")
    v = oracle(_g("ex:a ex:q 1 ."), shapes)
    assert v.status == "repairable" and v.minimal_size == 1 and v.validations >= 2


def test_two_missing_values_need_two_triples():
    shapes = _g("ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:minCount 2 ] .")
    assert oracle(_g("ex:a ex:q 1 ."), shapes).minimal_size == 2
    assert oracle(_g("ex:a ex:q 1 ."), shapes, max_size=1).status == "none"


def test_a_fixed_term_has_no_repair():
    shapes = _g("ex:S a sh:NodeShape ; sh:targetNode 42 ; sh:datatype xsd:string .")
    assert oracle(Graph(), shapes).status == "none"


def test_target_types_are_never_removed():
    """Dropping the type would make the node stop being a target: the rules forbid it, a value must be added."""
    shapes = _g("ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property [ sh:path ex:p ; sh:minCount 1 ] .")
    data = _g("ex:a a ex:C .")
    v = oracle(data, shapes, max_size=1)
    assert v.status == "repairable" and v.minimal_size == 1
    res = repair(data, shapes)
    assert res.conforms and not res.removed


def test_conforming_data_needs_nothing():
    shapes = _g("ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:maxCount 1 ] .")
    assert oracle(_g("ex:a ex:p 1 ."), shapes).status == "conforms"


def test_budget_exhaustion_is_unknown_not_none():
    shapes = _g("ex:S a sh:NodeShape ; sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:minCount 2 ] .")
    v = oracle(_g("ex:a ex:q 1 . ex:b ex:q 2 . ex:c ex:q 3 ."), shapes, budget=3)
    assert v.status == "unknown" and v.validations == 3
