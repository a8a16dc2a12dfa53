"""`Memory`: the facade every caller uses; items are built and validated here, stored by a backend."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from rdflib import Graph, Literal, URIRef
from rdflib.term import Node

from ..adapters import sparql as sparql_text
from ..adapters.wall_time import time_limit
from ..errors import ConfigError, InvalidItem, MemoryCorrupt, QueryRefused
from ..model import (
    Hit,
    Item,
    ItemSpec,
    OntologyContext,
    Ref,
    SearchExplanation,
    SparqlResult,
    UseCounts,
    ValidationReport,
    Window,
    best_first,
)
from ..rdfio import check_output, write_graph as write_rdf
from ..vocab import ITEM, OM, RDF
from . import alignment, forgetting, retrieval
from .backend import Backend
from .blobs import MAX_READ
from .embedded.backend import QuadstoreBackend
from .export import with_header
from .items import ID, Rows, item_rows, linked_ids, stored_item, unknown_item
from .sparql_terms import answer_cell, bound_terms, checked_query, integer
from .validation import batch_context, check, check_batch, context, require_valid

MAX_ROWS = 1000  # rows one sparql() call returns at most
COPY_STATE = URIRef("http://w3id.org/owl-memory/copy")  # marks an unfinished copy into this memory (store/copy.py)
_COPY_SOURCE = f"SELECT ?source WHERE {{ <{COPY_STATE}> <{OM.copyIncompleteFrom}> ?source }}"
LINKS = {"conflictsWith": OM.conflictsWith, "refines": OM.refines, "supersedes": OM.supersedes,
         "groundedByEpisode": OM.groundedByEpisode}


def open_backend(location: str | Path, max_read: int, create: bool = True) -> Backend:
    """The backend for a location: an http(s) URL is a SPARQL server, anything else a memory directory
    (MemoryNotFound when it holds no memory and `create` is False)."""
    text = str(location)
    if text.startswith(("http://", "https://")):
        from .server.backend import SparqlServerBackend

        return SparqlServerBackend(text, max_read=max_read, create=create)
    path = Path(location)
    try:
        is_file = path.exists() and not path.is_dir()
    except (OSError, ValueError) as e:  # a NUL in the name, a name too long
        raise ConfigError(f"{str(location)[:120]!r} is not a usable memory location ({e}); pass a folder path or a "
                          "server URL") from None
    if is_file:
        raise InvalidItem(f"{path} is a file; a memory is a directory (pass a new or existing folder)")
    return QuadstoreBackend(path, max_read, create)


class Memory:
    """A symbolic memory: validated items, their links and provenance, payloads behind handles, ranked search.

    Args:
        location: a memory directory (embedded: `memory.sqlite3` + `blobs.sqlite3`; created when missing) or the
            http(s) URL of a SPARQL 1.1 server.
        max_read: characters one `window` read returns at most.
        create: False to raise MemoryNotFound instead of creating a missing memory (read-only commands).

    Many processes may use one embedded memory at once: reads never wait for writers, and writes from several
    processes serialize on the memory's write lock (a bounded wait, then MemoryLocked naming the holder).

    Example:
        with Memory(".owl-memory") as m:
            i = m.add(ItemSpec("Principle", "Bind values, never paste", "Use when a query takes user text.", "..."))
            m.search("query user text")
    """

    def __init__(self, location: str | Path = ".owl-memory", max_read: int = MAX_READ, *,
                 max_items: int | None = None, create: bool = True) -> None:
        self.location = location
        self.backend = open_backend(location, max_read, create)
        self.blobs = self.backend.payloads
        self.max_read = max_read
        local = not str(location).startswith(("http://", "https://"))
        if max_items is not None and local:
            forgetting.write_bound(Path(location), max_items)
        self.max_items = forgetting.read_bound(Path(location)) if local else max_items
        self.forgotten: list[str] = []  # ids the bound archived since this Memory was opened, in order

    # ---- writes ----
    def add(self, spec: ItemSpec) -> str:
        """Validate and store one item; returns its stable id (the same id, unchanged, when already stored)."""
        return self.add_many([spec])[0]

    def add_many(self, specs: Iterable[ItemSpec], *, batch: int = 1000, validate: bool = True) -> list[str]:
        """Store many items, one transaction per `batch`; returns their ids in order (stored ones unchanged).

        Every batch is checked against the shapes in one pyshacl run (about 3 ms per item) before anything of it
        is written; `validate=False` skips that for trusted bulk loads (generated benchmarks, copies of a memory
        that validated at its source).
        """
        ids: list[str] = []
        specs = list(specs)
        for at in range(0, len(specs), batch):
            ids += self._add_batch(specs[at: at + batch], validate)
        self.enforce_bound()
        return ids

    def enforce_bound(self, keep: Iterable[str] = ()) -> list[str]:
        """Archive the least useful active items (never those in `keep`) while more than max_items are active;
        returns their ids."""
        if self.max_items is None or self.backend.count() <= self.max_items:
            return []
        rows = self.backend.sparql(checked_query(forgetting.ACTIVE), {}, forgetting.MAX_SCAN).rows
        active = [forgetting.Candidate(str(i)[len(str(ITEM)):], UseCounts(integer(u), integer(ok), integer(bad)),
                                       str(c)) for i, u, ok, bad, c in rows]
        kept = set(keep)
        victims = forgetting.least_useful([c for c in active if c.id not in kept], len(active) - self.max_items)
        for i in victims:
            self.archive(i)
        self.forgotten += victims
        return victims

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as superseded by `new_id`: it is kept but never retrieved again."""
        self.link(new_id, "supersedes", old_id)

    def link(self, id: str, relation: str, other_id: str) -> None:
        """Link two stored items: conflictsWith (written both ways), refines, supersedes or groundedByEpisode."""
        if relation not in LINKS:
            raise InvalidItem(f"unknown relation {str(relation)[:40]!r}; use one of {', '.join(LINKS)}")
        self._require(id, other_id)
        if id == other_id:
            raise InvalidItem(f"an item cannot be linked to itself by {relation}; pass two different ids")
        g = Graph(bind_namespaces="none")
        g.add((ITEM[id], LINKS[relation], ITEM[other_id]))
        if relation == "conflictsWith":
            g.add((ITEM[other_id], OM.conflictsWith, ITEM[id]))
        self._update(g, [ITEM[id], ITEM[other_id]])

    def archive(self, id: str) -> None:
        """Take an item out of retrieval (search, by_signature); it stays in the graph with its links."""
        self._require(id)
        with self.backend.transaction():
            self.backend.remove_triples(ITEM[id], OM.archived)
            self.backend.add_triples(_one(ITEM[id], OM.archived, Literal(True)))

    def restore(self, id: str) -> None:
        """Bring an archived item back into retrieval; in a memory at its bound the least useful other item goes."""
        self._require(id)
        with self.backend.transaction():
            self.backend.remove_triples(ITEM[id], OM.archived)
        self.enforce_bound(keep=(id,))

    def record_use(self, id: str, success: bool | None = None) -> UseCounts:
        """Count one use of an item (and its success or failure when known); returns the new counters."""
        self._require(id)
        with self.backend.transaction():
            return self.backend.count_use(id, success)

    def put_payload(self, text: str, kind: str) -> Ref:
        """Store a payload (run report, trajectory, ...) content-addressed; returns its handle."""
        return self.blobs.put(text, kind)

    def payload_window(self, ref: str | Ref, start: int = 0, length: int = MAX_READ) -> Window:
        """At most max_read characters of a payload."""
        return self.blobs.read(ref, start, length)

    def write_graph(self, g: Graph) -> None:
        """Add non-item triples (runs, trajectories, judgments, usages) atomically, after validating them."""
        bad = next((t for t in g if isinstance(t[0], URIRef) and t[0].startswith(str(ITEM))), None)
        if bad is not None:
            raise InvalidItem(f"write_graph does not change items (got subject {bad[0]}); use add, link, archive "
                              "or record_use")
        blank = next((t for t in g if any(not isinstance(x, (URIRef, Literal)) for x in t)), None)
        if blank is not None:
            raise InvalidItem("write_graph needs IRIs, not blank nodes, so writes stay idempotent; mint IRIs")
        self._update(g, sorted({s for s in g.subjects() if isinstance(s, URIRef)}))

    # ---- reads ----
    def get(self, id: str) -> Item:
        """Metadata, links, counters and compiled fields of an item; never its content text."""
        self._require(id)
        card = self.backend.cards([id])[0]
        return stored_item(card, self.backend.describe([ITEM[id]]), lambda ref: self.blobs.ref(ref).size)

    def window(self, id: str, start: int = 0, length: int = MAX_READ) -> Window:
        """At most max_read characters of an item's content."""
        self._require(id)
        return self.blobs.read(str(self.backend.describe([ITEM[id]]).value(ITEM[id], OM.contentRef)), start, length)

    def search(self, text: str | None = None, ontology: str | None = None, task_type: str | None = None,
               failure_mode: str | None = None, kinds: str | Iterable[str] | None = None, k: int = 5, *,
               about_class: str | None = None, about_property: str | None = None, about: str | None = None,
               context: OntologyContext | None = None) -> list[Hit]:
        """Applicable items, best first; superseded and archived items are never returned (`explain` says why).
        Ontology IRIs compare without a trailing # or /; `about`: items about that class, then about that property;
        `context` (alignment.ontology_context of the run's ontology) adds the items of its versions and aligned
        terms after the exact ones, marked carried over."""
        q = retrieval.search_query(text, ontology, task_type, failure_mode, kinds, k, about_class, about_property,
                                   about)
        return self._hits(q, context)

    def explain(self, text: str | None = None, ontology: str | None = None, task_type: str | None = None,
                failure_mode: str | None = None, kinds: str | Iterable[str] | None = None, k: int = 5, *,
                about_class: str | None = None, about_property: str | None = None, about: str | None = None,
                context: OntologyContext | None = None) -> SearchExplanation:
        """The search's hits with the SELECT that defines them (see retrieval.py), its bindings and the engine (as for
        search; a followed search runs one such SELECT per step, alignment.searches: this is the first)."""
        q = retrieval.search_query(text, ontology, task_type, failure_mode, kinds, k, about_class, about_property,
                                   about)
        hits, q = self._hits(q, context), alignment.searches(q, context)[0][0] if q else retrieval.SearchQuery(k=0)
        return SearchExplanation(tuple(hits), retrieval.defining_sparql(q),
                                 {k: str(v) for k, v in retrieval.bindings(q).items()}, self.backend.engine)

    def _hits(self, q: retrieval.SearchQuery | None, context: OntologyContext | None = None) -> list[Hit]:
        """The ranked hits of a normalized search (none when a filter can match nothing), followed through the
        context's versions and alignments."""
        found = alignment.followed(self.backend.search, q, context) if q is not None and q.k else []
        cards = self.backend.cards([row.id for row, _ in found])
        return [Hit(**c.card(), score=float(row.score), carried_over_from=mark)
                for c, (row, mark) in zip(cards, found, strict=True)]

    def sparql(self, query: str, bindings: Mapping[str, object] | None = None, limit: int = MAX_ROWS,
               seconds: float = sparql_text.QUERY_SECONDS) -> SparqlResult:
        """Run a read-only SELECT or ASK over the memory graph (items, links, provenance; never payload text):
        columns, rows (IRIs and literals as text, numeric and boolean literals as numbers and booleans, None where
        unbound; ASK: one row holding a bool) and whether rows were cut. Bindings map variable names to rdflib terms
        or Python values (str becomes a literal; pass URIRef for an IRI). QueryRefused for updates, SERVICE, FROM,
        CONSTRUCT / DESCRIBE, or a LIMIT above `limit`; QueryTimeout past `seconds` of wall time."""
        limit = max(1, min(int(limit), MAX_ROWS))
        checked = checked_query(str(query))
        asked = sparql_text.limit_of(checked.parsed)
        if asked is not None and asked > limit:
            raise QueryRefused(f"LIMIT {asked} is above the cap of {limit} rows; ask for at most {limit}")
        with time_limit(seconds):
            found = self.backend.sparql(checked, bound_terms(bindings or {}), limit)
        rows = tuple(tuple(answer_cell(c) for c in row) for row in found.rows)
        return SparqlResult(found.columns, rows, found.truncated)

    def by_signature(self, signature: str) -> list[Item]:
        """RepairOperators compiled for a violation signature, best first (success ratio, then id)."""
        return best_first(self.get(i) for i in self.backend.with_signature(signature))

    def require_writable(self) -> None:
        """MemoryReadOnly, before any work, when this memory cannot be written (call it first in anything that will
        write: a run's trace, learning, compiling repairs)."""
        self.backend.require_writable()

    def stored(self, ids: Iterable[str]) -> set[str]:
        """The ids among `ids` that name stored items."""
        return self.backend.stored(ids)

    def __len__(self) -> int:
        """Number of stored items (superseded and archived ones included)."""
        return self.backend.count()

    # ---- whole memory ----
    def validate(self, ids: Iterable[str] | None = None, *, files: bool | None = None) -> ValidationReport:
        """The store's own file check (SQLite's integrity check of both files of an embedded memory: it reads every
        page), an unfinished copy, then every item (or only the items `ids`) against the memory shapes. `files`
        None runs the file check for the whole memory and not for `ids`, unless reading those items meets damage."""
        checked = ids is None if files is None else files
        damage = self.backend.integrity() if checked else []
        if damage:
            return _damaged(damage)
        source = self.incomplete_copy
        if source is not None:
            return ValidationReport(False, 1, (f"this memory is an incomplete copy of {source}: a copy into it did not "
                                               f"finish; run `owl-memory copy {source} {self.location}` again",))
        if ids is None:
            return check(self.to_graph())
        try:
            return self._validate_items(list(ids))
        except MemoryCorrupt:
            damage = [] if checked else self.backend.integrity()  # the items' check cannot be trusted: find where
            if damage:
                return _damaged(damage)
            raise

    def _validate_items(self, ids: list[str]) -> ValidationReport:
        """The items `ids` with their stored context against the memory shapes."""
        nodes = [ITEM[i] for i in ids]
        self._require(*ids)
        g = self.backend.describe(nodes)
        return check(g, context(self.backend, g, nodes), focus=nodes)

    @property
    def incomplete_copy(self) -> str | None:
        """The source of a copy into this memory that has not finished (its items may be partial), else None."""
        if (COPY_STATE, RDF.type, OM.CopyState) not in self.backend.describe([COPY_STATE]):
            return None  # the usual answer, found without a SPARQL query
        rows = self.backend.sparql(checked_query(_COPY_SOURCE), {}, 1).rows
        return str(rows[0][0]) if rows else None

    def to_graph(self) -> Graph:
        """The whole memory (ontology, items, provenance) as an rdflib Graph, not validated."""
        return self.backend.all_triples()

    def export(self, path: str | Path, format: str = "turtle") -> Path:
        """Write the memory (ontology and items) as RDF after validating it; nothing is written if it fails."""
        check_output(path, format)
        g = self.to_graph()
        require_valid(g, what="the memory")
        return write_rdf(with_header(g), path, format)

    def close(self) -> None:
        """Close the backend (and its payload store)."""
        self.backend.close()

    def __enter__(self) -> Memory:
        """The memory itself, closed when the block ends."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the memory."""
        self.close()

    def __repr__(self) -> str:
        """Memory('location')."""
        return f"Memory({str(self.location)!r})"

    # ---- helpers ----
    def _require(self, *ids: str) -> None:
        """UnknownItem unless every id names a stored item."""
        wanted = [i for i in ids if not isinstance(i, str) or not ID.match(i)]
        known = self.backend.stored([i for i in ids if i not in wanted])
        missing = wanted + [i for i in ids if i not in wanted and i not in known]
        if missing:
            raise unknown_item(missing[0])

    def _add_batch(self, specs: list[ItemSpec], validate: bool) -> list[str]:
        """Build, check and write one batch of new items (stored ones are skipped)."""
        for spec in specs:
            if not isinstance(spec, ItemSpec):
                raise InvalidItem(f"add takes an ItemSpec, got {type(spec).__name__}; build one with ItemSpec(...)")
        stored = self.backend.stored({s.id for s in specs})
        new: dict[str, tuple[ItemSpec, Rows]] = {}
        for spec in specs:
            if spec.id in stored or spec.id in new:
                continue
            if linked := [i for i in linked_ids(spec) if i not in new]:
                self._require(*linked)
            new[spec.id] = (spec, item_rows(spec))
        version = self.backend.others_changes()
        checked = check_batch(self.backend, list(new.values())) if validate and new else None  # unlocked: in parallel
        with self.backend.transaction():  # the write lock: what other writers stored meanwhile is seen from here
            fresh = self.backend.stored(new)
            new = {i: item for i, item in new.items() if i not in fresh}
            moved = version is None or self.backend.others_changes() != version  # else the context is unchanged
            batch = list(new.values())
            again = checked is not None and new and moved
            if again and set(batch_context(self.backend, [spec for spec, _ in batch])) != checked:
                check_batch(self.backend, batch)
            if new:
                self.backend.write_items(batch)
        return [s.id for s in specs]

    def _update(self, g: Graph, focus: list[URIRef]) -> None:
        """Add `g`, validate the focus nodes with what is stored about them, commit or roll back."""
        with self.backend.transaction():
            self.backend.add_triples(g)
            now = self.backend.describe(focus) + g
            require_valid(now, context(self.backend, now, [f for f in focus if str(f).startswith(str(ITEM))]),
                          what=" and ".join(str(f) for f in focus[:3]), focus=focus)


def _one(s: URIRef, p: URIRef, o: Node) -> Graph:
    """A graph of one triple."""
    g = Graph(bind_namespaces="none")
    g.add((s, p, o))
    return g


def _damaged(damage: list[str]) -> ValidationReport:
    """The report of damage the store's file check found."""
    return ValidationReport(False, len(damage), tuple(damage))
