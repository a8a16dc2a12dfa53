"""Real SPARQL servers on loopback for tests and benchmarks: Oxigraph (PyPI `oxigraph` CLI) and Virtuoso open source
(OS package)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, seconds: float = 30.0) -> None:
    """Poll `url` with an ASK until the server answers; fail with its log when it exits or times out."""
    query = urllib.request.quote("ASK {}")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}?query={query}", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"server at {url} not ready after {seconds} s")


def oxigraph_cli() -> str:
    """The `oxigraph` executable next to this Python (the venv's), else on PATH."""
    local = Path(sys.executable).with_name("oxigraph")
    return str(local) if local.exists() else (shutil.which("oxigraph") or "oxigraph")


class Server:
    """A server process (`proc`) on loopback; `url` is the memory URL."""

    proc: subprocess.Popen
    stop_seconds = 10  # how long stop() waits after SIGTERM before it kills

    def stop(self) -> None:
        """Stop the server and wait for it."""
        self.proc.terminate()
        try:
            self.proc.wait(self.stop_seconds)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Oxigraph(Server):
    """An Oxigraph server on 127.0.0.1 with its data in `location`; `url` is the memory URL."""

    def __init__(self, location: Path):
        """Start `oxigraph serve` on a free port and wait until it answers."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([oxigraph_cli(), "serve", "--location", str(location),
                                      "--bind", f"127.0.0.1:{self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(f"{self.url}/query", self.proc)
        except BaseException:
            self.stop()
            raise


VIRTUOSO_INI = """[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql}
DirsAllowed = {d}
NumberOfBuffers = 20000
MaxDirtyBuffers = 15000
[HTTPServer]
ServerPort = 127.0.0.1:{http}
ServerRoot = {d}
ServerThreads = 8
[SPARQL]
ResultSetMaxRows = 1000000
MaxQueryExecutionTime = 60
"""


class Virtuoso(Server):
    """Virtuoso open source on 127.0.0.1 with a temp database; SPARQL updates granted to the anonymous user."""

    stop_seconds = 30

    def __init__(self, location: Path):
        """Write an ini for a database in `location`, start virtuoso-t, wait until it answers, grant updates."""
        exe = shutil.which("virtuoso-t") or "/usr/bin/virtuoso-t"
        location.mkdir(parents=True, exist_ok=True)
        self.sql, port = free_port(), free_port()
        ini = location / "virtuoso.ini"
        ini.write_text(VIRTUOSO_INI.format(d=location, sql=self.sql, http=port))
        self.url = f"http://127.0.0.1:{port}/sparql"
        self.proc = subprocess.Popen([exe, "+foreground", "+configfile", str(ini)], cwd=location,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(self.url, self.proc, 90)
            self.isql("GRANT SPARQL_UPDATE TO \"SPARQL\";")
        except BaseException:
            self.stop()
            raise

    def isql(self, statement: str) -> None:
        """Run one SQL statement as dba through isql-vt."""
        exe = shutil.which("isql-vt") or "/usr/bin/isql-vt"
        subprocess.run([exe, f"127.0.0.1:{self.sql}", "dba", "dba", f"exec={statement}"], check=True,
                       capture_output=True, timeout=60)


def clear(url: str) -> None:
    """Empty every graph of the Oxigraph server at `url`."""
    req = urllib.request.Request(f"{url}/update", data=b"update=DROP%20ALL", method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    urllib.request.urlopen(req, timeout=30).read()


def drop_memory_graphs(url: str) -> None:
    """Drop the graphs a memory uses on the server at `url` (its other graphs, such as Virtuoso's own, stay)."""
    from owl_memory.store.server.client import SparqlClient
    from owl_memory.store.server.layout import GRAPHS

    client = SparqlClient(url)
    client.update(" ;\n".join(f"DROP SILENT GRAPH <{g}>" for g in GRAPHS))
    client.close()


def load_named_graphs(location: Path, files: dict[str, Path]) -> None:
    """Load each RDF file into the Oxigraph store at `location` as the named graph its key names (before serving)."""
    for graph, path in files.items():
        subprocess.run([oxigraph_cli(), "load", "--location", str(location), "--file", str(path), "--graph", graph],
                       check=True, capture_output=True, timeout=120)


ENDPOINT_GRAPHS = {"http://example.org/graphs/skos": "skos.ttl", "http://example.org/graphs/void": "void_official.ttl",
                   "http://example.org/graphs/prof": "prof.ttl"}  # real ontologies an endpoint test serves


def ontology_endpoint(location: Path, data: Path) -> Oxigraph:
    """An Oxigraph serving ENDPOINT_GRAPHS' ontologies (from the shared data folder `data`) as named graphs."""
    load_named_graphs(location, {g: data / "ontologies" / f for g, f in ENDPOINT_GRAPHS.items()})
    return Oxigraph(location)


CK25_FILES = ("prod-vocab.ttl", "prod-inst.ttl")  # the TEXT2SPARQL CK25 knowledge graph, in the shared data folder


def ck25_endpoint(location: Path, data: Path) -> Oxigraph:
    """An Oxigraph serving the CK25 knowledge graph (ontology and instances, from the shared data folder `data`) in
    its default graph, as `oxigraph load` + `oxigraph serve` do in docs/howto-text2sparql.md."""
    return default_graph_endpoint(location, [data / "text2sparql-ck25" / f for f in CK25_FILES])


def default_graph_endpoint(location: Path, files: list[Path]) -> Oxigraph:
    """An Oxigraph serving RDF `files` together in its default graph."""
    subprocess.run([oxigraph_cli(), "load", "--location", str(location), "--file", *map(str, files)], check=True,
                   capture_output=True, timeout=300)
    return Oxigraph(location)
