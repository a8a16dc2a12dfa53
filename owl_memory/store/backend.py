"""The backend interface: what a memory store must do. `Memory` is a facade over one backend.

Two implementations: `embedded.backend.QuadstoreBackend` (owlready2's SQLite quadstore plus a blob file) and
`server.backend.SparqlServerBackend` (any SPARQL 1.1 Query + Update server). The facade owns everything that is
the same on both: building an item's RDF (items.py), SHACL validation (validation.py), the search request and its
defining SPARQL (retrieval.py), the read-only guard for user queries (adapters/sparql.py). A backend only stores,
finds and counts; it never validates.

Items cross this interface as (ItemSpec, its triples as plain `items.Row` values, no rdflib terms); search requests
as `retrieval.SearchQuery` (IRIs, words, k); search results as `retrieval.Scored` (id, score) rows; item cards as
`model.Card`s; SPARQL results as `TermRows`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from rdflib import Graph, URIRef
from rdflib.term import Identifier

from ..errors import MemoryReadOnly
from ..model import Card, ItemSpec, UseCounts
from .blobs import PayloadStore
from .items import Rows
from .retrieval import Scored, SearchQuery
from .sparql_terms import Checked

Cell = Identifier | bool | None  # one cell of a SPARQL answer: an rdflib term, None where unbound, an ASK's bool


@dataclass(frozen=True)
class TermRows:
    """What a backend's SPARQL query gives: column names, rows of rdflib terms (None: unbound) and whether rows were
    cut at the limit; an ASK gives the column "ask" and one row holding its bool."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    truncated: bool


class Backend(ABC):
    """Where one memory's items, links, provenance and payloads live."""

    payloads: PayloadStore
    location: str  # the memory directory or server URL, for messages
    read_only: bool = False  # the store's files cannot be written (embedded; a server refuses writes itself)
    engine: str  # what runs searches, shown by search(explain=True): "fts5" embedded, "sparql" on a server

    # ---- items ----
    @abstractmethod
    def stored(self, ids: Iterable[str]) -> set[str]:
        """The ids among `ids` that are stored items."""

    @abstractmethod
    def write_items(self, items: Sequence[tuple[ItemSpec, Rows]]) -> None:
        """Store new, already validated items (each with its triples as items.Row values): payloads first, then all
        their triples (and any index) in one transaction; an error leaves none of the batch's triples behind."""

    @abstractmethod
    def describe(self, nodes: Iterable[URIRef]) -> Graph:
        """Every stored triple whose subject is an item among `nodes`, and the rdf:type triples of the other
        nodes (the context SHACL needs for sh:class)."""

    @abstractmethod
    def cards(self, ids: Sequence[str]) -> list[Card]:
        """Search cards of stored items, in the order given (applies_to: sorted IRIs; conflicts_with: sorted ids)."""

    @abstractmethod
    def search(self, query: SearchQuery) -> list[Scored]:
        """Up to query.k (id, score) rows, best first, with the semantics retrieval.py defines for a
        `retrieval.SearchQuery`: applicable, not superseded, not archived, exceptions above their rules."""

    @abstractmethod
    def with_signature(self, signature: str) -> list[str]:
        """Ids of items carrying om:violationSignature `signature`, neither superseded nor archived."""

    @abstractmethod
    def count(self) -> int:
        """Number of stored items (superseded and archived ones included)."""

    # ---- updates (call inside `transaction()`) ----
    @abstractmethod
    def count_use(self, id: str, success: bool | None) -> UseCounts:
        """Add 1 to useCount (and to successCount / failureCount when success is True / False) as typed
        xsd:nonNegativeInteger literals; returns the new counters."""

    @abstractmethod
    def add_triples(self, g: Graph) -> None:
        """Insert the triples of `g` (links, archive flags, provenance); present ones are left as they are."""

    @abstractmethod
    def remove_triples(self, subject: URIRef, predicate: URIRef, obj: Identifier | None = None) -> None:
        """Delete (subject, predicate, obj), or every value of (subject, predicate) when obj is None."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """Context manager: commit the writes inside it, or roll them all back on any error; re-entrant (an inner
        block joins the outer one). Reads inside it see every write other processes committed before it began."""

    # ---- whole memory ----
    @abstractmethod
    def sparql(self, query: Checked, bindings: Mapping[str, Identifier], limit: int) -> TermRows:
        """Run a SELECT / ASK that adapters.sparql.check_read_only accepted (text and parsed form), with bound
        values ({variable name: rdflib term}, sparql_terms.bound_terms): at most `limit` rows."""

    def require_writable(self) -> None:
        """MemoryReadOnly when the store's files cannot be written (a server that refuses a write says so itself, as
        a ServerError)."""
        if self.read_only:
            raise MemoryReadOnly(f"the memory at {self.location} is read-only (its files or folder cannot be written); "
                                 "copy it somewhere writable to change it (cp -r), or point --memory elsewhere")

    def others_changes(self) -> int | None:
        """A number that changes whenever another connection commits to the store (None: the store cannot tell, so
        every change must be assumed)."""
        return None

    def integrity(self) -> list[str]:
        """Damage the store's own integrity check finds ([] when none, or when the store has no such check)."""
        return []

    @abstractmethod
    def all_triples(self) -> Graph:
        """The whole memory (ontology, items, links, provenance) as an rdflib Graph, for export and validation."""

    @abstractmethod
    def close(self) -> None:
        """Commit nothing pending and release connections."""

