"""SHACL property paths: walking them over a graph and the triples that link a value along one."""

from __future__ import annotations

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection

from ..model import Violation, sha256
from ..vocab import RDF, SH
from .context import Context

NEW = "urn:owl-memory:new:"


def parse(shapes: Graph, path) -> tuple | None:
    """A SHACL path node as a tree: ("pred", p), ("inv" | "star" | "plus" | "opt", tree), ("seq" | "alt", trees);
    None when it is not a well-formed path."""
    if isinstance(path, URIRef):
        return ("pred", path)
    if path is None:
        return None
    if shapes.value(path, RDF.first) is not None:
        return _many(shapes, "seq", path)
    for pred, tag in ((SH.inversePath, "inv"), (SH.zeroOrMorePath, "star"), (SH.oneOrMorePath, "plus"),
                      (SH.zeroOrOnePath, "opt")):
        inner = shapes.value(path, pred)
        if inner is not None:
            tree = parse(shapes, inner)
            return None if tree is None else (tag, tree)
    members = shapes.value(path, SH.alternativePath)
    return None if members is None else _many(shapes, "alt", members)


def _many(shapes: Graph, tag: str, lst) -> tuple | None:
    """A sequence or alternative tree from an RDF list of paths (None when a member is malformed)."""
    parts = tuple(parse(shapes, p) for p in Collection(shapes, lst))
    return None if not parts or None in parts else (tag, parts)


def walk(g: Graph, nodes: set, tree: tuple, inverse: bool = False) -> set:
    """Nodes reached from `nodes` along a path tree (backwards when `inverse`)."""
    kind, arg = tree
    if kind == "pred":
        return {x for n in nodes for x in (g.subjects(arg, n) if inverse else g.objects(n, arg))}
    if kind == "inv":
        return walk(g, nodes, arg, not inverse)
    if kind == "seq":
        for part in reversed(arg) if inverse else arg:
            nodes = walk(g, nodes, part, inverse)
        return set(nodes)
    if kind == "alt":
        return {x for part in arg for x in walk(g, nodes, part, inverse)}
    if kind == "opt":
        return set(nodes) | walk(g, nodes, arg, inverse)
    start = set(nodes) if kind == "star" else walk(g, nodes, arg, inverse)
    out, frontier = set(start), set(start)
    while frontier:
        frontier = walk(g, frontier, arg, inverse) - out
        out |= frontier
    return out


def path_of(ctx: Context, v: Violation):
    """The path node of a violation: from the report, else sh:path of its source shape."""
    return ctx.param(v.shape, "path") if v.shape is not None else None


def values(ctx: Context, focus, path) -> list:
    """Value nodes of `focus` along a path (sorted); the focus itself when there is no path."""
    if path is None:
        return [focus]
    tree = parse(ctx.shapes, path)
    return [] if tree is None else sorted(walk(ctx.graph, {focus}, tree))


def value_triple(ctx: Context, focus, path, value):
    """A data triple of the last step of `path` from `focus` that holds `value` (the first one, sorted), or None when
    no triple links it there."""
    hops = last_hops(ctx, focus, path, value)
    return hops[0] if hops else None


def last_hops(ctx: Context, focus, path, value) -> list:
    """Every data triple of the last step of `path` from `focus` that holds `value`, sorted: removing them all takes
    `value` off the path (a sequence that repeats a predicate, ( ex:p ex:p ), or reaches it through several
    intermediate nodes holds it more than once)."""
    tree = parse(ctx.shapes, path) if path is not None else None
    return sorted(_last_hops(ctx.graph, {focus}, tree, value, False)) if tree is not None else []


