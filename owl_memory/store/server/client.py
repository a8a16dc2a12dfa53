"""SPARQL 1.1 Protocol over HTTP (standard library only): endpoints, escaped terms, SELECT / ASK / CONSTRUCT / UPDATE.

Every value that reaches a query string goes through `term()`: IRIs are checked against the IRI grammar's
forbidden characters and literals are escaped character by character, so no user text is ever parsed as
SPARQL syntax.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlencode, urlsplit

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Identifier, Node

from ...adapters import rdflib as rdf
from ...errors import ConfigError, InvalidItem, ServerError

_BAD_IRI = re.compile(r"[\x00-\x20<>\"{}|^`\\]")
_LANG = re.compile(r"^[A-Za-z]+(-[A-Za-z0-9]+)*$")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE_TABLE = str.maketrans({chr(c): f"\\u{c:04X}" for c in (*range(0x20), 0x7F)} | _ESCAPES)
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_RESULTS_JSON = "application/sparql-results+json"
_DIRECT = {"update": "application/sparql-update; charset=UTF-8", "quads": "application/n-quads"}  # bodies sent as is


@dataclass(frozen=True)
class Endpoints:
    """Where a memory URL's queries and updates go, and its Basic-auth header value (or None)."""

    query: str
    update: str
    auth: str | None = None
    store: str | None = None  # the SPARQL 1.1 Graph Store Protocol endpoint bulk writes POST N-Quads to (Oxigraph's)


def endpoints(url: str) -> Endpoints:
    """Query and update endpoints of a memory URL.

    http://host:port or .../query (Oxigraph, Fuseki): queries to .../query, updates to .../update; at
    http://host:port (Oxigraph's own form) bulk writes POST N-Quads to /store (the Graph Store Protocol);
    .../repositories/NAME (GraphDB, RDF4J): updates to .../repositories/NAME/statements;
    any other path (Virtuoso's /sparql, Blazegraph, Neptune, QLever): one endpoint for both.
    user:password@ in the URL is sent as HTTP Basic authentication.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"a server memory is an http(s) URL such as http://127.0.0.1:7878, got {url[:80]!r}")
    auth = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        auth = "Basic " + base64.b64encode(pair).decode()
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    base = f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")
    path = parts.path.rstrip("/")
    if path == "" or path.endswith("/query"):
        root = path.removesuffix("/query")
        return Endpoints(f"{base}{root}/query", f"{base}{root}/update", auth, f"{base}/store" if not root else None)
    if re.search(r"/repositories/[^/]+$", path):
        return Endpoints(base + path, f"{base}{path}/statements", auth)
    return Endpoints(base + path, base + path, auth)


def iri(value: str) -> str:
    """An IRI as SPARQL text; InvalidItem when it holds a character no IRI may hold."""
    text = str(value)
    if not text or _BAD_IRI.search(text) or ":" not in text:
        raise InvalidItem(f"not an IRI a SPARQL server accepts: {text[:80]!r}")
    return f"<{text}>"


def string(value: str) -> str:
    """A string literal as SPARQL text, every quote, backslash and control character escaped."""
    text = str(value)
    if _SURROGATE.search(text):
        raise InvalidItem("text with a lone surrogate cannot be stored in RDF; encode it first")
    return '"' + text.translate(_ESCAPE_TABLE) + '"'


def term(t: Node) -> str:
    """An rdflib term (URIRef, Literal, BNode) as SPARQL text."""
    if isinstance(t, URIRef):
        return iri(t)
    if isinstance(t, BNode):
        return "_:" + re.sub(r"[^A-Za-z0-9]", "_", str(t))
    if isinstance(t, Literal):
        text = string(str(t))
        if t.language:
            if not _LANG.match(t.language):
                raise InvalidItem(f"not a language tag: {t.language[:20]!r}")
            return f"{text}@{t.language}"
        return text if t.datatype in (None, XSD.string) else f"{text}^^{iri(t.datatype)}"
    raise InvalidItem(f"cannot send a {type(t).__name__} to a SPARQL server")


def values_block(var: str, terms: Iterable[Node]) -> str:
    """A VALUES block binding ?var to escaped terms."""
    return f"VALUES ?{var} {{ {' '.join(term(t) for t in terms)} }}"


class Row(dict[str, Identifier]):
    """One row of a SELECT's answer: the variables it binds, by name, to rdflib terms (an unbound one is absent, so
    `get` gives None)."""

    def __missing__(self, name: str) -> Identifier:
        """ServerError: a variable the query always binds is unbound in the server's answer."""
        raise ServerError(f"the SPARQL server's answer leaves ?{name} unbound where the query always binds it; "
                          "is it a SPARQL 1.1 server?")


def from_json(cell: dict[str, str]) -> URIRef | BNode | Literal:
    """An rdflib term from one SPARQL results JSON cell."""
    kind, value = cell["type"], cell["value"]
    if kind == "uri":
        return URIRef(value)
    if kind == "bnode":
        return BNode(value)
    dt = cell.get("datatype")
    return Literal(value, lang=cell.get("xml:lang"), datatype=None if dt in (None, str(XSD.string)) else URIRef(dt))


