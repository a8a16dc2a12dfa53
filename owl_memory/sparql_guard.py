"""The one read-only SPARQL checker: a query is judged on its parsed algebra, never on its text.

Refused: every update (LOAD, INSERT, DELETE, CLEAR, DROP, CREATE, ...), SERVICE anywhere in the query (subqueries,
EXISTS filters included), and FROM / FROM NAMED (rdflib fetches those graphs over the network). The parser has
already expanded escapes such as \\u0053ERVICE, so no spelling gets past. Everything else is allowed: a string
"from" in a filter or an IRI ending in /load is just data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import QueryRefused

if TYPE_CHECKING:
    from rdflib.plugins.sparql.sparql import Query

_READ_ONLY = "write a SELECT, ASK, CONSTRUCT or DESCRIBE over the loaded graph only"


def check_read_only(query_text: str) -> Query:
    """The parsed, translated query when it is read-only and local; QueryRefused saying what to change otherwise."""
    from rdflib.plugins.sparql.algebra import translateQuery  # 0.2 s of imports: paid by the first query only
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        query = translateQuery(parseQuery(query_text))
    except Exception as e:  # pyparsing and translation errors come in many types
        raise _not_a_query(query_text, e) from None
    if query.algebra.get("datasetClause"):
        raise QueryRefused(f"FROM / FROM NAMED is not allowed (it would fetch graphs from elsewhere); {_READ_ONLY}")
    if any(node.name == "ServiceGraphPattern" for node in _nodes(query.algebra)):
        raise QueryRefused(f"SERVICE is not allowed (it would send a request to another endpoint); {_READ_ONLY}")
    return query


def _not_a_query(query_text: str, error: Exception) -> QueryRefused:
    """QueryRefused for text that is not a query: an update is refused as one, anything else as a syntax error."""
    from rdflib.plugins.sparql.parser import parseUpdate

    try:
        parseUpdate(query_text)
    except Exception:
        return QueryRefused(f"the query does not parse ({type(error).__name__}: {str(error)[:160]}); fix the SPARQL "
                            "and retry, declaring every PREFIX you use")
    return QueryRefused(f"updates (LOAD, INSERT, DELETE, CLEAR, DROP, CREATE, ...) are not allowed; {_READ_ONLY}")


def _nodes(value):
    """Every CompValue inside a translated query: patterns, expressions and subqueries alike."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(value, CompValue):
        yield value
        for child in value.values():
            yield from _nodes(child)
    elif isinstance(value, list | tuple):
        for child in value:
            yield from _nodes(child)
