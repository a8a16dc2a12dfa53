"""Exact top-k text ranking on the embedded index without scoring every match.

The text ranking (retrieval.py's docstring: coordination level, then BM25 rounded to 6 places, then priority,
confidence, id) is computed here from the postings tables (quadstore.py), with FTS5's own statistics and formula, so
the order is the one FTS5's bm25() gives. Levels are taken from the top: the items that can reach a level are the
intersections of the query tokens' item bitmaps; while they are few, each is scored by one lookup. Once a level admits
many items, a threshold algorithm walks them: each posting list, one per (token, tf), is read in (document length,
priority DESC, confidence DESC, id) order, along which a token's BM25 term never grows, so its head bounds every item
not yet read; items outside the level's bitmap are passed over, the others scored (liveness and filters checked then);
reading stops as soon as k read items rank above anything an unread item of the level could reach (its best possible
rounded score; a tie keeps reading), or when the lists end (the next level follows). A filter admitting few items skips
all that: those items are scored directly. A walk longer than READ_BUDGET rows returns None and the caller ranks
through FTS5, which gives the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

from .retrieval import level, levels
from .text_index import K1, B, idf

READ_BUDGET = 2500  # postings read before handing the query to FTS5 (same answer, slower)
FEW = 400  # a level or filter admitting at most this many items: score them directly
_BATCH = 64


def contribution(idf_value: float, tf: float, dl: float, avgdl: float) -> float:
    """One token's BM25 term, as SQLite's FTS5 computes it (same operations in the same order)."""
    return idf_value * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * dl / avgdl)))


class _Scorer:
    """One query: its tokens' statistics, its filters, and the level and rounded BM25 score of an item."""

    def __init__(self, fts, terms: Sequence[str], token: str | None, kinds: Sequence[str]):
        """Read the statistics of `terms`."""
        rows, self.avgdl, df = fts.text_stats(terms)
        self.terms, self.token, self.kinds = tuple(terms), token, tuple(kinds)
        self.df = {t: df.get(t, (0, int)) for t in self.terms}  # (document frequency, items bitmap reader)
        self.idf = {t: idf(rows, self.df[t][0]) for t in self.terms}
        self.markers = [(t, f" {t}:") for t in self.terms]  # how a token starts in an item's "token:tf ..." text

    def keys(self, docs: Sequence[tuple]) -> dict[int, tuple]:
        """{storid: (level, score, priority, confidence, id)} of (storid, dl, priority, confidence, id, terms) rows
        holding a query token; the score sums the matched tokens' terms in query order, then rounds, as FTS5's
        bm25 does."""
        out = {}
        for s, dl, priority, confidence, item, pairs in docs:
            pairs = f" {pairs} "
            score, matched = 0.0, 0
            for t, marker in self.markers:
                at = pairs.find(marker)
                if at >= 0:
                    tf = pairs[at + len(marker): pairs.index(" ", at + 1)]
                    score += contribution(self.idf[t], float(tf), float(dl), self.avgdl)
                    matched += 1
            if matched:
                out[s] = (level(matched, len(self.terms)), round(score, 6), priority, confidence, item)
        return out


def _order(key: tuple) -> tuple:
    """Sort key of a scored item: level DESC, score DESC, priority DESC, confidence DESC, id ASC."""
    return (-key[0], -key[1], -key[2], -key[3], key[4])


def _best(keys: dict[int, tuple], k: int) -> list[tuple]:
    """The k best (storid, id, score) rows of scored items."""
    ranked = sorted(keys.items(), key=lambda kv: _order(kv[1]))[:k]
    return [(s, key[4], key[1]) for s, key in ranked]


def ranked(fts, terms: Sequence[str], token: str | None, kinds: Sequence[str], k: int) -> list[tuple] | None:
    """The k best (storid, id, score) rows of live items holding `token` (None: any) and one of `kinds` that contain
    one of `terms` (single FTS5 tokens); None when the walk would read more than READ_BUDGET postings."""
    if k <= 0:
        return []
    scorer = _Scorer(fts, terms, token, kinds)
    if token is not None:
        few = fts.token_docs(token, kinds, FEW + 1)
        if len(few) <= FEW:
            return _best(scorer.keys(few), k)
    sets = {t: scorer.df[t][1]() for t in terms}
    keys: dict[int, tuple] = {}
    n = len(terms)
    for need in levels(n):
        found = _holding(sets, need)
        if isinstance(found, int):  # many items from this level on: walk them (the levels above are all scored)
            if not _walk(fts, scorer, keys, k, level(need, n), found):
                return None
        elif new := [s for s in found if s not in keys]:
            keys.update(scorer.keys(fts.docs(new, token, kinds)))
        if sum(key[0] >= level(need, n) for key in keys.values()) >= k:
            break
    return _best(keys, k)


