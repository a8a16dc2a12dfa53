"""What a task family sees of one ontology: its graph, its name and title, its terms' English labels, and how a
question names a term (by its label when that is unambiguous, else its local name, else a CURIE or the full IRI)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import DC, DCTERMS, OWL, RDF, RDFS
from rdflib.term import Identifier

from ...errors import LoadError
from ...rdfio import guess_format, load_graph
from ...vocab import local_name
from ..judging import BUILTIN

_SUFFIXES = {"rdf/xml": ".owl or .rdf", "json-ld": ".jsonld", "turtle": ".ttl"}
_OWL_XML = re.compile(r"<Ontology\b[^>]*xmlns=\"http://www\.w3\.org/2002/07/owl#\"")
_SIMPLE = re.compile(r"^[A-Za-z_][\w.-]*$")


@dataclass(frozen=True)
class OntologyView:
    """One ontology as the families see it.

    Args:
        name: its short name (unique within a curriculum).
        graph: the parsed ontology.
        title: its owl:Ontology label or title, else the name.
        labels: term -> its one English (or untagged) rdfs:label, for terms with exactly one.
        shown: term -> how a question names it (quoted label or local name), for terms whose name is unambiguous.
    """

    name: str
    graph: Graph
    title: str
    labels: dict
    shown: dict

    def named(self, term) -> str:
        """The term as a question names it: its quoted label or local name when unambiguous, else `exact`."""
        return self.shown.get(term) or self.exact(term)

    def exact(self, term) -> str:
        """The term as a CURIE with a prefix the ontology binds, else its full IRI in angle brackets."""
        try:
            prefix, _, name = self.graph.namespace_manager.compute_qname(term, generate=False)
        except (KeyError, ValueError):
            return f"<{term}>"
        return f"{prefix}:{name}" if prefix and _SIMPLE.match(name) else f"<{term}>"


def is_builtin(term) -> bool:
    """True for IRIs of RDF, RDFS, OWL and XSD themselves (never what a task asks about) and for blank nodes."""
    return isinstance(term, BNode) or str(term).startswith(BUILTIN)


def english(literal) -> bool:
    """True for a literal without a language tag or with an English one."""
    return isinstance(literal, Literal) and (not literal.language or literal.language.lower().startswith("en"))


def parse(path: Path) -> Graph:
    """The ontology file as a Graph, read as every owl-memory command reads it (by its suffix); LoadError for OWL/XML
    (rdflib's RDF/XML parser would read it as nothing), and one that names the syntax a misnamed file holds."""
    head = _head(path)
    if _OWL_XML.search(head):
        raise LoadError("this is OWL/XML, which rdflib does not read; save it as RDF/XML or Turtle (Protégé: File > "
                        "Save as)", source=str(path))
    try:
        return load_graph(path)
    except LoadError as e:
        shown = "rdf/xml" if head.startswith(("<?xml", "<!DOCTYPE", "<rdf:RDF")) else \
            "json-ld" if head.startswith(("{", "[")) else "turtle" if head.startswith(("@prefix", "PREFIX")) else ""
        if shown and shown.replace("rdf/", "") != guess_format(path):
            raise LoadError(f"the file looks like {shown}, not {guess_format(path)} as its suffix says; give it the "
                            f"suffix of its syntax ({_SUFFIXES[shown]})", source=str(path)) from e
        raise


def _head(path: Path) -> str:
    """The first characters of a file (without a byte-order mark or leading space); "" when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    except OSError:
        return ""  # load_graph says what is wrong with the path


def view_of(name: str, graph: Graph) -> OntologyView:
    """The view of one parsed ontology."""
    terms = sorted({t for t in (*graph.subjects(), *graph.objects()) if isinstance(t, URIRef) and not is_builtin(t)})
    labels = {t: ls[0] for t in terms if len(ls := sorted({str(x) for x in graph.objects(t, RDFS.label)
                                                          if english(x)})) == 1}
    return OntologyView(name, graph, _title(graph) or name, labels, _shown(terms, labels))


def _shown(terms: list, labels: dict) -> dict:
    """Term -> its quoted label when no other term has it, else its quoted local name when no other term has it."""
    by_label = Counter(v.casefold() for v in labels.values())
    by_local = Counter(local_name(t).casefold() for t in terms)
    out = {}
    for t in terms:
        label, local = labels.get(t), local_name(t)
        if label and by_label[label.casefold()] == 1 and '"' not in label and "\n" not in label:
            out[t] = f'"{label}"'
        elif by_local[local.casefold()] == 1 and _SIMPLE.match(local):
            out[t] = f'"{local}"'
    return out


def _title(graph: Graph) -> str:
    """The ontology's English label or title (rdfs:label, dcterms:title, dc:title), "" when it has none."""
    for onto in sorted(s for s in graph.subjects(RDF.type, OWL.Ontology) if isinstance(s, Identifier)):
        for p in (RDFS.label, DCTERMS.title, DC.title):
            found = sorted(" ".join(str(x).split()) for x in graph.objects(onto, p) if english(x))
            if found:
                return found[0]
    return ""
