"""Ontology tools: counts, paged class and property listings, one term described, and read-only SPARQL over the
ontology (a results handle, rows read with results_peek)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF, RDFS
from rdflib.term import Node

from ...errors import ToolError
from .caps import as_int, as_limit, as_text, clip
from .results import run_query
from .toolbox import Toolbox, ToolFamily, family

CLASS_TYPES = (OWL.Class, RDFS.Class)
PROPERTY_TYPES = {OWL.ObjectProperty: "object", OWL.DatatypeProperty: "datatype",
                  OWL.AnnotationProperty: "annotation", RDF.Property: "rdf"}


@family
class OntologyTools(ToolFamily):
    """The run's ontology, explored by IRI and metadata; its text is never returned whole."""

    order = 30
    names = ("ontology_stats", "ontology_classes", "ontology_properties", "ontology_describe", "ontology_sample",
             "ontology_query")

    def __init__(self, box: Toolbox):
        """Ontology tools over `box.graph`; class and property lists are computed on first use."""
        super().__init__(box)
        self._classes: list[URIRef] | None = None
        self._properties: list[tuple[URIRef, str]] | None = None
        self._prefixes: dict[str, str] | None = None
        self._facts: list[tuple[Node, Node, Node]] | None = None

    def ontology_stats(self) -> dict | str:
        """Counts of triples, classes, properties and individuals in the ontology, its IRI and the prefixes it uses."""
        g = self._graph()
        prefixes = self.prefixes()
        self.box.vocabulary.update(prefixes.values())
        return {"ontology": [str(o) for o in g.subjects(RDF.type, OWL.Ontology)][:3], "triples": len(g),
                "classes": len(self.classes()), "properties": len(self.properties()),
                "individuals": len(set(g.subjects(RDF.type, OWL.NamedIndividual))),
                "prefixes": dict(sorted(prefixes.items())[:12])}

    def refresh(self) -> None:
        """See the graph anew after it changed: the query worker restarts on the next query, and the class,
        property and prefix lists are recounted."""
        worker = self.box.workers.pop("ontology", None)
        if worker is not None:
            worker.close()
        self._classes = self._properties = self._prefixes = self._facts = None

    def prefixes(self) -> dict[str, str]:
        """The bound prefixes whose namespace some IRI of the ontology is in (not every prefix rdflib binds)."""
        if self._prefixes is None:
            g = self._graph()
            iris = {str(t) for triple in g for t in triple if isinstance(t, URIRef)}
            self._prefixes = {p: str(ns) for p, ns in g.namespaces()
                              if p and any(i.startswith(str(ns)) for i in iris)}
        return self._prefixes

    def ontology_classes(self, limit: int = 20, offset: int = 0) -> dict | str:
        """Named classes (iri, label), sorted by IRI; page with offset."""
        classes, start = self.classes(), max(0, as_int(offset, "offset"))
        page = classes[start:start + as_limit(limit)]
        return {"total": len(classes), "offset": start,
                "classes": [{"iri": str(c), "label": self._label(c)} for c in page]}

    def ontology_properties(self, limit: int = 20, offset: int = 0) -> dict | str:
        """Named properties (iri, kind, label), sorted by IRI; page with offset."""
        props, start = self.properties(), max(0, as_int(offset, "offset"))
        page = props[start:start + as_limit(limit)]
        return {"total": len(props), "offset": start,
                "properties": [{"iri": str(p), "kind": kind, "label": self._label(p)} for p, kind in page]}

    def ontology_describe(self, iri: str, limit: int = 10) -> dict | str:
        """One term: types, label, comment, direct super/subclasses, domain/range (lists capped at limit)."""
        g, term, n = self._graph(), self._term(iri), as_limit(limit)

        def iris(nodes: Iterable[Node]) -> list[str]:
            """The IRIs among the nodes, sorted, at most `limit`."""
            return sorted({str(x) for x in nodes if isinstance(x, URIRef)})[:n]

        comment = g.value(term, RDFS.comment)
        return {"iri": str(term), "label": self._label(term), "types": iris(g.objects(term, RDF.type)),
                "comment": clip(comment, 200) if comment is not None else "",
                "superclasses": iris(g.objects(term, RDFS.subClassOf)),
                "subclasses": iris(g.subjects(RDFS.subClassOf, term)),
                "domain": iris(g.objects(term, RDFS.domain)), "range": iris(g.objects(term, RDFS.range)),
                "properties_with_domain": iris(g.subjects(RDFS.domain, term)),
                "triples_as_subject": len(list(g.predicate_objects(term)))}

    def ontology_sample(self, n: int = 10, of: str | None = None) -> dict | str:
        """Up to n example triples (s, p, o; max 50) spread through the ontology's data, or about instances of
        class `of`; the same every time."""
        g, wanted = self._graph(), as_limit(n)
        facts = self.facts()
        if of is not None:
            members = set(g.subjects(RDF.type, self._term(of)))
            facts = [t for t in facts if t[0] in members]
        step = max(1, len(facts) // wanted)
        return {"total": len(facts), "of": None if of is None else str(self._term(of)),
                "triples": [{"s": clip(s, 120), "p": clip(p, 120), "o": clip(o, 120)}
                            for s, p, o in facts[::step][:wanted]]}

    def facts(self) -> list[tuple[Node, Node, Node]]:
        """The triples whose subject is neither a class nor a property, sorted (computed once)."""
        if self._facts is None:
            g = self._graph()
            schema = set(self.classes()) | {p for p, _ in self.properties()} | set(g.subjects(RDF.type, OWL.Ontology))
            self._facts = sorted(t for t in g if t[0] not in schema and isinstance(t[0], URIRef))
        return self._facts

    def ontology_query(self, sparql: str) -> dict | str:
        """Run a read-only SPARQL query; returns a results handle and row count (read rows with results_peek)."""
        return run_query(self.box, "ontology", self._graph, sparql)

    def classes(self) -> list[URIRef]:
        """Named classes, sorted (computed once)."""
        if self._classes is None:
            g = self._graph()
            self._classes = sorted({c for t in CLASS_TYPES for c in g.subjects(RDF.type, t) if isinstance(c, URIRef)})
        return self._classes

    def properties(self) -> list[tuple[URIRef, str]]:
        """Named properties with their kind, sorted (computed once)."""
        if self._properties is None:
            g = self._graph()
            seen: dict[URIRef, str] = {}
            for t, kind in PROPERTY_TYPES.items():
                for p in g.subjects(RDF.type, t):
                    if isinstance(p, URIRef):
                        seen.setdefault(p, kind)
            self._properties = sorted(seen.items())
        return self._properties

    def _graph(self) -> Graph:
        """The ontology graph, or a ToolError saying this run has none."""
        if self.box.graph is None:
            raise ToolError("this run has no ontology; pass one with --ontology / ontology=")
        return self.box.graph

    def _label(self, term: URIRef) -> str:
        """The term's rdfs:label (English first), clipped."""
        labels = list(self._graph().objects(term, RDFS.label))
        labels.sort(key=lambda x: (getattr(x, "language", None) not in (None, "en"), str(x)))
        return clip(labels[0], 80) if labels else ""

    def _term(self, iri: object) -> URIRef:
        """A full IRI or prefixed name that occurs in the ontology; ToolError otherwise."""
        text, g = as_text(iri, "iri").strip().strip("<>"), self._graph()
        if ":" in text and not re.match(r"^[a-z][a-z0-9+.-]*://", text, re.I):
            try:
                text = str(g.namespace_manager.expand_curie(text))
            except ValueError:
                pass
        term = URIRef(text)
        if (term, None, None) not in g and (None, None, term) not in g:
            raise ToolError(f"{clip(text, 100)!r} is not in the ontology; list IRIs with ontology_classes() or "
                            "ontology_properties(), or use a full IRI")
        return term