def _holding(sets: dict[str, int], need: int) -> list[int] | int:
    """The storids of the items holding at least `need` of the tokens (need is all, all but one, or one), from the
    tokens' bitmaps; their bitmap when more than FEW do."""
    groups = [list(sets)] if need == len(sets) else [[t] for t in sets] if need == 1 else \
        [[t for t in sets if t != left] for left in sets]
    found = 0
    for group in groups:
        common = sets[group[0]]
        for t in group[1:]:
            common &= sets[t]
        found |= common
    if found.bit_count() > FEW:
        return found
    bits, out, at = bin(found)[:1:-1], [], 0
    while (at := bits.find("1", at)) >= 0:
        out.append(at)
        at += 1
    return out


def _walk(fts, scorer: _Scorer, keys: dict[int, tuple], k: int, top: int, among: int) -> bool:
    """Read the list with the highest head, scoring (into `keys`) the live, admitted items of the `among` bitmap it
    meets, until k read items rank above every unread one of level `top` or the lists end (see the module doc);
    False when that would read more than READ_BUDGET postings."""
    lists = [_List(fts, scorer, t, f) for t in scorer.terms for f in fts.term_frequencies(t)]
    members, seen = among.to_bytes((among.bit_length() + 7) // 8, "little"), set(keys)
    try:
        best = sorted(keys.values(), key=_order)[:k]
        live, read = [x for x in lists if x.head is not None], 0
        while live and not _settled(scorer, best, live, k, top):
            batch = max(live, key=lambda x: x.bound).take(_BATCH)
            read += len(batch)
            if read > READ_BUDGET:
                return False
            new = [s for _, s in batch if s not in seen and s >> 3 < len(members) and members[s >> 3] >> (s & 7) & 1]
            if new:
                seen.update(new)
                scored = scorer.keys(fts.docs(new, scorer.token, scorer.kinds))
                keys.update(scored)
                best = sorted(best + list(scored.values()), key=_order)[:k]
            live = [x for x in live if x.head is not None]
        return True
    finally:
        for x in lists:
            x.rows.close()


def _settled(scorer: _Scorer, best: list[tuple], lists: list, k: int, top: int) -> bool:
    """True when the k-th best read item ranks strictly above the best rounded score an unread item of level `top`
    can reach (an unread item holds each of its tokens below the head of that token's lists)."""
    if len(best) < k:
        return False
    heads: dict[str, float] = {}
    for x in lists:
        heads[x.term] = max(heads.get(x.term, 0.0), x.bound)
    n, bounds = len(scorer.terms), sorted(heads.values(), reverse=True)
    for matched in range(1, len(bounds) + 1):
        reach = round(sum(bounds[:matched]) * (1 + 1e-12) + 1e-12, 6)  # float sums in another order: stay above
        if level(matched, n) == top and (top, reach) >= best[k - 1][:2]:
            return False
    return True


class _List:
    """A lazy posting list of one (token, tf): its cursor, its head row and the BM25 term of that head."""

    def __init__(self, fts, scorer: _Scorer, term: str, tf: int):
        """Open the walk of `term` occurring `tf` times among the items the query's filters admit."""
        self.term, self.tf, self.idf, self.avgdl = term, float(tf), scorer.idf[term], scorer.avgdl
        self.rows = fts.term_walk(term, tf)
        self.buffer: list = []
        self.head, self.bound, self.fetch = None, 0.0, 8
        self._advance()

    def take(self, n: int) -> list[tuple]:
        """The next n rows (fewer at the end)."""
        out = []
        while self.head is not None and len(out) < n:
            out.append(self.head)
            self._advance()
        return out

    def _advance(self) -> None:
        """Move the head to the next row (fetched in growing pages) and recompute its bound."""
        if not self.buffer:
            self.buffer = self.rows.fetchmany(self.fetch)[::-1]
            self.fetch = min(2 * self.fetch, 256)
        self.head = self.buffer.pop() if self.buffer else None
        if self.head is not None:
            self.bound = contribution(self.idf, self.tf, float(self.head[0]), self.avgdl)
