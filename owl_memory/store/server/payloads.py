"""Payloads of a memory on a SPARQL server: content-addressed in the payload graph, windows cut on the server."""

from __future__ import annotations

import re

from rdflib.namespace import XSD

from ...errors import UnknownItem
from ...model import Ref, Window, sha256
from ...vocab import BLOB
from ..blobs import MAX_READ, REF_KINDS, PayloadStore, ReadBudget, find_offsets
from .client import SparqlClient, iri, string
from .layout import GRAPH_PAYLOADS, SRV

_KEY = re.compile(r"^sha256:[0-9a-f]{64}$")
_PLAIN = re.compile(r"[^\x00\ud800-\udfff]*")  # same rule as blobs.py: NUL or a lone surrogate -> wide form
_WIDE = "utf-32-le"


class ServerPayloads(PayloadStore):
    """Payloads in the server's payload graph: content-addressed, windows cut on the server.

    Args:
        client: the memory's SPARQL client.
        max_read: characters one read returns at most.
    """

    def __init__(self, client: SparqlClient, max_read: int = MAX_READ):
        self.client, self.max_read = client, max_read

    def put(self, text: str, kind: str = "content") -> Ref:
        """Store `text` (idempotent, keyed by sha256) and return its handle."""
        if kind not in REF_KINDS:
            raise ValueError(f"blob kind {kind!r} is not one of {', '.join(REF_KINDS)}")
        self.client.update(self.put_request(text, kind))
        sha = sha256(text)
        return Ref(f"sha256:{sha}", kind, len(text), sha)

    @staticmethod
    def put_request(text: str, kind: str) -> str:
        """The update that stores a payload unless its key is stored (plain text, or hex UTF-32 when it has a NUL
        or a lone surrogate, so windows stay exact)."""
        node, fields = _fields(text, kind)
        return (f"INSERT {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {node} {' ; '.join(f'{p} {o}' for p, o in fields)} }} }} "
                f"WHERE {{ FILTER NOT EXISTS {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {node} {iri(SRV.size)} ?size }} }} }}")

    @staticmethod
    def put_quads(text: str, kind: str) -> str:
        """The N-Quads lines of a payload (the triples put_request inserts; written again they change nothing)."""
        node, fields = _fields(text, kind)
        graph = iri(GRAPH_PAYLOADS)
        return "".join(f"{node} {p} {o} {graph} .\n" for p, o in fields)

    def ref(self, key: str | Ref) -> Ref:
        """The handle stored under `key`; UnknownItem when there is none."""
        return self._window(key, 0, 0)[0]

    def read(self, key: str | Ref, start: int = 0, length: int | None = None,
             budget: ReadBudget | None = None) -> Window:
        """A window of at most max_read characters; charges `budget` when given."""
        k = key.key if isinstance(key, Ref) else str(key)
        wanted = self.max_read if length is None else max(0, int(length))
        n = min(wanted, self.max_read) if budget is None else min(budget.allow(k, wanted), self.max_read)
        ref, start, text = self._window(key, max(0, int(start)), n)
        if budget is not None:
            budget.charge(ref.key, len(text))
        return Window(text, start, start + len(text), ref.size)

    def load(self, key: str | Ref) -> str:
        """The whole payload, for library code only (graph versions, deltas); never hand it to a model."""
        ref = self.ref(key)
        return self._window(ref, 0, ref.size)[2]

    def find(self, key: str | Ref, pattern: str, limit: int = 20) -> list[int]:
        """Offsets (never text) where `pattern` occurs literally in the payload, at most `limit` of them; each
        offset is found on the server (STRBEFORE), one request per hit."""
        ref, at = self.ref(key), 0
        hits: list[int] = []
        node = iri(BLOB[ref.sha])
        while len(hits) < limit and pattern and at < ref.size:
            _, rows = self.client.select(
                f"SELECT ?before WHERE {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {node} {iri(SRV.text)} ?t }} "
                f"BIND(SUBSTR(?t, {at + 1}) AS ?rest) FILTER(CONTAINS(?rest, {string(pattern)})) "
                f"BIND(STRLEN(STRBEFORE(?rest, {string(pattern)})) AS ?before) }}")
            if not rows:
                if not hits and not _PLAIN.fullmatch(pattern):  # a wide payload: search it here
                    return find_offsets(self.load(ref), pattern, limit)
                break
            hits.append(at + int(rows[0]["before"]))
            at = hits[-1] + 1
        return hits or (find_offsets(self.load(ref), pattern, limit) if self._wide(ref) else [])

    def close(self) -> None:
        """Nothing of its own to release (the memory closes the client)."""

    def _wide(self, ref: Ref) -> bool:
        """Whether a payload is stored in the wide (hex UTF-32) form."""
        return self.client.ask(f"ASK {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {iri(BLOB[ref.sha])} {iri(SRV.wide)} ?h }} }}")

    def _window(self, key: str | Ref, start: int, n: int) -> tuple[Ref, int, str]:
        """(handle, clamped start, text of at most n characters from start), cut on the server in one request."""
        k = key.key if isinstance(key, Ref) else str(key)
        if not _KEY.match(k):
            raise UnknownItem(f"no payload under handle {k[:80]!r}; use a handle a tool returned")
        _, rows = self.client.select(
            f"SELECT ?kind ?size (SUBSTR(?t, {start + 1}, {n}) AS ?w) (SUBSTR(?h, {8 * start + 1}, {8 * n}) AS ?wh) "
            f"WHERE {{ GRAPH {iri(GRAPH_PAYLOADS)} {{ {iri(BLOB[k[7:]])} {iri(SRV.kind)} ?kind ; {iri(SRV.size)} ?size "
            f"OPTIONAL {{ {iri(BLOB[k[7:]])} {iri(SRV.text)} ?t }} "
            f"OPTIONAL {{ {iri(BLOB[k[7:]])} {iri(SRV.wide)} ?h }} }} }} "
            "ORDER BY ?kind LIMIT 1")
        if not rows:
            raise UnknownItem(f"no payload under handle {k[:80]!r}; use a handle a tool returned")
        row = rows[0]
        size = int(row["size"])
        text = str(row["w"]) if row.get("w") is not None else bytes.fromhex(str(row.get("wh") or "")).decode(
            _WIDE, "surrogatepass")
        return Ref(k, str(row["kind"]), size, k[7:]), min(start, size), text


def _fields(text: str, kind: str) -> tuple[str, list[tuple[str, str]]]:
    """A payload's node and its (predicate, object) pairs as SPARQL / N-Triples text: kind, size and the text (plain,
    or hex UTF-32 when it has a NUL or a lone surrogate)."""
    if _PLAIN.fullmatch(text):
        body = (iri(SRV.text), string(text))
    else:
        body = (iri(SRV.wide), string(text.encode(_WIDE, "surrogatepass").hex()))
    size = f'"{len(text)}"^^{iri(XSD.integer)}'
    return iri(BLOB[sha256(text)]), [(iri(SRV.kind), string(kind)), (iri(SRV.size), size), body]
