"""Minimal-change rules of a repair: which nodes the shapes target, which triples no patch may remove, and whether a
patch keeps every target and every node it touches."""

from __future__ import annotations

from rdflib import BNode, Graph, Literal, Variable

from ..adapters.sparql import evaluate
from ..errors import QueryFailed
from ..vocab import RDF, RDFS, SH, local_name
from .patch import Patch, applied


def target_nodes(data: Graph, shapes: Graph, shape=None) -> set:
    """Every node `shape` targets, any shape's when None (targetNode, targetClass with subclasses, implicit class,
    subjects/objects of, SHACL-SPARQL targets)."""
    out = set(shapes.objects(shape, SH.targetNode))
    classes = set(shapes.objects(shape, SH.targetClass))
    classes |= {s for s in shapes.subjects(RDF.type, RDFS.Class) if shape in (None, s)
                and ((s, RDF.type, SH.NodeShape) in shapes or (s, RDF.type, SH.PropertyShape) in shapes)}
    for c in classes:
        for sub in set(data.transitive_subjects(RDFS.subClassOf, c)) | {c}:
            out |= set(data.subjects(RDF.type, sub))
    for p in shapes.objects(shape, SH.targetSubjectsOf):
        out |= set(data.subjects(p, None))
    for p in shapes.objects(shape, SH.targetObjectsOf):
        out |= set(data.objects(None, p))
    return out | sparql_targets(data, shapes, shape)


def sparql_targets(data: Graph, shapes: Graph, shape=None) -> set:
    """Nodes the SHACL-SPARQL targets of `shape` (any shape's when None) select as ?this in `data`: a sh:target
    with its own sh:select, or of a sh:SPARQLTargetType whose parameters it binds. A query that does not run selects
    nothing here (validation reports it)."""
    out = set()
    for target in set(shapes.objects(shape, SH.target)):
        kinds = [target, *(k for k in shapes.objects(target, RDF.type) if (k, SH.select, None) in shapes)]
        for kind in kinds:
            bindings = {Variable(local_name(path)): shapes.value(target, path) for path in _parameters(shapes, kind)
                        if shapes.value(target, path) is not None}
            for text in shapes.objects(kind, SH.select):
                out |= _selected(data, str(text), _prefixes(shapes, kind), bindings)
    return out


def _selected(data: Graph, text: str, prefixes: dict, bindings: dict) -> set:
    """The ?this values a SELECT finds in `data` (empty when it does not run)."""
    try:
        answer = evaluate(data, text, prefixes=prefixes, bindings=bindings)
    except QueryFailed:  # pySHACL reports a broken target itself
        return set()
    if str(THIS) not in answer.columns:
        return set()
    at = answer.columns.index(str(THIS))
    return {row[at] for row in answer.rows if row[at] is not None}


THIS = Variable("this")


def _parameters(shapes: Graph, kind) -> list:
    """The parameter paths a SPARQL target type declares (sh:parameter [ sh:path ... ])."""
    return [p for d in shapes.objects(kind, SH.parameter) if (p := shapes.value(d, SH.path)) is not None]


def _prefixes(shapes: Graph, node) -> dict:
    """Prefix -> namespace a SHACL-SPARQL node declares through sh:prefixes / sh:declare."""
    return {str(shapes.value(d, SH.prefix)): str(shapes.value(d, SH.namespace))
            for o in shapes.objects(node, SH.prefixes) for d in shapes.objects(o, SH.declare)
            if shapes.value(d, SH.prefix) is not None and shapes.value(d, SH.namespace) is not None}


def targeting(data: Graph, shapes: Graph, node) -> set:
    """The shapes that target `node` in `data` by a Core target (targetNode, targetClass with subclasses, implicit
    class, subjects/objects of); deactivated shapes left out."""
    out = set(shapes.subjects(SH.targetNode, node))
    classes = {c for t in data.objects(node, RDF.type) for c in data.transitive_objects(t, RDFS.subClassOf)
               if c is not None}
    for c in classes:
        out |= set(shapes.subjects(SH.targetClass, c))
        if (c, RDF.type, RDFS.Class) in shapes and ((c, RDF.type, SH.NodeShape) in shapes
                                                     or (c, RDF.type, SH.PropertyShape) in shapes):
            out.add(c)
    out |= {s for p in set(data.predicates(node, None)) for s in shapes.subjects(SH.targetSubjectsOf, p)}
    out |= {s for p in set(data.predicates(None, node)) for s in shapes.subjects(SH.targetObjectsOf, p)}
    return {s for s in out if not _deactivated(shapes, s)}


def _deactivated(shapes: Graph, shape) -> bool:
    """True when a shape is marked sh:deactivated true."""
    flag = shapes.value(shape, SH.deactivated)
    return isinstance(flag, Literal) and flag.toPython() is True


