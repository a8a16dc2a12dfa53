"""Value type constraint components (SHACL 4.1): sh:class, sh:datatype, sh:nodeKind."""

from __future__ import annotations

import re

from rdflib import BNode, Literal, URIRef

from ...model import Violation, sha256
from ...vocab import RDF, RDFS, SH
from ..conformance import instances, is_instance
from ..context import Context
from ..patch import Patch, replace_value
from ..paths import fresh
from ..registry import strategy
from ..synth import convert, default_literal, typed


@strategy("class.add_type", SH.ClassConstraintComponent,
          bindings={"class": "shape sh:class"})
def class_add_type(ctx: Context, v: Violation) -> list[Patch]:
    """sh:class: type the value node with each required class it lacks."""
    node = v.value
    if node is None or isinstance(node, Literal):
        return []
    add = {(node, RDF.type, c) for c in ctx.params(v.shape, "class") if not is_instance(ctx.graph, node, c)}
    return [Patch("class.add_type", frozenset(add), frozenset(), frozenset({v.focus}))] if add else []


@strategy("class.link_instance", SH.ClassConstraintComponent,
          bindings={"instance": "first instance of shape sh:class in graph"})
def class_link_instance(ctx: Context, v: Violation) -> list[Patch]:
    """sh:class: replace the value by an existing instance of the class (keeping values, only a literal, which no
    type can make an instance: a node is kept and typed instead)."""
    if ctx.keep_values and not isinstance(v.value, Literal):
        return []
    cls = ctx.param(v.shape, "class")
    have = [n for n in instances(ctx.graph, cls) if n != v.focus] if cls is not None else []
    return replace_value("class.link_instance", ctx, v, have[0]) if have else []


@strategy("datatype.cast", SH.DatatypeConstraintComponent,
          bindings={"datatype": "shape sh:datatype", "lexical": "value"})
def datatype_cast(ctx: Context, v: Violation) -> list[Patch]:
    """sh:datatype: keep the lexical form, give it the required datatype (when well-formed)."""
    d, val = ctx.param(v.shape, "datatype"), v.value
    if not isinstance(val, Literal):
        return []
    if d == RDF.langString:
        return replace_value("datatype.cast", ctx, v, Literal(str(val), lang="en"))
    return replace_value("datatype.cast", ctx, v, typed(str(val), d))


@strategy("datatype.convert", SH.DatatypeConstraintComponent,
          bindings={"datatype": "shape sh:datatype", "lexical": "converted value or datatype default"})
def datatype_convert(ctx: Context, v: Violation) -> list[Patch]:
    """sh:datatype: convert the value (number to number, date to dateTime, ...) or use the type's default."""
    d, val = ctx.param(v.shape, "datatype"), v.value
    if d is None or d == RDF.langString:
        return []
    kept = convert(val, d)
    if kept is None and ctx.keep_values:  # keeping values: never the type's default in place of the user's text
        return []
    return replace_value("datatype.convert", ctx, v, kept or default_literal(d))


@strategy("nodeKind.convert", SH.NodeKindConstraintComponent,
          bindings={"kind": "shape sh:nodeKind"})
def nodekind_convert(ctx: Context, v: Violation) -> list[Patch]:
    """sh:nodeKind: turn the value into the required kind (IRI text <-> IRI, blank node -> new IRI)."""
    kind, val = ctx.param(v.shape, "nodeKind"), v.value
    if kind in (SH.Literal,) and not isinstance(val, Literal):
        return replace_value("nodeKind.convert", ctx, v, Literal(str(val)))
    if kind in (SH.IRI, SH.BlankNodeOrIRI, SH.IRIOrLiteral) and isinstance(val, Literal):
        text = str(val)
        if re.match(r"^[a-z][a-z0-9+.-]*:\S+$", text):
            return replace_value("nodeKind.convert", ctx, v, URIRef(text))
        node = fresh(v.focus, text)
        patches = replace_value("nodeKind.convert", ctx, v, node)
        if not ctx.keep_values:
            return patches
        named = frozenset({(node, RDFS.label, val)})  # keeping values: the text names the node it became
        return [Patch(p.operator, p.added | named, p.removed, p.touches) for p in patches]
    if kind in (SH.IRI, SH.IRIOrLiteral) and isinstance(val, BNode):
        node = fresh(v.focus, val)
        patches = replace_value("nodeKind.convert", ctx, v, node)
        copy = frozenset((node, p, o) for p, o in ctx.graph.predicate_objects(val))
        return [Patch(p.operator, p.added | copy, p.removed, p.touches) for p in patches]
    if kind in (SH.BlankNode, SH.BlankNodeOrLiteral) and isinstance(val, URIRef):
        return replace_value("nodeKind.convert", ctx, v, BNode(sha256(str(val))[:16]))
    return []
