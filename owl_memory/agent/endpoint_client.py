"""The one HTTP client agents reach SPARQL endpoints through, on the standard library, contained.

Only the endpoints a run was granted (exact scheme, host, port and path, normalized) are contacted; a redirect is
never followed (a 3xx is an EndpointError naming its target); each request has one wall-time limit covering connect,
wait and read; a response is read in chunks and refused once it passes the byte cap (never buffered whole); a SELECT
keeps at most max_rows rows; the run has a request budget. Agent SPARQL is checked on its parsed form by the guard of
adapters/sparql.py (no update, no FROM, SERVICE only to a granted endpoint) before any request is sent. What an
endpoint sends is data: a Service Description is parsed by adapters/rdflib.parse_contained (nothing fetched, no DTD,
under the same time limit), SPARQL JSON results are checked for their shape; anything else is an EndpointError (an
"[Error]" for the agent).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from rdflib import Graph

from ..adapters import rdflib as rdf, sparql as sparql_text
from ..errors import ConfigError, EndpointError, LoadError
from ..model.endpoints import EndpointGrant, EndpointLimits, normalize_url
from .query_worker import QueryResult

CHUNK = 65_536
SELECT_JSON = "application/sparql-results+json"
DESCRIPTION_TYPES = {"text/turtle": "turtle", "application/rdf+xml": "xml", "application/n-triples": "nt",
                     "application/ld+json": "json-ld", "application/n-quads": "nquads", "application/trig": "trig"}
ACCEPT_DESCRIPTION = "text/turtle, application/rdf+xml;q=0.9, application/n-triples;q=0.8, application/ld+json;q=0.5"
MAX_GET = 1_500  # characters of an encoded query sent by GET; longer ones are POSTed as a form


@dataclass(frozen=True)
class Response:
    """One bounded response: status, media type (no parameters) and body bytes (at most the byte cap)."""

    status: int
    media_type: str
    body: bytes


class EndpointClient:
    """Requests to the granted endpoints under one run's limits and request budget.

    Args:
        grants: the endpoints the run may contact (model.EndpointGrant or "URL" / "TARGET=URL" strings).
        limits: seconds per request, bytes per response, rows per SELECT, requests per run.
        services: the endpoints a query may federate to with SERVICE ("URL" or "TARGET=URL"; the grants by
            default). A SERVICE naming a mapped TARGET is sent to its URL (a reference written for the real
            endpoints runs on the local copies the user mapped them to).
    """

    def __init__(self, grants: Iterable[EndpointGrant | str] | EndpointGrant | str = (),
                 limits: EndpointLimits | None = None, services: Iterable[str] | None = None):
        from ..model.endpoints import parse_grants

        self.grants = parse_grants(grants)
        self.limits = limits or EndpointLimits()
        self.federation = self.grants if services is None else parse_grants(services)
        self.services = tuple(dict.fromkeys(g.url for g in self.federation))
        self.sent = 0

    @property
    def urls(self) -> list[str]:
        """The granted endpoint URLs, in order, without repeats."""
        return list(dict.fromkeys(g.url for g in self.grants))

    def allowed(self, url: str) -> str:
        """The normalized URL when the run may contact it; EndpointError naming the granted ones otherwise."""
        try:
            key = normalize_url(url)
        except ConfigError as e:
            raise EndpointError(str(e)) from None
        if key not in self.urls:
            listed = ", ".join(self.urls) or "none (pass --endpoint URL)"
            raise EndpointError(f"{key} is not an endpoint this run may contact; use one of: {listed}",
                                cause="not-granted")
        return key

    def select(self, url: str, sparql: str) -> QueryResult:
        """A guarded read-only query's result (SELECT rows capped at max_rows, or ASK's answer); a SERVICE naming
        an endpoint not in `services` is refused before any request."""
        url = self.allowed(url)
        sparql = self.mapped_services(sparql)
        parsed = sparql_text.check_read_only(sparql, ("SELECT", "ASK"), services=self.services)
        response = self.request(url, sparql, SELECT_JSON)
        if response.media_type not in (SELECT_JSON, "application/json"):
            raise EndpointError(f"{url} answered {response.media_type or 'no media type'} instead of SPARQL JSON "
                                "results; this endpoint may not speak SPARQL 1.1 JSON", cause="not-sparql-results")
        return _results(response.body, url, sparql_text.form(parsed), self.limits.max_rows)

    def mapped_services(self, sparql: str) -> str:
        """`sparql` with each SERVICE <TARGET> of a mapped target pointed at its URL. Only the written <IRI> is
        rewritten; the guard then checks the parsed result, so a spelling left as it was is refused, not sent."""
        targets = {g.target: g.url for g in self.federation if g.target and g.target != g.url}
        try:
            named = sparql_text.services(sparql_text.parse(sparql)) if targets else set()
        except sparql_text.QuerySyntaxError:
            return sparql  # the guard says what is wrong with it
        for iri in named:
            try:
                key = normalize_url(iri)
            except ConfigError:
                continue
            if key in targets:
                sparql = sparql.replace(f"<{iri}>", f"<{targets[key]}>")
        return sparql

    def describe(self, url: str) -> tuple[Graph | None, Response]:
        """The endpoint's SPARQL 1.1 Service Description (GET without a query, content negotiation) parsed within the
        request's time limit, or None when it sends none in an RDF format; with the response. EndpointError when
        it does not parse, names something to fetch or takes too long."""
        url = self.allowed(url)
        deadline = time.monotonic() + self.limits.seconds  # one limit for the request and the parse together
        response = self.request(url, None, ACCEPT_DESCRIPTION, must_succeed=False)
        fmt = DESCRIPTION_TYPES.get(response.media_type)
        if response.status != 200 or fmt is None or not response.body:
            return None, response
        left = max(deadline - time.monotonic(), 0.1)
        try:
            return rdf.parse_contained(response.body, fmt, base=url, source=url, seconds=left), response
        except LoadError as e:  # it does not parse, names something to fetch (a context, a DTD) or took too long
            raise EndpointError(f"{url} sent a service description that was refused ({e.reason}); nothing was "
                                "fetched for it: query the endpoint directly (endpoint_graphs, endpoint_query)",
                                cause="bad-description") from None

    def request(self, url: str, sparql: str | None, accept: str, *, must_succeed: bool = True) -> Response:
        """One request to a granted URL under the budget, the wall-time limit and the byte cap; never follows a
        redirect."""
        url = self.allowed(url)
        if self.sent >= self.limits.requests:
            raise EndpointError(f"this run's budget of {self.limits.requests} endpoint requests is spent; answer "
                                "with what you have", cause="budget")
        self.sent += 1
        deadline = time.monotonic() + self.limits.seconds
        try:
            return self._exchange(url, sparql, accept, deadline, must_succeed)
        except TimeoutError:
            raise EndpointError(f"{url} did not answer within {self.limits.seconds:g} s; simplify the query (add "
                                "LIMIT, name a GRAPH) or try later", cause="timeout") from None
        except (OSError, http.client.HTTPException) as e:
            raise EndpointError(f"{url} could not be reached ({type(e).__name__}: {str(e)[:120]})",
                                cause="unreachable") from None

    def _exchange(self, url: str, sparql: str | None, accept: str, deadline: float, must_succeed: bool) -> Response:
        """Send the request and read the bounded response."""
        parts = urlsplit(url)
        assert parts.hostname is not None  # request() passes only URLs allowed() normalized: http(s) with a host
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = kind(parts.hostname, parts.port, timeout=self.limits.seconds)
        watchdog = threading.Timer(self.limits.seconds, _abort, (conn,))  # a server trickling bytes cannot stall us
        watchdog.start()
        try:
            method, path, body, headers = _request_line(parts.path, sparql, accept)
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            if 300 <= resp.status < 400:
                target = resp.getheader("Location") or "nowhere"
                raise EndpointError(f"{url} answered {resp.status}, a redirect to {target[:160]}; redirects are not "
                                    "followed: pass the final endpoint URL with --endpoint", cause="redirect")
            data = self._read(resp, url, deadline, conn)
            media = (resp.getheader("Content-Type") or "").split(";")[0].strip().lower()
            if must_succeed and resp.status != 200:
                text = " ".join(data[:300].decode("utf-8", "replace").split())
                raise EndpointError(f"{url} answered HTTP {resp.status}: {text[:200]}", cause=f"http-{resp.status}")
            return Response(resp.status, media, data)
        except (OSError, http.client.HTTPException):
            if time.monotonic() >= deadline:  # the watchdog shut the socket mid-read
                raise TimeoutError from None
            raise
        finally:
            watchdog.cancel()
            conn.close()

    def _read(self, resp: http.client.HTTPResponse, url: str, deadline: float,
              conn: http.client.HTTPConnection) -> bytes:
        """The body in chunks, refused past the byte cap or the deadline."""
        chunks: list[bytes] = []
        size, cap = 0, self.limits.max_bytes
        declared = resp.getheader("Content-Length") or ""
        if declared.isdigit() and int(declared) > cap:
            size = int(declared)  # announced larger than the cap: refused before a byte of it is read
        while size <= cap:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if conn.sock is not None:
                conn.sock.settimeout(left)
            chunk = resp.read1(CHUNK)
            if not chunk:
                if time.monotonic() >= deadline:  # the watchdog shut the socket
                    raise TimeoutError
                return b"".join(chunks)
            size += len(chunk)
            chunks.append(chunk)
        raise EndpointError(f"{url} sent more than {cap} bytes; the response was cut off and dropped: ask for less "
                            "(LIMIT, fewer variables, a narrower pattern)", cause="too-large")


def _abort(conn: http.client.HTTPConnection) -> None:
    """Shut a connection's socket from the watchdog thread, which ends any read blocked on it."""
    sock = conn.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _request_line(path: str, sparql: str | None, accept: str) -> tuple[str, str, bytes | None, dict[str, str]]:
    """GET for a description or a short query, POST of a form for a long one."""
    headers = {"Accept": accept, "User-Agent": "owl-memory"}
    if sparql is None:
        return "GET", path, None, headers
    encoded = urlencode({"query": sparql})
    if len(encoded) <= MAX_GET:
        return "GET", f"{path}?{encoded}", None, headers
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    return "POST", path, encoded.encode("utf-8"), headers