def shape_triples(shapes: Graph) -> set:
    """Triples that describe shapes: sh: predicates, triples of shape nodes and of blank nodes they reach."""
    sh = str(SH)
    nodes = {s for s, p, _ in shapes if str(p).startswith(sh)}
    nodes |= {s for s, _, o in shapes.triples((None, RDF.type, None)) if str(o).startswith(sh)}
    todo = [o for n in nodes for o in shapes.objects(n, None) if isinstance(o, BNode)]
    while todo:
        b = todo.pop()
        if b not in nodes:
            nodes.add(b)
            todo += [o for o in shapes.objects(b, None) if isinstance(o, BNode)]
    return {t for t in shapes if t[0] in nodes or str(t[1]).startswith(sh)}


class Guards:
    """The minimal-change rules of one repair run, fixed from the input data and shapes.

    Args:
        original: the data graph as given.
        shapes: the shapes graph.
        protected: triples the caller forbids removing (shape triples and target types are added).
        frozen: nodes the caller forbids editing: no patch adds or removes a triple about one (a sprint's baseline).
    """

    def __init__(self, original: Graph, shapes: Graph, protected=frozenset(), frozen=frozenset()) -> None:
        """Targets, protected triples (the caller's, shapes, target types), nodes with data of their own, watched
        predicates."""
        self.shapes, self.frozen = shapes, frozen
        self.targets = target_nodes(original, shapes)
        self.protected = set(protected) | shape_triples(shapes) | _target_types(original, shapes)
        self.subjects = set(original.subjects())
        self.watched = set(shapes.objects(None, SH.targetSubjectsOf)) | set(shapes.objects(None, SH.targetObjectsOf))
        self.selected = sparql_targets(original, shapes)  # a removal at one of these may stop a SPARQL target

    def allow(self, g: Graph, p: Patch, focus: set) -> bool:
        """Minimal-change rules: no protected triple, no frozen node, removals touch a repaired focus, targets and
        nodes stay."""
        if not p.added and not p.removed:
            return False
        if p.removed & self.protected or any(t[0] in self.frozen for t in p.added | p.removed):
            return False
        near = focus | p.touches
        if any(s not in near and o not in near for s, _, o in p.removed):
            return False
        if not p.removed:
            return True
        watched = any(t[1] in self.watched or t[0] in self.selected or t[2] in self.selected for t in p.removed)
        if watched and target_losses(self.targets, applied(g, p), self.shapes, focus, p.removed):
            return False
        keep = {n for n in (focus | self.targets) & self.subjects}  # a node with data of its own stays
        kept = {n for t in p.added for n in (t[0], t[2])}  # a replacement keeps the node it swaps a value on
        return all(n in kept or _still_appears(g, n, p.removed) for t in p.removed for n in (t[0], t[2]) if n in keep)


def target_losses(targets: set, after: Graph, shapes: Graph, foci, removed) -> set:
    """The nodes of `targets` a change deletes as targets (none: the change keeps the rule). A node no shape targets
    in `after` is a loss unless the change took it off a triple it removes as that triple's other end and then it is
    either a node with data of its own (a subject in `after`) that is no violation's focus (`foci`): a conforming
    value dropped from a property whose objects or subjects a shape targets; or a node with no data of its own, none
    removed (a literal, an IRI only ever used as a value): a value, dropped or replaced as on a property shape. A
    focus with data of its own taken out of its targets would hide its violation; a node whose own data goes is
    deleted."""
    ends = {n for t in removed for n in (t[0], t[2])}
    lost = targets - target_nodes(after, shapes)
    return {n for n in lost if n not in ends or (n in foci if _has_data(after, n) else _has_data(removed, n))}


def _has_data(triples, node) -> bool:
    """True when `node` is the subject of one of `triples` (a graph or a set of triples)."""
    if isinstance(triples, Graph):
        return any(True for _ in triples.triples((node, None, None)))
    return any(t[0] == node for t in triples)


def _target_types(original: Graph, shapes: Graph) -> set:
    """rdf:type triples that make a node a target of some shape: never removed."""
    classes = set(shapes.objects(None, SH.targetClass)) | set(shapes.subjects(RDF.type, RDFS.Class))
    sub = {s for c in classes for s in original.transitive_subjects(RDFS.subClassOf, c)}
    return {t for t in original.triples((None, RDF.type, None)) if t[2] in sub | classes}


def _still_appears(g: Graph, node, removed) -> bool:
    """True when `node` keeps a triple in `g` once `removed` is gone."""
    for t in g.triples((node, None, None)):
        if t not in removed:
            return True
    return any(t not in removed for t in g.triples((None, None, node)))
