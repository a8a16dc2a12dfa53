"""The embedded retrieval index: what `retrieval.rank` asks (`retrieval.Index`), answered from FTS5 and the order and
postings tables of the graph file, and the index rows an item write adds.

Each item has one row in the `om_fts` index: the words of its title, summary and tags; key tokens for its kind and
applicability links (keys.py); and its priority, confidence and id. FTS5 MATCH expressions (keys AND words) are passed
as bound parameters. A search without text walks the `om_order` table (one row per key token and item, one per
combination of links on 2 or 3 applicability properties, and `*` for every item, indexed in priority, confidence, id
order): the one token of its filters, in that order, each row checked for a kind, up to k, so it never sorts every
match. A search with text ranks through the item sets of postings.py (topk.py: the items holding each word token tf
times, the items of each document length; FTS5's own statistics and bm25 formula): items of one tf signature and
length share a score, so whole cells of equal score are taken best first and only the rows that can enter the top k
are read. A word FTS5 would fold or split (not ASCII letters and digits) or a search that would read too many rows is
answered None by `top_text`, and the ranking asks FTS5 itself (`bm25()`, one query per level), with the same result.
A read-only memory made before store format 4 searches through FTS5 alone. The index never calls the ranking back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from rdflib import URIRef
from rdflib.namespace import RDF

from ...adapters.owlready2 import live_condition
from ...model import ItemSpec
from ...vocab import ITEM, OM
from ..items import Rows
from ..retrieval import ABOUT, KEYED, IndexQuery, Match, Ranked, SearchQuery, normalized_key, unstated
from . import postings, topk
from .itemsets import ItemSets
from .keys import filter_token, key_token, match_expression
from .world import World, combination_skipped

_ITEM = str(ITEM)
_TEXT_WEIGHTS = "1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0"  # bm25 weights: title, summary, tags count; keys do not


class EmbeddedIndex:
    """The retrieval index of one graph file (a `retrieval.Index`); rows are keyed by the items' quadstore ids.

    Args:
        world: the open graph file.
    """

    def __init__(self, world: World):
        self.store, self.db, self.terms, self.ordered = world.quadstore, world.db, world.terms, world.ordered
        self.sets = ItemSets(self.db, self.terms)
        self.normalized = world.normalized  # ontology key tokens name normalized IRIs (store format 6)
        self.about = {self.terms[p] for p in ABOUT}

    # ---- queries ----
    def query(self, query: SearchQuery) -> IndexQuery | None:
        """The quadstore-id form of a search; None when a filter names something never stored."""
        filters: list[tuple[int, int]] = []
        for p, o in ((OM.appliesToOntology, query.ontology), (OM.appliesToTaskType, query.task_type),
                     (OM.preventsFailureMode, query.failure_mode), (OM.aboutClass, query.about_class),
                     (OM.aboutProperty, query.about_property)):
            if o is not None:
                oid = self._key_object(p, o)
                if oid is None:
                    return None
                filters.append((self.terms[p], oid))
        kinds = tuple((self.terms[RDF.type], self.terms[k]) for k in query.kinds)
        open_properties = tuple(self.terms[p] for p in unstated(query))
        return IndexQuery(tuple(filters), kinds, query.words, query.k, unstated=open_properties)

    def _key_object(self, p: URIRef, o: URIRef) -> int | None:
        """The quadstore id a filter's key token names: an ontology's normalized IRI (retrieval.normalized_key); in a
        read-only memory whose keys predate that, the first spelling an index key names (bare, as given, # or /)."""
        bare = normalized_key(p, o)
        if p != OM.appliesToOntology or self.normalized:
            return self.store.storid(bare)
        spellings = map(self.store.storid, dict.fromkeys((bare, o, URIRef(f"{bare}#"), URIRef(f"{bare}/"))))
        keyed = "SELECT 1 FROM om_fts WHERE om_fts MATCH ? LIMIT 1"
        return next((i for i in spellings if i is not None and self.db.execute(
            keyed, (f'keys : "{key_token(self.terms[p], i)}"',)).fetchone()), None)

    def _walkable(self, q: IndexQuery) -> bool:
        """Whether the order table has the one token of the query's filters (one filter, or several on the
        applicability properties: what-it-is-about filters take part in no combination token)."""
        return self.ordered and (len(q.filters) < 2 or not {p for p, _ in q.filters} & self.about)

    def top_text(self, q: IndexQuery) -> list[Ranked] | None:
        """The k best text rows through the postings (topk.py); None when they cannot serve the query."""
        if not self._walkable(q) or not all(w.isascii() and w.isalnum() for w in q.words):
            return None  # non-ASCII or split words: their FTS5 tokens are not the words themselves
        with self._snapshot() as own:  # statistics, bitmaps and rows from one state of the memory
            self.sets.decoded.use(self.state() if own else None)
            return topk.ranked(self.sets, q.words, filter_token(q.filters),
                               [key_token(p, o) for p, o in q.kinds], q.k)

    def ranked(self, q: IndexQuery, limit: int, only: Sequence[int] | None = None, offset: int = 0) -> list[Ranked]:
        """Ranked rows of applicable, live items (retrieval.Index.ranked): without text and `only`, a walk of the one
        order token of the filters that stops at `limit`; else an FTS5 query (also for a memory without the order
        table)."""
        if not q.words and only is None and self._walkable(q):
            return self._walked(filter_token(q.filters), [key_token(p, o) for p, o in q.kinds], limit, offset)
        bm25 = f"-bm25(om_fts, {_TEXT_WEIGHTS})"
        rows = self._fts(match_expression(q), f"round({bm25}, 6)" if q.words else "0.0", "", limit, only, offset)
        return list(map(Ranked._make, rows))

    def matches(self, q: IndexQuery, word: str) -> list[Match]:
        """Every applicable, live item holding `word`, with its exact FTS5 score for that word alone."""
        expr = match_expression(replace(q, words=(word,)))
        rows = self._fts(expr, f"-bm25(om_fts, {_TEXT_WEIGHTS})", ", priority, confidence", -1)
        return list(map(Match._make, rows))

    def exceptions_of(self, keys: list[int]) -> dict[int, int]:
        """{exception storid: rule storid} for the exceptions of the given rules."""
        return self.store.links(self.terms[OM.hasException], keys, "s")

    def rules_of(self, keys: list[int]) -> dict[int, int]:
        """{exception storid: rule storid} for those of the given items that are exceptions of a rule."""
        return self.store.links(self.terms[OM.hasException], keys, "o")

    def narrowing(self, exceptions: dict[int, int], properties: tuple[int, ...]) -> set[int]:
        """Those exceptions (of {exception: rule}) with a value of one of `properties` that their rule lacks."""
        if not exceptions or not properties:
            return set()
        return self.store.narrowing(exceptions, properties)

    def count(self) -> int:
        """Items indexed, counted on the index's row-size table (15x faster than counting FTS rows)."""
        return self.db.execute("SELECT count(*) FROM om_fts_docsize").fetchone()[0]

    # ---- writes (inside the memory's write transaction) ----
    def write(self, items: Sequence[tuple[ItemSpec, Rows]], ids: dict[str, int]) -> None:
        """(Re)write the index, order and postings rows of items (an index row's rowid is its item's quadstore id),
        dropping their old postings first; `ids`: the write's memo of quadstore ids by IRI text (items.Items.memo),
        holding every IRI of the items' rows. The postings' item sets fold their deltas when due."""
        keyed = {str(p): p for p in KEYED}
        links = [[(p, str(normalized_key(keyed[p], URIRef(str(o))))) for x, p, o, d in rows
                  if d is None and p in keyed and x == _ITEM + spec.id] for spec, rows in items]
        self.store.made_ids((o for found in links for _, o in found), ids)
        docs = [postings.IndexRow(ids[_ITEM + spec.id], " ".join(sorted({key_token(ids[p], ids[o]) for p, o in found})),
                                  spec.id, spec.priority, spec.confidence,
                                  (spec.title, spec.summary, " ".join(spec.tags)))
                for (spec, _), found in zip(items, links, strict=True)]
        self.db.executemany("DELETE FROM om_fts WHERE rowid = ?", [(d.storid,) for d in docs])
        self.db.executemany("INSERT INTO om_fts(rowid, title, summary, tags, keys, item, priority, confidence) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(d.storid, *d.texts, d.keys, d.id, d.priority,
                                                                d.confidence) for d in docs])
        if self.ordered and docs:
            postings.replace(self.db, docs, combination_skipped(self.terms))
            postings.add(self.db, docs)
            postings.fold_when_due(self.db)

    # ---- the kept item sets ----
    def state(self) -> tuple[int, int]:
        """The graph file's state as this connection sees it: (data_version: moves when another connection commits,
        total_changes: moves with this connection's own writes)."""
        return self.db.execute("PRAGMA data_version").fetchone()[0], self.db.total_changes

    def committed(self, before: tuple[int, int], marks: list[tuple]) -> None:
        """This connection committed a write that began in state `before` with these item-set changes
        (postings.recording): the kept item sets take them (itemsets.Decoded.follow)."""
        self.sets.decoded.follow(before, marks, self.state())

    @contextmanager
    def _snapshot(self) -> Iterator[bool]:
        """A read transaction around the block (unless one is open; yields whether it opened one): other processes'
        commits stay out of it."""
        if self.db.in_transaction:
            yield False
            return
        self.db.execute("BEGIN")
        try:
            yield True
        finally:
            self.db.rollback()

    # ---- SQL ----
    def _fts(self, expr: str | None, score: str, columns: str, limit: int, only: Sequence[int] | None = None,
             offset: int = 0) -> list[tuple[int, str, float]]:
        """(storid, id, score, *columns) rows of live index rows matching `expr` (and among `only`), best first."""
        where: list[str] = []
        params: list[str | int] = []
        if expr:
            where.append("om_fts MATCH ?")
            params.append(expr)
        if only:
            where.append(f"rowid IN ({', '.join('?' * len(only))})")
            params.extend(only)
        where.append(live_condition("om_fts.rowid"))
        params += [self.terms[OM.supersedes], self.terms[OM.archived]]
        sql = (f"SELECT rowid, item, {score} AS score{columns} FROM om_fts WHERE {' AND '.join(where)} "
               "ORDER BY score DESC, priority DESC, confidence DESC, item ASC LIMIT ? OFFSET ?")
        return self.db.execute(sql, [*params, limit, offset]).fetchall()

    def _walked(self, token: str | None, any_of: Sequence[str], limit: int, offset: int) -> list[Ranked]:
        """Rows of live items holding `token` (None: every item) and one of `any_of`, in (priority, confidence, id)
        order: the token's rows are walked in that order (its index), so the query stops at `limit`."""
        where, params = self.sets.admits("o.s", None, any_of)
        sql = (f"SELECT o.s, o.item, 0.0 FROM om_order o INDEXED BY om_order_walk WHERE o.token = ? AND {where} "
               "ORDER BY o.priority DESC, o.confidence DESC, o.item ASC LIMIT ? OFFSET ?")
        return list(map(Ranked._make, self.db.execute(sql, [token or postings.ALL, *params, limit, offset])))
