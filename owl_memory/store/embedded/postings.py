"""The order, postings and item-set tables of the embedded index: their schema, how they are written and encoded.

index.py calls these inside the memory's write transactions (itemsets.py reads the tables for topk.py); every function
takes the graph file's SQLite connection.
"""

from __future__ import annotations

import json
import sqlite3
import struct
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple

from .. import lexical
from .keys import filter_combinations

# The key tokens of the FTS5 index, one row each (plus ALL for every item and one per combination of applicability
# links, see keys.filter_combinations), in search order: a search without text walks its filters' one token in
# (priority, confidence, id) order and stops at k instead of sorting every match.
ALL = "*"
ORDER = ("CREATE TABLE IF NOT EXISTS om_order (token TEXT NOT NULL, priority INTEGER, confidence REAL, "
         "item TEXT NOT NULL, s INTEGER NOT NULL)",
         "CREATE INDEX IF NOT EXISTS om_order_walk ON om_order (token, priority DESC, confidence DESC, item, s)",
         "CREATE INDEX IF NOT EXISTS om_order_item ON om_order (s, token)")
# Text postings (see topk.py): om_docs has one row per item (its FTS5 document length dl, ranking fields and
# "token:tf" pairs of its title, summary and tags); om_df one row per (word token, frequency tf) with the number of
# items holding the token tf times and their set (`items_blob`: a bitmap over storids, or a list of storids when few),
# so a token's document frequency (FTS5's IDF counts every row, live or not, as these do) is the sum of its rows;
# om_dl the set of items per document length. Items with equal tf of every query token and equal dl have equal BM25
# scores: those sets are one AND away.
# A write does not rewrite those sets: it records each (set, item) change in the set table's delta (`d` adds to the
# set's n, `present` says whether the item is in it now), a small table, so a commit writes a few pages instead of one
# bitmap per token; reads merge the delta (`item_sets`, `sizes`), and a write that leaves FOLD rows in it folds the
# sets with the most changes back in (see fold_when_due).
SETS = {"om_df": ("term", "tf"), "om_dl": ("dl",)}  # item-set tables and their key columns
POSTINGS = ("CREATE TABLE IF NOT EXISTS om_docs (s INTEGER PRIMARY KEY, dl INTEGER NOT NULL, priority INTEGER NOT "
            "NULL, confidence REAL NOT NULL, item TEXT NOT NULL, terms TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS om_df (term TEXT NOT NULL, tf INTEGER NOT NULL, n INTEGER NOT NULL, "
            "items BLOB NOT NULL, PRIMARY KEY (term, tf)) WITHOUT ROWID",
            "CREATE TABLE IF NOT EXISTS om_dl (dl INTEGER NOT NULL, n INTEGER NOT NULL, items BLOB NOT NULL, "
            "PRIMARY KEY (dl)) WITHOUT ROWID")
DELTAS = ("CREATE TABLE IF NOT EXISTS om_df_delta (term TEXT NOT NULL, tf INTEGER NOT NULL, s INTEGER NOT NULL, "
          "d INTEGER NOT NULL, present INTEGER NOT NULL, PRIMARY KEY (term, tf, s)) WITHOUT ROWID",
          "CREATE TABLE IF NOT EXISTS om_dl_delta (dl INTEGER NOT NULL, s INTEGER NOT NULL, d INTEGER NOT NULL, "
          "present INTEGER NOT NULL, PRIMARY KEY (dl, s)) WITHOUT ROWID")
FOLD = 2048  # delta rows from which a write folds part of them into their set table (om_df: ~130 adds of 15 words)
FEW_BITS = 16  # up to this many listed items, a set's int is built bit by bit (bitmap)
TABLES = ("om_order", "om_docs", "om_df", "om_dl", "om_df_delta", "om_dl_delta")
_RETIRED = ("om_terms",)  # format 3's walk lists, dropped by `build`


class IndexRow(NamedTuple):
    """What an item's index row holds: its storid, key tokens, id, ranking fields and (title, summary, tags) texts."""

    storid: int
    keys: str
    id: str
    priority: int
    confidence: float
    texts: tuple[str, str, str]


def create(db: sqlite3.Connection) -> None:
    """Create the order and postings tables (empty) when missing."""
    for statement in (*ORDER, *POSTINGS, *DELTAS):
        db.execute(statement)


