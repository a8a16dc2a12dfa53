"""SHACL checks of memory items against shapes/owl-memory-shapes.ttl (pyshacl), with the stored context they need."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from rdflib import Graph, URIRef
from rdflib.namespace import RDFS, SH
from rdflib.term import Node

from ..adapters import pyshacl as shacl
from ..errors import InvalidItem
from ..model import ItemSpec, ValidationReport
from ..resources import memory_ontology, memory_shapes
from ..vocab import ITEM
from .backend import Backend
from .items import Rows, graph_of, linked_ids


@cache
def _class_tree() -> Graph:
    """The subclass axioms of the memory ontology, so targetClass reaches every kind of item."""
    g = Graph(bind_namespaces="none")
    for t in memory_ontology().triples((None, RDFS.subClassOf, None)):
        g.add(t)
    return g


@cache
def _shapes() -> shacl.Prepared:
    """The memory shapes, prepared once per process for pySHACL (shacl.prepare)."""
    return shacl.prepare(memory_shapes())


def check(*graphs: Graph, focus: list[URIRef] | None = None) -> ValidationReport:
    """Validate the union of `graphs` (only the `focus` nodes when given) against the memory shapes."""
    data = Graph(bind_namespaces="none")
    for g in (*graphs, _class_tree()):
        for t in g:
            data.add(t)
    conforms, report, _ = shacl.validate_prepared(data, _shapes(), focus_nodes=focus)
    msgs = sorted({_message(report, r) for r in report.subjects(SH.resultSeverity, None)})
    return ValidationReport(bool(conforms), len(msgs), tuple(msgs))


def require_valid(*graphs: Graph, what: str, focus: list[URIRef] | None = None) -> None:
    """Raise InvalidItem with every SHACL message when the union of `graphs` (or its `focus` nodes) fails."""
    result = check(*graphs, focus=focus)
    if not result.conforms:
        raise InvalidItem(f"{what} fails the memory shapes: " + "; ".join(result.messages))


def _message(report: Graph, result: Node) -> str:
    """One readable line for a validation result: its message and the offending value."""
    msg = str(report.value(result, SH.resultMessage) or report.value(result, SH.sourceConstraintComponent))
    value = report.value(result, SH.value)
    return f"{msg} (got {str(value)[:80]!r})" if value is not None else msg


def check_batch(backend: Backend, items: Sequence[tuple[ItemSpec, Rows]]) -> set[tuple[Node, Node, Node]]:
    """Validate a batch of new items in one pyshacl run; InvalidItem names the first failing item; returns the stored
    context it was validated against (a write under the lock validates again if that changed meanwhile)."""
    stored = batch_context(backend, [spec for spec, _ in items])
    focus = sorted({node for s, _ in items for node in _changed(s)})
    if not check(graph_of(row for _, rows in items for row in rows), stored, focus=focus).conforms:
        graphs = {s.id: graph_of(rows) for s, rows in items}
        for spec, _ in items:
            linked = [graphs[i] for i in linked_ids(spec) if i in graphs]
            require_valid(graphs[spec.id], *linked, batch_context(backend, [spec]),
                          what=f"item {str(spec.title)[:60]!r}", focus=_changed(spec))
    return set(stored)


def batch_context(backend: Backend, specs: Sequence[ItemSpec]) -> Graph:
    """The stored triples a batch of new items is validated against: those of the stored items they link to, with
    the types of the nodes those point to (the batch's own triples type every other node they name, see
    items.item_rows, so nothing else of the store can change its check)."""
    batch = {ITEM[s.id] for s in specs}
    return _around(backend, {ITEM[i] for s in specs for i in linked_ids(s)} - batch, batch)


def context(backend: Backend, g: Graph, items: Sequence[URIRef]) -> Graph:
    """What sh:class checks need beside `g`: the stored triples of the other items it touches, the types of its other
    nodes, and the types of the nodes those stored items point to."""
    nodes = {n for n in set(g.objects()) | set(g.subjects()) if isinstance(n, URIRef)} - set(items)
    return _around(backend, nodes, set(items))


def _around(backend: Backend, nodes: set[URIRef], skip: set[URIRef]) -> Graph:
    """The stored triples of `nodes` (all of an item's, the types of any other node), and those of the nodes they
    point to (but `nodes` and `skip`)."""
    ctx = backend.describe(nodes)
    hop = {o for o in ctx.objects() if isinstance(o, URIRef)} - nodes - skip
    return ctx + backend.describe(hop)


def _changed(spec: ItemSpec) -> list[URIRef]:
    """The nodes a new item's triples describe: the item, and the rule it refines when it is an exception."""
    return [ITEM[spec.id]] + ([ITEM[spec.refines]] if spec.scope == "exception" and spec.refines is not None else [])
