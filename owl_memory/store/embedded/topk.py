"""Exact top-k text ranking on the embedded index without scoring every match.

The text ranking (retrieval.py's docstring: coordination level, then BM25 rounded to 6 places, then priority,
confidence, id) is computed here from the item sets of postings.py, with FTS5's own statistics and formula, so the
order is the one FTS5's bm25() gives. Items that hold each query token the same number of times (the same tf
signature) and have the same document length have the same level and score: such a *cell* is an AND of item sets.
Cells are taken best first from a heap of two kinds of entries: a partial signature (the tokens decided so far, with
the items that fit it), bounded above by what the undecided tokens could add at their highest tf and the shortest
length; and a whole signature at one length, whose key is exact (BM25 falls as length grows, so each signature's
next length some of its items have comes after it; lengths none has are skipped by an AND, never queued). A cell
taken is checked (live, admitted by the filters) and its items are ranked: a small cell by reading its rows, a large
one by walking the (priority, confidence, id) order and keeping its first members; cells taken one after another are
read together once they could fill the top k. The search stops as soon as k checked items rank strictly above the
heap's head. A filter admitting few items (FEW) confines the search to them from the start: their set is ANDed into
the root, so no cell holds another item. A search that would read more than READ_BUDGET rows returns None and the
caller ranks through FTS5, which gives the same order. The item sets come decoded from itemsets.py, which keeps them
while the memory is unchanged (itemsets.Decoded).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence

from ..lexical import K1, B, idf
from ..retrieval import Ranked, level
from . import postings
from .itemsets import Doc, ItemSets

READ_BUDGET = 2500  # rows read before handing the query to FTS5 (same answer, slower)
FEW = 4000  # a filter admitting at most this many items confines the cells to them (at 1M items an ontology and a
# task type admit ~1,150: with 1,000 those searches read past READ_BUDGET and went to FTS5, 71 ms p50 instead of 3.5)
SMALL = 256  # a cell of at most this many items is read row by row, a larger one through the order walk
_PAGE = 256
# A heap entry: -level, -score (its key), 0 partial / 1 cell, queue order, signature, items, length index (None: a
# partial), the cell's items of that length.
_Entry = tuple[int, float, int, int, tuple[int, ...], int, int | None, int]
_Taken = tuple[int, int, list[int] | None, int, float]  # a taken cell: items, count, storids if few, level, score
_Order = tuple[int, float, int, float, str]  # a checked item's order key: -level, -score, -priority, -confidence, id


def contribution(idf_value: float, tf: float, dl: float, avgdl: float) -> float:
    """One token's BM25 term, as SQLite's FTS5 computes it (same operations in the same order)."""
    return idf_value * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * dl / avgdl)))


class _Scorer:
    """One query: its tokens' statistics and item sets, its filters, and the BM25 terms of its tokens."""

    def __init__(self, sets: ItemSets, terms: Sequence[str], token: str | None, kinds: Sequence[str]):
        """Read the statistics of `terms`."""
        self.rows, self.avgdl, stats = sets.text_stats(terms)
        self.terms, self.token, self.kinds = tuple(terms), token, tuple(kinds)
        self.sets = {t: sorted(stats[t], reverse=True) for t in self.terms}  # highest tf first
        self.idf = {t: idf(self.rows, sum(s.n for s in self.sets[t])) for t in self.terms}
        self.parts: dict[tuple[int, int, int], float] = {}

    def part(self, i: int, tf: int, dl: int) -> float:
        """The i-th query token's BM25 term at this tf and document length (kept: cells share them)."""
        key = (i, tf, dl)
        if (value := self.parts.get(key)) is None:
            value = self.parts[key] = contribution(self.idf[self.terms[i]], float(tf), float(dl), self.avgdl)
        return value


def ranked(sets: ItemSets, terms: Sequence[str], token: str | None, kinds: Sequence[str],
           k: int) -> list[Ranked] | None:
    """The k best (storid, id, score) rows of live items holding `token` (None: any) and one of `kinds` that contain
    one of `terms` (single FTS5 tokens); None when that would read more than READ_BUDGET rows."""
    if k <= 0:
        return []
    scorer = _Scorer(sets, terms, token, kinds)
    within = None
    if token is not None:
        admitted = sets.token_items(token, FEW + 1)
        if len(admitted) <= FEW:
            within = postings.bitmap_of(admitted)
    return _Cells(sets, scorer, k, within).run()


