"""Impact-ordered postings of a memory on a SPARQL server: which postings of the query words a text search reads.

Every posting (an item holding a token) is one triple `item idx:pF-L "token"` of the index graph: its predicate, a
posting bucket, names the token's frequency F in the item and the item's document length L, the two values BM25
weighs a posting by besides the token's IDF (the same for all its postings). So the postings of a token are split
into buckets that a reader orders by impact (the BM25 of one posting of the bucket, with the current average
length), best first, and reads a prefix of them with bound triple patterns, never the whole list.

A search ranks the items holding a prefix posting of some word, with their full scores, and keeps the answer only
when no item outside could outrank its k-th row (`Cut.exact`): a word whose prefix is all its buckets has no item
outside, and an outside item's score is at most the sum of the best outside impacts of the words it holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import NamedTuple

from rdflib import Graph, Literal, URIRef
from rdflib.term import Identifier

from ...model import ItemSpec
from ...vocab import ITEM
from .. import lexical, retrieval
from ..retrieval import KEYED, normalized_key
from .layout import IDX

_BUCKET = re.compile(r"^p([0-9]+)-([0-9]+)$")
MARGIN = 2e-6  # scores are compared rounded to 6 places: a bound must stay this far below a kept row's score


class Bucket(NamedTuple):
    """The postings of one token with one frequency in items of one document length: how many there are."""

    frequency: int
    length: int
    size: int


def bucket(frequency: int, length: int) -> URIRef:
    """The predicate of the postings of a token occurring `frequency` times in items of document length `length`."""
    return IDX[f"p{frequency}-{length}"]


def parse_bucket(predicate: Identifier) -> tuple[int, int] | None:
    """(frequency, length) of a posting bucket predicate; None for any other term."""
    text = str(predicate)
    m = _BUCKET.match(text[len(IDX):]) if text.startswith(str(IDX)) else None
    return (int(m[1]), int(m[2])) if m else None


def index_triples(items: Sequence[tuple[ItemSpec, Graph]]) -> list[list[tuple[URIRef, URIRef, Identifier]]]:
    """The index-graph triples of each item: its document length (tokens of title, summary and tags plus one per
    key token, as FTS5 counts its `keys` column), and one posting per distinct token in its bucket, whose
    idx:frequency is declared beside it."""
    counted = lexical.term_counts((spec.title, spec.summary, " ".join(spec.tags)) for spec, _ in items)
    out = []
    for (spec, g), counts in zip(items, counted, strict=True):
        node = ITEM[spec.id]
        keys = {(p, normalized_key(p, o)) for s, p, o in g if s == node and p in KEYED}
        length = sum(counts.values()) + len(keys)
        triples: list[tuple[URIRef, URIRef, Identifier]] = [(node, IDX.length, Literal(length))]
        for f in sorted(set(counts.values())):
            triples.append((bucket(f, length), IDX.frequency, Literal(f)))
        triples += [(node, bucket(f, length), Literal(tok)) for tok, f in sorted(counts.items())]
        out.append(triples)
    return out


def bm25(idf: float, frequency: int, length: int, avgdl: float) -> float:
    """The BM25 of one posting (FTS5's k1 and b), computed in the order ranking.text_ranking's SPARQL computes it,
    so the two give the same double."""
    k1, b = lexical.K1, lexical.B
    return idf * frequency * (k1 + 1) / (frequency + k1 * ((1 - b) + b * length / avgdl))


class Cut(NamedTuple):
    """What a text search reads of its words' postings: a prefix of each word's buckets (the (token, bucket)
    pairs) and the best impact left outside each word (IDF included; None when the prefix is all its buckets).
    With `every` (the tokens, rarest first) it reads every item holding all the words too, found from the rarest
    word's postings by one bound lookup per other word; with `conjunctive`, only the prefix items holding all the
    words (when many items do, the first k of them are the answer)."""

    pairs: tuple[tuple[str, URIRef], ...]
    outside: tuple[float | None, ...]
    every: tuple[str, ...] = ()
    conjunctive: bool = False

    def exact(self, levels: Sequence[tuple[int, float]], k: int) -> bool:
        """Whether the ranked rows of the items read, as (coordination level, rounded score) best first, are the
        search's first k rows: no item outside can reach a higher level than the k-th row, nor its level with a
        score above it (the k-th row's level is 0 when fewer than k rows were found)."""
        n = len(self.outside)
        level, score = levels[k - 1] if len(levels) >= k else (0, float("-inf"))
        if self.conjunctive:  # an unread item holding every word scores at most the best outside of each
            return level == 2 and (None in self.outside or sum(filter(None, self.outside)) + MARGIN < score)
        open_ = sorted((x for x in self.outside if x is not None), reverse=True)
        for matched in range(1, min(len(open_), n - 1 if self.every else n) + 1):
            at = retrieval.level(matched, n)
            best = sum(open_[:matched])  # the best an outside item matching `matched` words scores
            if at > level or (at == level and best + MARGIN >= score):
                return False
        return True


class Plan(NamedTuple):
    """How deep a text search reads each word's postings (at least `depth` of them, or with `floors` every bucket
    whose BM25 reaches the word's floor), and how (see Cut)."""

    depth: int
    every: bool
    conjunctive: bool
    floors: tuple[float, ...] = ()

    def deeper(self) -> Plan:
        """The next read when this one was not exact: prefixes eight times deeper, and every item holding all the
        words (when there are several)."""
        return Plan(self.depth * 8, self.every or self.conjunctive, False)


def floored(words: Sequence[tuple[str, float, Sequence[Bucket]]], avgdl: float,
            levels: Sequence[tuple[int, float]], k: int) -> Plan:
    """The read that proves the first k rows, given k rows found (as (level, score), best first; reading more
    only finds better ones): buckets taken greedily, where each posting read lowers the unread bounds most, until
    no unread item could outrank the k-th row (Cut.exact). With the k-th row holding every word, the items read are
    those holding every word and a posting taken; otherwise every item holding all the words and every item with a
    posting taken. The floors are the impacts of each word's last bucket taken (infinite: none)."""
    lists = [sorted((bm25(idf, b.frequency, b.length, avgdl), b.size) for b in bs)[::-1] for _, idf, bs in words]
    taken = [0] * len(lists)
    conjunctive = levels[k - 1][0] == 2

    def unread(w: int, more: int = 0) -> float | None:
        """The best impact of word w left unread after `more` buckets more (None: none left)."""
        return lists[w][taken[w] + more][0] if taken[w] + more < len(lists[w]) else None

    def proven() -> bool:
        """Whether the buckets taken so far prove the k rows."""
        outside = tuple(unread(w) for w in range(len(lists)))
        return Cut((), outside, () if conjunctive else ("",), conjunctive).exact(levels, k)

    while not proven():
        gains = [(((unread(w) or 0.0) - (unread(w, 1) or 0.0)) / lists[w][taken[w]][1], w)
                 for w in range(len(lists)) if taken[w] < len(lists[w])]
        taken[max(gains)[1]] += 1  # every bucket taken proves any rows: the loop ends
    return Plan(0, not conjunctive, conjunctive, tuple(lists[w][taken[w] - 1][0] if taken[w] else math.inf
                                                       for w in range(len(lists))))


def plan(shares: Sequence[float], k: int, items: int, kinds: bool) -> Plan:
    """The first read of a search of words held by these shares of `items` items (df / N, taken as independent):
    one word, its best 4k postings (16k when the search keeps some kinds only, often a quarter of the items); more
    words, every item holding all of them (found from the rarest word's postings) beside such prefixes for the
    lower levels when few items hold them all; when many do, the prefix items holding all of them (the first k
    are the answer)."""
    want = 16 * k if kinds else 4 * k
    if len(shares) < 2:
        return Plan(want, False, False)
    others = sum(math.prod(s for v, s in enumerate(shares) if v != w) for w in range(len(shares)))
    depth = max(want, math.ceil(want / others)) if others > 0 else want
    if items * math.prod(shares) >= 2 * want:
        return Plan(depth, False, True)
    return Plan(want, True, False)


def cut(words: Sequence[tuple[str, float, Sequence[Bucket]]], avgdl: float, how: Plan) -> Cut:
    """The prefix of each word (its one token, the token's IDF and buckets) holding at least how.depth postings,
    whole buckets, best first, read as the plan says."""
    pairs: list[tuple[str, URIRef]] = []
    outside: list[float | None] = []
    for w, (tok, idf, bs) in enumerate(words):
        ranked = sorted(bs, key=lambda b: -bm25(idf, b.frequency, b.length, avgdl))
        taken, held = 0, 0
        while taken < len(ranked) and (held < how.depth if not how.floors else
                                       bm25(idf, ranked[taken].frequency, ranked[taken].length, avgdl)
                                       >= how.floors[w]):
            held += ranked[taken].size
            taken += 1
        pairs += [(tok, bucket(b.frequency, b.length)) for b in ranked[:taken]]
        rest = ranked[taken:]
        outside.append(bm25(idf, rest[0].frequency, rest[0].length, avgdl) if rest else None)
    rarest = tuple(tok for tok, _, _ in sorted(words, key=lambda w: sum(b.size for b in w[2])))
    return Cut(tuple(pairs), tuple(outside), rarest if how.every else (), how.conjunctive)
