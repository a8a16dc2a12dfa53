"""One guard and one limit for every query the product runs (issue 36 item 1, issue 32 item 6).

Drills: a SERVICE to a loopback listener the test starts, in a competency question, a gold (expect.sparql,
expect.ask), a SHACL-SPARQL constraint and Memory.sparql, spelled plainly or as \\u0053ERVICE inside FILTER EXISTS,
sends the listener nothing and is refused with a typed error; a cartesian product stops at the wall time with
QueryTimeout (CLI: one line, exit 2); a federated query across two granted Oxigraph servers answers, and with only one
granted it is refused before any request.
"""

import socket
import threading
import urllib.request

import pytest
from click.testing import CliRunner
from rdflib import Graph

from owl_memory.adapters import pyshacl as shacl, sparql as sparql_text
from owl_memory.agent.endpoint_client import EndpointClient
from owl_memory.cli import main
from owl_memory.construction.cq import evaluate, load_cqs
from owl_memory.errors import CapExceeded, LoadError, QueryRefused, QueryTimeout
from owl_memory.learning.judging import judge
from owl_memory_bench.servers import Oxigraph

ONTOLOGY = """@prefix ex: <http://example.org/> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:A a owl:Class . ex:B a owl:Class ; rdfs:subClassOf ex:A . ex:C a owl:Class ; rdfs:subClassOf ex:A ."""


class Listener:
    """A loopback TCP listener that counts the connections it accepts (and answers none)."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.connections, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def spellings(url: str) -> list[str]:
    """SERVICE to `url` as written plainly, and escaped inside FILTER EXISTS."""
    return [f"SELECT ?s WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
            f"SELECT ?s WHERE {{ ?s a ?c FILTER EXISTS {{ \\u0053ERVICE <{url}> {{ ?s ?p ?o }} }} }}"]


@pytest.fixture
def ontology(tmp_path):
    path = tmp_path / "onto.ttl"
    path.write_text(ONTOLOGY)
    return path


def test_guard_grants_service_only_to_named_endpoints():
    q = "SELECT * WHERE { SERVICE <http://127.0.0.1:1/query> { ?s ?p ?o } }"
    with pytest.raises(QueryRefused, match="SERVICE is not allowed to <http://127.0.0.1:1/query>"):
        sparql_text.check_read_only(q)
    assert sparql_text.check_read_only(q, services=("http://127.0.0.1:1/query",))
    with pytest.raises(QueryRefused, match="SERVICE"):  # a variable endpoint is never granted
        sparql_text.check_read_only("SELECT * WHERE { SERVICE ?e { ?s ?p ?o } }", services=("http://x/",))
    with pytest.raises(QueryRefused, match="SERVICE"):  # parsed queries are guarded too, not only text
        sparql_text.evaluate(Graph(), sparql_text.parse(q))


def test_cq_with_service_is_refused_and_sends_nothing(listener):
    for query in spellings(listener.url):
        with pytest.raises(LoadError, match="competency question 'leak': refused .*SERVICE"):
            load_cqs({"cqs": [{"id": "leak", "query": query}]})
    assert listener.connections == 0


def test_golds_with_service_are_errors_not_success(listener, ontology):
    for query in spellings(listener.url):
        with pytest.raises(LoadError, match="gold query does not run .*SERVICE"):
            judge({"sparql": query}, "ex:B ex:C", ontology=ontology)
        ask = query.replace("SELECT ?s WHERE", "ASK")
        with pytest.raises(LoadError, match="expect.ask does not run .*SERVICE"):
            judge({"ask": ask}, "", ontology=ontology)
    assert listener.connections == 0


def test_sh_sparql_with_service_refuses_the_shapes_naming_the_shape(listener, ontology):
    for query in spellings(listener.url):
        select = query.replace("SELECT ?s WHERE", "SELECT $this WHERE").replace("?s", "$this")
        shapes = Graph().parse(data=f"""@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
            ex:Leaky a sh:NodeShape ; sh:targetNode ex:B ; sh:sparql [ sh:select \"\"\"{select}\"\"\" ] .""",
                               format="turtle")
        with pytest.raises(QueryRefused, match="shape <http://example.org/Leaky> .*SERVICE"):
            shacl.validate(Graph().parse(ontology), shacl_graph=shapes)
    assert listener.connections == 0


