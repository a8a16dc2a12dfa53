"""Strategies several value-level components share (no one spec section owns them): drop the offending value,
derive one from its text, or move it to the sibling property whose format it holds.

Deleting the one triple that links a bad value is the smallest change set for a value that is optional (one triple
against two for a replacement), so the repairer, which tries the smallest change set first, takes it whenever it
verifies; it is not offered where the shape's own sh:minCount needs the value, nor when the caller asks to keep values
(repair(..., keep_values=True), `owl-memory repair --keep-values`).
"""

from __future__ import annotations

from rdflib import Literal, URIRef

from ...model import Violation
from ...vocab import RDF, RDFS, SH
from ..context import Context
from ..derive import derivations, meets
from ..patch import Patch, applied, drop_value, replace_value
from ..paths import path_of, value_triple, values
from ..registry import strategy
from ..synth import typed

DROPPABLE = tuple(SH[f"{c}ConstraintComponent"] for c in (
    "Class", "Datatype", "NodeKind", "MinLength", "MaxLength", "Pattern", "In", "LanguageIn", "MinInclusive",
    "MinExclusive", "MaxInclusive", "MaxExclusive", "LessThan", "LessThanOrEquals", "Node", "Not", "And", "Or",
    "Xone"))


@strategy("value.drop", *DROPPABLE, bindings={"value": "the offending value, dropped"})
def value_drop(ctx: Context, v: Violation) -> list[Patch]:
    """Remove the offending value from the focus along its path, when the shape's sh:minCount does not need it (a
    literal a node shape targets as an object: the triples holding it)."""
    path = path_of(ctx, v)
    if ctx.keep_values or v.value is None or (path is None and v.value != v.focus):
        return []  # a node-level result: only on a value held as the object a shape targets (patch.value_triples)
    need = ctx.param(v.shape, "minCount") if path is not None else None
    if need is not None and len(values(ctx, v.focus, path)) <= int(need):
        return []
    found = drop_value("value.drop", ctx, v, v.value, "drop")
    return [p for p in found if not _needed_by_logic(ctx, v, p)]


_LOGICAL = ("or", "xone", "and")


def _needed_by_logic(ctx: Context, v: Violation, p: Patch) -> bool:
    """True when a node shape holding the violated property shape has a logical constraint (sh:or, sh:xone, sh:and)
    whose members read the same path, and the focus with `p` applied violates that node shape in a way the last
    verification did not report (one nested check per such node shape): the value is what meets it (a geometry's one
    serialization, say), so dropping it trades one violation for another."""
    path = ctx.param(v.shape, "path")
    owners = [o for o in ctx.shapes.subjects(SH.property, v.shape) if _logic_reads(ctx, o, path)]
    after = applied(ctx.graph, p) if owners else ctx.graph
    return any(x.key not in ctx.reported for o in owners for x in ctx.nested(v.focus, o, after))


def _logic_reads(ctx: Context, shape, path) -> bool:
    """True when a member of one of `shape`'s logical lists, or a property shape of one, has `path`."""
    members = [m for name in _LOGICAL for m in ctx.listed(shape, name)]
    return any(ctx.param(x, "path") == path for m in members for x in [m, *ctx.params(m, "property")])


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


MOVABLE = tuple(SH[f"{c}ConstraintComponent"] for c in ("Datatype", "Pattern"))


@strategy("value.move_to_sibling", *MOVABLE,
          order=1, bindings={"value": "the offending value's own text, kept or re-typed to the sibling's datatype",
                    "property": "a sibling property shape of the same node shape that the value meets"})
def value_move(ctx: Context, v: Violation) -> list[Patch]:
    """A literal that holds another format the shapes also define (a sibling property shape of the same node shape,
    on another predicate, whose datatype and pattern the text meets): take it off its path and put it, unchanged or
    re-typed to the sibling's datatype, on the sibling's predicate; its choice says which ("kept" or "re-typed")."""
    old = value_triple(ctx, v.focus, path_of(ctx, v), v.value) if isinstance(v.value, Literal) else None
    if old is None or old[0] != v.focus:
        return []
    out = []
    for sibling in siblings(ctx, v.shape):
        path = ctx.param(sibling, "path")
        full = ctx.param(sibling, "maxCount") is not None and \
            len(values(ctx, v.focus, path)) >= int(ctx.param(sibling, "maxCount"))
        for how, lit in (("kept", v.value), ("re-typed", typed(str(v.value), ctx.param(sibling, "datatype")))):
            if full or lit is None or (ctx.hint is not None and how != ctx.hint) or not meets(ctx.shapes, sibling, lit):
                continue
            out.append(Patch("value.move_to_sibling", frozenset({(v.focus, path, lit)}), frozenset({old}),
                             frozenset({v.focus}), how))
            break
    return out


def siblings(ctx: Context, shape) -> list:
    """The alternative serializations of `shape`: the other property shapes of the node shapes that hold it, on
    another predicate, that differ from it only by their format (sh:datatype, sh:pattern, sh:flags; annotations
    aside), each with a format of its own; sorted."""
    own = ctx.param(shape, "path")
    found = {s for o in ctx.shapes.subjects(SH.property, shape) for s in ctx.shapes.objects(o, SH.property)}
    rest = _constraints(ctx, shape)
    return sorted(s for s in found - {shape} if isinstance(ctx.param(s, "path"), URIRef) and ctx.param(s, "path") != own
                  and _constraints(ctx, s) == rest and any(ctx.param(s, n) is not None for n in ("datatype", "pattern"))
                  and _format(ctx, s) != _format(ctx, shape))


_FORMAT = frozenset(SH[n] for n in ("datatype", "pattern", "flags"))
_NOT_CONSTRAINTS = frozenset({SH.path, SH.name, SH.description, SH.message, SH.order, SH.group, SH.severity,
                              RDF.type, RDFS.label, RDFS.comment})


def _constraints(ctx: Context, shape) -> set:
    """(parameter, value) of a property shape's constraints other than its format."""
    return {(p, o) for p, o in ctx.shapes.predicate_objects(shape) if p not in _FORMAT | _NOT_CONSTRAINTS}


def _format(ctx: Context, shape) -> set:
    """(parameter, value) of a property shape's format: sh:datatype, sh:pattern, sh:flags."""
    return {(p, o) for p, o in ctx.shapes.predicate_objects(shape) if p in _FORMAT}
