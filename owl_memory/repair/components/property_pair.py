"""Property pair constraint components (SHACL 4.5): equals, disjoint, lessThan, lessThanOrEquals."""

from __future__ import annotations

from rdflib import Literal

from ...model import Violation
from ...vocab import SH
from ..context import Context
from ..patch import Patch, drop_value, replace_value
from ..paths import link_triples, path_of, values
from ..registry import strategy
from ..synth import nudge


@strategy("equals.align", SH.EqualsConstraintComponent,
          bindings={"property": "shape sh:equals"})
def equals_add(ctx: Context, v: Violation) -> list[Patch]:
    """sh:equals: add the values one side lacks (node level: the focus itself; other values are dropped)."""
    f, q, path = v.focus, ctx.param(v.shape, "equals"), path_of(ctx, v)
    mine = set(values(ctx, f, path)) if path is not None else {f}
    other = set(ctx.graph.objects(f, q))
    add = {(f, q, x) for x in mine - other}
    if path is None:
        return [Patch("equals.align", frozenset(add), frozenset((f, q, x) for x in other - mine), frozenset({f}))]
    links = [link_triples(ctx, f, path, x) for x in other - mine]
    linked = [s for s in links if s is not None]
    if len(linked) < len(links):
        return []
    add |= {t for s in linked for t in s}
    return [Patch("equals.align", frozenset(add), frozenset(), frozenset({f}))] if add else []


@strategy("disjoint.drop_shared", SH.DisjointConstraintComponent,
          bindings={"property": "shape sh:disjoint"})
def disjoint_drop(ctx: Context, v: Violation) -> list[Patch]:
    """sh:disjoint: drop the shared value from the constrained path (or, second, from the other property)."""
    f, q = v.focus, ctx.param(v.shape, "disjoint")
    out = drop_value("disjoint.drop_shared", ctx, v, v.value) if path_of(ctx, v) is not None else []
    if (f, q, v.value) in ctx.graph:
        out.append(Patch("disjoint.drop_shared", frozenset(), frozenset({(f, q, v.value)}), frozenset({f}), "other"))
    return out


@strategy("lessThan.adjust", SH.LessThanConstraintComponent, SH.LessThanOrEqualsConstraintComponent,
          bindings={"property": "shape sh:lessThan|lessThanOrEquals"})
def lessthan_adjust(ctx: Context, v: Violation) -> list[Patch]:
    """sh:lessThan(OrEquals): lower the value below the other property's smallest value, else drop it."""
    comp = "lessThan" if ctx.param(v.shape, "lessThan") is not None else "lessThanOrEquals"
    q = ctx.param(v.shape, comp)
    others = [o for o in ctx.graph.objects(v.focus, q) if isinstance(o, Literal)]
    out = []
    try:
        low = min(others, key=lambda o: o.toPython()) if others else None
    except TypeError:
        low = None
    if low is not None and isinstance(v.value, Literal):
        new = low if comp == "lessThanOrEquals" else nudge(low, -1)
        out += replace_value("lessThan.adjust", ctx, v, new)
    return out + drop_value("lessThan.adjust", ctx, v, v.value, "drop")