def _results(body: bytes, url: str, kind: str, max_rows: int) -> QueryResult:
    """SPARQL 1.1 JSON results as a QueryResult: rows of (kind, text) terms, cut at max_rows; EndpointError for
    anything that is not JSON of that shape."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise EndpointError(f"{url} sent results that are not JSON", cause="not-sparql-results") from None
    if not isinstance(data, dict):
        raise _shape(url, f"a JSON {type(data).__name__} instead of an object")
    if kind == "ASK" or "boolean" in data:
        if not isinstance(data.get("boolean"), bool):
            raise _shape(url, "no true or false \"boolean\" for an ASK")
        return QueryResult("ASK", ask=data["boolean"])
    head, results = data.get("head"), data.get("results")
    columns = head.get("vars") if isinstance(head, dict) else None
    bindings = results.get("bindings") if isinstance(results, dict) else None
    if not (isinstance(columns, list) and all(isinstance(c, str) for c in columns)):
        raise _shape(url, "no \"head\": {\"vars\": [names]}")
    if not (isinstance(bindings, list) and all(isinstance(b, dict) for b in bindings)):
        raise _shape(url, "no \"results\": {\"bindings\": [objects]}")
    rows = tuple(tuple(_term(b.get(c), url) for c in columns) for b in bindings[:max_rows])
    return QueryResult("SELECT", tuple(columns), rows, len(bindings) > max_rows)


def _shape(url: str, what: str) -> EndpointError:
    """The error for SPARQL JSON results of the wrong shape."""
    return EndpointError(f"{url} sent JSON that is not SPARQL 1.1 results ({what}); this endpoint may not speak "
                         "SPARQL 1.1 JSON", cause="not-sparql-results")


def _term(value: object, url: str) -> tuple[str, str] | None:
    """One JSON binding as a (uri | bnode | literal, text) pair, None when unbound."""
    if value is None:
        return None
    if not (isinstance(value, dict) and isinstance(value.get("value"), str)):
        raise _shape(url, "a binding that is not {\"type\": ..., \"value\": \"text\"}")
    kind = {"uri": "uri", "bnode": "bnode"}.get(str(value.get("type")), "literal")
    return kind, value["value"]
