"""Endpoint benchmark: what an EndpointProfile saves a later run on held-out tasks, and what containment costs.

Needs the shared data folder (OWL_MEMORY_DATA): an Oxigraph on loopback serves three real ontologies (SKOS, VoID,
PROF) as named graphs. Part 1 runs the real runner driven by a scripted DSPy LM (no model: it measures the mechanism,
not a model's behaviour): one train task on an empty memory leaves the endpoint's profile; each held-out task (a
different graph and question) then runs on that memory and, as the baseline in the same run, on an empty memory.
Figures: endpoint tool calls and answers judged on the endpoint. Part 2 times the caps against hostile loopback
endpoints (a 100 MB response, a server that sleeps, a SERVICE query) and the client's overhead on a real query
against a bare urllib request (median of --repeat).
Run: python benchmarks/endpoints.py [--repeat 20] [--json]
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

from dspy.utils import DummyLM

from owl_memory import Memory
from owl_memory.adapters.sparql import check_read_only
from owl_memory.agent.endpoint_client import EndpointClient
from owl_memory.agent.runner import run
from owl_memory.agent.tools import Toolbox
from owl_memory.agent.tools.endpoint import attach_endpoints
from owl_memory.agent.trajectory import read_trajectory
from owl_memory.datadir import data_dir
from owl_memory.learning.judging import judge
from owl_memory.model import ToolCall
from owl_memory.model.endpoints import EndpointLimits
from owl_memory.model.judgments import Expect
from owl_memory_bench.servers import ontology_endpoint

OWL = "http://www.w3.org/2002/07/owl#"
TRAIN = ("skos", "Class")
HELD_OUT = (("void", "Class"), ("prof", "ObjectProperty"), ("prof", "Class"), ("skos", "ObjectProperty"))
STEP_ONE = """# endpoint step one
import re
e = endpoint_list()['endpoints'][0]
url, known = e['url'], (e['profile'] or {}).get('graphs')
if not known:
    endpoint_describe(url)
    known = endpoint_graphs(url, 20)['graphs']
graph = [g for g in known if g.endswith('/' + re.search(r'graph named (\\w+)', task).group(1))][0]
kind = re.search(r'owl:(\\w+)', task).group(1)
q = endpoint_query(url, 'SELECT ?x WHERE { GRAPH <' + graph + '> { ?x a <http://www.w3.org/2002/07/owl#' + kind +
                   '> FILTER isIRI(?x) } }')
rows, at = [], 0
while at is not None:
    page = results_peek(q['handle'], 20, at)
    rows, at = rows + page['rows'], page['next']
found = ', '.join(r['x'] for r in rows)
print(q['rows'], len(rows))"""
QUERY = "SELECT ?x WHERE { GRAPH <http://example.org/graphs/%s> { ?x a <%s%s> FILTER isIRI(?x) } }"


def agent() -> DummyLM:
    """The scripted agent: discover the graphs unless the endpoint's profile lists them, query, submit."""
    return DummyLM({"# endpoint step one": {"reasoning": "Answer.", "code": "SUBMIT(answer=found)"},
                    "": {"reasoning": "Discover and query.", "code": STEP_ONE}})


class Counting(http.server.BaseHTTPRequestHandler):
    """A loopback pass-through to the Oxigraph at `upstream` that counts the requests it forwards."""

    upstream, requests = "", 0

    def do_GET(self):  # noqa: N802 - the http.server protocol
        """Forward one GET with its Accept header; relay status, type and body."""
        type(self).requests += 1
        with urllib.request.urlopen(urllib.request.Request(  # noqa: S310 - loopback benchmark
                self.upstream + self.path, headers={"Accept": self.headers.get("Accept", "*/*")})) as r:
            body = r.read()
            self.send_response(r.status)
            self.send_header("Content-Type", r.headers.get("Content-Type", ""))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        """Quiet."""


def one_task(url: str, memory: Memory, graph: str, kind: str, runs: Path) -> dict:
    """Run one task; its endpoint tool calls, the HTTP requests they sent, and whether the endpoint judge accepts
    its answer."""
    task = f"Which IRIs are declared owl:{kind} in the graph named {graph}?"
    before = Counting.requests
    r = run(task, memory, lm=agent(), endpoints=(url,), trajectory_dir=runs)
    sent = Counting.requests - before
    calls = [e.tool for e in read_trajectory(r.trajectory_path)
             if isinstance(e, ToolCall) and e.tool.startswith("endpoint_")]
    verdict = judge(Expect("query", QUERY % (graph, OWL, kind), f"{url}={url}"), r.answer, task=task)
    return {"task": f"{graph} owl:{kind}", "endpoint_calls": len(calls), "requests": sent, "success": verdict.success}


def reuse(upstream: str, folder: Path) -> list[dict]:
    """Held-out tasks on a trained memory and on an empty one (the baseline), side by side, through a counting
    pass-through to the endpoint."""
    Counting.upstream = upstream.rsplit("/", 1)[0]
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        return _reuse(f"http://127.0.0.1:{proxy.server_address[1]}/query", folder)
    finally:
        proxy.shutdown()


