"""Endpoint tools on real servers on loopback: an Oxigraph loaded with real ontologies as named graphs, and hostile
endpoints (another host, a redirect, SERVICE in any spelling, a 100 MB response, a slow endpoint, a spent budget)."""

import http.server
import json
import threading
import time

import pytest

from owl_memory.agent.tools import Toolbox
from owl_memory.agent.tools.endpoint import attach_endpoints
from owl_memory.errors import ConfigError
from owl_memory.model.endpoints import EndpointGrant, EndpointLimits, EndpointProfile, normalize_url
from owl_memory_bench.servers import ENDPOINT_GRAPHS as GRAPHS, ontology_endpoint

ROWS = json.dumps({"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "urn:x"}}]}})


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, shared_data):
    """An Oxigraph serving three real ontologies as named graphs (and its own service description)."""
    server = ontology_endpoint(tmp_path_factory.mktemp("endpoint"), shared_data)
    yield f"{server.url}/query"
    server.stop()


class Hostile(http.server.BaseHTTPRequestHandler):
    """/redirect: 302 elsewhere; /big: 100 MB of JSON-looking bytes; /slow: sleeps; anything else: one row."""

    hits = 0
    sent = 0

    def do_GET(self):  # noqa: N802 - the http.server protocol
        type(self).hits += 1
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "http://198.51.100.7/sparql")
            self.end_headers()
        elif self.path.startswith(("/big", "/declared")):
            self._stream(100 * 1024 * 1024, declared=self.path.startswith("/declared"))
        elif self.path.startswith("/trickle"):
            self._trickle()
        elif self.path.startswith("/slow"):
            time.sleep(5)
            self._reply(ROWS.encode())
        else:
            self._reply(ROWS.encode())

    def _reply(self, body: bytes):
        """A SPARQL JSON answer."""
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass

    def _trickle(self):
        """Headers one byte every 0.2 s: each read succeeds, the whole never arrives in time."""
        try:
            for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\nX-Pad: " + b"x" * 200:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    def _stream(self, total: int, declared: bool):
        """`total` bytes in 1 MB writes (announced in Content-Length when `declared`), until the client hangs up."""
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        if declared:
            self.send_header("Content-Length", str(total))
        self.end_headers()
        chunk = b" " * (1024 * 1024)
        try:
            for _ in range(total // len(chunk)):
                self.wfile.write(chunk)
                type(self).sent += len(chunk)
        except OSError:
            pass

    def log_message(self, *args):
        """Quiet."""


@pytest.fixture(scope="module")
def hostile():
    """The hostile server on its own loopback port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def toolbox(grants, limits=None, memory=None):
    """A toolbox with endpoint tools over `grants`, and its tools by name (called through the guard)."""
    box = attach_endpoints(Toolbox(memory), grants, memory, limits)
    return box, {t.name: t for t in box.functions()}


def test_urls_are_normalized_and_only_http_endpoints_are_granted():
    assert normalize_url("HTTP://LocalHost/sparql") == "http://localhost:80/sparql"
    assert normalize_url("https://example.org") == "https://example.org:443/"
    grant = EndpointGrant.parse("https://sparql.uniprot.org/sparql=http://127.0.0.1:7878/query")
    assert grant == EndpointGrant("http://127.0.0.1:7878/query", "https://sparql.uniprot.org:443/sparql")
    for bad in ("file:///etc/passwd", "http://user:pw@host/q", "http://host/q?default-graph-uri=x", "=http://h/q"):
        with pytest.raises(ConfigError):
            EndpointGrant.parse(bad)
    with pytest.raises(ConfigError, match="query string"):  # an "=" in a query string is no TARGET=URL entry
        EndpointGrant.parse("http://127.0.0.1:9/query?x=1")


def test_no_endpoint_granted_means_no_endpoint_tools():
    _, tools = toolbox(())
    assert not any(name.startswith("endpoint_") for name in tools)


def test_an_agent_discovers_graphs_and_queries_a_real_endpoint(loaded):
    box, t = toolbox([loaded])
    listed = t["endpoint_list"]()
    assert listed["endpoints"] == [{"url": loaded, "profile": None}]
    described = t["endpoint_describe"](loaded)
    assert described["source"] == loaded and described["named_graphs"] == 3
    assert described["result_formats"] >= 4 and described["handle"].startswith("sha256:")
    assert "sd:Service" in t["handle_window"](described["handle"], 0, 400)["text"]
    graphs = t["endpoint_graphs"](loaded, 10)
    assert sorted(graphs["graphs"]) == sorted(GRAPHS) and graphs["from"] == "query"
    features = t["endpoint_features"](url=loaded)
    assert "http://www.w3.org/ns/sparql-service-description#SPARQL11Query" in features["languages"]
    sample = t["endpoint_sample"](loaded, 3)
    assert len(sample["triples"]) == 3 and sample["source"] == loaded
    q = t["endpoint_query"](loaded, "SELECT ?c WHERE { GRAPH <http://example.org/graphs/skos> { ?c a "
                                    "<http://www.w3.org/2002/07/owl#Class> FILTER isIRI(?c) } } ORDER BY ?c")
    assert q["source"] == loaded and q["rows"] == 4
    rows = t["results_peek"](q["handle"], 10)["rows"]
    assert rows[0]["c"] == "http://www.w3.org/2004/02/skos/core#Collection"
    seen = box.endpoints.notebook.profiles[loaded]
    assert sorted(seen.graphs) == sorted(GRAPHS) and "http://www.w3.org/2002/07/owl#Class" in seen.classes


def test_another_host_is_refused_before_any_request(loaded, hostile):
    _, t = toolbox([loaded])
    before = Hostile.hits
    for call in (lambda: t["endpoint_query"](f"{hostile}/query", "SELECT * WHERE { ?s ?p ?o } LIMIT 1"),
                 lambda: t["endpoint_describe"](hostile), lambda: t["endpoint_sample"](f"{hostile}/query", 1)):
        out = call()
        assert out.startswith("[Error]") and "not an endpoint this run may contact" in out
    assert Hostile.hits == before


def test_a_redirect_is_not_followed(hostile):
    _, t = toolbox([f"{hostile}/redirect"])
    out = t["endpoint_query"](f"{hostile}/redirect", "SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    assert out.startswith("[Error]") and "redirect to http://198.51.100.7/sparql" in out


@pytest.mark.parametrize("query", [
    "SELECT * WHERE { SERVICE <http://198.51.100.7/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { \\u0053ERVICE <http://198.51.100.7/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SERVICE SILENT <http://198.51.100.7/> { ?s ?p ?o } } }",
    "DROP ALL", "INSERT DATA { <urn:a> <urn:b> <urn:c> }", "SELECT * FROM <http://198.51.100.7/g> WHERE { ?s ?p ?o }",
])
def test_service_updates_and_from_are_refused_on_parse(hostile, query):
    box, t = toolbox([f"{hostile}/query"])
    before = Hostile.hits
    out = t["endpoint_query"](f"{hostile}/query", query)
    assert out.startswith("[Error]") and box.endpoints.client.sent == 0 and Hostile.hits == before


@pytest.mark.parametrize("path", ["/big", "/declared"])  # streamed; announced in Content-Length
def test_a_100_mb_response_is_cut_at_the_cap(hostile, path):
    _, t = toolbox([hostile + path], EndpointLimits(max_bytes=1_000_000))
    started = time.monotonic()
    out = t["endpoint_query"](hostile + path, "SELECT * WHERE { ?s ?p ?o }")
    assert out.startswith("[Error]") and "more than 1000000 bytes" in out
    assert time.monotonic() - started < 5 and Hostile.sent < 20 * 1024 * 1024


@pytest.mark.parametrize("path", ["/slow", "/trickle"])  # silent for 5 s; headers one byte every 0.2 s
def test_a_slow_endpoint_is_an_error_within_the_limit(hostile, path):
    _, t = toolbox([hostile + path], EndpointLimits(seconds=1))
    started = time.monotonic()
    out = t["endpoint_query"](hostile + path, "SELECT * WHERE { ?s ?p ?o }")
    assert out.startswith("[Error]") and "did not answer within 1 s" in out
    assert time.monotonic() - started < 2.5


def test_an_unreachable_endpoint_is_an_error():
    _, t = toolbox(["http://127.0.0.1:9/query"], EndpointLimits(seconds=1))
    out = t["endpoint_query"]("http://127.0.0.1:9/query", "ASK {}")
    assert out.startswith("[Error]") and "could not be reached" in out


def test_the_request_budget_is_enforced(hostile):
    box, t = toolbox([f"{hostile}/query"], EndpointLimits(requests=2))
    assert t["endpoint_query"](f"{hostile}/query", "SELECT ?s WHERE { ?s ?p ?o }")["rows"] == 1
    assert t["endpoint_query"](f"{hostile}/query", "SELECT ?s WHERE { ?s ?p ?o }")["requests_left"] == 0
    out = t["endpoint_query"](f"{hostile}/query", "SELECT ?s WHERE { ?s ?p ?o }")
    assert out.startswith("[Error]") and "budget of 2 endpoint requests" in out and box.endpoints.client.sent == 2


def test_rows_are_capped(loaded):
    _, t = toolbox([loaded], EndpointLimits(max_rows=7))
    q = t["endpoint_query"](loaded, "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert q["rows"] == 7 and q["truncated"] is True


def test_profile_json_round_trip_and_merge():
    p = EndpointProfile("http://127.0.0.1:1/q", graphs=("urn:g1",), quirks=("q",), runs=("r1",))
    assert EndpointProfile.from_json(p.to_json()) == p
    merged = p.merged(EndpointProfile("HTTP://127.0.0.1:1/q", graphs=("urn:g1", "urn:g2"), runs=("r2",)))
    assert merged.graphs == ("urn:g1", "urn:g2") and merged.runs == ("r1", "r2") and merged.key == p.key


def test_virtuoso_is_discovered_and_queried_too(virtuoso, shared_data):
    """Opt-in (OWL_MEMORY_VIRTUOSO=1): the same tools on Virtuoso open source with SKOS in a named graph."""
    from rdflib import BNode, Graph

    from owl_memory.store.server.client import SparqlClient

    skos, named = Graph().parse(shared_data / "ontologies" / "skos.ttl"), Graph()
    for triple in skos:  # INSERT DATA takes no blank nodes on Virtuoso
        if not any(isinstance(t, BNode) for t in triple):
            named.add(triple)
    triples = named.serialize(format="nt")
    client = SparqlClient(virtuoso.url)
    client.update(f"DROP SILENT GRAPH <http://example.org/graphs/skos> ;\n"
                  f"INSERT DATA {{ GRAPH <http://example.org/graphs/skos> {{ {triples} }} }}")
    client.close()
    _, t = toolbox([virtuoso.url])
    described = t["endpoint_describe"](virtuoso.url)
    assert described["source"] == virtuoso.url and not str(described).startswith("[Error]")
    assert "http://example.org/graphs/skos" in t["endpoint_graphs"](virtuoso.url, 50)["graphs"]
    q = t["endpoint_query"](virtuoso.url, "SELECT ?c WHERE { GRAPH <http://example.org/graphs/skos> { ?c a "
                                          "<http://www.w3.org/2002/07/owl#Class> FILTER isIRI(?c) } }")
    assert q["rows"] == 4


def test_an_endpoint_without_a_service_description_degrades_to_queries(hostile):
    _, t = toolbox([f"{hostile}/plain"])
    described = t["endpoint_describe"](f"{hostile}/plain")
    assert described["handle"] is None and "no service description" in described["note"]
    assert described["named_graphs"] is None  # its answer to the counting query is no count
    features = t["endpoint_features"](f"{hostile}/plain")
    assert features["described"] is False and features["features"] == []
