"""Valid instance data from shapes: a root node per target (class, subjects of, objects of) with what its shapes ask,
checked by pySHACL."""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import Graph, Literal, URIRef, Variable
from rdflib.compare import to_canonical_graph

from owl_memory.adapters import sparql as sparql_text
from owl_memory.errors import InstanceError
from owl_memory.rdfio import load_graph
from owl_memory.repair import repair
from owl_memory.repair.context import Context
from owl_memory.repair.guards import THIS, sparql_targets
from owl_memory.repair.paths import fresh
from owl_memory.repair.synth import synthesize
from owl_memory.repair.verification import verify
from owl_memory.vocab import OWL, RDF, RDFS, SH, XSD, local_name

NAMESPACE = "urn:owl-memory:instance:"
DEPTH = 10  # rounds of filling what predicate targets reach (each round may reach new nodes)
_BUILTIN = tuple(str(ns) for ns in (RDF, RDFS, XSD, OWL, SH))  # classes that name literals or the vocabulary itself


@dataclass(frozen=True)
class InstanceData:
    """Instance data built from shapes.

    Args:
        graph: the conforming data graph.
        roots: what got a root node kept in the graph (IRIs as text, sorted): each targeted class (sh:targetClass,
            implicit class targets) and each node shape targeting subjects or objects of a predicate
            (sh:targetSubjectsOf, sh:targetObjectsOf). Nodes named by sh:targetNode are filled, not counted here.
        skipped: classes and node shapes left out because no conforming root for them could be built.
    """

    graph: Graph
    roots: tuple
    skipped: tuple


def build_instances(shapes, *, namespace: str = NAMESPACE, optional: bool = True,
                    max_rounds: int = 10) -> InstanceData:
    """Data conforming to `shapes`: a root for every target (an instance of each targeted class, a subject of each
    predicate a node shape targets the subjects of, an object of each it targets the objects of) with a value for each
    property shape (required ones, and optional ones too when `optional`), completed by the repair loop where the
    shapes ask more (SPARQL constraints); a root that still violates is left out. InstanceError when none is left.
    The same shapes give the same data however their blank nodes are labelled (they are relabelled canonically)."""
    shapes = canonical(load_graph(shapes))
    g, roots = draft(shapes, {URIRef(namespace + local_name(c)): c for c in targeted_classes(shapes)}, optional,
                     namespace)
    g, skipped = _complete(g, shapes, roots, max_rounds)
    kept = sorted({str(c) for n, c in roots.items() if (n, None, None) in g or (None, None, n) in g})
    if not kept:
        raise InstanceError("no conforming instance of any target could be built from these shapes; check that they "
                            "have targets (sh:targetClass, implicit class, sh:targetSubjectsOf, sh:targetObjectsOf) "
                            "and that their constraints agree")
    return InstanceData(g, tuple(kept), tuple(sorted({str(c) for c in skipped} - set(kept))))


def canonical(shapes: Graph) -> Graph:
    """A copy of `shapes` whose blank nodes carry canonical labels (rdflib.compare), prefixes kept: what is derived
    from it (fresh IRIs, sort orders) is the same for every parse of the same file."""
    out = Graph()
    for prefix, ns in shapes.namespaces():
        out.bind(prefix, ns, override=True)
    out += to_canonical_graph(shapes)
    return out


def targeted_classes(shapes: Graph) -> list:
    """Classes some node shape targets (sh:targetClass, implicit class targets), vocabulary classes left out."""
    classes = set(shapes.objects(None, SH.targetClass))
    classes |= {s for s in shapes.subjects(RDF.type, RDFS.Class) if (s, RDF.type, SH.NodeShape) in shapes}
    return sorted(c for c in classes if isinstance(c, URIRef) and not str(c).startswith(_BUILTIN))


def predicate_targets(shapes: Graph) -> list:
    """(node shape, target predicate, predicate) for every sh:targetSubjectsOf / sh:targetObjectsOf, sorted."""
    return sorted((s, t, p) for t in (SH.targetSubjectsOf, SH.targetObjectsOf)
                  for s, p in shapes.subject_objects(t) if isinstance(p, URIRef))


def class_shapes(shapes: Graph, cls) -> list:
    """Node shapes whose class target (explicit or implicit) is `cls`."""
    found = set(shapes.subjects(SH.targetClass, cls))
    found |= {cls} if (cls, RDF.type, SH.NodeShape) in shapes else set()
    return sorted(found)


def node_targets(shapes: Graph) -> list:
    """(node shape, node) for every IRI a node shape targets by sh:targetNode, sorted."""
    return sorted((s, n) for s, n in shapes.subject_objects(SH.targetNode) if isinstance(n, URIRef))


def draft(shapes: Graph, roots: dict, optional: bool = True, namespace: str = NAMESPACE) -> tuple[Graph, dict]:
    """Instances of the class roots (node -> class; a listed or patterned IRI instead where a shape of the class asks
    one), a root per predicate target, and every node their values need, before any check; returns the graph and every
    root (node -> the class or node shape it was built for)."""
    ctx, met = Context(Graph(), shapes), set()
    roots = {next((x for s in class_shapes(shapes, c) if (x := _chosen(ctx, s, n)) != n), n): c
             for n, c in roots.items()}
    todo, done = [(n, [c]) for n, c in roots.items()], set()
    for shape, node in node_targets(shapes):
        todo += _satisfy(ctx, node, shape, optional)
    for shape, target, p in predicate_targets(shapes):
        name = URIRef(f"{namespace}{local_name(shape)}-{local_name(p)}")
        name = _chosen(ctx, shape, name) if target == SH.targetSubjectsOf else name
        todo += _value_on(ctx, name, p, shape)
        roots[name if target == SH.targetSubjectsOf else min(ctx.graph.objects(name, p))] = shape
    for shape in sparql_shapes(shapes):
        node = URIRef(f"{namespace}{local_name(shape)}-selected")
        found = sparql_root(shapes, shape, node)
        if found is not None:
            for t in found:
                ctx.graph.add(t)
            roots[node] = shape
            todo += [(node, [t[2] for t in found if t[:2] == (node, RDF.type)])] + _satisfy(ctx, node, shape, optional)
    for _ in range(DEPTH):
        before = len(met)
        todo += _reached(ctx, met, optional)
        if not todo and len(met) == before:
            break
        while todo:
            node, wanted = todo.pop(0)
            for cls in [] if node in done else wanted:
                ctx.graph.add((node, RDF.type, cls))
                todo += [x for s in class_shapes(shapes, cls) for x in _satisfy(ctx, node, s, optional)]
            done.add(node)
    return ctx.graph, roots


