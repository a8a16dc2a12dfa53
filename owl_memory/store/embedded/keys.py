"""The key tokens of the embedded index: one per kind or applicability link of an item (`k<property id>x<object id>`,
quadstore ids), one per combination of links on 2 or 3 applicability properties, and the FTS5 MATCH text of a query.

User text reaches a MATCH expression only as quoted word tokens, filter values only as quadstore ids.
"""

from __future__ import annotations

from itertools import combinations, product

from ..retrieval import IndexQuery


def key_token(p: int, o: int) -> str:
    """The index token that stands for the link (item, p, o)."""
    return f"k{p}x{o}"


def filter_token(filters: tuple[tuple[int, int], ...]) -> str | None:
    """The one order-table token of a query's filters ((property, object) storid pairs, all to hold): the key
    token of a single filter, the combination token of several, None without filters."""
    return "+".join(sorted(key_token(p, o) for p, o in filters)) or None


def filter_combinations(keys: list[str], skipped: tuple[int, ...]) -> list[str]:
    """The combination tokens of an item's key tokens: one per choice of one link on each of 2 or 3 different
    applicability properties (the tokens of the `skipped` properties take no part: the kind's rdf:type, and what an
    item is about, whose many terms would multiply the combinations), as filter_token names them."""
    by_property: dict[str, list[str]] = {}
    for token in keys:
        p = token[1:].split("x", 1)[0]
        if p not in {str(x) for x in skipped}:
            by_property.setdefault(p, []).append(token)
    groups = list(by_property.values())
    return ["+".join(sorted(choice)) for r in range(2, len(groups) + 1) for chosen in combinations(groups, r)
            for choice in product(*chosen)]


def match_expression(q: IndexQuery) -> str | None:
    """The FTS5 MATCH text of a query: key tokens AND quoted words; None when there is neither."""
    parts = [f'"{key_token(p, o)}"' for p, o in q.filters]
    if q.kinds:
        parts.append("(" + " OR ".join(f'"{key_token(p, o)}"' for p, o in q.kinds) + ")")
    keys = f"keys : ({' AND '.join(parts)})" if parts else ""
    need = q.need or len(q.words)
    groups = [" AND ".join(f'"{w}"' for w in c) for c in combinations(q.words, need)] if q.words else []
    text = f"{{title summary tags}} : ({' OR '.join(f'({g})' for g in groups)})" if groups else ""
    return " AND ".join(x for x in (keys, text) if x) or None
