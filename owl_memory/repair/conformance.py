"""Does a node conform to a shape? Read off the data when the shape only counts, lists and types values on predicate
paths; a nested pySHACL check otherwise.

Operators ask this of member shapes (sh:or, sh:xone, sh:not), qualified value shapes and candidate values. Most such
shapes in real files are small: a sh:class, or property shapes on a predicate with sh:minCount, sh:maxCount,
sh:hasValue, sh:class, sh:in, or sh:node to another such shape. For those the SHACL Core definitions are a few set
operations on the data graph, so no pySHACL run is needed (tests/test_conformance.py holds the reading to pySHACL on
generated graphs). A shape with anything else (another component, a complex path, sh:deactivated, a shape reached
again through sh:node) is checked by pySHACL.

Class membership (a SHACL instance: typed by the class or one of its subclasses) is read here too.
"""

from __future__ import annotations

from rdflib import Graph, Literal, URIRef
from rdflib.collection import Collection

from ..vocab import RDF, RDFS, SH

_NOTES = frozenset(SH[n] for n in (  # no bearing on conformance
    "name", "description", "message", "severity", "order", "group"))
_TARGETS = frozenset(SH[n] for n in (  # which nodes, not how
    "targetClass", "targetNode", "targetSubjectsOf", "targetObjectsOf"))
_NODE = frozenset({SH["class"], SH.property, SH.node}) | _NOTES | _TARGETS
_PROPERTY = frozenset({SH.path, SH.minCount, SH.maxCount, SH.hasValue, SH["class"], SH["in"], SH.node}) | _NOTES


def readable(shapes: Graph, shape, within: frozenset = frozenset()) -> bool:
    """True when conformance to `shape` can be read off the data (see the module doc); a shape that refers back to
    itself through sh:node is left to pySHACL."""
    if shape in within or not _only(shapes, shape, _NODE):
        return False
    inner = within | {shape}
    return all(readable(shapes, n, inner) for n in shapes.objects(shape, SH.node)) and all(
        _only(shapes, ps, _PROPERTY) and isinstance(shapes.value(ps, SH.path), URIRef)
        and all(readable(shapes, n, inner) for n in shapes.objects(ps, SH.node))
        for ps in shapes.objects(shape, SH.property))


def read(g: Graph, shapes: Graph, node, shape) -> bool:
    """Whether `node` conforms to a readable `shape` in `g`, by the SHACL Core definitions of its components."""
    if any(isinstance(node, Literal) or not is_instance(g, node, c) for c in shapes.objects(shape, SH["class"])):
        return False
    if any(not read(g, shapes, node, n) for n in shapes.objects(shape, SH.node)):
        return False
    for ps in shapes.objects(shape, SH.property):
        have = set(g.objects(node, shapes.value(ps, SH.path))) if not isinstance(node, Literal) else set()
        if any(len(have) < int(str(n)) for n in shapes.objects(ps, SH.minCount)):
            return False
        if any(len(have) > int(str(n)) for n in shapes.objects(ps, SH.maxCount)):
            return False
        if any(h not in have for h in shapes.objects(ps, SH.hasValue)):
            return False
        if any(isinstance(x, Literal) or not is_instance(g, x, c)
               for c in shapes.objects(ps, SH["class"]) for x in have):
            return False
        if any(not have <= set(Collection(shapes, lst)) for lst in shapes.objects(ps, SH["in"])):
            return False
        if any(not read(g, shapes, x, n) for n in shapes.objects(ps, SH.node) for x in have):
            return False
    return True


def _only(shapes: Graph, node, allowed: frozenset) -> bool:
    """True when every sh: predicate of `node` is in `allowed`."""
    sh = str(SH)
    return all(p in allowed for p in shapes.predicates(node, None) if str(p).startswith(sh))


def instances(g: Graph, cls) -> list:
    """Nodes typed `cls` or one of its rdfs:subClassOf descendants, sorted."""
    classes = set(g.transitive_subjects(RDFS.subClassOf, cls))
    return sorted({s for c in classes for s in g.subjects(RDF.type, c)})


def is_instance(g: Graph, node, cls) -> bool:
    """True when `node` has a type that is `cls` or a subclass of it."""
    return any(cls in set(g.transitive_objects(t, RDFS.subClassOf)) for t in g.objects(node, RDF.type))