def build(db: sqlite3.Connection, skipped: tuple[int, ...]) -> None:
    """(Re)build the order and postings tables from the FTS5 index rows (`skipped`: the quadstore ids of the
    properties taking no part in filter combinations, see keys.filter_combinations)."""
    for table in (*TABLES, *_RETIRED):
        db.execute(f"DROP TABLE IF EXISTS {table}")
    create(db)
    rows = db.execute("SELECT rowid, keys, item, priority, confidence, title, summary, tags FROM om_fts")
    while batch := rows.fetchmany(5000):
        docs = [IndexRow(s, keys, item, priority, confidence, (title, summary, tags))
                for s, keys, item, priority, confidence, title, summary, tags in batch]
        db.executemany("INSERT INTO om_order VALUES (?, ?, ?, ?, ?)",
                       [row for d in docs for row in order_rows(d.storid, d.keys, d.id, d.priority, d.confidence,
                                                                skipped)])
        add(db, docs)
        for table in SETS:
            fold(db, table)


def replace(db: sqlite3.Connection, docs: Sequence[IndexRow], skipped: tuple[int, ...]) -> None:
    """Rewrite the order rows of index rows and drop their postings (`add` writes the new ones)."""
    db.executemany("DELETE FROM om_order WHERE s = ?", [(d.storid,) for d in docs])
    db.executemany("INSERT INTO om_order VALUES (?, ?, ?, ?, ?)",
                   [row for d in docs for row in order_rows(d.storid, d.keys, d.id, d.priority, d.confidence, skipped)])
    for at in range(0, len(docs), 500):  # a rewritten item's old postings (a new item has none)
        chunk = [d.storid for d in docs[at: at + 500]]
        for (s,) in db.execute(f"SELECT s FROM om_docs WHERE s IN ({', '.join('?' * len(chunk))})", chunk).fetchall():
            drop(db, s)


def order_rows(s: int, keys: str, item: str, priority: int, confidence: float,
               skipped: tuple[int, ...]) -> list[tuple[str, int, float, str, int]]:
    """The om_order rows of an item: one per key token of its index row and per filter combination, plus ALL."""
    tokens = (ALL, *keys.split(), *filter_combinations(keys.split(), skipped))
    return [(t, priority, confidence, item, s) for t in tokens]


def add(db: sqlite3.Connection, docs: Sequence[IndexRow]) -> None:
    """Postings and item sets of new index rows."""
    if not docs:
        return
    per_doc: list[tuple[int, int, int, float, str, str]] = []
    by_tf: dict[tuple[str, int], list[int]] = {}  # (token, tf): the items holding the token tf times
    by_dl: dict[tuple[int], list[int]] = {}  # (document length,): the items of that length
    for (s, keys, item, priority, confidence, _), words in zip(docs, lexical.term_counts(d.texts for d in docs),
                                                                strict=True):
        dl = sum(words.values()) + len(keys.split())
        per_doc.append((s, dl, priority, confidence, item, " ".join(f"{t}:{f}" for t, f in words.items())))
        for t, f in words.items():
            by_tf.setdefault((t, f), []).append(s)
        by_dl.setdefault((dl,), []).append(s)
    db.executemany("INSERT INTO om_docs VALUES (?, ?, ?, ?, ?, ?)", per_doc)
    _join(db, "om_df", by_tf)
    _join(db, "om_dl", by_dl)


def drop(db: sqlite3.Connection, s: int) -> None:
    """Remove an index row's postings and its place in the item sets."""
    for dl, terms in db.execute("SELECT dl, terms FROM om_docs WHERE s = ?", (s,)).fetchall():
        pairs = [t.rsplit(":", 1) for t in terms.split()]
        _mark(db, "om_df", {(t, int(f)): [s] for t, f in pairs}, False)
        _mark(db, "om_dl", {(dl,): [s]}, False)
    db.execute("DELETE FROM om_docs WHERE s = ?", (s,))


@contextmanager
def recording(db: sqlite3.Connection) -> Iterator[list[tuple]]:
    """The (table, key values, storids, joined) item-set changes written through `db` inside the block, in order
    (what its reader's kept sets must follow, see itemsets.Decoded.follow); a block inside another records into its
    list."""
    if (marks := _RECORDING.get(db)) is not None:
        yield marks
        return
    _RECORDING[db] = marks = []
    try:
        yield marks
    finally:
        del _RECORDING[db]


_RECORDING: dict[sqlite3.Connection, list[tuple]] = {}


