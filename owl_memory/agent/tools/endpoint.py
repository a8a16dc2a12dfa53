"""Endpoint tools: discover a SPARQL endpoint through bounded calls instead of a preamble (its Service Description,
named graphs, features, a few triples), then query it (a results handle, rows read with results_peek).

Every return names its `source` (the endpoint URL). Only the run's granted endpoints are contacted, through the one
contained client (agent/endpoint_client.py); what the calls learn is noted per endpoint and, after the run,
consolidated into the endpoint's EndpointProfile in memory (agent/endpoint_profiles.py), which endpoint_list shows
to the next run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from rdflib import Graph
from rdflib.namespace import Namespace

from ...adapters import sparql as sparql_text
from ...errors import EndpointError, OwlMemoryError, QueryRefused
from ...model import Hit, RunResult
from ...model.endpoints import EndpointLimits, keepable_iri, parse_grants
from ...vocab import STANDARD_PREFIXES
from ..endpoint_client import EndpointClient
from ..endpoint_profiles import EndpointSession, find_profile, namespaces_and_classes, remember
from .caps import MAX_LIST, as_int, as_limit, as_text, clip
from .results import answered_query, constraint_notes, failed_query, store_rows
from .toolbox import Toolbox, ToolFamily, family

if TYPE_CHECKING:
    from ...model.endpoints import EndpointGrant
    from ...store import Memory
    from ..injection import Retrieval
    from ..query_worker import QueryResult

SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
SAMPLE_ROWS = 10  # triples one endpoint_sample may return
GRAPHS = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?g LIMIT %d"
GRAPH_COUNT = "SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
SAMPLE = "SELECT ?g ?s ?p ?o WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } } LIMIT %d"


def attach_endpoints(box: Toolbox, grants: Iterable[EndpointGrant | str], memory: Memory | None = None,
                     limits: EndpointLimits | None = None) -> Toolbox:
    """Give `box` the endpoint tools over the granted endpoints (nothing when there are none); returns the box."""
    if grants:
        box.endpoints = EndpointSession(EndpointClient(grants, limits), memory, box.access.layers_read_memory)
    return box


def prepare_endpoints(box: Toolbox, grants: Iterable[EndpointGrant | str], memory: Memory | None,
                      retrieval: Retrieval) -> Retrieval:
    """Give `box` the endpoint tools (attach_endpoints) and, when the condition injects text (A1), put the granted
    endpoints' profiles first among the run's injected items; returns the run's (agent.injection) Retrieval."""
    session = attach_endpoints(box, grants, memory).endpoints
    if session is None or memory is None or not box.access.text:
        return retrieval
    found = [f for f in (find_profile(memory, url) for url in session.client.urls) if f is not None]
    hits = [Hit(**memory.get(item_id).card()) for item_id, _ in found]
    known = {h.id for h in hits}
    return replace(retrieval, hits=tuple(hits) + tuple(h for h in retrieval.hits if h.id not in known),
                   polarity={**retrieval.polarity, **{h.id: "success" for h in hits}})


def endpoint_vocabularies(memory: Memory | None, grants: Iterable[EndpointGrant | str]) -> tuple[str, ...]:
    """The namespaces the granted endpoints' profiles list (what their answered queries used), standard RDF, RDFS,
    OWL and XSD ones left out, in order: the vocabularies A1 retrieves by on a run without an ontology."""
    if memory is None or not grants:
        return ()
    found = [find_profile(memory, g.url) for g in parse_grants(grants)]
    spaces = [p for f in found if f is not None for p in f[1].prefixes if not p.startswith(tuple(STANDARD_PREFIXES))]
    return tuple(dict.fromkeys(spaces))


def granted_urls(box: Toolbox) -> tuple[str, ...]:
    """The endpoint URLs the run was granted (none when it has no endpoint tools)."""
    return tuple(box.endpoints.client.urls) if box.endpoints is not None else ()


