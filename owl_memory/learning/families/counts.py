"""Counting families: how many direct subclasses a class has, how many properties a class is the domain of, and how
many terms of a kind an ontology declares. The gold is a COUNT; an answer is right when it gives that number."""

from __future__ import annotations

from .hierarchy import SUBCLASSES
from .registry import family
from .schema import WITH_DOMAIN

KINDS = {"http://www.w3.org/2002/07/owl#Class": "OWL classes (owl:Class)",
         "http://www.w3.org/2000/01/rdf-schema#Class": "RDFS classes (rdfs:Class)",
         "http://www.w3.org/2002/07/owl#ObjectProperty": "object properties (owl:ObjectProperty)",
         "http://www.w3.org/2002/07/owl#DatatypeProperty": "datatype properties (owl:DatatypeProperty)",
         "http://www.w3.org/2002/07/owl#AnnotationProperty": "annotation properties (owl:AnnotationProperty)",
         "http://www.w3.org/1999/02/22-rdf-syntax-ns#Property": "RDF properties (rdf:Property)",
         "http://www.w3.org/2002/07/owl#NamedIndividual": "named individuals (owl:NamedIndividual)"}
NUMBER = "Answer with a number."


@family("subclass-count", "count", needs="a class with a named subclass", where=SUBCLASSES, count=True)
def subclass_count(view, b) -> str:
    """The number of direct subclasses of a class."""
    return f"How many direct subclasses does the class {view.named(b['entity'])} have? {NUMBER}"


@family("domain-count", "count", needs="a class that is the domain of a property", where=WITH_DOMAIN, count=True)
def domain_count(view, b) -> str:
    """The number of properties whose domain includes a class."""
    return f"How many properties have the class {view.named(b['entity'])} in their domain? {NUMBER}"


@family("term-count", "count", needs="declared classes or properties (rdf:type owl:Class, owl:ObjectProperty, ...)",
        where="VALUES ?kind { " + " ".join(f"<{k}>" for k in KINDS) + " } ?answer a ?kind . FILTER(isIRI(?answer))",
        binds=("kind",), about=(), count=True)
def term_count(view, b) -> str:
    """The number of terms of one kind the ontology declares."""
    return f'How many {KINDS[str(b["kind"])]} does the ontology "{view.title}" declare? {NUMBER}'
