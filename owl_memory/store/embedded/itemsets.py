"""Reading the embedded index's item sets for top-k: its statistics, the sets decoded and kept while the memory is
unchanged (`Decoded`), and the rows of the items a search checks (`ItemSets`, which topk.py reads)."""

from __future__ import annotations

import functools
import operator
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import NamedTuple, TypeVar, cast

from rdflib import URIRef

from ...adapters.owlready2 import live_condition
from ...vocab import OM
from . import postings

Kept = int | Sequence["Kept"]  # what Decoded keeps: item sets and counts (ints), and sequences of them
State = tuple[int, int]  # a graph file's state as one connection sees it (EmbeddedIndex.state)
Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value", bound=Kept)


class TermSet(NamedTuple):
    """The items holding a token tf times: tf, how many, and the set (an int whose bit s is set for storid s)."""

    tf: int
    n: int
    items: int


class TextStatistics(NamedTuple):
    """FTS5's BM25 statistics for a query: rows indexed, average document length, each token's sets by tf."""

    rows: int
    avgdl: float
    sets: dict[str, list[TermSet]]


class Doc(NamedTuple):
    """The postings row of an item a search checks: storid, document length, ranking fields, "token:tf ..." pairs."""

    storid: int
    dl: int
    priority: int
    confidence: float
    id: str
    terms: str


