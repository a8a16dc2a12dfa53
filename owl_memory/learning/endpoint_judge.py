"""Judging a SHACL-example task on its endpoint: the reference query runs on the endpoint the user pointed the
task's schema:target at (`owl-memory ablate CORPUS --endpoint-map TARGET=URL`), and the answer is compared with its
results as answers are compared today (judge.judge_terms: a set match of terms, precision and recall). An answer that
is itself a SELECT or ASK query is run there too (guarded like any agent query) and its results compared.

A task's expect carries its grant: `endpoint` is "TARGET=URL" once the user mapped the target (curriculum
map_endpoints); a bare target was not granted, nothing is contacted and the structural judge decides as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, RDFS

from ..adapters import sparql as sparql_text
from ..agent import EndpointClient
from ..errors import ConfigError, OwlMemoryError
from ..model.endpoints import EndpointGrant, EndpointLimits
from ..model.judgments import Expect, Judgment

JUDGE_LIMITS = EndpointLimits(seconds=30.0, max_bytes=20_000_000, max_rows=10_000, requests=2)
TRUE, FALSE = {"true", "yes"}, {"false", "no"}


def grant_of(expect: Expect) -> EndpointGrant | None:
    """The grant a query task's expect carries ("TARGET=URL"), or None when its endpoint was not mapped."""
    if expect.kind != "query" or not expect.endpoint or "=" not in expect.endpoint:
        return None
    try:
        return EndpointGrant.parse(expect.endpoint)
    except ConfigError:
        return None


def judge_on_endpoint(answer: str, expect: Expect, task: str, compare: Callable,
                      limits: EndpointLimits = JUDGE_LIMITS) -> Judgment | None:
    """The answer judged against the reference query's results on the granted endpoint; None when the task's
    endpoint was not granted. `compare(answer, gold_terms, graph, task)` is the judge's term comparison."""
    grant = grant_of(expect)
    if grant is None:
        return None
    client = EndpointClient([grant], limits)
    try:
        gold = client.select(grant.url, str(expect.gold))
    except OwlMemoryError as e:
        return Judgment(False, f"the reference query did not run on {grant.url}: {str(e)[:200]}", "low", "endpoint",
                        ("a reference answer",), "reference-failed")
    mine = _as_query(answer)
    if gold.ask is not None:  # an ASK reference
        return _ask_verdict(answer, mine, gold.ask, client, grant.url)
    got: str | list[str] = answer
    if mine is not None:
        try:
            got = [text for row in client.select(grant.url, mine).rows for kind, text in filter(None, row)]
        except OwlMemoryError as e:
            return Judgment(False, f"the answer's query did not run on {grant.url}: {str(e)[:200]}", "high",
                            "endpoint", ("a query that runs",), "query-failed")
    terms = {_term(kind, text) for row in gold.rows for kind, text in filter(None, row) if kind != "bnode"}
    verdict = compare(got, terms, _names(terms), task)
    cut = f" (the reference's rows were cut at {limits.max_rows}: judged on those)" if gold.truncated else ""
    return replace(verdict, judge="endpoint", reason=f"on {grant.url}: {verdict.reason}{cut}",
                   confidence="low" if cut else verdict.confidence)


def _as_query(answer: str) -> str | None:
    """The answer when it is a SELECT or ASK query (checked by the guard), else None."""
    text = answer.strip().strip("`").removeprefix("sparql").strip()
    try:
        sparql_text.check_read_only(text, ("SELECT", "ASK"))
    except OwlMemoryError:
        return None
    return text


def _ask_verdict(answer: str, query: str | None, gold: bool, client: EndpointClient, url: str) -> Judgment:
    """An ASK reference: the answer's own ASK result, or a yes / no answer, against the reference's."""
    if query is not None:
        try:
            got = client.select(url, query).ask
        except OwlMemoryError:
            got = None
    else:
        word = answer.strip().strip(".").casefold()
        got = True if word in TRUE else False if word in FALSE else None
    ok = got is gold
    return Judgment(ok, f"on {url}: the reference ASK answers {str(gold).lower()}, the answer "
                    f"{'agrees' if ok else 'does not'}", "high", "endpoint", () if ok else (str(gold).lower(),),
                    "" if ok else "wrong-answer")


def _term(kind: str, text: str):
    """A result term as rdflib's: an IRI or a literal."""
    return URIRef(text) if kind == "uri" else Literal(text)


def _names(terms: set) -> Graph:
    """A graph naming the gold IRIs, so a bare local name in an answer finds its term (as over an ontology)."""
    g = Graph()
    for t in terms:
        if isinstance(t, URIRef):
            g.add((t, RDF.type, RDFS.Resource))
    return g
