"""rdflib's SPARQL parser and algebra behind one door: parsing, the read-only guard, evaluation with its failures
typed, and the one query walker.

Every other module reads a query through these functions and never touches rdflib's parser, algebra nodes
(`CompValue`) or their private keys, so an rdflib upgrade changes this file only.

The guard refuses every update (LOAD, INSERT, DELETE, CLEAR, DROP, CREATE, ...), SERVICE anywhere in the query
(subqueries, EXISTS filters included) unless its IRI is one of the endpoints the caller grants, and FROM / FROM NAMED
(rdflib fetches those graphs over the network). The parser has already expanded escapes such as \\u0053ERVICE, so no
spelling gets past. Everything else is allowed: a string "from" in a filter or an IRI ending in /load is just data.
Every local evaluation (`evaluate`) passes the same guard on the parsed form, whoever wrote the query (an agent, a
competency question, a gold, a judge rule), and runs under a wall time (`QUERY_SECONDS` by default): QueryTimeout.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING

from pyparsing import ParseException, ParseResults
from rdflib import Literal, URIRef, Variable

from ..errors import CapExceeded, QueryFailed, QueryRefused, QueryTimeout
from .wall_time import time_limit

if TYPE_CHECKING:
    from rdflib.plugins.sparql.sparql import Query as Parsed  # what parse returns (annotations elsewhere name it)

FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
# What rdflib's grammar (pyparsing) raises on bad text: a syntax error, a \U escape that names no character, nesting
# deeper than Python's stack.
SYNTAX_ERRORS = (ParseException, ValueError, RecursionError)
_REQUIRED_ONLY = ("LeftJoin", "Minus", "Union")  # their p2 is optional, subtracted or an alternative
_ADVICE = "write a {} over the loaded graph only"  # what to write instead of a refused query
QUERY_SECONDS = 10.0  # wall time one local query may take (the agent's worker uses the same default)
WHOLE_ROWS = 200_000  # rows a result read whole (a competency question, a gold) may hold


class QuerySyntaxError(ValueError):
    """A SPARQL text that does not parse (the parser's own message and column when it gives them)."""


def parse(text: str, prefixes: dict | None = None) -> Parsed:
    """The parsed, translated query (rdflib's Query, opaque to callers; parsed once per text and thread, shared, never
    mutated: sparql_binding.bind_terms binds a copy); QuerySyntaxError when it does not parse."""
    return _parsed(str(text), tuple(sorted((prefixes or {}).items())), threading.get_ident())


@lru_cache(maxsize=512)
def _parsed(text: str, prefixes: tuple, thread: int) -> Parsed:
    from rdflib.plugins.sparql import prepareQuery  # 0.2 s of imports: paid by the first query only

    try:
        return prepareQuery(text, initNs=dict(prefixes))
    except Exception as e:  # besides SYNTAX_ERRORS, rdflib's translation raises a bare Exception (an unknown prefix)
        raise QuerySyntaxError(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]) from e


@dataclass(frozen=True)
class Answer:
    """What a query answered over a graph: its form, the SELECT's variable names, rows of RDF terms (None where a
    variable is unbound; a CONSTRUCT's or DESCRIBE's triples), whether they were cut at the row cap, ASK's answer."""

    kind: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()
    truncated: bool = False
    ask: bool | None = None


