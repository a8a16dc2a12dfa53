"""Values bound into a parsed SPARQL query (rdflib's algebra), never into its text: a bound value is one RDF term and
can never change the query's structure. The parse a caller passes is shared (adapters.sparql.parse parses a text once),
so binding rebuilds the nodes on the way to each replaced term and leaves the parse as it was.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from rdflib import Literal, URIRef

if TYPE_CHECKING:
    from .sparql import Parsed

_OWN = ("name", "_evalfn", "ctx")  # a node's attributes that are not its content (ctx: set while it evaluates)


def bind_terms(query: Parsed, values: dict) -> Parsed:
    """The parsed query with every IRI or literal that is a key of `values` replaced by its value, throughout its
    algebra (patterns, paths, VALUES rows, filters and the patterns of EXISTS inside them, subqueries); `query`
    untouched. A judge rule's parameters and a recipe's bindings are bound here."""
    bound = copy.copy(query)
    bound.algebra = _bound(query.algebra, values)
    return bound


def _bound(x, values: dict):
    """`x` with the terms of `values` replaced: every node on the way to a replaced term rebuilt, `x` untouched."""
    from rdflib.paths import Path
    from rdflib.plugins.sparql.parserutils import CompValue, Expr

    if isinstance(x, URIRef | Literal):
        return values.get(x, x)
    if isinstance(x, CompValue):  # an algebra node, or an expression (an Expr, evaluated by its own function)
        parts = {k: _bound(v, values) for k, v in x.items()}
        # what translation set as attributes beside the items (an EXISTS's translated pattern is `.graph`)
        attrs = {a: _bound(v, values) for a, v in vars(x).items() if a not in _OWN}
        if all(parts[k] is x[k] for k in parts) and all(attrs[a] is getattr(x, a) for a in attrs):
            return x
        fn = x._evalfn if isinstance(x, Expr) else None
        new = Expr(x.name, fn.__func__ if fn else None, **parts) if isinstance(x, Expr) else CompValue(x.name, **parts)
        for a, v in attrs.items():
            setattr(new, a, v)
        return new
    if isinstance(x, list | tuple):
        items = [_bound(v, values) for v in x]
        return x if all(a is b for a, b in zip(items, x, strict=True)) else type(x)(items)
    if isinstance(x, Path):
        bound = copy.copy(x)
        for name in ("path", "arg", "args"):
            if hasattr(x, name):
                setattr(bound, name, _bound(getattr(x, name), values))
        return bound
    return x