def _last_hops(g: Graph, nodes: set, tree: tuple, value, inverse: bool) -> set:
    """Triples of the last step that reach `value` from `nodes` along a path tree."""
    kind, arg = tree
    if kind == "pred":
        return {t for n in nodes for t in ([(value, arg, n)] if inverse else [(n, arg, value)]) if t in g}
    if kind == "inv":
        return _last_hops(g, nodes, arg, value, not inverse)
    if kind == "alt":
        return {t for part in arg for t in _last_hops(g, nodes, part, value, inverse)}
    if kind == "seq":
        parts = list(reversed(arg) if inverse else arg)
        return _last_hops(g, walk(g, nodes, ("seq", arg[:-1] if not inverse else arg[1:]), inverse), parts[-1],
                          value, inverse)
    before = walk(g, nodes, ("star", arg), inverse) if kind != "opt" else set(nodes)
    return _last_hops(g, before, arg, value, inverse)


def link_triples(ctx: Context, focus, path, value) -> set | None:
    """Triples that make `value` a value of `focus` along `path`, reusing existing intermediate nodes; None when
    the path cannot link them (a literal would have to be a subject)."""
    tree = parse(ctx.shapes, path)
    out = _link(ctx.graph, focus, tree, value, False) if tree is not None else None
    return None if out is None else {t for t in out if t not in ctx.graph}


def _link(g: Graph, node, tree: tuple, value, inverse: bool) -> set | None:
    """Triples linking `node` to `value` along a path tree (the first alternative that can, one repetition)."""
    kind, arg = tree
    if kind == "pred":
        s, o = (value, node) if inverse else (node, value)
        return None if isinstance(s, Literal) else {(s, arg, o)}
    if kind == "inv":
        return _link(g, node, arg, value, not inverse)
    if kind == "alt":
        return next((x for x in (_link(g, node, part, value, inverse) for part in arg) if x is not None), None)
    if kind in ("opt", "star") and node == value:
        return set()
    if kind != "seq":
        return _link(g, node, arg, value, inverse)
    parts, out = list(reversed(arg) if inverse else arg), set[tuple]()
    for i, part in enumerate(parts[:-1]):
        have = sorted(walk(g, {node}, part, inverse))
        rest = all(_nullable(x) for x in parts[i + 1:])  # the value may sit here: the rest can take zero steps
        nxt = node if node in have else value if rest else have[0] if have else fresh(node, part, i)
        step = set() if nxt in have else _link(g, node, part, nxt, inverse)
        if step is None:
            return None
        out, node = out | step, nxt
    last = _link(g, node, parts[-1], value, inverse)
    return None if last is None else out | last


def shortcuts(ctx: Context, focus, path) -> list[tuple[set, set]]:
    """For a sequence or a one-or-more path: (triples linking `focus` by the first step to an existing node, the
    values that node already reaches along the rest: the rest of the sequence, or zero or more steps of the same
    path), one per such node not yet linked, sorted; [] for any other path."""
    tree = parse(ctx.shapes, path) if path is not None else None
    if tree is None or tree[0] not in ("seq", "plus"):
        return []
    if tree[0] == "plus":
        first, rest = tree[1], ("star", tree[1])
    else:
        first, rest = tree[1][0], tree[1][1] if len(tree[1]) == 2 else ("seq", tree[1][1:])
    g, linked = ctx.graph, walk(ctx.graph, {focus}, first) | {focus}
    out = []
    for n in sorted({x for t in g for x in (t[0], t[2]) if isinstance(x, URIRef | BNode)} - linked):
        reach = walk(g, {n}, rest)
        link = _link(g, focus, first, n, False) if reach else None
        if link:
            out.append(({t for t in link if t not in g}, reach))
    return out


def _nullable(tree: tuple) -> bool:
    """True when a path tree can take zero steps (zeroOrMore, zeroOrOne, or made only of such parts)."""
    kind, arg = tree
    if kind in ("star", "opt"):
        return True
    if kind in ("inv", "plus"):
        return _nullable(arg)
    return kind != "pred" and (all if kind == "seq" else any)(_nullable(x) for x in arg)


def fresh(*parts) -> URIRef:
    """A deterministic new IRI for a node the repair has to create."""
    return URIRef(NEW + sha256("|".join(str(p) for p in parts))[:16])