def sparql_shapes(shapes: Graph) -> list:
    """Node shapes with a SHACL-SPARQL target (sh:target), sorted."""
    return sorted({s for s in shapes.subjects(SH.target, None) if isinstance(s, URIRef)})


def sparql_root(shapes: Graph, shape, node: URIRef) -> set | None:
    """Triples that make `node` a focus of `shape`'s SPARQL target: the query's required patterns with ?this as
    `node` and every other variable a fresh IRI, kept when the target then selects `node`; None when the query has
    a pattern no triple can meet (a variable predicate or a property path) or its filters reject the node."""
    for target in shapes.objects(shape, SH.target):
        for text in shapes.objects(target, SH.select):
            try:
                triples, _ = sparql_text.patterns(sparql_text.parse(str(text)), required_only=True)
            except sparql_text.QuerySyntaxError:
                continue
            if not triples or any(not isinstance(p, URIRef) for _, p, _ in triples):
                continue
            ground = {tuple(node if x == THIS else fresh(node, x) if isinstance(x, Variable) else x for x in t)
                      for t in triples}
            probe = Graph()
            for t in ground:
                probe.add(t)
            if node in sparql_targets(probe, shapes, shape):
                return ground
    return None


def _chosen(ctx: Context, shape, name: URIRef):
    """The node a root built for `shape` (a class or subjects-of target) is: the IRI the shape's own sh:in, sh:hasValue
    or sh:pattern picks when it has one, else `name`."""
    if all(ctx.param(shape, n) is None for n in ("in", "hasValue", "pattern")):
        return name
    value, extra = synthesize(ctx, shape, name)
    return name if isinstance(value, Literal) or extra else value


def _value_on(ctx: Context, node, p, shape) -> list:
    """Give `node` (built for `shape`) a value on `p`: as the property shapes on path `p` ask (`shape`'s own first),
    else as a node shape targeting the objects of `p` asks, else a fresh IRI; returns (node, classes) pairs to fill."""
    own = set(ctx.params(shape, "property"))
    todo = []
    for ps in sorted(ctx.shapes.subjects(SH.path, p), key=lambda ps: (ps not in own, ps)):
        todo += _values_for(ctx, node, ps, True) if (node, p, None) not in ctx.graph else []
    for s in sorted(ctx.shapes.subjects(SH.targetObjectsOf, p)):
        if (node, p, None) not in ctx.graph:
            value, extra = synthesize(ctx, s, node)
            for t in {(node, p, value), *extra}:
                ctx.graph.add(t)
            todo += [(t[0], [t[2]]) for t in extra if t[1] == RDF.type]
    if (node, p, None) not in ctx.graph:
        ctx.graph.add((node, p, fresh(node, p)))
    return todo


def _reached(ctx: Context, met: set, optional: bool) -> list:
    """Give every node a predicate target reaches in the graph (a subject or object of its predicate, literals aside)
    what the targeting node shape asks, once per node and shape; returns (node, classes) pairs still to fill."""
    todo = []
    for shape, target, p in predicate_targets(ctx.shapes):
        nodes = ctx.graph.subjects(p, None) if target == SH.targetSubjectsOf else ctx.graph.objects(None, p)
        for node in sorted(set(nodes) - {n for n, s in met if s == shape}):
            met.add((node, shape))
            todo += [] if isinstance(node, Literal) else _satisfy(ctx, node, shape, optional)
    return todo


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
    """`g` repaired to conform; roots that still violate or reach a node that does are dropped, with what only they
    reach."""
    if verify(g, shapes).conforms:
        return g, []
    res = repair(g, shapes, max_rounds=max_rounds, keep_values=True)  # instance data keeps every value it can
    if res.conforms:
        return res.graph, []
    focus = {v.focus for v in verify(res.graph, shapes).violations}
    reach = {n: _reach(res.graph, n) for n in roots}
    bad = {n for n in roots if reach[n] & focus} or set(roots)
    still = set().union(*(reach[n] for n in roots if n not in bad))
    kept = _without(res.graph, set().union(*(reach[n] for n in bad)) - still)
    if not verify(kept, shapes).conforms:
        raise InstanceError(f"no conforming instance data could be built from these shapes "
                            f"({', '.join(res.unrepaired[:3])} remain); give the missing values in a seed graph")
    return kept, [roots[n] for n in sorted(bad)]


def _reach(g: Graph, node) -> set:
    """`node` and every node it reaches along triples (their objects), literals aside."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n not in seen and not isinstance(n, Literal):
            seen.add(n)
            todo += list(g.objects(n, None))
    return seen


def _without(g: Graph, nodes: set) -> Graph:
    """A copy of `g` without the triples of `nodes` (subject or object)."""
    out = Graph()
    for t in g:
        if t[0] not in nodes and t[2] not in nodes:
            out.add(t)
    return out