def evaluate(graph, query, *, prefixes: dict | None = None, bindings: dict | None = None,
             max_rows: int | None = None, services: tuple[str, ...] = (),
             seconds: float | None = None) -> Answer:
    """`query` (text, or a parsed query) run over `graph`, its rows read (at most `max_rows`; when None, the whole
    result, CapExceeded past WHOLE_ROWS), within `seconds` of wall time (QUERY_SECONDS when None); text may use
    `prefixes` (the graph's own by default), `bindings` maps variables to terms. Text or parsed, it passes
    `check_read_only`'s guard first (SERVICE only to `services`): QueryRefused. QueryFailed with rdflib's reason when
    it does not parse or fails while it runs, QueryTimeout past `seconds`; MemoryError passes through."""
    if isinstance(query, str):
        try:
            query = check_read_only(query, services=services, prefixes=prefixes or dict(graph.namespaces()))
        except QueryRefused as e:
            if e.cause != "syntax":
                raise
            raise QueryFailed(str(e)) from e  # text that does not parse fails, as it always has
    else:
        _refuse(query, FORMS, services)
    try:
        with time_limit(seconds or QUERY_SECONDS):
            result = graph.query(query, initNs=prefixes, initBindings=bindings)
            if result.type == "ASK":
                return Answer("ASK", ask=bool(result.askAnswer))
            rows = [tuple(r) for r in islice(result, (WHOLE_ROWS if max_rows is None else max_rows) + 1)]
    except (MemoryError, QueryTimeout):
        raise  # the process's memory limit or the wall time, not a fault of the query
    except Exception as e:  # rdflib's evaluator raises bare Exception (GRAPH over a plain graph) and built-in types
        raise QueryFailed(f"{type(e).__name__}: {str(e)[:160]}") from e
    if max_rows is None and len(rows) > WHOLE_ROWS:
        raise CapExceeded(f"the query answered more than {WHOLE_ROWS:,} rows, and a result compared whole (a "
                          f"competency question, a gold) may hold no more; narrow it")
    columns = tuple(str(v) for v in result.vars) if result.type == "SELECT" else ("s", "p", "o")
    return Answer(result.type, columns, tuple(rows[:max_rows]), max_rows is not None and len(rows) > max_rows)


def check_read_only(query_text: str, accepts: tuple[str, ...] = FORMS, *, services: tuple[str, ...] = (),
                    prefixes: dict | None = None):
    """The parsed query when it is read-only, of a form in `accepts`, and sends requests nowhere but `services` (the
    run's granted endpoints, after --endpoint-map); QueryRefused saying what to change otherwise (its advice names
    only the forms the caller accepts). `prefixes` are those the text may use undeclared."""
    try:
        query = parse(query_text, prefixes)
    except QuerySyntaxError as e:
        raise _not_a_query(query_text, e.__cause__ or e, _ADVICE.format(_either(accepts))) from None
    return _refuse(query, accepts, services)


def _refuse(query, accepts: tuple[str, ...], services: tuple[str, ...]):
    """The guard on a parsed query: `query` itself when it passes, QueryRefused otherwise."""
    advice = _ADVICE.format(_either(accepts))
    if query.algebra.get("datasetClause"):
        raise QueryRefused(f"FROM / FROM NAMED is not allowed (it would fetch graphs from elsewhere); {advice}")
    for node in _nodes(query.algebra):
        if node.name == "ServiceGraphPattern" and not (isinstance(node["term"], URIRef)
                                                       and str(node["term"]) in services):
            granted = f"only the granted endpoints ({', '.join(services)})" if services else "no endpoint"
            raise QueryRefused(f"SERVICE is not allowed to <{node['term']}> (it would send a request to an endpoint "
                               f"nobody granted; SERVICE may name {granted}); {advice}")
    if form(query) not in accepts:
        raise QueryRefused(f"only {_either(accepts, 'and')} are answered here, got {form(query)}; rewrite it as a "
                           f"{accepts[0]} of the values you need")
    return query


def _either(forms: tuple[str, ...], joiner: str = "or") -> str:
    """Query forms in words: "SELECT or ASK", "SELECT, ASK, CONSTRUCT or DESCRIBE"."""
    return forms[0] if len(forms) == 1 else f"{', '.join(forms[:-1])} {joiner} {forms[-1]}"


def _not_a_query(query_text: str, error: BaseException, advice: str) -> QueryRefused:
    """QueryRefused for text that is not a query: an update is refused as one, anything else as a syntax error."""
    from rdflib.plugins.sparql.parser import parseUpdate

    try:
        parseUpdate(query_text)
    except SYNTAX_ERRORS:
        return QueryRefused(f"the query does not parse ({type(error).__name__}: {str(error)[:160]}); fix the SPARQL "
                            "and retry, declaring every PREFIX you use", cause="syntax")
    return QueryRefused(f"updates (LOAD, INSERT, DELETE, CLEAR, DROP, CREATE, ...) are not allowed; {advice}")