class ItemSets:
    """The statistics, decoded item sets and rows a top-k text search reads, from one graph file.

    Args:
        db: the graph file's connection.
        terms: the quadstore ids of the memory ontology's terms (world.World.terms).
    """

    def __init__(self, db: sqlite3.Connection, terms: dict[URIRef, int]):
        self.db, self.terms = db, terms
        self.decoded = Decoded()  # item sets a text search decoded, kept while the memory is unchanged

    def text_stats(self, terms: Sequence[str]) -> TextStatistics:
        """FTS5's BM25 statistics: its row count and average document length (every column, from its averages
        record); and each token's sets, one per frequency it has in some item."""
        rows, size = self.decoded.get(["averages"], self._averages)["averages"]
        sets = self.decoded.get([("om_df", t) for t in terms], self._term_sets)
        return TextStatistics(rows, size / rows if rows else 0.0, {t: sets["om_df", t] for t in terms})

    def _averages(self, _: list[str]) -> dict[str, tuple[int, int]]:
        """{"averages": (rows, summed document length of every column)} from FTS5's averages record."""
        (block,) = self.db.execute("SELECT block FROM om_fts_data WHERE id = 1").fetchone() or (b"",)
        rows, *sizes = varints(block) or [0]
        return {"averages": (rows, sum(sizes))}

    def _term_sets(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[TermSet]]:
        """The decoded sets of the om_df keys ("om_df", term)."""
        out: dict[tuple[str, str], list[TermSet]] = {key: [] for key in keys}
        terms = [t for _, t in keys]
        for t, tf, n, items in postings.item_sets(self.db, "om_df", f"term IN ({', '.join('?' * len(terms))})",
                                                  terms):
            out["om_df", t].append(TermSet(tf, n, postings.bitmap(items)))
        return out

    def holders(self, terms: Sequence[str]) -> int:
        """The items holding one of `terms` (the union of their item sets) as an int whose bit s is set for storid s;
        each term's union kept with its sets."""
        def load(keys: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
            """The unions of the terms in `keys` ("any", term)."""
            sets = self.decoded.get([("om_df", t) for _, t in keys], self._term_sets)
            return {("any", t): functools.reduce(operator.or_, (s.items for s in sets["om_df", t]), 0)
                    for _, t in keys}
        return functools.reduce(operator.or_, self.decoded.get([("any", t) for t in terms], load).values(), 0)

    def doc_lengths(self) -> list[int]:
        """The document lengths some item has, shortest first."""
        return self.decoded.get(["lengths"], lambda _: {
            "lengths": sorted(dl for (dl,) in postings.sizes(self.db, "om_dl"))})["lengths"]

    def length_items(self, dl: int) -> int:
        """The items of document length `dl` as an int whose bit s is set for storid s."""
        def load(_: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
            """The decoded set of length dl."""
            rows = postings.item_sets(self.db, "om_dl", "dl = ?", [dl])
            return {("om_dl", dl): postings.bitmap(rows[0][-1]) if rows else 0}
        return self.decoded.get([("om_dl", dl)], load)["om_dl", dl]

    def order_walk(self, token: str | None) -> sqlite3.Cursor:
        """A lazy cursor over the storids of the items, live or not, holding `token` (None: every item), in
        (priority DESC, confidence DESC, id) order."""
        return self.db.execute("SELECT s FROM om_order INDEXED BY om_order_walk WHERE token = ? "
                               "ORDER BY priority DESC, confidence DESC, item", (token or postings.ALL,))

    def docs(self, items: Sequence[int], token: str | None = None, any_of: Sequence[str] = ()) -> list[Doc]:
        """The postings rows of those `items` that are live, hold `token` (None: any) and one of `any_of`."""
        where, params = self.admits("d.s", token, any_of)
        rows = self.db.execute(f"SELECT d.s, d.dl, d.priority, d.confidence, d.item, d.terms FROM om_docs d WHERE "
                               f"d.s IN ({', '.join('?' * len(items))}) AND {where}", [*items, *params])
        return list(map(Doc._make, rows))

    def token_items(self, token: str, limit: int) -> list[int]:
        """Up to `limit` storids of the items, live or not, holding `token`."""
        return [s for (s,) in self.db.execute("SELECT s FROM om_order WHERE token = ? LIMIT ?", (token, limit))]

    def admits(self, item: str, token: str | None, any_of: Sequence[str]) -> tuple[str, list[str | int]]:
        """SQL condition and parameters: the item (an SQL expression) is live, holds `token` and one of `any_of`."""
        where: list[str] = []
        params: list[str | int] = []
        if token:
            where.append(f"EXISTS (SELECT 1 FROM om_order f WHERE f.s = {item} AND f.token = ?)")
            params.append(token)
        if any_of:
            where.append(f"EXISTS (SELECT 1 FROM om_order f WHERE f.s = {item} AND f.token IN "
                         f"({', '.join('?' * len(any_of))}))")
            params += any_of
        where.append(live_condition(item))
        return " AND ".join(where), [*params, self.terms[OM.supersedes], self.terms[OM.archived]]


class Decoded:
    """Item sets decoded (ints whose bit s is set for storid s) and kept for one state of the graph file.

    Searches read the same sets again and again (common words, the few document lengths), and decoding one costs a
    read and an int.from_bytes of up to max storid / 8 bytes. What is kept holds for one `state` (the reader passes
    SQLite's data_version, which moves when another connection commits, and its connection's total_changes, which
    moves with its own writes) and is dropped when the state moves, except by a write transaction of the same
    connection that recorded its item-set changes (`follow`: they are applied in place, so an agent that adds and
    searches in turn does not decode its words again); a reader inside a write transaction passes no state, and
    nothing is kept or served then (uncommitted rows may be rolled back). At most CAP bytes of sets are kept, the
    least recently used dropped first."""

    CAP = 64 << 20

    def __init__(self) -> None:
        self.state: State | None = None
        self.active, self.size = False, 0
        self.kept: OrderedDict[Hashable, Kept] = OrderedDict()

    def use(self, state: State | None) -> None:
        """Serve reads for this state (None: bypass the kept sets until the next call)."""
        self.active = state is not None
        if self.active and state != self.state:
            self.kept.clear()
            self.state, self.size = state, 0

    def follow(self, before: State, marks: list[tuple], after: State) -> None:
        """This connection's own write committed, moving the state from `before` (read after its BEGIN) to `after`,
        with these item-set changes (recording()): the kept sets get them in place and stay, when they were kept for
        `before` and no other connection committed since (the data_version part is unchanged). Otherwise nothing:
        the next `use` finds another state and drops them. Derived values (a term's union, the lengths, FTS5's
        averages) are dropped, to be derived again."""
        if self.state != before or after[0] != before[0]:
            return
        for table, key, storids, joined in marks:
            kept = (table, key[0])  # ("om_df", term) or ("om_dl", dl), as the reader keeps them
            if kept in self.kept:
                self.size -= _bytes(self.kept[kept])
                self.kept[kept] = _changed(self.kept[kept], key, storids, joined)
                self.size += _bytes(self.kept[kept])
            if table == "om_df":
                self._drop(("any", key[0]))
        if marks:
            self._drop("lengths")
            self._drop("averages")
        self.state = after

    def _drop(self, key: Hashable) -> None:
        """Forget one kept value."""
        if key in self.kept:
            self.size -= _bytes(self.kept.pop(key))

    def get(self, keys: Sequence[Key], load: Callable[[list[Key]], Mapping[Key, Value]]) -> dict[Key, Value]:
        """{key: value} for `keys`: kept ones as they are, the others from load(missing keys) (a {key: value} of
        ints or lists of tuples holding ints), kept when active."""
        # a key is kept with the value its own loader gave (each key has one loader)
        out = {key: cast(Value, self.kept[key]) for key in keys if self.active and key in self.kept}
        for key in out:
            self.kept.move_to_end(key)
        missing = [key for key in keys if key not in out]
        if missing:
            loaded = load(missing)
            out.update(loaded)
            if self.active:
                for key, value in loaded.items():
                    self.kept[key] = value
                    self.size += _bytes(value)
                while self.size > self.CAP and len(self.kept) > 1:
                    self.size -= _bytes(self.kept.popitem(last=False)[1])
        return out


def _changed(value: Kept, key: tuple, storids: list[int], joined: bool) -> Kept:
    """A kept set (om_dl: an int; om_df: a term's TermSets) with `storids` joining or leaving the set of `key`; an
    om_df set left empty goes, a new one is added."""
    if isinstance(value, int):
        return _flipped(value, storids, joined)[0]
    rows = {tf: (n, items) for tf, n, items in cast(list[TermSet], value)}  # om_df: a term is kept as its TermSets
    n, items = rows.get(key[1], (0, 0))
    items, flips = _flipped(items, storids, joined)
    rows[key[1]] = (n + flips if joined else n - flips, items)
    return [TermSet(tf, n, items) for tf, (n, items) in rows.items() if n > 0]


def _flipped(items: int, storids: list[int], joined: bool) -> tuple[int, int]:
    """(the set with `storids` joining or leaving it, how many of them were not already in or out)."""
    flips = 0
    for s in set(storids):
        if bool(items >> s & 1) != joined:
            items ^= 1 << s
            flips += 1
    return items, flips


def _bytes(value: Kept) -> int:
    """About the bytes a kept value takes: its ints (an int, or lists and tuples of them)."""
    if isinstance(value, int):
        return value.bit_length() // 8 + 32
    return sum(map(_bytes, value))


def varints(blob: bytes) -> list[int]:
    """The SQLite varints of a blob (FTS5 records: up to 9 bytes each, 7 bits per byte, all 8 in the ninth)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte, i = blob[i], i + 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out
