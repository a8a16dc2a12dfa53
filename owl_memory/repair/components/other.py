"""Other constraint components (SHACL 4.8): sh:closed, sh:hasValue, sh:in."""

from __future__ import annotations

from rdflib import URIRef

from ...model import Violation
from ...vocab import SH
from ..context import Context
from ..patch import Patch, replace_value
from ..paths import link_triples, path_of
from ..registry import strategy
from ..synth import listed_fit


@strategy("closed.drop_property", SH.ClosedConstraintComponent,
          bindings={"allowed": "shape sh:property paths + ignored"})
def closed_drop(ctx: Context, v: Violation) -> list[Patch]:
    """sh:closed: drop the triple whose property the closed shape does not allow."""
    p, f = v.path, v.focus
    t = (f, p, v.value)
    if not isinstance(p, URIRef) or t not in ctx.graph:
        return []
    return [Patch("closed.drop_property", frozenset(), frozenset({t}), frozenset({f}))]


@strategy("in.pick_listed", SH.InConstraintComponent,
          bindings={"value": "shape sh:in member"})
def in_pick(ctx: Context, v: Violation) -> list[Patch]:
    """sh:in: replace the value by a listed one: those meeting the shape's other value parameters first, the same
    text first among them."""
    return [p for x in listed_fit(ctx, v.shape, v.value)[:4] for p in replace_value("in.pick_listed", ctx, v, x)]


@strategy("hasValue.add_value", SH.HasValueConstraintComponent,
          bindings={"value": "shape sh:hasValue"})
def hasvalue_add(ctx: Context, v: Violation) -> list[Patch]:
    """sh:hasValue: add the required value along the path."""
    want, path = ctx.param(v.shape, "hasValue"), path_of(ctx, v)
    links = link_triples(ctx, v.focus, path, want) if path is not None else None
    return [Patch("hasValue.add_value", frozenset(links), frozenset(), frozenset({v.focus}))] if links else []
