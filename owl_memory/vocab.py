"""Vocabulary constants: the RDF namespaces and the IRIs owl-memory mints."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rdflib import Graph, Namespace
from rdflib.namespace import OWL, PROV, RDF, RDFS, SH, XSD
from rdflib.term import Identifier, Node

OM = Namespace("http://w3id.org/owl-memory#")
ITEM = Namespace("http://w3id.org/owl-memory/item/")
TASK_TYPE = Namespace("http://w3id.org/owl-memory/task-type/")
FAILURE_MODE = Namespace("http://w3id.org/owl-memory/failure-mode/")
RUN = Namespace("http://w3id.org/owl-memory/run/")
BLOB = Namespace("http://w3id.org/owl-memory/blob/")
# the standard vocabularies, by their usual prefixes: no target ontology's or endpoint's own terms
STANDARD_PREFIXES = {str(RDF): "rdf:", str(RDFS): "rdfs:", str(OWL): "owl:", str(XSD): "xsd:"}
# an absolute IRI: a scheme, then none of the characters RFC 3987 and SPARQL forbid (spaces, controls, delimiters)
IRI_TEXT = r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`\x00-\x1f\x7f-\x9f]+"
# prefixes people write for well-known namespaces whatever an ontology binds (prefix.cc's usual choices); a text may
# name a term by one of these (learning/mentions.py) when the term's IRI starts with the namespace
CONVENTIONAL_PREFIXES: dict[str, tuple[str, ...]] = {
    "rdf": (str(RDF),), "rdfs": (str(RDFS),), "owl": (str(OWL),), "xsd": (str(XSD),),
    "skos": ("http://www.w3.org/2004/02/skos/core#",), "dcterms": ("http://purl.org/dc/terms/",),
    "dct": ("http://purl.org/dc/terms/",), "dc": ("http://purl.org/dc/elements/1.1/",),
    "foaf": ("http://xmlns.com/foaf/0.1/",), "prov": ("http://www.w3.org/ns/prov#",),
    "schema": ("http://schema.org/", "https://schema.org/"), "dcat": ("http://www.w3.org/ns/dcat#",),
    "sh": ("http://www.w3.org/ns/shacl#",), "void": ("http://rdfs.org/ns/void#",),
    "dul": ("http://www.ontologydesignpatterns.org/ont/dul/DUL.owl#", "http://www.loa-cnr.it/ontologies/DUL.owl#"),
    "sd": ("http://www.w3.org/ns/sparql-service-description#",), "prof": ("http://www.w3.org/ns/dx/prof/",),
    "org": ("http://www.w3.org/ns/org#",), "time": ("http://www.w3.org/2006/time#",),
    "vcard": ("http://www.w3.org/2006/vcard/ns#",), "geo": ("http://www.opengis.net/ont/geosparql#",),
}


def is_iri(text: str) -> bool:
    """Whether `text` is an absolute IRI (a scheme, then none of the characters RFC 3987 and SPARQL forbid)."""
    return re.fullmatch(IRI_TEXT, text) is not None


def local_name(iri: str | Node) -> str:
    """The last segment of an IRI (after #, / or :), "node" when there is none."""
    return re.split(r"[#/:]", str(iri).rstrip("/#:"))[-1] or "node"


def ordered(terms: Iterable[Node]) -> list[Identifier]:
    """Graph terms in rdflib's order (kind, then text), as sorted() puts them: rdflib types a graph's terms as Node,
    which has no order, though every term of a parsed graph is an Identifier (an IRI, a blank node or a literal)."""
    return sorted(t for t in terms if isinstance(t, Identifier))


def ontology_iri(iri: str | Node) -> str:
    """An ontology IRI in the form memory compares it: without trailing '#' or '/' (`http://x/library#`,
    `http://x/library/` and `http://x/library` name one ontology); scheme and case are kept as written (IRIs are
    case-sensitive, and http and https may name different things)."""
    return str(iri).rstrip("#/")


def serves_ontology(applies_to: Iterable[str | Node], ontology: str | None) -> bool:
    """Whether an item scoped to the ontologies `applies_to` (none: any ontology) applies to a run on `ontology`
    (None: the run declares none); IRIs compared as ontology_iri writes them."""
    return not applies_to or (ontology is not None and ontology_iri(ontology) in {ontology_iri(a) for a in applies_to})


def declared_ontology(graph: Graph | None) -> str | None:
    """The IRI of the ontology a graph declares (the first, sorted), or None (no graph, or no owl:Ontology)."""
    iris = sorted(str(s) for s in graph.subjects(RDF.type, OWL.Ontology)) if graph is not None else []
    return iris[0] if iris else None


KINDS = (
    "Principle", "Procedure", "AntiPattern", "Constraint", "JudgeRule",
    "RepairOperator", "EndpointProfile", "Episode",
)
SCOPES = ("general", "exception")

__all__ = [
    "BLOB", "FAILURE_MODE", "ITEM", "KINDS", "OM", "OWL", "PROV", "RDF", "RDFS", "RUN", "SCOPES", "SH",
    "TASK_TYPE", "XSD", "local_name", "ontology_iri",
]