def form(query) -> str:
    """The form of a parsed query: SELECT, ASK, CONSTRUCT or DESCRIBE."""
    return query.algebra.name.removesuffix("Query").upper()


def limit_of(query) -> int | None:
    """The LIMIT of a parsed query (its outermost slice), None when it has none."""
    node = query.algebra.get("p")
    while node is not None and getattr(node, "name", None) != "Slice":
        node = node.get("p") if hasattr(node, "get") else None
    return None if node is None or node.get("length") is None else int(node["length"])


def services(query) -> set[str]:
    """The IRIs the SERVICE clauses of a parsed query name, wherever they are (subqueries, EXISTS filters)."""
    return {str(n["term"]) for n in _nodes(query.algebra) if n.name == "ServiceGraphPattern"}


def named_terms(query) -> set:
    """Every IRI and literal a parsed query names, anywhere in its algebra."""
    out, todo = set(), [query.algebra]
    while todo:
        x = todo.pop()
        if isinstance(x, URIRef | Literal):
            out.add(x)
        elif isinstance(x, dict):
            todo += list(x.values())
        elif isinstance(x, list | tuple | set):
            todo += list(x)
    return out


def dataset(query) -> list[str]:
    """The graphs a parsed query's FROM and FROM NAMED clauses name, in order."""
    return [str(d["default"] if "default" in d else d["named"]) for d in query.algebra.get("datasetClause") or ()]


def graph_names(query) -> list[str]:
    """The IRIs (not variables) the GRAPH patterns of a parsed query name, subqueries included, in order."""
    return [str(node["term"]) for node in _nodes(query.algebra) if node.name == "Graph"
            and isinstance(node["term"], URIRef)]


def predicates(query) -> set[str]:
    """Every IRI a parsed query uses as a predicate or inside a property path, anywhere in its algebra."""
    from rdflib.paths import Path

    triples, _ = patterns(query)
    out, todo = set(), [t[1] for t in triples]
    while todo:
        p = todo.pop()
        if isinstance(p, URIRef):
            out.add(str(p))
        elif isinstance(p, Path):
            todo += [v for name in ("path", "arg", "args") if hasattr(p, name)
                     for v in (getattr(p, name) if isinstance(getattr(p, name), list) else [getattr(p, name)])]
    return out


# ---- the one query walker -------------------------------------------------------------------------------------

def patterns(query, required_only: bool = False) -> tuple[list[tuple], list]:
    """The triple patterns and filter expressions of a parsed query. `required_only`: only what every answer must
    match (OPTIONAL, MINUS and the second branch of a UNION left out; patterns inside filters too); else every
    pattern and filter anywhere, EXISTS and subqueries included. Filters come as opaque expressions: read them with
    `expression_key`, `variables` and `filter_hint`."""
    triples: list[tuple] = []
    filters: list = []
    (_required if required_only else _everywhere)(query.algebra, triples, filters)
    return triples, filters


def _required(node, triples: list, filters: list) -> None:
    """Collect the required BGP triples and filters of an algebra node."""
    if not _is_node(node):
        return
    if node.name == "BGP":
        triples.extend(node.triples)
        return
    if node.name == "Filter":
        filters.append(node.expr)
    if node.name in _REQUIRED_ONLY:
        _required(node.p1, triples, filters)
        return
    for key in ("p", "p1", "p2"):
        if key in node and node[key] is not None:
            _required(node[key], triples, filters)


def _everywhere(node, triples: list, filters: list) -> None:
    """Collect every BGP triple and filter of an algebra tree."""
    if isinstance(node, dict):
        if getattr(node, "name", "") == "BGP":
            triples.extend(node["triples"])
        if getattr(node, "name", "") == "Filter":
            filters.append(node["expr"])
        for v in node.values():
            _everywhere(v, triples, filters)
    elif isinstance(node, list | tuple):
        for v in node:
            _everywhere(v, triples, filters)


