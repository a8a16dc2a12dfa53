"""Validators nobody here wrote, read from the package that ships them: the Brick schema's shapes (`brickschema`).

Brick's Brick.ttl holds its ontology, its validating shapes and its inference rules in one graph. The validating
part is taken: every node shape with a Core target of its own (sh:targetClass, sh:targetSubjectsOf,
sh:targetObjectsOf) and every class that is its own shape (owl:Class and sh:NodeShape), none that carries SHACL rules
or SPARQL (inference and SPARQL checks, not Core validation), with every shape, list and path they reach. A class
shape is also typed rdfs:Class: OWL's vocabulary makes owl:Class a subclass of rdfs:Class, and SHACL reads implicit
class targets off rdfs:Class, so this states the entailment the file leaves to a reasoner.
"""

from __future__ import annotations

from importlib import resources, util

from rdflib import BNode, Graph, URIRef

from owl_memory.vocab import OWL, RDF, RDFS, SH

BRICK_VERSION = "1.4"  # the newest release brickschema 0.8 ships whose Brick.ttl parses on its own
_TARGETS = (SH.targetClass, SH.targetSubjectsOf, SH.targetObjectsOf)
_OUTSIDE_CORE = (SH.rule, SH.sparql, SH.target)  # inference rules, SPARQL constraints and targets
_KEPT = (RDF.type, RDF.first, RDF.rest)


def brick_installed() -> bool:
    """True when the brickschema package is installed."""
    return util.find_spec("brickschema") is not None


def brick_shapes(version: str = BRICK_VERSION) -> Graph:
    """The validating shapes of the installed Brick release (see the module doc); SystemExit saying what to install
    when brickschema is absent."""
    if not brick_installed():
        raise SystemExit("the brick set reads the shapes the brickschema package ships: pip install brickschema")
    g = Graph().parse(str(resources.files("brickschema") / "ontologies" / version / "Brick.ttl"), format="turtle")
    return validating_part(g)


def validating_part(g: Graph) -> Graph:
    """The node shapes of `g` with a Core target of their own or a class of their own, without rules or SPARQL,
    and everything they reach (see the module doc)."""
    targeted = {s for p in _TARGETS for s in g.subjects(p, None)}
    classes = {s for s in g.subjects(RDF.type, SH.NodeShape) if (s, RDF.type, OWL.Class) in g
               and (s, SH.property, None) in g}
    roots = {s for s in targeted | classes if not any((s, p, None) in g for p in _OUTSIDE_CORE)}
    out = Graph()
    for prefix, namespace in g.namespaces():
        out.bind(prefix, namespace)
    seen, todo = set(), sorted(roots, key=str)
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for p, o in g.predicate_objects(node):
            if p in _OUTSIDE_CORE or not (str(p).startswith(str(SH)) or p in _KEPT):
                continue
            out.add((node, p, o))
            if isinstance(o, BNode) or (isinstance(o, URIRef) and p != RDF.type and _describes(g, o)):
                todo.append(o)
    for c in classes & roots:
        out.add((c, RDF.type, RDFS.Class))
    return out


def _describes(g: Graph, node) -> bool:
    """True when `node` is a shape or a list in `g` (it has SHACL parameters or list cells of its own)."""
    return any(str(p).startswith(str(SH)) or p == RDF.first for p in g.predicates(node, None))