def test_memory_sparql_refuses_service(listener, memory):
    for query in spellings(listener.url):
        with pytest.raises(QueryRefused, match="SERVICE"):
            memory.sparql(query)
    assert listener.connections == 0


def test_cartesian_cq_stops_at_the_wall_time(monkeypatch):
    graph = Graph()
    for i in range(300):
        graph.parse(data=f"<http://e/s{i}> <http://e/p> {i} .", format="turtle")
    cross = "ASK { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i FILTER(?c + ?f + ?i < 0) }"
    cq = load_cqs({"cqs": [{"id": "cross", "query": cross}]})
    monkeypatch.setattr(sparql_text, "QUERY_SECONDS", 0.5)
    with pytest.raises(QueryTimeout, match="wall-time limit of 0.5 s"):
        evaluate(cq[0], graph)


def test_a_result_read_whole_is_capped(monkeypatch):
    graph = Graph()
    for i in range(30):
        graph.parse(data=f"<http://e/s{i}> <http://e/p> {i} .", format="turtle")
    pairs = "SELECT ?a ?b WHERE { ?a <http://e/p> ?x . ?b <http://e/p> ?y }"
    cq = load_cqs({"cqs": [{"id": "pairs", "query": pairs, "expected": 900}]})
    assert evaluate(cq[0], graph).passed  # 900 rows fit the cap
    monkeypatch.setattr(sparql_text, "WHOLE_ROWS", 500)
    with pytest.raises(CapExceeded, match="more than 500 rows.*narrow it"):
        evaluate(cq[0], graph)
    # a read that asks for a few rows is not a whole read: it is cut, not refused
    assert len(sparql_text.evaluate(graph, pairs, max_rows=10).rows) == 10


def _in_a_thread(work):
    """What `work()` returned or raised when run on a thread that is not the main one."""
    outcome = {}

    def run():
        try:
            outcome["value"] = work()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            outcome["error"] = e
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the work ran on past the wall time"
    return outcome


def test_a_cross_product_stops_at_the_wall_time_off_the_main_thread(memory):
    import time
    cross = "ASK { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i FILTER(STR(?c) = 'never') }"
    started = time.monotonic()
    outcome = _in_a_thread(lambda: memory.sparql(cross, seconds=1))
    assert isinstance(outcome.get("error"), QueryTimeout), outcome
    assert type(outcome["error"]) is QueryTimeout and "wall-time limit of 1 s" in str(outcome["error"])
    assert time.monotonic() - started < 15
    # a query that ends in time is untouched, and no stop arrives after its block has ended
    small = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"
    outcome = _in_a_thread(lambda: [memory.sparql(small, seconds=0.05) for _ in range(20)] and time.sleep(0.3))
    assert "error" not in outcome, outcome


def test_cli_sparql_cartesian_exits_2_with_one_line(fresh_memory, tmp_path):
    from owl_memory import ItemSpec, Memory

    folder = fresh_memory(tmp_path / "mem")
    with Memory(folder) as m:
        for i in range(5):
            m.add(ItemSpec("Principle", f"Principle number {i} of the drill", "Use when never.", "x"))
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    r = CliRunner().invoke(main, ["sparql", query, "--memory", str(folder), "--seconds", "0.5"])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "QueryTimeout" in lines[0] and "narrow the query or add LIMIT" in lines[0]


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory):
    servers = [Oxigraph(tmp_path_factory.mktemp(f"fed{i}")) for i in range(2)]
    for i, server in enumerate(servers):
        body = f"INSERT DATA {{ <http://e/x> <http://e/p{i}> \"v{i}\" }}".encode()
        urllib.request.urlopen(urllib.request.Request(f"{server.url}/update", body,
                                                      {"Content-Type": "application/sparql-update"})).read()
    yield [f"{s.url}/query" for s in servers]
    for server in servers:
        server.stop()