def _mark(db: sqlite3.Connection, table: str, holders: dict[tuple, list[int]], present: bool) -> None:
    """Record that the given items join (or leave) item sets of `table` (holders: {key values: storids}) in its
    delta."""
    if (marks := _RECORDING.get(db)) is not None:
        marks += [(table, key, items, present) for key, items in holders.items()]
    columns = ", ".join(SETS[table])
    db.executemany(f"INSERT INTO {table}_delta VALUES ({', '.join('?' * (len(SETS[table]) + 3))}) "
                   f"ON CONFLICT ({columns}, s) DO UPDATE SET d = d + excluded.d, present = excluded.present",
                   [(*key, s, 1 if present else -1, int(present)) for key, items in holders.items() for s in items])


def _join(db: sqlite3.Connection, table: str, holders: dict[tuple, list[int]]) -> None:
    """Record that new items join item sets of `table` (holders: {key values: storids}): in its delta, or, when
    they alone would fill it (a bulk load), straight into the sets, the delta folded first (so no change in it
    is applied over them), instead of writing the rows and folding them back at once."""
    if sum(map(len, holders.values())) < FOLD:
        _mark(db, table, holders, True)
        return
    if (marks := _RECORDING.get(db)) is not None:
        marks += [(table, key, items, True) for key, items in holders.items()]
    fold(db, table)
    chosen, params = _chosen(table, [list(key) for key in holders])
    columns, k = ", ".join(SETS[table]), len(SETS[table])
    stored = {tuple(row[:k]): row[k:] for row in db.execute(f"SELECT {columns}, n, items FROM {table} WHERE {chosen}",
                                                            params)}
    rows = []
    for key, items in holders.items():
        n, blob = stored.get(key, (0, b""))
        rows.append((*key, n + len(items), _applied(blob, [(s, 1, 1) for s in items])))
    db.executemany(f"INSERT OR REPLACE INTO {table} VALUES ({', '.join('?' * (k + 2))})", rows)


def _chosen(table: str, keys: list[list]) -> tuple[str, list[str]]:
    """The SQL condition (and its parameter) choosing the sets of `table` named by `keys` (lists of key values)."""
    columns = ", ".join(SETS[table])
    values = ", ".join(f"json_extract(value, '$[{i}]')" for i in range(len(SETS[table])))
    return f"({columns}) IN (SELECT {values} FROM json_each(?))", [json.dumps(keys)]


def fold_when_due(db: sqlite3.Connection) -> None:
    """Once a delta holds FOLD rows, fold the sets with the most changes in it, down to 3/4 of FOLD rows (a write
    calls this before it commits). Folding rewrites each set it touches, so its cost is the number of sets: at 100k
    items one add in ~32 rewrites ~20 sets, each holding many changes, where folding all at FOLD rewrote all ~250 sets
    of the delta in one add of ~130 (15-65 ms). A write that leaves it half over FOLD or more folds it whole."""
    for table in SETS:
        (rows,) = db.execute(f"SELECT count(*) FROM {table}_delta").fetchone()
        if rows >= FOLD:
            excess = rows - FOLD * 3 // 4
            fold(db, table, None if 2 * excess >= rows else _most_changed(db, table, excess))


def _most_changed(db: sqlite3.Connection, table: str, rows: int) -> list[list]:
    """Key values of the fewest sets of `table` whose delta rows add up to `rows` or more, most changed first."""
    columns = ", ".join(SETS[table])
    keys, held = [], 0
    for *key, n in db.execute(f"SELECT {columns}, count(*) AS n FROM {table}_delta GROUP BY {columns} "
                              f"ORDER BY n DESC, {columns}").fetchall():
        if held >= rows:
            break
        keys.append(key)
        held += n
    return keys


def fold(db: sqlite3.Connection, table: str, keys: list[list] | None = None) -> None:
    """Apply the delta rows of `table` to its sets, and drop them from the delta: every row, or those of the sets
    named by `keys` (lists of key values); a set left empty loses its row."""
    columns, k = ", ".join(SETS[table]), len(SETS[table])
    chosen, params = (f"({columns}) IN (SELECT {columns} FROM {table}_delta)", []) if keys is None else \
        _chosen(table, keys)
    merged = _merged(db, table, chosen, params)
    rows, gone = [row for row in merged if row[k] > 0], [row[:k] for row in merged if row[k] <= 0]
    db.executemany(f"INSERT OR REPLACE INTO {table} VALUES ({', '.join('?' * (k + 2))})", rows)
    db.executemany(f"DELETE FROM {table} WHERE {' AND '.join(f'{c} = ?' for c in SETS[table])}", gone)
    db.execute(f"DELETE FROM {table}_delta" + (f" WHERE {chosen}" if keys is not None else ""), params)