class SparqlClient:
    """A SPARQL 1.1 Protocol client with one persistent connection per thread.

    Args:
        url: the memory URL (see `endpoints`).
        timeout: seconds to wait for one answer (a bulk load of 1,000 items takes a few seconds).

    `requests` counts the HTTP requests sent (every thread's), so callers can see what one operation costs.
    """

    def __init__(self, url: str, timeout: float = 300.0):
        self.url, self.ends, self.timeout = url, endpoints(url), timeout
        self.requests = 0
        self._local = threading.local()

    def select(self, query: str, graphs: dict[str, str] | None = None) -> tuple[list[str], list[Row]]:
        """Run a SELECT (`graphs`: protocol dataset parameters): (variable names, rows as {name: rdflib term})."""
        doc = json.loads(self._post(self.ends.query, "query", query, _RESULTS_JSON, graphs))
        names: list[str] = doc["head"].get("vars", [])
        return names, [Row((n, from_json(row[n])) for n in names if n in row) for row in doc["results"]["bindings"]]

    def ask(self, query: str, graphs: dict[str, str] | None = None) -> bool:
        """Run an ASK (`graphs`: protocol dataset parameters); its boolean (Virtuoso 7 answers with a one-column
        result set, __ASK_RETVAL, instead of the standard boolean)."""
        doc = json.loads(self._post(self.ends.query, "query", query, _RESULTS_JSON, graphs))
        if "boolean" in doc:
            return bool(doc["boolean"])
        rows: list[dict[str, dict[str, object]]] = doc.get("results", {}).get("bindings", [])
        return bool(rows) and str(next(iter(rows[0].values()), {}).get("value", "0")) not in ("0", "false")

    def construct(self, query: str) -> Graph:
        """Run a CONSTRUCT; its triples as an rdflib Graph (N-Triples on the wire)."""
        body = self._post(self.ends.query, "query", query, "application/n-triples")
        return rdf.parse_text(body.decode("utf-8"), "nt", graph=Graph(bind_namespaces="none"), source=self.ends.query)

    def update(self, request: str) -> None:
        """Run a SPARQL Update request (all its operations, one request)."""
        self._post(self.ends.update, "update", request, "*/*")

    def add_quads(self, nquads: str) -> None:
        """POST N-Quads to the server's Graph Store Protocol endpoint, `ends.store` (one request adds them all to
        their graphs); call it only when the memory URL names one."""
        assert self.ends.store is not None  # callers write with `update` to a server without one
        self._post(self.ends.store, "quads", nquads, "*/*")

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _post(self, url: str, field: str, text: str, accept: str, graphs: dict[str, str] | None = None) -> bytes:
        """POST a form-encoded query, or an update directly (the protocol's two POST forms; percent-encoding a
        bulk load of many MB took a quarter of its time); the answer body, or ServerError with the server's message."""
        parts = urlsplit(url)
        if field in _DIRECT:
            body, kind = text.encode("utf-8"), _DIRECT[field]
        else:
            body, kind = urlencode({field: text, **(graphs or {})}).encode("utf-8"), "application/x-www-form-urlencoded"
        headers = {"Content-Type": kind, "Accept": accept}
        if self.ends.auth:
            headers["Authorization"] = self.ends.auth
        self.requests += 1
        try:
            resp, data = self._send(parts, body, headers)
        except TimeoutError as e:  # never resent: the server may still apply it
            self.close()
            raise ServerError(f"the SPARQL server at {url} did not answer within {self.timeout:.0f} s; "
                              "retry with smaller batches or a longer timeout") from e
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            self.close()
            raise ServerError(f"cannot reach the SPARQL server at {url}: {e}; is it running?") from e
        if resp.status >= 300:
            raise ServerError(f"the SPARQL server at {url} answered {resp.status}: "
                              f"{data.decode('utf-8', 'replace')[:300]}")
        return data

    def _send(self, parts: SplitResult, body: bytes, headers: dict[str, str]) -> tuple[http.client.HTTPResponse, bytes]:
        """Send one request; a kept-alive connection the server closed before reading it is reopened once."""
        reused = getattr(self._local, "conn", None) is not None
        try:
            conn = self._connection(parts)
            conn.request("POST", parts.path or "/", body=body, headers=headers)
            resp = conn.getresponse()
        except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
            if not reused:
                raise
            self.close()
            conn = self._connection(parts)
            conn.request("POST", parts.path or "/", body=body, headers=headers)
            resp = conn.getresponse()
        return resp, resp.read()

    def _connection(self, parts: SplitResult) -> http.client.HTTPConnection:
        """This thread's open connection to the server, made on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            assert parts.hostname is not None  # endpoints() refused a URL without a host when the client was made
            cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
            conn = self._local.conn = cls(parts.hostname, parts.port, timeout=self.timeout)
        return conn