def expression_key(expr):
    """A filter expression as a nested tuple of its operator names and operands (no parser-internal keys), for
    comparing the filters of two queries."""
    if isinstance(expr, dict):
        items = tuple((k, expression_key(v)) for k, v in sorted(expr.items()) if not k.startswith("_"))
        return getattr(expr, "name", ""), items
    if isinstance(expr, list | tuple):
        return tuple(expression_key(v) for v in expr)
    return expr


def variables(expr) -> set:
    """The variables an expression mentions."""
    if isinstance(expr, Variable):
        return {expr}
    if _is_node(expr):
        return set().union(*[variables(v) for v in expr.values()]) if expr else set()
    if isinstance(expr, list | tuple):
        return set().union(*[variables(v) for v in expr]) if expr else set()
    return set()


@dataclass(frozen=True)
class FilterHint:
    """What one filter condition says a variable's value looks like: "regex" (a pattern and its flags), "prefix"
    (STRSTARTS / CONTAINS text) or "equals" (a constant)."""

    kind: str
    value: object
    flags: str
    variables: frozenset


def filter_hints(expr) -> list[FilterHint]:
    """The hints of a filter expression and of every sub-expression (&&, ||, nested calls), outermost first."""
    if not _is_node(expr):
        return []
    out = []
    if expr.name == "Builtin_REGEX" and isinstance(expr.pattern, Literal):
        flags = str(expr.get("flags") or "")
        out.append(FilterHint("regex", str(expr.pattern), flags, frozenset(variables(expr.text))))
    elif expr.name in ("Builtin_STRSTARTS", "Builtin_CONTAINS") and isinstance(expr.arg2, Literal):
        out.append(FilterHint("prefix", str(expr.arg2), "", frozenset(variables(expr.arg1))))
    elif expr.name == "RelationalExpression" and expr.op == "=" and not isinstance(expr.other, Variable):
        out.append(FilterHint("equals", expr.other, "", frozenset(variables(expr.expr))))
    for v in expr.values():
        for sub in v if isinstance(v, list) else [v]:
            out += filter_hints(sub)
    return out


# ---- the parse tree (before translation), for what the algebra no longer shows --------------------------------

def prefix_report(text: str) -> tuple[set, set] | None:
    """(prefixes the query declares, prefixes its prefixed names use) read off its parse tree; None when it does not
    parse."""
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        tree = parseQuery(str(text))
    except SYNTAX_ERRORS:
        return None
    return {d.get("prefix") or "" for d in tree[0]}, _prefixes_used(tree)


def _prefixes_used(tree) -> set:
    """Every prefix of a prefixed name in a parse tree."""
    if _is_node(tree):
        own = {tree.get("prefix") or ""} if tree.name == "pname" else set()
        return own.union(*(_prefixes_used(v) for v in tree.values()))
    if isinstance(tree, list | tuple | ParseResults):
        return set().union(*(_prefixes_used(v) for v in tree))
    return set()


def projection(text: str) -> list[str] | None:
    """The variables a SELECT projects ("?name", sorted), None for SELECT *; QuerySyntaxError naming the column when
    it does not parse."""
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        query = parseQuery(str(text))[1]
    except ParseException as e:
        raise QuerySyntaxError(f"does not parse ({e.msg} at column {e.col})") from e
    except SYNTAX_ERRORS as e:
        raise QuerySyntaxError(f"does not parse ({type(e).__name__}: {str(e)[:160]})") from e
    if "projection" not in query:
        return None
    return sorted("?" + str(p["evar"] if "evar" in p else p["var"]) for p in query["projection"])


def _is_node(value) -> bool:
    """Whether a value is an algebra or parse-tree node."""
    from rdflib.plugins.sparql.parserutils import CompValue

    return isinstance(value, CompValue)


def _nodes(value) -> Iterator:
    """Every node inside a translated query: patterns, expressions and subqueries alike."""
    if _is_node(value):
        yield value
        for child in value.values():
            yield from _nodes(child)
    elif isinstance(value, list | tuple):
        for child in value:
            yield from _nodes(child)