def _reuse(url: str, folder: Path) -> list[dict]:
    """The train task, then each held-out task on the empty and on the trained memory."""
    with Memory(folder / "trained") as trained:
        one_task(url, trained, *TRAIN, folder / "runs")
        rows = []
        for graph, kind in HELD_OUT:
            with Memory(folder / f"empty-{graph}-{kind}") as empty:
                base = one_task(url, empty, graph, kind, folder / "runs")
            got = one_task(url, trained, graph, kind, folder / "runs")
            rows.append({"task": got["task"], "calls_empty": base["endpoint_calls"],
                         "calls_profile": got["endpoint_calls"], "requests_empty": base["requests"],
                         "requests_profile": got["requests"], "success_empty": base["success"],
                         "success_profile": got["success"]})
    return rows


class Hostile(http.server.BaseHTTPRequestHandler):
    """/big: 100 MB; /slow: sleeps 5 s before answering."""

    def do_GET(self):  # noqa: N802 - the http.server protocol
        """Stream 100 MB or sleep."""
        try:
            if self.path.startswith("/slow"):
                time.sleep(5)
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.end_headers()
            for _ in range(100 if self.path.startswith("/big") else 0):
                self.wfile.write(b" " * (1024 * 1024))
        except OSError:
            pass

    def log_message(self, *args):
        """Quiet."""


def timed(call) -> tuple[float, str]:
    """Seconds a tool call took and the start of what it returned."""
    t0 = time.perf_counter()
    out = call()
    return time.perf_counter() - t0, str(out)[:90]


def containment(url: str, repeat: int) -> list[dict]:
    """Time to refuse each hostile case, and the client's overhead on a real query against bare urllib."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"http://127.0.0.1:{server.server_address[1]}"
    rows = []
    for name, endpoint, limits, query in (
            ("100 MB response (cap 2 MB)", f"{host}/big", EndpointLimits(), "SELECT * WHERE { ?s ?p ?o }"),
            ("server sleeps 5 s (limit 1 s)", f"{host}/slow", EndpointLimits(seconds=1), "ASK {}"),
            ("SERVICE to another host", url, EndpointLimits(), "SELECT * WHERE { SERVICE <http://198.51.100.7/> "
                                                               "{ ?s ?p ?o } }")):
        box = attach_endpoints(Toolbox(), [endpoint], None, limits)
        tool = {t.name: t for t in box.functions()}["endpoint_query"]
        seconds, said = timed(lambda t=tool, e=endpoint, q=query: t(e, q))
        rows.append({"case": name, "seconds": round(seconds, 3), "requests": box.endpoints.client.sent,
                     "return": said})
    server.shutdown()
    query = QUERY % ("skos", OWL, "Class")
    client = EndpointClient([url], EndpointLimits(requests=repeat + 1))
    ours = statistics.median(timed(lambda: client.select(url, query))[0] for _ in range(repeat))
    bare_url = f"{url}?{urllib.parse.urlencode({'query': query})}"
    bare = statistics.median(timed(lambda: urllib.request.urlopen(  # noqa: S310 - loopback benchmark
        urllib.request.Request(bare_url, headers={"Accept": "application/sparql-results+json"})).read())[0]
        for _ in range(repeat))
    guard = statistics.median(timed(lambda: check_read_only(query, ("SELECT", "ASK")))[0] for _ in range(repeat))
    rows.append({"case": "real query: contained client vs bare urllib", "seconds": round(ours, 4),
                 "baseline_seconds": round(bare, 4), "ratio": round(ours / bare, 2),
                 "of_which_guard_parse_seconds": round(guard, 4)})
    return rows


def main() -> int:
    """Run both parts and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="queries timed for the client's overhead")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with tempfile.TemporaryDirectory() as tmp:
        server = ontology_endpoint(Path(tmp) / "oxigraph", data_dir())
        try:
            url = f"{server.url}/query"
            out = {"load": round(os.getloadavg()[0], 1), "reuse": reuse(url, Path(tmp)),
                   "containment": containment(url, args.repeat)}
        finally:
            server.stop()
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"load {out['load']}\n\nheld-out task | endpoint calls (empty memory / profile) | HTTP requests (empty "
          "memory / profile) | success (empty / profile)")
    for r in out["reuse"]:
        print(f"{r['task']} | {r['calls_empty']} / {r['calls_profile']} | {r['requests_empty']} / "
              f"{r['requests_profile']} | {r['success_empty']} / {r['success_profile']}")
    total = {k: sum(r[k] for r in out["reuse"]) for k in out["reuse"][0] if k.startswith(("calls", "requests"))}
    print(f"total | {total['calls_empty']} / {total['calls_profile']} (ratio "
          f"{total['calls_profile'] / total['calls_empty']:.2f}) | {total['requests_empty']} / "
          f"{total['requests_profile']} (ratio {total['requests_profile'] / total['requests_empty']:.2f})\n\n"
          "case | seconds | requests sent | return")
    for r in out["containment"]:
        print(" | ".join(str(v) for v in r.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