def _above(value: float) -> float:
    """A rounded bound at or above `value` however its terms were summed (float sums in another order differ in the
    last bits)."""
    return round(value * (1 + 1e-12) + 1e-12, 6)


class _Cells:
    """The best-first search over cells of one query (see the module doc)."""

    def __init__(self, sets: ItemSets, scorer: _Scorer, k: int, within: int | None = None):
        """Decode the query tokens' item sets (only their items in `within`, when given) and read the document
        lengths."""
        self.sets, self.scorer, self.k = sets, scorer, k
        self.lengths = sets.doc_lengths()
        self.length_sets: dict[int, int] = {}
        shortest = self.lengths[0] if self.lengths else 0
        per_token = [[(s.tf, s.items) for s in scorer.sets[t]] for t in scorer.terms]
        gain = [scorer.part(i, per[0][0], shortest) if per else 0.0 for i, per in enumerate(per_token)]
        # tokens are decided in falling order of what they can add, so the bounds tighten early
        self.plan = sorted(range(len(per_token)), key=lambda i: -gain[i])
        self.placed = [self.plan.index(i) for i in range(len(per_token))]  # each query token's place in the plan
        self.by_tf, self.gain = [per_token[i] for i in self.plan], [gain[i] for i in self.plan]
        every = sets.holders(scorer.terms)
        self.every = every if within is None else every & within
        self.token = scorer.token if within is None else None  # the rows still to check for it (none when confined)
        self.heap: list[_Entry] = []
        self.order = itertools.count()  # ties in the heap: partials before cells, then first queued first
        self.read = 0  # rows read
        self.top: list[tuple[_Order, int]] = []  # the k best checked (order key, storid), best first

    def run(self) -> list[Ranked] | None:
        """The k best (storid, id, score) rows, or None past READ_BUDGET."""
        if self.lengths and self.every:
            self._push_partial((), self.every)
        # taken: cells not read yet (items, count, members if few, level, score); waiting: the members they can give
        taken: list[_Taken] = []
        waiting = 0
        while self.heap and not self._settled():
            key, tied = self.heap[0][:2], 0
            while self.heap and self.heap[0][:2] == key:  # every cell of this key (partials of it split first)
                signature, items, at, cell = heapq.heappop(self.heap)[4:]
                if at is None:
                    self._expand(signature, items)
                else:
                    tied |= cell
                    if rest := items ^ cell:  # the signature's items of greater lengths
                        self._push_cell(signature, rest, at + 1)
            if tied:
                few = _few(tied)
                count = tied.bit_count() if few is None else len(few)
                taken.append((tied, count, few, -key[0], -key[1]))
                waiting += min(count, self.k)
            if taken and (waiting >= self.k - len(self.top) or not self.heap):  # enough to fill the top k, if all pass
                if not self._take(taken):
                    return None
                taken, waiting = [], 0
        return [Ranked(s, key[4], -key[1]) for key, s in self.top]

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
        shortest, part, terms = self.lengths[0], self.scorer.part, self.plan[:decided]
        score = sum(part(i, tf, shortest) for i, tf in zip(terms, signature, strict=True) if tf)
        heapq.heappush(self.heap, (-level(matched + n - decided, n), -_above(score + sum(self.gain[decided:])), 0,
                                   next(self.order), signature, items, None, 0))

    def _expand(self, signature: tuple[int, ...], items: int) -> None:
        """Split a partial signature on its next token: each tf it has, or absent."""
        i = len(signature)
        choices, rest = [], items
        for tf, held in self.by_tf[i]:  # an item has one tf per token: the sets are disjoint
            if fitting := rest & held:
                choices.append((tf, fitting))
                if not (rest := rest ^ fitting):
                    break
        for tf, fitting in choices + [(0, rest)] if rest else choices:  # rest: the items without this token
            whole = (*signature, tf)
            if len(whole) < len(self.scorer.terms):
                self._push_partial(whole, fitting)
            elif any(whole):
                self._push_cell(whole, fitting, 0)

    def _push_cell(self, signature: tuple[int, ...], items: int, at: int) -> None:
        """Queue the items of a whole signature (decided in plan order) that have the at-th shortest length or, if
        none has, the next length some have, under their exact key: the level, and the matched tokens' BM25 terms
        summed in query order, then rounded, as FTS5's bm25 does."""
        while not (cell := items & self._of_length(at)):
            if (at := at + 1) == len(self.lengths):
                return
        dl, part, score, matched = self.lengths[at], self.scorer.part, 0.0, 0
        for i, place in enumerate(self.placed):
            if tf := signature[place]:
                matched += 1
                score += part(i, tf, dl)
        lvl = level(matched, len(signature))
        heapq.heappush(self.heap, (-lvl, -round(score, 6), 1, next(self.order), signature, items, at, cell))

    def _of_length(self, at: int) -> int:
        """The items of the at-th shortest document length."""
        dl = self.lengths[at]
        if dl not in self.length_sets:
            self.length_sets[dl] = self.sets.length_items(dl)
        return self.length_sets[dl]

    def _take(self, cells: list[_Taken]) -> bool:
        """Rank the checked items of taken cells (items, how many, their storids if few, level, score) into the top
        k, the rows of every small cell read in one query; False past READ_BUDGET."""
        scorer = self.scorer
        keyed: dict[int, tuple[int, float]] = {}  # storid: (level, score) of the small cells' items
        rows: list[tuple[int, float, Doc]] = []
        for cell, count, few, lvl, score in cells:
            if count <= SMALL:
                keyed.update(dict.fromkeys(_members(cell) if few is None else few, (lvl, score)))
            elif (first := self._first(cell, count)) is None:
                return False
            else:
                rows += [(lvl, score, r) for r in first]
        if keyed:
            self.read += len(keyed)
            if self.read > READ_BUDGET:
                return False
            rows += [(*keyed[r.storid], r) for r in self.sets.docs(list(keyed), self.token, scorer.kinds)]
        self.top = sorted(self.top + [((-lvl, -score, -r.priority, -r.confidence, r.id), r.storid)
                                      for lvl, score, r in rows])[: self.k]
        return True

    def _first(self, cell: int, count: int) -> list[Doc] | None:
        """The checked postings rows of a large cell's (of `count` items) first k members in (priority, confidence,
        id) order, through the order walk; None past READ_BUDGET."""
        scorer = self.scorer
        member = cell.to_bytes((cell.bit_length() + 7) // 8, "little")
        rows: list[Doc] = []
        walk = self.sets.order_walk(scorer.token)
        page = min(_PAGE, 2 * self.k * scorer.rows // count + 1)
        try:  # a page is about twice what k members take, given the cell's share of all items
            while len(rows) < self.k and (seen := walk.fetchmany(page)):
                self.read += len(seen)
                if self.read > READ_BUDGET:
                    return None
                found = [s for (s,) in seen if s >> 3 < len(member) and member[s >> 3] >> (s & 7) & 1]
                if found:
                    rows += self.sets.docs(found, None, scorer.kinds)
                page = _PAGE
        finally:
            walk.close()
        return rows


def _few(items: int, limit: int = 32) -> list[int] | None:
    """The storids whose bits are set, highest first, when at most `limit` are; else None (the highest bit taken off
    one at a time: a few int operations each, far cheaper than the bytes of a large int for a few members)."""
    out: list[int] = []
    while items:
        if len(out) == limit:
            return None
        out.append(top := items.bit_length() - 1)
        items ^= 1 << top
    return out


_NONZERO = bytes([0] + [1] * 255)


def _members(items: int) -> list[int]:
    """The storids whose bits are set, ascending (the zero bytes are skipped by bytes.find, in C)."""
    data = items.to_bytes((items.bit_length() + 7) // 8, "little")
    flags, at = data.translate(_NONZERO), 0
    out: list[int] = []
    while (at := flags.find(1, at)) >= 0:
        byte, base = data[at], at << 3
        while byte:
            low = byte & -byte
            out.append(base + low.bit_length() - 1)
            byte ^= low
        at += 1
    return out
