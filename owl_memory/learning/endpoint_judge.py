"""Judging a SHACL-example task on its endpoint: the reference query runs on the endpoint the user pointed the
task's schema:target at (`owl-memory ablate CORPUS --endpoint-map TARGET=URL`), and the answer is compared with its
results as answers are compared today (judge.judge_terms: a set match of terms, precision and recall). An answer that
is itself a SELECT or ASK query is run there too (guarded like any agent query) and the values of its results are
compared with the reference's (success: precision = recall = 1); so are the values of an answer that is a JSON list
of values (the values of a result, as `--lm replay:` submits them). Every such judgment carries the TEXT2SPARQL set
scores (set_metric.py): exactly the challenge's for a query answer, over the terms the judge read for a text answer;
a query that is refused or fails scores 0.

A task's expect carries its grant: `endpoint` is "TARGET=URL" once the user mapped the target (curriculum
map_endpoints); a bare target was not granted, nothing is contacted and the structural judge decides as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, RDFS

from ..adapters import sparql as sparql_text
from ..agent import EndpointClient, QueryResult
from ..errors import ConfigError, OwlMemoryError
from ..model.endpoints import EndpointGrant, EndpointLimits
from ..model.judgments import Expect, Judgment, SetScores
from .set_metric import answer_values, reference_values, set_scores
from .verdicts import compare_sets

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


def judge_on_endpoint(answer: str, expect: Expect, task: str, term_sets: Callable,
                      limits: EndpointLimits = JUDGE_LIMITS) -> Judgment | None:
    """The answer judged against the reference query's results on the granted endpoint, with the TEXT2SPARQL set
    scores (set_metric.py); None when the task's endpoint was not granted. `term_sets(answer, gold_terms, graph,
    task)` gives the answer's and the gold's term keys as the judge reads a text answer (judging.term_sets)."""
    grant = grant_of(expect)
    if grant is None:
        return None
    client = EndpointClient([grant], limits, expect.services or None)  # SERVICE: to the run's other grants
    try:
        gold = client.select(grant.url, str(expect.gold))
    except OwlMemoryError as e:
        return Judgment(False, f"the reference query did not run on {grant.url}: {str(e)[:200]}", "low", "endpoint",
                        ("a reference answer",), "reference-failed", scores=SetScores())
    mine = _as_query(answer, client)
    got: QueryResult | None = None
    if mine is not None:
        try:
            got = client.select(grant.url, mine)
        except OwlMemoryError as e:
            return Judgment(False, f"the answer's query did not run on {grant.url}: {str(e)[:200]}", "high",
                            "endpoint", ("a query that runs",), "query-failed", scores=SetScores())
    if gold.ask is not None:  # an ASK reference
        return _ask_verdict(answer, got, gold, grant.url)
    given = answer_values(got) if got is not None else _as_values(answer)
    if given is not None:  # a query answer or a JSON list of values: compared with the reference's values
        values, relevant = given, reference_values(gold)
        verdict = compare_sets(set(values), set(relevant), "endpoint", expect.empty)
        scores = set_scores(values, relevant)
    else:
        terms = {_term(kind, text) for row in gold.rows for kind, text in filter(None, row) if kind != "bnode"}
        found, keys = term_sets(answer, terms, _names(terms), task)
        verdict, scores = compare_sets(found, keys, "endpoint", expect.empty), set_scores(found, keys)
    cut = f" (the reference's rows were cut at {limits.max_rows}: judged on those)" if gold.truncated else ""
    return replace(verdict, judge="endpoint", reason=f"on {grant.url}: {verdict.reason}{cut}",
                   confidence="low" if cut else verdict.confidence, scores=scores)


def _as_query(answer: str, client: EndpointClient) -> str | None:
    """The answer when it is a SELECT or ASK query (checked by the guard, SERVICE only to the client's services, a
    mapped target pointed at its URL), else None."""
    text = client.mapped_services(answer.strip().strip("`").removeprefix("sparql").strip())
    try:
        sparql_text.check_read_only(text, ("SELECT", "ASK"), services=client.services)
    except OwlMemoryError:
        return None
    return text


def _as_values(answer: str) -> frozenset[str] | None:
    """The answer's values when it is a JSON list of strings and numbers (what `--lm replay:` submits), else None."""
    try:
        data = json.loads(answer)
    except (json.JSONDecodeError, RecursionError):  # an answer nested deeper than Python's stack is no list either
        return None
    if not isinstance(data, list) or not all(isinstance(v, str | int | float) and not isinstance(v, bool)
                                             for v in data):
        return None
    return frozenset(str(v) for v in data)


def _ask_verdict(answer: str, got: QueryResult | None, gold: QueryResult, url: str) -> Judgment:
    """An ASK reference: the answer's own ASK result, or a yes / no answer, against the reference's; scored as the
    challenge scores it (an ASK answer retrieves "true" whatever it answered; a yes / no answer its own word)."""
    if got is not None:
        said, values = got.ask, answer_values(got)
    else:
        word = answer.strip().strip(".").casefold()
        said = True if word in TRUE else False if word in FALSE else None
        values = frozenset() if said is None else frozenset({str(said).lower()})
    ok = said is gold.ask
    return Judgment(ok, f"on {url}: the reference ASK answers {str(gold.ask).lower()}, the answer "
                    f"{'agrees' if ok else 'does not'}", "high", "endpoint", () if ok else (str(gold.ask).lower(),),
                    "" if ok else "wrong-answer", scores=set_scores(values, reference_values(gold)))


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
