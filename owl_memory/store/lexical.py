"""The lexical rank's tokens and BM25 constants, the same on every backend.

Tokens come from SQLite's own FTS5 unicode61 tokenizer (case- and diacritic-folded), so the embedded index's item
sets (embedded/postings.py) and a server's index graph (server/postings.py) hold exactly the tokens FTS5 holds.
Scores are FTS5's bm25 (k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6), summed over
the matched query words and rounded to 6 places.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable

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


def idf(n_rows: int, n_hit: int) -> float:
    """FTS5's inverse document frequency of a token found in n_hit of n_rows rows."""
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    return value if value > 0 else 1e-6