def remember_endpoints(box: Toolbox, result: RunResult) -> RunResult:
    """After a run: consolidate what its endpoint tools learned into the memory's EndpointProfiles; the result."""
    session = box.endpoints
    if session is not None and session.memory is not None:
        try:
            remember(session.memory, session.notebook, result.run_id, result.trace_ref)
        except OwlMemoryError as e:  # the answer stands: a profile not kept is only what the next run misses
            logging.getLogger("owl_memory").warning(f"owl-memory: warning: the endpoint profile of run "
                                                    f"{result.run_id} was not stored ({str(e)[:200]}); the answer "
                                                    "stands and the next run starts from the previous profile")
    return result


@family
class EndpointTools(ToolFamily):
    """Remote SPARQL endpoints the run may use, discovered through bounded calls; every return names its source."""

    order = 35
    names = ("endpoint_list", "endpoint_describe", "endpoint_graphs", "endpoint_features", "endpoint_sample",
             "endpoint_query")

    def offered(self) -> bool:
        """Only when the run was granted endpoints (--endpoint URL)."""
        return self.box.endpoints is not None

    def endpoint_list(self) -> dict | str:
        """The endpoints this run may use: url, corpus target and example count when known, and the profile memory
        keeps of each (graphs, features, quirks learned by earlier runs) or null; the limits of every request."""
        s = self._session()
        rows = [{"url": g.url, **({"target": g.target} if g.target else {}),
                 **({"examples": g.examples} if g.examples is not None else {}), "profile": self._profile(g.url)}
                for g in s.client.grants[:MAX_LIST]]
        limits = s.client.limits
        return {"source": "run configuration", "endpoints": rows, "requests_left": self._left(),
                "limits": {"seconds": limits.seconds, "max_bytes": limits.max_bytes, "max_rows": limits.max_rows}}

    def endpoint_describe(self, url: str) -> dict | str:
        """The endpoint's Service Description: a handle on its text (read with handle_window) and counts of named
        graphs, features and result formats (counted by a query when the description lists no graphs)."""
        url, s = self._url(url), self._session()
        g, response = s.client.describe(url)
        s.descriptions[url] = g
        if g is None:
            count = self._graph_count(url)
            return {"source": url, "handle": None, "named_graphs": count, "features": 0, "result_formats": 0,
                    "note": f"no service description (HTTP {response.status}, {response.media_type or 'no type'}); "
                            "named graphs counted by a query", "requests_left": self._left()}
        ref = self.box.scratch.put(response.body.decode("utf-8", "replace"), "report")
        self.box.scratch_keys.add(ref.key)
        self.box.watch(ref.key)
        graphs, features, formats = _listed(g)
        rejected = s.notebook.note(url, graphs=graphs, features=features, result_formats=formats)
        out = {"source": url, "handle": ref.key, "size": ref.size, "named_graphs": len(graphs),
               "features": len(features), "result_formats": len(formats), **_not_iris(rejected)}
        if not graphs:
            out.update(named_graphs=self._graph_count(url), note="the description lists no named graphs; counted "
                                                                  "by a query")
        return {**out, "requests_left": self._left()}

    def endpoint_graphs(self, url: str, limit: int = 20) -> dict | str:
        """Named graph IRIs of the endpoint (from its description, else by a query), at most `limit`."""
        url, n = self._url(url), as_limit(limit)
        listed = _listed(self._session().descriptions.get(url) or Graph())[0]
        graphs = listed or [row[0][1] for row in self._select(url, GRAPHS % (n + 1)).rows if row[0]]
        rejected = self._session().notebook.note(url, graphs=graphs)
        return {"source": url, "graphs": _iris(graphs)[:n], "more": len(graphs) > n,
                **_not_iris(rejected), "from": "service description" if listed else "query",
                "requests_left": self._left()}

    def endpoint_features(self, url: str, limit: int = 20) -> dict | str:
        """sd:feature, sd:supportedLanguage and sd:resultFormat values of the endpoint's description (fetched when
        endpoint_describe was not called), at most `limit` of each."""
        url, n, s = self._url(url), as_limit(limit), self._session()
        if url not in s.descriptions:
            s.descriptions[url] = s.client.describe(url)[0]
        g = s.descriptions[url] or Graph()
        _, features, formats = _listed(g)
        languages = sorted({str(o) for o in g.objects(None, SD.supportedLanguage)})
        rejected = s.notebook.note(url, features=features, result_formats=formats)
        return {"source": url, "features": _iris(features)[:n], "languages": _iris(languages)[:n],
                "result_formats": _iris(formats)[:n], **_not_iris(rejected),
                "described": s.descriptions[url] is not None, "requests_left": self._left()}

    def endpoint_sample(self, url: str, n: int = 5) -> dict | str:
        """A few triples (graph, subject, predicate, object; at most 10, values clipped) to see the data's shape."""
        url = self._url(url)
        rows = self._select(url, SAMPLE % max(1, min(as_int(n, "n"), SAMPLE_ROWS))).rows
        triples = [{k: clip(v[1], 120) for k, v in zip(("graph", "s", "p", "o"), row, strict=False) if v}
                   for row in rows]
        return {"source": url, "triples": triples, "requests_left": self._left()}

    def endpoint_query(self, url: str, sparql: str) -> dict | str:
        """Run a read-only SELECT or ASK on the endpoint (no SERVICE, no FROM: use GRAPH <iri> { }); returns a
        results handle and row count (read rows with results_peek), or ASK's answer."""
        url, sparql = self._url(url), as_text(sparql, "sparql")
        notebook = self._session().notebook
        try:
            result = self._select(url, sparql)
        except (EndpointError, QueryRefused) as e:
            self.box.emit(failed_query("endpoint_query", url, sparql, e))
            if isinstance(e, EndpointError):
                notebook.query_failed(url, sparql, str(e))
            raise
        triples, _ = sparql_text.patterns(sparql_text.parse(sparql))
        notebook.query_answered(url, sparql, *namespaces_and_classes(triples), len(result.rows) or bool(result.ask),
                                result.truncated)
        out = {"ask": result.ask} if result.kind == "ASK" else store_rows(self.box, result)
        self.box.emit(answered_query("endpoint_query", url, sparql, result, out.get("handle")))
        broken = constraint_notes(self.box, "endpoint", sparql)
        return {"source": url, **out, **({"constraints": broken} if broken else {}), "requests_left": self._left()}

    def _select(self, url: str, sparql: str) -> QueryResult:
        """A query through the contained client."""
        return self._session().client.select(url, sparql)

    def _graph_count(self, url: str) -> int | None:
        """Named graphs counted by a query (None when the endpoint refuses it)."""
        try:
            rows = self._select(url, GRAPH_COUNT).rows
        except OwlMemoryError:
            return None
        text = rows[0][0][1] if rows and rows[0] and rows[0][0] else "0"
        return int(text) if text.isdigit() else None

    def _profile(self, url: str) -> dict | None:
        """What memory keeps about `url` (its profile's lists and id), when the condition reads memory."""
        s = self._session()
        found = find_profile(s.memory, url) if s.read_memory else None
        if found is None:
            return None
        self.box.used(found[0])
        return {"id": found[0], **found[1].brief()}

    def _url(self, url: object) -> str:
        """A granted endpoint URL, normalized; EndpointError naming the granted ones otherwise."""
        return self._session().client.allowed(as_text(url, "url"))

    def _left(self) -> int:
        """Requests this run may still send."""
        client = self._session().client
        return max(0, client.limits.requests - client.sent)

    def _session(self) -> EndpointSession:
        """The run's endpoint session; EndpointError when it has none."""
        if self.box.endpoints is None:
            raise EndpointError("this run may contact no endpoint; pass --endpoint URL")
        return self.box.endpoints


def _iris(values: list[str]) -> list[str]:
    """The values an endpoint gave that are IRIs a profile may keep (model.endpoints.keepable_iri), in order."""
    return [v for v in values if keepable_iri(v)]


def _not_iris(count: int) -> dict[str, int]:
    """The `not_iris` entry of a return when the endpoint gave values as IRIs that are not (they are not kept)."""
    return {"not_iris": count} if count else {}


def _listed(g: Graph) -> tuple[list[str], list[str], list[str]]:
    """Named graph names, features and result formats a Service Description lists, sorted."""
    graphs = sorted({str(n) for ng in g.objects(None, SD.namedGraph) for n in g.objects(ng, SD.name)})
    features = sorted({str(o) for o in g.objects(None, SD.feature)})
    formats = sorted({str(o) for o in g.objects(None, SD.resultFormat)})
    return graphs, features, formats
