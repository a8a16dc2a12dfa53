"""What the query behind a run's answer (agent.answering_query) shows extraction: its triple patterns, the instances
it names on an endpoint (constants to lift), the vocabulary and the endpoint its items apply to, and what failed in it
(QUERY_MODES: an empty result, a term the run's ontology does not have, an error class)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF

from ..adapters import sparql as sparql_text
from ..model import AgentQuery
from ..model.endpoints import endpoint_key
from ..vocab import STANDARD_PREFIXES, local_name

QUERY_MODES = ("empty-result", "unknown-term", "query-error")  # what failed in a failed run's query
_DECLARING = (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty, RDF.Property)


def triples(query: AgentQuery | None) -> list[tuple]:
    """The triple patterns of an agent query (none when there is no query or it does not parse)."""
    if query is None:
        return []
    try:
        return sparql_text.patterns(sparql_text.parse(query.sparql))[0]
    except sparql_text.QuerySyntaxError:
        return []


def declared(graph: Graph | None) -> set:
    """The classes and properties an ontology declares (none without one)."""
    return set() if graph is None else {s for kind in _DECLARING for s in graph.subjects(RDF.type, kind)}


def instances(query: AgentQuery | None, graph: Graph | None) -> set[str]:
    """The instances an endpoint query names (IRIs in subject or object position that are no rdf:type object, no
    standard term and no class or property the run's ontology declares): constants of the task; none for a query on
    the ontology, whose constants the task's text names."""
    if query is None or query.tool != "endpoint_query":
        return set()
    known = declared(graph)
    return {str(t) for s, p, o in triples(query) for t in (s, o) if isinstance(t, URIRef)
            and not (p == RDF.type and t == o) and not str(t).startswith(tuple(STANDARD_PREFIXES)) and t not in known}


def query_failure(query: AgentQuery | None, graph: Graph | None) -> tuple[str, str] | None:
    """What failed in a query, as (one of QUERY_MODES, what it was): its error class, the terms it used that the
    run's ontology does not have, or its empty result; None when nothing did."""
    if query is None:
        return None
    if query.error:
        return "query-error", f"error class {query.error}"
    unknown = unknown_terms(graph, triples(query))
    if unknown:
        return "unknown-term", "not in the vocabulary: " + ", ".join(local_name(t) for t in unknown[:4])
    return ("empty-result", "0 rows") if query.rows == 0 else None


def unknown_terms(graph: Graph | None, patterns: list[tuple]) -> list[str]:
    """The vocabulary terms of a query (predicates, rdf:type objects) in a namespace the ontology declares terms in
    that the ontology never mentions, sorted (none without an ontology)."""
    if graph is None:
        return []
    spaces = {namespace(str(t)) for t in declared(graph) if isinstance(t, URIRef)} - {""}
    used = {t for s, p, o in patterns for t in (p, o if p == RDF.type else None) if isinstance(t, URIRef)}
    return sorted(str(t) for t in used if namespace(str(t)) in spaces and (t, None, None) not in graph
                  and (None, None, t) not in graph)


def namespace(iri: str) -> str:
    """An IRI without its local name (up to its last # or /)."""
    return re.sub(r"[^#/]*$", "", iri)


def namespaces(terms: Iterable[str]) -> tuple[str, ...]:
    """The namespaces of some terms, sorted: the vocabularies an endpoint run's items apply to."""
    return tuple(sorted({namespace(t) for t in terms} - {""}))


def endpoint_tags(query: AgentQuery | None) -> tuple[str, ...]:
    """The key tag of the endpoint a query ran on (as its EndpointProfile carries), if it ran on one."""
    return (f"endpoint-{endpoint_key(query.source)}",) if query and query.tool == "endpoint_query" else ()
