"""Shape-based constraint components (SHACL 4.7): sh:node, sh:qualifiedValueShape (min and max)."""

from __future__ import annotations

from rdflib import Literal, URIRef

from ...model import Violation
from ...vocab import SH
from ..conformance import instances
from ..context import Context
from ..patch import Patch, applied, dropping
from ..paths import fresh, link_triples, path_of, value_triple, values
from ..plans import descend_all, replay_member, swap_term
from ..registry import strategy


@strategy("node.descend", SH.NodeConstraintComponent,
          bindings={"shape": "shape sh:node"}, checks=True)
def node_descend(ctx: Context, v: Violation) -> list[Patch]:
    """sh:node: repair the value node against the referenced shape (its own violations, recursively)."""
    shape = ctx.param(v.shape, "node")
    if isinstance(ctx.hint, dict):
        return replay_member("node.descend", ctx, v, shape, ctx.hint)
    return descend_all("node.descend", ctx, v.value, [shape], v.focus) or swap_term("node.descend", ctx, v,
                                                                                             shape)


@strategy("qualified.add_conforming", SH.QualifiedMinCountConstraintComponent,
          bindings={"shape": "shape sh:qualifiedValueShape"}, checks=True)
def qualified_min(ctx: Context, v: Violation) -> list[Patch]:
    """sh:qualifiedMinCount: link existing conforming nodes, else add new ones repaired to conform."""
    q, path, f = ctx.param(v.shape, "qualifiedValueShape"), path_of(ctx, v), v.focus
    need = int(ctx.param(v.shape, "qualifiedMinCount")) - _conforming_count(ctx, v)
    siblings = _siblings(ctx, v.shape) if _is_true(ctx.param(v.shape, "qualifiedValueShapesDisjoint")) else []
    have = set(values(ctx, f, path))
    pool = [n for n in _candidates(ctx, q) if n not in have and n != f and _fits(ctx, n, q, siblings)]
    added: set = set()
    for i in range(max(0, need)):
        node = pool[i] if i < len(pool) else fresh(f, v.shape, i)
        links = link_triples(ctx, f, path, node)
        if links is None:
            return []
        added |= links
        if i >= len(pool):
            fix = descend_all("qualified.add_conforming", ctx.deeper(applied(ctx.graph, Patch("", frozenset(added)))),
                               node, [q], f)
            added |= set(fix[0].added) if fix else set()
    return [Patch("qualified.add_conforming", frozenset(added), frozenset(), frozenset({f}))] if added else []


@strategy("qualified.drop_surplus", SH.QualifiedMaxCountConstraintComponent,
          bindings={"shape": "shape sh:qualifiedValueShape"}, checks=True)
def qualified_max(ctx: Context, v: Violation) -> list[Patch]:
    """sh:qualifiedMaxCount: drop surplus values that conform to the qualified shape."""
    q, path, f = ctx.param(v.shape, "qualifiedValueShape"), path_of(ctx, v), v.focus
    conforming = [x for x in values(ctx, f, path) if ctx.conforms(x, q)]
    drop = [value_triple(ctx, f, path, x) for x in conforming[int(ctx.param(v.shape, "qualifiedMaxCount")):]]
    return dropping("qualified.drop_surplus", f, drop)


def _conforming_count(ctx: Context, v: Violation) -> int:
    """Values of the focus that conform to the qualified value shape (and to no disjoint sibling)."""
    q = ctx.param(v.shape, "qualifiedValueShape")
    sib = _siblings(ctx, v.shape) if _is_true(ctx.param(v.shape, "qualifiedValueShapesDisjoint")) else []
    return sum(_fits(ctx, x, q, sib) for x in values(ctx, v.focus, path_of(ctx, v)))


def _fits(ctx: Context, node, q, siblings) -> bool:
    """True when `node` conforms to `q` and to none of the sibling qualified shapes."""
    return ctx.conforms(node, q) and not any(ctx.conforms(node, s) for s in siblings)


def _siblings(ctx: Context, prop_shape) -> list:
    """Qualified value shapes of sibling property shapes (for sh:qualifiedValueShapesDisjoint)."""
    q = ctx.param(prop_shape, "qualifiedValueShape")
    parents = set(ctx.shapes.subjects(SH.property, prop_shape))
    out = {ctx.param(ps, "qualifiedValueShape") for p in parents for ps in ctx.params(p, "property")}
    return sorted(s for s in out if s is not None and s != q)


def _candidates(ctx: Context, q) -> list:
    """Existing nodes worth trying as values for a qualified shape: instances of its sh:class, else nodes holding a
    value one of its property shapes requires (sh:hasValue, a member of sh:in) on a predicate path."""
    cls = ctx.param(q, "class")
    if cls is not None:
        return instances(ctx.graph, cls)
    found = {n for ps in ctx.params(q, "property") if isinstance(ctx.param(ps, "path"), URIRef)
             for x in [*ctx.params(ps, "hasValue"), *ctx.listed(ps, "in")]
             for n in ctx.graph.subjects(ctx.param(ps, "path"), x)}
    return sorted(n for n in found if not isinstance(n, Literal))


def _is_true(x) -> bool:
    """True for a literal true."""
    return isinstance(x, Literal) and x.toPython() is True
