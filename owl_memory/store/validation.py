"""SHACL checks of memory items against shapes/owl-memory-shapes.ttl (pyshacl)."""

from __future__ import annotations

from functools import cache

from rdflib import Graph
from rdflib.namespace import RDFS, SH

from ..adapters import pyshacl as shacl
from ..errors import InvalidItem
from ..model import ValidationReport
from ..resources import memory_ontology, memory_shapes


@cache
def _class_tree() -> Graph:
    """The subclass axioms of the memory ontology, so targetClass reaches every kind of item."""
    g = Graph(bind_namespaces="none")
    for t in memory_ontology().triples((None, RDFS.subClassOf, None)):
        g.add(t)
    return g


@cache
def _shapes():
    """The memory shapes, prepared once per process for pySHACL (shacl.prepare)."""
    return shacl.prepare(memory_shapes())


def check(*graphs: Graph, focus: list | None = None) -> ValidationReport:
    """Validate the union of `graphs` (only the `focus` nodes when given) against the memory shapes."""
    data = Graph(bind_namespaces="none")
    for g in (*graphs, _class_tree()):
        for t in g:
            data.add(t)
    conforms, report, _ = shacl.validate_prepared(data, _shapes(), focus_nodes=focus)
    msgs = sorted({_message(report, r) for r in report.subjects(SH.resultSeverity, None)})
    return ValidationReport(bool(conforms), len(msgs), tuple(msgs))


def require_valid(*graphs: Graph, what: str, focus: list | None = None) -> None:
    """Raise InvalidItem with every SHACL message when the union of `graphs` (or its `focus` nodes) fails."""
    result = check(*graphs, focus=focus)
    if not result.conforms:
        raise InvalidItem(f"{what} fails the memory shapes: " + "; ".join(result.messages))


def _message(report: Graph, result) -> str:
    """One readable line for a validation result: its message and the offending value."""
    msg = str(report.value(result, SH.resultMessage) or report.value(result, SH.sourceConstraintComponent))
    value = report.value(result, SH.value)
    return f"{msg} (got {str(value)[:80]!r})" if value is not None else msg
