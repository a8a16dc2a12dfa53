"""SHACL checks of memory items against shapes/owl-memory-shapes.ttl (pyshacl)."""

from __future__ import annotations

from functools import cache

import pyshacl
from rdflib import Graph
from rdflib.namespace import RDFS, SH

from .errors import InvalidItem
from .resources import memory_ontology, memory_shapes


@cache
def _class_tree() -> Graph:
    """The subclass axioms of the memory ontology, so targetClass reaches every kind of item."""
    g = Graph()
    for t in memory_ontology().triples((None, RDFS.subClassOf, None)):
        g.add(t)
    return g


def check(graph: Graph, focus: list | None = None) -> dict:
    """Validate a graph (only the `focus` nodes when given) against the memory shapes."""
    conforms, report, _ = pyshacl.validate(graph + _class_tree(), shacl_graph=memory_shapes(), inference="none",
                                           focus_nodes=focus)
    msgs = sorted({_message(report, r) for r in report.subjects(SH.resultSeverity, None)})
    return {"conforms": bool(conforms), "violation_count": len(msgs), "messages": msgs}


def require_valid(graph: Graph, what: str, focus: list | None = None) -> None:
    """Raise InvalidItem with every SHACL message when `graph` (or its `focus` nodes) does not conform."""
    result = check(graph, focus)
    if not result["conforms"]:
        raise InvalidItem(f"{what} fails the memory shapes: " + "; ".join(result["messages"]))


def _message(report: Graph, result) -> str:
    """One readable line for a validation result: its message and the offending value."""
    msg = str(report.value(result, SH.resultMessage) or report.value(result, SH.sourceConstraintComponent))
    value = report.value(result, SH.value)
    return f"{msg} (got {str(value)[:80]!r})" if value is not None else msg
