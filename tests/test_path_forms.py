"""Generated cases: every SHACL Core value component on every path form, combined constraints on one node, sh:or /
sh:xone over datatypes and classes, every target kind. Each case is repaired, or the oracle (independent of the
operators) proves no repair exists within its bound and the repairer says why."""

from __future__ import annotations

import pytest
from rdflib import Graph

from owl_memory.repair import repair, target_nodes
from owl_memory.repair.loop import FIXED_TERM
from owl_memory_bench.repair.oracle import oracle

PREFIX = """@prefix ex: <http://example.org/> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
"""
PATHS = {  # form -> (sh:path, triples making {v} a value of ex:a along it)
    "predicate": ("ex:p", "ex:a ex:p {v} ."),
    "inverse": ("[ sh:inversePath ex:p ]", "{v} ex:p ex:a ."),
    "sequence": ("( ex:p ex:q )", "ex:a ex:p ex:m . ex:m ex:q {v} ."),
    "alternative": ("[ sh:alternativePath ( ex:p ex:q ) ]", "ex:a ex:q {v} ."),
    "zeroOrMore": ("[ sh:zeroOrMorePath ex:p ]", "ex:a ex:p {v} ."),
    "oneOrMore": ("[ sh:oneOrMorePath ex:p ]", "ex:a ex:p ex:m . ex:m ex:p {v} ."),
    "zeroOrOne": ("[ sh:zeroOrOnePath ex:p ]", "ex:a ex:p {v} ."),
}
COMPONENTS = {  # component -> (constraint, values present, values are literals)
    "minCount": ("sh:minCount 1", [], False),
    "maxCount": ("sh:maxCount 1", ["ex:v1", "ex:v2"], False),
    "class": ("sh:class ex:D", ["ex:v1"], False),
    "hasValue": ("sh:hasValue ex:v9", [], False),
    "in": ("sh:in ( ex:v1 ex:v2 )", ["ex:w"], False),
    "nodeKind": ("sh:nodeKind sh:IRI", ['"x"'], True),
    "datatype": ("sh:datatype xsd:integer", ['"x"'], True),
    "pattern": ('sh:pattern "^A[0-9]+$"', ['"b"'], True),
    "minLength": ("sh:minLength 3", ['"ab"'], True),
    "maxLength": ("sh:maxLength 2", ['"abcd"'], True),
}
# A zero-length path makes the focus ex:a (an IRI) a value of itself: no data edit changes its term.
NO_REPAIR = {(f, c) for f in ("zeroOrMore", "zeroOrOne") for c in ("in", "datatype", "pattern", "maxLength")}
SHAPE = "ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property [ sh:path ex:p ; {} ] ."
EXTRA = {
    "combined": ('ex:a a ex:C ; ex:p "b" .', SHAPE.format(
        'sh:datatype xsd:string ; sh:pattern "^A[0-9]+$" ; sh:minLength 3 ; sh:maxLength 4 ; '
        'sh:in ( "B1" "A12" "A12345" )')),
    "or-datatypes": ('ex:a a ex:C ; ex:p "x" .', SHAPE.format(
        "sh:or ( [ sh:datatype xsd:integer ] [ sh:datatype xsd:date ] )")),
    "or-classes": ("ex:a a ex:C ; ex:p ex:v .", SHAPE.format("sh:or ( [ sh:class ex:D ] [ sh:class ex:E ] )")),
    "xone-datatypes": ('ex:a a ex:C ; ex:p "x" .', SHAPE.format(
        "sh:xone ( [ sh:datatype xsd:integer ] [ sh:datatype xsd:boolean ] )")),
    "xone-classes": ("ex:a a ex:C ; ex:p ex:v . ex:v a ex:D, ex:E .", SHAPE.format(
        "sh:xone ( [ sh:class ex:D ] [ sh:class ex:E ] )")),
    "targetNode": ("ex:a ex:q 1 .", "ex:S a sh:NodeShape ; sh:targetNode ex:a ; "
                                    "sh:property [ sh:path ex:p ; sh:minCount 1 ] ."),
    "implicit-class": ("ex:a a ex:C .", "ex:C a rdfs:Class, sh:NodeShape ; "
                                        "sh:property [ sh:path ex:p ; sh:minCount 1 ] ."),
    "subclass": ("ex:a a ex:C2 . ex:C2 rdfs:subClassOf ex:C .", SHAPE.format("sh:minCount 1")),
    "targetSubjectsOf": ("ex:a ex:r ex:b .", "ex:S a sh:NodeShape ; sh:targetSubjectsOf ex:r ; "
                                             "sh:property [ sh:path ex:p ; sh:datatype xsd:integer ; "
                                             "sh:minCount 1 ] ."),
    "targetObjectsOf": ("ex:b ex:r ex:a .", "ex:S a sh:NodeShape ; sh:targetObjectsOf ex:r ; "
                                            "sh:property [ sh:path ex:p ; sh:class ex:D ; sh:minCount 1 ] ."),
}


def _graph(data: str, shapes: str) -> Graph:
    """One graph holding a case's data and shapes (the repair never edits shape triples)."""
    return Graph().parse(data=PREFIX + data + "\n" + shapes, format="turtle")


def _path_case(form: str, component: str) -> Graph | None:
    """The case for one path form and component; None when its values could not sit on that path."""
    path, link = PATHS[form]
    constraint, vals, literal = COMPONENTS[component]
    if literal and form == "inverse":  # a literal is never a subject
        return None
    data = "ex:a a ex:C .\n" + "\n".join(link.format(v=v) for v in vals)
    return _graph(data, f"ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property [ sh:path {path} ; {constraint} ] .")


def _judge(g: Graph) -> str:
    """Repair a case and hold it to the oracle's verdict; returns the verdict."""
    verdict = oracle(g, g, max_size=2, budget=300)
    res = repair(g, g)
    assert verdict.status != "unknown", verdict
    if verdict.status == "conforms":  # a zero-length path: the focus is its own value and meets sh:minCount
        assert res.conforms and not res.added | res.removed
    elif verdict.repairable:
        assert res.conforms, res.reasons
        assert target_nodes(g, g) <= target_nodes(res.graph, g), "a repair never deletes a target"
    else:
        assert not res.conforms and all(r.startswith(FIXED_TERM) for r in res.reasons.values()), res.reasons
    return verdict.status


@pytest.mark.parametrize("form", sorted(PATHS))
def test_every_component_on_a_path_form_is_repaired_or_proved_unrepairable(form):
    verdicts = {c: _judge(g) for c in COMPONENTS if (g := _path_case(form, c)) is not None}
    assert {(form, c) for c, s in verdicts.items() if s == "none"} == {x for x in NO_REPAIR if x[0] == form}
    assert sum(s == "repairable" for s in verdicts.values()) >= 5


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_combined_logical_and_target_kind_cases_are_repaired(name):
    assert _judge(_graph(*EXTRA[name])) == "repairable"
