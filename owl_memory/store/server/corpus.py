"""What a server search needs to know of the whole memory, cached per memory version: the items indexed and their
total length (BM25's average length), each query token's posting buckets (postings.py; their counts sum to the
token's document frequency), each filtered ontology's stored spellings and the rules that have exceptions.

Every write to the memory replaces its version (layout.py). A search asks the server only for what the cache lacks,
and its ranking request reads the version too (`VERSION`): when it is not the cache's, a write came in between, so
the cache is dropped (`current`) and the search runs again. What one request answers is read in one snapshot, so a
request that finds a new version also fills the new cache.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import NamedTuple

from rdflib import Literal, URIRef

from ...errors import VersionMismatch
from ...vocab import ITEM, OM, ontology_iri
from .client import Row, SparqlClient, iri, string, values_block
from .layout import GRAPH_INDEX, GRAPH_ITEMS, IDX
from .postings import Bucket, parse_bucket

VERSION = (f"SELECT (GROUP_CONCAT(?v0) AS ?v) WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ "
           f"{iri(IDX.stats)} {iri(IDX.version)} ?v0 }} }}")  # one row: the version's values, space-separated
_COUNT = (f"SELECT (COUNT(?i) AS ?n) (SUM(?len) AS ?total) WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ "
          f"?i {iri(IDX.length)} ?len }} }}")
_RULES = f"SELECT DISTINCT ?rule WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ ?rule {iri(OM.hasException)} ?exception }} }}"
_EARLIER = (f"SELECT ?earlier WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ ?earlier {iri(IDX.frequency)} ?f "
            f"FILTER(?earlier = {iri(IDX.tf1)}) }} }}")  # the text index of an earlier layout: postings as idx:tfN


def versions(rows: list[Row]) -> frozenset[str]:
    """The memory version a request read (its VERSION row)."""
    return frozenset(v for r in rows if r.get("v") is not None for v in str(r["v"]).split())


def new_version() -> str:
    """The update operations replacing the memory's version with a fresh one (concurrent writers may leave several
    values: any write still changes the set a reader compares)."""
    node = f"{iri(IDX.stats)} {iri(IDX.version)}"
    return (f"DELETE WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ {node} ?v }} }} ;\n"
            f"INSERT DATA {{ GRAPH {iri(GRAPH_INDEX)} {{ {node} {string(str(uuid.uuid4()))} }} }}")


class _Answer(NamedTuple):
    """The rows of one corpus request and what it asked for: tokens, an ontology (normalized) or None."""

    rows: list[Row]
    toks: list[str]
    bare: str | None


class Corpus:
    """The cached corpus statistics of one server memory (`version` None: nothing cached).

    Args:
        client: the memory's SPARQL client.
    """

    def __init__(self, client: SparqlClient):
        self.client = client
        self.version: frozenset[str] | None = None
        self.items, self.length = 0, 0  # items indexed, their total document length
        self.rules: frozenset[str] = frozenset()  # ids of the items that have exceptions
        self.buckets: dict[str, tuple[Bucket, ...]] = {}
        self.spellings: dict[str, list[URIRef]] = {}

    def read(self, toks: Sequence[str], ontology: URIRef | None) -> frozenset[str] | None:
        """Fill the cache for these tokens and this ontology; the version the server answered at, or None when the
        cache held everything (no request). One request, or two when the version found is not the cache's (the
        second counts the items and lists the rules again, and asks what the dropped cache held)."""
        bare = ontology_iri(ontology) if ontology is not None else None
        missing = [t for t in dict.fromkeys(toks) if t not in self.buckets]
        if self.version is not None and not missing and (bare is None or bare in self.spellings):
            return None
        version, answer = self._ask(toks, bare, count=self.version is None)
        for _ in range(3):  # a writer may replace the version between two requests: ask again
            if version == self.version:
                break
            fresh = self.version is None
            self._drop(version)
            self._keep(*answer)
            if fresh:
                break
            version, answer = self._ask(toks, bare, count=True)
        self._keep(*answer)
        return version

    def current(self, seen: frozenset[str] | None) -> bool:
        """Whether a request that read version `seen` (None: none was made) read the cached version; when not,
        the cache is dropped."""
        if seen is None or seen == self.version:
            return True
        self._drop(None)
        return False

    def _drop(self, version: frozenset[str] | None) -> None:
        """Empty the cache for a new version."""
        self.version, self.buckets, self.spellings = version, {}, {}

    def _ask(self, toks: Sequence[str], bare: str | None, count: bool) -> tuple[frozenset[str], _Answer]:
        """One SELECT of the version and what the cache lacks of `toks` and the ontology `bare` (with `count`, the
        items indexed, their total length and the rules too); the version, and the answer."""
        toks = [t for t in dict.fromkeys(toks) if t not in self.buckets]
        bare = bare if bare is not None and bare not in self.spellings else None
        parts = [VERSION] + ([_COUNT, _RULES, _EARLIER] if count else [])
        if toks:
            parts.append(f"SELECT ?tok ?b (COUNT(?i) AS ?c) WHERE {{ GRAPH {iri(GRAPH_INDEX)} {{ "
                         f"{values_block('tok', map(Literal, toks))} ?i ?b ?tok }} }} GROUP BY ?tok ?b")
        if bare is not None:
            parts.append(f"SELECT ?o WHERE {{ GRAPH {iri(GRAPH_ITEMS)} {{ ?o a {iri(OM.TargetOntology)} "
                         f"FILTER(STRSTARTS(STR(?o), {string(bare)})) }} }}")
        _, rows = self.client.select("SELECT * WHERE { " + " UNION ".join(f"{{ {p} }}" for p in parts) + " }")
        return versions(rows), _Answer(rows, toks, bare)

    def _keep(self, rows: list[Row], toks: list[str], bare: str | None) -> None:
        """Cache what one request answered: the count and rules, the buckets of the tokens it asked for (none: the
        token is in no item) and the spellings of the ontology it asked for."""
        found: dict[str, list[Bucket]] = {t: [] for t in toks}
        spellings, rules = [], set()
        if any(r.get("earlier") is not None for r in rows):
            raise VersionMismatch("this server memory's text index has the layout of an earlier owl-memory "
                                  "(postings as idx:tfN); copy it to a directory and back with owl-memory copy")
        for r in rows:
            if r.get("n") is not None:
                self.items, self.length = int(r["n"]), int(r.get("total") or 0)
            elif r.get("rule") is not None:
                rules.add(str(r["rule"])[len(ITEM):])
            elif r.get("tok") is not None and (fl := parse_bucket(r["b"])) is not None:
                found[str(r["tok"])].append(Bucket(*fl, int(r["c"])))
            elif isinstance(o := r.get("o"), URIRef) and ontology_iri(o) == bare:
                spellings.append(o)
        if any(r.get("n") is not None for r in rows):
            self.rules = frozenset(rules)
        self.buckets.update((t, tuple(bs)) for t, bs in found.items())
        if bare is not None:
            self.spellings[bare] = sorted(spellings)

    @property
    def avgdl(self) -> float:
        """The average document length (1.0 for an empty index)."""
        return self.length / self.items if self.items else 1.0

    def df(self, tok: str) -> int:
        """The number of items holding a cached token."""
        return sum(b.size for b in self.buckets[tok])
