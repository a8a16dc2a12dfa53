"""A strategy several value-level components share (no one spec section owns it): drop the offending value.

Deleting the one triple that links a bad value is the smallest change set for a value that is optional (one triple
against two for a replacement), so the repairer, which tries the smallest change set first, takes it whenever it
verifies; it is not offered where the shape's own sh:minCount needs the value, nor when the caller asks to keep values
(repair(..., keep_values=True), `owl-memory repair --keep-values`).
"""

from __future__ import annotations

from rdflib import Literal

from ...model import Violation
from ...vocab import SH
from ..context import Context
from ..derive import derivations, meets
from ..patch import Patch, drop_value, replace_value
from ..paths import path_of, values
from ..registry import strategy

DROPPABLE = tuple(SH[f"{c}ConstraintComponent"] for c in (
    "Class", "Datatype", "NodeKind", "MinLength", "MaxLength", "Pattern", "In", "LanguageIn", "MinInclusive",
    "MinExclusive", "MaxInclusive", "MaxExclusive", "LessThan", "LessThanOrEquals", "Node", "Not", "And", "Or",
    "Xone"))


@strategy("value.drop", *DROPPABLE, bindings={"value": "the offending value, dropped"})
def value_drop(ctx: Context, v: Violation) -> list[Patch]:
    """Remove the offending value from the focus along its path, when the shape's sh:minCount does not need it."""
    path = path_of(ctx, v)
    if ctx.keep_values or path is None or v.value is None or v.value == v.focus:
        return []
    need = ctx.param(v.shape, "minCount")
    if need is not None and len(values(ctx, v.focus, path)) <= int(need):
        return []
    return drop_value("value.drop", ctx, v, v.value, "drop")


DERIVABLE = tuple(SH[f"{c}ConstraintComponent"] for c in ("Datatype", "Pattern", "In", "MinLength", "MaxLength",
                                                             "LanguageIn"))


@strategy("value.derive", *DERIVABLE, bindings={"value": "the offending value's own text: trimmed, spaces collapsed "
                                                          "or removed, re-cased, re-typed"}, order=1)
def value_derive(ctx: Context, v: Violation) -> list[Patch]:
    """Replace an offending literal by the first text derived from it (fewest rules first) that meets the shape's
    value constraints; its choice names how, so a compiled decision replays the same rule (re-typing alone is
    datatype.cast's)."""
    if not isinstance(v.value, Literal) or v.value == v.focus:
        return []
    for how, lit in derivations(v.value, ctx.param(v.shape, "datatype")):
        if (ctx.hint is None or how == ctx.hint) and meets(ctx.shapes, v.shape, lit):
            return replace_value("value.derive", ctx, v, lit, how)
    return []
