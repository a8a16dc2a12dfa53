"""Exact top-k text ranking on the embedded index without scoring every match.

The text ranking (retrieval.py's docstring: coordination level, then BM25 rounded to 6 places, then priority,
confidence, id) is computed here from the item sets of postings.py, with FTS5's own statistics and formula, so the
order is the one FTS5's bm25() gives. Items that hold each query token the same number of times (the same tf
signature) and have the same document length have the same level and score: such a *cell* is an AND of item sets.
Cells are taken best first from a heap of two kinds of entries: a partial signature (the tokens decided so far, with
the items that fit it), bounded above by what the undecided tokens could add at their highest tf and the shortest
length; and a whole signature at one length, whose key is exact (BM25 falls as length grows, so each signature's
next length comes after it). A cell taken is checked (live, admitted by the filters) and its items are ranked: a
small cell by reading its rows, a large one by walking the (priority, confidence, id) order and keeping its first
members; cells taken one after another are read together once they could fill the top k. The search stops as soon
as k checked items rank strictly above the heap's head. A filter admitting few items (FEW) confines the search to
them from the start: their set is ANDed into the root, so no cell holds another item. A search that would read more
than READ_BUDGET rows returns None and the caller ranks through FTS5, which gives the same order. The item sets
come decoded from the backend, which keeps them while the memory is unchanged (postings.Decoded).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence

from . import postings
from .retrieval import level
from .text_index import K1, B, idf

READ_BUDGET = 2500  # rows read before handing the query to FTS5 (same answer, slower)
FEW = 1000  # a filter admitting at most this many items confines the cells to them
SMALL = 256  # a cell of at most this many items is read row by row, a larger one through the order walk
_PAGE = 256


def contribution(idf_value: float, tf: float, dl: float, avgdl: float) -> float:
    """One token's BM25 term, as SQLite's FTS5 computes it (same operations in the same order)."""
    return idf_value * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * dl / avgdl)))


class _Scorer:
    """One query: its tokens' statistics and item sets, its filters, and the level and rounded BM25 score of an
    item."""

    def __init__(self, fts, terms: Sequence[str], token: str | None, kinds: Sequence[str]):
        """Read the statistics of `terms`."""
        self.rows, self.avgdl, sets = fts.text_stats(terms)
        self.terms, self.token, self.kinds = tuple(terms), token, tuple(kinds)
        self.sets = {t: sorted(sets[t], reverse=True) for t in self.terms}  # (tf, n, items), highest tf first
        self.idf = {t: idf(self.rows, sum(n for _, n, _ in self.sets[t])) for t in self.terms}

    def cell(self, signature: tuple[int, ...], dl: int) -> tuple[int, float]:
        """(level, rounded score) of the items with this tf per query token (0: absent) and document length: the
        matched tokens' terms summed in query order, then rounded, as FTS5's bm25 does."""
        score = 0.0
        for t, tf in zip(self.terms, signature, strict=True):
            if tf:
                score += contribution(self.idf[t], float(tf), float(dl), self.avgdl)
        return level(sum(1 for tf in signature if tf), len(self.terms)), round(score, 6)


def ranked(fts, terms: Sequence[str], token: str | None, kinds: Sequence[str], k: int) -> list[tuple] | None:
    """The k best (storid, id, score) rows of live items holding `token` (None: any) and one of `kinds` that contain
    one of `terms` (single FTS5 tokens); None when that would read more than READ_BUDGET rows."""
    if k <= 0:
        return []
    scorer = _Scorer(fts, terms, token, kinds)
    within = None
    if token is not None:
        admitted = fts.token_items(token, FEW + 1)
        if len(admitted) <= FEW:
            within = postings.bitmap_of(admitted)
    return _Cells(fts, scorer, k, within).run()


def _above(value: float) -> float:
    """A rounded bound at or above `value` however its terms were summed (float sums in another order differ in the
    last bits)."""
    return round(value * (1 + 1e-12) + 1e-12, 6)


class _Cells:
    """The best-first search over cells of one query (see the module doc)."""

    def __init__(self, fts, scorer: _Scorer, k: int, within: int | None = None):
        """Decode the query tokens' item sets (only their items in `within`, when given) and read the document
        lengths."""
        self.fts, self.scorer, self.k = fts, scorer, k
        self.lengths, self.length_sets = fts.doc_lengths(), {}
        shortest = float(self.lengths[0]) if self.lengths else 0.0
        sets = [[(tf, items) for tf, _, items in scorer.sets[t]] for t in scorer.terms]
        gain = [contribution(scorer.idf[t], float(per[0][0]), shortest, scorer.avgdl) if per else 0.0
                for t, per in zip(scorer.terms, sets, strict=True)]
        # tokens are decided in falling order of what they can add, so the bounds tighten early
        self.plan = sorted(range(len(sets)), key=lambda i: -gain[i])
        self.by_tf, self.gain = [sets[i] for i in self.plan], [gain[i] for i in self.plan]
        holding = [0] * len(self.by_tf)
        for i, per in enumerate(self.by_tf):
            for _, items in per:
                holding[i] |= items
        self.every = 0
        for items in holding:
            self.every |= items
        if within is not None:
            self.every &= within
        self.lacking = [self.every ^ (self.every & items) for items in holding]  # holding a query token, not this one
        self.heap: list[tuple] = []
        self.order = itertools.count()  # ties in the heap: partials before cells, then first queued first
        self.read, self.top = 0, []  # rows read; the k best checked (order key, storid), best first

    def run(self) -> list[tuple] | None:
        """The k best (storid, id, score) rows, or None past READ_BUDGET."""
        if self.lengths and self.every:
            self._push_partial((), self.every)
        taken, waiting = [], 0  # cells taken, not read yet: (items, level, score); the members they can give
        while self.heap and not self._settled():
            key, tied = self.heap[0][:2], 0
            while self.heap and self.heap[0][:2] == key:  # every cell of this key (partials of it split first)
                signature, items, at = heapq.heappop(self.heap)[4:]
                if at is None:
                    self._expand(signature, items)
                else:
                    tied |= self._cell(signature, items, at)
            if tied:
                taken.append((tied, -key[0], -key[1]))
                waiting += min(tied.bit_count(), self.k)
            if taken and (waiting >= self.k - len(self.top) or not self.heap):  # enough to fill the top k, if all pass
                if not self._take(taken):
                    return None
                taken, waiting = [], 0
        return [(s, key[4], -key[1]) for key, s in self.top]

    def _settled(self) -> bool:
        """True when k checked items rank strictly above every cell still in the heap."""
        if len(self.top) < self.k:
            return False
        worst, head = self.top[self.k - 1][0], self.heap[0]
        return (-worst[0], -worst[1]) > (-head[0], -head[1])

    def _push_partial(self, signature: tuple[int, ...], items: int) -> None:
        """Queue the items fitting a partial signature under the best key any of them can have."""
        n, decided = len(self.scorer.terms), len(signature)
        matched = sum(1 for tf in signature if tf)
        shortest, terms = float(self.lengths[0]), [self.scorer.terms[i] for i in self.plan[:decided]]
        score = sum(contribution(self.scorer.idf[t], float(tf), shortest, self.scorer.avgdl)
                    for t, tf in zip(terms, signature, strict=True) if tf) + sum(self.gain[decided:])
        heapq.heappush(self.heap, (-level(matched + n - decided, n), -_above(score), 0, next(self.order), signature,
                                   items, None))

    def _expand(self, signature: tuple[int, ...], items: int) -> None:
        """Split a partial signature on its next token: each tf it has, or absent."""
        i = len(signature)
        choices = [(tf, items & held) for tf, held in self.by_tf[i]] + [(0, items & self.lacking[i])]
        for tf, fitting in choices:
            if not fitting:
                continue
            whole = (*signature, tf)
            if len(whole) < len(self.scorer.terms):
                self._push_partial(whole, fitting)
            elif any(whole):
                self._push_cell(whole, fitting, 0)

    def _push_cell(self, signature: tuple[int, ...], items: int, at: int) -> None:
        """Queue the items of a whole signature at the at-th shortest length, under their exact key."""
        lvl, score = self.scorer.cell(self._in_query_order(signature), self.lengths[at])
        heapq.heappush(self.heap, (-lvl, -score, 1, next(self.order), signature, items, at))

    def _in_query_order(self, signature: tuple[int, ...]) -> tuple[int, ...]:
        """A whole signature (decided in plan order) in the query's token order."""
        out = [0] * len(signature)
        for i, tf in zip(self.plan, signature, strict=True):
            out[i] = tf
        return tuple(out)

    def _cell(self, signature: tuple[int, ...], items: int, at: int) -> int:
        """The items of a whole signature at the at-th shortest length; queues the signature's next length."""
        if at + 1 < len(self.lengths):
            self._push_cell(signature, items, at + 1)
        dl = self.lengths[at]
        if dl not in self.length_sets:
            self.length_sets[dl] = self.fts.length_items(dl)
        return items & self.length_sets[dl]

    def _take(self, cells: list[tuple[int, int, float]]) -> bool:
        """Rank the checked items of taken cells (items, level, score) into the top k, the rows of every small cell
        read in one query; False past READ_BUDGET."""
        scorer, keyed, rows = self.scorer, {}, []
        for cell, lvl, score in cells:
            if cell.bit_count() <= SMALL:
                keyed.update(dict.fromkeys(_members(cell), (lvl, score)))
            elif (first := self._first(cell)) is None:
                return False
            else:
                rows += [(lvl, score, r) for r in first]
        if keyed:
            self.read += len(keyed)
            if self.read > READ_BUDGET:
                return False
            rows += [(*keyed[r[0]], r) for r in self.fts.docs(list(keyed), scorer.token, scorer.kinds)]
        self.top = sorted(self.top + [((-lvl, -score, -r[2], -r[3], r[4]), r[0]) for lvl, score, r in rows])[: self.k]
        return True

    def _first(self, cell: int) -> list[tuple] | None:
        """The checked rows (storid, dl, priority, confidence, id, terms) of a large cell's first k members in
        (priority, confidence, id) order, through the order walk; None past READ_BUDGET."""
        scorer = self.scorer
        member = cell.to_bytes((cell.bit_length() + 7) // 8, "little")
        rows, walk = [], self.fts.order_walk(scorer.token)
        page = min(_PAGE, 2 * self.k * scorer.rows // cell.bit_count() + 1)
        try:  # a page is about twice what k members take, given the cell's share of all items
            while len(rows) < self.k and (seen := walk.fetchmany(page)):
                self.read += len(seen)
                if self.read > READ_BUDGET:
                    return None
                found = [s for (s,) in seen if s >> 3 < len(member) and member[s >> 3] >> (s & 7) & 1]
                if found:
                    rows += self.fts.docs(found, None, scorer.kinds)
                page = _PAGE
        finally:
            walk.close()
        return rows


_NONZERO = bytes([0] + [1] * 255)


def _members(items: int) -> list[int]:
    """The storids whose bits are set, ascending (the zero bytes are skipped by bytes.find, in C)."""
    data = items.to_bytes((items.bit_length() + 7) // 8, "little")
    flags, out, at = data.translate(_NONZERO), [], 0
    while (at := flags.find(1, at)) >= 0:
        byte, base = data[at], at << 3
        while byte:
            low = byte & -byte
            out.append(base + low.bit_length() - 1)
            byte ^= low
        at += 1
    return out
