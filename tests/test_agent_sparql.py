"""Agent SPARQL: checked on the parsed algebra (no spelling or escape gets a request out), run under limits."""

import resource
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rdflib import Graph

from owl_memory.adapters.sparql import check_read_only
from owl_memory.agent.query_worker import QueryLimits
from owl_memory.agent.tools import Toolbox
from owl_memory.errors import QueryRefused
from owl_memory.resources import shipped

ONTOLOGY = shipped("ontology", "owl-memory.ttl")
CROSS_PRODUCT = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g"  # 244^3 rows, all sorted
COUNT_PRODUCT = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"  # the same rows, streamed
CLASSES = "SELECT ?c WHERE { ?c a <http://www.w3.org/2002/07/owl#Class> }"

REFUSED = [
    ("SELECT * WHERE { \\u0053ERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }", "SERVICE"),
    ("select * where { service silent <http://127.0.0.1:9/> { ?s ?p ?o } }", "SERVICE"),
    ("SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SERVICE <http://x.org/> { ?s ?p ?o } } }", "SERVICE"),
    ("SELECT * WHERE { { SELECT ?s WHERE { SERVICE <http://x.org/> { ?s ?p ?o } } } }", "SERVICE"),
    ("CONSTRUCT { ?s ?p ?o } WHERE { OPTIONAL { SERVICE <http://x.org/> { ?s ?p ?o } } }", "SERVICE"),
    ("SELECT * FROM <http://x.org/g> WHERE { ?s ?p ?o }", "FROM"),
    ("SELECT * FROM NAMED <http://x.org/g> WHERE { GRAPH ?g { ?s ?p ?o } }", "FROM"),
    ("ASK \\u0046ROM <http://x.org/g> { ?s ?p ?o }", "FROM"),
    ("LOAD <http://x.org/data.ttl>", "updates"),
    ("lo\\u0061d <http://x.org/data.ttl>", "updates"),
    ("INSERT DATA { <http://a.org/s> <http://a.org/p> <http://a.org/o> }", "updates"),
    ("DELETE WHERE { ?s ?p ?o }", "updates"),
    ("CLEAR ALL", "updates"),
    ("DROP GRAPH <http://x.org/g>", "updates"),
    ("CREATE GRAPH <http://x.org/g>", "updates"),
    ("SELECT * WHERE {", "does not parse"),
]

ALLOWED = [
    'SELECT ?s WHERE { ?s ?p ?l FILTER(CONTAINS(STR(?l), "from")) }',
    "SELECT ?o WHERE { <http://example.org/load> ?p ?o }",
    'SELECT ?s WHERE { ?s ?p "SERVICE <http://x.org/> insert delete load" }',
    "SELECT ?s WHERE { ?s ?p ?o } VALUES ?s { <http://example.org/service/from> }",
    "DESCRIBE <http://example.org/x>",
]


@pytest.mark.parametrize("query,named", REFUSED)
def test_the_guard_refuses_on_the_algebra_in_any_spelling(query, named):
    with pytest.raises(QueryRefused, match=named):
        check_read_only(query)


@pytest.mark.parametrize("query", ALLOWED)
def test_the_guard_allows_words_that_only_look_like_keywords(query):
    assert check_read_only(query).algebra is not None


def test_allowed_queries_run_through_the_tool():
    f = _tools()
    for query in ALLOWED[:4]:
        assert isinstance(f["ontology_query"](query), dict)
    labels = f["ontology_query"]('SELECT ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l '
                                 'FILTER(CONTAINS(LCASE(STR(?l)), "from")) }')
    assert labels["rows"] >= 1


class Listener:
    """A loopback HTTP server that records every request it receives (and answers like a SPARQL endpoint)."""

    def __init__(self):
        self.requests = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                listener.requests.append(self.path)
                body = b'{"head": {"vars": ["s"]}, "results": {"bindings": []}}'
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/sparql"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        """Stop serving."""
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def listener():
    """A recording loopback server, stopped after the test."""
    server = Listener()
    yield server
    server.close()


def test_an_escaped_service_is_refused_and_no_request_leaves(listener):
    query = f"SELECT * WHERE {{ \\u0053ERVICE <{listener.url}> {{ ?s ?p ?o }} }}"
    list(Graph().query(query))  # control: rdflib on its own does send this request
    assert len(listener.requests) == 1
    out = _tools()["ontology_query"](query)
    assert out.startswith("[Error] ontology_query: SERVICE is not allowed")
    from_query = f"SELECT * FROM <{listener.url}> WHERE {{ ?s ?p ?o }}"
    assert _tools()["ontology_query"](from_query).startswith("[Error] ontology_query: FROM")
    assert len(listener.requests) == 1  # nothing more reached the server


def test_a_long_cross_product_stops_at_the_wall_time_limit_and_the_host_survives():
    box = Toolbox(ontology=ONTOLOGY, query_limits=QueryLimits(seconds=2, memory_mb=1024))
    f = {t.name: t for t in box.functions()}
    assert f["ontology_query"]("ASK { ?s ?p ?o }") == {"ask": True}  # the worker is up: time the query only
    before, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.monotonic()
    out = f["ontology_query"](COUNT_PRODUCT)
    elapsed = time.monotonic() - t0
    assert out.startswith("[Error] ontology_query: the query ran past the wall-time limit of 2 s")
    assert elapsed < 4
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB: the rows never reached us
    assert f["ontology_query"](CLASSES)["rows"] > 5  # a fresh worker answers the next query


def test_a_sorted_cross_product_stops_at_the_memory_limit_and_the_host_survives():
    f = _tools(QueryLimits(seconds=60, memory_mb=128))
    t0 = time.monotonic()
    out = f["ontology_query"](CROSS_PRODUCT)
    assert out.startswith("[Error] ontology_query: the query hit the memory limit of 128 MB")
    assert time.monotonic() - t0 < 60
    assert f["ontology_query"](CLASSES)["rows"] > 5


def test_rows_past_the_limit_are_cut_and_flagged():
    out = _tools(QueryLimits(max_rows=7))["ontology_query"]("SELECT * WHERE { ?s ?p ?o }")
    assert out["rows"] == 7 and out["truncated"] is True


def _tools(limits=None) -> dict:
    """The tools over the shipped memory ontology, by name."""
    return {t.name: t for t in Toolbox(ontology=ONTOLOGY, query_limits=limits).functions()}
