"""Deterministic retrieval: applicability filter and ranking in SQL over the quadstore, ids and metadata out.

User text never enters a query string: every value is a bound parameter, and free text reaches FTS5 only
as quoted word tokens inside a bound MATCH argument.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdflib.namespace import RDF

from .errors import InvalidItem
from .graph import MemoryGraph
from .vocab import ITEM, KINDS, OM

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_K = 50
MAX_TOKENS = 32


@dataclass(frozen=True)
class Query:
    """A normalized search request: quadstore ids of the filters, FTS5 expression, result count."""

    filters: tuple  # ((property storid, object storid), ...)
    kinds: tuple    # kind class storids
    match: str | None
    k: int


def fts_expression(text: str | None) -> str | None:
    """An FTS5 MATCH expression (OR of quoted word tokens) for free text; None when it has no words."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text or "")))[:MAX_TOKENS]
    return " OR ".join(f'"{w}"' for w in words) or None


def rank(graph: MemoryGraph, q: Query) -> list[tuple[int, str, float]]:
    """Up to q.k (item storid, id, score), applicability first, then score, priority, confidence, id.

    An exception ranks just above the rule it refines whenever that rule is among the results.
    """
    rows = _ranked(graph, q, limit=q.k)
    if rows:
        rows = _exceptions_first(rows, _ranked(graph, q, exceptions_of=[r[0] for r in rows]))
    return [(s, iri[len(str(ITEM)):], score) for s, iri, score, _ in rows[: q.k]]


def _ranked(graph: MemoryGraph, q: Query, limit: int = -1, exceptions_of: list | None = None) -> list[tuple]:
    """Ranked (storid, iri, score, rule) rows of applicable items; optionally only exceptions to given rules."""
    cand, params = _candidates(graph, q)
    score = "-bm25(om_fts)" if q.match else "0.0"
    source = "om_fts WHERE om_fts MATCH ?" if q.match else "om_fts"
    only = f"WHERE ex.s IN ({', '.join('?' * len(exceptions_of))})" if exceptions_of else ""
    sql = f"""
        WITH cand(s) AS ({cand}),
             hit(s, score) AS (SELECT rowid, {score} FROM {source})
        SELECT c.s, r.iri, round(h.score, 6) AS score, ex.s AS rule
        FROM cand c JOIN hit h ON h.s = c.s
        JOIN resources r ON r.storid = c.s
        LEFT JOIN datas pr ON pr.s = c.s AND pr.p = ?
        LEFT JOIN datas cf ON cf.s = c.s AND cf.p = ?
        LEFT JOIN objs ex ON ex.o = c.s AND ex.p = ?
        {only}
        ORDER BY score DESC, coalesce(pr.o, 0) DESC, coalesce(cf.o, 0) DESC, r.iri ASC
        LIMIT ?"""
    sid = graph.sid
    params += [q.match] if q.match else []
    params += [sid[OM.priority], sid[OM.confidence], sid[OM.hasException], *(exceptions_of or []), limit]
    return graph.db.execute(sql, params).fetchall()


def _candidates(graph: MemoryGraph, q: Query) -> tuple[str, list]:
    """SQL (fixed text) and bound values selecting applicable, non-superseded items."""
    parts, params = [], []
    for p, o in q.filters:
        parts.append("SELECT s FROM objs WHERE p = ? AND o = ?")
        params += [p, o]
    if q.kinds:
        parts.append(f"SELECT s FROM objs WHERE p = ? AND o IN ({', '.join('?' * len(q.kinds))})")
        params += [graph.sid[RDF.type], *q.kinds]
    if not parts:
        parts.append("SELECT rowid FROM om_fts")
    sql = " INTERSECT ".join(parts) + " EXCEPT SELECT o FROM objs WHERE p = ?"
    return sql, params + [graph.sid[OM.supersedes]]


def _exceptions_first(rows: list, exceptions: list) -> list:
    """Put each exception just above the rule it refines (rows and exceptions are ranked rows)."""
    order = [r for r in rows if r[0] not in {e[0] for e in exceptions}]
    for e in exceptions:
        at = next((i for i, r in enumerate(order) if r[0] == e[3]), None)
        if at is not None:
            order.insert(at, e)
    return order


def kind_ids(graph: MemoryGraph, kinds) -> tuple:
    """Quadstore ids of kind names (case-insensitive); ValueError names the valid kinds."""
    if kinds is None:
        return ()
    names = [kinds] if isinstance(kinds, str) else list(kinds)
    return tuple(graph.sid[OM[normalize_kind(n)]] for n in names)


def normalize_kind(name: str) -> str:
    """The ontology class name of a kind given in any case ('antipattern' -> 'AntiPattern')."""
    by_lower = {k.lower(): k for k in KINDS}
    key = str(name).replace("_", "").replace("-", "").replace(" ", "").lower()
    if key not in by_lower:
        raise InvalidItem(f"unknown kind {str(name)[:40]!r}; use one of {', '.join(KINDS)}")
    return by_lower[key]
