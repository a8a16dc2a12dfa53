"""Text ranking statistics for a SPARQL server: the same tokens and Okapi BM25 the embedded FTS5 index uses.

Each item gets, in the server's index graph, its document length (tokens of title, summary and tags plus one
per key token, as FTS5 counts its `keys` column) and one triple per distinct token, whose predicate idx:tfN
carries the token's frequency N in title, summary and tags. Tokens come from SQLite's own FTS5 unicode61
tokenizer (case- and diacritic-folded), so a server ranks with exactly the tokens the embedded index holds.
Scores are FTS5's bm25 (k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6), summed over
the matched query words and rounded to 6 places.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Sequence

from rdflib import Graph, Literal, Namespace

from ..model import ItemSpec
from ..vocab import ITEM
from .retrieval import KEYED

IDX = Namespace("http://w3id.org/owl-memory/index#")
K1, B = 1.2, 0.75
_local = threading.local()


def tokens(texts: Iterable[str]) -> list[list[str]]:
    """FTS5 unicode61 tokens of each text, in order (one in-memory FTS5 index, filled and emptied per call). The
    index is contentless and emptied with 'delete-all', which drops its segments: deleting rows would leave them
    behind, and after one call of 300k texts every later 3-text call scanned them (350 ms instead of 0.1 ms)."""
    db = getattr(_local, "db", None)
    if db is None:
        db = _local.db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x, content='', tokenize='unicode61')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    texts = list(texts)
    out: list[list[str]] = [[] for _ in texts]
    try:
        db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts, 1))
        for doc, term in db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            out[doc - 1].append(term)
    finally:
        db.execute("INSERT INTO t(t) VALUES ('delete-all')")
    return out


def query_terms(words: Iterable[str]) -> list[tuple[str, ...]]:
    """Each query word as its token sequence (a word FTS5 splits, like foo_bar, is a phrase of several)."""
    return [tuple(t) for t in tokens(words) if t]


def term_counts(texts: Iterable[tuple[str, str, str]]) -> list[Counter]:
    """Each item's token counts over its (title, summary, tags) texts, one tokenizer pass for all items: the
    document BM25 scores (its length is their sum plus one per key token, as FTS5 counts the `keys` column)."""
    texts = list(texts)
    toks = tokens(text for item in texts for text in item)
    return [Counter(toks[3 * n] + toks[3 * n + 1] + toks[3 * n + 2]) for n in range(len(texts))]


def index_triples(items: Sequence[tuple[ItemSpec, Graph]]) -> list[list[tuple]]:
    """The index-graph triples of each item: its length, and each distinct token as the object of the predicate
    idx:tfN (N its frequency), whose idx:frequency is declared beside it; one triple per token."""
    counted = term_counts((spec.title, spec.summary, " ".join(spec.tags)) for spec, _ in items)
    out = []
    for (spec, g), counts in zip(items, counted, strict=True):
        node = ITEM[spec.id]
        keys = {(p, o) for s, p, o in g if s == node and p in KEYED}
        triples = [(node, IDX.length, Literal(sum(counts.values()) + len(keys)))]
        for f in sorted(set(counts.values())):
            triples.append((IDX[f"tf{f}"], IDX.frequency, Literal(f)))
        triples += [(node, IDX[f"tf{f}"], Literal(tok)) for tok, f in sorted(counts.items())]
        out.append(triples)
    return out


def idf(n_rows: int, n_hit: int) -> float:
    """FTS5's inverse document frequency of a token found in n_hit of n_rows rows."""
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    return value if value > 0 else 1e-6
