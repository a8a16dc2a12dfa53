"""Cardinality constraint components (SHACL 4.2): sh:minCount, sh:maxCount."""

from __future__ import annotations

from rdflib import Literal

from ...model import Violation
from ...vocab import SH
from ..conformance import is_instance
from ..context import Context
from ..patch import Patch, dropping
from ..paths import link_triples, path_of, shortcuts, value_triple, values
from ..registry import strategy
from ..synth import synthesize


@strategy("minCount.add_values", SH.MinCountConstraintComponent,
          bindings={"count": "shape sh:minCount", "value": "shape hasValue|in|class|datatype|fresh"})
def mincount_add(ctx: Context, v: Violation) -> list[Patch]:
    """sh:minCount: add the missing values along the path, chosen from the shape (hasValue, in, class, datatype),
    each distinct from the values there and those added before it."""
    path, n = path_of(ctx, v), int(ctx.param(v.shape, "minCount"))
    have = set(values(ctx, v.focus, path))
    added: set[tuple] = set()
    for i in range(max(0, n - len(have))):
        got = synthesize(ctx, v.shape, v.focus, i, frozenset(have))
        links = link_triples(ctx, v.focus, path, got[0]) if got else None
        if not got or links is None:
            return []
        added |= links | got[1]
        have.add(got[0])
    return [Patch("minCount.add_values", frozenset(added), frozenset(), frozenset({v.focus}))] if added else []


@strategy("minCount.link_existing", SH.MinCountConstraintComponent,
          bindings={"count": "shape sh:minCount", "value": "existing nodes reaching values along the rest of the path"})
def mincount_link(ctx: Context, v: Violation) -> list[Patch]:
    """sh:minCount on a sequence or one-or-more path: link the focus by the first step to existing nodes that already
    reach values along the rest (one triple each, where adding values would need a new node and its value, or one
    new node per missing value)."""
    path, n = path_of(ctx, v), int(ctx.param(v.shape, "minCount"))
    got, added = set(values(ctx, v.focus, path)), set[tuple]()
    for links, reach in sorted(shortcuts(ctx, v.focus, path), key=lambda x: -len(x[1] - got)):  # fewest links
        if len(got) >= n:
            break
        if reach - got:
            added, got = added | links, got | reach
    return [Patch("minCount.link_existing", frozenset(added), frozenset(), frozenset({v.focus}))] \
        if added and len(got) >= n else []


@strategy("maxCount.drop_surplus", SH.MaxCountConstraintComponent,
          bindings={"count": "shape sh:maxCount", "keep": "best-typed values"})
def maxcount_drop(ctx: Context, v: Violation) -> list[Patch]:
    """sh:maxCount: drop surplus values, keeping the best ones: those no other reported violation flags, then the
    best-typed (meeting the shape's other constraints), so a value another constraint rejects is dropped first."""
    path, n = path_of(ctx, v), int(ctx.param(v.shape, "maxCount"))
    ranked = sorted(values(ctx, v.focus, path),
                    key=lambda x: ((v.focus, x) in ctx.flagged, -_fit(ctx, v.shape, x), x.n3()))
    drop = [value_triple(ctx, v.focus, path, x) for x in ranked[n:]]
    return dropping("maxCount.drop_surplus", v.focus, drop)


def _fit(ctx: Context, shape, x) -> int:
    """How many of a shape's datatype / class / in parameters a value meets."""
    d, cls, listed = ctx.param(shape, "datatype"), ctx.param(shape, "class"), ctx.listed(shape, "in")
    return sum([d is not None and isinstance(x, Literal) and x.datatype == d and not x.ill_typed,
                cls is not None and is_instance(ctx.graph, x, cls), bool(listed) and x in listed])
