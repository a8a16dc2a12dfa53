"""SHACL property paths: walking them over a graph and the triples that link a value along one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rdflib import Graph, URIRef
from rdflib.collection import Collection

from ..store.blobs import sha256
from ..vocab import RDF, RDFS, SH
from .verify import Violation

if TYPE_CHECKING:
    from .patch import Context


NEW = "urn:owl-memory:new:"


def steps(shapes: Graph, path) -> list | None:
    """A path as (direction, predicate) steps ("fwd", "inv", "opt" for zero-or-more parts), or None."""
    if isinstance(path, URIRef):
        return [("fwd", path)]
    if path is None:
        return None
    if shapes.value(path, RDF.first) is not None:
        out = [steps(shapes, p) for p in Collection(shapes, path)]
        return None if any(s is None for s in out) else [x for s in out for x in s]
    inverse = shapes.value(path, SH.inversePath)
    if isinstance(inverse, URIRef):
        return [("inv", inverse)]
    for kind, mark in ((SH.zeroOrMorePath, "opt"), (SH.zeroOrOnePath, "maybe")):
        inner = shapes.value(path, kind)
        if inner is not None and steps(shapes, inner) is not None:
            return [(mark, tuple(steps(shapes, inner)))]
    return None


def path_of(ctx: Context, v: Violation):
    """The path node of a violation: from the report, else sh:path of its source shape."""
    return ctx.param(v.shape, "path") if v.shape is not None else None


def values(ctx: Context, focus, path) -> list:
    """Value nodes of `focus` along a path of simple steps (sorted); the focus itself when there is no path."""
    st = steps(ctx.shapes, path) if path is not None else []
    if st is None:
        return []
    nodes = {focus}
    for kind, p in st:
        nodes = _step(ctx.graph, nodes, kind, p)
    return sorted(nodes)


def _step(g: Graph, nodes: set, kind: str, p) -> set:
    """Nodes one step away (zero-or-more steps for "opt")."""
    if kind == "fwd":
        return {o for n in nodes for o in g.objects(n, p)}
    if kind == "inv":
        return {s for n in nodes for s in g.subjects(p, n)}
    if kind == "maybe":
        nxt = set(nodes)
        for k, q in p:
            nxt = _step(g, nxt, k, q)
        return set(nodes) | nxt
    out, frontier = set(nodes), set(nodes)
    while frontier:
        nxt = frontier
        for k, q in p:
            nxt = _step(g, nxt, k, q)
        frontier = nxt - out
        out |= nxt
    return out


def value_triple(ctx: Context, focus, path, value):
    """The triple linking focus to value along a one-step path, or None for longer paths."""
    st = steps(ctx.shapes, path) if path is not None else None
    if not st or len(st) != 1 or st[0][0] not in ("fwd", "inv"):
        return None
    kind, p = st[0]
    t = (focus, p, value) if kind == "fwd" else (value, p, focus)
    return t if t in ctx.graph else None


def link_triples(ctx: Context, focus, path, value) -> set | None:
    """Triples that make `value` a value of `focus` along `path`, reusing existing intermediate nodes."""
    st = steps(ctx.shapes, path)
    if not st:
        return None
    st = [x for s in st if s[0] != "opt" for x in (s[1] if s[0] == "maybe" else [s])]
    if not st or any(k not in ("fwd", "inv") for k, _ in st):
        return None
    out, node = set(), focus
    for i, (kind, p) in enumerate(st):
        last = i == len(st) - 1
        have = sorted(_step(ctx.graph, {node}, kind, p))
        nxt = value if last else (have[0] if have else fresh(node, p, i))
        out.add((node, p, nxt) if kind == "fwd" else (nxt, p, node))
        node = nxt
    return {t for t in out if t not in ctx.graph}


def fresh(*parts) -> URIRef:
    """A deterministic new IRI for a node the repair has to create."""
    return URIRef(NEW + sha256("|".join(str(p) for p in parts))[:16])


def instances(g: Graph, cls) -> list:
    """Nodes typed `cls` or one of its rdfs:subClassOf descendants, sorted."""
    classes = set(g.transitive_subjects(RDFS.subClassOf, cls))
    return sorted({s for c in classes for s in g.subjects(RDF.type, c)})


def is_instance(g: Graph, node, cls) -> bool:
    """True when `node` has a type that is `cls` or a subclass of it."""
    return any(cls in set(g.transitive_objects(t, RDFS.subClassOf)) for t in g.objects(node, RDF.type))
