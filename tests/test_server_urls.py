"""README's server URLs as written: a GraphDB/RDF4J-style `.../repositories/NAME` URL with `user:password@`
reaches a real Oxigraph through a loopback proxy that demands HTTP Basic authentication and maps that layout."""

from __future__ import annotations

import base64
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from owl_memory import ItemSpec, Memory
from owl_memory.errors import ServerError

USER, PASSWORD = "agent", "p@ss:word"
ROUTES = {"/repositories/mem": "/query", "/repositories/mem/statements": "/update"}


def proxy(upstream: str, seen: list) -> ThreadingHTTPServer:
    """An RDF4J-layout front for `upstream` that answers 401 without the right Basic credentials."""
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802  (http.server's name)
            """Forward an authenticated POST to the mapped Oxigraph endpoint."""
            seen.append((self.path, self.headers.get("Authorization") == expected))
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Authorization") != expected or self.path not in ROUTES:
                self.send_response(401 if self.path in ROUTES else 404)
                self.end_headers()
                return
            req = urllib.request.Request(upstream + ROUTES[self.path], data=body, method="POST",
                                         headers={k: v for k, v in self.headers.items()
                                                  if k.lower() in ("content-type", "accept")})
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    status, data, kind = r.status, r.read(), r.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                status, data, kind = e.code, e.read(), "text/plain"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_repository_url_with_credentials_reaches_the_server(server_url):
    seen: list = []
    front = proxy(server_url, seen)
    try:
        port = front.server_address[1]
        url = f"http://{USER}:{PASSWORD.replace('@', '%40').replace(':', '%3A')}@127.0.0.1:{port}/repositories/mem"
        with Memory(url) as m:
            i = m.add(ItemSpec("Principle", "Bind values", "Use when a query takes user text.", "never paste"))
            assert [h.id for h in m.search("bind")] == [i]
        with Memory(server_url) as direct:  # the item is in the server behind the proxy
            assert direct.get(i).title == "Bind values"
        assert {p for p, _ in seen} == set(ROUTES) and all(ok for _, ok in seen)
        with pytest.raises(ServerError, match="401"), Memory(f"http://127.0.0.1:{port}/repositories/mem") as m:
            m.search("bind")
    finally:
        front.shutdown()
        front.server_close()


def test_only_oxigraphs_own_url_form_sends_bulk_writes_to_its_graph_store_endpoint():
    from owl_memory.store.server.client import endpoints

    assert endpoints("http://127.0.0.1:7878").store == "http://127.0.0.1:7878/store"
    for other in ("http://127.0.0.1:3030/ds/query", "http://127.0.0.1:8890/sparql",
                  "http://127.0.0.1:7200/repositories/mem"):
        assert endpoints(other).store is None, other  # these write through SPARQL Update
