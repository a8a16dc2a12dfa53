"""SPARQL-based constraints (SHACL 5, 6): sh:sparql and SPARQL-based constraint components.

No rule says what a SELECT forbids, so the strategy builds small change sets at the focus and its value from the
terms the parsed query and the shape's parameters name, and keeps the first one a nested check verifies.
"""

from __future__ import annotations

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node

from ...adapters import sparql as sparql_text
from ...model import Violation
from ...vocab import RDF, SH
from ..context import Context
from ..patch import Patch, applied
from ..paths import fresh
from ..registry import SPARQL_BASED, strategy

MAX_CANDIDATES = 40  # change sets tried (each one nested check) per violation
_VALIDATORS = (SH.validator, SH.nodeValidator, SH.propertyValidator)


@strategy("sparql.verified_change", SH.SPARQLConstraintComponent, SPARQL_BASED,
          bindings={"triples": "terms of the constraint's parsed SPARQL query and parameters, at the focus"},
          checks=True)
def sparql_change(ctx: Context, v: Violation) -> list[Patch]:
    """The smallest change set at the focus (and its value) that clears this violation and leaves the focus no
    violation of the shape the last verification did not report (one result per value: each gets its own change).
    A candidate's choice says what it changes in terms of the violation (`_role`), so a compiled decision transfers
    to other shapes and data: replayed, the one candidate of its choice is applied with no trial check (the verify
    round judges it); several of that choice, or none, are tried in turn (that choice first, then its kind)."""
    if v.shape is None:
        return []
    terms = _parameters(ctx, v)
    for text in _queries(ctx, v):
        terms |= query_terms(text, _prefixes(ctx))
    found, hint = _change_sets(ctx, v, terms), ctx.hint if isinstance(ctx.hint, dict) else None
    if hint is not None:
        same = [p for p in found if p.choice == hint]
        if len(same) == 1:
            return same
        found = same or [p for p in found if isinstance(p.choice, dict) and p.choice["kind"] == hint.get("kind")]
    for p in found[:MAX_CANDIDATES]:
        if all(x.key in ctx.reported and x.key != v.key for x in ctx.nested(v.focus, v.shape, applied(ctx.graph, p))):
            return [p]
    return []


def _queries(ctx: Context, v: Violation) -> list[str]:
    """SELECT / ASK texts of the shape's sh:sparql constraints and of the violated component's validators."""
    holders = list(ctx.shapes.objects(v.shape, SH.sparql))
    holders += [x for val in _VALIDATORS for x in ctx.shapes.objects(v.component, val)]
    return [str(q) for h in holders for k in (SH.select, SH.ask) for q in ctx.shapes.objects(h, k)]


def _parameters(ctx: Context, v: Violation) -> set:
    """The shape's values for the component's declared parameters (what $param stands for in its query)."""
    paths = [ctx.shapes.value(p, SH.path) for p in ctx.shapes.objects(v.component, SH.parameter)]
    return {o for p in paths if p is not None for o in ctx.shapes.objects(v.shape, p)}


def _prefixes(ctx: Context) -> dict:
    """Every sh:declare prefix of the shapes graph."""
    out = {}
    for d in ctx.shapes.objects(None, SH.declare):
        prefix, ns = ctx.shapes.value(d, SH.prefix), ctx.shapes.value(d, SH.namespace)
        if prefix is not None and ns is not None:
            out[str(prefix)] = str(ns)
    return out


def query_terms(text: str, prefixes: dict) -> set:
    """IRIs and literals a SPARQL query names, read off its parsed algebra (empty when it does not parse)."""
    try:
        out = sparql_text.named_terms(sparql_text.parse(text, prefixes))
    except sparql_text.QuerySyntaxError:
        return set()
    return {t for t in out if not (isinstance(t, URIRef) and str(t).startswith(str(SH)))}


def _change_sets(ctx: Context, v: Violation, terms: set) -> list[Patch]:
    """Candidate change sets, smallest first: drop a triple at the focus, add one, swap the value, drop every value
    of one predicate at the focus (a query that forbids a property reports each value; dropping one leaves the
    others)."""
    g, f, new = ctx.graph, v.focus, fresh(v.focus, v.shape)
    iris = sorted(t for t in terms if isinstance(t, URIRef))
    preds = [p for p in iris if any(True for _ in g.triples((None, p, None)))] or iris
    drops = sorted({t for t in g.triples((f, None, None)) if t[1] in preds or t[2] == v.value}
                   | {t for t in g.triples((None, None, f)) if t[1] in preds}, key=lambda t: (t[2] != v.value, t))

    def patch(kind: str, added, removed) -> Patch:
        """A candidate whose choice names its kind and the role of each triple it adds and drops."""
        return Patch("sparql.verified_change", frozenset(added), frozenset(removed), frozenset({f}),
                     {"kind": kind, "add": sorted(_role(t, v, terms, new) for t in added),
                      "drop": sorted(_role(t, v, terms, new) for t in removed)})

    out = [patch("drop", (), {t}) for t in drops]  # the triple holding the reported value first
    # a term the query uses as a predicate is a poor value: the new node and the other terms come first
    objects = sorted(terms | {new}, key=lambda o: (isinstance(o, Literal), o in preds, str(o)))
    out += [patch("add", {(f, p, o)}, ()) for p in preds for o in objects
            if (f, p, o) not in g and o != p and not isinstance(f, Literal)]
    out += [patch("type", {(f, RDF.type, c)}, ()) for c in iris
            if (f, RDF.type, c) not in g and not isinstance(f, Literal | BNode)]
    for t in drops:
        out += [patch("swap", {(t[0], t[1], o)}, {t}) for o in objects if t[0] == f and o != t[2]]
    values: dict[Node, set] = {}
    for t in drops:
        if t[0] == f:
            values.setdefault(t[1], set()).add(t)
    out += [patch("drop", (), ts) for _, ts in sorted(values.items()) if len(ts) > 1]
    return out


def _role(t: tuple, v: Violation, terms: set, new) -> str:
    """What a changed triple is to the violation, in words that hold on other shapes and data: whether the focus is
    its subject ("out") or object ("in"), its predicate (rdf:type, the result path, a term of the query, another)
    and its other node (the reported value, the node the repair creates, a term of the query, another)."""
    s, p, o = t
    other = o if s == v.focus else s
    pred = "type" if p == RDF.type else "path" if p == v.path else "term" if p in terms else "other"
    node = "value" if other == v.value else "new" if other == new else "term" if other in terms else "other"
    return f"{'out' if s == v.focus else 'in'} {pred} {node}"