def test_federation_between_granted_endpoints(two_servers, listener):
    a, b = two_servers
    federated = (f"SELECT ?v0 ?v1 WHERE {{ <http://e/x> <http://e/p0> ?v0 "
                 f"SERVICE <{b}> {{ <http://e/x> <http://e/p1> ?v1 }} }}")
    result = EndpointClient([a, b]).select(a, federated)
    assert [tuple(text for _, text in row) for row in result.rows] == [("v0", "v1")]
    only_a = EndpointClient([a])
    with pytest.raises(QueryRefused, match=f"SERVICE is not allowed to <{b}>"):
        only_a.select(a, federated)
    assert only_a.sent == 0  # refused before any request, so neither server was asked
    to_listener = federated.replace(b, listener.url)
    with pytest.raises(QueryRefused, match="SERVICE"):
        EndpointClient([a, b]).select(a, to_listener)
    assert listener.connections == 0


def test_a_service_naming_a_mapped_target_runs_on_its_copy(two_servers, listener):
    a, b = two_servers
    rhea = "https://sparql.rhea-db.org/sparql"
    federated = (f"SELECT ?v0 ?v1 WHERE {{ <http://e/x> <http://e/p0> ?v0 "
                 f"SERVICE <{rhea}> {{ <http://e/x> <http://e/p1> ?v1 }} }}")
    client = EndpointClient([a, f"{rhea}={b}"])
    assert [tuple(text for _, text in row) for row in client.select(a, federated).rows] == [("v0", "v1")]
    with pytest.raises(QueryRefused, match=f"SERVICE is not allowed to <{rhea}>"):
        EndpointClient([a, b]).select(a, federated)  # not mapped: the real address is never contacted
    escaped = federated.replace("SERVICE <https", "SERVICE <\\u0068ttps")  # a spelling the map does not rewrite
    with pytest.raises(QueryRefused, match="SERVICE is not allowed"):
        client.select(a, escaped)


def test_repair_with_a_service_constraint_exits_2_with_one_line(listener, tmp_path):
    shapes = tmp_path / "shapes.ttl"
    shapes.write_text(f"""@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
ex:Leaky a sh:NodeShape ; sh:targetClass ex:A ; sh:sparql [ sh:select
  "SELECT $this WHERE {{ FILTER EXISTS {{ \\\\u0053ERVICE <{listener.url}> {{ $this ?p ?o }} }} }}" ] .""")
    data = tmp_path / "data.ttl"
    data.write_text("@prefix ex: <http://example.org/> . ex:a a ex:A .")
    r = CliRunner().invoke(main, ["repair", str(data), "--shapes", str(shapes), "--memory", str(tmp_path / "m")])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "QueryRefused" in lines[0] and "<http://example.org/Leaky>" in lines[0]
    assert listener.connections == 0


def test_a_cross_product_in_a_shape_stops_at_the_validation_wall_time(monkeypatch):
    import time

    from rdflib import Graph

    from owl_memory.adapters import pyshacl as shacl
    from owl_memory.errors import QueryTimeout

    data = Graph().parse(data="".join(f"<urn:n{i}> <urn:p> <urn:m{i}> .\n" for i in range(300)), format="nt")
    # 27 million candidate rows, none kept: minutes of CPU unbounded, no memory
    shapes = Graph().parse(data="""@prefix sh: <http://www.w3.org/ns/shacl#> .
<urn:S> a sh:NodeShape ; sh:targetNode <urn:n0> ; sh:sparql [ sh:select
  "SELECT $this WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i FILTER (?c = ?i && ?c != ?i) }" ] .""", format="turtle")
    monkeypatch.setattr(shacl, "SPARQL_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(QueryTimeout):
        shacl.validate(data, shacl_graph=shapes)
    assert time.monotonic() - started < 10
    with pytest.raises(QueryTimeout):
        shacl.validate_prepared(data, shacl.prepare(shapes))
