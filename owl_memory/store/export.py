"""The export's one ontology header: a stable IRI, a version IRI that names the content, annotations only (OWL 2 DL)."""

from __future__ import annotations

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS
from rdflib.term import Node

from ..model import sha256

EXPORT_IRI = URIRef("http://w3id.org/owl-memory/memory")
TBOX_IRI = URIRef("http://w3id.org/owl-memory")


def with_header(g: Graph) -> Graph:
    """`g` with every ontology header (owlready2's, the memory ontology's, the items') replaced by EXPORT_IRI's.

    The version IRI is EXPORT_IRI/<16 hex>: a digest of the memory ontology's version and every triple without a
    blank node, so the same memory exports under the same version IRI and any change of an item changes it.
    """
    tbox_version = g.value(TBOX_IRI, OWL.versionIRI)
    for onto in set(g.subjects(RDF.type, OWL.Ontology)):
        g.remove((onto, None, None))
    version = URIRef(f"{EXPORT_IRI}/{_digest(g, tbox_version)}")
    g.add((EXPORT_IRI, RDF.type, OWL.Ontology))
    g.add((EXPORT_IRI, OWL.versionIRI, version))
    g.add((EXPORT_IRI, DCTERMS.title, Literal("owl-memory export: memory ontology and memory items", lang="en")))
    g.add((EXPORT_IRI, RDFS.comment, Literal(
        f"The owl-memory ontology (version {tbox_version}) and the items of one memory, exported as one ontology. "
        "Payloads are not included: om:contentRef names them in the memory's blob store.", lang="en")))
    if tbox_version is not None:
        g.add((EXPORT_IRI, RDFS.seeAlso, tbox_version))
    return g


def _digest(g: Graph, tbox_version: Node | None) -> str:
    """16 hex of sha256 over the memory ontology's version IRI and the sorted N-Triples of every bnode-free triple."""
    lines = sorted(" ".join(term.n3() for term in t) for t in g if not any(isinstance(term, BNode) for term in t))
    return sha256(f"{tbox_version}\n" + "\n".join(lines))[:16]
