"""What crosses `Memory.sparql`: the query as the guard accepted it (parsed once per text), the caller's bindings as
rdflib terms, and answer cells as JSON-ready Python (and the numbers stored literals hold)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from rdflib import Literal, Variable
from rdflib.term import Identifier, Node

from ..adapters import sparql as sparql_text
from ..errors import QueryRefused

_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Checked:
    """A query's text with its parsed form, as the read-only guard accepted it: a backend runs the parse (embedded)
    or sends the text (server), and never parses it again."""

    text: str
    parsed: sparql_text.Parsed


def checked_query(text: str) -> Checked:
    """`text` through the read-only guard: SELECT or ASK only, QueryRefused otherwise."""
    return Checked(text, sparql_text.check_read_only(text, accepts=("SELECT", "ASK")))


def bound_terms(bindings: Mapping[str, object]) -> dict[str, Identifier]:
    """Variable bindings (rdflib terms, or any value an rdflib Literal takes) as rdflib terms; QueryRefused for a name
    that is no SPARQL variable."""
    out: dict[str, Identifier] = {}  # keyed by Variable (a str)
    for name, value in bindings.items():
        name = str(name).lstrip("?$")
        if not _VARIABLE.match(name):
            raise QueryRefused(f"binding name {name[:40]!r} is not a SPARQL variable name; use letters, digits, _")
        out[Variable(name)] = value if isinstance(value, Identifier) else Literal(value)
    return out


def answer_cell(term: Identifier | bool | None) -> str | int | float | bool | None:
    """One answer cell as JSON-ready Python: None, a bool (ASK), a number or boolean for a literal of that type, else
    the term's text (IRIs and other literals)."""
    if term is None or isinstance(term, bool):
        return term
    value = term.toPython() if isinstance(term, Literal) else None
    if isinstance(value, bool | int | float):
        return value
    return float(value) if isinstance(value, Decimal) else str(term)


def integer(term: Node | bool | None) -> int:
    """The integer a stored integer literal (or an ASK's bool) holds; 0 for None (no value, or unbound)."""
    return 0 if term is None else int(term) if isinstance(term, bool) else int(str(term))
