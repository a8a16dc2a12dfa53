"""Text ranking statistics for a SPARQL server: the same tokens and Okapi BM25 the embedded FTS5 index uses.

Each item gets, in the server's index graph, its document length (tokens of title, summary and tags plus one
per key token, as FTS5 counts its `keys` column) and one node per distinct token with its frequency in title,
summary and tags. Tokens come from SQLite's own FTS5 unicode61 tokenizer (case- and diacritic-folded), so a
server ranks with exactly the tokens the embedded index holds. Scores are FTS5's bm25 (k1 = 1.2, b = 0.75,
IDF = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6), summed over the matched query words and rounded to 6 places.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Sequence

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import XSD

from ..vocab import ITEM
from .blobs import sha256
from .items import ItemSpec
from .retrieval import KEYED

IDX = Namespace("http://w3id.org/owl-memory/index#")
K1, B = 1.2, 0.75
_local = threading.local()


def tokens(texts: Iterable[str]) -> list[list[str]]:
    """FTS5 unicode61 tokens of each text, in order (one in-memory FTS5 table, filled and emptied per call)."""
    db = getattr(_local, "db", None)
    if db is None:
        db = _local.db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    texts = list(texts)
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts, 1))
    out: list[list[str]] = [[] for _ in texts]
    for doc, term in db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        out[doc - 1].append(term)
    db.execute("DELETE FROM t")
    return out


def query_terms(words: Iterable[str]) -> list[tuple[str, ...]]:
    """Each query word as its token sequence (a word FTS5 splits, like foo_bar, is a phrase of several)."""
    return [tuple(t) for t in tokens(words) if t]


def index_triples(items: Sequence[tuple[ItemSpec, Graph]]) -> list[list[tuple]]:
    """The index-graph triples of each item: its length and one (token, frequency) node per distinct token."""
    toks = tokens(text for spec, _ in items for text in (spec.title, spec.summary, " ".join(spec.tags)))
    out = []
    for n, (spec, g) in enumerate(items):
        node, words = ITEM[spec.id], toks[3 * n] + toks[3 * n + 1] + toks[3 * n + 2]
        keys = {(p, o) for s, p, o in g if s == node and p in KEYED}
        triples = [(node, IDX.length, Literal(len(words) + len(keys), datatype=XSD.integer))]
        for tok, count in sorted(Counter(words).items()):
            tf = URIRef(f"{node}#tf-{sha256(tok)[:16]}")
            triples += [(node, IDX.tf, tf), (tf, IDX.token, Literal(tok)),
                        (tf, IDX.frequency, Literal(count, datatype=XSD.integer))]
        out.append(triples)
    return out


def idf(n_rows: int, n_hit: int) -> float:
    """FTS5's inverse document frequency of a token found in n_hit of n_rows rows."""
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    return value if value > 0 else 1e-6
