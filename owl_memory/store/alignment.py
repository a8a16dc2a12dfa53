"""Ontology versions and alignments followed by search: what a run's ontology graph declares about the ontologies and
terms items were learned on (`ontology_context`), and a search that serves their items after the exact ones
(`followed`).

A run's ontology O carries over the items of the ontologies it names by owl:versionIRI, owl:priorVersion,
owl:backwardCompatibleWith or owl:sameAs, followed through the graph breadth-first (a cycle ends where it was seen),
except those it declares owl:incompatibleWith (they are neither carried nor followed, nor their terms). Terms linked
by owl:equivalentClass, owl:equivalentProperty or owl:sameAs (either direction, through chains) form a group; O's
terms in it (those under O's IRI; in a group with none, those the graph declares) are aligned with the others.
Ontology IRIs are compared normalized (vocab.ontology_iri); terms that are no IRI are left out.

A followed search is a list of ordinary searches, each the defining SELECT of its own query shape (retrieval.py), in
this order: the query itself (O, and the stated about terms); then for each ontology in (O, *carried), each stated
about term in (itself, *its aligned terms), except the first pair; then, when the query states no about term, each
other ontology's term aligned with one of O's, as an about-class and then an about-property filter without an
ontology filter. A query about a term (`about`: class or property) runs that list with the term as the about-class,
then again with it as the about-property. Items already found are skipped; each item found after the first search
is marked with the IRI it was carried over from (the carried ontology, else the aligned term); the first k are the
result. Every backend runs the same list (the embedded index, a SPARQL server, or the defining SELECT on rdflib in
the tests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF

from ..model import OntologyContext
from ..rdfio import load_graph
from ..vocab import ontology_iri
from .items import IRI
from .retrieval import Scored, SearchQuery

VERSION_LINKS = (OWL.versionIRI, OWL.priorVersion, OWL.backwardCompatibleWith, OWL.sameAs)
TERM_LINKS = (OWL.equivalentClass, OWL.equivalentProperty, OWL.sameAs)
MAX_FOLLOWED = 32  # carried ontologies and aligned terms a search follows at most (each one more search)
ABOUT_FILTERS = ("about_class", "about_property")  # the SearchQuery fields of what an item is about, in search order


def ontology_context(graph: Graph | str | Path | None, ontology: str | None = None) -> OntologyContext | None:
    """What an ontology graph (or a file or Turtle text of one, rdfio.load_graph) declares about `ontology` (default:
    its first owl:Ontology by IRI); None without one. Terms that are no IRI (rdflib takes some with spaces or quotes)
    are left out."""
    if graph is not None and not isinstance(graph, Graph):
        graph = load_graph(graph)
    heads = sorted(str(s) for s in graph.subjects(RDF.type, OWL.Ontology) if isinstance(s, URIRef)) if graph else []
    if ontology is None and not heads:
        return None
    own = ontology_iri(ontology if ontology is not None else heads[0])
    nodes = _spellings(graph, own)
    incompatible = sorted({ontology_iri(o) for n in nodes for o in graph.objects(n, OWL.incompatibleWith)}) \
        if graph is not None else []
    carried = _carried(graph, own, set(incompatible)) if graph is not None else []
    ontologies = {own, *carried, *incompatible, *map(ontology_iri, heads)}
    aligned = _aligned(graph, own, ontologies, incompatible) if graph is not None else ()
    return OntologyContext(own, tuple(carried[:MAX_FOLLOWED]), tuple(incompatible), aligned)


def _spellings(graph: Graph | None, iri: str) -> list[URIRef]:
    """The spellings of an ontology IRI a graph may use (bare, with # or /)."""
    return [URIRef(iri + end) for end in ("", "#", "/")] if graph is not None else []


def _carried(graph: Graph, own: str, incompatible: set[str]) -> list[str]:
    """Ontologies reached from `own` over the version links, breadth-first, never through an incompatible one."""
    seen, order, todo = {own}, [], [own]
    while todo:
        nxt = []
        for iri in todo:
            for n in _spellings(graph, iri):
                found = [o for p in VERSION_LINKS for o in graph.objects(n, p)] + list(graph.subjects(OWL.sameAs, n))
                for other in sorted({ontology_iri(o) for o in found if isinstance(o, URIRef)}):
                    if other not in seen and other not in incompatible and IRI.match(other):
                        seen.add(other)
                        order.append(other)
                        nxt.append(other)
        todo = nxt
    return order


def _aligned(graph: Graph, own: str, ontologies: set[str],
             incompatible: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(own term, aligned foreign terms) pairs: groups of terms linked by the term links (either direction,
    transitively), each own term (under `own`'s IRI; in a group with none, those the graph declares) with the
    group's other terms (none under an incompatible ontology)."""
    parent: dict[str, str] = {}

    def root(t: str) -> str:
        """The group representative of a term (path halving)."""
        while parent.setdefault(t, t) != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    for p in TERM_LINKS:
        for a, b in graph.subject_objects(p):
            if all(isinstance(t, URIRef) and IRI.match(t) for t in (a, b)) and \
                    not {ontology_iri(a), ontology_iri(b)} & ontologies:
                parent[root(str(a))] = root(str(b))
    groups: dict[str, set[str]] = {}
    for t in parent:
        groups.setdefault(root(t), set()).add(t)
    blocked = tuple(incompatible) or ("\0",)
    out: list[tuple[str, tuple[str, ...]]] = []
    for members in groups.values():
        mine = {t for t in members if t.startswith(own)} or {t for t in members if (URIRef(t), RDF.type, None) in graph
                                                             and not t.startswith(blocked)}
        others = tuple(sorted(t for t in members - mine if not t.startswith(blocked)))
        out += [(t, others) for t in sorted(mine) if others]
    return tuple(sorted(out))


def steps(q: SearchQuery, context: OntologyContext | None) -> list[tuple[SearchQuery, str | None]]:
    """The searches a followed search runs, in order, each with the IRI its items are carried over from."""
    if context is None:
        return [(q, None)]
    ontology = q.ontology if q.ontology is not None else URIRef(context.ontology)
    if ontology_iri(ontology) != context.ontology:
        return [(q, None)]
    base = replace(q, ontology=ontology)
    out: list[tuple[SearchQuery, str | None]] = []
    for onto in (context.ontology, *context.carried):
        for name in ABOUT_FILTERS:
            stated = _about(base, name)
            for term in (stated, *context.equivalents(stated)) if stated is not None else (None,):
                mark = onto if onto != context.ontology else term if term != stated else None
                out.append((_with_about(replace(base, ontology=URIRef(onto)), name,
                                        None if term is None else URIRef(term)), mark))
    if base.about_class is None and base.about_property is None:
        for term in context.foreign_terms()[:MAX_FOLLOWED]:
            out += [(_with_about(replace(base, ontology=None), name, URIRef(term)), term) for name in ABOUT_FILTERS]
    return list(dict.fromkeys(out))


def _about(q: SearchQuery, name: str) -> URIRef | None:
    """The query's about-class ("about_class") or about-property ("about_property") filter."""
    return q.about_class if name == "about_class" else q.about_property


def _with_about(q: SearchQuery, name: str, term: URIRef | None) -> SearchQuery:
    """The query with `term` as its about-class ("about_class") or about-property ("about_property") filter."""
    return replace(q, about_class=term) if name == "about_class" else replace(q, about_property=term)


def searches(q: SearchQuery, context: OntologyContext | None) -> list[tuple[SearchQuery, str | None]]:
    """Every search a followed search runs, in order, with its carried-over mark (with q.about: the steps of the
    query about it as a class, then those about it as a property)."""
    bases = [q] if q.about is None else [_with_about(replace(q, about=None), name, q.about) for name in ABOUT_FILTERS]
    return [pair for base in bases for pair in steps(base, context)]


def followed(search: Callable[[SearchQuery], list[Scored]], q: SearchQuery,
             context: OntologyContext | None) -> list[tuple[Scored, str | None]]:
    """Up to q.k (row, carried-over-from) results of the `searches`, each item once, in order."""
    seen: set[str] = set()
    out: list[tuple[Scored, str | None]] = []
    for step, mark in searches(q, context):
        if len(out) >= q.k:
            break
        for row in search(step):
            if row.id not in seen:
                seen.add(row.id)
                out.append((row, mark))
    return out[: q.k]
