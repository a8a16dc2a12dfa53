"""Valid instance data from shapes: one node per targeted class, a value per property shape, checked by pySHACL."""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import Graph, URIRef

from ..errors import InstanceError
from ..rdfio import load_graph
from ..vocab import OWL, RDF, RDFS, SH, XSD, local_name
from .patch import Context
from .paths import fresh
from .synth import synthesize
from .verify import verify

NAMESPACE = "urn:owl-memory:instance:"
_BUILTIN = tuple(str(ns) for ns in (RDF, RDFS, XSD, OWL, SH))  # classes that name literals or the vocabulary itself


@dataclass(frozen=True)
class InstanceData:
    """Instance data built from shapes.

    Args:
        graph: the conforming data graph.
        classes: the classes that got an instance (IRIs as text, sorted).
        skipped: targeted classes left out because no conforming instance of them could be built.
    """

    graph: Graph
    classes: tuple
    skipped: tuple


def build_instances(shapes, *, namespace: str = NAMESPACE, optional: bool = True,
                    max_rounds: int = 10) -> InstanceData:
    """Data conforming to `shapes`: an instance of every targeted class with a value for each property shape
    (required ones, and optional ones too when `optional`), completed by the repair loop where the shapes ask more
    (SPARQL constraints); a class whose instance still violates is left out. InstanceError when none is left."""
    shapes = load_graph(shapes)
    roots = {URIRef(namespace + local_name(c)): c for c in targeted_classes(shapes)}
    g = draft(shapes, roots, optional)
    g, skipped = _complete(g, shapes, roots, max_rounds)
    kept = sorted(str(c) for n, c in roots.items() if (n, RDF.type, c) in g)
    if not kept:
        raise InstanceError("no conforming instance of any targeted class could be built from these shapes; "
                            "check that they target classes (sh:targetClass) and that their constraints agree")
    return InstanceData(g, tuple(kept), tuple(sorted(str(c) for c in skipped)))


def targeted_classes(shapes: Graph) -> list:
    """Classes some node shape targets (sh:targetClass, implicit class targets), vocabulary classes left out."""
    classes = set(shapes.objects(None, SH.targetClass))
    classes |= {s for s in shapes.subjects(RDF.type, RDFS.Class) if (s, RDF.type, SH.NodeShape) in shapes}
    return sorted(c for c in classes if isinstance(c, URIRef) and not str(c).startswith(_BUILTIN))


def class_shapes(shapes: Graph, cls) -> list:
    """Node shapes whose class target (explicit or implicit) is `cls`."""
    found = set(shapes.subjects(SH.targetClass, cls))
    found |= {cls} if (cls, RDF.type, SH.NodeShape) in shapes else set()
    return sorted(found)


def node_targets(shapes: Graph) -> list:
    """(node shape, node) for every IRI a node shape targets by sh:targetNode, sorted."""
    return sorted((s, n) for s, n in shapes.subject_objects(SH.targetNode) if isinstance(n, URIRef))


def draft(shapes: Graph, roots: dict, optional: bool = True) -> Graph:
    """Instances of `roots` (node -> class) and every node their values need, before any check."""
    ctx = Context(Graph(), shapes)
    todo, done = [(n, [c]) for n, c in roots.items()], set()
    for shape, node in node_targets(shapes):
        todo += _satisfy(ctx, node, shape, optional)
    while todo:
        node, wanted = todo.pop(0)
        if node in done:
            continue
        done.add(node)
        for cls in wanted:
            ctx.graph.add((node, RDF.type, cls))
            todo += [x for s in class_shapes(shapes, cls) for x in _satisfy(ctx, node, s, optional)]
    return ctx.graph


def _satisfy(ctx: Context, node, shape, optional: bool) -> list:
    """Give `node` what `shape` asks (its class, values of its property shapes and qualified value shapes);
    returns (node, classes) pairs still to fill."""
    todo = [(node, [c]) for c in ctx.params(shape, "class") if (node, RDF.type, c) not in ctx.graph]
    for c in [c for _, cs in todo for c in cs]:
        ctx.graph.add((node, RDF.type, c))
    for ps in [*ctx.params(shape, "property"), *([shape] if ctx.param(shape, "path") is not None else [])]:
        todo += _values_for(ctx, node, ps, optional)
    return todo


def _values_for(ctx: Context, node, ps, optional: bool) -> list:
    """Add the values one property shape asks of `node` (a qualified shape's count is met by a node built for it)."""
    path, least = ctx.param(ps, "path"), int(ctx.param(ps, "minCount") or 0)
    qualified, todo = ctx.param(ps, "qualifiedValueShape"), []
    if not isinstance(path, URIRef) or ctx.param(ps, "maxCount") == 0:
        return []
    for i in range(int(ctx.param(ps, "qualifiedMinCount") or 0) if qualified is not None else 0):
        value = fresh(node, ps, "qualified", i)
        ctx.graph.add((node, path, value))
        todo += _satisfy(ctx, value, qualified, optional)
    required = ctx.param(ps, "hasValue")
    if required is not None:
        ctx.graph.add((node, path, required))
    have = set(ctx.graph.objects(node, path))
    for i in range(max(least, 1 if optional and qualified is None else 0) - len(have)):
        value, extra = synthesize(ctx, ps, node, i, have)
        have.add(value)
        ctx.graph.add((node, path, value))
        for t in extra:
            ctx.graph.add(t)
        todo += [(t[0], [t[2]]) for t in extra if t[1] == RDF.type]
    return todo


def _complete(g: Graph, shapes: Graph, roots: dict, max_rounds: int) -> tuple[Graph, list]:
    """`g` repaired to conform; root instances still violating are dropped (with what only they reach)."""
    if verify(g, shapes).conforms:
        return g, []
    from .loop import repair

    res = repair(g, shapes, max_rounds=max_rounds, keep_values=True)  # instance data keeps every value it can
    if res.conforms:
        return res.graph, []
    bad = {n for n in roots if n in {URIRef(f) for f in verify(res.graph, shapes).focus_nodes}}
    bad = bad or set(roots)
    kept = _without(res.graph, bad)
    if not verify(kept, shapes).conforms:
        raise InstanceError(f"no conforming instance data could be built from these shapes "
                            f"({', '.join(res.unrepaired[:3])} remain); give the missing values in a seed graph")
    return kept, [roots[n] for n in sorted(bad)]


def _without(g: Graph, nodes: set) -> Graph:
    """A copy of `g` without the triples of `nodes` (subject or object)."""
    out = Graph()
    for t in g:
        if t[0] not in nodes and t[2] not in nodes:
            out.add(t)
    return out