def item_sets(db: sqlite3.Connection, table: str, where: str, params: Sequence[object]) -> list[tuple]:
    """The (key values..., n, items blob) rows of item-set table `table` whose key satisfies `where` (an SQL
    condition on its key columns, with `params`), its delta applied; empty sets left out."""
    return [row for row in _merged(db, table, where, params) if row[-2] > 0]


def sizes(db: sqlite3.Connection, table: str) -> dict[tuple, int]:
    """{key values: number of items} of every non-empty set of `table`, its delta applied (no set is decoded)."""
    columns, k = ", ".join(SETS[table]), len(SETS[table])
    out = {tuple(row[:k]): row[k] for row in db.execute(f"SELECT {columns}, n FROM {table}")}
    for *key, d in db.execute(f"SELECT {columns}, sum(d) FROM {table}_delta GROUP BY {columns}"):
        out[tuple(key)] = out.get(tuple(key), 0) + d
    return {key: n for key, n in out.items() if n > 0}


def _merged(db: sqlite3.Connection, table: str, where: str, params: Sequence[object]) -> list[tuple]:
    """(key values..., n, items blob) of the sets of `table` matching `where` in the table or its delta, with the
    delta's changes applied (n may be 0 or less: an emptied set)."""
    columns, k = ", ".join(SETS[table]), len(SETS[table])
    stored = {tuple(row[:k]): row[k:] for row in db.execute(f"SELECT {columns}, n, items FROM {table} WHERE {where}",
                                                            params)}
    changes: dict[tuple, list[tuple[int, int, int]]] = {}
    for row in db.execute(f"SELECT {columns}, s, d, present FROM {table}_delta WHERE {where}", params):
        changes.setdefault(tuple(row[:k]), []).append(row[k:])
    out = []
    for key in stored.keys() | changes.keys():
        n, blob = stored.get(key, (0, b""))
        if key in changes:
            n, blob = n + sum(d for _, d, _ in changes[key]), _applied(blob, changes[key])
        out.append((*key, n, blob))
    return out


def _applied(blob: bytes, delta: list[tuple[int, int, int]]) -> bytes:
    """An item set with the (storid, d, present) changes applied: a bitmap stays one, a list is re-encoded."""
    if blob[:1] == b"\x00":
        bits = bytearray(blob[1:])
        bits.extend(bytes(max(0, max(s for s, _, _ in delta) // 8 + 1 - len(bits))))
        for s, _, present in delta:
            bits[s >> 3] = bits[s >> 3] | (1 << (s & 7)) if present else bits[s >> 3] & ~(1 << (s & 7))
        return b"\x00" + bytes(bits)
    listed = set(_listed(blob))
    for s, _, present in delta:
        if present:
            listed.add(s)
        else:
            listed.discard(s)
    return items_blob(listed)


def items_blob(items: set[int]) -> bytes:
    """How om_df and om_dl store a set of items: 1 and the sorted storids (little-endian uint32) while that is under
    1/32 of the bitmap, else 0 and the bitmap (`_bits`); neither is compressed, so a write touches one small row."""
    if 4 * len(items) * 32 < max(items, default=0) // 8 + 1:
        return b"\x01" + struct.pack(f"<{len(items)}I", *sorted(items))
    return b"\x00" + bytes(_bits(items))


def _bits(items: Iterable[int]) -> bytearray:
    """The bitmap of storids: bit s % 8 of byte s // 8 set for storid s."""
    items = list(items)
    bits = bytearray(max(items, default=0) // 8 + 1)
    for s in items:
        bits[s >> 3] |= 1 << (s & 7)
    return bits


def _listed(blob: bytes) -> tuple[int, ...]:
    """The storids of a listed (not bitmap) item set."""
    return struct.unpack(f"<{(len(blob) - 1) // 4}I", blob[1:]) if blob else ()


def bitmap(blob: bytes) -> int:
    """A set of items (an om_df or om_dl blob) as an int whose bit s is set for storid s (a list of a few items bit
    by bit: cheaper than the bytes of a wide int)."""
    if blob[:1] == b"\x00":
        return int.from_bytes(memoryview(blob)[1:], "little")
    listed = _listed(blob)
    if len(listed) > FEW_BITS:
        return bitmap_of(listed)
    out = 0
    for s in listed:
        out |= 1 << s
    return out


def bitmap_of(items: Iterable[int]) -> int:
    """A set of storids as an int whose bit s is set for storid s."""
    return int.from_bytes(_bits(items), "little")
